// --allocate-shared (AllocateShared.h): the packing. The live ranges come
// from analysis/Liveness.h, the sizes from analysis/SharedMemory.h.
#include "lowering/AllocateShared.h"
#include "analysis/Liveness.h"
#include "analysis/SharedMemory.h"
#include "lowering/Pass.h"

#include <algorithm>

namespace tk {
namespace {

int64_t alignTo16(int64_t n) { return (n + 15) / 16 * 16; }

// Scratch up to this size (one reduction's partials: result elements x warps)
// is not shared with other ops, up to the pool's size in all: a few hundred
// bytes more save the barrier between consecutive reductions.
constexpr int64_t kPrivateScratchBytes = 1024;
constexpr int64_t kPrivatePoolBytes = 4096;

struct Item {
  Operation *op;
  int64_t size, start, end;
  int64_t offset = 0;
  int64_t align = 16; // a buffer's `align` attribute (wgmma rings: 1024)
};

} // namespace

int64_t allocateShared(Function &fn) {
  int64_t numWarps = functionNumWarps(fn);
  Liveness live(fn);
  std::vector<Item> items;
  for (Operation *op : live.order()) {
    op->attrs().erase("scratch_offset");
    if (op->is(Opcode::LocalAlloc)) {
      items.push_back({op, bufferBytes(*op), live.first(*op), live.bufferEnd(*op), 0,
                       std::max<int64_t>(16, op->attrs().getInt("align").value_or(16))});
      continue;
    }
    if (int64_t bytes = scratchBytes(*op, numWarps))
      items.push_back({op, bytes, live.first(*op), live.last(*op)});
  }

  // Small scratch (a reduction's partials) gets bytes of its own at the
  // bottom, so consecutive reductions never share bytes and need no barrier
  // between them (--insert-barriers); the rest is packed above that pool.
  int64_t pool = 0;
  std::vector<bool> pooled(items.size(), false);
  for (size_t i = 0; i < items.size(); ++i) {
    Item &it = items[i];
    if (it.op->is(Opcode::LocalAlloc) || it.size > kPrivateScratchBytes ||
        pool + alignTo16(it.size) > kPrivatePoolBytes)
      continue;
    pooled[i] = true;
    it.offset = pool;
    it.op->setAttr("scratch_offset", pool);
    pool += alignTo16(it.size);
  }

  // First fit in program order (items are sorted by start already).
  int64_t total = pool;
  for (size_t i = 0; i < items.size(); ++i) {
    if (pooled[i])
      continue;
    Item &it = items[i];
    std::vector<std::pair<int64_t, int64_t>> taken; // [offset, offset + size)
    for (size_t j = 0; j < i; ++j)
      if (!pooled[j] && items[j].start <= it.end && it.start <= items[j].end)
        taken.push_back({items[j].offset, items[j].offset + items[j].size});
    std::sort(taken.begin(), taken.end());
    auto up = [&](int64_t n) { return (n + it.align - 1) / it.align * it.align; };
    int64_t offset = up(pool);
    for (auto [b, e] : taken) {
      if (offset + it.size <= b)
        break;
      offset = std::max(offset, up(e));
    }
    if (it.align > 16)
      fn.attrs().set("shared_align",
                     std::max(it.align, fn.attrs().getInt("shared_align").value_or(16)));
    it.offset = offset;
    it.op->setAttr("scratch_offset", offset);
    total = std::max(total, offset + it.size);
  }
  fn.attrs().set("shared_bytes", total);
  return total;
}

namespace {

class AllocateSharedPass : public Pass {
public:
  AllocateSharedPass() : Pass(PassId::AllocateShared) {}
  bool run(Module &m, DiagnosticEngine &) override {
    for (auto &fn : m.functions())
      allocateShared(*fn);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createAllocateSharedPass() { return std::make_unique<AllocateSharedPass>(); }

} // namespace tk
