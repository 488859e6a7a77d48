// Transfer functions of axis info, by op family: constants and ranges,
// arithmetic, division, shifts and bitwise ops, comparisons and select, and
// shape ops. Each is written per dimension from the definitions in
// analysis/AxisInfo.h; each comment says why the rule is sound.
#include "analysis/AxisInfoRules.h"

#include <algorithm>
#include <numeric>

namespace tk::axisinfo {
namespace {

class Rules {
public:
  explicit Rules(const Lookup &lookup) : lookup_(lookup) {}

  AxisInfo transfer(Operation &op) {
    Type *t = op.result()->type();
    std::vector<int64_t> dims = dimsOf(t);
    auto operandInfo = [&](unsigned i) { return info(op.operand(i)); };
    switch (op.opcode()) {
    case Opcode::ConvertLayout: // the same values, held by other threads
      return operandInfo(0);
    case Opcode::Constant:
      if (std::optional<int64_t> v = op.attrs().getInt("value"); v && t->isIntLike())
        return AxisInfo::ofConstant(*v, t->isTensor() ? dims : std::vector<int64_t>{});
      return AxisInfo::uniform(dims, 1);
    case Opcode::MakeRange: {
      int64_t start = op.attrs().getInt("start").value_or(0);
      AxisInfo r = AxisInfo::unknown(1);
      r.contiguity[0] = dims[0];
      r.divisibility[0] = powerOfTwoDivisor(start);
      if (dims[0] == 1)
        r.constant = start;
      return r;
    }
    case Opcode::ProgramId:
    case Opcode::NumPrograms:
      return AxisInfo::unknown(1);
    case Opcode::Splat: {
      const AxisInfo &s = operandInfo(0);
      AxisInfo r = AxisInfo::uniform(dims, s.elementDivisibility(0));
      r.constant = s.constant;
      return r;
    }
    case Opcode::Broadcast:
      return broadcast(op, dims);
    case Opcode::ExpandDims:
      return expandDims(op);
    case Opcode::Reshape:
      return reshape(op, dims);
    case Opcode::Trans:
      return trans(op);
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::AddPtr:
      return addSub(op, operandInfo(0), operandInfo(1));
    case Opcode::Mul:
      return mul(t, operandInfo(0), operandInfo(1));
    case Opcode::Div:
    case Opcode::FloorDiv:
      return div(op, operandInfo(0), operandInfo(1));
    case Opcode::Rem:
      return rem(t, operandInfo(0), operandInfo(1));
    case Opcode::Shl:
    case Opcode::AShr:
    case Opcode::LShr:
      return shift(op, operandInfo(0), operandInfo(1));
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
      return bitwise(op, operandInfo(0), operandInfo(1));
    case Opcode::Neg:
    case Opcode::Abs:
      if (!t->isIntLike())
        break;
      return unaryKeepsDivisibility(op, operandInfo(0));
    case Opcode::Max:
    case Opcode::Min: {
      if (!t->isIntLike())
        break;
      // The result is one of the operands, element by element.
      AxisInfo r = elementwise(op);
      const AxisInfo &a = operandInfo(0), &b = operandInfo(1);
      for (unsigned d = 0; d < r.rank(); ++d)
        r.divisibility[d] = std::min(a.elementDivisibility(d), b.elementDivisibility(d));
      return r;
    }
    case Opcode::Select:
      return select(op);
    case Opcode::CmpI:
      return cmpi(op);
    case Opcode::SExt:
    case Opcode::ZExt:
    case Opcode::Trunc:
    case Opcode::Bitcast:
    case Opcode::PtrToInt:
    case Opcode::IntToPtr: {
      // Integer and pointer casts keep the runs (as Triton's do: index
      // values are assumed to fit); a constant stays only if it still reads
      // the same in the new type.
      Type *from = op.operand(0)->type();
      if (!(from->isIntLike() || from->isPointerLike()) || !(t->isIntLike() || t->isPointerLike()))
        break;
      AxisInfo r = operandInfo(0);
      if (r.constant && !(t->isIntLike() && fits(*r.constant, t)))
        r.constant.reset();
      return r;
    }
    case Opcode::Load:
      // Lanes with the same pointer (and mask, and other) read the same value.
      return elementwise(op);
    default:
      break;
    }
    if (op.hasTrait(OpTrait::Elementwise))
      return elementwise(op);
    return AxisInfo::unknown(dims.size());
  }

