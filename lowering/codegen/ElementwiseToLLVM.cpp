// Elementwise ops, constants, ids and the shape ops (make_range, splat,
// broadcast, expand_dims) -> LLVM IR. An elementwise op on tensors is the
// scalar op on each register: operands share the result's layout (the
// coalescing pass made them), so register i of every operand is the same
// element.
//
// Math (docs/codegen/math.md): fp32 exp, exp2, log, log2, sin, cos and rsqrt use
// the PTX approximate instructions (exp(x) = ex2.approx(x * log2(e)), about 2
// ulp, as Triton does; ex2.approx.f32 written out as ptxas expands it,
// exp2Approx in NVPTXTarget.cpp); sqrt is IEEE (sqrt.rn); `/` is div.full.f32 (2 ulp,
// Triton's default; tk.div_rn keeps div.rn), or, when the divisor is one
// value across the thread's registers, one reciprocal and a multiply per
// element within the same bound (UniformDivisor); fp16 and bf16 compute in fp32
// and round once; erf is a rational approximation
// (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). fp64 transcendentals call
// libdevice (Libdevice.h), linked only when used; on amdgcn ROCm's ocml
// (ROCmDeviceLibs.h), through TargetInfo::callLibdevice, as are the
// libdevice.NAME functions. The approximations and div.full are
// TargetInfo's (approxF32, divideF32): on amdgcn LLVM's intrinsics and an
// IEEE fdiv (AMDGPUTarget.cpp).
#include "analysis/AxisInfo.h"
#include "lang/Float16.h"
#include "lowering/codegen/FunctionLowering.h"
#include "lowering/codegen/Libdevice.h"

