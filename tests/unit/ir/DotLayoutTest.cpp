// The tensor-core layouts (ir/DotLayout.cpp): the mma accumulator's
// ThreadMap must put every element exactly where mma.sync's C fragment has it
// (the codegen reads registers (2i..2i+1, 2j..2j+1) as piece (i, j)), and the
// text form round-trips through buildLayout with located errors.
#include "ir/Layout.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

#include <set>

namespace tk {
namespace {

struct DotLayoutTest : ::testing::Test {
  SourceManager sm;
  IRContext ctx{sm};
};

// PTX's m16n8 accumulator: lane l holds c0 = (l/4, 2(l%4)), c1 = (l/4,
// 2(l%4)+1), c2 = (l/4+8, 2(l%4)), c3 = (l/4+8, 2(l%4)+1) of the 16x8 piece.
// With warp (wm, wn) = (w / WN, w % WN), piece (i, j) of the warp covers rows
// (2i + h) * 8 * WM + 8 * wm + r (h = the row half) and columns
// j * 8 * WN + 8 * wn + c.
TEST_F(DotLayoutTest, AccumulatorRegistersAreTheMmaFragments) {
  for (auto [M, N, WM, WN] : {std::array<int64_t, 4>{64, 64, 2, 2},
                              {128, 128, 4, 2},
                              {128, 64, 4, 1},
                              {32, 256, 1, 8},
                              {16, 8, 1, 1}}) {
    auto *l = MmaLayout::get(ctx, 2, {WM, WN}, {16, 8});
    ThreadMap map(l, {M, N});
    ASSERT_EQ(map.numThreads(), 32 * WM * WN);
    ASSERT_EQ(map.numRegisters() * map.numThreads(), M * N);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t w = 0; w < WM * WN; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t i = 0; i < M / (16 * WM); ++i)
          for (int64_t j = 0; j < N / (8 * WN); ++j)
            for (int64_t c = 0; c < 4; ++c) {
              int64_t reg = map.registerOf({2 * i + c / 2, 2 * j + c % 2});
              std::vector<int64_t> got = map.coords(reg, lane, w);
              int64_t row = (2 * i + c / 2) * 8 * WM + 8 * (w / WN) + lane / 4;
              int64_t col = j * 8 * WN + 8 * (w % WN) + 2 * (lane % 4) + c % 2;
              ASSERT_EQ(got, (std::vector<int64_t>{row, col}))
                  << M << "x" << N << " warps " << WM << "x" << WN << " w" << w << " lane " << lane
                  << " piece " << i << "," << j << " c" << c;
              seen.insert({row, col});
            }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), M * N) << "every element exactly once";
  }
}

TEST_F(DotLayoutTest, OperandLayoutsSpreadKOverTheQuad) {
  auto *mma = MmaLayout::get(ctx, 2, {2, 2}, {16, 8});
  auto *a = DotOperandLayout::get(ctx, 0, mma, 2);
  auto *b = DotOperandLayout::get(ctx, 1, mma, 2);
  EXPECT_EQ(layoutRank(a), 2u);
  EXPECT_EQ(layoutNumWarps(b), 4);
  // A's lane l: rows l/4 (+8 ...), K pairs 2(l%4), 2(l%4)+1 (+8 ...): the a0..a7
  // of m16n8k16; warps along N hold copies.
  ThreadMap ma(a, {32, 16});
  EXPECT_EQ(ma.coords(0, 5, 0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ma.coords(1, 5, 0), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ma.coords(0, 5, 1), ma.coords(0, 5, 0));
  EXPECT_EQ(ma.coords(0, 5, 2), (std::vector<int64_t>{9, 2}));
  // B's lane l: K pair 2(l%4), 2(l%4)+1, column l/4 (b0, b1).
  ThreadMap mb(b, {16, 16});
  EXPECT_EQ(mb.coords(0, 6, 0), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(mb.coords(1, 6, 0), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(mb.coords(0, 6, 1), (std::vector<int64_t>{4, 9}));
}

TEST_F(DotLayoutTest, TextFormAndErrors) {
  auto *mma = MmaLayout::get(ctx, 2, {4, 2}, {16, 8});
  EXPECT_EQ(mma->str(), "mma<version = 2, warps = [4, 2], instr = [16, 8]>");
  EXPECT_EQ(mma, MmaLayout::get(ctx, 2, {4, 2}, {16, 8})) << "uniqued";
  auto *op = DotOperandLayout::get(ctx, 1, mma, 4);
  EXPECT_EQ(op->str(), "dot_operand<op_idx = 1, parent = mma<version = 2, warps = [4, 2], "
                       "instr = [16, 8]>, k_width = 4>");
  std::string error;
  std::vector<LayoutParam> ok = {{"version", int64_t(2)},
                                 {"warps", std::vector<int64_t>{4, 2}},
                                 {"instr", std::vector<int64_t>{16, 8}}};
  EXPECT_EQ(buildLayout(ctx, "mma", ok, error), mma) << error;
  std::vector<LayoutParam> operand = {
      {"op_idx", int64_t(1)}, {"parent", mma}, {"k_width", int64_t(4)}};
  EXPECT_EQ(buildLayout(ctx, "dot_operand", operand, error), op) << error;

  auto fails = [&](std::string_view kind, std::vector<LayoutParam> params) {
    std::string e;
    EXPECT_EQ(buildLayout(ctx, kind, params, e), nullptr);
    return e;
  };
  EXPECT_EQ(fails("mma", {{"version", int64_t(3)}, ok[1], ok[2]}),
            "mma version 3 is not supported (2: mma.sync)");
  EXPECT_EQ(fails("mma", {ok[0], {"warps", std::vector<int64_t>{3, 2}}, ok[2]}),
            "mma warps [3, 2] must be powers of two");
  EXPECT_EQ(fails("mma", {ok[0], ok[1]}), "mma layout needs 'instr'");
  EXPECT_EQ(
      fails("dot_operand", {{"op_idx", int64_t(2)}, {"parent", mma}, {"k_width", int64_t(2)}}),
      "dot_operand op_idx must be 0 or 1, got 2");
  EXPECT_EQ(
      fails("dot_operand", {{"op_idx", int64_t(0)}, {"parent", mma}, {"k_width", int64_t(3)}}),
      "dot_operand k_width must be 1, 2 or 4, got 3");
}

} // namespace
} // namespace tk
