// Expressions: constant folding with Python's semantics, and tensor
// arithmetic with NumPy broadcasting and Triton's type promotion
// (docs/semantics.md states the rules; each has a unit test).
#include "ir/ASTToIRLowerer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tk::astir {

using namespace ast;

bool Val::hasDyn() const {
  if (kind == Kind::Dyn)
    return true;
  for (const Val &e : elts)
    if (e.hasDyn())
      return true;
  return false;
}

std::string describe(const Val &v) {
  switch (v.kind) {
  case Val::Kind::Error:
    return "<error>";
  case Val::Kind::Dyn:
    return v.v->type()->str();
  case Val::Kind::None:
    return "None";
  case Val::Kind::Bool:
    return v.i ? "constexpr True" : "constexpr False";
  case Val::Kind::Int:
    return fmt::format("constexpr int {}", v.i);
  case Val::Kind::Float:
    return fmt::format("constexpr float {}", v.f);
  case Val::Kind::Str:
    return fmt::format("string '{}'", v.s);
  case Val::Kind::DType:
    return fmt::format("dtype {}", v.type->str());
  case Val::Kind::Tuple: {
    std::string s = "(";
    for (size_t i = 0; i < v.elts.size(); ++i)
      s += (i ? ", " : "") + describe(v.elts[i]);
    return s + (v.elts.size() == 1 ? ",)" : ")");
  }
  case Val::Kind::Func:
    return fmt::format("function '{}'", v.fn->name);
  case Val::Kind::Module:
    return "module 'tk'";
  case Val::Kind::Builtin:
    return qualifiedName(*v.builtin);
  case Val::Kind::ConstexprType:
    return fmt::format("constexpr_type[{}]", describe(v.elts[0]));
  case Val::Kind::Desc: {
    std::string s;
    for (size_t i = 0; i < v.dims.size(); ++i)
      s += fmt::format("{}{}", i ? "x" : "", v.dims[i]);
    return fmt::format("{}<{}x{}>", v.i ? "tensor_descriptor" : "block_ptr", s,
                       v.type ? v.type->str() : "?");
  }
  }
  return "?";
}

namespace {

enum class KindRank { Bool, Int, Float };

KindRank rankOf(DType d) {
  if (d == DType::I1)
    return KindRank::Bool;
  return isFloat(d) ? KindRank::Float : KindRank::Int;
}

// Python's floor division and modulo on integers (the constexpr semantics).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}
int64_t floorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

bool isNumber(const Val &v) {
  return v.kind == Val::Kind::Int || v.kind == Val::Kind::Bool || v.kind == Val::Kind::Float;
}
double asDouble(const Val &v) { return v.kind == Val::Kind::Float ? v.f : double(v.i); }

const char *cmpSpelling(CmpOp op) { return cmpOpSpelling(op); }

} // namespace

Val Lowerer::fail(SourceLoc loc, std::string message) {
  diag_.error(loc, std::move(message));
  return Val::error();
}

std::optional<bool> Lowerer::constTruth(const Val &v) {
  switch (v.kind) {
  case Val::Kind::None:
    return false;
  case Val::Kind::Bool:
  case Val::Kind::Int:
    return v.i != 0;
  case Val::Kind::Float:
    return v.f != 0;
  case Val::Kind::Str:
    return !v.s.empty();
  case Val::Kind::Tuple:
    return !v.elts.empty();
  case Val::Kind::DType:
  case Val::Kind::Func:
  case Val::Kind::Module:
  case Val::Kind::Builtin:
  case Val::Kind::ConstexprType:
    return true;
  default:
    return std::nullopt;
  }
}

//===----------------------------------------------------------------------===//
// Types: materialising constants, casts, promotion
//===----------------------------------------------------------------------===//

Value *Lowerer::materialize(const Val &v, SourceLoc loc, Type *like) {
  if (v.kind == Val::Kind::Dyn)
    return v.v;
  Type *elem = like ? like->elementType() : nullptr;
  if (elem && elem->isPointer())
    elem = nullptr;
  switch (v.kind) {
  case Val::Kind::Bool:
    return b_.constantInt(loc, v.i, ctx_.i1());
  case Val::Kind::Int: {
    // A Python int takes the type of an integer partner, and of a float
    // partner (1 + x with x fp16 stays fp16); alone it is i32 when it fits.
    if (elem && rankOf(elem->dtype()) != KindRank::Bool) {
      if (elem->isFloatLike())
        return b_.constantFloat(loc, double(v.i), elem);
      return b_.constantInt(loc, v.i, elem);
    }
    bool fits32 =
        v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max();
    return b_.constantInt(loc, v.i, fits32 ? ctx_.i32() : ctx_.i64());
  }
  case Val::Kind::Float:
    if (elem && elem->isFloatLike())
      return b_.constantFloat(loc, v.f, elem);
    return b_.constantFloat(loc, v.f, ctx_.f32());
  default:
    diag_.error(loc, fmt::format("expected a tensor or a number, got {}", describe(v)));
    return nullptr;
  }
}

Type *Lowerer::constantDType(const Val &v) {
  switch (v.kind) {
  case Val::Kind::Bool:
    return ctx_.i1();
  case Val::Kind::Int:
    if (v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max())
      return ctx_.i32();
    if (v.i >= 0 && v.i <= std::numeric_limits<uint32_t>::max())
      return ctx_.scalar(DType::U32);
    return ctx_.i64();
  case Val::Kind::Float: {
    double a = std::fabs(v.f);
    bool fp32 = std::isinf(a) || a == 0 || std::isnan(a) ||
                (a >= std::numeric_limits<float>::min() && a <= std::numeric_limits<float>::max());
    return fp32 ? ctx_.f32() : ctx_.scalar(DType::F64);
  }
  default:
    return nullptr;
  }
}