#include <fmt/format.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tk {
namespace {

bool isSigned(Type *t) {
  Type *e = t->elementType();
  return e->isScalar() && tk::isSigned(e->dtype());
}

llvm::CmpInst::Predicate intPredicate(std::string_view p) {
  using P = llvm::CmpInst::Predicate;
  if (p == "eq")
    return P::ICMP_EQ;
  if (p == "ne")
    return P::ICMP_NE;
  if (p == "slt")
    return P::ICMP_SLT;
  if (p == "sle")
    return P::ICMP_SLE;
  if (p == "sgt")
    return P::ICMP_SGT;
  if (p == "sge")
    return P::ICMP_SGE;
  if (p == "ult")
    return P::ICMP_ULT;
  if (p == "ule")
    return P::ICMP_ULE;
  if (p == "ugt")
    return P::ICMP_UGT;
  return P::ICMP_UGE;
}

llvm::CmpInst::Predicate floatPredicate(std::string_view p) {
  using P = llvm::CmpInst::Predicate;
  static const std::pair<std::string_view, P> table[] = {
      {"oeq", P::FCMP_OEQ}, {"one", P::FCMP_ONE}, {"olt", P::FCMP_OLT}, {"ole", P::FCMP_OLE},
      {"ogt", P::FCMP_OGT}, {"oge", P::FCMP_OGE}, {"ord", P::FCMP_ORD}, {"ueq", P::FCMP_UEQ},
      {"une", P::FCMP_UNE}, {"ult", P::FCMP_ULT}, {"ule", P::FCMP_ULE}, {"ugt", P::FCMP_UGT},
      {"uge", P::FCMP_UGE}, {"uno", P::FCMP_UNO}};
  for (const auto &[name, pred] : table)
    if (name == p)
      return pred;
  return P::FCMP_UNO;
}

// erf(x) for fp32 with |error| < 1.5e-7 (Abramowitz & Stegun 7.1.26):
// erf(|x|) = 1 - poly(t) * exp(-x^2), t = 1 / (1 + p|x|), odd in x.
llvm::Value *erfApprox(llvm::IRBuilderBase &b, const TargetInfo &target, llvm::Value *x) {
  llvm::Type *f = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *t = b.CreateFDiv(c(1.0), b.CreateFAdd(c(1.0), b.CreateFMul(c(0.3275911), ax)));
  const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  llvm::Value *poly = c(a[0]);
  for (int i = 1; i < 5; ++i)
    poly = b.CreateFAdd(b.CreateFMul(poly, t), c(a[i]));
  poly = b.CreateFMul(poly, t);
  llvm::Value *e = target.approxF32(b, ApproxF32::Exp2,
                                    b.CreateFMul(b.CreateFNeg(b.CreateFMul(ax, ax)), c(M_LOG2E)));
  llvm::Value *r = b.CreateFSub(c(1.0), b.CreateFMul(poly, e));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

// x / y for `/` on floats, as Triton does: fp32 (and fp16/bf16, computed in
// fp32 and rounded once) is div.full.f32, at most 2 ulp from the correctly
// rounded quotient over the whole range; fp64 stays div.rn. div.rn.f32 is a
// multi-instruction sequence with a slow path that ptxas compiles to a call:
// 32 of them per thread (softmax, 16384 columns at 16 warps) cost 14 more
// registers and a subroutine per element, where div.full becomes one
// reciprocal of the shared divisor and a multiply per element.
// tk.div_rn and tk.fdiv(ieee_rounding=True) mark their div `rounding = "rn"`
// and keep div.rn.
llvm::Value *fastDivide(llvm::IRBuilderBase &b, const TargetInfo &target, llvm::Value *x,
                        llvm::Value *y) {
  llvm::Type *t = x->getType();
  if (t->isDoubleTy())
    return b.CreateFDiv(x, y);
  llvm::Type *f32 = b.getFloatTy();
  if (!t->isFloatTy()) {
    x = b.CreateFPExt(x, f32);
    y = b.CreateFPExt(y, f32);
  }
  llvm::Value *q = target.divideF32(b, x, y);
  return t->isFloatTy() ? q : b.CreateFPTrunc(q, t);
}

// Division by a divisor that is the same value in every register of the
// thread (a reduction result broadcast over the tile: softmax's
// `numerator / denominator`). div.full.f32 costs ptxas a per-element
// expansion (subnormal handling around MUFU.RCP); instead the divisor gets
// one reciprocal and every element one or two multiplies, with the same
// bound as div.full (<= 2 ulp over the whole range):
//
//   s  = 2^24 if |d| < 2^-126 (subnormal or zero), 1/4 if |d| > 2^126, else 1
//   r  = rcp.approx.ftz.f32(d * s)     d * s is exact and never subnormal,
//                                      so r is within 1 ulp and normal
//   q  = (x * r) * s                   one rounding, then an exact scaling
//
// x * r is within 1.5 ulp of x / (d * s); scaling by s is exact except for
// overflow (then x / d overflows too) or a subnormal quotient (|d| > 2^126
// only: an error of a fraction of the smallest subnormal). NaN, infinities
// and zeros come out as IEEE division gives them (d = 0: r = inf; d = inf:
// r = 0). On the softmax at 16384 columns and 16 warps (32 divisions per
// thread) ptxas takes 35 instead of 39 ms (CPU time) and allocates 51
// instead of 64 registers (bench/results/notes/compile-time.md).
struct UniformDivisor {
  llvm::Value *reciprocal; // rcp(d * s)
  llvm::Value *scale;      // s
};

UniformDivisor uniformDivisor(llvm::IRBuilderBase &b, const TargetInfo &target, llvm::Value *d) {
  llvm::Type *f32 = b.getFloatTy();
  if (!d->getType()->isFloatTy())
    d = b.CreateFPExt(d, f32);
  auto c = [&](double v) { return llvm::ConstantFP::get(f32, v); };
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d);
  llvm::Value *s = b.CreateSelect(b.CreateFCmpOGT(a, c(0x1p126)), c(0.25), c(1.0));
  s = b.CreateSelect(b.CreateFCmpOLT(a, c(0x1p-126)), c(0x1p24), s);
  llvm::Value *r = target.approxF32(b, ApproxF32::Rcp, b.CreateFMul(d, s));
  return {r, s};
}

llvm::Value *divideByUniform(llvm::IRBuilderBase &b, llvm::Value *x, const UniformDivisor &d) {
  llvm::Type *t = x->getType();
  if (!t->isFloatTy())
    x = b.CreateFPExt(x, b.getFloatTy());
  llvm::Value *q = b.CreateFMul(b.CreateFMul(x, d.reciprocal), d.scale);
  return t->isFloatTy() ? q : b.CreateFPTrunc(q, t);
}

// A float `/` with div.full semantics (not fp64, not rounding = "rn") whose
// divisor is one value in all of the thread's registers, two or more.
bool hasUniformDivisor(Operation &op, const Regs &divisor) {
  if (!op.is(Opcode::Div) || divisor.size() < 2)
    return false;
  llvm::Type *t = divisor[0]->getType();
  if (!t->isFloatingPointTy() || t->isDoubleTy() ||
      op.attrs().getString("rounding").value_or("") == "rn")
    return false;
  return std::all_of(divisor.begin(), divisor.end(),
                     [&](llvm::Value *v) { return v == divisor[0]; });
}

// fp16/bf16 operands of `f` are computed in fp32 and rounded once at the
// end, as the interpreter does (floor(x / y) must see the unrounded quotient:
// 3.8125 // 1.2734375 is 2, while the bf16 quotient rounds up to 3.0).
template <typename F> llvm::Value *inFloat32(llvm::IRBuilderBase &b, const Regs &ops, F f) {
  llvm::Type *t = ops[0]->getType();
  if (t->isFloatTy() || t->isDoubleTy())
    return f(ops[0], ops[1]);
  llvm::Type *f32 = b.getFloatTy();
  return b.CreateFPTrunc(f(b.CreateFPExt(ops[0], f32), b.CreateFPExt(ops[1], f32)), t);
}

} // namespace

