// --allocate-shared: one shared-memory array per kernel, packed by liveness.
//
// Two kinds of users of shared memory get space in it:
//  - scratch of an op (a reduction whose axis spans warps, a layout
//    conversion; SharedMemory.h sizes them), live only while the op runs;
//  - a local_alloc buffer, live from the alloc to its last use. A use inside
//    a loop that the alloc is outside of keeps the buffer live to the end of
//    that loop (the next iteration uses it again); a buffer passed to control
//    flow (yielded, carried) stays live to the end of the function. A
//    cp.async ring lives to the `async_wait {pending = 0}` after its loop
//    (ringEnd), so an epilogue's scratch after the loop reuses its bytes.
// Ops are numbered in program order (a region op before, and spanning, its
// regions), so a live range is an interval of numbers. In program order each
// item takes the lowest 16-byte aligned offset where it overlaps no placed
// item whose live range intersects its own (first fit).
//
// One exception trades bytes for barriers: small scratch (up to 1 KiB, a
// reduction's partials, 4 KiB in all) gets bytes of its own in a pool at the
// bottom, and the packing starts above the pool. Two reductions in a row then
// touch different bytes and --insert-barriers puts nothing between them (in a
// softmax loop: 2 barriers per row instead of 4).
//
//   %a = reduce %x {axis = 0, kind = "sum"}   : fp32   16 bytes (pool)        -> offset 0
//   %b = reduce %y {axis = 0, kind = "max"}   : fp32   16 bytes (pool)        -> offset 16
//   %buf = local_alloc %z : 4096 bytes, live [6, 9]                           -> offset 32
//   %c = convert_layout %w : 2048 bytes, live [7, 7], overlaps %buf           -> offset 4128
//   %d = convert_layout %v : 2048 bytes, live [11, 11], after %buf's last use -> offset 32
//   func attributes {shared_bytes = 6176}
//
// The pass records `scratch_offset` on each op and `shared_bytes` on the
// function; the size limit depends on the GPU and is checked by the codegen.
#include "ir/Layout.h"
#include "lowering/DataMovement.h"
#include "lowering/Pass.h"
#include "lowering/SharedMemory.h"

#include <algorithm>
#include <limits>
#include <map>

