// Shared-memory sizes and accesses (see SharedMemory.h): what --allocate-shared
// reserves, what --insert-barriers orders, what the code generation lays out.
#include "analysis/SharedMemory.h"
#include "analysis/DataMovement.h"
#include "ir/Layout.h"

#include <algorithm>
#include <limits>

namespace tk {

int64_t sharedElementBytes(Type *t) {
  Type *e = t->elementType();
  return e->isPointer() ? 8 : dtypeBytes(e->dtype());
}

int64_t functionNumWarps(Function &fn) { return fn.attrs().getInt("num_warps").value_or(4); }

namespace {

int64_t alignTo16(int64_t n) { return (n + 15) / 16 * 16; }

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

int64_t convertRounds(const Operation &op) {
  int64_t rounds = op.attrs().getInt("rounds").value_or(1);
  return convertRoundAxis(op, rounds) ? rounds : 1;
}

std::optional<unsigned> convertRoundAxis(const Operation &op, int64_t rounds) {
  const LayoutAttr *from = distributedLayout(op.operand(0)), *to = distributedLayout(op.result());
  if (rounds <= 1 || !from || !to)
    return std::nullopt;
  const std::vector<int64_t> &shape = op.result()->type()->shape();
  ThreadMap in(from, shape), out(to, shape);
  // A register's coordinate along d is its register offset plus a thread
  // offset below the tile (ThreadMap), so with slices of whole tiles the
  // register offset alone says which slice it is in.
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (shape[d] % rounds != 0)
      continue;
    int64_t slice = shape[d] / rounds;
    if (slice % in.dim(d).tile() == 0 && slice % out.dim(d).tile() == 0)
      return d;
  }
  return std::nullopt;
}

std::vector<int64_t> convertSliceShape(const Operation &op) {
  std::vector<int64_t> shape = op.result()->type()->shape();
  int64_t rounds = convertRounds(op);
  if (std::optional<unsigned> axis = convertRoundAxis(op, rounds))
    shape[*axis] /= rounds;
  return shape;
}

namespace {

int64_t rowPadding(const std::vector<int64_t> &shape, int64_t elemBytes) {
  if (shape.size() < 2)
    return 0;
  int64_t rowBytes = shape.back() * elemBytes;
  // Rows of an even number of 4-byte words put one column of consecutive
  // rows in a few banks: a 64 x 64 fp32 tile read down its columns (a
  // transpose) hits one bank 32 times. One word more per row sends rows r
  // and r + 1 to neighbouring banks.
  if (rowBytes < 8 || rowBytes % 8 != 0)
    return 0;
  return std::max<int64_t>(1, 4 / elemBytes);
}

// The scratch of a conversion staging slices of `shape`, rows padded.
int64_t stagingBytes(const std::vector<int64_t> &shape, int64_t elemBytes) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    rows *= shape[d];
  return rows * (shape.back() + rowPadding(shape, elemBytes)) * elemBytes;
}

} // namespace

int64_t convertRowPadding(const Operation &op) {
  return rowPadding(convertSliceShape(op), sharedElementBytes(op.result()->type()));
}

int64_t convertRoundsWithin(const Operation &op, int64_t budget) {
  int64_t elemBytes = sharedElementBytes(op.result()->type());
  const std::vector<int64_t> &shape = op.result()->type()->shape();
  int64_t most = 1;
  for (int64_t e : shape)
    most = std::max(most, e);
  for (int64_t rounds = 2; rounds <= most; rounds *= 2) {
    std::optional<unsigned> axis = convertRoundAxis(op, rounds);
    if (!axis)
      continue;
    std::vector<int64_t> slice = shape;
    slice[*axis] /= rounds;
    if (stagingBytes(slice, elemBytes) <= budget)
      return rounds;
  }
  return 0;
}

int64_t scratchBytes(const Operation &op, int64_t numWarps) {
  (void)numWarps; // the layouts say how many warps take part
  if (op.is(Opcode::ConvertLayout)) {
    const LayoutAttr *from = distributedLayout(op.operand(0)), *to = distributedLayout(op.result());
    if (!from || !to || from == to || convertIsLocal(op))
      return 0;
    return stagingBytes(convertSliceShape(op), sharedElementBytes(op.result()->type()));
  }
  if (op.is(Opcode::Reduce)) {
    int64_t total = 0;
    reduceScratchParts(op, total);
    return total;
  }
  // The exchanges of the other codegen families (their files lay the scratch
  // out; the sizes live here so the allocation needs no LLVM):
  // reshape/trans, gather, scans and the copies of an atomic's old value,
  // only when they move data between threads (DataMovement.h);
  if (int64_t bytes = movementScratchBytes(op))
    return bytes;
  // a TMA load's mbarrier (8 bytes at the start) and its box at the next
  // 128-byte aligned address (codegen/TmaToLLVM.cpp);
  // a TMA store's box the same way (its first 8 bytes unused);
  if (op.is(Opcode::TmaLoad) || op.is(Opcode::TmaStore)) {
    Type *box = op.is(Opcode::TmaLoad) ? op.result()->type() : op.operand(1)->type();
    return kTmaBoxAlign + box->numElements() * sharedElementBytes(box);
  }
  // the wait after a loop of wgmma_native dots reorders their rows;
  if (op.is(Opcode::AsyncWait))
    return op.attrs().getInt("wgmma_native_bytes").value_or(0);
  // a dot stages both operands (codegen/DotOperands.cpp), except a stage of a cp.async
  // ring (ring_view) and an operand in registers (dot_operand).
  if (op.is(Opcode::Dot)) {
    int64_t elements = 0;
    for (unsigned i = 0; i < 2; ++i) {
      // A ring stage is read in place, an operand in the dot_operand layout
      // from its registers.
      Operation *def = op.operand(i)->definingOp();
      auto *t = cast<TensorType>(op.operand(i)->type());
      if ((!def || !def->is(Opcode::RingView)) && !isa<DotOperandLayout>(t->layout()))
        elements += t->numElements();
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
  case Opcode::Gather:
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
  case Opcode::Scan:
  case Opcode::TmaLoad:
  case Opcode::TmaStore:
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

} // namespace tk
