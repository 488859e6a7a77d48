// AMD's matrix-core layouts (ir/Layout.h AMDMmaLayout, amdMmaOperandCoord)
// against the instructions' documented register layouts, written here from
// AMD's matrix instruction calculator (CDNA3 / RDNA3, "register to matrix
// element mapping"):
//
//   v_mfma_f32_32x32x8_f16   D i = 8 floor(GPR / 4) % 32 + 4 floor(lane / 32) + GPR % 4,
//                            D j = lane % 32; A i = lane % 32, A k = 4 floor(lane / 32) + e
//   v_mfma_f32_16x16x16_f16  D i = 4 floor(lane / 16) + GPR,  D j = lane % 16;
//                            A i = lane % 16, A k = 4 floor(lane / 16) + e
//   v_mfma_i32_32x32x16_i8   A k = 8 floor(lane / 32) + e;  v_mfma_f32_32x32x2_f32 A k = floor(lane
//   / 32) v_wmma_f32_16x16x16_f16  (wave32) D i = 2 GPR + floor(lane / 16), D j = lane % 16;
//                            A i = lane % 16, A k = e (lanes l and l + 16 alike)
//
// (B is A's transpose: B j = lane % n, B k as A k.) Checked: every
// instruction register of every lane of every warp is the ThreadMap register
// the lowering reads it from (AMDMmaDotToLLVM.cpp: register r of piece
// (mi, ni) is (n / g mi + r, ni)) and holds the element the instruction
// computes there, given the A rows and B columns amdMmaOperandCoord feeds
// lane by lane; the pieces of all warps cover the tile exactly once; the
// operand reads of one k step cover its K columns of each piece exactly
// once; and the text form round-trips.
#include "ir/Layout.h"
#include "lowering/codegen/AMDMatrixCore.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace tk {
namespace {

struct AMDMmaLayoutTest : ::testing::Test {
  SourceManager sm;
  IRContext ctx{sm};
};

// The documented (row, column) of D's register `gpr` in `lane`.
std::pair<int64_t, int64_t> documentedD(bool wmma, int64_t n, int64_t gpr, int64_t lane) {
  if (wmma)
    return {2 * gpr + lane / 16, lane % 16};
  if (n == 32)
    return {(8 * (gpr / 4)) % 32 + 4 * (lane / 32) + gpr % 4, lane % 32};
  return {4 * (lane / 16) + gpr, lane % 16};
}

// The documented (row or column, k) of element e of the A (or B) operand in
// `lane`: lanes n apart hold the next kWidth K elements (MFMA), WMMA's lane
// groups repeat.
std::pair<int64_t, int64_t> documentedOperand(const AMDMatrixInstr &in, int64_t lane, int64_t e) {
  if (in.wmma)
    return {lane % 16, e};
  return {lane % in.n, in.kWidth * (lane / in.n) + e};
}

struct Case {
  const char *arch;
  DType dtype;
  int64_t n, M, N, K, wm, wn;
};

const Case kCases[] = {
    {"gfx942", DType::F16, 32, 128, 128, 32, 2, 2}, {"gfx942", DType::F16, 32, 64, 64, 32, 2, 2},
    {"gfx942", DType::F16, 16, 64, 32, 32, 2, 2},   {"gfx942", DType::BF16, 32, 128, 64, 16, 4, 1},
    {"gfx942", DType::I8, 32, 64, 128, 64, 1, 4},   {"gfx942", DType::I8, 16, 32, 32, 64, 2, 2},
    {"gfx90a", DType::I8, 32, 64, 64, 16, 2, 1},    {"gfx90a", DType::F32, 32, 64, 64, 8, 2, 2},
    {"gfx90a", DType::F32, 16, 32, 64, 8, 1, 4},    {"gfx90a", DType::BF16, 16, 128, 16, 32, 8, 1},
    {"gfx1100", DType::F16, 16, 64, 64, 32, 2, 2},  {"gfx1100", DType::I8, 16, 32, 128, 32, 1, 8},
};

TEST_F(AMDMmaLayoutTest, RegistersHoldWhatTheInstructionComputes) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(fmt::format("{} {} n={} {}x{}x{} warps [{}, {}]", c.arch, dtypeName(c.dtype), c.n,
                             c.M, c.N, c.K, c.wm, c.wn));
    const AMDMatrixInstr *in = amdMatrixInstr(c.arch, c.dtype, c.n);
    ASSERT_NE(in, nullptr);
    auto *l = AMDMmaLayout::get(ctx, in->wmma, {c.wm, c.wn}, {c.n, c.n});
    ThreadMap map(l, {c.M, c.N});
    int64_t lanes = l->warpSize(), warps = c.wm * c.wn;
    ASSERT_EQ(map.warpSize(), lanes);
    ASSERT_EQ(map.numRegisters() * map.numThreads(), c.M * c.N);
    int64_t numMi = c.M / (c.n * c.wm), numNi = c.N / (c.n * c.wn);
    int64_t regs = l->regsPerInstr();
    ASSERT_EQ(regs, c.n * c.n / lanes);
    std::set<std::pair<int64_t, int64_t>> covered;
    for (int64_t w = 0; w < warps; ++w) {
      int64_t warpM = w / c.wn % c.wm, warpN = w % c.wn;
      for (int64_t mi = 0; mi < numMi; ++mi)
        for (int64_t ni = 0; ni < numNi; ++ni) {
          // Which tile row / column feeds each instruction row / column:
          // the lane that holds A row p (B column q) for k step 0, element 0.
          std::map<int64_t, int64_t> rowOf, colOf;
          for (int64_t lane = 0; lane < lanes; ++lane)
            for (int64_t e = 0; e < in->kWidth; ++e) {
              auto [ai, ak] = documentedOperand(*in, lane, e);
              auto [row, k] =
                  amdMmaOperandCoord(IntArith{}, *l, 0, mi, warpM, lane, 0, e, in->kWidth, in->k);
              auto [col, kb] =
                  amdMmaOperandCoord(IntArith{}, *l, 1, ni, warpN, lane, 0, e, in->kWidth, in->k);
              ASSERT_EQ(k, ak) << "lane " << lane << " element " << e;
              ASSERT_EQ(kb, ak);
              auto [r, fresh] = rowOf.emplace(ai, row);
              ASSERT_EQ(r->second, row) << "instruction row " << ai << " fed two tile rows";
              auto [q, freshCol] = colOf.emplace(ai, col);
              ASSERT_EQ(q->second, col);
            }
          ASSERT_EQ(int64_t(rowOf.size()), c.n);
          for (int64_t lane = 0; lane < lanes; ++lane)
            for (int64_t gpr = 0; gpr < regs; ++gpr) {
              auto [i, j] = documentedD(in->wmma, c.n, gpr, lane);
              int64_t reg = map.registerOf({c.n / l->laneGroups() * mi + gpr, ni});
              std::vector<int64_t> at = map.coords(reg, lane, w);
              ASSERT_EQ(at[0], rowOf[i]) << "lane " << lane << " gpr " << gpr;
              ASSERT_EQ(at[1], colOf[j]) << "lane " << lane << " gpr " << gpr;
              covered.insert({at[0], at[1]});
            }
        }
    }
    EXPECT_EQ(int64_t(covered.size()), c.M * c.N) << "the pieces cover the tile once";
  }
}

