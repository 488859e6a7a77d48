// Layouts: the (layout, shape) -> elements-per-thread map every GPU lowering
// relies on, the builders the coalescing pass uses, and the text form.
#include "ir/Layout.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace tk {
namespace {

struct LayoutTest : ::testing::Test {
  SourceManager sm;
  IRContext ctx{sm};
};

TEST_F(LayoutTest, OneDimensionalBlockedGivesEachThreadTwoVectors) {
  auto *l = BlockedLayout::get(ctx, {4}, {32}, {4}, {0});
  EXPECT_EQ(l->str(), "blocked<size = [4], threads = [32], warps = [4], order = [0]>");
  ThreadMap map(l, {1024});
  EXPECT_EQ(map.numThreads(), 128);
  EXPECT_EQ(map.numRegisters(), 8);
  std::vector<std::vector<int64_t>> owned = map.elementsPerThread();
  for (int64_t t : {0, 1, 31, 32, 127}) {
    std::vector<int64_t> want;
    for (int64_t base : {4 * t, 512 + 4 * t})
      for (int64_t i = 0; i < 4; ++i)
        want.push_back(base + i);
    EXPECT_EQ(owned[t], want) << "thread " << t;
  }
}

TEST_F(LayoutTest, TwoDimensionalRowMajorTile) {
  // fp16 [64, 128] with 16-byte vectors: a warp covers 2 rows, 4 warps 8.
  auto *l = makeBlockedLayout(ctx, {64, 128}, {1, 0}, 8, 4, kWarpSize);
  EXPECT_EQ(l->sizePerThread(), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(l->threadsPerWarp(), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(l->warpsPerCTA(), (std::vector<int64_t>{4, 1}));
  ThreadMap map(l, {64, 128});
  EXPECT_EQ(map.numRegisters(), 64);
  // Lane 17 is row 1, columns 8..15; its next group is 8 rows further down.
  EXPECT_EQ(map.coords(0, 17, 0), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(map.coords(7, 17, 0), (std::vector<int64_t>{1, 15}));
  EXPECT_EQ(map.coords(8, 17, 0), (std::vector<int64_t>{9, 8}));
  EXPECT_EQ(map.coords(0, 0, 3), (std::vector<int64_t>{6, 0}));
}

// Random valid layouts over random power-of-two shapes: every element is held
// by some thread; exactly once when the shape covers the tile; each thread's
// registers come in runs of `size` consecutive elements along order[0].
TEST_F(LayoutTest, RandomLayoutsCoverEveryElement) {
  std::mt19937 rng(20241129);
  auto pick = [&](int64_t maxLog) { return int64_t(1) << (rng() % (maxLog + 1)); };
  for (int iter = 0; iter < 200; ++iter) {
    unsigned rank = 1 + rng() % 3;
    std::vector<int64_t> shape, order;
    for (unsigned d = 0; d < rank; ++d) {
      shape.push_back(pick(7));
      order.push_back(d);
    }
    std::shuffle(order.begin(), order.end(), rng);
    int64_t warps = pick(3), vec = pick(3);
    // Every other layout has 64-lane warps (AMD's wave64).
    int64_t lanes = iter % 2 ? 64 : kWarpSize;
    auto *l = makeBlockedLayout(ctx, shape, order, vec, warps, lanes);
    ASSERT_TRUE(
        validateBlocked(l->sizePerThread(), l->threadsPerWarp(), l->warpsPerCTA(), l->order())
            .empty());
    ThreadMap map(l, shape);
    ASSERT_EQ(map.numWarps(), warps);
    ASSERT_EQ(map.warpSize(), lanes);
    ASSERT_EQ(layoutWarpSize(l), lanes);
    ASSERT_EQ(int64_t(map.elementsPerThread().size()), warps * lanes);
    int64_t total = 1;
    bool covers = true;
    for (unsigned d = 0; d < rank; ++d) {
      total *= shape[d];
      covers = covers && shape[d] >= map.dim(d).tile();
    }
    std::vector<int64_t> count(static_cast<size_t>(total), 0);
    for (const auto &elems : map.elementsPerThread()) {
      ASSERT_EQ(int64_t(elems.size()), map.numRegisters());
      for (int64_t e : elems)
        ++count[static_cast<size_t>(e)];
    }
    for (int64_t c : count) {
      ASSERT_GE(c, 1) << l->str() << " on " << shapeStr(shape);
      if (covers) {
        ASSERT_EQ(c, 1) << l->str() << " on " << shapeStr(shape);
      }
    }
    // Runs along the fastest dimension.
    unsigned fast = map.order()[0];
    int64_t lane = rng() % lanes, warp = rng() % warps;
    for (int64_t r = 0; r + 1 < map.numRegisters(); ++r)
      if ((r + 1) % map.dim(fast).size != 0 && map.dim(fast).size <= shape[fast]) {
        std::vector<int64_t> a = map.coords(r, lane, warp), b = map.coords(r + 1, lane, warp);
        ASSERT_EQ(a[fast] + 1, b[fast]);
      }
    // registerOf inverts registerIndex.
    for (int64_t r = 0; r < map.numRegisters(); ++r)
      ASSERT_EQ(map.registerOf(map.registerIndex(r)), r);
  }
}

TEST_F(LayoutTest, SliceHoldsTheParentsElementsWithoutTheDimension) {
  auto *parent = makeBlockedLayout(ctx, {32, 64}, {1, 0}, 4, 4, kWarpSize);
  for (unsigned dim : {0u, 1u}) {
    auto *slice = SliceLayout::get(ctx, dim, parent);
    EXPECT_EQ(layoutRank(slice), 1u);
    EXPECT_EQ(expandLayout(ctx, slice, dim), parent);
    ThreadMap pm(parent, {32, 64});
    int64_t kept = dim == 0 ? 64 : 32;
    ThreadMap sm(slice, {kept});
    std::vector<std::vector<int64_t>> sliceElems = sm.elementsPerThread();
    for (int64_t t = 0; t < pm.numThreads(); ++t) {
      std::set<int64_t> want;
      for (int64_t r = 0; r < pm.numRegisters(); ++r)
        want.insert(pm.coords(r, t % kWarpSize, t / kWarpSize)[1 - dim]);
      std::set<int64_t> got(sliceElems[t].begin(), sliceElems[t].end());
      EXPECT_EQ(got, want) << "dim " << dim << " thread " << t;
    }
  }
}

TEST_F(LayoutTest, SmallTensorsWrapAndReplicate) {
  // 64 elements over 128 threads: warps 2 and 3 hold copies of warps 0 and 1.
  auto *l = BlockedLayout::get(ctx, {1}, {32}, {4}, {0});
  ThreadMap map(l, {64});
  EXPECT_EQ(map.numRegisters(), 1);
  EXPECT_EQ(map.coords(0, 5, 0), map.coords(0, 5, 2));
  EXPECT_EQ(map.coords(0, 5, 1), (std::vector<int64_t>{37}));
}

TEST_F(LayoutTest, LayoutsAreUniqued) {
  auto *a = BlockedLayout::get(ctx, {1, 4}, {4, 8}, {2, 2}, {1, 0});
  auto *b = BlockedLayout::get(ctx, {1, 4}, {4, 8}, {2, 2}, {1, 0});
  EXPECT_EQ(a, b);
  EXPECT_EQ(SliceLayout::get(ctx, 0, a), SliceLayout::get(ctx, 0, b));
  EXPECT_NE(ctx.tensor({8, 32}, ctx.f32(), a), ctx.tensor({8, 32}, ctx.f32()));
}

TEST_F(LayoutTest, ValidationNamesTheProblem) {
  EXPECT_NE(validateBlocked({1}, {16}, {4}, {0}).find("multiply to 16"), std::string::npos);
  EXPECT_NE(validateBlocked({3}, {32}, {4}, {0}).find("power of two"), std::string::npos);
  EXPECT_NE(validateBlocked({1, 1}, {4, 8}, {1, 1}, {0, 0}).find("permutation"), std::string::npos);
  EXPECT_NE(validateBlocked({1}, {32, 1}, {4}, {0}).find("one length"), std::string::npos);
}

TEST(LayoutTextTest, RoundTripsThroughTheParser) {
  test::ParsedIR ir;
  std::string text =
      "func @k(%arg0: tensor<64x128xfp16, blocked<size = [1, 8], threads = [2, 16], warps = [4, "
      "1], order = [1, 0]>>) attributes {num_warps = 4} {\n"
      "  %0 = reduce %arg0 {axis = 1, kind = \"max\"} : tensor<64xfp16, slice<dim = 1, parent = "
      "blocked<size = [1, 8], threads = [2, 16], warps = [4, 1], order = [1, 0]>>>\n"
      "  %1 = convert_layout %0 : tensor<64xfp16, blocked<size = [1], threads = [32], warps = "
      "[4], order = [0]>>\n"
      "  return\n"
      "}\n";
  ASSERT_TRUE(ir.parse(text)) << ir.errors();
  EXPECT_TRUE(ir.verify()) << ir.errors();
  EXPECT_EQ(ir.print(), text);
}

TEST(LayoutTextTest, BadLayoutsAreLocatedErrors) {
  struct Case {
    const char *type;
    const char *message;
  } cases[] = {
      {"tensor<64xfp32, blocked<size = [1], threads = [16], warps = [4], order = [0]>>",
       "multiply to 16, not a warp size (32, or 64"},
      {"tensor<64xfp32, blocked<size = [1], threads = [32], order = [0]>>",
       "blocked layout needs 'warps'"},
      {"tensor<64xfp32, blocked<size = [1, 1], threads = [1, 32], warps = [4, 1], order = [1, "
       "0]>>",
       "layout of rank 2 on a tensor of rank 1"},
      {"tensor<64xfp32, mma<version = 2>>", "mma layout needs 'warps'"},
      {"tensor<64xfp32, slice<dim = 3, parent = blocked<size = [1, 1], threads = [1, 32], warps "
       "= [4, 1], order = [1, 0]>>>",
       "slice dim 3 is out of range"},
      {"tensor<64xfp32, blocked<size = 1, threads = [32], warps = [4], order = [0]>>",
       "must be an integer array"},
  };
  for (const Case &c : cases) {
    test::ParsedIR ir;
    EXPECT_FALSE(ir.parse(std::string("func @k(%a: ") + c.type + ") {\n  return\n}\n"));
    EXPECT_NE(ir.errors().find(c.message), std::string::npos) << c.type << "\n" << ir.errors();
    EXPECT_NE(ir.errors().find("t.tkir:1:"), std::string::npos) << ir.errors();
  }
}

// The swizzle keeps each vec-wide column group together, is a bijection
// within every row, and moves the same column of rows per_phase apart to
// different groups (different banks), for random parameters.
TEST_F(LayoutTest, SharedSwizzleIsABijectionPerRowThatSpreadsRows) {
  auto *l = SharedLayout::get(ctx, 8, 1, 8, {1, 0});
  EXPECT_EQ(l->str(), "shared<vec = 8, per_phase = 1, max_phase = 8, order = [1, 0]>");
  EXPECT_EQ(l->rank(), 2u);
  // Row 3, column 17: group 2 ^ phase 3 = 1, so 64 * 3 + 8 + 1.
  EXPECT_EQ(l->offset({32, 64}, {3, 17}), 3 * 64 + 9);
  // max_phase = 1 is row-major.
  auto *plain = SharedLayout::get(ctx, 4, 1, 1, {1, 0});
  EXPECT_EQ(plain->offset({32, 64}, {5, 7}), 5 * 64 + 7);
  // order = [0, 1]: dimension 0 is the row (fastest).
  auto *colMajor = SharedLayout::get(ctx, 1, 1, 1, {0, 1});
  EXPECT_EQ(colMajor->offset({16, 8}, {3, 2}), 2 * 16 + 3);

  std::mt19937 rng(7);
  for (int iter = 0; iter < 100; ++iter) {
    int64_t vec = int64_t(1) << (rng() % 4), perPhase = int64_t(1) << (rng() % 3),
            maxPhase = int64_t(1) << (rng() % 4);
    int64_t rows = int64_t(1) << (rng() % 6), cols = int64_t(1) << (rng() % 8);
    auto *sl = SharedLayout::get(ctx, vec, perPhase, maxPhase, {1, 0});
    std::set<int64_t> seen;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t o = sl->offset({rows, cols}, {r, c});
        ASSERT_GE(o, r * cols);
        ASSERT_LT(o, (r + 1) * cols) << sl->str() << " " << rows << "x" << cols;
        ASSERT_TRUE(seen.insert(o).second) << sl->str();
        if (c % vec) {
          EXPECT_EQ(o, sl->offset({rows, cols}, {r, c - 1}) + 1) << "a vector group split";
        }
      }
    int64_t groups = cols / vec;
    if (groups >= 2 && maxPhase >= 2 && rows > perPhase) {
      EXPECT_NE(sl->offset({rows, cols}, {0, 0}) % cols,
                sl->offset({rows, cols}, {perPhase, 0}) % cols)
          << "rows one phase apart share a bank group";
    }
  }
}

TEST(LayoutTextTest, SharedLayoutsRoundTripAndBadOnesAreErrors) {
  test::ParsedIR ir;
  std::string text = "func @k(%arg0: tensor<32x64xfp16, shared<vec = 8, per_phase = 2, max_phase "
                     "= 4, order = [1, 0]>>) {\n"
                     "  return\n"
                     "}\n";
  ASSERT_TRUE(ir.parse(text)) << ir.errors();
  EXPECT_TRUE(ir.verify()) << ir.errors();
  EXPECT_EQ(ir.print(), text);

  struct Case {
    const char *type;
    const char *message;
  } cases[] = {
      {"tensor<64xfp32, shared<vec = 3, per_phase = 1, max_phase = 1, order = [0]>>",
       "vec = 3 is not a positive power of two"},
      {"tensor<64xfp32, shared<vec = 1, per_phase = 1, order = [0]>>",
       "shared layout needs 'max_phase'"},
      {"tensor<64xfp32, shared<vec = 1, per_phase = 1, max_phase = 1, order = [0, 0]>>",
       "not a permutation"},
      {"tensor<64xfp32, shared<vec = [1], per_phase = 1, max_phase = 1, order = [0]>>",
       "'vec' of a shared layout must be an integer"},
      {"tensor<64xfp32, slice<dim = 0, parent = shared<vec = 1, per_phase = 1, max_phase = 1, "
       "order = [1, 0]>>>",
       "must be distributed, not shared"},
  };
  for (const Case &c : cases) {
    test::ParsedIR bad;
    EXPECT_FALSE(bad.parse(std::string("func @k(%a: ") + c.type + ") {\n  return\n}\n"));
    EXPECT_NE(bad.errors().find(c.message), std::string::npos) << c.type << "\n" << bad.errors();
  }
}

// local_alloc / local_load / local_store check the buffer's layout and that
// values keep its shape and element type.
TEST(LayoutTextTest, LocalBufferOpsAreVerified) {
  const char *sharedT = "tensor<64xfp32, shared<vec = 1, per_phase = 1, max_phase = 1, order = "
                        "[0]>>";
  const char *blockedT = "tensor<64xfp32, blocked<size = [2], threads = [32], warps = [1], "
                         "order = [0]>>";
  struct Case {
    std::string body;
    const char *message; // null: verifies
  } cases[] = {
      {std::string("  %b = local_alloc %a : ") + sharedT + "\n  %c = local_load %b : " + blockedT +
           "\n  local_store %b, %c\n  barrier\n",
       nullptr},
      {std::string("  %b = local_alloc %a : ") + blockedT + "\n", "must have a shared layout"},
      {"  %b = local_alloc %a : tensor<32xfp32, shared<vec = 1, per_phase = 1, max_phase = 1, "
       "order = [0]>>\n",
       "differ in shape or element type"},
      {std::string("  %b = local_alloc : ") + sharedT + "\n  %c = local_load %b : " + sharedT +
           "\n",
       "must not have a shared layout"},
  };
  for (const Case &c : cases) {
    test::ParsedIR ir;
    std::string text = std::string("func @k(%a: ") + blockedT + ") {\n" + c.body + "  return\n}\n";
    ASSERT_TRUE(ir.parse(text)) << ir.errors();
    if (!c.message) {
      EXPECT_TRUE(ir.verify()) << ir.errors();
      continue;
    }
    EXPECT_FALSE(ir.verify()) << text;
    EXPECT_NE(ir.errors().find(c.message), std::string::npos) << text << ir.errors();
  }
}

TEST_F(LayoutTest, ConstancyLeadersShareRunsOfAMask) {
  // A 1024-wide fp16 row at 4 warps, 8 consecutive columns per thread run;
  // `cols < N` with N a multiple of 16 is constant on blocks of 16.
  auto *l = BlockedLayout::get(ctx, {8}, {32}, {4}, {0});
  ThreadMap map(l, {1024});
  std::vector<int64_t> leader = constancyLeaders(map, {16});
  ASSERT_EQ(leader.size(), 8u);
  EXPECT_EQ(leader, std::vector<int64_t>(8, 0));
  // Blocks of 4: two leaders per run; nothing known: each its own.
  EXPECT_EQ(constancyLeaders(map, {4}), (std::vector<int64_t>{0, 0, 0, 0, 4, 4, 4, 4}));
  EXPECT_EQ(constancyLeaders(map, {1}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // A 2-D tile whose rows are constant (a row mask): only the runs along
  // the columns share; different rows never do.
  auto *l2 = BlockedLayout::get(ctx, {2, 4}, {4, 8}, {2, 2}, {1, 0});
  ThreadMap map2(l2, {32, 64});
  std::vector<int64_t> rowMask = constancyLeaders(map2, {1, 64});
  for (int64_t r = 0; r < map2.numRegisters(); ++r) {
    std::vector<int64_t> k = map2.registerIndex(r);
    k[1] -= k[1] % 4;
    EXPECT_EQ(rowMask[r], map2.registerOf(k)) << r;
  }
}

// The mma accumulator with its warps along M (wgmma's, warps [8, 1]) holds
// column pairs 8 apart (2 * (lane % 4) + {0, 1} + 8j): with `cols < N`
// constant on blocks of 16 (N a multiple of 16), pairs j = 2q and 2q + 1
// share a value as well as the two columns of a pair. A 128x128 tile: 2 rows
// x 32 columns per thread, 2 x 8 leaders (the blocked rule's runs alone:
// 2 x 16). With warps [4, 2] (4 rows x 16 columns) the second warp column
// sits between them (pairs 16 apart): only the pairs share, 4 x 8.
TEST_F(LayoutTest, ConstancyLeadersShareColumnPairsOfTheMmaAccumulator) {
  auto *l = MmaLayout::get(ctx, 2, {8, 1}, {16, 8});
  ThreadMap map(l, {128, 128});
  ASSERT_EQ(map.numRegisters(), 64);
  std::vector<int64_t> leader = constancyLeaders(map, {1, 16});
  EXPECT_EQ(std::set<int64_t>(leader.begin(), leader.end()).size(), 16u);
  for (int64_t r = 0; r < 64; ++r) {
    std::vector<int64_t> a = map.coords(r, 5, 3), b = map.coords(leader[r], 5, 3);
    EXPECT_EQ(a[0], b[0]) << r;
    EXPECT_EQ(a[1] / 16, b[1] / 16) << r;
  }
  std::vector<int64_t> by8 = constancyLeaders(map, {1, 8});
  EXPECT_EQ(std::set<int64_t>(by8.begin(), by8.end()).size(), 32u);
  auto *l42 = MmaLayout::get(ctx, 2, {4, 2}, {16, 8});
  ThreadMap map42(l42, {128, 128});
  std::vector<int64_t> w42 = constancyLeaders(map42, {1, 16});
  EXPECT_EQ(std::set<int64_t>(w42.begin(), w42.end()).size(), 32u);
}

// The promise behind sharing: for random blocked and mma layouts and their
// slices over random shapes (tiles larger and smaller than the shape) and random
// constancies, every register lies in the same aligned constancy block as
// its leader, along every dimension, in every thread; and the leader comes
// first (it is computed before the registers that take its value).
TEST_F(LayoutTest, ConstancyLeadersStayInsideConstancyBlocks) {
  std::mt19937 rng(20261130);
  int64_t shared = 0;
  for (int iter = 0; iter < 300; ++iter) {
    unsigned rank = 1 + rng() % 3;
    std::vector<int64_t> shape(rank), size(rank), threads(rank, 1), warps(rank, 1), order(rank);
    for (unsigned d = 0; d < rank; ++d) {
      shape[d] = int64_t(1) << (rng() % 7);
      size[d] = int64_t(1) << (rng() % 4);
      order[d] = d;
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (int b = 0; b < 5; ++b)
      threads[rng() % rank] *= 2;
    for (int b = 0, n = static_cast<int>(rng() % 3); b < n; ++b)
      warps[rng() % rank] *= 2;
    const LayoutAttr *l = BlockedLayout::get(ctx, size, threads, warps, order);
    if (iter % 3 == 0) { // an mma accumulator (version 2 or 3) instead
      rank = 2;
      shape = {int64_t(16) << (rng() % 4), int64_t(8) << (rng() % 5)};
      int64_t wm = int64_t(1) << (rng() % 3), wn = int64_t(1) << (rng() % 2);
      l = rng() % 2 ? MmaLayout::get(ctx, 2, {wm, wn}, {16, 8})
                    : MmaLayout::get(ctx, 3, {4 * wm, 1}, {64, shape[1]});
    }
    if (rank > 1 && rng() % 2) {
      unsigned dim = static_cast<unsigned>(rng() % rank);
      l = SliceLayout::get(ctx, dim, l);
      shape.erase(shape.begin() + dim);
    }
    ThreadMap map(l, shape);
    std::vector<int64_t> constancy(map.rank());
    for (unsigned d = 0; d < map.rank(); ++d)
      constancy[d] = std::min(shape[d], int64_t(1) << (rng() % 6));
    std::vector<int64_t> leader = constancyLeaders(map, constancy);
    ASSERT_EQ(static_cast<int64_t>(leader.size()), map.numRegisters());
    for (int64_t r = 0; r < map.numRegisters(); ++r) {
      ASSERT_LE(leader[r], r);
      shared += leader[r] != r;
      for (int64_t t = 0; t < map.numThreads(); ++t) {
        std::vector<int64_t> a = map.coords(r, t % kWarpSize, t / kWarpSize);
        std::vector<int64_t> b = map.coords(leader[r], t % kWarpSize, t / kWarpSize);
        for (unsigned d = 0; d < map.rank(); ++d)
          ASSERT_EQ(a[d] / constancy[d], b[d] / constancy[d])
              << l->str() << " register " << r << " dim " << d << " thread " << t;
      }
    }
  }
  EXPECT_GT(shared, 0); // the property was exercised, not only the identity
}

} // namespace
} // namespace tk