Value *Lowerer::castTo(Value *v, Type *elem, SourceLoc loc, bool bitcast) {
  Type *from = v->type()->elementType();
  if (from == elem)
    return v;
  Type *to = ctx_.withElement(v->type(), elem);
  if (bitcast) {
    bool ptrs = from->isPointer() || elem->isPointer();
    if (ptrs || dtypeBits(from->dtype()) != dtypeBits(elem->dtype())) {
      diag_.error(loc, fmt::format("cannot bitcast {} to {}: the bit widths differ",
                                   v->type()->str(), to->str()));
      return nullptr;
    }
    return b_.cast(Opcode::Bitcast, loc, v, to);
  }
  if (from->isPointer() || elem->isPointer()) {
    if (from->isPointer() && elem->isPointer())
      return b_.cast(Opcode::Bitcast, loc, v, to);
    if (from->isPointer() && isInteger(elem->dtype()) && elem != ctx_.i1())
      return b_.cast(Opcode::PtrToInt, loc, v, to);
    if (elem->isPointer() && isInteger(from->dtype()) && from != ctx_.i1())
      return b_.cast(Opcode::IntToPtr, loc, v, to);
    diag_.error(loc, fmt::format("cannot cast {} to {}", v->type()->str(), to->str()));
    return nullptr;
  }
  DType f = from->dtype(), t = elem->dtype();
  // fp8 converts directly only to and from fp16, bf16 and fp32 (FPExt,
  // FPTrunc); to anything else (ints, bool, fp64, another fp8) it goes
  // through fp32, which holds every fp8 value exactly.
  if (isFp8(f) || isFp8(t)) {
    auto wideFloat = [](DType d) { return d == DType::F16 || d == DType::BF16 || d == DType::F32; };
    if (!(isFp8(f) ? wideFloat(t) : wideFloat(f))) {
      Value *mid = castTo(v, ctx_.f32(), loc);
      return mid ? castTo(mid, elem, loc) : nullptr;
    }
  }
  unsigned fb = dtypeBits(f), tb = dtypeBits(t);
  // To bool: x != 0, as Python's bool(x) and Triton do.
  if (t == DType::I1) {
    Value *zero =
        isFloat(f) ? b_.constantFloat(loc, 0.0, v->type()) : b_.constantInt(loc, 0, v->type());
    return isFloat(f) ? b_.cmpf(loc, "une", v, zero) : b_.cmpi(loc, "ne", v, zero);
  }
  if (isFloat(f) && isFloat(t)) {
    if (tb > fb)
      return b_.cast(Opcode::FPExt, loc, v, to);
    return b_.cast(Opcode::FPTrunc, loc, v, to); // also fp16 <-> bf16
  }
  if (isFloat(f))
    return b_.cast(isUnsigned(t) ? Opcode::FPToUI : Opcode::FPToSI, loc, v, to);
  if (isFloat(t))
    return b_.cast(isSigned(f) ? Opcode::SIToFP : Opcode::UIToFP, loc, v, to);
  if (tb > fb)
    return b_.cast(isSigned(f) ? Opcode::SExt : Opcode::ZExt, loc, v, to);
  if (tb < fb)
    return b_.cast(Opcode::Trunc, loc, v, to);
  return b_.cast(Opcode::Bitcast, loc, v, to); // i32 <-> u32
}

Type *Lowerer::promote(Type *a, Type *b, SourceLoc loc, const char *what) {
  a = a->elementType();
  b = b->elementType();
  if (a == b)
    return a;
  if (a->isPointer() || b->isPointer()) {
    diag_.error(loc, fmt::format("invalid operands to '{}': {} and {}", what, a->str(), b->str()));
    return nullptr;
  }
  DType x = a->dtype(), y = b->dtype();
  KindRank rx = rankOf(x), ry = rankOf(y);
  // The higher kind wins (bool < int < float).
  if (rx != ry)
    return rx > ry ? a : b;
  if (rx == KindRank::Float) {
    unsigned bx = dtypeBits(x), by = dtypeBits(y);
    if (bx == by) // fp16 with bf16: neither holds the other, fp32 holds both
      return ctx_.f32();
    return bx > by ? a : b;
  }
  // Integers: the wider wins; at equal width, unsigned wins (as in C).
  unsigned bx = dtypeBits(x), by = dtypeBits(y);
  if (bx != by)
    return bx > by ? a : b;
  return isUnsigned(x) ? a : b;
}

std::optional<std::vector<int64_t>> Lowerer::broadcastShapes(const std::vector<int64_t> &a,
                                                             const std::vector<int64_t> &b,
                                                             SourceLoc loc) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align on the right; a missing dimension counts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      diag_.error(loc, fmt::format("cannot broadcast {} with {}: dimension {} is {} and {}",
                                   shapeStr(a), shapeStr(b), i, da, db));
      return std::nullopt;
    }
    out[i] = da == 1 ? db : da;
  }
  // [2^31, 1] with [1, 2^31] is two valid shapes and one too large.
  if (std::optional<std::string> error = tensorShapeError(out)) {
    diag_.error(loc, fmt::format("broadcasting {} with {}: {}", shapeStr(a), shapeStr(b), *error));
    return std::nullopt;
  }
  return out;
}

Value *Lowerer::broadcastTo(Value *v, const std::vector<int64_t> &shape, SourceLoc loc) {
  Type *t = v->type();
  if (t->shape() == shape)
    return v;
  // Every tensor the lowering widens passes here (tk.zeros, tk.join, a dot's
  // accumulator), so no type past the bound reaches the builder.
  if (std::optional<std::string> error = tensorShapeError(shape)) {
    diag_.error(loc, *error);
    return nullptr;
  }
  if (!t->isTensor())
    return b_.splat(loc, v, shape);
  if (t->rank() > shape.size()) {
    diag_.error(loc,
                fmt::format("cannot broadcast {} to {}", shapeStr(t->shape()), shapeStr(shape)));
    return nullptr;
  }
  while (v->type()->rank() < shape.size())
    v = b_.expandDims(loc, v, 0);
  const std::vector<int64_t> &have = v->type()->shape();
  for (size_t i = 0; i < shape.size(); ++i)
    if (have[i] != shape[i] && have[i] != 1) {
      diag_.error(loc,
                  fmt::format("cannot broadcast {} to {}", shapeStr(t->shape()), shapeStr(shape)));
      return nullptr;
    }
  return b_.broadcast(loc, v, shape);
}

