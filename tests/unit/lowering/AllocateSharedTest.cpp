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

} // namespace
} // namespace tk
