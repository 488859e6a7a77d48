// The math and elementwise builtins: casts, tk.where, maximum / minimum /
// clamp (with tk.PropagateNan), the unary math functions (exp ... erf, abs and Python's abs), fma,
// and those built from other ops: sigmoid, softmax, cdiv, umulhi, div_rn and
// fdiv.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

#include <cmath>

namespace tk::astir {

using namespace ast;

Val BuiltinCall::elementwiseMath(Opcode op, bool floatsOnly) {
  Value *x = tensor(args.sig->params[0].name);
  if (!x)
    return Val::error();
  if (x->type()->isPointerLike() || (floatsOnly && !x->type()->isFloatLike()))
    return fail(fmt::format("{} needs a {} operand, got {}", name, floatsOnly ? "float" : "numeric",
                            typeStr(x)));
  return Val::dyn(b.unary(op, loc, x));
}

Val BuiltinCall::minMax(bool isMax, const Val &x, const Val &y, const char *nan) {
  Value *a, *c;
  if (!L.unify(x, y, loc, a, c, isMax ? "maximum" : "minimum"))
    return Val::error();
  if (a->type()->isPointerLike())
    return fail(fmt::format("{} needs numeric operands, got {}", name, typeStr(a)));
  return Val::dyn(isMax ? b.max(loc, a, c, nan) : b.min(loc, a, c, nan));
}

const char *BuiltinCall::nanMode() {
  if (!args.has("propagate_nan"))
    return "number";
  Val p = args.get("propagate_nan");
  const EnumMemberInfo *none = lookupEnumMember(BuiltinId::PropagateNan, "NONE");
  const EnumMemberInfo *all = lookupEnumMember(BuiltinId::PropagateNan, "ALL");
  if (p.kind == Val::Kind::Int && p.i == none->value)
    return "number";
  if (p.kind == Val::Kind::Int && p.i == all->value)
    return "propagate";
  L.fail(args.loc("propagate_nan"),
         fmt::format("{}: propagate_nan must be tk.PropagateNan.NONE or tk.PropagateNan.ALL, got "
                     "{}",
                     name, describe(p)));
  return nullptr;
}

// The high half of the unsigned double-width product (Triton's umulhi is
// unsigned whatever the signedness: mul.hi.u32 / .u64). 32-bit operands
// multiply in u64; 64-bit ones from their 32-bit halves, whose partial
// products fit in u64:
//   hi = ah*bh + (ah*bl >> 32) + (al*bh >> 32)
//        + ((al*bl >> 32) + (ah*bl & M) + (al*bh & M)) >> 32
Value *BuiltinCall::umulhi(Value *x, Value *y) {
  Type *elem = x->type()->elementType();
  Type *u32 = ctx.scalar(DType::U32), *u64 = ctx.scalar(DType::U64);
  auto k = [&](int64_t v, Value *like) { return b.constantInt(loc, v, like->type()); };
  if (dtypeBits(elem->dtype()) == 32) {
    Value *xw = L.castTo(L.castTo(x, u32, loc, true), u64, loc);
    Value *yw = L.castTo(L.castTo(y, u32, loc, true), u64, loc);
    Value *p = b.binary(Opcode::LShr, loc, b.mul(loc, xw, yw), k(32, xw));
    return L.castTo(L.castTo(p, u32, loc), elem, loc, true);
  }
  Value *xu = L.castTo(x, u64, loc, true), *yu = L.castTo(y, u64, loc, true);
  Value *mask = k(0xFFFFFFFF, xu), *s32 = k(32, xu);
  Value *al = b.binary(Opcode::And, loc, xu, mask), *ah = b.binary(Opcode::LShr, loc, xu, s32);
  Value *bl = b.binary(Opcode::And, loc, yu, mask), *bh = b.binary(Opcode::LShr, loc, yu, s32);
  Value *ll = b.mul(loc, al, bl), *lh = b.mul(loc, al, bh), *hl = b.mul(loc, ah, bl);
  Value *mid =
      b.add(loc, b.binary(Opcode::LShr, loc, ll, s32),
            b.add(loc, b.binary(Opcode::And, loc, lh, mask), b.binary(Opcode::And, loc, hl, mask)));
  Value *hi = b.add(
      loc, b.mul(loc, ah, bh),
      b.add(loc,
            b.add(loc, b.binary(Opcode::LShr, loc, lh, s32), b.binary(Opcode::LShr, loc, hl, s32)),
            b.binary(Opcode::LShr, loc, mid, s32)));
  return L.castTo(hi, elem, loc, true);
}

std::optional<Val> BuiltinCall::lowerMath() {
  switch (info.id) {
  case BuiltinId::Cast: {
    Value *x = tensor("input");
    Val d = args.get("dtype");
    if (!x)
      return Val::error();
    if (d.kind != Val::Kind::DType)
      return L.fail(args.loc("dtype"), fmt::format("dtype must be a dtype, got {}", describe(d)));
    bool bitcast = args.has("bitcast") && L.constTruth(args.get("bitcast")).value_or(false);
    Value *r = L.castTo(x, d.type, loc, bitcast);
    return r ? Val::dyn(r) : Val::error();
  }
  case BuiltinId::Where: {
    Val cond = args.get("condition");
    Value *x, *y;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.where"))
      return Val::error();
    Value *c = L.materialize(cond, args.loc("condition"));
    if (!c)
      return Val::error();
    if (c->type()->elementType() != ctx.i1())
      c = L.castTo(c, ctx.i1(), args.loc("condition"));
    std::optional<std::vector<int64_t>> shape =
        L.broadcastShapes(c->type()->shape(), x->type()->shape(), loc);
    if (!shape)
      return Val::error();
    return Val::dyn(b.select(loc, L.broadcastTo(c, *shape, loc), L.broadcastTo(x, *shape, loc),
                             L.broadcastTo(y, *shape, loc)));
  }
  case BuiltinId::Maximum:
  case BuiltinId::Minimum: {
    // tk.PropagateNan.ALL: NaN wins (relu(NaN) = NaN), else the number.
    const char *nan = nanMode();
    if (!nan)
      return Val::error();
    return minMax(info.id == BuiltinId::Maximum, args.get("x"), args.get("y"), nan);
  }
  case BuiltinId::Clamp: {
    // min(max(x, lo), hi) with one NaN rule: with .ALL a NaN x stays NaN.
    const char *nan = nanMode();
    if (!nan)
      return Val::error();
    Val lo = minMax(true, args.get("x"), args.get("min"), nan);
    return lo.ok() ? minMax(false, lo, args.get("max"), nan) : lo;
  }
  case BuiltinId::Exp:
    return elementwiseMath(Opcode::Exp, true);
  case BuiltinId::Exp2:
    return elementwiseMath(Opcode::Exp2, true);
  case BuiltinId::Log:
    return elementwiseMath(Opcode::Log, true);
  case BuiltinId::Log2:
    return elementwiseMath(Opcode::Log2, true);
  case BuiltinId::Sqrt:
  case BuiltinId::SqrtRn:
    return elementwiseMath(Opcode::Sqrt, true);
  case BuiltinId::Rsqrt:
    return elementwiseMath(Opcode::Rsqrt, true);
  case BuiltinId::Sin:
    return elementwiseMath(Opcode::Sin, true);
  case BuiltinId::Cos:
    return elementwiseMath(Opcode::Cos, true);
  case BuiltinId::Floor:
    return elementwiseMath(Opcode::Floor, true);
  case BuiltinId::Ceil:
    return elementwiseMath(Opcode::Ceil, true);
  case BuiltinId::Erf:
    return elementwiseMath(Opcode::Erf, true);
  case BuiltinId::Abs:
  case BuiltinId::PyAbs: {
    Val x = args.get(args.sig->params[0].name);
    if (x.kind == Val::Kind::Int)
      return Val::ofInt(x.i < 0 ? -x.i : x.i);
    if (x.kind == Val::Kind::Float)
      return Val::ofFloat(std::fabs(x.f));
    // fp8 has no arithmetic, but |x| is its pattern without the sign bit
    // (NaN stays NaN in every fp8 format).
    if (Value *v = x.isDyn() ? x.v : nullptr;
        v && v->type()->elementType()->isScalar() && isFp8(v->type()->dtype())) {
      Type *u8 = ctx.scalar(DType::U8);
      Value *bits = L.castTo(v, u8, loc, true);
      Value *mask = b.constantInt(loc, 0x7F, ctx.withElement(v->type(), u8));
      return Val::dyn(
          L.castTo(b.binary(Opcode::And, loc, bits, mask), v->type()->elementType(), loc, true));
    }
    return elementwiseMath(Opcode::Abs, false);
  }
  case BuiltinId::Fma: {
    Value *x, *y, *z, *x2;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.fma") ||
        !L.unify(Val::dyn(x), args.get("z"), loc, x2, z, "tk.fma") ||
        !L.unify(Val::dyn(y), Val::dyn(z), loc, y, z, "tk.fma"))
      return Val::error();
    if (!x2->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.fma needs float operands, got {}", typeStr(x2)));
    return Val::dyn(b.fma(loc, x2, y, z));
  }
  case BuiltinId::Sigmoid: {
    Val x = args.get("x");
    Value *v = L.materialize(x, loc);
    if (!v || !v->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.sigmoid needs a float operand, got {}", describe(x)));
    Value *e = b.unary(Opcode::Exp, loc, b.unary(Opcode::Neg, loc, v));
    Val den = L.binary(BinaryOp::Add, Val::ofFloat(1.0), Val::dyn(e), loc);
    return L.binary(BinaryOp::Div, Val::ofFloat(1.0), den, loc);
  }
  case BuiltinId::Cdiv: {
    Val x = args.get("x"), d = args.get("div");
    Val sum = L.binary(BinaryOp::Add, x, d, loc);
    Val minus = L.binary(BinaryOp::Sub, sum, Val::ofInt(1), loc);
    // Constants floor-divide (Python); IR values divide as C does, which
    // agrees for the non-negative sizes cdiv is meant for.
    return L.binary(BinaryOp::FloorDiv, minus, d, loc);
  }
  case BuiltinId::Softmax: {
    // Triton's: exp(x - max) / sum along dim (0 when None). The max and the
    // sum keep their dimension whatever keep_dims says, so a row softmax of
    // a 2-D tile (dim=1) broadcasts back along the right axis.
    Value *x = tensor("x");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || !x->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.softmax needs a float tensor, got {}", typeStr(x)));
    Val d = args.get("dim");
    std::optional<int64_t> a =
        constInt(L, d.kind == Val::Kind::None ? Val::ofInt(0) : d, args.loc("dim"), "dim");
    std::optional<int> axis = a ? axisFor(L, *a, x->type()->rank(), loc, x->type()) : std::nullopt;
    if (!axis)
      return Val::error();
    auto keep = [&](Value *r) { return r->type()->isTensor() ? b.expandDims(loc, r, *axis) : r; };
    Val z =
        L.binary(BinaryOp::Sub, Val::dyn(x), Val::dyn(keep(b.reduce(loc, x, *axis, "max"))), loc);
    if (!z.isDyn())
      return Val::error();
    Value *num = b.unary(Opcode::Exp, loc, z.v);
    Val q = L.binary(BinaryOp::Div, Val::dyn(num), Val::dyn(keep(b.reduce(loc, num, *axis, "sum"))),
                     loc);
    Val ieee = args.get("ieee_rounding");
    if (ieee.kind == Val::Kind::Bool && ieee.i && q.isDyn() && q.v->definingOp() &&
        q.v->definingOp()->is(Opcode::Div))
      q.v->definingOp()->setAttr("rounding", "rn");
    return q;
  }
  case BuiltinId::Umulhi: {
    Value *x, *y;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.umulhi"))
      return Val::error();
    if (!x->type()->isIntLike() || x->type()->elementType() == ctx.i1() ||
        (dtypeBits(x->type()->dtype()) != 32 && dtypeBits(x->type()->dtype()) != 64))
      return L.fail(
          loc, fmt::format("tk.umulhi needs 32- or 64-bit integer operands, got {}", typeStr(x)));
    return Val::dyn(umulhi(x, y));
  }
  case BuiltinId::DivRn:
  case BuiltinId::Fdiv: {
    // `/` on floats may be approximate on the GPU (docs/codegen/math.md);
    // div_rn and fdiv(ieee_rounding=True) ask for the correctly rounded one.
    Val q = L.binary(BinaryOp::Div, args.get("x"), args.get("y"), loc);
    Val ieee = args.get("ieee_rounding");
    bool rn = info.id == BuiltinId::DivRn || (ieee.kind == Val::Kind::Bool && ieee.i);
    if (rn && q.isDyn() && q.v->definingOp() && q.v->definingOp()->is(Opcode::Div))
      q.v->definingOp()->setAttr("rounding", "rn");
    return q;
  }
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
