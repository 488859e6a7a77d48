#include "ir/ConstantFold.h"

#include "lang/Float16.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tk {
namespace {

uint64_t asUnsigned(int64_t v, unsigned bits) {
  uint64_t u = static_cast<uint64_t>(v);
  return bits >= 64 ? u : u & ((uint64_t(1) << bits) - 1);
}

int64_t asSigned(int64_t v, unsigned bits) {
  uint64_t u = asUnsigned(v, bits);
  if (bits < 64 && (u >> (bits - 1)) & 1)
    u |= ~((uint64_t(1) << bits) - 1);
  return static_cast<int64_t>(u);
}

// Rounds to a binary format with `mant` stored mantissa bits, minimum normal
// exponent `emin` and maximum exponent `emax`, ties to even. Scaling by a
// power of two is exact, so nearbyint (round-to-nearest-even in the default
// mode) does the one rounding.
double roundToFormat(double x, int mant, int emin, int emax) {
  if (x == 0 || std::isnan(x) || std::isinf(x))
    return x;
  int e;
  std::frexp(x, &e);
  int lead = std::max(e - 1, emin);
  double quantum = std::ldexp(1.0, lead - mant);
  double r = std::nearbyint(x / quantum) * quantum;
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
  if (std::fabs(r) > maxFinite)
    return std::copysign(INFINITY, x);
  return r;
}

bool isSignedInt(DType d) { return dtypeKind(d) == DTypeKind::SignedInt; }

std::optional<Attribute> foldInt(Opcode opc, DType d, int64_t a, int64_t b) {
  unsigned bits = dtypeBits(d);
  bool sgn = isSignedInt(d);
  uint64_t ua = asUnsigned(a, bits), ub = asUnsigned(b, bits);
  int64_t sa = asSigned(a, bits), sb = asSigned(b, bits);
  auto wrap = [&](uint64_t v) { return Attribute(normalizeInt(static_cast<int64_t>(v), d)); };
  switch (opc) {
  case Opcode::Add:
    return wrap(ua + ub);
  case Opcode::Sub:
    return wrap(ua - ub);
  case Opcode::Mul:
    return wrap(ua * ub);
  case Opcode::Div:
  case Opcode::Rem:
  case Opcode::FloorDiv: {
    if (ub == 0)
      return std::nullopt;
    if (!sgn) {
      if (opc == Opcode::Rem)
        return wrap(ua % ub);
      return wrap(ua / ub);
    }
    if (bits == 64 && sa == std::numeric_limits<int64_t>::min() && sb == -1)
      return std::nullopt;
    int64_t q = sa / sb, r = sa % sb;
    if (opc == Opcode::Rem)
      return wrap(static_cast<uint64_t>(r));
    if (opc == Opcode::FloorDiv && r != 0 && ((r < 0) != (sb < 0)))
      --q; // truncation went toward zero; floor goes one further down
    return wrap(static_cast<uint64_t>(q));
  }
  case Opcode::And:
    return wrap(ua & ub);
  case Opcode::Or:
    return wrap(ua | ub);
  case Opcode::Xor:
    return wrap(ua ^ ub);
  case Opcode::Shl:
  case Opcode::AShr:
  case Opcode::LShr:
    if (ub >= bits)
      return std::nullopt;
    if (opc == Opcode::Shl)
      return wrap(ua << ub);
    if (opc == Opcode::LShr)
      return wrap(ua >> ub);
    return wrap(static_cast<uint64_t>(sa >> ub));
  case Opcode::Max:
    return sgn ? wrap(static_cast<uint64_t>(std::max(sa, sb))) : wrap(std::max(ua, ub));
  case Opcode::Min:
    return sgn ? wrap(static_cast<uint64_t>(std::min(sa, sb))) : wrap(std::min(ua, ub));
  default:
    return std::nullopt;
  }
}

std::optional<Attribute> foldFloat(Opcode opc, DType d, double a, double b, std::string_view nan) {
  auto round = [&](double v) { return Attribute(roundToDType(v, d)); };
  switch (opc) {
  case Opcode::Add:
    return round(a + b);
  case Opcode::Sub:
    return round(a - b);
  case Opcode::Mul:
    return round(a * b);
  case Opcode::Div:
    return round(a / b);
  case Opcode::Rem:
    return round(std::fmod(a, b));
  case Opcode::FloorDiv:
    return round(std::floor(a / b));
  case Opcode::Max:
  case Opcode::Min: {
    if (std::isnan(a) || std::isnan(b)) {
      if (nan == "propagate")
        return Attribute(double(NAN));
      return Attribute(std::isnan(a) ? b : a);
    }
    // -0.0 < +0.0 for max/min, as IEEE 754-2019 maximum/minimum order them.
    if (a == b)
      return Attribute((opc == Opcode::Max) == std::signbit(a) ? b : a);
    return Attribute(opc == Opcode::Max ? std::max(a, b) : std::min(a, b));
  }
  default:
    return std::nullopt;
  }
}

bool compareInt(std::string_view p, DType d, int64_t a, int64_t b, bool &out) {
  unsigned bits = dtypeBits(d);
  int64_t sa = asSigned(a, bits), sb = asSigned(b, bits);
  uint64_t ua = asUnsigned(a, bits), ub = asUnsigned(b, bits);
  if (p == "eq")
    out = ua == ub;
  else if (p == "ne")
    out = ua != ub;
  else if (p == "slt")
    out = sa < sb;
  else if (p == "sle")
    out = sa <= sb;
  else if (p == "sgt")
    out = sa > sb;
  else if (p == "sge")
    out = sa >= sb;
  else if (p == "ult")
    out = ua < ub;
  else if (p == "ule")
    out = ua <= ub;
  else if (p == "ugt")
    out = ua > ub;
  else if (p == "uge")
    out = ua >= ub;
  else
    return false;
  return true;
}

bool compareFloat(std::string_view p, double a, double b, bool &out) {
  bool unordered = std::isnan(a) || std::isnan(b);
  if (p == "ord" || p == "uno") {
    out = (p == "uno") == unordered;
    return true;
  }
  if (p.size() != 3 || (p[0] != 'o' && p[0] != 'u'))
    return false;
  if (unordered) {
    out = p[0] == 'u';
    return true;
  }
  std::string_view rel = p.substr(1);
  if (rel == "eq")
    out = a == b;
  else if (rel == "ne")
    out = a != b;
  else if (rel == "lt")
    out = a < b;
  else if (rel == "le")
    out = a <= b;
  else if (rel == "gt")
    out = a > b;
  else if (rel == "ge")
    out = a >= b;
  else
    return false;
  return true;
}

std::optional<Attribute> foldCast(Opcode opc, DType from, DType to, const Attribute &v) {
  switch (opc) {
  case Opcode::SExt:
    return Attribute(normalizeInt(asSigned(v.getInt(), dtypeBits(from)), to));
  case Opcode::ZExt:
    return Attribute(
        normalizeInt(static_cast<int64_t>(asUnsigned(v.getInt(), dtypeBits(from))), to));
  case Opcode::Trunc:
    return Attribute(normalizeInt(v.getInt(), to));
  case Opcode::FPExt:
  case Opcode::FPTrunc:
    return Attribute(roundToDType(v.getFloat(), to));
  case Opcode::SIToFP:
  case Opcode::UIToFP: {
    int64_t i = v.getInt();
    bool sgn = opc == Opcode::SIToFP;
    unsigned bits = dtypeBits(from);
    // fp32 straight from the 64-bit integer: going through double could round twice.
    if (to == DType::F32)
      return Attribute(double(sgn ? float(asSigned(i, bits)) : float(asUnsigned(i, bits))));
    double dv = sgn ? double(asSigned(i, bits)) : double(asUnsigned(i, bits));
    return Attribute(roundToDType(dv, to));
  }
  case Opcode::FPToSI:
  case Opcode::FPToUI: {
    double f = std::trunc(v.getFloat());
    unsigned bits = dtypeBits(to);
    if (std::isnan(f))
      return std::nullopt;
    if (opc == Opcode::FPToSI) {
      double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
      if (f < lo || f >= hi)
        return std::nullopt;
      return Attribute(normalizeInt(static_cast<int64_t>(f), to));
    }
    if (f < 0 || f >= std::ldexp(1.0, bits))
      return std::nullopt;
    return Attribute(normalizeInt(static_cast<int64_t>(static_cast<uint64_t>(f)), to));
  }
  case Opcode::Bitcast: {
    if (isInteger(from) && isInteger(to))
      return Attribute(normalizeInt(v.getInt(), to));
    if (from == DType::F32 && isInteger(to)) {
      float f = static_cast<float>(v.getFloat());
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return Attribute(normalizeInt(u, to));
    }
    if (isInteger(from) && to == DType::F32) {
      uint32_t u = static_cast<uint32_t>(v.getInt());
      float f;
      std::memcpy(&f, &u, 4);
      return Attribute(double(f));
    }
    if (from == DType::F64 && isInteger(to)) {
      double f = v.getFloat();
      int64_t i;
      std::memcpy(&i, &f, 8);
      return Attribute(normalizeInt(i, to));
    }
    if (isInteger(from) && to == DType::F64) {
      int64_t i = v.getInt();
      double f;
      std::memcpy(&f, &i, 8);
      return Attribute(f);
    }
    return std::nullopt; // 16-bit float bit patterns: left to the device
  }
  default:
    return std::nullopt;
  }
}

} // namespace