// Triton's rule for a compile-time int beside an integer operand (a tensor
// or a run-time scalar): the int takes the operand's type, so it must be in
// that type's range; otherwise it would wrap silently (x + 2**40 with x
// int32 is an error, as in Triton). One difference, kept on purpose: a
// negative int beside an unsigned operand is its two's-complement pattern
// (`-64 >> y` with y uint16; Triton refuses any negative there), down to
// -2^(bits-1). A number assigned to a plain variable is exempt: Triton makes
// it a tensor of its own type, which promotes instead.
bool Lowerer::constantFits(const Val &c, Value *partner, SourceLoc loc, const char *what) {
  if (c.kind != Val::Kind::Int || c.lifted || !partner)
    return true;
  Type *t = partner->type()->elementType();
  if (t->isPointer() || !isInteger(t->dtype()) || t->dtype() == DType::I1)
    return true;
  DType d = t->dtype();
  unsigned bits = dtypeBits(d);
  if (bits >= 64)
    return true; // every int64 fits (a uint64 operand takes negatives as patterns)
  int64_t lo = -(int64_t(1) << (bits - 1));
  int64_t hi = isUnsigned(d) ? (int64_t(1) << bits) - 1 : (int64_t(1) << (bits - 1)) - 1;
  if (c.i >= lo && c.i <= hi)
    return true;
  fail(loc, fmt::format("'{}': the constant {} is out of range for type {}, the type of the "
                        "other operand, which it takes (Triton's rule); convert that operand to "
                        "a wider type first",
                        what, c.i, dtypePythonName(d)));
  return false;
}

