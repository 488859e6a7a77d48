// Ops that combine elements across a block: reduce, scan and dot; and
// map_elementwise, which runs its region on scalars as combiners do.
//
// A reduction or scan along `axis` sees its operand as [outer, len, inner]
// (the dimensions before the axis, the axis, the dimensions after it).
// Reductions combine in a tree, so rounding error grows with log(len), not
// len. The built-in kinds (sum, max, min), which commute, fold the upper
// half onto the lower half, ((x0+x2) + (x1+x3)) for four elements, much as
// the GPU's butterfly across lanes does, in loops the compiler vectorises.
// Custom combiners need not commute, so they combine neighbours,
// ((x0 . x1) . (x2 . x3)), keeping left operands left. Scans run left to right (right to left
// when reversed). Each combine of fp16/bf16 rounds to that type, as the
// GPU's combine would.
#include "interpreter/InterpreterImpl.h"

#include <cmath>
#include <fmt/format.h>

namespace tk::interp {
namespace {

struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit splitAt(Type *t, int64_t axis) {
  AxisSplit s;
  const auto &shape = t->shape();
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[d];
  return s;
}

template <typename C> C addWrap(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    return a + b;
  else
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) +
                          static_cast<std::make_unsigned_t<C>>(b));
}

template <typename C> C mulWrap(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    return a * b;
  else {
    using W = std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;
    return static_cast<C>(W(a) * W(b));
  }
}

// max/min of reductions ignore NaN (IEEE maxNum): the result is NaN only
// when every element is.
// Written without branches so the tree loops vectorise: a NaN `b` fails
// the comparison and `a` stays; a NaN `a` is replaced by `b`.
template <typename C> C maxNum(C a, C b) { return (a != a || b > a) ? b : a; }
template <typename C> C minNum(C a, C b) { return (a != a || b < a) ? b : a; }

// The halving tree over rows of `inner` elements held in t[0 .. len*inner):
// row j takes f(row j, row j + half). An odd row out stays for the next
// level (len is a power of two in valid IR, but nothing depends on it).
template <typename C, typename F> void treeCombine(C *t, int64_t len, int64_t inner, F f) {
  for (int64_t n = len; n > 1;) {
    int64_t half = n / 2, upper = n - half;
    C *lo = t + (upper - half) * inner; // rows [upper - half, upper) meet [upper, n)
    const C *hi = t + upper * inner;
    for (int64_t k = 0; k < half * inner; ++k)
      lo[k] = f(lo[k], hi[k]);
    n = upper;
  }
}

