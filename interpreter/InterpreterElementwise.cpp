// Elementwise ops: constants, arithmetic, bitwise ops and shifts,
// comparisons, casts, math functions, min/max and select. Each op is one
// loop over the flat arrays of its operands (the verifier guarantees they
// share one shape), instantiated per element type so the loops stay plain
// enough for the compiler to vectorise.
#include "interpreter/InterpreterImpl.h"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace tk::interp {
namespace {

//===----------------------------------------------------------------------===//
// Integer arithmetic with a defined meaning everywhere. C++ leaves overflow,
// division by zero and over-wide shifts undefined; a kernel's masked-off
// lanes compute such things routinely, so they must not stop the run or
// poison the host. Arithmetic wraps; x / 0 is all ones and x % 0 is x (what
// the GPU's integer division gives); INT_MIN / -1 wraps to INT_MIN; shift
// amounts at or beyond the width give 0 (shl, lshr) or the sign (ashr), as
// PTX's clamped shifts do.
//===----------------------------------------------------------------------===//

template <typename T>
using Wide = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T> T wrapAdd(T a, T b) { return static_cast<T>(Wide<T>(a) + Wide<T>(b)); }
template <typename T> T wrapSub(T a, T b) { return static_cast<T>(Wide<T>(a) - Wide<T>(b)); }
template <typename T> T wrapMul(T a, T b) { return static_cast<T>(Wide<T>(a) * Wide<T>(b)); }

template <typename T> T intDiv(T a, T b) {
  if (b == 0)
    return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1)
      return a;
  return static_cast<T>(a / b);
}

template <typename T> T intRem(T a, T b) {
  if (b == 0)
    return a;
  if constexpr (std::is_signed_v<T>)
    if (b == -1)
      return 0;
  return static_cast<T>(a % b);
}

// Python's //: rounds toward negative infinity.
template <typename T> T intFloorDiv(T a, T b) {
  T q = intDiv(a, b);
  if constexpr (std::is_signed_v<T>)
    if (b != 0 && b != -1 && (a % b != 0) && ((a < 0) != (b < 0)))
      return static_cast<T>(q - 1);
  return q;
}

template <typename T> T shiftLeft(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (U(b) >= sizeof(T) * 8)
    return 0;
  return static_cast<T>(Wide<T>(a) << U(b));
}

template <typename T> T shiftRightLogical(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (U(b) >= sizeof(T) * 8)
    return 0;
  return static_cast<T>(U(a) >> U(b));
}

template <typename T> T shiftRightArith(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  unsigned amount = U(b) >= sizeof(T) * 8 ? sizeof(T) * 8 - 1 : unsigned(U(b));
  return static_cast<T>(S(a) >> amount);
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

template <typename Num, typename F> RtValue mapUnary(Type *type, const RtValue &a, F f) {
  using S = typename Num::Storage;
  RtValue out = makeValue(type);
  const S *x = a.data<S>();
  S *o = out.data<S>();
  for (int64_t i = 0; i < out.size; ++i)
    o[i] = Num::store(f(Num::load(x[i])));
  return out;
}

template <typename Num, typename F>
RtValue mapBinary(Type *type, const RtValue &a, const RtValue &b, F f) {
  using S = typename Num::Storage;
  RtValue out = makeValue(type);
  const S *x = a.data<S>();
  const S *y = b.data<S>();
  S *o = out.data<S>();
  for (int64_t i = 0; i < out.size; ++i)
    o[i] = Num::store(f(Num::load(x[i]), Num::load(y[i])));
  return out;
}

template <typename Num> bool binary(ProgramRunner &r, Operation &op) {
  using C = typename Num::Compute;
  const RtValue &a = r.operand(op, 0), &b = r.operand(op, 1);
  Type *t = op.result()->type();
  RtValue out;
  if constexpr (isFloatNum<Num>) {
    switch (op.opcode()) {
    case Opcode::Add:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x + y; });
      break;
    case Opcode::Sub:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x - y; });
      break;
    case Opcode::Mul:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x * y; });
      break;
    case Opcode::Div:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x / y; });
      break;
    case Opcode::Rem:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return std::fmod(x, y); });
      break;
    case Opcode::FloorDiv:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return std::floor(x / y); });
      break;
    case Opcode::Max:
    case Opcode::Min: {
      bool isMax = op.is(Opcode::Max);
      bool propagate = op.attrs().getString("nan").value_or("propagate") == "propagate";
      // Signed zeros order -0 < +0, as the GPU's min/max do.
      auto pick = [isMax, propagate](C x, C y) -> C {
        if (std::isnan(x) || std::isnan(y)) {
          if (propagate || (std::isnan(x) && std::isnan(y)))
            return std::numeric_limits<C>::quiet_NaN();
          return std::isnan(x) ? y : x;
        }
        if (x == y)
          return (std::signbit(x) == isMax) ? y : x;
        return (x > y) == isMax ? x : y;
      };
      out = mapBinary<Num>(t, a, b, pick);
      break;
    }
    default:
      return r.fail(op, fmt::format("is not defined on {}", t->str()));
    }
  } else {
    switch (op.opcode()) {
    case Opcode::Add:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return wrapAdd(x, y); });
      break;
    case Opcode::Sub:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return wrapSub(x, y); });
      break;
    case Opcode::Mul:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return wrapMul(x, y); });
      break;
    case Opcode::Div:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return intDiv(x, y); });
      break;
    case Opcode::Rem:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return intRem(x, y); });
      break;
    case Opcode::FloorDiv:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return intFloorDiv(x, y); });
      break;
    case Opcode::And:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return C(x & y); });
      break;
    case Opcode::Or:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return C(x | y); });
      break;
    case Opcode::Xor:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return C(x ^ y); });
      break;
    case Opcode::Shl:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return shiftLeft(x, y); });
      break;
    case Opcode::AShr:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return shiftRightArith(x, y); });
      break;
    case Opcode::LShr:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return shiftRightLogical(x, y); });
      break;
    case Opcode::Max:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x > y ? x : y; });
      break;
    case Opcode::Min:
      out = mapBinary<Num>(t, a, b, [](C x, C y) { return x < y ? x : y; });
      break;
    default:
      return r.fail(op, fmt::format("is not defined on {}", t->str()));
    }
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