// One k step of a piece reads each (row, k) of its rows and K columns
// exactly once per lane group (WMMA: twice, lanes l and l + 16), and the
// k steps cover K.
TEST_F(AMDMmaLayoutTest, OperandReadsCoverTheTile) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(fmt::format("{} {} n={}", c.arch, dtypeName(c.dtype), c.n));
    const AMDMatrixInstr *in = amdMatrixInstr(c.arch, c.dtype, c.n);
    auto *l = AMDMmaLayout::get(ctx, in->wmma, {c.wm, c.wn}, {c.n, c.n});
    int64_t copies = in->wmma ? 2 : 1;
    for (unsigned op = 0; op < 2; ++op) {
      int64_t extent = op == 0 ? c.M : c.N, warpsAlong = op == 0 ? c.wm : c.wn;
      std::map<std::pair<int64_t, int64_t>, int64_t> reads;
      for (int64_t w = 0; w < warpsAlong; ++w)
        for (int64_t piece = 0; piece < extent / (c.n * warpsAlong); ++piece)
          for (int64_t kk = 0; kk < c.K / in->k; ++kk)
            for (int64_t lane = 0; lane < l->warpSize(); ++lane)
              for (int64_t e = 0; e < in->kWidth; ++e)
                ++reads[amdMmaOperandCoord(IntArith{}, *l, op, piece, w, lane, kk, e, in->kWidth,
                                           in->k)];
      ASSERT_EQ(int64_t(reads.size()), extent * c.K);
      for (auto &[at, count] : reads) {
        ASSERT_LT(at.first, extent);
        ASSERT_LT(at.second, c.K);
        ASSERT_EQ(count, copies);
      }
    }
  }
}

