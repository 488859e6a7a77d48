// atomic_rmw and atomic_cas -> PTX `atom` instructions, one per element, each
// element once.
//
//   %old = atomic_rmw %p, %v, %m {kind = "add"} : tensor<128xfp32, L>
//   -> per register:  mov.b32 %old, 0;
//                     @%own_and_m atom.global.acq_rel.gpu.add.f32 %old, [%p], %v;
//
// The instruction is predicated on the mask and on ownership: where the
// layout holds copies of an element (a dimension smaller than its tile, or a
// scalar, which every thread holds), only the owner issues the atomic, and
// the old value reaches the copies through shared memory. Masked-off elements
// return 0, as in the interpreter.
//
// PTX has the operation natively for: add on 32/64-bit integers, f32, f64,
// f16 (sm_70); and/or/xor/xchg on 32/64 bits; max/min on
// 32/64-bit integers (signed or unsigned); cas on 16/32/64 bits. Everything
// else (float max/min, 8/16-bit integer operations, bf16 add, whose
// native form is sm_90 only) is a compare-and-swap loop on the enclosing aligned 32-bit (or 64-bit)
// word that computes the interpreter's result: float max/min ignore a NaN
// operand (a NaN in memory is replaced), integers wrap.
//
// On a target with TargetInfo::llvmAtomicScope (AMDGPU) each element is
// instead one LLVM atomicrmw or cmpxchg in a branch on the same predicate,
// with the target's sync scope and sem's ordering (llvmAtomic); the back end
// expands what the chip has no instruction for.
//
// `sem` (relaxed, acquire, release, acq_rel; default acq_rel) and `scope`
// (cta, gpu, sys; default gpu) map to atom's qualifiers. ptxas takes the
// qualifiers in any order; they are spelled in the order Triton's PTX has
// them, so a search of the PTX for Triton's text finds tk's too:
// `atom.global.gpu.acq_rel.add.f32` for read-modify-writes (CAS loops
// included), `atom.global.acq_rel.gpu.cas.b32` for atomic_cas.
#include "analysis/DataMovement.h"
#include "lowering/codegen/FunctionLowering.h"

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>