// Math on fp16/bf16/fp32 runs in float, on fp64 in double.
template <typename Num> bool unary(ProgramRunner &r, Operation &op) {
  using C = typename Num::Compute;
  const RtValue &a = r.operand(op, 0);
  Type *t = op.result()->type();
  RtValue out;
  if constexpr (isFloatNum<Num>) {
    switch (op.opcode()) {
    case Opcode::Neg:
      out = mapUnary<Num>(t, a, [](C x) { return -x; });
      break;
    case Opcode::Abs:
      out = mapUnary<Num>(t, a, [](C x) { return std::fabs(x); });
      break;
    case Opcode::Exp:
      out = mapUnary<Num>(t, a, [](C x) { return std::exp(x); });
      break;
    case Opcode::Exp2:
      out = mapUnary<Num>(t, a, [](C x) { return std::exp2(x); });
      break;
    case Opcode::Log:
      out = mapUnary<Num>(t, a, [](C x) { return std::log(x); });
      break;
    case Opcode::Log2:
      out = mapUnary<Num>(t, a, [](C x) { return std::log2(x); });
      break;
    case Opcode::Sqrt:
      out = mapUnary<Num>(t, a, [](C x) { return std::sqrt(x); });
      break;
    case Opcode::Rsqrt:
      out = mapUnary<Num>(t, a, [](C x) { return C(1) / std::sqrt(x); });
      break;
    case Opcode::Sin:
      out = mapUnary<Num>(t, a, [](C x) { return std::sin(x); });
      break;
    case Opcode::Cos:
      out = mapUnary<Num>(t, a, [](C x) { return std::cos(x); });
      break;
    case Opcode::Floor:
      out = mapUnary<Num>(t, a, [](C x) { return std::floor(x); });
      break;
    case Opcode::Ceil:
      out = mapUnary<Num>(t, a, [](C x) { return std::ceil(x); });
      break;
    case Opcode::Erf:
      out = mapUnary<Num>(t, a, [](C x) { return std::erf(x); });
      break;
    default:
      return r.fail(op, fmt::format("is not defined on {}", t->str()));
    }
  } else {
    switch (op.opcode()) {
    case Opcode::Neg:
      out = mapUnary<Num>(t, a, [](C x) { return wrapSub(C(0), x); });
      break;
    case Opcode::Abs:
      // abs(INT_MIN) wraps to INT_MIN, as on the GPU.
      out = mapUnary<Num>(t, a, [](C x) { return x < C(0) ? wrapSub(C(0), x) : x; });
      break;
    default:
      return r.fail(op, fmt::format("is not defined on {}", t->str()));
    }
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

// fma rounds once: fp32 and fp16 inputs go through std::fma in double
// (exact products for them), fp64 through std::fma directly.
template <typename Num> bool fma(ProgramRunner &r, Operation &op) {
  using S = typename Num::Storage;
  const RtValue &a = r.operand(op, 0), &b = r.operand(op, 1), &c = r.operand(op, 2);
  RtValue out = makeValue(op.result()->type());
  const S *x = a.data<S>(), *y = b.data<S>(), *z = c.data<S>();
  S *o = out.data<S>();
  for (int64_t i = 0; i < out.size; ++i) {
    if constexpr (std::is_same_v<typename Num::Compute, double>)
      o[i] = std::fma(x[i], y[i], z[i]);
    else if constexpr (std::is_same_v<Num, HalfNum>)
      o[i] = doubleToHalf(
          std::fma(double(Num::load(x[i])), double(Num::load(y[i])), double(Num::load(z[i]))));
    else if constexpr (std::is_same_v<Num, BF16Num>)
      o[i] = doubleToBF16(
          std::fma(double(Num::load(x[i])), double(Num::load(y[i])), double(Num::load(z[i]))));
    else
      o[i] = Num::store(std::fma(Num::load(x[i]), Num::load(y[i]), Num::load(z[i])));
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//

template <typename T, typename F>
RtValue compareLoop(Type *type, const T *x, const T *y, int64_t n, F f) {
  RtValue out = makeValue(type);
  uint8_t *o = out.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i)
    o[i] = f(x[i], y[i]) ? 1 : 0;
  return out;
}

template <typename T>
bool intCompare(const std::string &pred, Type *type, const T *x, const T *y, int64_t n,
                RtValue &out) {
  if (pred == "eq")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a == b; });
  else if (pred == "ne")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a != b; });
  else if (pred == "lt")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a < b; });
  else if (pred == "le")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a <= b; });
  else if (pred == "gt")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a > b; });
  else if (pred == "ge")
    out = compareLoop(type, x, y, n, [](T a, T b) { return a >= b; });
  else
    return false;
  return true;
}

