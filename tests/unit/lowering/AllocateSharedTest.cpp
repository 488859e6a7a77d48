// Shared memory: --allocate-shared on random straight-line programs (buffers
// of random sizes and lifetimes, conversions, reductions) never gives two
// things that are live at once overlapping bytes, aligns every offset to 16
// and reports the true total; and the buffer ops go through the whole
// pipeline to PTX (swizzled stores and loads, the inserted barrier).
#include "lowering/AllocateShared.h"
#include "analysis/SharedMemory.h"
#include "ir/Layout.h"
#include "lowering/InsertBarriers.h"
#include "lowering/PTXEmitter.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <random>

namespace tk {
namespace {

constexpr const char *k1D = "blocked<size = [1], threads = [32], warps = [4], order = [0]>";
constexpr const char *k1D4 = "blocked<size = [4], threads = [32], warps = [4], order = [0]>";
constexpr const char *kFlat = "shared<vec = 1, per_phase = 1, max_phase = 1, order = [0]>";

struct Placed {
  int64_t begin, end;  // bytes
  int64_t first, last; // op positions where it is live
};

TEST(AllocateShared, RandomProgramsNeverOverlapLiveBytes) {
  std::mt19937 rng(2026);
  for (int iter = 0; iter < 60; ++iter) {
    // A random program: allocs, loads of live buffers, conversions and
    // reductions of the argument; each buffer's last load ends its life.
    std::string body;
    std::vector<int> live;       // buffer ids
    std::map<int, int64_t> size; // elements of buffer id
    int nextId = 0, numOps = 8 + int(rng() % 24);
    for (int i = 0; i < numOps; ++i) {
      unsigned what = rng() % 4;
      if (what == 0 || live.empty()) {
        int64_t n = int64_t(16) << (rng() % 8);
        size[nextId] = n;
        body += fmt::format("  %b{} = local_alloc : tensor<{}xfp32, {}>\n", nextId, n, kFlat);
        live.push_back(nextId++);
      } else if (what == 1) {
        int id = live[rng() % live.size()];
        body +=
            fmt::format("  %l{} = local_load %b{} : tensor<{}xfp32, {}>\n", i, id, size[id], k1D);
        if (rng() % 2)
          live.erase(std::find(live.begin(), live.end(), id));
      } else if (what == 2) {
        body += fmt::format("  %c{} = convert_layout %arg0 : tensor<512xfp32, {}>\n", i, k1D4);
      } else {
        body += fmt::format("  %r{} = reduce %arg0 {{axis = 0, kind = \"sum\"}} : fp32\n", i);
      }
    }
    test::ParsedIR ir;
    std::string text = fmt::format("func @k(%arg0: tensor<512xfp32, {}>) attributes {{num_warps "
                                   "= 4}} {{\n{}  return\n}}\n",
                                   k1D, body);
    ASSERT_TRUE(ir.parse(text)) << ir.errors();
    ASSERT_TRUE(ir.verify()) << ir.errors();
    Function &fn = *ir.module->functions().front();
    int64_t total = allocateShared(fn);
    EXPECT_EQ(fn.attrs().getInt("shared_bytes"), total);

    // Live ranges recomputed here: an op's scratch at its position, a buffer
    // from its alloc to its last load.
    std::vector<Operation *> ops = fn.body().opsVector();
    std::vector<Placed> placed;
    int64_t maxEnd = 0;
    for (size_t p = 0; p < ops.size(); ++p) {
      Operation *op = ops[p];
      std::optional<int64_t> offset = op->attrs().getInt("scratch_offset");
      int64_t bytes = op->is(Opcode::LocalAlloc) ? bufferBytes(*op) : scratchBytes(*op, 4);
      if (!bytes) {
        EXPECT_FALSE(offset) << op->name() << " has an offset but no scratch";
        continue;
      }
      ASSERT_TRUE(offset) << op->name() << " needs " << bytes << " bytes but has no offset";
      EXPECT_EQ(*offset % 16, 0);
      int64_t last = int64_t(p);
      if (op->is(Opcode::LocalAlloc))
        for (Operation *user : op->result()->users())
          for (size_t q = p; q < ops.size(); ++q)
            if (ops[q] == user)
              last = std::max(last, int64_t(q));
      placed.push_back({*offset, *offset + bytes, int64_t(p), last});
      maxEnd = std::max(maxEnd, *offset + bytes);
    }
    EXPECT_EQ(total, maxEnd);
    for (size_t a = 0; a < placed.size(); ++a)
      for (size_t b = a + 1; b < placed.size(); ++b) {
        const Placed &x = placed[a], &y = placed[b];
        bool together = x.first <= y.last && y.first <= x.last;
        bool overlap = x.begin < y.end && y.begin < x.end;
        EXPECT_FALSE(together && overlap) << "live at once but overlapping: [" << x.begin << ", "
                                          << x.end << ") and [" << y.begin << ", " << y.end << ")\n"
                                          << text;
      }
  }
}

TEST(AllocateShared, BufferOpsLowerToSwizzledSharedAccesses) {
  // A value staged through a swizzled buffer, read back and summed (so the
  // loads are used) to one stored scalar.
  test::ParsedIR ir;
  const char *blocked = "blocked<size = [1, 4], threads = [4, 8], warps = [4, 1], order = [1, 0]>";
  std::string text = fmt::format(
      "func @k(%arg0: fp32, %arg1: ptr<fp32>) attributes {{num_warps = 4}} {{\n"
      "  %0 = splat %arg0 : tensor<32x64xfp32, {0}>\n"
      "  %1 = local_alloc %0 : tensor<32x64xfp32, shared<vec = 4, per_phase = 1, max_phase = 8, "
      "order = [1, 0]>>\n"
      "  %2 = local_load %1 : tensor<32x64xfp32, {0}>\n"
      "  %3 = reduce %2 {{axis = 1, kind = \"sum\"}} : tensor<32xfp32, slice<dim = 1, parent = "
      "{0}>>\n"
      "  %4 = reduce %3 {{axis = 0, kind = \"sum\"}} : fp32\n"
      "  store %arg1, %4\n"
      "  return\n"
      "}}\n",
      blocked);
  ASSERT_TRUE(ir.parse(text)) << ir.errors();
  ASSERT_TRUE(ir.verify()) << ir.errors();
  Function &fn = *ir.module->functions().front();
  // The second reduction's 16 bytes of partials in the pool, the buffer
  // above.
  EXPECT_EQ(allocateShared(fn), 16 + 32 * 64 * 4);
  std::vector<Operation *> ops = fn.body().opsVector();
  EXPECT_EQ(ops[1]->attrs().getInt("scratch_offset"), 16);
  EXPECT_EQ(ops[4]->attrs().getInt("scratch_offset"), 0);
  // The load reads what other threads stored: one barrier between; the
  // reduction writes other bytes: none before it.
  EXPECT_EQ(insertBarriers(fn), 1);
  EXPECT_TRUE(fn.body().opsVector()[2]->is(Opcode::Barrier));
  std::string llvm;
  TargetOptions options;
  bool ok = emitLLVMIR(*ir.module, options, llvm, ir.diag);
  if (!ok && ir.errors().find("built without LLVM") != std::string::npos)
    GTEST_SKIP() << "built without LLVM: " << ir.errors();
  ASSERT_TRUE(ok) << ir.errors();
  // The swizzle: the column group XOR the row's phase.
  EXPECT_NE(llvm.find("xor i32"), std::string::npos) << llvm;
  EXPECT_NE(llvm.find("load float, ptr addrspace(3)"), std::string::npos) << llvm;
  EXPECT_NE(llvm.find("llvm.nvvm.barrier0"), std::string::npos) << llvm;
  EXPECT_NE(llvm.find("addrspace(3) global [8208 x i8]"), std::string::npos) << llvm;
}

// A conversion too large for the budget goes in rounds: simulated thread by
// thread as the codegen stages it (each register in the round its register
// offset names, at its coordinate less the round's start along the round
// axis, rows padded), every element of every result register must be the
// operand's element at its coordinate, read after its round's writes, and
// each round's slots stay inside the scratch the allocation reserved.
struct RoundCase {
  std::string shape, elem, from, to;
  int64_t maxShared, rounds; // the function's limit, the rounds expected
};

void expectRoundsStageEveryElement(const RoundCase &c) {
  test::ParsedIR ir;
  std::string text = fmt::format("func @k(%x: tensor<{0}x{1}, {2}>) attributes {{num_warps = "
                                 "32, max_shared_bytes = {4}}} {{\n"
                                 "  %c = convert_layout %x : tensor<{0}x{1}, {3}>\n"
                                 "  return\n"
                                 "}}\n",
                                 c.shape, c.elem, c.from, c.to, c.maxShared);
  ASSERT_TRUE(ir.parse(text)) << ir.errors();
  Function &fn = *ir.module->functions().front();
  int64_t total = allocateShared(fn);
  Operation &op = *fn.body().opsVector()[0];
  ASSERT_TRUE(op.is(Opcode::ConvertLayout));
  EXPECT_EQ(convertRounds(op), c.rounds) << text;
  EXPECT_LE(total, c.maxShared) << text;
  int64_t rounds = convertRounds(op);
  std::optional<unsigned> axis = convertRoundAxis(op, rounds);
  ASSERT_EQ(axis.has_value(), rounds > 1);
  unsigned ax = axis.value_or(0);
  std::vector<int64_t> slice = convertSliceShape(op);
  const std::vector<int64_t> &shape = op.result()->type()->shape();
  int64_t pad = convertRowPadding(op), elemBytes = sharedElementBytes(op.result()->type());
  int64_t slots = scratchBytes(op, 32) / elemBytes;
  ThreadMap in(cast<TensorType>(op.operand(0)->type())->layout(), shape);
  ThreadMap out(cast<TensorType>(op.result()->type())->layout(), shape);
  auto rowMajor = [&](const std::vector<int64_t> &co) {
    int64_t lin = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      lin = lin * shape[d] + co[d];
    return lin;
  };
  auto slot = [&](std::vector<int64_t> co, int64_t round) {
    co[ax] -= round * slice[ax];
    int64_t lin = 0;
    for (size_t d = 0; d < slice.size(); ++d) {
      EXPECT_GE(co[d], 0);
      EXPECT_LT(co[d], slice[d]);
      lin = lin * (slice[d] + (d + 1 == slice.size() ? pad : 0)) + co[d];
    }
    return lin;
  };
  int64_t threads = in.numThreads(), read = 0;
  // Each thread's registers of `map` in `round`, with their coordinates and
  // scratch slots.
  auto eachInRound = [&](const ThreadMap &map, int64_t round, auto &&visit) {
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < map.numRegisters(); ++r) {
        if ((rounds > 1 ? map.registerOffset(r, ax) / slice[ax] : 0) != round)
          continue;
        std::vector<int64_t> co = map.coords(r, t % kWarpSize, t / kWarpSize);
        int64_t at = slot(co, round);
        ASSERT_LT(at, slots);
        visit(rowMajor(co), static_cast<size_t>(at), t, r);
      }
  };
  for (int64_t round = 0; round < rounds; ++round) {
    std::vector<int64_t> scratch(static_cast<size_t>(slots), -1);
    eachInRound(in, round,
                [&](int64_t element, size_t at, int64_t, int64_t) { scratch[at] = element; });
    eachInRound(out, round, [&](int64_t element, size_t at, int64_t t, int64_t r) {
      EXPECT_EQ(scratch[at], element) << "round " << round << " thread " << t << " register " << r;
      ++read;
    });
  }
  EXPECT_EQ(read, threads * out.numRegisters()); // every result register once
}

TEST(AllocateShared, LargeConversionsGoInRoundsThatStageEveryElement) {
  const char *by8 = "blocked<size = [8], threads = [32], warps = [32], order = [0]>";
  const char *by4 = "blocked<size = [4], threads = [32], warps = [32], order = [0]>";
  // A norm backward's row at 65536 columns: 256 KiB of fp32 over sm_90's
  // 227 KiB: 2 rounds of 128 KiB; under a 60 KiB limit 8 of 32 KiB.
  expectRoundsStageEveryElement({"65536", "fp32", by8, by4, 232448, 2});
  expectRoundsStageEveryElement({"65536", "fp32", by4, by8, 60 * 1024, 8});
  // What fits stays whole.
  expectRoundsStageEveryElement({"32768", "fp32", by8, by4, 232448, 1});
  // 2-D, rows 8 apart across warps into columns: sliced along the rows (the
  // padded rows of the slice inside the scratch).
  expectRoundsStageEveryElement(
      {"256x512", "fp32",
       "blocked<size = [1, 4], threads = [1, 32], warps = [32, 1], order = [1, 0]>",
       "blocked<size = [1, 1], threads = [4, 8], warps = [8, 4], order = [1, 0]>", 232448, 4});
}

// A conversion whose layouts leave no slicing of whole tiles keeps one round
// and its size: the codegen reports the kernel over the limit.
TEST(AllocateShared, ConversionWithoutWholeTileSlicesStaysWhole) {
  test::ParsedIR ir;
  ASSERT_TRUE(ir.parse(
      "func @k(%x: tensor<128x256xfp32, blocked<size = [1, 4], threads = [1, 32], warps = [2, 2], "
      "order = [1, 0]>>) attributes {num_warps = 4, max_shared_bytes = 101376} {\n"
      "  %c = convert_layout %x : tensor<128x256xfp32, blocked<size = [4, 1], threads = [32, 1], "
      "warps = [1, 4], order = [0, 1]>>\n"
      "  return\n"
      "}\n"))
      << ir.errors();
  Function &fn = *ir.module->functions().front();
  EXPECT_EQ(allocateShared(fn), 128 * 257 * 4);
  EXPECT_EQ(convertRounds(*fn.body().opsVector()[0]), 1);
}

} // namespace
} // namespace tk