  // Any op that computes each element from the operands' elements at the same
  // position: equal inputs over a block give equal outputs.
  AxisInfo elementwise(Operation &op) {
    std::vector<int64_t> dims = dimsOf(op.result()->type());
    AxisInfo r = AxisInfo::unknown(dims.size());
    r.constancy = dims;
    for (Value *v : op.operands()) {
      const AxisInfo &i = info(v);
      if (i.rank() != r.rank())
        return AxisInfo::unknown(dims.size());
      for (unsigned d = 0; d < r.rank(); ++d)
        r.constancy[d] = std::gcd(r.constancy[d], i.constancy[d]);
    }
    return r;
  }

  AxisInfo unaryKeepsDivisibility(Operation &op, const AxisInfo &x) {
    AxisInfo r = elementwise(op);
    for (unsigned d = 0; d < r.rank(); ++d)
      r.divisibility[d] = x.elementDivisibility(d);
    if (x.constant) {
      int64_t v = *x.constant;
      if (v != INT64_MIN) {
        int64_t folded = op.is(Opcode::Neg) ? -v : std::abs(v);
        if (fits(folded, op.result()->type()))
          return withConstant(folded, op);
      }
    }
    return r;
  }

  AxisInfo withConstant(int64_t v, Operation &op) {
    Type *t = op.result()->type();
    return AxisInfo::ofConstant(v, t->isTensor() ? t->shape() : std::vector<int64_t>{});
  }

  // Whether `v` is a value of the integer type `t` (so folding did not wrap).
  static bool fits(int64_t v, Type *t) {
    if (!t->isIntLike())
      return false;
    DType dt = t->dtype();
    unsigned bits = dtypeBits(dt);
    if (bits == 1)
      return v == 0 || v == 1;
    if (bits >= 64)
      return !isUnsigned(dt) || v >= 0;
    if (isUnsigned(dt))
      return v >= 0 && v < (int64_t(1) << bits);
    return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
  }

  // Folds a binary op of two known constants; nullopt when it would
  // overflow, divide by zero or leave the type's range.
  static std::optional<int64_t> fold(Opcode opc, int64_t a, int64_t b, Type *t) {
    int64_t r = 0;
    switch (opc) {
    case Opcode::Add:
      if (__builtin_add_overflow(a, b, &r))
        return std::nullopt;
      break;
    case Opcode::Sub:
      if (__builtin_sub_overflow(a, b, &r))
        return std::nullopt;
      break;
    case Opcode::Mul:
      if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
      break;
    case Opcode::Div:
    case Opcode::FloorDiv:
    case Opcode::Rem:
      if (b == 0 || (a == INT64_MIN && b == -1) || isUnsigned(t->dtype()))
        return std::nullopt;
      if (opc == Opcode::Div)
        r = a / b;
      else if (opc == Opcode::Rem)
        r = a % b;
      else
        r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
      break;
    case Opcode::And:
      r = a & b;
      break;
    case Opcode::Or:
      r = a | b;
      break;
    case Opcode::Xor:
      r = a ^ b;
      break;
    default:
      return std::nullopt;
    }
    if (!fits(r, t))
      return std::nullopt;
    return r;
  }

  std::optional<AxisInfo> foldBoth(Operation &op, const AxisInfo &x, const AxisInfo &y) {
    if (!x.constant || !y.constant)
      return std::nullopt;
    if (std::optional<int64_t> v = fold(op.opcode(), *x.constant, *y.constant, op.result()->type()))
      return withConstant(*v, op);
    return std::nullopt;
  }