llvm::Value *FunctionLowering::scalarOp(Opcode opc, const AttrDict &attrs, Type *operandType,
                                        Type *resultType, const Regs &ops) {
  llvm::IRBuilderBase &b = b_;
  bool isFloat = operandType->isFloatLike();
  bool sign = isSigned(operandType);
  llvm::Type *resTy = elementType(resultType);
  auto a = [&]() { return ops[0]; };
  switch (opc) {
  case Opcode::ExternElementwise:
    return target().callLibdevice(b, *attrs.getString("symbol"), ops, resTy);
  case Opcode::Add:
    if (isFloat && target().testMiscompile()) // TK_TEST_MISCOMPILE, for TK_CHECK's tests
      return b.CreateFSub(ops[0], ops[1]);
    return isFloat ? b.CreateFAdd(ops[0], ops[1]) : b.CreateAdd(ops[0], ops[1]);
  case Opcode::Sub:
    return isFloat ? b.CreateFSub(ops[0], ops[1]) : b.CreateSub(ops[0], ops[1]);
  case Opcode::Mul:
    return isFloat ? b.CreateFMul(ops[0], ops[1]) : b.CreateMul(ops[0], ops[1]);
  case Opcode::Div:
    if (isFloat)
      return attrs.getString("rounding").value_or("") == "rn"
                 ? b.CreateFDiv(ops[0], ops[1])
                 : fastDivide(b, target(), ops[0], ops[1]);
    return sign ? b.CreateSDiv(ops[0], ops[1]) : b.CreateUDiv(ops[0], ops[1]);
  case Opcode::Rem:
    if (isFloat)
      return inFloat32(b, ops, [&](llvm::Value *x, llvm::Value *y) {
        // C's fmod: the remainder has the sign of x, also when it is zero
        // (fmod(-6.25, -6.25) = -0); NVPTX's expansion x - trunc(x/y)*y gives
        // +0 there.
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, b.CreateFRem(x, y), x);
      });
    return sign ? b.CreateSRem(ops[0], ops[1]) : b.CreateURem(ops[0], ops[1]);
  case Opcode::FloorDiv: {
    if (isFloat)
      return inFloat32(b, ops, [&](llvm::Value *x, llvm::Value *y) {
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b.CreateFDiv(x, y));
      });
    if (!sign)
      return b.CreateUDiv(ops[0], ops[1]);
    // Truncating quotient, minus one when the remainder is non-zero and has
    // the other sign than the divisor.
    llvm::Value *q = b.CreateSDiv(ops[0], ops[1]);
    llvm::Value *r = b.CreateSRem(ops[0], ops[1]);
    llvm::Value *zero = llvm::ConstantInt::get(r->getType(), 0);
    llvm::Value *adjust =
        b.CreateAnd(b.CreateICmpNE(r, zero), b.CreateICmpSLT(b.CreateXor(r, ops[1]), zero));
    return b.CreateSub(q, b.CreateZExt(adjust, q->getType()));
  }
  case Opcode::Neg:
    return isFloat ? b.CreateFNeg(a()) : b.CreateNeg(a());
  case Opcode::And:
    return b.CreateAnd(ops[0], ops[1]);
  case Opcode::Or:
    return b.CreateOr(ops[0], ops[1]);
  case Opcode::Xor:
    return b.CreateXor(ops[0], ops[1]);
  case Opcode::Shl:
    return b.CreateShl(ops[0], ops[1]);
  case Opcode::AShr:
    return b.CreateAShr(ops[0], ops[1]);
  case Opcode::LShr:
    return b.CreateLShr(ops[0], ops[1]);
  case Opcode::CmpI:
    return b.CreateICmp(intPredicate(*attrs.getString("predicate")), ops[0], ops[1]);
  case Opcode::CmpF:
    return b.CreateFCmp(floatPredicate(*attrs.getString("predicate")), ops[0], ops[1]);
  case Opcode::SExt:
    return b.CreateSExt(a(), resTy);
  case Opcode::ZExt:
    return b.CreateZExt(a(), resTy);
  case Opcode::Trunc:
    return b.CreateTrunc(a(), resTy);
  case Opcode::FPExt:
    if (DType f = operandType->dtype(); isFp8(f)) {
      // fp8 -> fp16 is exact, and so are fp16 -> fp32 and, for fp8's
      // values, fp32 -> bf16. fp8e4b15 shares fp16's exponent bias: its
      // fields move into fp16's.
      llvm::Value *h;
      if (f == DType::F8E4B15) {
        llvm::Value *x = b.CreateZExt(a(), b.getInt16Ty());
        h = b.CreateBitCast(
            b.CreateOr(b.CreateShl(b.CreateAnd(x, 0x80), 8), b.CreateShl(b.CreateAnd(x, 0x7F), 7)),
            b.getHalfTy());
      } else {
        h = target().fp8ToHalf(b, a(), f);
      }
      if (resTy->isHalfTy())
        return h;
      llvm::Value *w = b.CreateFPExt(h, b.getFloatTy());
      return resTy->isFloatTy() ? w : b.CreateFPTrunc(w, resTy);
    }
    return b.CreateFPExt(a(), resTy);
  case Opcode::FPTrunc:
    if (DType t = resultType->dtype(); isFp8(t)) {
      // fp16 and bf16 widen exactly to fp32, which rounds once.
      llvm::Value *x = a()->getType()->isFloatTy() ? a() : b.CreateFPExt(a(), b.getFloatTy());
      return t == DType::F8E4B15 ? nullptr : target().floatToFp8(b, x, t);
    }
    // fp16 <-> bf16 rounds through fp32 (exact widening, one rounding).
    if (a()->getType()->getPrimitiveSizeInBits() == resTy->getPrimitiveSizeInBits())
      return b.CreateFPTrunc(b.CreateFPExt(a(), b.getFloatTy()), resTy);
    return b.CreateFPTrunc(a(), resTy);
  case Opcode::SIToFP:
  case Opcode::UIToFP: {
    bool isSignedOp = opc == Opcode::SIToFP;
    // A bool to bf16 is the pattern of 1.0 (-1.0 signed) or +0: LLVM 19's
    // AMDGPU back end cannot select an i1 -> bf16 conversion, and InstCombine
    // folds a detour through fp32 back into one.
    if (resTy->isBFloatTy() && a()->getType()->isIntegerTy(1))
      return b.CreateBitCast(
          b.CreateSelect(a(), b.getInt16(isSignedOp ? 0xbf80 : 0x3f80), b.getInt16(0)), resTy);
    return isSignedOp ? b.CreateSIToFP(a(), resTy) : b.CreateUIToFP(a(), resTy);
  }
  case Opcode::FPToSI:
    return b.CreateFPToSI(a(), resTy);
  case Opcode::FPToUI:
    return b.CreateFPToUI(a(), resTy);
  case Opcode::Bitcast:
    if (a()->getType()->isPointerTy())
      return b.CreateAddrSpaceCast(a(), resTy);
    return b.CreateBitCast(a(), resTy);
  case Opcode::PtrToInt:
    return b.CreatePtrToInt(a(), resTy);
  case Opcode::IntToPtr:
    return b.CreateIntToPtr(a(), resTy);
  case Opcode::Select:
    return b.CreateSelect(ops[0], ops[1], ops[2]);
  case Opcode::AddPtr: {
    Type *pointee = cast<PointerType>(operandType->elementType())->pointee();
    llvm::Value *offset = ops[1];
    llvm::Type *i64 = b.getInt64Ty();
    // The offset's own signedness decides how it widens (lowerElementwise
    // marks unsigned offsets).
    offset = offset->getType() == i64          ? offset
             : attrs.has("tk.unsigned_offset") ? b.CreateZExt(offset, i64)
                                               : b.CreateSExt(offset, i64);
    return b.CreateGEP(llvmElementType(b.getContext(), pointee), ops[0], offset);
  }
  case Opcode::Max:
  case Opcode::Min: {
    bool isMax = opc == Opcode::Max;
    if (!isFloat)
      return b.CreateBinaryIntrinsic(isMax ? (sign ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                                           : (sign ? llvm::Intrinsic::smin : llvm::Intrinsic::umin),
                                     ops[0], ops[1]);
    bool propagate = attrs.getString("nan").value_or("propagate") == "propagate";
    return b.CreateBinaryIntrinsic(
        isMax ? (propagate ? llvm::Intrinsic::maximum : llvm::Intrinsic::maxnum)
              : (propagate ? llvm::Intrinsic::minimum : llvm::Intrinsic::minnum),
        ops[0], ops[1]);
  }
  case Opcode::Abs:
    if (!isFloat)
      return sign ? b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a(), b.getFalse()) : a();
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a());
  case Opcode::Floor:
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a());
  case Opcode::Ceil:
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a());
  case Opcode::Sqrt:
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a());
  case Opcode::Fma:
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {a()->getType()}, {ops[0], ops[1], ops[2]});
  case Opcode::Exp:
  case Opcode::Exp2:
  case Opcode::Log:
  case Opcode::Log2:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Rsqrt:
  case Opcode::Erf: {
    llvm::Type *t = a()->getType();
    if (t->isDoubleTy()) // IEEE-accurate through libdevice (or ROCm's ocml on amdgcn)
      return target().callLibdevice(b, libdeviceMathName(opc), {a()}, t);
    // 16-bit floats: compute in fp32, round once.
    llvm::Value *x = t->isFloatTy() ? a() : b.CreateFPExt(a(), b.getFloatTy());
    llvm::Value *r = nullptr;
    auto approx = [&](ApproxF32 fn, llvm::Value *v) { return target().approxF32(b, fn, v); };
    auto f32 = [&](double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); };
    switch (opc) {
    case Opcode::Exp:
      r = approx(ApproxF32::Exp2, b.CreateFMul(x, f32(M_LOG2E)));
      break;
    case Opcode::Exp2:
      r = approx(ApproxF32::Exp2Reflect, x);
      break;
    case Opcode::Log:
      r = b.CreateFMul(approx(ApproxF32::Log2, x), f32(M_LN2));
      break;
    case Opcode::Log2:
      r = approx(ApproxF32::Log2, x);
      break;
    case Opcode::Sin:
      r = approx(ApproxF32::Sin, x);
      break;
    case Opcode::Cos:
      r = approx(ApproxF32::Cos, x);
      break;
    case Opcode::Rsqrt:
      r = approx(ApproxF32::Rsqrt, x);
      break;
    default:
      r = erfApprox(b, target(), x);
      break;
    }
    return t->isFloatTy() ? r : b.CreateFPTrunc(r, t);
  }
  default:
    return nullptr;
  }
}

