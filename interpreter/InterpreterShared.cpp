// The interpreter's GPU-only ops: what the layout and shared-memory passes
// add to the IR (docs/codegen/), so that `tkc-opt --allocate-shared` or
// `tkc --emit=ir-gpu` output runs as the IR it came from does. Layouts and
// shared-memory offsets only say how a GPU distributes the work; a program
// here is one thread of control, so:
//
//   convert_layout x             -> x (the same elements)
//   local_alloc [init]           -> a buffer of its shape: init's elements, or zeros
//   local_store buf, v           -> buf's elements become v's (every alias sees them)
//   local_load buf               -> a copy of buf's elements
//   async_copy ring, i, ptr [,m] -> stage i mod S of ring <- the tile at ptr
//                                   (masked-off elements 0), with a load's checks
//   async_wait                   -> nothing (the copy above is already done)
//   ring_view ring, i            -> a copy of stage i mod S
//   barrier                      -> nothing (handled in Interpreter.cpp)
//
// For example, a pipelined matmul loop (--pipeline's cp.async ring of S = 3)
// copies the tiles of iterations 0 and 1 into stages 0 and 1 before the
// loop, and iteration k reads stage k mod 3 with ring_view while it copies
// the tile of k + 2 into stage (k + 2) mod 3: the dot sees exactly the tiles
// the unpipelined loop loads.
//
// A buffer is a value whose storage the ops above share and mutate; a
// local_load or ring_view result is a copy, so a later store does not
// change it (as a register copy on the GPU would not change).
#include "interpreter/InterpreterImpl.h"

#include <fmt/format.h>

#include <cstring>

namespace tk::interp {

namespace {

std::byte *bytesOf(const RtValue &v) { return v.storage.get(); }

int64_t scalarIndex(const RtValue &v) { return readInt(v, 0, isSigned(v.type->dtype())); }

// The stage `index` of `ring` (shape [S, ...]) as a byte offset; false at
// `op` for a ring of no stages.
bool stageOffset(ProgramRunner &r, Operation &op, const RtValue &ring, const RtValue &index,
                 int64_t &offset, int64_t &stageElems) {
  const std::vector<int64_t> &shape = ring.type->shape();
  if (shape.empty() || shape[0] <= 0)
    return r.fail(op, fmt::format("the ring has shape {}; it needs a leading stage dimension",
                                  shapeStr(shape)));
  int64_t stages = shape[0];
  stageElems = ring.size / stages;
  int64_t stage = scalarIndex(index) % stages;
  if (stage < 0)
    stage += stages;
  offset = stage * stageElems * int64_t(elementBytes(ring.type));
  return true;
}

} // namespace

bool execShared(ProgramRunner &r, Operation &op) {
  switch (op.opcode()) {
  case Opcode::ConvertLayout:
    r.setResult(op, 0, retype(r.operand(op, 0), op.result()->type()));
    return true;
  case Opcode::LocalAlloc: {
    RtValue buf = makeValue(op.result()->type());
    int64_t bytes = buf.size * int64_t(elementBytes(buf.type));
    if (op.numOperands() == 1) {
      const RtValue &init = r.operand(op, 0);
      if (init.size != buf.size)
        return r.fail(
            op, fmt::format("local_alloc of {} elements initialised with {}", buf.size, init.size));
      std::memcpy(bytesOf(buf), bytesOf(init), size_t(bytes));
    } else {
      std::memset(bytesOf(buf), 0, size_t(bytes));
    }
    r.setResult(op, 0, std::move(buf));
    return true;
  }
  case Opcode::LocalStore: {
    const RtValue &buf = r.operand(op, 0), &v = r.operand(op, 1);
    if (v.size != buf.size)
      return r.fail(
          op, fmt::format("local_store of {} elements into a buffer of {}", v.size, buf.size));
    std::memcpy(bytesOf(buf), bytesOf(v), size_t(v.size) * elementBytes(v.type));
    return true;
  }
  case Opcode::LocalLoad: {
    const RtValue &buf = r.operand(op, 0);
    Type *type = op.result()->type();
    RtValue out = makeValue(type);
    if (out.size != buf.size)
      return r.fail(
          op, fmt::format("local_load of {} elements from a buffer of {}", out.size, buf.size));
    std::memcpy(bytesOf(out), bytesOf(buf), size_t(out.size) * elementBytes(type));
    r.setResult(op, 0, std::move(out));
    return true;
  }
  case Opcode::AsyncCopy: {
    const RtValue &ring = r.operand(op, 0), &ptrs = r.operand(op, 2);
    const RtValue *mask = op.numOperands() > 3 ? &r.operand(op, 3) : nullptr;
    int64_t offset = 0, stageElems = 0;
    if (!stageOffset(r, op, ring, r.operand(op, 1), offset, stageElems))
      return false;
    if (ptrs.size != stageElems)
      return r.fail(op, fmt::format("async_copy of a tile of {} elements into ring stages of {}",
                                    ptrs.size, stageElems));
    return loadElements(r, op, ptrs, mask ? mask->data<uint8_t>() : nullptr, nullptr,
                        bytesOf(ring) + offset, stageElems, elementBytes(ring.type));
  }
  case Opcode::AsyncWait:
    return true;
  case Opcode::RingView: {
    const RtValue &ring = r.operand(op, 0);
    int64_t offset = 0, stageElems = 0;
    if (!stageOffset(r, op, ring, r.operand(op, 1), offset, stageElems))
      return false;
    Type *type = op.result()->type();
    RtValue out = makeValue(type);
    if (out.size != stageElems)
      return r.fail(
          op, fmt::format("ring_view of {} elements from ring stages of {}", out.size, stageElems));
    std::memcpy(bytesOf(out), bytesOf(ring) + offset, size_t(stageElems) * elementBytes(type));
    r.setResult(op, 0, std::move(out));
    return true;
  }
  default:
    return r.fail(op, fmt::format("'{}' is not supported by the interpreter", op.name()));
  }
}

} // namespace tk::interp
