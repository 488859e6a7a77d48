// load and store -> vector memory accesses.
//
// A thread's registers run along its layout's fastest dimension in groups of
// `size` elements; each group whose pointers axis info proves consecutive and
// aligned becomes one access of up to 16 bytes (ld.global.v4.f32 for 4 fp32,
// ld.global.v4.b32 for 8 fp16). The vector width is the largest power of two
// dividing all of: the layout's size along that dimension, the pointers'
// contiguity, their alignment in elements, the mask's uniformity, 16 bytes.
//
// Unmasked accesses are plain LLVM vector loads and stores (the NVPTX back end
// picks the vector instruction); masked ones, all of fp64, and those with a
// cache_modifier or eviction_policy are predicated PTX through TargetInfo, with `other` (or 0) in
// the lanes the mask turns off, in bit-typed words (ld.global.v4.b32 for 4 fp32, ld.global.v2.b64
// for 2 fp64). i1 tensors live in memory as one byte per element.
#include "analysis/AxisInfo.h"
#include "lowering/codegen/FunctionLowering.h"

#include <llvm/IR/Module.h>

#include <algorithm>

namespace tk {
namespace {

int64_t floorPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

// How `vec` elements of `storage` type travel: as `count` words of `word`.
struct Packing {
  llvm::Type *word;
  unsigned count;
};

Packing packing(llvm::IRBuilderBase &b, llvm::Type *storage, unsigned vec,
                const llvm::DataLayout &dl) {
  unsigned eb = static_cast<unsigned>(dl.getTypeStoreSize(storage));
  unsigned bytes = eb * vec;
  if (storage->isFloatTy() || storage->isDoubleTy())
    return {storage, vec};
  if (eb == 8)
    return {b.getInt64Ty(), vec};
  if (bytes >= 4)
    return {b.getInt32Ty(), bytes / 4};
  return {b.getIntNTy(bytes * 8), 1};
}

} // namespace

bool FunctionLowering::lowerLoadStore(Operation &op) {
  bool isLoad = op.is(Opcode::Load);
  Value *ptr = op.operand(0);
  Value *mask = nullptr, *other = nullptr, *stored = nullptr;
  if (isLoad) {
    mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
    other = op.numOperands() > 2 ? op.operand(2) : nullptr;
  } else {
    stored = op.operand(1);
    mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
  }
  TargetInfo::MemoryHints hints;
  hints.cache = op.attrs().getString("cache").value_or("");
  hints.evict = op.attrs().getString("evict").value_or("");
  hints.isVolatile = op.attrs().getBool("volatile").value_or(false);
  bool isVolatile = hints.isVolatile;
  Type *valueType = isLoad ? op.result()->type() : stored->type();
  llvm::Type *elemTy = elementType(valueType);
  // i1 is stored as a byte.
  bool isBool = elemTy->isIntegerTy(1);
  llvm::Type *storage = isBool ? b_.getInt8Ty() : elemTy;
  const llvm::DataLayout &dl = b_.GetInsertBlock()->getModule()->getDataLayout();
  int64_t eb = static_cast<int64_t>(dl.getTypeStoreSize(storage));

  int64_t vec = 1;
  int64_t numRegs = 1;
  std::unique_ptr<ThreadMap> map;
  unsigned fast = 0;
  if (ptr->type()->isTensor()) {
    map = std::make_unique<ThreadMap>(threadMap(ptr));
    numRegs = map->numRegisters();
    fast = map->order()[0];
    const ThreadMap::Dim &d = map->dim(fast);
    const AxisInfo &info = axis_.get(ptr);
    vec = std::min({d.size, d.extent, info.contiguity[fast],
                    std::max<int64_t>(1, info.divisibility[fast] / eb), 16 / eb});
    if (mask)
      vec = std::min(vec, axis_.maskAlignment(mask, fast));
    vec = floorPowerOfTwo(std::max<int64_t>(1, vec));
    if (remarks_)
      remarkAccess(op, *map, vec, eb);
  }

  const Regs &ptrs = get(ptr);
  const Regs *masks = mask ? &get(mask) : nullptr;
  const Regs *others = other ? &get(other) : nullptr;
  const Regs *values = stored ? &get(stored) : nullptr;
  Regs out(static_cast<size_t>(numRegs), nullptr);
  Packing pack = packing(b_, storage, static_cast<unsigned>(vec), dl);
  auto *vecTy = llvm::FixedVectorType::get(storage, static_cast<unsigned>(vec));
  auto *wordsTy = llvm::FixedVectorType::get(pack.word, pack.count);
  llvm::Align align(static_cast<uint64_t>(vec * eb));

  // Elements -> a vector in memory's element type (booleans as bytes), -> a
  // vector of words, and back.
  auto toVector = [&](const Regs &regs, int64_t first) {
    Regs elems;
    for (int64_t i = 0; i < vec; ++i) {
      llvm::Value *e = regs[static_cast<size_t>(first + i)];
      elems.push_back(isBool ? b_.CreateZExt(e, storage) : e);
    }
    return vectorOf(b_, elems);
  };
  auto toWords = [&](const Regs &regs, int64_t first) {
    llvm::Value *w = b_.CreateBitCast(toVector(regs, first), wordsTy);
    std::vector<llvm::Value *> words;
    for (unsigned i = 0; i < pack.count; ++i)
      words.push_back(b_.CreateExtractElement(w, static_cast<uint64_t>(i)));
    return words;
  };
  auto fromVector = [&](llvm::Value *v, int64_t first) {
    for (int64_t i = 0; i < vec; ++i) {
      llvm::Value *e = b_.CreateExtractElement(v, static_cast<uint64_t>(i));
      out[static_cast<size_t>(first + i)] = isBool ? b_.CreateTrunc(e, elemTy) : e;
    }
  };

  // One cache policy for all the op's accesses (a .volatile access takes none).
  if (!isVolatile)
    hints.l2Policy = target_.l2EvictionPolicy(b_, hints.evict);

  for (int64_t r = 0; r < numRegs; r += vec) {
    // Registers r..r+vec-1 are consecutive along `fast` (it is the fastest
    // register dimension and vec divides its size).
    llvm::Value *addr = ptrs[static_cast<size_t>(r)];
    llvm::Value *pred = masks ? (*masks)[static_cast<size_t>(r)] : nullptr;
    // 64-bit floats go through the PTX form too (its predicate true), so
    // they travel as .b64 words like the masked ones; so do accesses with
    // cache hints, which plain LLVM loads and stores cannot carry.
    if (!pred && (storage->isDoubleTy() || hints.any()))
      pred = b_.getTrue();
    if (isLoad) {
      if (!pred) {
        llvm::LoadInst *ld = b_.CreateAlignedLoad(vecTy, addr, align, isVolatile);
        fromVector(ld, r);
        continue;
      }
      std::vector<llvm::Value *> otherWords;
      if (others) {
        otherWords = toWords(*others, r);
      } else {
        otherWords.assign(pack.count, llvm::Constant::getNullValue(pack.word));
      }
      std::vector<llvm::Value *> words =
          target_.predicatedLoad(b_, addr, pred, pack.word, otherWords, hints);
      fromVector(b_.CreateBitCast(vectorOf(b_, words), vecTy), r);
      continue;
    }
    if (!pred) {
      b_.CreateAlignedStore(toVector(*values, r), addr, align, isVolatile);
      continue;
    }
    target_.predicatedStore(b_, addr, pred, toWords(*values, r), hints);
  }
  if (isLoad)
    set(op.result(), std::move(out));
  return true;
}

} // namespace tk
