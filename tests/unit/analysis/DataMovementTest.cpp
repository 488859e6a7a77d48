// DataMovement: which convert_layout/reshape/trans/scan/atomic ops move data
// through shared memory and how much scratch they take (what --allocate-shared reserves and
// the code generation relies on). The register-only reshape/trans answer is
// checked against ThreadMap::coords element by element.
#include "analysis/DataMovement.h"
#include "ir/Layout.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace tk {
namespace {

constexpr const char *kRow =
    "blocked<size = [1, 4], threads = [8, 4], warps = [4, 1], order = [1, 0]>";
constexpr const char *kCol =
    "blocked<size = [4, 1], threads = [4, 8], warps = [1, 4], order = [0, 1]>";
constexpr const char *k1D = "blocked<size = [4], threads = [32], warps = [4], order = [0]>";
constexpr const char *k1DOne = "blocked<size = [1], threads = [32], warps = [4], order = [0]>";

// The first op of the first function with `opcode`.
Operation *findOp(Module &m, Opcode opcode) {
  Operation *found = nullptr;
  m.functions().front()->walk([&](Operation *op) {
    if (!found && op->is(opcode))
      found = op;
  });
  return found;
}

struct Parsed {
  test::ParsedIR ir;
  Operation *op = nullptr;
};

std::unique_ptr<Parsed> parse(const std::string &body, Opcode opcode) {
  auto p = std::make_unique<Parsed>();
  EXPECT_TRUE(
      p->ir.parse("func @k(%x: ptr<i32>) attributes {num_warps = 4} {\n" + body + "  return\n}\n"))
      << p->ir.errors();
  if (p->ir.module)
    p->op = findOp(*p->ir.module, opcode);
  return p;
}

// Checks `pick` against the layouts: on every thread, result register j
// holds the operand element that operand register pick[j] holds.
void expectPickMatches(const Operation &op, const std::vector<int64_t> &pick,
                       const std::vector<int64_t> &order) {
  Value *in = op.operand(0), *res = op.result();
  ThreadMap inMap(cast<TensorType>(in->type())->layout(), in->type()->shape());
  ThreadMap outMap(cast<TensorType>(res->type())->layout(), res->type()->shape());
  ASSERT_EQ(static_cast<int64_t>(pick.size()), outMap.numRegisters());
  for (int64_t warp = 0; warp < outMap.numWarps(); ++warp)
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      for (int64_t j = 0; j < outMap.numRegisters(); ++j) {
        std::vector<int64_t> c = outMap.coords(j, lane, warp);
        std::vector<int64_t> want(c.size());
        for (size_t i = 0; i < order.size(); ++i)
          want[static_cast<size_t>(order[i])] = c[i];
        EXPECT_EQ(inMap.coords(pick[static_cast<size_t>(j)], lane, warp), want)
            << "lane " << lane << " warp " << warp << " register " << j;
      }
}

TEST(DataMovement, TransposeIntoTheSwappedLayoutIsRegisterOnly) {
  auto p = parse(fmt::format("  %a = make_range {{end = 32, start = 0}} : tensor<32xi32, {0}>\n"
                             "  %s = splat %x : tensor<32x32xi32, blocked<size = [1, 4], threads "
                             "= [8, 4], warps = [4, 1], order = [1, 0]>>\n"
                             "  %t = trans %s {{order = [1, 0]}} : tensor<32x32xi32, {1}>\n",
                             k1DOne, kCol),
                 Opcode::Trans);
  ASSERT_TRUE(p->op);
  std::vector<int64_t> pick;
  EXPECT_TRUE(reshapeTransIsLocal(*p->op, &pick));
  expectPickMatches(*p->op, pick, {1, 0});
  EXPECT_EQ(movementScratchBytes(*p->op), 0);
}

TEST(DataMovement, TransposeIntoTheSameLayoutMovesThroughShared) {
  auto p = parse(fmt::format("  %s = splat %x : tensor<32x32xi32, {0}>\n"
                             "  %t = trans %s {{order = [1, 0]}} : tensor<32x32xi32, {0}>\n",
                             kRow),
                 Opcode::Trans);
  ASSERT_TRUE(p->op);
  EXPECT_FALSE(reshapeTransIsLocal(*p->op));
  // One i32 slot per element and a spare, rounded up to 16 bytes.
  EXPECT_EQ(movementScratchBytes(*p->op), (1024 + 1) * 4 + 12);
}

TEST(DataMovement, ReshapeKeepingEveryElementInItsThread) {
  // 1-D, 4 consecutive per thread -> 2-D rows of 4 per thread: same elements.
  auto p = parse(fmt::format("  %s = splat %x : tensor<1024xi32, {0}>\n"
                             "  %r = reshape %s : tensor<256x4xi32, blocked<size = [1, 4], "
                             "threads = [32, 1], warps = [4, 1], order = [1, 0]>>\n",
                             k1D),
                 Opcode::Reshape);
  ASSERT_TRUE(p->op);
  std::vector<int64_t> pick;
  ASSERT_TRUE(reshapeTransIsLocal(*p->op, &pick));
  // reshape keeps the row-major order: element L of the result is L of the
  // operand, so compare linear indices.
  ThreadMap inMap(cast<TensorType>(p->op->operand(0)->type())->layout(), {1024});
  ThreadMap outMap(cast<TensorType>(p->op->result()->type())->layout(), {256, 4});
  std::vector<std::vector<int64_t>> in = inMap.elementsPerThread(),
                                    out = outMap.elementsPerThread();
  for (size_t t = 0; t < out.size(); ++t)
    for (size_t j = 0; j < out[t].size(); ++j)
      EXPECT_EQ(out[t][j], in[t][static_cast<size_t>(pick[j])]);
}

TEST(DataMovement, AccumulatorReadAsAnOperandIsARenaming) {
  // An mma accumulator on warps [4, 1] holds, per 16 x 8 piece, rows l / 4
  // (+ 8) and columns 2 (l % 4) + {0, 1}: exactly the A operand's K pairs.
  const char *acc = "mma<version = 2, warps = [4, 1], instr = [16, 8]>";
  auto p = parse(fmt::format("  %s = splat %x : tensor<128x64xi32, {0}>\n"
                             "  %t = trunc %s : tensor<128x64xi16, {0}>\n"
                             "  %c = convert_layout %t : tensor<128x64xi16, dot_operand<op_idx = "
                             "0, parent = {0}, k_width = 2>>\n",
                             acc),
                 Opcode::ConvertLayout);
  ASSERT_TRUE(p->op);
  std::vector<int64_t> pick;
  ASSERT_TRUE(convertIsLocal(*p->op, &pick));
  expectPickMatches(*p->op, pick, {0, 1});
  for (size_t j = 0; j < pick.size(); ++j)
    EXPECT_EQ(pick[j], static_cast<int64_t>(j)); // the same register order
}

TEST(DataMovement, WgmmaAccumulatorsOfDifferentWidthShareRows) {
  // The row vector of a 64-wide wgmma accumulator, seen as the row vector of
  // a 128-wide one: the ThreadMaps agree (instr does not enter them).
  const char *n64 = "mma<version = 3, warps = [8, 1], instr = [64, 64]>";
  const char *n128 = "mma<version = 3, warps = [8, 1], instr = [64, 128]>";
  auto p = parse(fmt::format("  %s = splat %x : tensor<128xi32, slice<dim = 1, parent = {0}>>\n"
                             "  %c = convert_layout %s : tensor<128xi32, slice<dim = 1, parent = "
                             "{1}>>\n",
                             n64, n128),
                 Opcode::ConvertLayout);
  ASSERT_TRUE(p->op);
  std::vector<int64_t> pick;
  ASSERT_TRUE(convertIsLocal(*p->op, &pick));
  expectPickMatches(*p->op, pick, {0});
}

TEST(DataMovement, ConversionsThatMoveElementsAreNotLocal) {
  // An accumulator split over 2 warps along N cannot be read as an A
  // operand (each warp needs every column of its rows).
  const char *acc = "mma<version = 2, warps = [2, 2], instr = [16, 8]>";
  auto p = parse(fmt::format("  %s = splat %x : tensor<64x64xi16, {0}>\n"
                             "  %c = convert_layout %s : tensor<64x64xi16, dot_operand<op_idx = "
                             "0, parent = {0}, k_width = 2>>\n",
                             acc),
                 Opcode::ConvertLayout);
  ASSERT_TRUE(p->op);
  EXPECT_FALSE(convertIsLocal(*p->op));
  // Rows to columns.
  auto q = parse(fmt::format("  %s = splat %x : tensor<32x32xi32, {0}>\n"
                             "  %c = convert_layout %s : tensor<32x32xi32, {1}>\n",
                             kRow, kCol),
                 Opcode::ConvertLayout);
  ASSERT_TRUE(q->op);
  EXPECT_FALSE(convertIsLocal(*q->op));
}

TEST(DataMovement, ScanPaths) {
  // 1024 i32 over 128 threads, 4 each: split over lanes and warps, no copies
  // -> parallel; 2 tile repetitions x 4 warps x 1 line of partials.
  auto p =
      parse(fmt::format("  %s = splat %x : tensor<1024xi32, {0}>\n"
                        "  %c = scan %s {{axis = 0, kind = \"cumsum\"}} : tensor<1024xi32, {0}>\n",
                        k1D),
            Opcode::Scan);
  ASSERT_TRUE(p->op);
  EXPECT_FALSE(scanIsInThread(*p->op));
  EXPECT_TRUE(scanIsParallel(*p->op));
  EXPECT_EQ(parallelScanSlots(*p->op), 8);
  EXPECT_EQ(movementScratchBytes(*p->op), 32);

  // 64 elements on 128 threads: copies along the axis -> the serial path,
  // every element and a spare.
  auto q =
      parse(fmt::format("  %s = splat %x : tensor<64xi32, {0}>\n"
                        "  %c = scan %s {{axis = 0, kind = \"cumprod\"}} : tensor<64xi32, {0}>\n",
                        k1DOne),
            Opcode::Scan);
  ASSERT_TRUE(q->op);
  EXPECT_FALSE(scanIsParallel(*q->op));
  EXPECT_EQ(movementScratchBytes(*q->op), (64 + 1) * 4 + 12);

  // Rows of 4 held by one thread: in registers, no scratch.
  auto r = parse("  %s = splat %x : tensor<128x4xi32, blocked<size = [1, 4], threads = [32, 1], "
                 "warps = [4, 1], order = [1, 0]>>\n"
                 "  %c = scan %s {axis = 1, kind = \"cumsum\", reverse = true} : tensor<128x4xi32, "
                 "blocked<size = [1, 4], threads = [32, 1], warps = [4, 1], order = [1, 0]>>\n",
                 Opcode::Scan);
  ASSERT_TRUE(r->op);
  EXPECT_TRUE(scanIsInThread(*r->op));
  EXPECT_EQ(movementScratchBytes(*r->op), 0);
}

TEST(DataMovement, AtomicsShareTheOldValueOnlyWithCopies) {
  auto shared = [](int64_t n, const char *layout) {
    auto p =
        parse(fmt::format("  %p = splat %x : tensor<{0}xptr<i32>, {1}>\n"
                          "  %v = splat %x : tensor<{0}xptr<i32>, {1}>\n"
                          "  %w = ptrtoint %v : tensor<{0}xi32, {1}>\n"
                          "  %o = atomic_rmw %p, %w {{kind = \"add\"}} : tensor<{0}xi32, {1}>\n"
                          "  store %p, %o\n",
                          n, layout),
              Opcode::AtomicRMW);
    EXPECT_TRUE(p->op);
    return p->op ? std::make_pair(atomicSharesResult(*p->op), movementScratchBytes(*p->op))
                 : std::make_pair(false, int64_t(-1));
  };
  // 512 elements, one per register: no copies.
  EXPECT_EQ(shared(512, k1DOne), std::make_pair(false, int64_t(0)));
  // 64 elements on 128 threads: copies take the owner's old value.
  EXPECT_EQ(shared(64, k1DOne), std::make_pair(true, int64_t((64 + 1) * 4 + 12)));
}

} // namespace
} // namespace tk