bool cmpI(ProgramRunner &r, Operation &op) {
  const RtValue &a = r.operand(op, 0), &b = r.operand(op, 1);
  std::string pred = *op.attrs().getString("predicate");
  Type *t = op.result()->type();
  RtValue out;
  bool ok;
  if (pred == "eq" || pred == "ne") {
    ok = visitBits(elementBytes(a.type), [&](auto tag) {
      using B = decltype(tag);
      return intCompare<B>(pred, t, a.data<B>(), b.data<B>(), a.size, out);
    });
  } else {
    // slt/ult...: the first letter picks how the bits read; i1 reads as 0/-1
    // when signed, like LLVM's i1.
    bool asSigned = pred[0] == 's';
    std::string rel = pred.substr(1);
    bool isBool = !a.type->isPointerLike() && a.type->dtype() == DType::I1;
    if (isBool) {
      std::vector<int64_t> x(a.size), y(a.size);
      for (int64_t i = 0; i < a.size; ++i) {
        x[i] = readInt(a, i, asSigned);
        y[i] = readInt(b, i, asSigned);
      }
      ok = intCompare<int64_t>(rel, t, x.data(), y.data(), a.size, out);
    } else {
      ok = visitBits(elementBytes(a.type), [&](auto tag) {
        using U = decltype(tag);
        using S = std::make_signed_t<U>;
        if (asSigned)
          return intCompare<S>(rel, t, a.data<S>(), b.data<S>(), a.size, out);
        return intCompare<U>(rel, t, a.data<U>(), b.data<U>(), a.size, out);
      });
    }
  }
  if (!ok)
    return r.fail(op, fmt::format("unknown predicate \"{}\"", pred));
  r.setResult(op, 0, std::move(out));
  return true;
}