TEST_F(AMDMmaLayoutTest, InstructionsPerArch) {
  EXPECT_EQ(amdMatrixInstr("gfx942", DType::F16, 32)->name, "v_mfma_f32_32x32x8_f16");
  EXPECT_EQ(amdMatrixInstr("gfx90a", DType::BF16, 32)->name, "v_mfma_f32_32x32x8bf16_1k");
  // int8: gfx942 has only the x16 / x32 forms, gfx90a only x8 / x16.
  EXPECT_EQ(amdMatrixInstr("gfx942", DType::I8, 32)->k, 16);
  EXPECT_EQ(amdMatrixInstr("gfx90a", DType::I8, 32)->k, 8);
  EXPECT_TRUE(amdMatrixInstr("gfx1100", DType::F16, 16)->wmma);
  EXPECT_EQ(amdMatrixInstr("gfx1100", DType::F16, 32), nullptr);
  EXPECT_EQ(amdMatrixInstr("gfx1100", DType::F32, 16), nullptr);
  EXPECT_EQ(amdMatrixInstr("sm_90", DType::F16, 16), nullptr);
  EXPECT_EQ(amdMatrixInstr("gfx942", DType::F64, 16), nullptr);
}

TEST_F(AMDMmaLayoutTest, TextFormRoundTripsAndErrors) {
  struct Text {
    const char *layout;
    int warps, lanes;
  } texts[] = {{"mfma<warps = [2, 2], instr = [32, 32]>", 4, 64},
               {"mfma<warps = [4, 1], instr = [16, 16]>", 4, 64},
               {"wmma<warps = [1, 8], instr = [16, 16]>", 8, 32}};
  for (const Text &t : texts) {
    test::ParsedIR ir;
    std::string text =
        fmt::format("func @k(%arg0: tensor<64x64xfp32, {}>) attributes {{num_warps "
                    "= {}{}}} {{\n  return\n}}\n",
                    t.layout, t.warps, t.lanes == 64 ? ", threads_per_warp = 64" : "");
    ASSERT_TRUE(ir.parse(text)) << ir.errors();
    EXPECT_TRUE(ir.verify()) << ir.errors();
    EXPECT_NE(ir.print().find(t.layout), std::string::npos) << ir.print();
  }
  // An mfma layout in a function of 32-thread warps is a verifier error.
  test::ParsedIR bad;
  ASSERT_TRUE(bad.parse("func @k(%arg0: tensor<64x64xfp32, mfma<warps = [2, 2], instr = [32, "
                        "32]>>) attributes {num_warps = 4} {\n  return\n}\n"));
  EXPECT_FALSE(bad.verify());
  EXPECT_NE(bad.errors().find("64-thread warps but '@k' has threads_per_warp = 32"),
            std::string::npos)
      << bad.errors();
  std::string error;
  EXPECT_EQ(
      buildLayout(ctx, "mfma",
                  {{"warps", std::vector<int64_t>{2, 2}}, {"instr", std::vector<int64_t>{16, 8}}},
                  error),
      nullptr);
  EXPECT_NE(error.find("[32, 32] or [16, 16]"), std::string::npos) << error;
  EXPECT_EQ(
      buildLayout(ctx, "wmma",
                  {{"warps", std::vector<int64_t>{2, 2}}, {"instr", std::vector<int64_t>{32, 32}}},
                  error),
      nullptr);
  EXPECT_NE(error.find("[16, 16]"), std::string::npos) << error;
  EXPECT_EQ(
      buildLayout(ctx, "mfma",
                  {{"warps", std::vector<int64_t>{8, 4}}, {"instr", std::vector<int64_t>{32, 32}}},
                  error),
      nullptr);
  EXPECT_NE(error.find("more than 16"), std::string::npos) << error;
  EXPECT_EQ(AMDMmaLayout::get(ctx, false, {2, 2}, {32, 32})->str(),
            "mfma<warps = [2, 2], instr = [32, 32]>");
  EXPECT_EQ(layoutWarpSize(AMDMmaLayout::get(ctx, true, {2, 2}, {16, 16})), 32);
}

} // namespace
} // namespace tk