namespace tk {
namespace {

// The inline-asm constraint of a register of `bits` bits.
const char *constraintFor(unsigned bits) { return bits == 64 ? "l" : bits == 32 ? "r" : "h"; }

struct AtomSpec {
  std::string op; // "add.f32", "max.s64", "cas.b32"; empty: a CAS loop
  unsigned bits;  // width of the instruction's operands
};

AtomSpec nativeSpec(std::string_view kind, Type *elem) {
  unsigned bits = elem->isPointer() ? 64 : dtypeBits(elem->dtype());
  bool isFloatElem = !elem->isPointer() && isFloat(elem->dtype());
  if (kind == "cas")
    return {bits >= 16 ? fmt::format("cas.b{}", bits) : "", bits};
  if (kind == "xchg" || ((kind == "and" || kind == "or" || kind == "xor") && !isFloatElem))
    return {bits >= 32 ? fmt::format("{}.b{}", kind == "xchg" ? "exch" : std::string(kind), bits)
                       : "",
            bits};
  if (kind == "add") {
    if (elem->isPointer())
      return {"", bits};
    switch (elem->dtype()) {
    case DType::F32:
      return {"add.f32", 32};
    case DType::F64:
      return {"add.f64", 64};
    case DType::F16:
      return {"add.noftz.f16", 16};
    case DType::BF16:
      return {"", 16}; // atom.add.noftz.bf16 is sm_90 only: the loop works everywhere
    default:
      return {bits >= 32 ? fmt::format("add.u{}", bits) : "", bits};
    }
  }
  if ((kind == "max" || kind == "min") && !isFloatElem && !elem->isPointer() && bits >= 32)
    return {fmt::format("{}.{}{}", kind, isSigned(elem->dtype()) ? "s" : "u", bits), bits};
  return {"", bits};
}

llvm::AtomicOrdering llvmOrdering(const std::string &sem) {
  if (sem == "relaxed")
    return llvm::AtomicOrdering::Monotonic;
  if (sem == "acquire")
    return llvm::AtomicOrdering::Acquire;
  if (sem == "release")
    return llvm::AtomicOrdering::Release;
  return llvm::AtomicOrdering::AcquireRelease;
}

// The LLVM atomicrmw operation of a tk atomic kind on `elem`. Float max/min
// are LLVM's fmax/fmin (maxnum: a NaN operand is ignored, a NaN in memory
// replaced, the interpreter's rule).
llvm::AtomicRMWInst::BinOp llvmRMWOp(std::string_view kind, Type *elem) {
  bool isFloatElem = !elem->isPointer() && isFloat(elem->dtype());
  bool isSignedElem = !elem->isPointer() && !isFloatElem && isSigned(elem->dtype());
  if (kind == "xchg")
    return llvm::AtomicRMWInst::Xchg;
  if (kind == "add")
    return isFloatElem ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
  if (kind == "and")
    return llvm::AtomicRMWInst::And;
  if (kind == "or")
    return llvm::AtomicRMWInst::Or;
  if (kind == "xor")
    return llvm::AtomicRMWInst::Xor;
  if (kind == "max")
    return isFloatElem    ? llvm::AtomicRMWInst::FMax
           : isSignedElem ? llvm::AtomicRMWInst::Max
                          : llvm::AtomicRMWInst::UMax;
  return isFloatElem    ? llvm::AtomicRMWInst::FMin
         : isSignedElem ? llvm::AtomicRMWInst::Min
                        : llvm::AtomicRMWInst::UMin;
}

} // namespace

// One element's atomic as an LLVM instruction (targets with
// TargetInfo::llvmAtomicScope), run only where `pred` holds; the old value,
// or 0 where it does not.
llvm::Value *FunctionLowering::llvmAtomic(const std::string &kind, Type *elem,
                                          const std::string &sem, const std::string &scope,
                                          llvm::Value *pred, llvm::Value *ptr, llvm::Value *cmp,
                                          llvm::Value *val) {
  llvm::LLVMContext &ctx = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock *from = b_.GetInsertBlock();
  auto *then = llvm::BasicBlock::Create(ctx, "atom.then", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "atom.done", fn);
  b_.CreateCondBr(pred, then, done);
  b_.SetInsertPoint(then);
  llvm::Type *ty = val->getType();
  unsigned bits = elem->isPointer() ? 64 : dtypeBits(elem->dtype());
  llvm::Align align(bits / 8);
  llvm::SyncScope::ID ssid = ctx.getOrInsertSyncScopeID(scope);
  llvm::AtomicOrdering order = llvmOrdering(sem);
  llvm::Value *old;
  if (kind == "cas") {
    // cmpxchg takes integers or pointers: floats go as their bits. Its
    // failure ordering may not release.
    llvm::Type *intTy = ty->isFloatingPointTy() ? b_.getIntNTy(bits) : ty;
    auto asInt = [&](llvm::Value *x) { return intTy == ty ? x : b_.CreateBitCast(x, intTy); };
    llvm::AtomicOrdering failure =
        order == llvm::AtomicOrdering::AcquireRelease ? llvm::AtomicOrdering::Acquire
        : order == llvm::AtomicOrdering::Release      ? llvm::AtomicOrdering::Monotonic
                                                      : order;
    llvm::Value *pair =
        b_.CreateAtomicCmpXchg(ptr, asInt(cmp), asInt(val), align, order, failure, ssid);
    old = b_.CreateExtractValue(pair, 0);
    if (intTy != ty)
      old = b_.CreateBitCast(old, ty);
  } else {
    old = b_.CreateAtomicRMW(llvmRMWOp(kind, elem), ptr, val, align, order, ssid);
  }
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode *result = b_.CreatePHI(ty, 2);
  result->addIncoming(llvm::Constant::getNullValue(ty), from);
  result->addIncoming(old, thenEnd);
  return result;
}

bool FunctionLowering::lowerAtomic(Operation &op) {
  bool isCas = op.is(Opcode::AtomicCAS);
  std::string kind = isCas ? "cas" : op.attrs().getString("kind").value_or("");
  std::string sem = op.attrs().getString("sem").value_or("acq_rel");
  std::string scope = op.attrs().getString("scope").value_or("gpu");
  if (sem != "relaxed" && sem != "acquire" && sem != "release" && sem != "acq_rel")
    return unsupported(op, "with sem \"" + sem + "\" (relaxed, acquire, release, acq_rel)");
  if (scope != "cta" && scope != "gpu" && scope != "sys")
    return unsupported(op, "with scope \"" + scope + "\" (cta, gpu, sys)");
  Value *ptr = op.operand(0), *val = op.operand(isCas ? 2 : 1), *res = op.result();
  Value *cmpV = isCas ? op.operand(1) : nullptr;
  Value *maskV = !isCas && op.numOperands() > 2 ? op.operand(2) : nullptr;
  Type *elem = val->type()->elementType();
  bool isFloatElem = !elem->isPointer() && isFloat(elem->dtype());
  bool known = kind == "cas" || kind == "xchg" || kind == "add" || kind == "max" || kind == "min" ||
               kind == "and" || kind == "or" || kind == "xor";
  if (!known ||
      (kind != "xchg" && kind != "cas" &&
       (elem->isPointer() || (isFloatElem && kind != "add" && kind != "max" && kind != "min"))))
    return unsupported(op, fmt::format("of kind \"{}\" on {}", kind, elem->str()));
  if (!elem->isPointer() && elem->dtype() == DType::I1)
    return unsupported(op, "on i1");

  llvm::Type *ty = elementType(val->type());
  unsigned bits = elem->isPointer() ? 64 : dtypeBits(elem->dtype());
  AtomSpec spec = nativeSpec(kind, elem);
  std::optional<std::string> llvmScope = target_.llvmAtomicScope(scope);
  std::string quals = isCas ? fmt::format("atom.global.{}.{}", sem, scope)
                            : fmt::format("atom.global.{}.{}", scope, sem);

  const Regs &ptrs = get(ptr), &vals = get(val);
  const Regs *masks = maskV ? &get(maskV) : nullptr, *cmps = cmpV ? &get(cmpV) : nullptr;
  std::vector<llvm::Value *> owners = ownerPredicates(res->type()->isTensor() ? res : val);
  llvm::Type *i32 = b_.getInt32Ty();
  Regs out;
  for (size_t r = 0; r < vals.size(); ++r) {
    llvm::Value *pred = b_.getTrue();
    if (masks)
      pred = (*masks)[r];
    if (owners[r])
      pred = b_.CreateAnd(pred, owners[r]);
    llvm::Value *v = vals[r];
    llvm::Value *old = nullptr;
    if (llvmScope) {
      old = llvmAtomic(kind, elem, sem, *llvmScope, pred, ptrs[r], cmps ? (*cmps)[r] : nullptr, v);
    } else if (!spec.op.empty()) {
      // One predicated instruction; the result register starts at 0.
      llvm::Type *regTy = b_.getIntNTy(spec.bits);
      auto asBits = [&](llvm::Value *x) {
        return x->getType()->isPointerTy() ? b_.CreatePtrToInt(x, regTy)
                                           : b_.CreateBitCast(x, regTy);
      };
      std::string c = constraintFor(spec.bits);
      std::string text = fmt::format("mov.b{} $0, 0;\n\t@$1 {}.{} $0, [$2], $3{};", spec.bits,
                                     quals, spec.op, isCas ? ", $4" : "");
      std::string constraints = fmt::format("={},b,l,{}{}", c, c, isCas ? "," + c : "");
      std::vector<llvm::Value *> args = {pred, b_.CreatePtrToInt(ptrs[r], b_.getInt64Ty())};
      if (isCas)
        args.push_back(asBits((*cmps)[r]));
      args.push_back(asBits(v));
      std::vector<llvm::Type *> argTypes;
      for (llvm::Value *a : args)
        argTypes.push_back(a->getType());
      auto *fnTy = llvm::FunctionType::get(regTy, argTypes, false);
      llvm::Value *word = b_.CreateCall(llvm::InlineAsm::get(fnTy, text, constraints, true), args);
      old = ty->isPointerTy() ? b_.CreateIntToPtr(word, ty) : b_.CreateBitCast(word, ty);
    } else {
      // A compare-and-swap loop on the aligned word holding the element.
      unsigned wordBits = bits == 64 ? 64 : 32;
      llvm::Type *wordTy = b_.getIntNTy(wordBits), *elemInt = b_.getIntNTy(bits);
      llvm::Function *fn = b_.GetInsertBlock()->getParent();
      llvm::LLVMContext &ctx = b_.getContext();
      llvm::BasicBlock *from = b_.GetInsertBlock();
      auto *head = llvm::BasicBlock::Create(ctx, "atom.head", fn);
      auto *loop = llvm::BasicBlock::Create(ctx, "atom.loop", fn);
      auto *done = llvm::BasicBlock::Create(ctx, "atom.done", fn);
      llvm::Value *addr = b_.CreatePtrToInt(ptrs[r], b_.getInt64Ty());
      llvm::Value *wordAddr = addr, *shift = nullptr;
      if (bits < wordBits) {
        wordAddr = b_.CreateAnd(addr, b_.getInt64(~uint64_t(3)));
        shift = b_.CreateTrunc(b_.CreateShl(b_.CreateAnd(addr, b_.getInt64(3)), 3), i32);
      }
      b_.CreateCondBr(pred, head, done);
      b_.SetInsertPoint(head);
      llvm::Value *wordPtr = b_.CreateIntToPtr(wordAddr, ptrs[r]->getType());
      llvm::LoadInst *first = b_.CreateLoad(wordTy, wordPtr);
      first->setVolatile(true);
      b_.CreateBr(loop);
      b_.SetInsertPoint(loop);
      llvm::PHINode *cur = b_.CreatePHI(wordTy, 2);
      cur->addIncoming(first, head);
      llvm::Value *curElem = cur;
      if (shift)
        curElem = b_.CreateTrunc(b_.CreateLShr(cur, b_.CreateZExt(shift, wordTy)), elemInt);
      llvm::Value *oldElem = b_.CreateBitCast(curElem, ty);
      llvm::Value *next = nullptr;
      if (isCas) {
        llvm::Value *same = b_.CreateICmpEQ(curElem, b_.CreateBitCast((*cmps)[r], elemInt));
        next = b_.CreateSelect(same, b_.CreateBitCast(v, elemInt), curElem);
      } else if (kind == "xchg") {
        next = b_.CreateBitCast(v, elemInt);
      } else if (isFloatElem && kind != "add") {
        // The interpreter's rule: a NaN operand is ignored, a NaN in memory
        // is replaced.
        llvm::Value *better =
            kind == "max" ? b_.CreateFCmpOGT(v, oldElem) : b_.CreateFCmpOLT(v, oldElem);
        llvm::Value *take = b_.CreateOr(better, b_.CreateFCmpUNO(oldElem, oldElem));
        take = b_.CreateAnd(take, b_.CreateFCmpORD(v, v));
        next = b_.CreateBitCast(b_.CreateSelect(take, v, oldElem), elemInt);
      } else {
        AttrDict attrs;
        Opcode opc = kind == "add"   ? Opcode::Add
                     : kind == "max" ? Opcode::Max
                     : kind == "min" ? Opcode::Min
                     : kind == "and" ? Opcode::And
                     : kind == "or"  ? Opcode::Or
                                     : Opcode::Xor;
        Type *scalarTy = elem;
        llvm::Value *combined = scalarOp(opc, attrs, scalarTy, scalarTy, {oldElem, v});
        if (!combined)
          return unsupported(op, fmt::format("of kind \"{}\" on {}", kind, elem->str()));
        next = b_.CreateBitCast(combined, elemInt);
      }
      llvm::Value *nextWord = next;
      if (shift) {
        llvm::Value *sh = b_.CreateZExt(shift, wordTy);
        llvm::Value *keep =
            b_.CreateNot(b_.CreateShl(llvm::ConstantInt::get(wordTy, (1ull << bits) - 1), sh));
        nextWord =
            b_.CreateOr(b_.CreateAnd(cur, keep), b_.CreateShl(b_.CreateZExt(next, wordTy), sh));
      }
      std::string c = constraintFor(wordBits);
      auto *casTy = llvm::FunctionType::get(wordTy, {b_.getInt64Ty(), wordTy, wordTy}, false);
      llvm::Value *seen = b_.CreateCall(
          llvm::InlineAsm::get(casTy, fmt::format("{}.cas.b{} $0, [$1], $2, $3;", quals, wordBits),
                               fmt::format("={},l,{},{}", c, c, c), true),
          {wordAddr, cur, nextWord});
      cur->addIncoming(seen, loop);
      llvm::BasicBlock *loopEnd = b_.GetInsertBlock();
      b_.CreateCondBr(b_.CreateICmpEQ(seen, cur), done, loop);
      b_.SetInsertPoint(done);
      llvm::PHINode *result = b_.CreatePHI(ty, 2);
      result->addIncoming(llvm::Constant::getNullValue(ty), from);
      result->addIncoming(oldElem, loopEnd);
      old = result;
    }
    out.push_back(old);
  }
  // The copies take the owner's old value.
  if (atomicSharesResult(op)) {
    if (res->type()->isTensor()) {
      std::vector<llvm::Value *> idx = linearIndices(res);
      out = exchangeThroughShared(out, idx, owners, idx, res->type()->numElements());
    } else {
      out = exchangeThroughShared(out, {b_.getInt32(0)}, owners, {b_.getInt32(0)}, 1);
    }
  }
  set(res, std::move(out));
  return true;
}

} // namespace tk