template <typename Num> bool cmpF(ProgramRunner &r, Operation &op) {
  using C = typename Num::Compute;
  const RtValue &a = r.operand(op, 0), &b = r.operand(op, 1);
  std::string pred = *op.attrs().getString("predicate");
  // Ordered predicates are false when either side is NaN, unordered ones true.
  bool unordered = pred[0] == 'u';
  std::string rel = pred.substr(1);
  int relCode = rel == "eq"   ? 0
                : rel == "ne" ? 1
                : rel == "lt" ? 2
                : rel == "le" ? 3
                : rel == "gt" ? 4
                : rel == "ge" ? 5
                : rel == "rd" ? 6
                : rel == "no" ? 7
                              : -1;
  if (pred == "ord")
    relCode = 6, unordered = false;
  if (pred == "uno")
    relCode = 7, unordered = true;
  if (relCode < 0)
    return r.fail(op, fmt::format("unknown predicate \"{}\"", pred));
  using S = typename Num::Storage;
  const S *x = a.data<S>(), *y = b.data<S>();
  RtValue out = makeValue(op.result()->type());
  uint8_t *o = out.data<uint8_t>();
  for (int64_t i = 0; i < a.size; ++i) {
    C p = Num::load(x[i]), q = Num::load(y[i]);
    bool nan = std::isnan(p) || std::isnan(q);
    bool v;
    switch (relCode) {
    case 0:
      v = p == q;
      break;
    case 1:
      v = p != q && !nan;
      break;
    case 2:
      v = p < q;
      break;
    case 3:
      v = p <= q;
      break;
    case 4:
      v = p > q;
      break;
    case 5:
      v = p >= q;
      break;
    case 6:
      v = !nan;
      break;
    default:
      v = false;
      break;
    }
    o[i] = (nan ? unordered : v) ? 1 : 0;
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

bool select(ProgramRunner &r, Operation &op) {
  const RtValue &c = r.operand(op, 0), &a = r.operand(op, 1), &b = r.operand(op, 2);
  RtValue out = makeValue(op.result()->type());
  const uint8_t *cond = c.data<uint8_t>();
  visitBits(elementBytes(a.type), [&](auto tag) {
    using B = decltype(tag);
    const B *x = a.data<B>(), *y = b.data<B>();
    B *o = out.data<B>();
    for (int64_t i = 0; i < out.size; ++i)
      o[i] = (cond[i] & 1) ? x[i] : y[i];
  });
  r.setResult(op, 0, std::move(out));
  return true;
}

//===----------------------------------------------------------------------===//
// Casts. Every cast reads its operand into a 64-bit integer or a double,
// then writes the result type from that: integers lose nothing on the way,
// and a double holds every fp32/fp16/bf16 value exactly, so fptrunc to a
// 16-bit format rounds once, from the exact value.
//===----------------------------------------------------------------------===//

double readFloat(const RtValue &v, int64_t i) {
  return visitNumeric(v.type->dtype(), [&](auto num) -> double {
    using Num = decltype(num);
    return static_cast<double>(Num::load(v.data<typename Num::Storage>()[i]));
  });
}

void writeFloat(RtValue &v, int64_t i, double x) {
  switch (v.type->dtype()) {
  case DType::F16:
    v.data<uint16_t>()[i] = doubleToHalf(x);
    return;
  case DType::BF16:
    v.data<uint16_t>()[i] = doubleToBF16(x);
    return;
  case DType::F32:
    v.data<float>()[i] = static_cast<float>(x);
    return;
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    v.data<uint8_t>()[i] = doubleToFp8(x, v.type->dtype());
    return;
  default:
    v.data<double>()[i] = x;
    return;
  }
}

// Integers are stored truncated to their width (two's complement wrap).
void writeInt(RtValue &v, int64_t i, uint64_t x) {
  visitBits(elementBytes(v.type), [&](auto tag) {
    using B = decltype(tag);
    v.data<B>()[i] = static_cast<B>(x);
  });
  if (!v.type->isPointerLike() && v.type->dtype() == DType::I1)
    v.data<uint8_t>()[i] &= 1;
}

// fptosi/fptoui saturate and map NaN to 0, as PTX's cvt.rzi does.
uint64_t floatToInt(double x, DType to) {
  if (std::isnan(x))
    return 0;
  x = std::trunc(x);
  unsigned bits = dtypeBits(to);
  if (isUnsigned(to) || to == DType::I1) {
    double hi = bits == 64 ? 18446744073709551615.0 : std::ldexp(1.0, bits) - 1;
    if (x <= 0)
      return 0;
    if (x >= hi)
      return bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
    return static_cast<uint64_t>(x);
  }
  double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1) - 1;
  if (x <= lo)
    return static_cast<uint64_t>(bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)));
  if (x >= hi)
    return static_cast<uint64_t>(bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1);
  return static_cast<uint64_t>(static_cast<int64_t>(x));
}

// int -> float rounds once for fp32/fp64 (the C conversion); for fp16/bf16
// it goes through double, exact below 2^53 (larger values overflow fp16
// anyway; for bf16 the double step may round twice, see docs/interpreter.md).
double intToDouble(int64_t x, bool isUnsignedSource) {
  return isUnsignedSource ? static_cast<double>(static_cast<uint64_t>(x)) : static_cast<double>(x);
}

