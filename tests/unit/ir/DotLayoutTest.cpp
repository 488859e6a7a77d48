// The tensor-core layouts (ir/DotLayout.cpp): the mma accumulator's
// ThreadMap must put every element exactly where mma.sync's C fragment has it
// (the codegen reads registers (2i..2i+1, 2j..2j+1) as piece (i, j)), and the
// text form round-trips through buildLayout with located errors.
#include "ir/Layout.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <fmt/format.h>
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

// wgmma (version 3): warp w % 4 of warp group w / 4 holds rows 16 (w % 4) +
// lane / 4 + 8 h of each 64-row piece the group computes, columns 8 i +
// 2 (lane % 4) + {0, 1}. The lowering issues piece mi of group g on the 64
// rows of A's shared tile starting at 64 (mi G + g) and puts result row block
// b at tile block wgmmaSharedRowBlock(b, W): so every register of the
// ThreadMap must be the wgmma fragment of the tile row that holds its row.
TEST_F(DotLayoutTest, WgmmaFragmentsMatchTheThreadMapThroughTheRowPermutation) {
  for (auto [M, N, W] : {std::array<int64_t, 3>{64, 256, 4},
                         {128, 128, 4},
                         {128, 256, 8},
                         {256, 128, 8},
                         {256, 64, 16},
                         {64, 16, 4}}) {
    auto *l = MmaLayout::get(ctx, 3, {W, 1}, {64, N});
    EXPECT_EQ(l->str(), fmt::format("mma<version = 3, warps = [{}, 1], instr = [64, {}]>", W, N));
    ThreadMap map(l, {M, N});
    ASSERT_EQ(map.numThreads() * map.numRegisters(), M * N);
    int64_t groups = W / 4, pieces = M / (16 * W);
    std::set<int64_t> blocks;
    for (int64_t b = 0; b < M / 8; ++b)
      blocks.insert(wgmmaSharedRowBlock(b, W));
    EXPECT_EQ(static_cast<int64_t>(blocks.size()), M / 8) << "a permutation";
    EXPECT_EQ(*blocks.rbegin(), M / 8 - 1);
    for (int64_t w = 0; w < W; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t mi = 0; mi < pieces; ++mi)
          for (int64_t i = 0; i < N / 8; ++i)
            for (int64_t d = 0; d < 4; ++d) {
              int64_t h = d / 2, c = d % 2;
              std::vector<int64_t> got =
                  map.coords(map.registerOf({2 * mi + h, 2 * i + c}), lane, w);
              int64_t tileRow = 64 * (mi * groups + w / 4) + 16 * (w % 4) + 8 * h + lane / 4;
              int64_t at = wgmmaSharedRowBlock(got[0] / 8, W) * 8 + got[0] % 8;
              ASSERT_EQ(at, tileRow) << M << "x" << N << " w" << w << " lane " << lane;
              ASSERT_EQ(got[1], 8 * i + 2 * (lane % 4) + c);
            }
  }
}

TEST_F(DotLayoutTest, WgmmaDescriptorFields) {
  // 128-byte swizzle, K-major tile at 0x4400: LBO unused (16), SBO 1024.
  EXPECT_EQ(wgmmaDescriptor(0x4400, 16, 1024, 128),
            (uint64_t(1) << 62) | (uint64_t(64) << 32) | (uint64_t(1) << 16) | 0x440);
  // 64- and 32-byte swizzles; the fields keep 14 bits of each offset >> 4.
  EXPECT_EQ(wgmmaDescriptor(0x10, 8192, 512, 64) >> 62, 2u);
  EXPECT_EQ(wgmmaDescriptor(0x10, 8192, 256, 32) >> 62, 3u);
  EXPECT_EQ((wgmmaDescriptor(0x10, 8192, 256, 32) >> 16) & 0x3FFF, 512u);
  EXPECT_EQ(wgmmaDescriptor(0x3FFF0 + 0x40000, 0, 0, 0), 0x3FFFu) << "address bits 4-17 only";
  for (uint64_t addr = 0; addr < (1u << 18); addr += 16) {
    uint64_t d = wgmmaDescriptor(addr, 16 * (addr % 97), 1024, 128);
    ASSERT_EQ(d & 0x3FFF, addr >> 4);
    ASSERT_EQ((d >> 16) & 0x3FFF, addr % 97);
    ASSERT_EQ((d >> 32) & 0x3FFF, 64u);
    uint64_t reserved = (uint64_t(0x3) << 14) | (uint64_t(0x3) << 30) | (uint64_t(0xFFFF) << 46);
    ASSERT_EQ(d & reserved, 0u) << "reserved bits and the base offset stay 0";
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
  EXPECT_EQ(fails("mma", {{"version", int64_t(4)}, ok[1], ok[2]}),
            "mma version 4 is not supported (2: mma.sync, 3: wgmma)");
  EXPECT_EQ(fails("mma", {{"version", int64_t(3)}, ok[1], ok[2]}),
            "wgmma warps [4, 2] must be [4 x groups, 1]");
  EXPECT_EQ(fails("mma", {{"version", int64_t(3)}, {"warps", std::vector<int64_t>{8, 1}}, ok[2]}),
            "wgmma instr [16, 8] must be [64, N] with N a multiple of 8 up to 256");
  EXPECT_EQ(fails("mma", {{"version", int64_t(3)},
                          {"warps", std::vector<int64_t>{4, 1}},
                          {"instr", std::vector<int64_t>{64, 264}}}),
            "wgmma instr [64, 264] must be [64, N] with N a multiple of 8 up to 256");
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
