// extern_elementwise: the libdevice functions (lang/Libdevice.def) on the
// CPU. Each symbol is one C++ function on the element types its dtypes name
// (int32_t, uint32_t, int64_t, uint64_t, float, double); the table below maps
// symbols to them, and checks on first use that every symbol of the language
// table has one with the same dtypes.
//
// Accuracy: fp32 functions are computed in double and fp64 ones in long
// double (x86's 64-bit significand) and rounded once, so they are within
// about half an ulp of the exact value, and within libdevice's documented
// error of the GPU's results (CUDA's "Mathematical Functions" tables; the GPU
// differential cases in tests/gpu/DiffCasesLibdevice.cpp check them against
// those bounds). Exact operations (rounding, conversions, arithmetic with a
// rounding mode, integer functions) are bit-exact: the directed roundings run
// the operation with the host's rounding mode switched (fesetround is per
// thread, and volatile operands keep the operation between the switches).
// The fast approximations (fast_sinf, ...) compute the exact function the
// approximation stands for; conversions to integers saturate and take NaN
// to 0, as PTX's cvt does.
#include "interpreter/InterpreterImpl.h"
#include "lang/Libdevice.h"

#include <fmt/format.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <unordered_map>
#include <utility>

namespace tk::interp {
namespace {

using i32 = int32_t;
using u32 = uint32_t;
using i64 = int64_t;
using u64 = uint64_t;
using f32 = float;
using f64 = double;
using ld = long double;

//===----------------------------------------------------------------------===//
// Rounding modes and saturating conversions
//===----------------------------------------------------------------------===//

enum class Round { Rn, Rz, Rd, Ru };

int feMode(Round r) {
  switch (r) {
  case Round::Rz:
    return FE_TOWARDZERO;
  case Round::Rd:
    return FE_DOWNWARD;
  case Round::Ru:
    return FE_UPWARD;
  default:
    return FE_TONEAREST;
  }
}

// `f` run under rounding mode `r`; `f` reads its operands from volatiles and
// writes its result to one, so the compiler keeps it between the two calls.
template <typename F> auto rounded(Round r, F f) {
  int saved = std::fegetround();
  std::fesetround(feMode(r));
  auto out = f();
  std::fesetround(saved);
  return out;
}

template <typename T> T add(T a, T b, Round r) {
  return rounded(r, [&] {
    volatile T x = a, y = b;
    volatile T z = x + y;
    return T(z);
  });
}
template <typename T> T sub(T a, T b, Round r) {
  return rounded(r, [&] {
    volatile T x = a, y = b;
    volatile T z = x - y;
    return T(z);
  });
}
template <typename T> T mul(T a, T b, Round r) {
  return rounded(r, [&] {
    volatile T x = a, y = b;
    volatile T z = x * y;
    return T(z);
  });
}
template <typename T> T div(T a, T b, Round r) {
  return rounded(r, [&] {
    volatile T x = a, y = b;
    volatile T z = x / y;
    return T(z);
  });
}
template <typename T> T sqrtR(T a, Round r) {
  return rounded(r, [&] {
    volatile T x = a;
    volatile T z = std::sqrt(T(x));
    return T(z);
  });
}
template <typename T> T fmaR(T a, T b, T c, Round r) {
  return rounded(r, [&] {
    volatile T x = a, y = b, w = c;
    volatile T z = std::fma(T(x), T(y), T(w));
    return T(z);
  });
}
// A conversion between numeric types under rounding mode `r`.
template <typename To, typename From> To convert(From a, Round r) {
  return rounded(r, [&] {
    volatile From x = a;
    volatile To z = static_cast<To>(From(x));
    return To(z);
  });
}

// `x` rounded to an integral value by `r`.
template <typename T> T roundIntegral(T x, Round r) {
  switch (r) {
  case Round::Rz:
    return std::trunc(x);
  case Round::Rd:
    return std::floor(x);
  case Round::Ru:
    return std::ceil(x);
  default:
    return std::nearbyint(x); // the default mode: to nearest, ties to even
  }
}

// PTX's float-to-integer cvt: rounded by `r`, clamped to the range, NaN 0.
template <typename I, typename T> I toInt(T x, Round r) {
  if (std::isnan(x))
    return 0;
  ld v = roundIntegral(ld(x), r);
  if (v <= ld(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (v >= ld(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// fp32 math: the double function, rounded once to float.
template <typename F> f32 viaDouble(F f, f32 x) { return static_cast<f32>(f(double(x))); }

//===----------------------------------------------------------------------===//
// Functions C++ does not have
//===----------------------------------------------------------------------===//

constexpr ld kPi = 3.141592653589793238462643383279502884L;

// sin(pi x) and cos(pi x), reduced exactly: x mod 2 is exact in binary.
ld sinpiL(ld x) {
  if (std::isinf(x) || std::isnan(x))
    return std::numeric_limits<ld>::quiet_NaN();
  ld r = std::fmod(x, 2.0L); // (-2, 2), sign of x
  if (r == 0 || r == 1 || r == -1)
    return std::copysign(0.0L, x);
  if (r == 0.5L || r == -1.5L)
    return 1.0L;
  if (r == -0.5L || r == 1.5L)
    return -1.0L;
  return std::sin(kPi * r);
}

ld cospiL(ld x) {
  if (std::isinf(x) || std::isnan(x))
    return std::numeric_limits<ld>::quiet_NaN();
  ld r = std::fabs(std::fmod(x, 2.0L)); // [0, 2)
  if (r == 0.5L || r == 1.5L)
    return 0.0L;
  if (r == 0)
    return 1.0L;
  if (r == 1)
    return -1.0L;
  return std::cos(kPi * r);
}

// The inverse of erfc on (0, 2), by Newton's method on log(erfc(t)), which
// stays well scaled deep in the tail (erfc(t) = 1e-300 at t = 26.4).
ld erfcinvL(ld y) {
  if (std::isnan(y) || y < 0 || y > 2)
    return std::numeric_limits<ld>::quiet_NaN();
  if (y == 0)
    return std::numeric_limits<ld>::infinity();
  if (y == 2)
    return -std::numeric_limits<ld>::infinity();
  if (y > 1)
    return -erfcinvL(2 - y);
  if (y == 1)
    return 0;
  const ld c = 2 / std::sqrt(kPi);
  // A start from erfc(t) ~ exp(-t^2) / (t sqrt(pi)) in the tail, 0.5 near 0.
  ld t = y < 0.1L ? std::sqrt(-std::log(y * 1.7724538509L)) : (1 - y);
  ld target = std::log(y);
  for (int i = 0; i < 100; ++i) {
    ld e = std::erfc(t);
    ld g = std::log(e) - target;
    ld dg = -c * std::exp(-t * t) / e;
    ld step = g / dg;
    t -= step;
    if (std::fabs(step) <= std::fabs(t) * 1e-19L)
      break;
  }
  return t;
}

// The inverse of erf on (-1, 1): by erf near 0 (where erfc loses digits),
// else through erfcinv of 1 - |x|, which is exact for |x| >= 0.5.
ld erfinvL(ld x) {
  if (std::isnan(x) || std::fabs(x) > 1)
    return std::numeric_limits<ld>::quiet_NaN();
  if (std::fabs(x) == 1)
    return std::copysign(std::numeric_limits<ld>::infinity(), x);
  if (std::fabs(x) >= 0.5L)
    return std::copysign(erfcinvL(1 - std::fabs(x)), x);
  if (x == 0)
    return x;
  const ld c = 2 / std::sqrt(kPi);
  ld t = x * std::sqrt(kPi) / 2; // erf(t) ~ c t near 0
  for (int i = 0; i < 100; ++i) {
    ld step = (std::erf(t) - x) / (c * std::exp(-t * t));
    t -= step;
    if (std::fabs(step) <= std::fabs(t) * 1e-19L)
      break;
  }
  return t;
}

// exp(x^2) erfc(x); past x = 100, where erfc underflows even in long double,
// the asymptotic series 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - ...).
ld erfcxL(ld x) {
  if (x < 100)
    return std::exp(x * x) * std::erfc(x);
  ld inv = 1 / (2 * x * x), term = 1, sum = 1;
  for (int k = 1; k < 6; ++k) {
    term *= -(2 * k - 1) * inv;
    sum += term;
  }
  return sum / (x * std::sqrt(kPi));
}

// The modified Bessel functions I0 and I1: their power series have positive
// terms, so summing them in long double loses nothing to cancellation.
ld besselI(int order, ld x) {
  if (std::isnan(x))
    return x;
  ld ax = std::fabs(x);
  if (std::isinf(ax))
    return order == 0 ? ax : x;
  ld q = ax * ax / 4;
  ld term = order == 0 ? 1 : ax / 2, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= q / (ld(k) * ld(k + order));
    sum += term;
    if (term <= sum * 1e-21L)
      break;
    if (std::isinf(sum))
      break;
  }
  return order == 1 && x < 0 ? -sum : sum;
}

ld lgammaL(ld x) {
  int sign = 0;
  return lgammal_r(x, &sign); // lgammal writes the global signgam; this does not
}

//===----------------------------------------------------------------------===//
// Integer functions
//===----------------------------------------------------------------------===//

i32 clz32(i32 x) { return x == 0 ? 32 : std::countl_zero(u32(x)); }
i32 clz64(i64 x) { return x == 0 ? 64 : std::countl_zero(u64(x)); }
i32 ffs32(i32 x) { return x == 0 ? 0 : std::countr_zero(u32(x)) + 1; }
i32 ffs64(i64 x) { return x == 0 ? 0 : std::countr_zero(u64(x)) + 1; }
u32 brev32(u32 x) {
  u32 r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
u64 brev64(u64 x) { return (u64(brev32(u32(x))) << 32) | brev32(u32(x >> 32)); }
i32 brevI32(i32 x) { return i32(brev32(u32(x))); }
i64 brevI64(i64 x) { return i64(brev64(u64(x))); }
i32 popc32(i32 x) { return std::popcount(u32(x)); }
i32 popc64(i64 x) { return std::popcount(u64(x)); }

// Byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x.
i32 bytePerm(i32 x, i32 y, i32 s) {
  u64 bytes = (u64(u32(y)) << 32) | u32(x);
  u32 out = 0;
  for (int n = 0; n < 4; ++n) {
    unsigned sel = (u32(s) >> (4 * n)) & 7u;
    out |= u32((bytes >> (8 * sel)) & 0xFF) << (8 * n);
  }
  return i32(out);
}

// Sign-extended (mul24) or zero-extended (umul24) low 24 bits, multiplied.
i32 mul24(i32 x, i32 y) {
  i32 a = i32(u32(x) << 8) >> 8, b = i32(u32(y) << 8) >> 8;
  return i32(u32(a) * u32(b));
}
u32 umul24(u32 x, u32 y) { return (x & 0xFFFFFFu) * (y & 0xFFFFFFu); }

i32 sad(i32 x, i32 y, u32 z) {
  u32 d = x < y ? u32(y) - u32(x) : u32(x) - u32(y);
  return i32(d + z);
}
u32 usad(u32 x, u32 y, u32 z) { return (x < y ? y - x : x - y) + z; }

i32 hadd(i32 a, i32 b) { return i32(u32(a & b) + u32((a ^ b) >> 1)); }
u32 uhadd(u32 a, u32 b) { return (a & b) + ((a ^ b) >> 1); }
i32 rhadd(i32 a, i32 b) { return i32(u32(a | b) - u32((a ^ b) >> 1)); }
u32 urhadd(u32 a, u32 b) { return (a | b) - ((a ^ b) >> 1); }

i32 mulhi(i32 a, i32 b) { return i32((i64(a) * i64(b)) >> 32); }
u32 umulhi(u32 a, u32 b) { return u32((u64(a) * u64(b)) >> 32); }
i64 mul64hi(i64 a, i64 b) { return i64((__int128(a) * __int128(b)) >> 64); }
u64 umul64hi(u64 a, u64 b) {
  return u64((static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b)) >> 64);
}

i32 iabs(i32 x) { return x < 0 ? i32(0u - u32(x)) : x; } // abs(INT_MIN) is INT_MIN
i64 absLL(i64 x) { return x < 0 ? i64(0ull - u64(x)) : x; }

//===----------------------------------------------------------------------===//
// The table: symbol -> a loop over the elements of the operands
//===----------------------------------------------------------------------===//

template <typename T> constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, i32>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, u32>)
    return DType::U32;
  else if constexpr (std::is_same_v<T, i64>)
    return DType::I64;
  else if constexpr (std::is_same_v<T, u64>)
    return DType::U64;
  else if constexpr (std::is_same_v<T, f32>)
    return DType::F32;
  else
    return DType::F64;
}

using Loop = void (*)(const std::vector<const RtValue *> &in, RtValue &out);

struct Entry {
  Loop loop;
  DType result;
  std::vector<DType> args;
};

template <auto F> struct Apply;
template <typename R, typename... A, R (*F)(A...)> struct Apply<F> {
  template <size_t... I>
  static void run(const std::vector<const RtValue *> &in, RtValue &out, std::index_sequence<I...>) {
    R *o = out.data<R>();
    for (int64_t e = 0; e < out.size; ++e)
      o[e] = F(in[I]->template data<A>()[e]...);
  }
  static void loop(const std::vector<const RtValue *> &in, RtValue &out) {
    run(in, out, std::index_sequence_for<A...>{});
  }
  static Entry entry() { return {&loop, dtypeOf<R>(), {dtypeOf<A>()...}}; }
};

// The functions, as plain functions (Apply takes their addresses).
#define TK_F32_1(NAME, EXPR)                                                                       \
  f32 NAME(f32 a) {                                                                                \
    double x = a;                                                                                  \
    return static_cast<f32>(EXPR);                                                                 \
  }
#define TK_F64_1(NAME, EXPR)                                                                       \
  f64 NAME(f64 a) {                                                                                \
    ld x = a;                                                                                      \
    return static_cast<f64>(EXPR);                                                                 \
  }
#define TK_F32_2(NAME, EXPR)                                                                       \
  f32 NAME(f32 a, f32 b) {                                                                         \
    double x = a, y = b;                                                                           \
    return static_cast<f32>(EXPR);                                                                 \
  }
#define TK_F64_2(NAME, EXPR)                                                                       \
  f64 NAME(f64 a, f64 b) {                                                                         \
    ld x = a, y = b;                                                                               \
    return static_cast<f64>(EXPR);                                                                 \
  }
// A math function in both widths: fp32 through double, fp64 through long double.
#define TK_MATH_1(NAME, EXPR) TK_F32_1(NAME##f, EXPR) TK_F64_1(NAME##d, EXPR)
#define TK_MATH_2(NAME, EXPR) TK_F32_2(NAME##f, EXPR) TK_F64_2(NAME##d, EXPR)

TK_MATH_1(fabs_, std::fabs(x))
TK_MATH_1(floor_, std::floor(x))
TK_MATH_1(ceil_, std::ceil(x))
TK_MATH_1(trunc_, std::trunc(x))
TK_MATH_1(rint_, std::nearbyint(x))
TK_MATH_1(round_, std::round(x))
TK_MATH_1(sqrt_, std::sqrt(x))
TK_MATH_1(rsqrt_, 1 / std::sqrt(x))
TK_MATH_1(sin_, std::sin(x))
TK_MATH_1(cos_, std::cos(x))
TK_MATH_1(tan_, std::tan(x))
TK_MATH_1(sinpi_, sinpiL(x))
TK_MATH_1(cospi_, cospiL(x))
TK_MATH_1(asin_, std::asin(x))
TK_MATH_1(acos_, std::acos(x))
TK_MATH_1(atan_, std::atan(x))
TK_MATH_1(sinh_, std::sinh(x))
TK_MATH_1(cosh_, std::cosh(x))
TK_MATH_1(tanh_, std::tanh(x))
TK_MATH_1(asinh_, std::asinh(x))
TK_MATH_1(acosh_, std::acosh(x))
TK_MATH_1(atanh_, std::atanh(x))
TK_MATH_1(exp_, std::exp(x))
TK_MATH_1(exp2_, std::exp2(x))
TK_MATH_1(exp10_, std::pow(decltype(x)(10), x))
TK_MATH_1(expm1_, std::expm1(x))
TK_MATH_1(log_, std::log(x))
TK_MATH_1(log2_, std::log2(x))
TK_MATH_1(log10_, std::log10(x))
TK_MATH_1(log1p_, std::log1p(x))
TK_MATH_1(logb_, std::logb(x))
// glibc's cube roots are not correctly rounded: at -54.02196081819512 both
// its double cbrt and its cbrtl rounded to double are 3 ulps from the exact
// root. One Newton step in long double from the double root brings it within
// half an ulp of double (the step doubles the correct bits).
ld cbrtRefined(ld x) {
  ld y = std::cbrt(static_cast<double>(x));
  if (!std::isfinite(y) || y == 0)
    return y;
  return y - (y * y * y - x) / (3 * y * y);
}
TK_F32_1(cbrt_f, std::cbrt(x))
TK_F64_1(cbrt_d, cbrtRefined(x))
TK_F32_1(rcbrt_f, 1 / std::cbrt(x))
TK_F64_1(rcbrt_d, 1 / cbrtRefined(x))
TK_MATH_1(erf_, std::erf(x))
TK_MATH_1(erfc_, std::erfc(x))
TK_MATH_1(erfinv_, erfinvL(x))
TK_MATH_1(erfcinv_, erfcinvL(x))
TK_MATH_1(erfcx_, erfcxL(x))
TK_MATH_1(normcdf_, std::erfc(-x / std::sqrt(ld(2))) / 2)
TK_MATH_1(normcdfinv_, -std::sqrt(ld(2)) * erfcinvL(2 * ld(x)))
TK_MATH_1(lgamma_, lgammaL(x))
TK_MATH_1(tgamma_, std::tgamma(x))
TK_MATH_1(j0_, j0l(x))
TK_MATH_1(j1_, j1l(x))
TK_MATH_1(y0_, y0l(x))
TK_MATH_1(y1_, y1l(x))
TK_MATH_1(i0_, besselI(0, x))
TK_MATH_1(i1_, besselI(1, x))
TK_MATH_2(atan2_, std::atan2(x, y))
TK_MATH_2(hypot_, std::hypot(x, y))
TK_MATH_2(rhypot_, 1 / std::hypot(ld(x), ld(y)))
TK_MATH_2(pow_, std::pow(x, y))
TK_MATH_2(fmod_, std::fmod(x, y))
TK_MATH_2(remainder_, std::remainder(x, y))
TK_MATH_2(fdim_, std::fdim(x, y))
TK_MATH_2(copysign_, std::copysign(x, y))

f32 nextafter_f(f32 a, f32 b) { return std::nextafter(a, b); }
f64 nextafter_d(f64 a, f64 b) { return std::nextafter(a, b); }

ld norm(std::initializer_list<ld> v) {
  ld s = 0;
  bool inf = false;
  for (ld x : v) {
    inf |= std::isinf(x);
    s += x * x;
  }
  return inf ? std::numeric_limits<ld>::infinity() : std::sqrt(s); // inf wins over NaN, as hypot
}
f32 norm3d_f(f32 a, f32 b, f32 c) { return f32(norm({a, b, c})); }
f64 norm3d_d(f64 a, f64 b, f64 c) { return f64(norm({a, b, c})); }
f32 rnorm3d_f(f32 a, f32 b, f32 c) { return f32(1 / norm({a, b, c})); }
f64 rnorm3d_d(f64 a, f64 b, f64 c) { return f64(1 / norm({a, b, c})); }
f32 norm4d_f(f32 a, f32 b, f32 c, f32 d) { return f32(norm({a, b, c, d})); }
f64 norm4d_d(f64 a, f64 b, f64 c, f64 d) { return f64(norm({a, b, c, d})); }
f32 rnorm4d_f(f32 a, f32 b, f32 c, f32 d) { return f32(1 / norm({a, b, c, d})); }
f64 rnorm4d_d(f64 a, f64 b, f64 c, f64 d) { return f64(1 / norm({a, b, c, d})); }

f32 fma_f(f32 a, f32 b, f32 c) { return std::fma(a, b, c); }
f64 fma_d(f64 a, f64 b, f64 c) { return std::fma(a, b, c); }
f32 ldexp_f(f32 a, i32 n) { return f32(std::ldexp(double(a), n)); }
f64 ldexp_d(f64 a, i32 n) { return std::ldexp(a, n); }
f32 powi_f(f32 a, i32 n) { return f32(std::pow(double(a), double(n))); }
f64 powi_d(f64 a, i32 n) { return f64(std::pow(ld(a), ld(n))); }
f32 jn_f(i32 n, f32 a) { return f32(jn(n, double(a))); }
f64 jn_d(i32 n, f64 a) { return f64(jnl(n, ld(a))); }
f32 yn_f(i32 n, f32 a) { return f32(yn(n, double(a))); }
f64 yn_d(i32 n, f64 a) { return f64(ynl(n, ld(a))); }
i32 ilogbf_(f32 a) { return std::ilogb(a); }
i32 ilogbd_(f64 a) { return std::ilogb(a); }
i64 llrintf_(f32 a) { return toInt<i64>(a, Round::Rn); }
i64 llrintd_(f64 a) { return toInt<i64>(a, Round::Rn); }
i64 llroundf_(f32 a) { return std::isnan(a) ? 0 : toInt<i64>(std::round(a), Round::Rz); }
i64 llroundd_(f64 a) { return std::isnan(a) ? 0 : toInt<i64>(std::round(a), Round::Rz); }

f64 rcp64h(f64 a) {
  // rcp.approx.ftz.f64: flushes subnormal inputs and results.
  if (std::fpclassify(a) == FP_SUBNORMAL)
    a = std::copysign(0.0, a);
  f64 r = 1 / a;
  return std::fpclassify(r) == FP_SUBNORMAL ? std::copysign(0.0, r) : r;
}
f32 saturatef(f32 a) { return std::isnan(a) ? 0 : std::fmin(std::fmax(a, 0.0f), 1.0f); }

// Classification (int32 results, as libdevice's).
i32 isnanf_(f32 a) { return std::isnan(a); }
i32 isnand_(f64 a) { return std::isnan(a); }
i32 isinff_(f32 a) { return std::isinf(a); }
i32 isinfd_(f64 a) { return std::isinf(a); }
i32 finitef_(f32 a) { return std::isfinite(a); }
i32 isfinited_(f64 a) { return std::isfinite(a); }
i32 signbitf_(f32 a) { return std::signbit(a); }
i32 signbitd_(f64 a) { return std::signbit(a); }

// The fast approximations: the exact function they approximate, written as
// the approximation computes it (fast_powf is exp2(y * log2(x)), so NaN for
// x < 0 as on the GPU).
f32 fastSin(f32 a) { return f32(std::sin(double(a))); }
f32 fastCos(f32 a) { return f32(std::cos(double(a))); }
f32 fastTan(f32 a) { return f32(std::tan(double(a))); }
f32 fastLog2(f32 a) { return f32(std::log2(double(a))); }
f32 fastLog(f32 a) { return f32(std::log(double(a))); }
f32 fastLog10(f32 a) { return f32(std::log10(double(a))); }
f32 fastExp(f32 a) { return f32(std::exp(double(a))); }
f32 fastExp10(f32 a) { return f32(std::pow(10.0, double(a))); }
f32 fastPow(f32 a, f32 b) { return f32(std::exp2(double(b) * std::log2(double(a)))); }
f32 fastDiv(f32 a, f32 b) { return a / b; }

// Arithmetic and conversions with a rounding mode, one function per symbol.
template <Round R, typename T> T addR(T a, T b) { return add(a, b, R); }
template <Round R, typename T> T subR(T a, T b) { return sub(a, b, R); }
template <Round R, typename T> T mulR(T a, T b) { return mul(a, b, R); }
template <Round R, typename T> T divR(T a, T b) { return div(a, b, R); }
template <Round R, typename T> T rcpR(T a) { return div(T(1), a, R); }
template <Round R, typename T> T sqrtRm(T a) { return sqrtR(a, R); }
template <Round R, typename T> T fmaRm(T a, T b, T c) { return fmaR(a, b, c, R); }
template <Round R, typename To, typename From> To cvt(From a) { return convert<To>(a, R); }
template <Round R, typename I, typename T> I toIntR(T a) { return toInt<I>(a, R); }
// Unsigned results that Triton declares signed: the bits of the unsigned value.
template <Round R, typename I, typename U, typename T> I toUnsignedR(T a) {
  return static_cast<I>(toInt<U>(a, R));
}
f32 frsqrtRn(f32 a) { return f32(1 / std::sqrt(ld(a))); } // correctly rounded: 1/sqrt in ld, once

f64 hiloint2double(i32 hi, i32 lo) { return std::bit_cast<f64>((u64(u32(hi)) << 32) | u32(lo)); }
i32 double2loint(f64 a) { return i32(u32(std::bit_cast<u64>(a))); }
i32 double2hiint(f64 a) { return i32(u32(std::bit_cast<u64>(a) >> 32)); }
f32 intAsFloat(i32 a) { return std::bit_cast<f32>(a); }
f32 uintAsFloat(u32 a) { return std::bit_cast<f32>(a); }
i32 floatAsInt(f32 a) { return std::bit_cast<i32>(a); }
f64 longlongAsDouble(i64 a) { return std::bit_cast<f64>(a); }
i64 doubleAsLonglong(f64 a) { return std::bit_cast<i64>(a); }

#define TK_ROUNDED(MACRO) MACRO(Rn, rn) MACRO(Rz, rz) MACRO(Rd, rd) MACRO(Ru, ru)

std::unordered_map<std::string_view, Entry> buildTable() {
  std::unordered_map<std::string_view, Entry> t;
  auto add = [&](std::string_view symbol, Entry e) { t.emplace(symbol, std::move(e)); };
  add("__nv_clz", Apply<clz32>::entry());
  add("__nv_clzll", Apply<clz64>::entry());
  add("__nv_popc", Apply<popc32>::entry());
  add("__nv_popcll", Apply<popc64>::entry());
  add("__nv_byte_perm", Apply<bytePerm>::entry());
  add("__nv_mulhi", Apply<mulhi>::entry());
  add("__nv_umulhi", Apply<umulhi>::entry());
  add("__nv_mul64hi", Apply<mul64hi>::entry());
  add("__nv_umul64hi", Apply<umul64hi>::entry());
  add("__nv_mul24", Apply<mul24>::entry());
  add("__nv_umul24", Apply<umul24>::entry());
  add("__nv_brev", Apply<brevI32>::entry());
  add("__nv_brevll", Apply<brevI64>::entry());
  add("__nv_sad", Apply<sad>::entry());
  add("__nv_usad", Apply<usad>::entry());
  add("__nv_abs", Apply<iabs>::entry());
  add("__nv_llabs", Apply<absLL>::entry());
  add("__nv_hadd", Apply<hadd>::entry());
  add("__nv_uhadd", Apply<uhadd>::entry());
  add("__nv_rhadd", Apply<rhadd>::entry());
  add("__nv_urhadd", Apply<urhadd>::entry());
  add("__nv_ffs", Apply<ffs32>::entry());
  add("__nv_ffsll", Apply<ffs64>::entry());

  // fp32 and fp64 pairs named __nv_NAMEf and __nv_NAME.
#define TK_PAIR(SYM, FN)                                                                           \
  add("__nv_" SYM "f", Apply<FN##f>::entry());                                                     \
  add("__nv_" SYM, Apply<FN##d>::entry());
  TK_PAIR("fabs", fabs_)
  TK_PAIR("floor", floor_)
  TK_PAIR("ceil", ceil_)
  TK_PAIR("trunc", trunc_)
  TK_PAIR("rint", rint_)
  TK_PAIR("nearbyint", rint_)
  TK_PAIR("round", round_)
  TK_PAIR("sqrt", sqrt_)
  TK_PAIR("rsqrt", rsqrt_)
  TK_PAIR("sin", sin_)
  TK_PAIR("cos", cos_)
  TK_PAIR("tan", tan_)
  TK_PAIR("sinpi", sinpi_)
  TK_PAIR("cospi", cospi_)
  TK_PAIR("asin", asin_)
  TK_PAIR("acos", acos_)
  TK_PAIR("atan", atan_)
  TK_PAIR("atan2", atan2_)
  TK_PAIR("sinh", sinh_)
  TK_PAIR("cosh", cosh_)
  TK_PAIR("tanh", tanh_)
  TK_PAIR("asinh", asinh_)
  TK_PAIR("acosh", acosh_)
  TK_PAIR("atanh", atanh_)
  TK_PAIR("exp", exp_)
  TK_PAIR("exp2", exp2_)
  TK_PAIR("exp10", exp10_)
  TK_PAIR("expm1", expm1_)
  TK_PAIR("log", log_)
  TK_PAIR("log2", log2_)
  TK_PAIR("log10", log10_)
  TK_PAIR("log1p", log1p_)
  TK_PAIR("logb", logb_)
  TK_PAIR("cbrt", cbrt_)
  TK_PAIR("rcbrt", rcbrt_)
  TK_PAIR("hypot", hypot_)
  TK_PAIR("rhypot", rhypot_)
  TK_PAIR("norm3d", norm3d_)
  TK_PAIR("rnorm3d", rnorm3d_)
  TK_PAIR("norm4d", norm4d_)
  TK_PAIR("rnorm4d", rnorm4d_)
  TK_PAIR("erf", erf_)
  TK_PAIR("erfc", erfc_)
  TK_PAIR("erfinv", erfinv_)
  TK_PAIR("erfcinv", erfcinv_)
  TK_PAIR("erfcx", erfcx_)
  TK_PAIR("normcdf", normcdf_)
  TK_PAIR("normcdfinv", normcdfinv_)
  TK_PAIR("lgamma", lgamma_)
  TK_PAIR("tgamma", tgamma_)
  TK_PAIR("j0", j0_)
  TK_PAIR("j1", j1_)
  TK_PAIR("y0", y0_)
  TK_PAIR("y1", y1_)
  TK_PAIR("jn", jn_)
  TK_PAIR("yn", yn_)
  TK_PAIR("cyl_bessel_i0", i0_)
  TK_PAIR("cyl_bessel_i1", i1_)
  TK_PAIR("pow", pow_)
  TK_PAIR("powi", powi_)
  TK_PAIR("fmod", fmod_)
  TK_PAIR("remainder", remainder_)
  TK_PAIR("fdim", fdim_)
  TK_PAIR("copysign", copysign_)
  TK_PAIR("nextafter", nextafter_)
  TK_PAIR("fma", fma_)
  TK_PAIR("ldexp", ldexp_)
  TK_PAIR("scalbn", ldexp_)
#undef TK_PAIR
  add("__nv_ilogbf", Apply<ilogbf_>::entry());
  add("__nv_ilogb", Apply<ilogbd_>::entry());
  add("__nv_llrintf", Apply<llrintf_>::entry());
  add("__nv_llrint", Apply<llrintd_>::entry());
  add("__nv_llroundf", Apply<llroundf_>::entry());
  add("__nv_llround", Apply<llroundd_>::entry());
  add("__nv_isnanf", Apply<isnanf_>::entry());
  add("__nv_isnand", Apply<isnand_>::entry());
  add("__nv_isinff", Apply<isinff_>::entry());
  add("__nv_isinfd", Apply<isinfd_>::entry());
  add("__nv_finitef", Apply<finitef_>::entry());
  add("__nv_isfinited", Apply<isfinited_>::entry());
  add("__nv_signbitf", Apply<signbitf_>::entry());
  add("__nv_signbitd", Apply<signbitd_>::entry());
  add("__nv_rcp64h", Apply<rcp64h>::entry());
  add("__nv_saturatef", Apply<saturatef>::entry());
  add("__nv_frsqrt_rn", Apply<frsqrtRn>::entry());
  add("__nv_fast_sinf", Apply<fastSin>::entry());
  add("__nv_fast_cosf", Apply<fastCos>::entry());
  add("__nv_fast_tanf", Apply<fastTan>::entry());
  add("__nv_fast_log2f", Apply<fastLog2>::entry());
  add("__nv_fast_logf", Apply<fastLog>::entry());
  add("__nv_fast_log10f", Apply<fastLog10>::entry());
  add("__nv_fast_expf", Apply<fastExp>::entry());
  add("__nv_fast_exp10f", Apply<fastExp10>::entry());
  add("__nv_fast_powf", Apply<fastPow>::entry());
  add("__nv_fast_fdividef", Apply<fastDiv>::entry());
  add("__nv_hiloint2double", Apply<hiloint2double>::entry());
  add("__nv_double2loint", Apply<double2loint>::entry());
  add("__nv_double2hiint", Apply<double2hiint>::entry());
  add("__nv_int_as_float", Apply<intAsFloat>::entry());
  add("__nv_uint_as_float", Apply<uintAsFloat>::entry());
  add("__nv_float_as_int", Apply<floatAsInt>::entry());
  add("__nv_float_as_uint", Apply<floatAsInt>::entry());
  add("__nv_longlong_as_double", Apply<longlongAsDouble>::entry());
  add("__nv_double_as_longlong", Apply<doubleAsLonglong>::entry());
  add("__nv_int2double_rn", Apply<cvt<Round::Rn, f64, i32>>::entry());
  add("__nv_uint2double_rn", Apply<cvt<Round::Rn, f64, u32>>::entry());

  // One symbol per rounding mode: __nv_fadd_rn, __nv_fadd_rz, ...
#define TK_MODE(R, SUFFIX)                                                                         \
  add("__nv_fadd_" #SUFFIX, Apply<addR<Round::R, f32>>::entry());                                  \
  add("__nv_dadd_" #SUFFIX, Apply<addR<Round::R, f64>>::entry());                                  \
  add("__nv_fsub_" #SUFFIX, Apply<subR<Round::R, f32>>::entry());                                  \
  add("__nv_dsub_" #SUFFIX, Apply<subR<Round::R, f64>>::entry());                                  \
  add("__nv_fmul_" #SUFFIX, Apply<mulR<Round::R, f32>>::entry());                                  \
  add("__nv_dmul_" #SUFFIX, Apply<mulR<Round::R, f64>>::entry());                                  \
  add("__nv_fdiv_" #SUFFIX, Apply<divR<Round::R, f32>>::entry());                                  \
  add("__nv_ddiv_" #SUFFIX, Apply<divR<Round::R, f64>>::entry());                                  \
  add("__nv_frcp_" #SUFFIX, Apply<rcpR<Round::R, f32>>::entry());                                  \
  add("__nv_drcp_" #SUFFIX, Apply<rcpR<Round::R, f64>>::entry());                                  \
  add("__nv_fsqrt_" #SUFFIX, Apply<sqrtRm<Round::R, f32>>::entry());                               \
  add("__nv_dsqrt_" #SUFFIX, Apply<sqrtRm<Round::R, f64>>::entry());                               \
  add("__nv_fmaf_" #SUFFIX, Apply<fmaRm<Round::R, f32>>::entry());                                 \
  add("__nv_fma_" #SUFFIX, Apply<fmaRm<Round::R, f64>>::entry());                                  \
  add("__nv_double2float_" #SUFFIX, Apply<cvt<Round::R, f32, f64>>::entry());                      \
  add("__nv_int2float_" #SUFFIX, Apply<cvt<Round::R, f32, i32>>::entry());                         \
  add("__nv_uint2float_" #SUFFIX, Apply<cvt<Round::R, f32, u32>>::entry());                        \
  add("__nv_ll2float_" #SUFFIX, Apply<cvt<Round::R, f32, i64>>::entry());                          \
  add("__nv_ull2float_" #SUFFIX, Apply<cvt<Round::R, f32, u64>>::entry());                         \
  add("__nv_ll2double_" #SUFFIX, Apply<cvt<Round::R, f64, i64>>::entry());                         \
  add("__nv_ull2double_" #SUFFIX, Apply<cvt<Round::R, f64, u64>>::entry());                        \
  add("__nv_double2int_" #SUFFIX, Apply<toIntR<Round::R, i32, f64>>::entry());                     \
  add("__nv_double2uint_" #SUFFIX, Apply<toUnsignedR<Round::R, i32, u32, f64>>::entry());          \
  add("__nv_float2int_" #SUFFIX, Apply<toIntR<Round::R, i32, f32>>::entry());                      \
  add("__nv_float2uint_" #SUFFIX, Apply<toUnsignedR<Round::R, i32, u32, f32>>::entry());           \
  add("__nv_float2ll_" #SUFFIX, Apply<toIntR<Round::R, i64, f32>>::entry());                       \
  add("__nv_float2ull_" #SUFFIX, Apply<toUnsignedR<Round::R, i64, u64, f32>>::entry());            \
  add("__nv_double2ll_" #SUFFIX, Apply<toIntR<Round::R, i64, f64>>::entry());                      \
  add("__nv_double2ull_" #SUFFIX, Apply<toUnsignedR<Round::R, i64, u64, f64>>::entry());
  TK_ROUNDED(TK_MODE)
#undef TK_MODE
  return t;
}

// The table, checked against the language's on first use: a symbol without
// an implementation, or with other dtypes, is the interpreter's bug.
const std::unordered_map<std::string_view, Entry> &table() {
  static const std::unordered_map<std::string_view, Entry> t = buildTable();
  return t;
}

} // namespace

std::vector<std::string> libdeviceTableMismatches() {
  std::vector<std::string> out;
  const auto &t = table();
  for (const LibdeviceFunction &f : allLibdeviceFunctions())
    for (const LibdeviceOverload *o : f.overloads) {
      auto it = t.find(o->symbol);
      if (it == t.end())
        out.push_back(fmt::format("{}: no implementation", o->symbol));
      else if (it->second.result != o->result || it->second.args != o->args)
        out.push_back(fmt::format("{}: the implementation's dtypes differ", o->symbol));
    }
  for (const auto &[symbol, e] : t)
    if (!findLibdeviceOverload(symbol))
      out.push_back(fmt::format("{}: not in lang/Libdevice.def", symbol));
  return out;
}

bool execExternElementwise(ProgramRunner &r, Operation &op) {
  std::string symbol = *op.attrs().getString("symbol");
  auto it = table().find(symbol);
  const LibdeviceOverload *o = findLibdeviceOverload(symbol);
  if (it == table().end() || !o || it->second.args != o->args)
    return r.fail(op, fmt::format("the interpreter has no libdevice function '{}'", symbol));
  std::vector<const RtValue *> in;
  for (unsigned i = 0; i < op.numOperands(); ++i)
    in.push_back(&r.operand(op, i));
  RtValue out = makeValue(op.result()->type());
  it->second.loop(in, out);
  r.setResult(op, 0, std::move(out));
  return true;
}

} // namespace tk::interp