namespace tk {

int64_t sharedElementBytes(Type *t) {
  Type *e = t->elementType();
  return e->isPointer() ? 8 : dtypeBytes(e->dtype());
}

int64_t functionNumWarps(Function &fn) { return fn.attrs().getInt("num_warps").value_or(4); }

namespace {

int64_t alignTo16(int64_t n) { return (n + 15) / 16 * 16; }

// Scratch up to this size (one reduction's partials: result elements x warps)
// is not shared with other ops, up to the pool's size in all: a few hundred
// bytes more save the barrier between consecutive reductions.
constexpr int64_t kPrivateScratchBytes = 1024;
constexpr int64_t kPrivatePoolBytes = 4096;

const LayoutAttr *distributedLayout(Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  if (!t || !t->layout() || isa<SharedLayout>(t->layout()))
    return nullptr;
  return t->layout();
}

} // namespace

int64_t reduceWarpsAlongAxis(const Operation &reduce) {
  Value *in = reduce.operand(0);
  const LayoutAttr *layout = distributedLayout(in);
  if (!layout)
    return 0;
  ThreadMap map(layout, in->type()->shape());
  const ThreadMap::Dim &d = map.dim(static_cast<unsigned>(*reduce.attrs().getInt("axis")));
  return std::clamp<int64_t>(d.extent / (d.size * d.threads), 1, d.warps);
}

std::vector<int64_t> reduceScratchParts(const Operation &reduce, int64_t &total) {
  total = 0;
  std::vector<int64_t> parts;
  int64_t warps = reduceWarpsAlongAxis(reduce);
  if (warps <= 1)
    return parts;
  int64_t slots = reduce.result()->type()->numElements() * warps;
  std::vector<int64_t> elemBytes;
  for (Value *v : reduce.operands())
    elemBytes.push_back(sharedElementBytes(v->type()));
  std::optional<std::string> kind = reduce.attrs().getString("kind");
  if (kind && kind->starts_with("arg"))
    elemBytes.push_back(4); // the index travels with the value
  for (int64_t bytes : elemBytes) {
    parts.push_back(total);
    total += alignTo16(slots * bytes);
  }
  return parts;
}

int64_t convertRowPadding(const Operation &op) {
  const std::vector<int64_t> &shape = op.result()->type()->shape();
  if (shape.size() < 2)
    return 0;
  int64_t elemBytes = sharedElementBytes(op.result()->type());
  int64_t rowBytes = shape.back() * elemBytes;
  // Rows of an even number of 4-byte words put one column of consecutive
  // rows in a few banks: a 64 x 64 fp32 tile read down its columns (a
  // transpose) hits one bank 32 times. One word more per row sends rows r
  // and r + 1 to neighbouring banks.
  if (rowBytes < 8 || rowBytes % 8 != 0)
    return 0;
  return std::max<int64_t>(1, 4 / elemBytes);
}

int64_t scratchBytes(const Operation &op, int64_t numWarps) {
  (void)numWarps; // the layouts say how many warps take part
  if (op.is(Opcode::ConvertLayout)) {
    const LayoutAttr *from = distributedLayout(op.operand(0)), *to = distributedLayout(op.result());
    if (!from || !to || from == to)
      return 0;
    const std::vector<int64_t> &shape = op.result()->type()->shape();
    int64_t rows = op.result()->type()->numElements() / shape.back();
    return rows * (shape.back() + convertRowPadding(op)) * sharedElementBytes(op.result()->type());
  }
  if (op.is(Opcode::Reduce)) {
    int64_t total = 0;
    reduceScratchParts(op, total);
    return total;
  }
  // The exchanges of the other codegen families (their files lay the scratch
  // out; the sizes live here so the allocation needs no LLVM):
  // reshape/trans, scans and the copies of an atomic's old value, only when
  // they move data between threads (DataMovement.h);
  if (int64_t bytes = movementScratchBytes(op))
    return bytes;
  // the wait after a loop of wgmma_native dots reorders their rows;
  if (op.is(Opcode::AsyncWait))
    return op.attrs().getInt("wgmma_native_bytes").value_or(0);
  // a dot stages both operands (codegen/DotOperands.cpp), except a stage of a cp.async
  // ring (ring_view), which it reads in place.
  if (op.is(Opcode::Dot)) {
    int64_t elements = 0;
    for (unsigned i = 0; i < 2; ++i) {
      Operation *def = op.operand(i)->definingOp();
      if (!def || !def->is(Opcode::RingView))
        elements += op.operand(i)->type()->numElements();
    }
    // wgmma (an mma version 3 result) reads its staging at a 1024-byte
    // aligned address (the swizzle atom), which the lowering rounds up to.
    int64_t pad = elements && isWgmmaLayout(op.result()->type()) ? 1024 : 0;
    return elements * sharedElementBytes(op.operand(0)->type()) + pad;
  }
  return 0;
}

int64_t wgmmaNativeRowWords(int64_t n) { return n + 8; }

int64_t wgmmaNativeScratchBytes(const Type *acc) {
  return acc->shape()[0] * wgmmaNativeRowWords(acc->shape()[1]) * 4;
}

int64_t bufferBytes(const Operation &alloc) {
  Type *t = alloc.result()->type();
  return t->numElements() * sharedElementBytes(t);
}

namespace {

struct Item {
  Operation *op;
  int64_t size, start, end;
  int64_t offset = 0;
  int64_t align = 16; // a buffer's `align` attribute (wgmma rings: 1024)
};

bool escapes(const Operation *user) {
  return user->hasTrait(OpTrait::Terminator) || user->is(Opcode::For) || user->is(Opcode::While) ||
         user->is(Opcode::If) || user->is(Opcode::Call);
}

// A cp.async ring (--pipeline): a buffer that async_copy writes.
bool isRing(const Operation &alloc) {
  const std::vector<Operation *> &users = alloc.result()->users();
  return std::any_of(users.begin(), users.end(),
                     [](const Operation *u) { return u->is(Opcode::AsyncCopy); });
}

// A ring's bytes are free once no copy into them is in flight and every
// thread has read them: at the `async_wait {pending = 0}` (wait_group 0,
// then bar.sync) that --pipeline puts after the loop, in the ring's own block
// (so it runs whenever the loop did). That wait is also the barrier between
// the ring's last reads and the first writes of scratch placed over it.
// Without one, copies (even masked-off ones, which write zeros) may still
// land later: the ring then stays live to the end of the function.
int64_t ringEnd(const Operation &alloc, int64_t lastUse, const std::vector<Operation *> &order,
                const std::map<const Operation *, int64_t> &first) {
  for (size_t i = static_cast<size_t>(lastUse) + 1; i < order.size(); ++i) {
    const Operation *op = order[i];
    if (op->is(Opcode::AsyncWait) && op->parentBlock() == alloc.parentBlock() &&
        op->attrs().getInt("pending").value_or(-1) == 0)
      return first.at(op);
  }
  return std::numeric_limits<int64_t>::max();
}

} // namespace

int64_t allocateShared(Function &fn) {
  int64_t numWarps = functionNumWarps(fn);
  // Program-order numbers: first[op] is the op's, last[op] the largest in its
  // regions (its own when it has none).
  std::map<const Operation *, int64_t> first, last;
  std::vector<Operation *> order;
  fn.walk([&](Operation *op) {
    first[op] = static_cast<int64_t>(order.size());
    order.push_back(op);
  });
  for (size_t i = order.size(); i-- > 0;) {
    Operation *op = order[i];
    int64_t end = first[op];
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (unsigned b = 0; b < op->region(r).numBlocks(); ++b)
        for (Operation &inner : op->region(r).block(b))
          end = std::max(end, last[&inner]);
    last[op] = end;
  }

  std::vector<Item> items;
  for (Operation *op : order) {
    op->attrs().erase("scratch_offset");
    if (op->is(Opcode::LocalAlloc)) {
      int64_t end = first[op];
      Operation *home = op->parentOp(); // null at the function's top level
      for (Operation *user : op->result()->users()) {
        if (escapes(user)) {
          end = std::numeric_limits<int64_t>::max();
          break;
        }
        int64_t useEnd = last[user];
        for (Operation *p = user->parentOp(); p && p != home; p = p->parentOp())
          if (p->is(Opcode::For) || p->is(Opcode::While))
            useEnd = std::max(useEnd, last[p]);
        end = std::max(end, useEnd);
      }
      if (end != std::numeric_limits<int64_t>::max() && isRing(*op))
        end = ringEnd(*op, end, order, first);
      items.push_back({op, bufferBytes(*op), first[op], end, 0,
                       std::max<int64_t>(16, op->attrs().getInt("align").value_or(16))});
      continue;
    }
    if (int64_t bytes = scratchBytes(*op, numWarps))
      items.push_back({op, bytes, first[op], last[op]});
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

std::vector<std::vector<SharedAccess>> sharedAccesses(Operation &op, int64_t numWarps) {
  std::optional<int64_t> offset = op.attrs().getInt("scratch_offset");
  auto range = [&](int64_t base, int64_t bytes, bool write) {
    return SharedAccess{base, base + bytes, write};
  };
  switch (op.opcode()) {
  case Opcode::Reduce:
  case Opcode::ConvertLayout:
  case Opcode::Reshape:
  case Opcode::Trans:
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
  case Opcode::Scan:
  case Opcode::Dot: {
    int64_t bytes = scratchBytes(op, numWarps);
    if (!offset || !bytes)
      return {};
    return {{range(*offset, bytes, true)}, {range(*offset, bytes, false)}};
  }
  case Opcode::LocalAlloc:
    if (!offset || !op.numOperands())
      return {};
    return {{range(*offset, bufferBytes(op), true)}};
  case Opcode::LocalLoad:
  case Opcode::LocalStore: {
    // A buffer that reached here through control flow could be any one:
    // the access then covers all of shared memory.
    Operation *alloc = op.operand(0)->definingOp();
    std::optional<int64_t> at =
        alloc ? alloc->attrs().getInt("scratch_offset") : std::optional<int64_t>();
    bool write = op.is(Opcode::LocalStore);
    if (!at)
      return {{range(0, std::numeric_limits<int64_t>::max(), write)}};
    return {{range(*at, bufferBytes(*alloc), write)}};
  }
  default:
    return {};
  }
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