bool Lowerer::unify(Val a, Val b, SourceLoc loc, Value *&x, Value *&y, const char *what,
                    bool promoteTypes) {
  // Materialise a constant against the other side's type, so a Python
  // scalar does not widen a tensor of its own kind.
  x = a.isDyn() ? a.v : nullptr;
  y = b.isDyn() ? b.v : nullptr;
  if (!x && !a.isScalarConst())
    return fail(loc, fmt::format("invalid operand to '{}': {}", what, describe(a))).ok();
  if (!y && !b.isScalarConst())
    return fail(loc, fmt::format("invalid operand to '{}': {}", what, describe(b))).ok();
  if (promoteTypes &&
      ((!x && !constantFits(a, y, loc, what)) || (!y && !constantFits(b, x, loc, what))))
    return false;
  if (!x)
    x = materialize(a, loc, y ? y->type() : nullptr);
  if (!y)
    y = materialize(b, loc, x->type());
  if (!x || !y)
    return false;
  if (promoteTypes) {
    Type *elem = promote(x->type(), y->type(), loc, what);
    if (!elem)
      return false;
    x = castTo(x, elem, loc);
    y = castTo(y, elem, loc);
    if (!x || !y)
      return false;
  }
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(x->type()->shape(), y->type()->shape(), loc);
  if (!shape)
    return false;
  x = broadcastTo(x, *shape, loc);
  y = broadcastTo(y, *shape, loc);
  return x && y;
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

namespace {

// Folds `a op b` on two constants with Python's semantics; nullopt when the
// operator does not apply (the caller reports it).
std::optional<Val> foldBinary(BinaryOp op, const Val &a, const Val &b, std::string &error) {
  if (a.kind == Val::Kind::Str && b.kind == Val::Kind::Str && op == BinaryOp::Add)
    return Val::ofStr(a.s + b.s);
  if (a.kind == Val::Kind::Tuple && b.kind == Val::Kind::Tuple && op == BinaryOp::Add) {
    std::vector<Val> elts = a.elts;
    elts.insert(elts.end(), b.elts.begin(), b.elts.end());
    return Val::tuple(elts);
  }
  // Repetition, as Python: `(2,) * 3`, `3 * [2]`; a count <= 0 gives ().
  bool tupleTimesInt = a.kind == Val::Kind::Tuple && b.kind == Val::Kind::Int;
  if (op == BinaryOp::Mul &&
      (tupleTimesInt || (b.kind == Val::Kind::Tuple && a.kind == Val::Kind::Int))) {
    const Val &seq = tupleTimesInt ? a : b;
    int64_t count = tupleTimesInt ? b.i : a.i;
    constexpr int64_t kMaxRepeatedElements = 1 << 16;
    if (count > 0 && int64_t(seq.elts.size()) * count > kMaxRepeatedElements) {
      error = fmt::format("repeating a tuple of {} elements {} times gives more than {} elements",
                          seq.elts.size(), count, kMaxRepeatedElements);
      return std::nullopt;
    }
    std::vector<Val> elts;
    for (int64_t k = 0; k < count; ++k)
      elts.insert(elts.end(), seq.elts.begin(), seq.elts.end());
    return Val::tuple(elts);
  }
  if (!isNumber(a) || !isNumber(b))
    return std::nullopt;
  bool floats = a.kind == Val::Kind::Float || b.kind == Val::Kind::Float;
  if (floats || op == BinaryOp::Div) {
    double x = asDouble(a), y = asDouble(b);
    switch (op) {
    case BinaryOp::Add:
      return Val::ofFloat(x + y);
    case BinaryOp::Sub:
      return Val::ofFloat(x - y);
    case BinaryOp::Mul:
      return Val::ofFloat(x * y);
    case BinaryOp::Div:
      if (y == 0) {
        error = "division by zero in a constant expression";
        return std::nullopt;
      }
      return Val::ofFloat(x / y);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      if (y == 0) {
        error = "division by zero in a constant expression";
        return std::nullopt;
      }
      if (op == BinaryOp::FloorDiv)
        return Val::ofFloat(std::floor(x / y));
      return Val::ofFloat(x - std::floor(x / y) * y);
    case BinaryOp::Pow:
      return Val::ofFloat(std::pow(x, y));
    default:
      return std::nullopt;
    }
  }
  int64_t x = a.i, y = b.i, r = 0;
  bool overflow = false;
  switch (op) {
  case BinaryOp::Add:
    overflow = __builtin_add_overflow(x, y, &r);
    break;
  case BinaryOp::Sub:
    overflow = __builtin_sub_overflow(x, y, &r);
    break;
  case BinaryOp::Mul:
    overflow = __builtin_mul_overflow(x, y, &r);
    break;
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    if (y == 0) {
      error = "division by zero in a constant expression";
      return std::nullopt;
    }
    if (x == std::numeric_limits<int64_t>::min() && y == -1) {
      overflow = true;
      break;
    }
    r = op == BinaryOp::FloorDiv ? floorDiv(x, y) : floorMod(x, y);
    break;
  case BinaryOp::Pow:
    if (y < 0)
      return Val::ofFloat(std::pow(double(x), double(y)));
    r = 1;
    for (int64_t k = 0; k < y && !overflow; ++k)
      overflow = __builtin_mul_overflow(r, x, &r);
    break;
  case BinaryOp::LShift:
    if (y < 0 || y >= 63) {
      error = fmt::format("shift count {} is out of range in a constant expression", y);
      return std::nullopt;
    }
    overflow = __builtin_mul_overflow(x, int64_t(1) << y, &r);
    break;
  case BinaryOp::RShift:
    if (y < 0) {
      error = fmt::format("negative shift count {}", y);
      return std::nullopt;
    }
    r = y >= 63 ? (x < 0 ? -1 : 0) : x >> y;
    break;
  case BinaryOp::BitAnd:
    r = x & y;
    break;
  case BinaryOp::BitOr:
    r = x | y;
    break;
  case BinaryOp::BitXor:
    r = x ^ y;
    break;
  default:
    return std::nullopt;
  }
  if (overflow) {
    error = "constant expression overflows 64-bit integers";
    return std::nullopt;
  }
  bool bothBool = a.kind == Val::Kind::Bool && b.kind == Val::Kind::Bool;
  if (bothBool && (op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor))
    return Val::ofBool(r != 0);
  return Val::ofInt(r);
}

} // namespace

Val Lowerer::binary(BinaryOp op, Val a, Val b, SourceLoc loc) {
  if (!a.ok() || !b.ok())
    return Val::error();
  const char *spelling = binaryOpSpelling(op);
  if (a.isConst() && b.isConst()) {
    std::string error;
    if (std::optional<Val> r = foldBinary(op, a, b, error))
      return *r;
    if (!error.empty())
      return fail(loc, error);
    return fail(loc, fmt::format("unsupported operand types for '{}': {} and {}", spelling,
                                 describe(a), describe(b)));
  }
  if (op == BinaryOp::Pow)
    return fail(loc, "not supported yet: '**' on tensors; use tk.exp2 and tk.log2");
  if (op == BinaryOp::MatMul)
    return fail(loc, "not supported yet: '@' on tensors; use tk.dot(a, b)");

  // Pointer arithmetic: ptr + int, int + ptr, ptr - int.
  auto isPtr = [](const Val &v) { return v.isDyn() && v.v->type()->isPointerLike(); };
  if (isPtr(a) || isPtr(b)) {
    bool swap = !isPtr(a);
    if (swap && op != BinaryOp::Add)
      return fail(loc, fmt::format("invalid operands to '{}': {} and {}", spelling, describe(a),
                                   describe(b)));
    Val p = swap ? b : a, off = swap ? a : b;
    if (isPtr(off) || (op != BinaryOp::Add && op != BinaryOp::Sub))
      return fail(loc, fmt::format("invalid operands to '{}': {} and {}", spelling, describe(a),
                                   describe(b)));
    Value *o = materialize(off, loc);
    if (!o)
      return Val::error();
    if (!o->type()->isIntLike() || o->type()->elementType() == ctx_.i1())
      return fail(loc, fmt::format("pointer offsets must be integers, got {}", typeStr(o)));
    if (op == BinaryOp::Sub)
      o = b_.sub(loc, b_.constantInt(loc, 0, o->type()), o);
    std::optional<std::vector<int64_t>> shape =
        broadcastShapes(p.v->type()->shape(), o->type()->shape(), loc);
    if (!shape)
      return Val::error();
    Value *pp = broadcastTo(p.v, *shape, loc);
    Value *oo = broadcastTo(o, *shape, loc);
    if (!pp || !oo)
      return Val::error();
    return Val::dyn(b_.addptr(loc, pp, oo));
  }

  // Triton refuses `/`, `//` and `%` between integer tensors (scalar
  // arguments included) of different signedness rather than pick one; a
  // Python int does not take part in promotion, so `x % 3` is fine.
  if ((op == BinaryOp::Div || op == BinaryOp::FloorDiv || op == BinaryOp::Mod) && a.isDyn() &&
      b.isDyn()) {
    Type *ta = a.v->type(), *tb = b.v->type();
    auto isInt = [](Type *t) { return t->isIntLike() && !t->isPointerLike(); };
    // Triton counts bool (i1) as unsigned.
    auto unsignedInt = [](Type *t) { return !isSigned(t->dtype()); };
    if (isInt(ta) && isInt(tb) && unsignedInt(ta) != unsignedInt(tb))
      return fail(loc, fmt::format("Cannot use '{}' with {} and {} because they have different "
                                   "signedness; cast one of them to the other's signedness",
                                   spelling, describe(a), describe(b)));
  }

  Value *x, *y;
  // `/` on integers divides in fp32 (Triton); a float side decides otherwise.
  if (op == BinaryOp::Div) {
    if (!unify(a, b, loc, x, y, spelling))
      return Val::error();
    if (!x->type()->isFloatLike()) {
      x = castTo(x, ctx_.f32(), loc);
      y = castTo(y, ctx_.f32(), loc);
    }
    return Val::dyn(b_.div(loc, x, y));
  }
  if (!unify(a, b, loc, x, y, spelling))
    return Val::error();
  Type *t = x->type();
  bool isF = t->isFloatLike();
  bool isI = t->isIntLike();
  auto needInt = [&]() {
    // "invalid operands of type": Triton's wording, which programs and
    // Triton's tests match on.
    return fail(loc, fmt::format("invalid operands of type {} and {}: '{}' needs integer operands",
                                 describe(a), describe(b), spelling));
  };
  switch (op) {
  case BinaryOp::Add:
    return Val::dyn(b_.add(loc, x, y));
  case BinaryOp::Sub:
    return Val::dyn(b_.sub(loc, x, y));
  case BinaryOp::Mul:
    return Val::dyn(b_.mul(loc, x, y));
  case BinaryOp::FloorDiv:
    // C semantics on integer tensors (truncation), as Triton; floats floor.
    return Val::dyn(isF ? b_.binary(Opcode::FloorDiv, loc, x, y) : b_.div(loc, x, y));
  case BinaryOp::Mod:
    return Val::dyn(b_.rem(loc, x, y));
  case BinaryOp::LShift:
    if (!isI)
      return needInt();
    return Val::dyn(b_.binary(Opcode::Shl, loc, x, y));
  case BinaryOp::RShift: {
    if (!isI)
      return needInt();
    // Triton shifts arithmetically when the tensor on the left (a number on
    // the left: the tensor on the right) is signed, whatever the promoted
    // type: int16 >> uint16 is an arithmetic shift on uint16.
    Type *decides = a.isDyn() ? a.v->type() : b.isDyn() ? b.v->type() : t;
    bool arithmetic = isSigned(decides->elementType()->dtype());
    return Val::dyn(b_.binary(arithmetic ? Opcode::AShr : Opcode::LShr, loc, x, y));
  }
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
    if (!isI)
      return needInt();
    return Val::dyn(b_.binary(op == BinaryOp::BitAnd  ? Opcode::And
                              : op == BinaryOp::BitOr ? Opcode::Or
                                                      : Opcode::Xor,
                              loc, x, y));
  default:
    return fail(loc, fmt::format("not supported yet: '{}' on tensors", spelling));
  }
}

Val Lowerer::compare(CmpOp op, Val a, Val b, SourceLoc loc) {
  if (!a.ok() || !b.ok())
    return Val::error();
  if (op == CmpOp::Is || op == CmpOp::IsNot) {
    // Only identity with None (and constants) is meaningful in a kernel.
    bool same;
    if (a.kind == Val::Kind::None || b.kind == Val::Kind::None)
      same = a.kind == b.kind;
    else if (a.isConst() && b.isConst())
      same = a.kind == b.kind && a.i == b.i && a.f == b.f && a.s == b.s && a.type == b.type;
    else
      return fail(loc, fmt::format("'{}' compares only with None and constants, got {} and {}",
                                   cmpSpelling(op), describe(a), describe(b)));
    return Val::ofBool(op == CmpOp::Is ? same : !same);
  }
  if (op == CmpOp::In || op == CmpOp::NotIn) {
    if (b.kind != Val::Kind::Tuple || !a.isConst())
      return fail(loc, fmt::format("'{}' needs a constant and a tuple of constants, got {} and {}",
                                   cmpSpelling(op), describe(a), describe(b)));
    bool found = false;
    for (const Val &e : b.elts) {
      Val eq = compare(CmpOp::Eq, a, e, loc);
      if (!eq.ok())
        return eq;
      found = found || (eq.kind == Val::Kind::Bool && eq.i);
    }
    return Val::ofBool(op == CmpOp::In ? found : !found);
  }
  if (a.isConst() && b.isConst()) {
    if (isNumber(a) && isNumber(b)) {
      double x = asDouble(a), y = asDouble(b);
      bool ints = a.kind != Val::Kind::Float && b.kind != Val::Kind::Float;
      auto cmp = [&](auto p, auto q) {
        switch (op) {
        case CmpOp::Eq:
          return p == q;
        case CmpOp::Ne:
          return p != q;
        case CmpOp::Lt:
          return p < q;
        case CmpOp::Le:
          return p <= q;
        case CmpOp::Gt:
          return p > q;
        default:
          return p >= q;
        }
      };
      return Val::ofBool(ints ? cmp(a.i, b.i) : cmp(x, y));
    }
    if (op == CmpOp::Eq || op == CmpOp::Ne) {
      bool nested = a.kind == Val::Kind::Tuple || a.kind == Val::Kind::ConstexprType;
      bool same = a.kind == b.kind && a.s == b.s && a.type == b.type &&
                  (!nested || a.elts.size() == b.elts.size());
      if (same && nested)
        for (size_t i = 0; i < a.elts.size() && same; ++i) {
          Val e = compare(CmpOp::Eq, a.elts[i], b.elts[i], loc);
          same = e.kind == Val::Kind::Bool && e.i;
        }
      return Val::ofBool(op == CmpOp::Eq ? same : !same);
    }
    return fail(loc, fmt::format("cannot compare {} and {} with '{}'", describe(a), describe(b),
                                 cmpSpelling(op)));
  }
  Value *x, *y;
  if (!unify(a, b, loc, x, y, cmpSpelling(op)))
    return Val::error();
  Type *t = x->type();
  if (t->isFloatLike()) {
    static const char *preds[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
    return Val::dyn(b_.cmpf(loc, preds[int(op)], x, y));
  }
  bool isU = t->isPointerLike() || t->dtype() == DType::I1 || isUnsigned(t->dtype());
  static const char *spreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge"};
  static const char *upreds[] = {"eq", "ne", "ult", "ule", "ugt", "uge"};
  return Val::dyn(b_.cmpi(loc, (isU ? upreds : spreds)[int(op)], x, y));
}

Val Lowerer::unary(UnaryOp op, Val a, SourceLoc loc) {
  if (!a.ok())
    return a;
  if (op == UnaryOp::Not) {
    if (std::optional<bool> t = constTruth(a))
      return Val::ofBool(!*t);
    Value *v = castTo(a.v, ctx_.i1(), loc);
    return Val::dyn(b_.binary(Opcode::Xor, loc, v, b_.constantInt(loc, 1, v->type())));
  }
  if (a.isConst()) {
    if (a.kind == Val::Kind::Float && op != UnaryOp::Invert)
      return Val::ofFloat(op == UnaryOp::Neg ? -a.f : a.f);
    if (a.kind == Val::Kind::Int || a.kind == Val::Kind::Bool) {
      if (op == UnaryOp::Pos)
        return Val::ofInt(a.i);
      if (op == UnaryOp::Invert)
        return Val::ofInt(~a.i);
      if (a.i == std::numeric_limits<int64_t>::min())
        return fail(loc, "constant expression overflows 64-bit integers");
      return Val::ofInt(-a.i);
    }
    return fail(
        loc, fmt::format("bad operand type for unary '{}': {}", unaryOpSpelling(op), describe(a)));
  }
  if (!a.isDyn() || a.v->type()->isPointerLike())
    return fail(
        loc, fmt::format("bad operand type for unary '{}': {}", unaryOpSpelling(op), describe(a)));
  Value *v = a.v;
  switch (op) {
  case UnaryOp::Pos:
    return a;
  case UnaryOp::Neg:
    return Val::dyn(b_.unary(Opcode::Neg, loc, v));
  case UnaryOp::Invert:
    if (!v->type()->isIntLike())
      return fail(loc, fmt::format("'~' needs an integer operand, got {}", typeStr(v)));
    return Val::dyn(b_.binary(Opcode::Xor, loc, v, b_.constantInt(loc, -1, v->type())));
  default:
    return Val::error();
  }
}

//===----------------------------------------------------------------------===//
// Expression dispatch
//===----------------------------------------------------------------------===//

const BuiltinInfo *namedBuiltin(const Expr *e) {
  if (auto *a = dyn_cast<ast::Attribute>(e); a && a->builtin >= 0)
    return &builtinInfo(a->builtin);
  if (auto *n = dyn_cast<Name>(e); n && n->binding == NameBinding::Builtin && n->builtin >= 0)
    return &builtinInfo(n->builtin);
  return nullptr;
}

// The bounds of a slice, each None when absent: `x[None:]` and `x[:None]`
// are `x[:]`, as in Python.
bool Lowerer::sliceBounds(const Slice *sl, Val (&out)[3]) {
  const Expr *parts[3] = {sl->lower, sl->upper, sl->step};
  for (int i = 0; i < 3; ++i) {
    out[i] = parts[i] ? expr(parts[i]) : Val::none();
    if (!out[i].ok())
      return false;
  }
  return true;
}

// x[i] and x[a:b:c] on a tuple (Python's rules, constant indices); on a
// tensor, Triton's: each index is None (a new dimension of size 1) or a
// slice with no bounds (keep the dimension).
Val Lowerer::subscript(const Subscript *s) {
  Val base = expr(s->value);
  if (!base.ok())
    return base;
  if (base.kind == Val::Kind::Tuple) {
    if (s->indices.size() != 1)
      return fail(s->loc, "a tuple takes one index");
    int64_t n = int64_t(base.elts.size());
    if (auto *sl = dyn_cast<Slice>(s->indices[0])) {
      Val b[3];
      if (!sliceBounds(sl, b))
        return Val::error();
      for (const Val &v : b)
        if (v.kind != Val::Kind::None && v.kind != Val::Kind::Int)
          return fail(sl->loc, fmt::format("tuple slice bounds must be constant integers or "
                                           "None, got {}",
                                           describe(v)));
      int64_t step = b[2].kind == Val::Kind::Int ? b[2].i : 1;
      if (step == 0)
        return fail(sl->loc, "slice step cannot be zero");
      // Python's clamping of slice bounds.
      auto bound = [&](const Val &v, int64_t dflt) {
        if (v.kind != Val::Kind::Int)
          return dflt;
        int64_t i = v.i < 0 ? v.i + n : v.i;
        return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
      };
      int64_t lo = bound(b[0], step > 0 ? 0 : n - 1), hi = bound(b[1], step > 0 ? n : -1);
      std::vector<Val> elts;
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
        elts.push_back(base.elts[size_t(i)]);
      return Val::tuple(std::move(elts));
    }
    Val idx = expr(s->indices[0]);
    if (!idx.ok())
      return idx;
    if (idx.kind != Val::Kind::Int)
      return fail(s->indices[0]->loc,
                  fmt::format("tuple indices must be constant integers, got {}", describe(idx)));
    int64_t i = idx.i < 0 ? idx.i + n : idx.i;
    if (i < 0 || i >= n)
      return fail(s->indices[0]->loc,
                  fmt::format("tuple index {} is out of range for a tuple of {}", idx.i, n));
    return base.elts[i];
  }
  if (!base.isDyn())
    return fail(s->loc, fmt::format("cannot index {}", describe(base)));
  Value *v = base.v;
  if (!v->type()->isTensor()) {
    // A scalar, as Triton indexes one: each None adds a dimension of 1 and
    // ':' keeps nothing (z_ptr[None, None, :] is a [1, 1] tensor).
    std::vector<int64_t> shape;
    for (const Expr *idx : s->indices) {
      if (auto *sl = dyn_cast<Slice>(idx)) {
        Val b[3];
        if (!sliceBounds(sl, b))
          return Val::error();
        if (b[0].kind == Val::Kind::None && b[1].kind == Val::Kind::None &&
            b[2].kind == Val::Kind::None)
          continue;
        return fail(
            sl->loc,
            fmt::format(
                "unsupported tensor index: cannot slice {}: a scalar takes only None and ':'",
                describe(base)));
      }
      Val i = expr(idx);
      if (!i.ok())
        return i;
      if (i.kind != Val::Kind::None)
        return fail(
            idx->loc,
            fmt::format(
                "unsupported tensor index: cannot index {} with {}: a scalar takes only None and "
                "':'",
                describe(base), describe(i)));
      shape.push_back(1);
    }
    if (shape.empty())
      return base;
    Value *r = broadcastTo(v, shape, s->loc);
    return r ? Val::dyn(r) : Val::error();
  }
  unsigned kept = 0;
  std::vector<bool> isNew;
  for (const Expr *idx : s->indices) {
    auto *sl = dyn_cast<Slice>(idx);
    if (!sl) {
      Val i = expr(idx);
      if (!i.ok())
        return i;
      if (i.kind == Val::Kind::None) {
        isNew.push_back(true);
        continue;
      }
      return fail(idx->loc, fmt::format("a tensor takes only None and ':' as indices (x[:, None]), "
                                        "got {}; Triton tensors cannot be indexed by values",
                                        describe(i)));
    }
    Val b[3];
    if (!sliceBounds(sl, b))
      return Val::error();
    for (const Val &bound : b)
      if (bound.kind != Val::Kind::None)
        return fail(sl->loc, fmt::format("a tensor slice keeps its whole dimension (':'); got a "
                                         "bound {}",
                                         describe(bound)));
    isNew.push_back(false);
    ++kept;
  }
  if (kept > v->type()->rank())
    return fail(s->loc, fmt::format("too many indices for a tensor of shape {}: {} given",
                                    shapeStr(v->type()->shape()), kept));
  for (size_t axis = 0; axis < isNew.size(); ++axis)
    if (isNew[axis])
      v = b_.expandDims(s->indices[axis]->loc, v, int(axis));
  return Val::dyn(v);
}

// A builtin used as a value rather than called: a dtype is one; the rest
// can only be called (an enum only has its members read).
Val Lowerer::builtinValue(const BuiltinInfo &info, SourceLoc loc) {
  if (info.kind == BuiltinKind::DType && info.dtype)
    return Val::ofType(ctx_.scalar(*info.dtype));
  if (info.id == BuiltinId::Pi32T)
    return Val::ofType(ctx_.pointer(ctx_.i32()));
  if (info.kind == BuiltinKind::Enum)
    return fail(loc, fmt::format("{} is an enum: use one of its members", qualifiedName(info)));
  // Passing one as a function (tk.reduce(x, 0, max)) is the usual way here.
  return fail(loc, fmt::format("'{}' is a builtin: it can only be called, not passed as a "
                               "value; a combine function (tk.reduce, tk.associative_scan) "
                               "must be a @tk.jit function",
                               qualifiedName(info)));
}

// `x if c else y` with a run-time scalar c: an `if` whose branches compute
// one arm each, so only the taken arm's loads and stores run (Triton's
// semantics). Arms that are both None (`tl.store(...) if c else
// tl.store(...)`) make an `if` without results; otherwise the arms meet in
// one type (Triton's promotion, a Python number taking the other arm's type)
// and shape, converted inside their branch.
Val Lowerer::dynamicIfExp(const ast::IfExp *ie, Value *c) {
  Operation *draft = b_.createIf(ie->loc, c, {});
  Val arm[2];
  for (unsigned r = 0; r < 2; ++r) {
    b_.setInsertionPointToEnd(&draft->body(r));
    arm[r] = expr(r == 0 ? ie->then : ie->orelse);
    if (!arm[r].ok())
      return Val::error();
  }
  if (arm[0].kind == Val::Kind::None && arm[1].kind == Val::Kind::None) {
    for (unsigned r = 0; r < 2; ++r) {
      b_.setInsertionPointToEnd(&draft->body(r));
      b_.yield(ie->loc, {});
    }
    b_.setInsertionPointAfter(draft);
    return Val::none();
  }
  for (unsigned r = 0; r < 2; ++r)
    if (!arm[r].isDyn() && !arm[r].isScalarConst())
      return fail((r == 0 ? ie->then : ie->orelse)->loc,
                  fmt::format("invalid operand to 'if-else': {}{}", describe(arm[r]),
                              arm[r].kind == Val::Kind::None
                                  ? " (both arms must give a value, or both None)"
                                  : ""));
  // Pointers are not promoted: a const and a writable pointer (or pointers
  // to different types) make no one type, in Triton's words.
  if (arm[0].isDyn() && arm[1].isDyn() && arm[0].v->type()->isPointerLike() &&
      arm[1].v->type()->isPointerLike() &&
      arm[0].v->type()->elementType() != arm[1].v->type()->elementType())
    return fail(ie->loc, fmt::format("Ternary expression with dynamic condition has "
                                     "inconsistent type: {} if the condition holds, else {}",
                                     typeStr(arm[0].v), typeStr(arm[1].v)));
  // The common element type and shape, from the arms' types (a number takes
  // the other arm's element type, as in arithmetic).
  Value *v[2] = {nullptr, nullptr};
  for (unsigned r = 0; r < 2; ++r) {
    b_.setInsertionPointToEnd(&draft->body(r));
    const Val &other = arm[1 - r];
    v[r] = materialize(arm[r], ie->loc, other.isDyn() ? other.v->type() : nullptr);
    if (!v[r])
      return Val::error();
  }
  Type *elem = v[0]->type()->elementType();
  if (v[1]->type()->elementType() != elem) {
    elem = promote(v[0]->type()->elementType(), v[1]->type()->elementType(), ie->loc, "if-else");
    if (!elem)
      return Val::error();
  }
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes(v[0]->type()->shape(), v[1]->type()->shape(), ie->loc);
  if (!shape)
    return Val::error();
  for (unsigned r = 0; r < 2; ++r) {
    b_.setInsertionPointToEnd(&draft->body(r));
    v[r] = castTo(v[r], elem, ie->loc);
    if (!shape->empty())
      v[r] = broadcastTo(v[r], *shape, ie->loc);
  }
  b_.setInsertionPoint(draft);
  Operation *op = b_.createIf(ie->loc, c, {v[0]->type()});
  for (unsigned r = 0; r < 2; ++r) {
    for (Operation *inner : draft->body(r).opsVector())
      op->body(r).insert(nullptr, draft->body(r).remove(inner));
    b_.setInsertionPointToEnd(&op->body(r));
    b_.yield(ie->loc, {v[r]});
  }
  draft->erase();
  b_.setInsertionPointAfter(op);
  return Val::dyn(op->result());
}

Val Lowerer::expr(const Expr *e) {
  switch (e->kind) {
  case NodeKind::IntLit: {
    uint64_t v = cast<IntLit>(e)->value;
    if (v > uint64_t(std::numeric_limits<int64_t>::max()))
      return fail(e->loc, fmt::format("integer literal {} does not fit in 64 bits", v));
    return Val::ofInt(int64_t(v));
  }
  case NodeKind::FloatLit:
    return Val::ofFloat(cast<FloatLit>(e)->value);
  case NodeKind::BoolLit:
    return Val::ofBool(cast<BoolLit>(e)->value);
  case NodeKind::NoneLit:
    return Val::none();
  case NodeKind::StringLit:
    return Val::ofStr(cast<StringLit>(e)->value);
  case NodeKind::Name: {
    auto *n = cast<Name>(e);
    if (auto it = env->find(n->id); it != env->end())
      return it->second;
    switch (n->binding) {
    case NameBinding::Global:
      return global(n->id, n->loc);
    case NameBinding::Function: {
      Val f;
      f.kind = Val::Kind::Func;
      f.fn = astModule_.findFunction(n->id);
      if (!f.fn)
        return fail(n->loc, fmt::format("unknown function '{}'", n->id));
      return f;
    }
    case NameBinding::Module: {
      Val m;
      m.kind = Val::Kind::Module;
      return m;
    }
    case NameBinding::Builtin:
      return builtinValue(builtinInfo(n->builtin), n->loc);
    default:
      return fail(n->loc, fmt::format("'{}' is not defined here", n->id));
    }
  }
  case NodeKind::Attribute: {
    auto *a = cast<ast::Attribute>(e);
    if (a->builtin >= 0)
      return builtinValue(builtinInfo(a->builtin), a->loc);
    if (!a->function.empty()) { // a user module's @tk.jit function
      Val f;
      f.kind = Val::Kind::Func;
      f.fn = astModule_.findFunction(a->function);
      if (!f.fn)
        return fail(a->attrLoc, fmt::format("unknown function '{}'", a->function));
      return f;
    }
    // tk.PropagateNan.ALL: an enum member is its integer, as in Triton.
    if (const BuiltinInfo *owner = namedBuiltin(a->value);
        owner && owner->kind == BuiltinKind::Enum) {
      if (const EnumMemberInfo *m = lookupEnumMember(owner->id, a->attr))
        return Val::ofInt(m->value);
      return fail(a->attrLoc, fmt::format("{} has no member '{}'", qualifiedName(*owner), a->attr));
    }
    Val self = expr(a->value);
    if (!self.ok())
      return self;
    return member(self, a->attr, a->attrLoc, a->loc);
  }
  case NodeKind::Call: {
    auto *c = cast<Call>(e);
    if (auto *a = dyn_cast<ast::Attribute>(c->callee); a && a->function.empty()) {
      if (a->builtin >= 0)
        return callBuiltin(builtinInfo(a->builtin), c);
      Val self = expr(a->value);
      if (!self.ok())
        return self;
      return callMethod(self, a, c);
    }
    if (auto *n = dyn_cast<Name>(c->callee);
        n && n->binding == NameBinding::Builtin && n->builtin >= 0 && !env->count(n->id))
      return callBuiltin(builtinInfo(n->builtin), c);
    Val callee = expr(c->callee);
    if (!callee.ok())
      return callee;
    if (callee.kind == Val::Kind::Builtin) { // getattr(tl, "maximum")(x, y)
      const BuiltinInfo &info = *callee.builtin;
      if (info.kind != BuiltinKind::Function)
        return fail(c->callee->loc, fmt::format("{} is not a function", describe(callee)));
      unsigned given = unsigned(c->args.size());
      for (unsigned i = given; i < info.signature.params.size(); ++i) {
        const ParamSpec &p = info.signature.params[i];
        bool byKeyword = std::any_of(c->keywords.begin(), c->keywords.end(),
                                     [&](const ast::Keyword &k) { return k.name == p.name; });
        if (!p.hasDefault && !p.variadic && !byKeyword)
          return fail(c->loc, fmt::format("{}() missing required argument '{}'",
                                          qualifiedName(info), p.name));
      }
      return callBuiltin(info, c);
    }
    if (callee.kind != Val::Kind::Func) {
      if (auto *n = dyn_cast<Name>(c->callee))
        return fail(c->callee->loc, fmt::format("'{}' is {}, which is not callable: only tk "
                                                "builtins and @tk.jit functions can be called",
                                                n->id, describe(callee)));
      return fail(c->loc, fmt::format("{} is not callable", describe(callee)));
    }
    std::vector<Val> args;
    std::vector<std::pair<std::string, Val>> kwargs;
    for (const Expr *arg : c->args) {
      args.push_back(expr(arg));
      if (!args.back().ok())
        return Val::error();
    }
    for (const Keyword &k : c->keywords) {
      kwargs.emplace_back(k.name, expr(k.value));
      if (!kwargs.back().second.ok())
        return Val::error();
    }
    return inlineCall(callee.fn, std::move(args), std::move(kwargs), c->loc);
  }
  case NodeKind::Subscript:
    return subscript(cast<Subscript>(e));
  case NodeKind::Tuple:
  case NodeKind::List: {
    const std::vector<Expr *> &elts = isa<Tuple>(e) ? cast<Tuple>(e)->elts : cast<List>(e)->elts;
    std::vector<Val> vals;
    for (const Expr *x : elts) {
      vals.push_back(expr(x));
      if (!vals.back().ok())
        return Val::error();
    }
    return Val::tuple(std::move(vals));
  }
  case NodeKind::Binary: {
    auto *bin = cast<Binary>(e);
    Val a = expr(bin->lhs);
    if (!a.ok())
      return a;
    Val b = expr(bin->rhs);
    return binary(bin->op, a, b, bin->opLoc);
  }
  case NodeKind::Unary: {
    auto *u = cast<Unary>(e);
    // -9223372036854775808 is int64's minimum, though its digits alone are
    // one past the maximum (Inductor writes it as a max-reduction's identity).
    if (auto *lit = dyn_cast<IntLit>(u->operand);
        lit && u->op == UnaryOp::Neg && lit->value == uint64_t(1) << 63)
      return Val::ofInt(std::numeric_limits<int64_t>::min());
    return unary(u->op, expr(u->operand), u->loc);
  }
  case NodeKind::Compare: {
    auto *c = cast<Compare>(e);
    // a < b < c is (a < b) and (b < c), with b evaluated once.
    Val left = expr(c->lhs);
    Val result;
    for (size_t i = 0; i < c->ops.size() && left.ok(); ++i) {
      Val right = expr(c->comparators[i]);
      Val r = compare(c->ops[i], left, right, c->opLocs[i]);
      if (!r.ok())
        return r;
      result = i == 0 ? r : binary(BinaryOp::BitAnd, result, r, c->opLocs[i]);
      left = right;
    }
    return left.ok() ? result : Val::error();
  }
  case NodeKind::BoolOp: {
    auto *bo = cast<BoolOp>(e);
    // Constants short-circuit as in Python; dynamic operands combine with
    // & / | on their truth values.
    Val acc = expr(bo->values[0]);
    for (size_t i = 1; i < bo->values.size() && acc.ok(); ++i) {
      if (std::optional<bool> t = constTruth(acc)) {
        if (*t != bo->isAnd)
          return acc;
        acc = expr(bo->values[i]);
        continue;
      }
      Val next = expr(bo->values[i]);
      if (!next.ok())
        return next;
      if (std::optional<bool> t = constTruth(next)) {
        if (*t == bo->isAnd)
          continue;
        return Val::ofBool(*t);
      }
      Value *x = castTo(acc.v, ctx_.i1(), bo->loc), *y = castTo(next.v, ctx_.i1(), bo->loc);
      acc =
          binary(bo->isAnd ? BinaryOp::BitAnd : BinaryOp::BitOr, Val::dyn(x), Val::dyn(y), bo->loc);
    }
    return acc;
  }
  case NodeKind::IfExp: {
    auto *ie = cast<IfExp>(e);
    Val cond = expr(ie->cond);
    if (!cond.ok())
      return cond;
    if (std::optional<bool> t = constTruth(cond))
      return expr(*t ? ie->then : ie->orelse);
    if (cond.v->type()->isTensor())
      return fail(ie->cond->loc, fmt::format("the condition of 'x if c else y' must be a scalar, "
                                             "got {}; use tk.where",
                                             typeStr(cond.v)));
    return dynamicIfExp(ie, castTo(cond.v, ctx_.i1(), ie->cond->loc));
  }
  case NodeKind::Slice:
    return fail(e->loc, "a slice is only valid inside a subscript");
  case NodeKind::Dict:
    return fail(e->loc, "not supported in tk kernels: a dictionary");
  default:
    return fail(e->loc, fmt::format("not supported yet: {} expression", nodeKindName(e->kind)));
  }
}

} // namespace tk::astir