bool FunctionLowering::lowerElementwise(Operation &op) {
  switch (op.opcode()) {
  case Opcode::Constant: {
    Type *t = op.result()->type();
    llvm::Type *et = elementType(t);
    const Attribute *v = op.attrs().get("value");
    if (DType d = t->elementType()->isScalar() ? t->dtype() : DType::I64; isFp8(d)) {
      double x = v->isFloat() ? v->getFloat() : static_cast<double>(v->getInt());
      llvm::Value *c = llvm::ConstantInt::get(et, doubleToFp8(x, d));
      int64_t n = t->isTensor() ? threadMap(op.result()).numRegisters() : 1;
      set(op.result(), Regs(static_cast<size_t>(n), c));
      return true;
    }
    llvm::Value *c = v->isFloat() ? llvm::ConstantFP::get(et, v->getFloat())
                     : et->isFloatingPointTy()
                         ? llvm::ConstantFP::get(et, static_cast<double>(v->getInt()))
                         : llvm::ConstantInt::get(et, static_cast<uint64_t>(v->getInt()), true);
    int64_t n = t->isTensor() ? threadMap(op.result()).numRegisters() : 1;
    set(op.result(), Regs(static_cast<size_t>(n), c));
    return true;
  }
  case Opcode::SpecialRegister:
    set(op.result(), {target_.specialRegister(b_, *op.attrs().getString("name"))});
    return true;
  case Opcode::ProgramId:
  case Opcode::NumPrograms: {
    int axis = static_cast<int>(*op.attrs().getInt("axis"));
    set(op.result(),
        {op.is(Opcode::ProgramId) ? target_.programId(b_, axis) : target_.numPrograms(b_, axis)});
    return true;
  }
  default:
    break;
  }
  if (!op.hasTrait(OpTrait::Elementwise) || op.numResults() != 1)
    return unsupported(op, "");
  if (op.is(Opcode::FPExt) || op.is(Opcode::FPTrunc)) {
    DType f = op.operand(0)->type()->dtype(), t = op.result()->type()->dtype();
    DType fp8 = isFp8(f) ? f : t;
    if (t == DType::F8E4B15) {
      diag_.error(op.loc(), fmt::format("the GPU back end cannot convert to fp8e4b15 (Triton "
                                        "supports it only before sm_90); use fp8e4nv or fp8e5"));
      return false;
    }
    if ((isFp8(f) || isFp8(t)) && fp8 != DType::F8E4B15 && !target_.hasFp8Conversions()) {
      diag_.error(op.loc(),
                  fmt::format("{} conversions need sm_89 or newer (NVIDIA); the target is {}",
                              dtypeName(fp8), target_.archName()));
      return false;
    }
  }
  // addptr widens its offset by the offset's signedness.
  AttrDict attrs = op.attrs();
  if (op.is(Opcode::AddPtr) && !isSigned(op.operand(1)->type()))
    attrs.set("tk.unsigned_offset", true);
  Type *operandType = op.operand(op.is(Opcode::Select) ? 1 : 0)->type();
  Type *resultType = op.result()->type();
  size_t n = get(op.operand(0)).size();
  Regs out;
  if (op.is(Opcode::Div) && hasUniformDivisor(op, get(op.operand(1)))) {
    UniformDivisor d = uniformDivisor(b_, target(), get(op.operand(1))[0]);
    for (llvm::Value *x : get(op.operand(0)))
      out.push_back(divideByUniform(b_, x, d));
    set(op.result(), std::move(out));
    return true;
  }
  // Registers whose operands are the same values share one result: an
  // operand broadcast along a dimension repeats its registers, so
  // `offs_m[:, None] * stride` on a 128x128 tile is one multiply per row the
  // thread holds, not one per element, and so is everything computed from
  // it. LLVM's CSE finds the same, but only after its first passes have
  // walked every copy (with the coordinates below, the 128x128x32 matmul's
  // IR as lowered has 5326 instead of 7161 instructions, the PTX is the
  // same). Elementwise ops have no side effects, so sharing is exact.
  // Registers that axis info proves equal to an earlier one (constancy) take
  // its result without computing their own (constancyLeaders, ir/Layout.h):
  // the mask `cols < N` of a 1024-wide fp16 row with N a multiple of 16 is
  // one compare per 8-element run instead of eight (an add and a compare
  // each). LLVM cannot find that itself: it does not know N's divisibility.
  std::vector<int64_t> leader;
  if (resultType->isTensor())
    leader = constancyLeaders(threadMap(op.result()), axis_.get(op.result()).constancy);
  assert((leader.empty() || leader.size() == n) && "elementwise result in another layout");
  std::map<Regs, llvm::Value *> computed;
  Regs args(op.numOperands());
  for (size_t r = 0; r < n; ++r) {
    if (!leader.empty() && leader[r] != static_cast<int64_t>(r)) {
      out.push_back(out[static_cast<size_t>(leader[r])]);
      continue;
    }
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Regs &regs = get(op.operand(i));
      assert(regs.size() == n && "elementwise operands in different layouts");
      args[i] = regs[r];
    }
    llvm::Value *&res = computed[args];
    if (!res)
      res = scalarOp(op.opcode(), attrs, operandType, resultType, args);
    if (!res)
      return unsupported(op, "on " + operandType->elementType()->str());
    out.push_back(res);
  }
  set(op.result(), std::move(out));
  return true;
}