bool cast(ProgramRunner &r, Operation &op) {
  const RtValue &a = r.operand(op, 0);
  Type *to = op.result()->type();
  RtValue out = makeValue(to);
  Type *fe = a.type->elementType(), *te = to->elementType();
  switch (op.opcode()) {
  case Opcode::SExt:
  case Opcode::ZExt:
  case Opcode::Trunc:
  case Opcode::PtrToInt:
  case Opcode::IntToPtr: {
    bool asSigned = op.is(Opcode::SExt);
    for (int64_t i = 0; i < a.size; ++i)
      writeInt(out, i, static_cast<uint64_t>(readInt(a, i, asSigned)));
    break;
  }
  case Opcode::Bitcast:
    std::memcpy(out.data<std::byte>(), a.data<std::byte>(), a.size * elementBytes(a.type));
    break;
  case Opcode::FPExt:
  case Opcode::FPTrunc:
    for (int64_t i = 0; i < a.size; ++i)
      writeFloat(out, i, readFloat(a, i));
    break;
  case Opcode::SIToFP:
  case Opcode::UIToFP: {
    bool isUnsignedSource = op.is(Opcode::UIToFP);
    for (int64_t i = 0; i < a.size; ++i) {
      int64_t x = readInt(a, i, !isUnsignedSource);
      if (te->dtype() == DType::F32)
        out.data<float>()[i] =
            isUnsignedSource ? static_cast<float>(static_cast<uint64_t>(x)) : static_cast<float>(x);
      else
        writeFloat(out, i, intToDouble(x, isUnsignedSource));
    }
    break;
  }
  case Opcode::FPToSI:
  case Opcode::FPToUI:
    for (int64_t i = 0; i < a.size; ++i)
      writeInt(out, i, floatToInt(readFloat(a, i), te->dtype()));
    break;
  default:
    return r.fail(op, fmt::format("cannot cast {} to {}", fe->str(), te->str()));
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

bool constant(ProgramRunner &r, Operation &op) {
  Type *t = op.result()->type();
  const Attribute *value = op.attrs().get("value");
  RtValue one = makeValue(r.context().withShape(t, {}));
  if (t->isFloatLike()) {
    double v = value->isFloat() ? value->getFloat() : static_cast<double>(value->getInt());
    writeFloat(one, 0, v);
  } else {
    uint64_t v = value->isInt() ? static_cast<uint64_t>(value->getInt())
                                : floatToInt(value->getFloat(), t->dtype());
    writeInt(one, 0, v);
  }
  if (!t->isTensor())
    return r.setResult(op, 0, std::move(one)), true;
  RtValue out = makeValue(t);
  visitBits(elementBytes(t), [&](auto tag) {
    using B = decltype(tag);
    B v = one.data<B>()[0];
    B *o = out.data<B>();
    for (int64_t i = 0; i < out.size; ++i)
      o[i] = v;
  });
  r.setResult(op, 0, std::move(out));
  return true;
}

} // namespace

bool execElementwise(ProgramRunner &r, Operation &op) {
  switch (op.opcode()) {
  case Opcode::Constant:
    return constant(r, op);
  case Opcode::CmpI:
    return cmpI(r, op);
  case Opcode::CmpF:
    return visitNumeric(op.operand(0)->type()->dtype(),
                        [&](auto num) { return cmpF<decltype(num)>(r, op); });
  case Opcode::Select:
    return select(r, op);
  case Opcode::ExternElementwise:
    return execExternElementwise(r, op);
  case Opcode::SExt:
  case Opcode::ZExt:
  case Opcode::Trunc:
  case Opcode::FPExt:
  case Opcode::FPTrunc:
  case Opcode::SIToFP:
  case Opcode::UIToFP:
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::Bitcast:
  case Opcode::PtrToInt:
  case Opcode::IntToPtr:
    return cast(r, op);
  case Opcode::Fma:
    return visitNumeric(op.result()->type()->dtype(),
                        [&](auto num) { return fma<decltype(num)>(r, op); });
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::Exp:
  case Opcode::Exp2:
  case Opcode::Log:
  case Opcode::Log2:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Floor:
  case Opcode::Ceil:
  case Opcode::Erf:
    return visitNumeric(op.result()->type()->dtype(),
                        [&](auto num) { return unary<decltype(num)>(r, op); });
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Div:
  case Opcode::Rem:
  case Opcode::FloorDiv:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Shl:
  case Opcode::AShr:
  case Opcode::LShr:
  case Opcode::Max:
  case Opcode::Min:
    return visitNumeric(op.result()->type()->dtype(),
                        [&](auto num) { return binary<decltype(num)>(r, op); });
  default:
    return r.fail(op, fmt::format("'{}' is not supported by the interpreter", op.name()));
  }
}

} // namespace tk::interp
