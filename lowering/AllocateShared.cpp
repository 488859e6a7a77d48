// --allocate-shared (AllocateShared.h): the packing. The live ranges come
// from analysis/Liveness.h, the sizes from analysis/SharedMemory.h.
#include "lowering/AllocateShared.h"
#include "analysis/Liveness.h"
#include "analysis/SharedMemory.h"
#include "lang/Remarks.h"
#include "lowering/Pass.h"
#include "lowering/codegen/TargetOptions.h"

#include <algorithm>
#include <fmt/format.h>

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

// The shared remarks: each buffer with its bytes, offset and the source
// lines it is live over, then the total against the arch's limit.
void remarkShared(RemarkSink &rs, Function &fn, const Liveness &live,
                  const std::vector<Item> &items, int64_t total) {
  if (items.empty())
    return;
  auto line = [&](int64_t at) -> std::string {
    if (at < 0 || at >= static_cast<int64_t>(live.order().size()))
      return "the end of the kernel";
    return fmt::format("line {}", rs.line(live.order()[static_cast<size_t>(at)]->loc()));
  };
  for (const Item &it : items) {
    bool ring = false;
    if (it.op->is(Opcode::LocalAlloc))
      for (Operation *u : it.op->result()->users())
        ring |= u->is(Opcode::AsyncCopy);
    std::string what =
        it.op->is(Opcode::LocalAlloc) ? (ring ? "the cp.async ring of the loop" : "a shared buffer")
        : convertRounds(*it.op) > 1   ? fmt::format("the scratch of {} (the tensor in {} rounds)",
                                                    it.op->name(), convertRounds(*it.op))
                                      : fmt::format("the scratch of {}", it.op->name());
    rs.add(it.op->loc(), "shared", RemarkStatus::Analysis, fn.name(),
           fmt::format("shared memory: {} bytes at offset {} for {}, live from {} to {}", it.size,
                       it.offset, what, line(it.start), line(it.end)))
        .with("bytes", it.size)
        .with("offset", it.offset);
  }
  int64_t limit = fn.attrs().getInt("max_shared_bytes").value_or(maxSharedBytesFor("sm_90"));
  bool over = total > limit;
  rs.add(fn.loc(), "shared", over ? RemarkStatus::Missed : RemarkStatus::Analysis, fn.name(),
         over ? fmt::format("kernel '{}': {} bytes of shared memory per program, over the "
                            "target's {}: fewer stages (num_stages) or smaller tiles",
                            fn.name(), total, limit)
              : fmt::format("kernel '{}': {} bytes of shared memory per program in {} "
                            "buffer{} (the target allows {})",
                            fn.name(), total, items.size(), items.size() == 1 ? "" : "s", limit))
      .with("shared_bytes", total)
      .with("buffers", static_cast<int64_t>(items.size()))
      .with("limit", limit);
}

// A conversion whose whole tensor does not fit beside the buffers live
// while it runs (and the pool) goes through shared memory in rounds
// (SharedMemory.h, convertRounds): the fewest that fit, recorded as `rounds`.
// Conversions that fit keep one round: each round costs two barriers.
void splitLargeConversions(Function &fn, std::vector<Item> &items, int64_t numWarps) {
  int64_t limit = fn.attrs().getInt("max_shared_bytes").value_or(maxSharedBytesFor("sm_90"));
  for (Item &it : items) {
    if (!it.op->is(Opcode::ConvertLayout))
      continue;
    int64_t budget = limit - kPrivatePoolBytes;
    for (const Item &other : items)
      if (other.op->is(Opcode::LocalAlloc) && other.start <= it.end && it.start <= other.end)
        budget -= other.size + other.align - 16;
    if (it.size <= budget)
      continue;
    if (int64_t rounds = convertRoundsWithin(*it.op, budget)) {
      it.op->setAttr("rounds", rounds);
      it.size = scratchBytes(*it.op, numWarps);
    }
  }
}

} // namespace

int64_t allocateShared(Function &fn, RemarkSink *remarks) {
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
    op->attrs().erase("rounds");
    if (int64_t bytes = scratchBytes(*op, numWarps))
      items.push_back({op, bytes, live.first(*op), live.last(*op)});
  }
  splitLargeConversions(fn, items, numWarps);

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
  if (remarks)
    remarkShared(*remarks, fn, live, items, total);
  return total;
}

namespace {

class AllocateSharedPass : public Pass {
public:
  AllocateSharedPass() : Pass(PassId::AllocateShared) {}
  bool run(Module &m, DiagnosticEngine &) override {
    for (auto &fn : m.functions())
      allocateShared(*fn, m.remarks());
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createAllocateSharedPass() { return std::make_unique<AllocateSharedPass>(); }

} // namespace tk