bool FunctionLowering::lowerShape(Operation &op) {
  Value *res = op.result();
  switch (op.opcode()) {
  case Opcode::MakeRange: {
    int64_t start = *op.attrs().getInt("start");
    Regs out;
    for (const auto &c : coordinates(res))
      out.push_back(start == 0 ? c[0]
                               : b_.CreateAdd(c[0], b_.getInt32(static_cast<uint32_t>(start))));
    set(res, std::move(out));
    return true;
  }
  case Opcode::Splat: {
    int64_t n = threadMap(res).numRegisters();
    set(res, Regs(static_cast<size_t>(n), get(op.operand(0))[0]));
    return true;
  }
  case Opcode::Broadcast:
  case Opcode::ExpandDims: {
    Value *in = op.operand(0);
    ThreadMap outMap = threadMap(res), inMap = threadMap(in);
    bool expand = op.is(Opcode::ExpandDims);
    unsigned axis = expand ? static_cast<unsigned>(*op.attrs().getInt("axis")) : 0;
    // The result's register k-vector, with broadcast dimensions at 0 (every
    // k there is the one element) or the new dimension dropped, names the
    // operand register holding the same element: the layouts agree on all
    // other dimensions.
    auto *slice = dyn_cast<SliceLayout>(layoutOf(in));
    bool related = expand ? slice && slice->dim() == axis && slice->parent() == layoutOf(res)
                          : layoutOf(in) == layoutOf(res);
    if (!related)
      return unsupported(op, "between unrelated layouts");
    const Regs &src = get(in);
    Regs out;
    for (int64_t r = 0; r < outMap.numRegisters(); ++r) {
      std::vector<int64_t> k = outMap.registerIndex(r);
      if (expand) {
        k.erase(k.begin() + axis);
      } else {
        for (unsigned d = 0; d < k.size(); ++d)
          if (in->type()->shape()[d] == 1)
            k[d] = 0;
      }
      out.push_back(src[static_cast<size_t>(inMap.registerOf(k))]);
    }
    set(res, std::move(out));
    return true;
  }
  default:
    return unsupported(op, "");
  }
}

} // namespace tk
