// The differential test's libdevice cases: one per overload of every
// function of lang/Libdevice.def, out = tk.extra.libdevice.NAME(x, ...) on a
// 1-D block of random inputs in the function's domain.
//
//   libdevice/NAME/SYMBOL     e.g. libdevice/asin/__nv_asinf
//
// The Gpu mode compares libdevice on the GPU with the interpreter's function
// (interpreter/InterpreterLibdevice.cpp) within the function's documented
// maximum error (CUDA's "Mathematical Functions" appendix: the ulp error of
// each single- and double-precision function, absolute errors for the Bessel
// functions and the fast approximations) plus one ulp for the interpreter's
// own rounding; exact functions (rounding, conversions, rounding modes,
// integer functions) must match bit for bit. The Ci mode compiles each case
// through ptxas and runs it on the interpreter; the integer and bit functions
// also have a host reference there.
#include "DiffGen.h"
#include "lang/Libdevice.h"

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace tk::difftest {
namespace {

/// A domain: the generator of operand `k` of dtype `d`.
using Domain = std::function<Gen(DType d, int k)>;

Domain reals(double lo, double hi) {
  return [=](DType d, int) { return realIn(d, lo, hi); };
}

/// Positive values with magnitudes 2^[lo, hi].
Domain positive(double lo, double hi) {
  return [=](DType d, int) -> Gen {
    return [=](Rng &rng) {
      Elem e = logUniform(d, lo, hi)(rng);
      e.f = std::fabs(e.f);
      return e;
    };
  };
}

/// Integers of the operand's dtype (any bit pattern), floats of either sign
/// with magnitudes 2^[-20, 20].
Domain anything() {
  return [](DType d, int) { return isFloat(d) ? logUniform(d, -20, 20) : anyInt(d); };
}

/// Special values among ordinary ones: NaN, +-inf, +-0, subnormals.
Domain specials() {
  return [](DType d, int) -> Gen {
    return [d](Rng &rng) {
      double tiny = d == DType::F32 ? 1e-40 : 1e-310;
      switch (uniformInt(rng, 0, 9)) {
      case 0:
        return Elem::ofFloat(std::numeric_limits<double>::quiet_NaN());
      case 1:
        return Elem::ofFloat(std::numeric_limits<double>::infinity());
      case 2:
        return Elem::ofFloat(-std::numeric_limits<double>::infinity());
      case 3:
        return Elem::ofFloat(rng() & 1 ? 0.0 : -0.0);
      case 4:
        return roundTo(d, Elem::ofFloat(tiny * uniformReal(rng, -1, 1)));
      default:
        return logUniform(d, -30, 30)(rng);
      }
    };
  };
}

/// Float operands from `f`, integer ones (exponents, orders) in [lo, hi].
Domain withInt(Domain f, int64_t lo, int64_t hi) {
  return [=](DType d, int k) { return isFloat(d) ? f(d, k) : intIn(d, lo, hi); };
}

struct Spec {
  Domain domain;
  Tol f32; // within this of the interpreter for fp32 results
  Tol f64; // and for fp64
};

Tol ulps(double u, double abs = 0) { return {u, abs}; }
const Tol kExact = {0, 0};

// Documented maximum error + 1 ulp, per function (zero: exact).
const std::map<std::string, Spec> &specs() {
  static const std::map<std::string, Spec> m = [] {
    std::map<std::string, Spec> s;
    auto set = [&](std::initializer_list<const char *> names, Spec spec) {
      for (const char *n : names)
        s[n] = spec;
    };
    set({"clz",
         "popc",
         "byte_perm",
         "mulhi",
         "mul24",
         "brev",
         "sad",
         "hadd",
         "rhadd",
         "ffs",
         "int2double_rn",
         "uint2double_rn",
         "int2float_rn",
         "int2float_rz",
         "int2float_rd",
         "int2float_ru",
         "uint2float_rn",
         "uint2float_rz",
         "uint2float_rd",
         "uint2float_ru",
         "ll2float_rn",
         "ll2float_rz",
         "ll2float_rd",
         "ll2float_ru",
         "ull2float_rn",
         "ull2float_rz",
         "ull2float_rd",
         "ull2float_ru",
         "ll2double_rn",
         "ll2double_rz",
         "ll2double_rd",
         "ll2double_ru",
         "ull2double_rn",
         "ull2double_rz",
         "ull2double_rd",
         "ull2double_ru",
         "hiloint2double",
         "int_as_float",
         "uint_as_float",
         "longlong_as_double"},
        {anything(), kExact, kExact});
    set({"abs", "double2loint", "double2hiint", "float_as_int", "float_as_uint",
         "double_as_longlong", "double2float_rn", "double2float_rz", "double2float_rd",
         "double2float_ru", "copysign", "nextafter", "logb", "ilogb"},
        {anything(), kExact, kExact});
    set({"isnan", "isinf", "finitef", "isfinited", "signbit", "saturatef"},
        {specials(), kExact, kExact});
    set({"floor", "ceil", "trunc", "rint", "nearbyint", "round", "llrint", "llround"},
        {reals(-1000, 1000), kExact, kExact});
    set({"double2int_rn", "double2int_rz", "double2int_rd", "double2int_ru", "float2int_rn",
         "float2int_rz", "float2int_rd", "float2int_ru", "float2ll_rn", "float2ll_rz",
         "float2ll_rd", "float2ll_ru", "double2ll_rn", "double2ll_rz", "double2ll_rd",
         "double2ll_ru"},
        {reals(-1e6, 1e6), kExact, kExact});
    set({"double2uint_rn", "double2uint_rz", "double2uint_rd", "double2uint_ru", "float2uint_rn",
         "float2uint_rz", "float2uint_rd", "float2uint_ru", "float2ull_rn", "float2ull_rz",
         "float2ull_rd", "float2ull_ru", "double2ull_rn", "double2ull_rz", "double2ull_rd",
         "double2ull_ru"},
        {reals(0.5, 4e9), kExact, kExact});
    set({"fma_rn", "fma_rz", "fma_rd", "fma_ru", "fma",    "add_rn",    "add_rz",
         "add_rd", "add_ru", "sub_rn", "sub_rz", "sub_rd", "sub_ru",    "mul_rn",
         "mul_rz", "mul_rd", "mul_ru", "div_rn", "div_rz", "div_rd",    "div_ru",
         "rcp_rn", "rcp_rz", "rcp_rd", "rcp_ru", "fmod",   "remainder", "fdim"},
        {anything(), kExact, kExact});
    set({"sqrt_rn", "sqrt_rz", "sqrt_rd", "sqrt_ru"}, {positive(-30, 30), kExact, kExact});
    set({"ldexp", "scalbn"}, {withInt(reals(-100, 100), -40, 40), kExact, kExact});
    set({"sqrt"}, {positive(-30, 30), ulps(2), ulps(1)});
    set({"rsqrt"}, {positive(-30, 30), ulps(3), ulps(2)});
    set({"rsqrt_rn"}, {positive(-30, 30), ulps(1), ulps(1)});
    set({"fast_dividef"}, {reals(-100, 100), ulps(3), ulps(3)});
    set({"rcp64h"}, {reals(-100, 100), ulps(0x1p33), ulps(0x1p33)}); // 2^-20 relative
    // The fast approximations: absolute errors on [-pi, pi] and [0.5, 2],
    // ulp errors that grow with |x| for the exponentials.
    set({"fast_sinf", "fast_cosf"}, {reals(-3.14, 3.14), ulps(1, 0x1p-20), ulps(1, 0x1p-20)});
    set({"fast_tanf"}, {reals(-1, 1), ulps(4, 0x1p-19), ulps(4, 0x1p-19)});
    set({"fast_logf", "fast_log2f", "fast_log10f"},
        {reals(0.5, 2), ulps(4, 0x1p-20), ulps(4, 0x1p-20)});
    set({"fast_expf"}, {reals(-10, 10), ulps(16), ulps(16)});
    set({"fast_exp10f"}, {reals(-4, 4), ulps(16), ulps(16)});
    set({"fast_powf"}, {positive(-2, 2), ulps(32, 1e-6), ulps(32, 1e-6)});
    set({"sin", "cos"}, {reals(-100, 100), ulps(3), ulps(3)});
    set({"tan"}, {reals(-1.5, 1.5), ulps(5), ulps(3)});
    set({"sinpi", "cospi"}, {reals(-10, 10), ulps(2), ulps(3)});
    set({"asin", "acos"}, {reals(-1, 1), ulps(3), ulps(3)});
    set({"atan"}, {reals(-100, 100), ulps(3), ulps(3)});
    set({"atan2"}, {reals(-10, 10), ulps(4), ulps(3)});
    set({"sinh"}, {reals(-10, 10), ulps(4), ulps(3)});
    set({"cosh"}, {reals(-10, 10), ulps(3), ulps(2)});
    set({"tanh"}, {reals(-10, 10), ulps(3), ulps(2)});
    set({"asinh"}, {reals(-100, 100), ulps(4), ulps(4)});
    set({"acosh"}, {reals(1, 100), ulps(5), ulps(4)});
    set({"atanh"}, {reals(-0.99, 0.99), ulps(4), ulps(3)});
    set({"exp", "exp2"}, {reals(-20, 20), ulps(3), ulps(2)});
    set({"exp10"}, {reals(-10, 10), ulps(3), ulps(2)});
    set({"expm1"}, {reals(-10, 10), ulps(2), ulps(2)});
    set({"log", "log2", "log1p"}, {positive(-30, 30), ulps(2), ulps(2)});
    set({"log10"}, {positive(-30, 30), ulps(3), ulps(2)});
    set({"pow"}, {withInt(positive(-3, 3), -8, 8), ulps(8), ulps(4)});
    set({"cbrt", "rcbrt"}, {reals(-100, 100), ulps(2), ulps(2)});
    set({"hypot", "norm3d", "norm4d"}, {reals(-100, 100), ulps(4), ulps(3)});
    set({"rhypot", "rnorm3d", "rnorm4d"}, {reals(-100, 100), ulps(3), ulps(2)});
    set({"erf"}, {reals(-4, 4), ulps(3), ulps(3)});
    set({"erfc"}, {reals(-4, 9), ulps(5), ulps(6)});
    set({"erfinv"}, {reals(-0.999, 0.999), ulps(3), ulps(6)});
    set({"erfcinv"}, {reals(0.001, 1.999), ulps(5), ulps(7)});
    set({"erfcx"}, {reals(-3, 30), ulps(5), ulps(5)});
    set({"normcdf"}, {reals(-8, 8), ulps(6), ulps(6)});
    set({"normcdfinv"}, {reals(0.001, 0.999), ulps(6), ulps(9)});
    set({"lgamma"}, {reals(0.1, 20), ulps(7), ulps(5)});
    set({"tgamma"}, {reals(0.1, 10), ulps(6), ulps(11)});
    set({"j0", "j1", "y0", "y1"}, {reals(0.1, 7.9), ulps(10, 2.2e-6), ulps(8, 5e-12)});
    set({"jn", "yn"}, {withInt(reals(0.5, 10), 1, 5), ulps(16, 2.2e-6), ulps(16, 5e-12)});
    set({"cyl_bessel_i0", "cyl_bessel_i1"}, {reals(-10, 10), ulps(7), ulps(7)});
    return s;
  }();
  return m;
}

// Host references for the integer functions (Ci mode), from their
// definitions; x, y, z as the harness reads them (sign- or zero-extended).
std::optional<RefFn> integerReference(std::string_view symbol) {
  auto w32 = [](uint64_t v) { return Elem::ofInt(int64_t(uint32_t(v))); };
  if (symbol == "__nv_popc" || symbol == "__nv_popcll")
    return RefFn([=](DType, const Elem *v) {
      return Elem::ofInt(
          std::popcount(symbol == "__nv_popc" ? uint64_t(uint32_t(v[0].i)) : u(v[0])));
    });
  if (symbol == "__nv_clz")
    return RefFn(
        [](DType, const Elem *v) { return Elem::ofInt(std::countl_zero(uint32_t(v[0].i))); });
  if (symbol == "__nv_hadd")
    return RefFn([](DType, const Elem *v) { return Elem::ofInt((v[0].i + v[1].i) >> 1); });
  if (symbol == "__nv_urhadd")
    return RefFn([=](DType, const Elem *v) { return w32((u(v[0]) + u(v[1]) + 1) >> 1); });
  if (symbol == "__nv_umulhi")
    return RefFn([=](DType, const Elem *v) { return w32((u(v[0]) * u(v[1])) >> 32); });
  if (symbol == "__nv_mulhi")
    return RefFn([](DType, const Elem *v) { return Elem::ofInt((v[0].i * v[1].i) >> 32); });
  return std::nullopt;
}

} // namespace

void addLibdeviceCases(std::vector<CaseDef> &cases) {
  for (const LibdeviceFunction &f : allLibdeviceFunctions()) {
    auto spec = specs().find(std::string(f.name));
    if (spec == specs().end())
      continue; // every function has a spec: DifferentialTest's LibdeviceCoverage checks it
    for (const LibdeviceOverload *o : f.overloads) {
      std::string args = "x";
      for (unsigned k = 1; k < f.arity; ++k)
        args += std::string(", ") + "xyzw"[k];
      std::string expr = fmt::format("tk.extra.libdevice.{}({})", f.name, args);
      bool toBool = f.id == BuiltinId::LibdeviceIsnan || f.id == BuiltinId::LibdeviceIsinf;
      DType out = toBool ? DType::I1 : o->result;
      Tol tol = o->result == DType::F32   ? spec->second.f32
                : o->result == DType::F64 ? spec->second.f64
                                          : kExact;
      std::string dtypes;
      for (DType d : o->args)
        dtypes += (dtypes.empty() ? "" : ",") + ir(d);
      Domain domain = spec->second.domain;
      std::optional<RefFn> ref = integerReference(o->symbol);
      std::vector<DType> ins = o->args;
      cases.push_back({fmt::format("libdevice/{}/{}", f.name, o->symbol), "libdevice",
                       dtypes + "->" + ir(out), [=](Rng &rng) {
                         return buildElementwise(rng, ins, out, expr, domain, ref ? *ref : RefFn(),
                                                 tol, false);
                       }});
    }
  }
}

std::vector<std::string> libdeviceFunctionsWithoutCases() {
  std::vector<std::string> out;
  for (const LibdeviceFunction &f : allLibdeviceFunctions())
    if (!specs().count(std::string(f.name)))
      out.push_back(std::string(f.name));
  return out;
}

} // namespace tk::difftest