int64_t normalizeInt(int64_t v, DType d) {
  unsigned bits = dtypeBits(d);
  return isSignedInt(d) ? asSigned(v, bits) : static_cast<int64_t>(asUnsigned(v, bits));
}

double roundToDType(double v, DType d) {
  switch (d) {
  case DType::F16:
    return roundToFormat(v, 10, -14, 15);
  case DType::BF16:
    return roundToFormat(v, 7, -126, 127);
  case DType::F32:
    return static_cast<double>(static_cast<float>(v));
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    return fp8ToFloat(doubleToFp8(v, d), d);
  default:
    return v;
  }
}

std::optional<Attribute> foldOp(Operation &op, const std::vector<Attribute> &operands) {
  if (operands.size() != op.numOperands() || op.numResults() != 1)
    return std::nullopt;
  for (unsigned i = 0; i < operands.size(); ++i)
    if (!op.operand(i)->type()->elementType()->isScalar())
      return std::nullopt;
  if (!op.result()->type()->elementType()->isScalar())
    return std::nullopt;
  // Operand values must match their types' kinds (the verifier ensures this
  // for constants; a mismatch here means unverified IR, which is not folded).
  for (unsigned i = 0; i < operands.size(); ++i) {
    bool wantFloat = op.operand(i)->type()->isFloatLike();
    if (wantFloat ? !operands[i].isFloat() : !operands[i].isInt())
      return std::nullopt;
  }
  Opcode opc = op.opcode();
  DType d = op.operand(0)->type()->dtype();
  DType rd = op.result()->type()->dtype();
  const auto &v = operands;

  if (opc == Opcode::Select)
    return v[0].getInt() ? v[1] : v[2];
  if (opc == Opcode::CmpI || opc == Opcode::CmpF) {
    std::string pred = op.attrs().getString("predicate").value_or("");
    bool out;
    bool ok = opc == Opcode::CmpI ? compareInt(pred, d, v[0].getInt(), v[1].getInt(), out)
                                  : compareFloat(pred, v[0].getFloat(), v[1].getFloat(), out);
    return ok ? std::optional(Attribute(int64_t(out))) : std::nullopt;
  }
  if (v.size() == 1 && opc != Opcode::Neg && opc != Opcode::Abs && opc != Opcode::Floor &&
      opc != Opcode::Ceil && opc != Opcode::Sqrt)
    return foldCast(opc, d, rd, v[0]);

  if (isFloat(d)) {
    double a = v[0].getFloat();
    switch (opc) {
    case Opcode::Neg:
      return Attribute(-a);
    case Opcode::Abs:
      return Attribute(std::fabs(a));
    case Opcode::Floor:
      return Attribute(std::floor(a));
    case Opcode::Ceil:
      return Attribute(std::ceil(a));
    case Opcode::Sqrt: // correctly rounded on the device too
      return Attribute(roundToDType(std::sqrt(a), d));
    default:
      break;
    }
    if (v.size() != 2)
      return std::nullopt;
    return foldFloat(opc, d, a, v[1].getFloat(), op.attrs().getString("nan").value_or(""));
  }
  int64_t a = v[0].getInt();
  switch (opc) {
  case Opcode::Neg:
    return Attribute(normalizeInt(static_cast<int64_t>(0 - static_cast<uint64_t>(a)), d));
  case Opcode::Abs:
    return Attribute(isSignedInt(d) && asSigned(a, dtypeBits(d)) < 0
                         ? normalizeInt(static_cast<int64_t>(0 - static_cast<uint64_t>(a)), d)
                         : a);
  default:
    break;
  }
  if (v.size() != 2)
    return std::nullopt;
  return foldInt(opc, d, a, v[1].getInt());
}

} // namespace tk