  // x + y, x - y and addptr(p, offset). Over a block where one side runs
  // consecutively and the other is constant, the sum runs consecutively (a
  // difference only when the constant is subtracted); the block's first
  // element is the sum of two first elements, so it is divisible by the
  // smaller of their divisibilities. An offset counts in elements, so for
  // addptr its divisibility is scaled to bytes.
  AxisInfo addSub(Operation &op, const AxisInfo &x, const AxisInfo &y) {
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(op.result()->type()).size());
    if (std::optional<AxisInfo> c = foldBoth(op, x, y))
      return *c;
    int64_t scale = 1;
    if (op.is(Opcode::AddPtr)) {
      Type *pointee = cast<PointerType>(op.result()->type()->elementType())->pointee();
      scale = pointee->isPointer() ? 8 : dtypeBytes(pointee->dtype());
    }
    AxisInfo r = AxisInfo::unknown(x.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
      int64_t c = std::gcd(x.contiguity[d], y.constancy[d]);
      if (!op.is(Opcode::Sub))
        c = std::max(c, std::gcd(x.constancy[d], y.contiguity[d]));
      r.contiguity[d] = c;
      r.divisibility[d] = std::min(x.divisibilityAt(d, c), satMul(y.divisibilityAt(d, c), scale));
    }
    return r;
  }

  // x * y: a run times 1 is the run; otherwise products are not consecutive,
  // but each element is divisible by the product of the factors' element
  // divisibilities.
  AxisInfo mul(Type *t, const AxisInfo &x, const AxisInfo &y) {
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    if (x.constant && y.constant) {
      std::optional<int64_t> v = fold(Opcode::Mul, *x.constant, *y.constant, t);
      if (v)
        return AxisInfo::ofConstant(*v, t->isTensor() ? t->shape() : std::vector<int64_t>{});
    }
    if (y.constant == 1)
      return x;
    if (x.constant == 1)
      return y;
    if (x.constant == 0 || y.constant == 0)
      return AxisInfo::ofConstant(0, t->isTensor() ? t->shape() : std::vector<int64_t>{});
    AxisInfo r = AxisInfo::unknown(x.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
      r.divisibility[d] = satMul(x.elementDivisibility(d), y.elementDivisibility(d));
    }
    return r;
  }

  // The length of aligned blocks over which `x op y` is uniform when x runs
  // consecutively from multiples of the block length and y is one value that
  // is a multiple of it: no block straddles a multiple of y (for division
  // and remainder) or y itself (for x < y).
  static int64_t alignedBlock(const AxisInfo &x, const AxisInfo &y, unsigned d) {
    return std::min({x.contiguity[d], x.divisibility[d], y.constancy[d], y.elementDivisibility(d)});
  }

  // x / y (and floordiv): uniform over blocks that do not straddle a
  // multiple of y; an exact division by a power of two keeps the rest of the
  // divisibility.
  AxisInfo div(Operation &op, const AxisInfo &x, const AxisInfo &y) {
    Type *t = op.result()->type();
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    if (std::optional<AxisInfo> c = foldBoth(op, x, y))
      return *c;
    if (y.constant == 1)
      return x;
    AxisInfo r = AxisInfo::unknown(x.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = std::max(std::gcd(x.constancy[d], y.constancy[d]), alignedBlock(x, y, d));
      if (y.constant && isPowerOfTwo(*y.constant) && x.elementDivisibility(d) >= *y.constant)
        r.divisibility[d] = std::max<int64_t>(1, x.elementDivisibility(d) / *y.constant);
    }
    return r;
  }

  // x % y: a run that does not straddle a multiple of y stays a run; its
  // first element x0 - q*y is divisible by what divides both x0 and y.
  AxisInfo rem(Type *t, const AxisInfo &x, const AxisInfo &y) {
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    if (x.constant && y.constant)
      if (std::optional<int64_t> v = fold(Opcode::Rem, *x.constant, *y.constant, t))
        return AxisInfo::ofConstant(*v, t->isTensor() ? t->shape() : std::vector<int64_t>{});
    if (y.constant == 1 || y.constant == -1)
      return AxisInfo::ofConstant(0, t->isTensor() ? t->shape() : std::vector<int64_t>{});
    AxisInfo r = AxisInfo::unknown(x.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = std::gcd(x.constancy[d], y.constancy[d]);
      int64_t c = std::max<int64_t>(1, alignedBlock(x, y, d));
      r.contiguity[d] = c;
      // Runs that start on multiples of a power-of-two divisor start at 0.
      int64_t x0 = x.divisibilityAt(d, c);
      if (y.constant && isPowerOfTwo(*y.constant) && x0 >= *y.constant)
        r.divisibility[d] = kMaxDiv;
      else
        r.divisibility[d] = std::min(x0, y.elementDivisibility(d));
    }
    return r;
  }

