// reshape and trans -> register renaming when every thread already holds the
// elements its result registers need, else a pass through shared memory;
// gather -> always through shared memory (lowerGather).
//
// Both ops move elements without changing them. reshape keeps the row-major
// order (result element L is operand element L); trans permutes the
// dimensions (result dimension i is operand dimension order[i]). For each
// result register the operand element it needs is known at compile time per
// thread; when that element sits in the same operand register on every
// thread, the result is just those registers:
//
//   %t = trans %x {order = [1, 0]} : tensor<4x4xfp32, L> -> tensor<4x4xfp32, L'>
//   with L' the operand's layout with its dimensions swapped -> no code.
//
// Otherwise every thread writes its operand elements at their row-major slot
// in the shared scratch, a barrier, every thread reads the slots of its
// result elements (operand order): the convert_layout scheme (the barrier
// before the scratch is reused is --insert-barriers' job).
//
// The helpers shared with the atomics and scans live here too: which thread
// owns an element (threads past a dimension smaller than the tile hold
// copies) and the exchange through shared memory.
#include "analysis/DataMovement.h"
#include "lowering/codegen/FunctionLowering.h"

namespace tk {

std::vector<llvm::Value *> FunctionLowering::ownerPredicates(Value *v) {
  if (!v->type()->isTensor()) {
    llvm::IRBuilder<> eb(entry_->getTerminator());
    return {eb.CreateICmpEQ(eb.CreateAdd(eb.CreateMul(warp_, eb.getInt32(warpSize_)), lane_),
                            eb.getInt32(0))};
  }
  ThreadMap map = threadMap(v);
  const LayoutAttr *layout = layoutOf(v);
  std::vector<llvm::Value *> out(static_cast<size_t>(map.numRegisters()), nullptr);
  for (int64_t r = 0; r < map.numRegisters(); ++r)
    for (unsigned d = 0; d < map.rank(); ++d) {
      const ThreadMap::Dim &dim = map.dim(d);
      if (dim.tile() <= dim.extent)
        continue; // every coordinate is in range: no copies along d
      // The coordinate before wrapping: in range only on the owner.
      llvm::Value *c = b_.CreateAdd(threadOffset(layout, map, d),
                                    b_.getInt32(static_cast<uint32_t>(map.registerOffset(r, d))));
      llvm::Value *inRange = b_.CreateICmpULT(c, b_.getInt32(static_cast<uint32_t>(dim.extent)));
      out[r] = out[r] ? b_.CreateAnd(out[r], inRange) : inRange;
    }
  return out;
}

std::vector<llvm::Value *> FunctionLowering::linearIndices(Value *v) {
  const std::vector<int64_t> &shape = v->type()->shape();
  std::vector<llvm::Value *> out;
  for (const auto &c : coordinates(v)) {
    llvm::Value *lin = b_.getInt32(0);
    for (unsigned d = 0; d < shape.size(); ++d)
      lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(shape[d]))), c[d]);
    out.push_back(lin);
  }
  return out;
}

Regs FunctionLowering::exchangeThroughShared(const Regs &src,
                                             const std::vector<llvm::Value *> &writeIdx,
                                             const std::vector<llvm::Value *> &writePred,
                                             const std::vector<llvm::Value *> &readIdx,
                                             int64_t numSlots) {
  llvm::Type *storage = src[0]->getType();
  bool isBool = storage->isIntegerTy(1);
  if (isBool)
    storage = b_.getInt8Ty();
  llvm::Value *spare = b_.getInt32(static_cast<uint32_t>(numSlots));
  for (size_t r = 0; r < src.size(); ++r) {
    llvm::Value *slot = writeIdx[r];
    // Threads that must not write (copies, masked-off atomics) write the
    // spare slot instead: no branch.
    if (r < writePred.size() && writePred[r])
      slot = b_.CreateSelect(writePred[r], slot, spare);
    llvm::Value *v = isBool ? b_.CreateZExt(src[r], storage) : src[r];
    b_.CreateStore(v, b_.CreateGEP(storage, smem_, slot));
  }
  target_.barrier(b_);
  Regs out;
  for (llvm::Value *slot : readIdx) {
    llvm::Value *v = b_.CreateLoad(storage, b_.CreateGEP(storage, smem_, slot));
    out.push_back(isBool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
  }
  return out;
}

bool FunctionLowering::lowerReshapeTrans(Operation &op) {
  Value *in = op.operand(0), *res = op.result();
  const std::vector<int64_t> &inShape = in->type()->shape(), &outShape = res->type()->shape();
  std::vector<int64_t> order;
  if (op.is(Opcode::Trans)) {
    order = op.attrs().get("order")->getIntArray();
    if (order.size() != outShape.size())
      return unsupported(op, "whose order does not name every dimension");
  }
  // Register-only when each result register reads the same operand register
  // on every thread (DataMovement.h decides, for the allocation too).
  const Regs &src = get(in);
  std::vector<int64_t> pick;
  if (reshapeTransIsLocal(op, &pick)) {
    Regs out;
    for (int64_t reg : pick)
      out.push_back(src[static_cast<size_t>(reg)]);
    set(res, std::move(out));
    return true;
  }

  std::vector<llvm::Value *> readIdx;
  if (order.empty()) {
    readIdx = linearIndices(res);
  } else {
    std::vector<std::vector<llvm::Value *>> coords = coordinates(res);
    for (const auto &c : coords) {
      std::vector<llvm::Value *> ic(inShape.size());
      for (size_t i = 0; i < order.size(); ++i)
        ic[static_cast<size_t>(order[i])] = c[i];
      llvm::Value *lin = b_.getInt32(0);
      for (size_t d = 0; d < inShape.size(); ++d)
        lin =
            b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(inShape[d]))), ic[d]);
      readIdx.push_back(lin);
    }
  }
  // Copies hold the same value: every thread may write.
  set(res, exchangeThroughShared(src, linearIndices(in), {}, readIdx, in->type()->numElements()));
  return true;
}

bool FunctionLowering::lowerGather(Operation &op) {
  // The source staged whole, row-major, through the exchange: every thread
  // writes its source registers (copies write the same value), a barrier,
  // and each result register reads the slot of its own coordinates with the
  // axis coordinate replaced by its index register (the result is laid out
  // as the index, --coalesce). Shapes are powers of two, so masking the
  // index to the axis keeps an out-of-range index (undefined, as in Triton)
  // inside the staged tile.
  Value *src = op.operand(0), *index = op.operand(1), *res = op.result();
  const std::vector<int64_t> &srcShape = src->type()->shape();
  unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
  DType indexType = index->type()->dtype();
  const Regs &indices = get(index);
  std::vector<std::vector<llvm::Value *>> coords = coordinates(res);
  std::vector<llvm::Value *> readIdx;
  for (size_t r = 0; r < coords.size(); ++r) {
    llvm::Value *at = b_.CreateIntCast(indices[r], b_.getInt32Ty(), !isUnsigned(indexType));
    at = b_.CreateAnd(at, b_.getInt32(static_cast<uint32_t>(srcShape[axis] - 1)));
    llvm::Value *lin = b_.getInt32(0);
    for (unsigned d = 0; d < srcShape.size(); ++d)
      lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(srcShape[d]))),
                         d == axis ? at : coords[r][d]);
    readIdx.push_back(lin);
  }
  set(res,
      exchangeThroughShared(get(src), linearIndices(src), {}, readIdx, src->type()->numElements()));
  return true;
}

} // namespace tk