template <typename Num> bool reduceKind(ProgramRunner &r, Operation &op, const std::string &kind) {
  using C = typename Num::Compute;
  using S = typename Num::Storage;
  const RtValue &in = r.operand(op, 0);
  AxisSplit s = splitAt(in.type, *op.attrs().getInt("axis"));
  RtValue out = makeValue(op.result()->type());
  const S *x = in.data<S>();
  // Rounding each combine to the storage type (a no-op but for fp16/bf16).
  auto rounded = [](C v) { return Num::load(Num::store(v)); };
  std::vector<C> t(s.len * s.inner);
  if (kind == "argmax" || kind == "argmin") {
    bool isMax = kind == "argmax";
    std::vector<int32_t> idx(s.len * s.inner);
    int32_t *o = out.data<int32_t>();
    for (int64_t a = 0; a < s.outer; ++a) {
      // Sequential: the first position of the extreme value wins, and NaN
      // never wins unless every value is NaN.
      for (int64_t k = 0; k < s.inner; ++k) {
        int64_t best = 0;
        C bv = Num::load(x[(a * s.len) * s.inner + k]);
        for (int64_t j = 1; j < s.len; ++j) {
          C v = Num::load(x[(a * s.len + j) * s.inner + k]);
          bool better;
          if constexpr (std::is_floating_point_v<C>)
            better = !std::isnan(v) && (std::isnan(bv) || (isMax ? v > bv : v < bv));
          else
            better = isMax ? v > bv : v < bv;
          if (better) {
            bv = v;
            best = j;
          }
        }
        o[a * s.inner + k] = static_cast<int32_t>(best);
      }
    }
    r.setResult(op, 0, std::move(out));
    return true;
  }
  S *o = out.data<S>();
  for (int64_t a = 0; a < s.outer; ++a) {
    const S *src = x + a * s.len * s.inner;
    for (int64_t i = 0; i < s.len * s.inner; ++i)
      t[i] = Num::load(src[i]);
    if (kind == "sum")
      treeCombine(t.data(), s.len, s.inner, [&](C p, C q) { return rounded(addWrap(p, q)); });
    else if (kind == "max")
      treeCombine(t.data(), s.len, s.inner, [](C p, C q) { return maxNum(p, q); });
    else if (kind == "min")
      treeCombine(t.data(), s.len, s.inner, [](C p, C q) { return minNum(p, q); });
    else
      return r.fail(op, fmt::format("unknown reduction kind \"{}\"", kind));
    for (int64_t k = 0; k < s.inner; ++k)
      o[a * s.inner + k] = Num::store(t[k]);
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

// One element of each operand as a scalar value, for combiner regions.
RtValue scalarAt(ProgramRunner &r, const RtValue &v, int64_t i) {
  Type *e = r.context().withShape(v.type, {});
  RtValue s = makeValue(e);
  unsigned size = elementBytes(e);
  std::memcpy(s.data<std::byte>(), v.data<std::byte>() + i * size, size);
  return s;
}

void storeAt(RtValue &dst, int64_t i, const RtValue &scalar) {
  unsigned size = elementBytes(dst.type);
  std::memcpy(dst.data<std::byte>() + i * size, scalar.data<std::byte>(), size);
}

// A combiner region takes (lhs values..., rhs values...) and yields the
// combined values; it runs on scalars, one combine at a time.
bool combine(ProgramRunner &r, Operation &op, std::vector<RtValue> &lhs,
             const std::vector<RtValue> &rhs) {
  std::vector<RtValue> args = lhs;
  args.insert(args.end(), rhs.begin(), rhs.end());
  std::vector<RtValue> out;
  if (!r.runBlock(op.body(), args, out))
    return false;
  lhs = std::move(out);
  return true;
}

bool reduceRegion(ProgramRunner &r, Operation &op) {
  unsigned n = op.numOperands();
  const RtValue &first = r.operand(op, 0);
  AxisSplit s = splitAt(first.type, *op.attrs().getInt("axis"));
  std::vector<RtValue> outs;
  for (unsigned i = 0; i < n; ++i)
    outs.push_back(makeValue(op.result(i)->type()));
  std::vector<std::vector<RtValue>> t(s.len);
  for (int64_t a = 0; a < s.outer; ++a)
    for (int64_t k = 0; k < s.inner; ++k) {
      for (int64_t j = 0; j < s.len; ++j) {
        t[j].clear();
        for (unsigned i = 0; i < n; ++i)
          t[j].push_back(scalarAt(r, r.operand(op, i), (a * s.len + j) * s.inner + k));
      }
      for (int64_t len = s.len; len > 1; len = (len + 1) / 2) {
        for (int64_t j = 0; j < len / 2; ++j) {
          std::vector<RtValue> lhs = t[2 * j];
          if (!combine(r, op, lhs, t[2 * j + 1]))
            return false;
          t[j] = std::move(lhs);
        }
        if (len % 2)
          t[len / 2] = t[len - 1];
      }
      for (unsigned i = 0; i < n; ++i)
        storeAt(outs[i], a * s.inner + k, t[0][i]);
    }
  for (unsigned i = 0; i < n; ++i)
    r.setResult(op, i, std::move(outs[i]));
  return true;
}

template <typename Num>
bool scanKind(ProgramRunner &r, Operation &op, const std::string &kind, bool reverse) {
  using C = typename Num::Compute;
  using S = typename Num::Storage;
  const RtValue &in = r.operand(op, 0);
  AxisSplit s = splitAt(in.type, *op.attrs().getInt("axis"));
  bool isSum = kind == "cumsum";
  if (!isSum && kind != "cumprod")
    return r.fail(op, fmt::format("unknown scan kind \"{}\"", kind));
  RtValue out = makeValue(op.result()->type());
  const S *x = in.data<S>();
  S *o = out.data<S>();
  for (int64_t a = 0; a < s.outer; ++a)
    for (int64_t k = 0; k < s.inner; ++k) {
      C acc{};
      for (int64_t step = 0; step < s.len; ++step) {
        int64_t j = reverse ? s.len - 1 - step : step;
        int64_t at = (a * s.len + j) * s.inner + k;
        C v = Num::load(x[at]);
        acc = step == 0 ? v : Num::load(Num::store(isSum ? addWrap(acc, v) : mulWrap(acc, v)));
        o[at] = Num::store(acc);
      }
    }
  r.setResult(op, 0, std::move(out));
  return true;
}

bool scanRegion(ProgramRunner &r, Operation &op, bool reverse) {
  unsigned n = op.numOperands();
  AxisSplit s = splitAt(r.operand(op, 0).type, *op.attrs().getInt("axis"));
  std::vector<RtValue> outs;
  for (unsigned i = 0; i < n; ++i)
    outs.push_back(makeValue(op.result(i)->type()));
  for (int64_t a = 0; a < s.outer; ++a)
    for (int64_t k = 0; k < s.inner; ++k) {
      std::vector<RtValue> acc;
      for (int64_t step = 0; step < s.len; ++step) {
        int64_t j = reverse ? s.len - 1 - step : step;
        int64_t at = (a * s.len + j) * s.inner + k;
        std::vector<RtValue> cur;
        for (unsigned i = 0; i < n; ++i)
          cur.push_back(scalarAt(r, r.operand(op, i), at));
        // The running value is the left operand: it holds the elements
        // already scanned (the later ones, for a reverse scan).
        if (step == 0)
          acc = std::move(cur);
        else if (!combine(r, op, acc, cur))
          return false;
        for (unsigned i = 0; i < n; ++i)
          storeAt(outs[i], at, acc[i]);
      }
    }
  for (unsigned i = 0; i < n; ++i)
    r.setResult(op, i, std::move(outs[i]));
  return true;
}

// tf32 keeps 10 mantissa bits; the GPU's cvt.rna rounds to nearest, ties
// away from zero.
float toTF32(float x) {
  if (!std::isfinite(x))
    return x;
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &b, 4);
  return x;
}

// Element i of a float value, widened to T (float or double).
template <typename T> void readFloats(const RtValue &v, std::vector<T> &out) {
  out.resize(v.size);
  visitNumeric(v.type->dtype(), [&](auto num) {
    using Num = decltype(num);
    const auto *x = v.data<typename Num::Storage>();
    for (int64_t i = 0; i < v.size; ++i)
      out[i] = static_cast<T>(Num::load(x[i]));
  });
}

// Float dot: products and sums in fp32 (fp64 for fp64 operands), each output
// accumulated in k order starting from the accumulator; fp16/bf16 products
// are exact in fp32. The result is rounded to the accumulator type once.
template <typename T>
void floatDot(const RtValue &a, const RtValue &b, const RtValue &c, RtValue &out, bool tf32) {
  int64_t M = a.type->shape()[0], K = a.type->shape()[1], N = b.type->shape()[1];
  std::vector<T> x, y, acc;
  readFloats(a, x);
  readFloats(b, y);
  readFloats(c, acc);
  if (tf32) {
    if constexpr (std::is_same_v<T, float>) {
      for (T &v : x)
        v = toTF32(v);
      for (T &v : y)
        v = toTF32(v);
    }
  }
  for (int64_t m = 0; m < M; ++m) {
    T *row = acc.data() + m * N;
    for (int64_t k = 0; k < K; ++k) {
      T av = x[m * K + k];
      const T *brow = y.data() + k * N;
      for (int64_t n = 0; n < N; ++n)
        row[n] += av * brow[n];
    }
  }
  visitNumeric(out.type->dtype(), [&](auto num) {
    using Num = decltype(num);
    using S = typename Num::Storage;
    S *o = out.data<S>();
    for (int64_t i = 0; i < out.size; ++i) {
      if constexpr (std::is_same_v<Num, HalfNum>)
        o[i] = doubleToHalf(acc[i]);
      else if constexpr (std::is_same_v<Num, BF16Num>)
        o[i] = doubleToBF16(acc[i]);
      else
        o[i] = static_cast<S>(acc[i]);
    }
  });
}

// Integer dot (int8 x int8 + int32 is the GPU's case): exact products,
// sums wrapping in the accumulator's width.
void intDot(const RtValue &a, const RtValue &b, const RtValue &c, RtValue &out) {
  int64_t M = a.type->shape()[0], K = a.type->shape()[1], N = b.type->shape()[1];
  bool sa = isSigned(a.type->dtype()), sc = isSigned(c.type->dtype());
  std::vector<int64_t> x(a.size), y(b.size);
  for (int64_t i = 0; i < a.size; ++i)
    x[i] = readInt(a, i, sa);
  for (int64_t i = 0; i < b.size; ++i)
    y[i] = readInt(b, i, sa);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      uint64_t acc = static_cast<uint64_t>(readInt(c, m * N + n, sc));
      for (int64_t k = 0; k < K; ++k)
        acc += static_cast<uint64_t>(x[m * K + k]) * static_cast<uint64_t>(y[k * N + n]);
      visitBits(elementBytes(out.type), [&](auto tag) {
        using B = decltype(tag);
        out.data<B>()[m * N + n] = static_cast<B>(acc);
      });
    }
}

} // namespace

