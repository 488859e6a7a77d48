// reduce and convert_layout -> registers, warp shuffles and shared memory.
//
// A reduction along `axis` runs in three steps, each only as wide as the data:
//  1. within a thread: its registers that differ only along `axis` combine;
//  2. across the lanes that share the other coordinates: a butterfly of
//     shfl.sync.bfly over the lane-id bits of `axis` (after it every lane
//     holds the warp's partial);
//  3. across warps, when warps split `axis`: each warp writes its partial to
//     shared memory, a barrier, every thread reads and combines the partials
//     in warp order (the same order on every thread, so all agree bit for
//     bit), a barrier before the scratch is reused.
// Lanes and warps that hold copies of elements (a dimension smaller than the
// layout's tile) are left out of steps 2 and 3, so a sum counts each element
// once.
//
// convert_layout stages the tensor through shared memory: every thread writes
// the elements it holds at their row-major index, a barrier, every thread
// reads the elements its new layout gives it, a barrier.
#include "lowering/codegen/FunctionLowering.h"

#include <algorithm>

namespace tk {

llvm::Value *FunctionLowering::combine(std::string_view kind, Type *type, llvm::Value *a,
                                       llvm::Value *b) {
  Opcode opc = kind == "sum" ? Opcode::Add : kind == "max" ? Opcode::Max : Opcode::Min;
  AttrDict attrs;
  // Like Triton's tl.max/tl.min without propagate_nan: NaN loses to a number.
  if (opc != Opcode::Add && type->isFloatLike())
    attrs.set("nan", "number");
  return scalarOp(opc, attrs, type, type, {a, b});
}

namespace {

llvm::Value *scratchSlot(llvm::IRBuilderBase &b, llvm::Value *smem, llvm::Type *storage,
                         llvm::Value *index) {
  return b.CreateGEP(storage, smem, index);
}

} // namespace

bool FunctionLowering::lowerReduce(Operation &op) {
  std::optional<std::string> kind = op.attrs().getString("kind");
  if (!kind)
    return unsupported(op, "with a combiner region");
  if (*kind != "sum" && *kind != "max" && *kind != "min")
    return unsupported(op, "of kind \"" + *kind + "\"");
  Value *in = op.operand(0), *res = op.result();
  unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
  Type *elemType = in->type()->elementType();
  ThreadMap inMap = threadMap(in);
  bool scalarResult = !res->type()->isTensor();
  std::unique_ptr<ThreadMap> outMap;
  if (!scalarResult) {
    auto *slice = dyn_cast<SliceLayout>(layoutOf(res));
    if (!slice || slice->dim() != axis || slice->parent() != layoutOf(in))
      return unsupported(op, "whose result layout is not the slice of its operand's");
    outMap = std::make_unique<ThreadMap>(threadMap(res));
  }
  int64_t numOut = scalarResult ? 1 : outMap->numRegisters();

  // 1. Within the thread.
  const ThreadMap::Dim &d = inMap.dim(axis);
  const Regs &src = get(in);
  Regs acc(static_cast<size_t>(numOut), nullptr);
  for (int64_t r = 0; r < inMap.numRegisters(); ++r) {
    std::vector<int64_t> k = inMap.registerIndex(r);
    if (k[axis] >= d.extent)
      continue; // a copy of an element this thread already has
    k.erase(k.begin() + axis);
    size_t o = scalarResult ? 0 : static_cast<size_t>(outMap->registerOf(k));
    llvm::Value *v = src[static_cast<size_t>(r)];
    acc[o] = acc[o] ? combine(*kind, elemType, acc[o], v) : v;
  }

  // 2. Across lanes.
  int64_t lanes = std::clamp<int64_t>(d.extent / d.size, 1, d.threads);
  for (int64_t m = 1; m < lanes; m *= 2)
    for (llvm::Value *&a : acc)
      a = combine(*kind, elemType, a,
                  target_.shuffleXor(b_, a, static_cast<unsigned>(m * d.laneStride)));

  // 3. Across warps.
  int64_t warps = std::clamp<int64_t>(d.extent / (d.size * d.threads), 1, d.warps);
  if (warps > 1) {
    llvm::Type *storage = elementType(in->type());
    bool isBool = storage->isIntegerTy(1);
    if (isBool)
      storage = b_.getInt8Ty();
    llvm::Value *warpIdx =
        b_.CreateURem(b_.CreateUDiv(warp_, b_.getInt32(d.warpStride)), b_.getInt32(warps));
    // The row-major index of each result element: the slot group it uses.
    std::vector<llvm::Value *> outIndex(static_cast<size_t>(numOut), b_.getInt32(0));
    if (!scalarResult) {
      std::vector<std::vector<llvm::Value *>> coords = coordinates(res);
      const std::vector<int64_t> &shape = res->type()->shape();
      for (int64_t o = 0; o < numOut; ++o) {
        llvm::Value *lin = b_.getInt32(0);
        for (unsigned dd = 0; dd < shape.size(); ++dd)
          lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(shape[dd])), coords[o][dd]);
        outIndex[o] = lin;
      }
    }
    for (int64_t o = 0; o < numOut; ++o) {
      llvm::Value *slot = b_.CreateAdd(b_.CreateMul(outIndex[o], b_.getInt32(warps)), warpIdx);
      llvm::Value *v = isBool ? b_.CreateZExt(acc[o], storage) : acc[o];
      b_.CreateStore(v, scratchSlot(b_, smem_, storage, slot));
    }
    target_.barrier(b_);
    for (int64_t o = 0; o < numOut; ++o) {
      llvm::Value *total = nullptr;
      for (int64_t w = 0; w < warps; ++w) {
        llvm::Value *slot =
            b_.CreateAdd(b_.CreateMul(outIndex[o], b_.getInt32(warps)), b_.getInt32(w));
        llvm::Value *v = b_.CreateLoad(storage, scratchSlot(b_, smem_, storage, slot));
        if (isBool)
          v = b_.CreateTrunc(v, b_.getInt1Ty());
        total = total ? combine(*kind, elemType, total, v) : v;
      }
      acc[o] = total;
    }
    target_.barrier(b_);
  }
  set(res, std::move(acc));
  return true;
}

bool FunctionLowering::lowerConvertLayout(Operation &op) {
  Value *in = op.operand(0), *res = op.result();
  if (layoutOf(in) == layoutOf(res)) {
    set(res, get(in));
    return true;
  }
  llvm::Type *storage = elementType(in->type());
  bool isBool = storage->isIntegerTy(1);
  if (isBool)
    storage = b_.getInt8Ty();
  const std::vector<int64_t> &shape = in->type()->shape();
  auto linear = [&](const std::vector<llvm::Value *> &c) {
    llvm::Value *lin = b_.getInt32(0);
    for (unsigned d = 0; d < shape.size(); ++d)
      lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(shape[d])), c[d]);
    return lin;
  };
  const Regs &src = get(in);
  std::vector<std::vector<llvm::Value *>> inCoords = coordinates(in);
  for (size_t r = 0; r < src.size(); ++r) {
    llvm::Value *v = isBool ? b_.CreateZExt(src[r], storage) : src[r];
    b_.CreateStore(v, scratchSlot(b_, smem_, storage, linear(inCoords[r])));
  }
  target_.barrier(b_);
  Regs out;
  for (const auto &c : coordinates(res)) {
    llvm::Value *v = b_.CreateLoad(storage, scratchSlot(b_, smem_, storage, linear(c)));
    out.push_back(isBool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
  }
  target_.barrier(b_);
  set(res, std::move(out));
  return true;
}

} // namespace tk