  // Shifts by a known amount k: shl is a multiplication by 2^k, ashr a
  // floor division by 2^k (exact for negative values too), lshr the same on
  // the unsigned bits.
  AxisInfo shift(Operation &op, const AxisInfo &x, const AxisInfo &y) {
    Type *t = op.result()->type();
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    unsigned bits = t->isIntLike() ? dtypeBits(t->dtype()) : 64;
    if (!y.constant || *y.constant < 0 || *y.constant >= static_cast<int64_t>(bits) ||
        *y.constant >= 62) {
      AxisInfo r = elementwise(op);
      if (op.is(Opcode::Shl))
        for (unsigned d = 0; d < r.rank(); ++d)
          r.divisibility[d] = x.elementDivisibility(d);
      return r;
    }
    int64_t k = *y.constant;
    if (k == 0)
      return x;
    int64_t p = int64_t(1) << k;
    AxisInfo r = AxisInfo::unknown(x.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = x.constancy[d];
      if (op.is(Opcode::Shl)) {
        r.divisibility[d] = satMul(x.elementDivisibility(d), p);
        continue;
      }
      r.constancy[d] = std::max(r.constancy[d], std::min({x.contiguity[d], x.divisibility[d], p}));
      if (x.elementDivisibility(d) >= p)
        r.divisibility[d] = std::max<int64_t>(1, x.elementDivisibility(d) / p);
    }
    if (x.constant && op.is(Opcode::Shl) && *x.constant >= 0 &&
        *x.constant < (int64_t(1) << (62 - k))) {
      int64_t v = *x.constant << k;
      if (fits(v, t))
        return withConstant(v, op);
    }
    if (x.constant && op.is(Opcode::AShr))
      return withConstant(*x.constant >> k, op);
    return r;
  }