bool execReduce(ProgramRunner &r, Operation &op) {
  std::optional<std::string> kind = op.attrs().getString("kind");
  if (!kind)
    return reduceRegion(r, op);
  return visitNumeric(op.operand(0)->type()->dtype(),
                      [&](auto num) { return reduceKind<decltype(num)>(r, op, *kind); });
}

bool execScan(ProgramRunner &r, Operation &op) {
  bool reverse = op.attrs().getBool("reverse").value_or(false);
  std::optional<std::string> kind = op.attrs().getString("kind");
  if (!kind)
    return scanRegion(r, op, reverse);
  return visitNumeric(op.operand(0)->type()->dtype(),
                      [&](auto num) { return scanKind<decltype(num)>(r, op, *kind, reverse); });
}

// The body runs on scalars: pack consecutive elements (row-major) of every
// operand at a time, its yields filling the same elements of the results.
bool execMapElementwise(ProgramRunner &r, Operation &op) {
  int64_t pack = *op.attrs().getInt("pack");
  std::vector<RtValue> outs;
  for (Value *res : op.results())
    outs.push_back(makeValue(res->type()));
  int64_t n = op.operand(0)->type()->numElements();
  std::vector<RtValue> args, yields;
  for (int64_t start = 0; start < n; start += pack) {
    args.clear();
    for (unsigned i = 0; i < op.numOperands(); ++i)
      for (int64_t j = 0; j < pack; ++j)
        args.push_back(scalarAt(r, r.operand(op, i), start + j));
    yields.clear();
    if (!r.runBlock(op.body(), args, yields))
      return false;
    for (size_t k = 0; k < outs.size(); ++k)
      for (int64_t j = 0; j < pack; ++j)
        storeAt(outs[k], start + j, yields[k * size_t(pack) + size_t(j)]);
  }
  for (unsigned k = 0; k < op.numResults(); ++k)
    r.setResult(op, k, std::move(outs[k]));
  return true;
}

bool execDot(ProgramRunner &r, Operation &op) {
  const RtValue &a = r.operand(op, 0), &b = r.operand(op, 1), &c = r.operand(op, 2);
  RtValue out = makeValue(op.result()->type());
  if (a.type->isIntLike()) {
    intDot(a, b, c, out);
  } else {
    bool tf32 = op.attrs().getString("input_precision").value_or("ieee") == "tf32";
    bool wide = a.type->dtype() == DType::F64 || c.type->dtype() == DType::F64;
    if (wide)
      floatDot<double>(a, b, c, out, false);
    else
      floatDot<float>(a, b, c, out, tf32 && a.type->dtype() == DType::F32);
  }
  r.setResult(op, 0, std::move(out));
  return true;
}

} // namespace tk::interp