  // and/or/xor. With a constant mask: x & (2^k - 1) is x mod 2^k (for every
  // x, in two's complement); x & -2^k rounds x down to a multiple of 2^k;
  // x | c with c below x's element divisibility is x + c. Otherwise the
  // lowest set bit bounds the divisibility: x & y keeps the larger, x | y
  // and x ^ y the smaller.
  AxisInfo bitwise(Operation &op, const AxisInfo &x, const AxisInfo &y) {
    Type *t = op.result()->type();
    if (x.rank() != y.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    if (std::optional<AxisInfo> c = foldBoth(op, x, y))
      return *c;
    // The rules are symmetric: put the constant, if any, on the right.
    const AxisInfo &a = y.constant ? x : y;
    const AxisInfo &m = y.constant ? y : x;
    if (m.constant) {
      int64_t c = *m.constant;
      if (op.is(Opcode::And)) {
        if (c == -1)
          return a;
        if (c == 0)
          return withConstant(0, op);
        if (c > 0 && c < INT64_MAX && isPowerOfTwo(c + 1))
          return rem(t, a, asDivisor(m, c + 1));
        if (c < 0 && c != INT64_MIN && isPowerOfTwo(-c)) {
          AxisInfo r = AxisInfo::unknown(a.rank());
          for (unsigned d = 0; d < r.rank(); ++d) {
            r.constancy[d] =
                std::max(a.constancy[d], std::min({a.contiguity[d], a.divisibility[d], -c}));
            r.divisibility[d] = std::max(a.elementDivisibility(d), -c);
          }
          return r;
        }
      } else {
        if (c == 0)
          return a;
        if (op.is(Opcode::Or) && c > 0) {
          bool belowAll = true;
          for (unsigned d = 0; d < a.rank(); ++d)
            belowAll &= c < a.elementDivisibility(d);
          if (belowAll)
            return addSub(op, a, m); // disjoint bits: an add
        }
      }
    }
    AxisInfo r = elementwise(op);
    for (unsigned d = 0; d < r.rank(); ++d) {
      int64_t dx = x.elementDivisibility(d), dy = y.elementDivisibility(d);
      r.divisibility[d] = op.is(Opcode::And) ? std::max(dx, dy) : std::min(dx, dy);
    }
    return r;
  }

  // A constant's facts with the divisibility of `divisor` in place of its
  // own, so the remainder rule reads x & (2^k-1) as x mod 2^k.
  static AxisInfo asDivisor(const AxisInfo &m, int64_t divisor) {
    AxisInfo r = m;
    for (int64_t &d : r.divisibility)
      d = divisor;
    r.constant = divisor;
    return r;
  }

  // select c, a, b: where c is uniform over a block, the result is a's or
  // b's block, so it runs where both run.
  AxisInfo select(Operation &op) {
    const AxisInfo &c = info(op.operand(0)), &a = info(op.operand(1)), &b = info(op.operand(2));
    Type *t = op.result()->type();
    if (c.rank() != a.rank() || a.rank() != b.rank())
      return AxisInfo::unknown(dimsOf(t).size());
    if (c.constant)
      return *c.constant ? a : b;
    AxisInfo r = AxisInfo::unknown(a.rank());
    for (unsigned d = 0; d < r.rank(); ++d) {
      r.constancy[d] = std::gcd(c.constancy[d], std::gcd(a.constancy[d], b.constancy[d]));
      int64_t run = std::gcd(c.constancy[d], std::gcd(a.contiguity[d], b.contiguity[d]));
      r.contiguity[d] = run;
      r.divisibility[d] = std::min(a.divisibilityAt(d, run), b.divisibilityAt(d, run));
    }
    if (a.constant && a.constant == b.constant)
      r.constant = a.constant;
    return r;
  }

  // cmpi: x < y and x >= y change value only where x crosses y, between y-1
  // and y; when x runs from multiples of L and y is a multiple of L, that
  // is at a block boundary. For x <= y and x > y the crossing is between y
  // and y+1, so the same holds with the roles swapped (y runs, x is one
  // value). eq/ne are uniform only where both sides are.
  AxisInfo cmpi(Operation &op) {
    AxisInfo r = elementwise(op);
    const AxisInfo &x = info(op.operand(0)), &y = info(op.operand(1));
    if (x.rank() != r.rank() || y.rank() != r.rank())
      return r;
    std::string pred = op.attrs().getString("predicate").value_or("");
    bool xRuns = pred == "slt" || pred == "ult" || pred == "sge" || pred == "uge";
    bool yRuns = pred == "sle" || pred == "ule" || pred == "sgt" || pred == "ugt";
    for (unsigned d = 0; d < r.rank(); ++d) {
      if (xRuns)
        r.constancy[d] = std::max(r.constancy[d], alignedBlock(x, y, d));
      if (yRuns)
        r.constancy[d] = std::max(r.constancy[d], alignedBlock(y, x, d));
    }
    return r;
  }

  // --- shape ops

  // Stretched dimensions (size 1 -> n) repeat one element: uniform along
  // them, and that element's divisibility holds for all.
  AxisInfo broadcast(Operation &op, const std::vector<int64_t> &dims) {
    const AxisInfo &s = info(op.operand(0));
    Type *from = op.operand(0)->type();
    if (!from->isTensor() || from->rank() != dims.size() || s.rank() != dims.size())
      return AxisInfo::unknown(dims.size());
    AxisInfo r = s;
    for (unsigned d = 0; d < dims.size(); ++d)
      if (from->shape()[d] == 1 && dims[d] != 1) {
        r.contiguity[d] = 1;
        r.constancy[d] = dims[d];
        r.divisibility[d] = s.elementDivisibility(d);
      }
    return r;
  }

  // Every dimension's element divisibility holds for all elements, so the
  // best of them describes a new dimension of size 1.
  static int64_t bestElementDivisibility(const AxisInfo &s) {
    int64_t best = 1;
    for (unsigned d = 0; d < s.rank(); ++d)
      best = std::max(best, s.elementDivisibility(d));
    return best;
  }

  AxisInfo expandDims(Operation &op) {
    const AxisInfo &s = info(op.operand(0));
    Type *from = op.operand(0)->type();
    int64_t axis = op.attrs().getInt("axis").value_or(-1);
    unsigned rank = from->rank();
    if (axis < 0 || axis > rank || (from->isTensor() && s.rank() != rank))
      return AxisInfo::unknown(rank + 1);
    AxisInfo r = from->isTensor() ? s : AxisInfo::unknown(0);
    if (!from->isTensor()) {
      r.contiguity.clear();
      r.divisibility.clear();
      r.constancy.clear();
    }
    r.contiguity.insert(r.contiguity.begin() + axis, 1);
    r.divisibility.insert(r.divisibility.begin() + axis, bestElementDivisibility(s));
    r.constancy.insert(r.constancy.begin() + axis, 1);
    r.constant = s.constant;
    return r;
  }

  // Reshapes that only add or drop dimensions of size 1 keep the facts of the
  // other dimensions; any other reshape keeps only what holds for every
  // element (and full uniformity).
  AxisInfo reshape(Operation &op, const std::vector<int64_t> &dims) {
    const AxisInfo &s = info(op.operand(0));
    std::vector<int64_t> from = dimsOf(op.operand(0)->type());
    if (s.rank() != from.size())
      return AxisInfo::unknown(dims.size());
    int64_t best = bestElementDivisibility(s);
    std::vector<unsigned> srcBig, dstBig;
    for (unsigned d = 0; d < from.size(); ++d)
      if (from[d] != 1)
        srcBig.push_back(d);
    for (unsigned d = 0; d < dims.size(); ++d)
      if (dims[d] != 1)
        dstBig.push_back(d);
    bool sameBig = srcBig.size() == dstBig.size();
    for (size_t i = 0; sameBig && i < srcBig.size(); ++i)
      sameBig = from[srcBig[i]] == dims[dstBig[i]];
    bool allUniform = true;
    for (unsigned d = 0; d < s.rank(); ++d)
      allUniform &= s.constancy[d] == from[d];
    AxisInfo r = allUniform ? AxisInfo::uniform(dims, best) : AxisInfo::unknown(dims.size());
    for (unsigned d = 0; d < r.rank(); ++d)
      r.divisibility[d] = best;
    if (sameBig)
      for (size_t i = 0; i < srcBig.size(); ++i) {
        r.contiguity[dstBig[i]] = s.contiguity[srcBig[i]];
        r.divisibility[dstBig[i]] = s.divisibility[srcBig[i]];
        r.constancy[dstBig[i]] = s.constancy[srcBig[i]];
      }
    r.constant = s.constant;
    return r;
  }

  AxisInfo trans(Operation &op) {
    const AxisInfo &s = info(op.operand(0));
    const Attribute *a = op.attrs().get("order");
    unsigned rank = op.result()->type()->rank();
    if (!a || !a->isIntArray() || a->getIntArray().size() != rank || s.rank() != rank)
      return AxisInfo::unknown(rank);
    const std::vector<int64_t> &order = a->getIntArray();
    AxisInfo r = AxisInfo::unknown(rank);
    std::vector<bool> seen(rank, false);
    for (unsigned i = 0; i < rank; ++i) {
      if (order[i] < 0 || order[i] >= rank || seen[order[i]])
        return AxisInfo::unknown(rank);
      seen[order[i]] = true;
      r.contiguity[i] = s.contiguity[order[i]];
      r.divisibility[i] = s.divisibility[order[i]];
      r.constancy[i] = s.constancy[order[i]];
    }
    r.constant = s.constant;
    return r;
  }

private:
  const AxisInfo &info(Value *v) { return lookup_(v); }

  const Lookup &lookup_;
};

} // namespace

AxisInfo transfer(Operation &op, const Lookup &lookup) { return Rules(lookup).transfer(op); }

} // namespace tk::axisinfo
