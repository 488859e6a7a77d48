// The differential test's table: every case, generated from a few source
// templates crossed with the dtypes each op allows.
//
// Families and what they cover (docs/testing.md has the table with the
// tolerances):
//   unary/OP/T, binary/OP/T, ternary/OP/T   elementwise ops on 1-D blocks
//   cast/S->D, bitcast/S->D                 every pair of dtypes
//   promote/EXPR/A,B                        mixed-dtype operands
//   load_other/T                            masked loads with `other`
//   broadcast/T                             broadcast_to(expand_dims(x, 1)) - y[None, :]
//   reduce_OP/axisA/T                       2-D reductions along either axis
//   scan_OP/axisA/T                         cumsum, cumprod
//   atomic_OP/T                             contended read-modify-writes, xchg, cas
//   trans/T, reshape/T                      shape ops
//   dot/...                                 fp16, bf16, fp32 (ieee, tf32), i8
//   scalar_arg/T                            a scalar parameter of each dtype
//   control/...                             for, while, if on run-time values
//   grid/2d, grid/3d                        program_id and num_programs
//
// Every 1-D case picks its block (16..1024), its warps (1..8), its number
// of programs and a length that is not a multiple of the block, and one of
// three masking styles: a random per-element mask, a ragged tail only, or a
// tail at a multiple of 16 with 16-byte-aligned pointers (the vector path).
#include "DiffGen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tk::difftest {
namespace {

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

struct ElementwiseOp {
  ElementwiseOp(std::string family, std::string expr, int arity, std::vector<DType> dtypes,
                std::function<Gen(DType, int)> gen, std::function<DType(DType)> result, RefFn ref,
                std::function<Tol(DType)> tol = nullptr)
      : family(std::move(family)), expr(std::move(expr)), arity(arity), dtypes(std::move(dtypes)),
        gen(std::move(gen)), result(std::move(result)), ref(std::move(ref)), tol(std::move(tol)) {}
  std::string family;
  std::string expr; // over x, y, z
  int arity = 2;
  std::vector<DType> dtypes;
  std::function<Gen(DType, int operand)> gen; // null: anyValue
  std::function<DType(DType)> result;         // null: the operand dtype
  RefFn ref;                                  // null: no host reference
  std::function<Tol(DType)> tol;              // null: exact
  bool equalOperands = false;                 // copy x into y at random lanes (comparisons)
};

} // namespace

CaseRun buildElementwise(Rng &rng, const std::vector<DType> &ins, DType out,
                         const std::string &expr, const std::function<Gen(DType, int)> &gen,
                         const RefFn &ref, Tol tol, bool equalOperands) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  static const char *names[] = {"x", "y", "z", "w"};
  std::string params, loads, sig;
  for (size_t k = 0; k < ins.size(); ++k) {
    run.buffers.push_back(
        inputBuffer(names[k], ins[k], b.n, gen ? gen(ins[k], int(k)) : anyValue(ins[k]), rng));
    params += fmt::format("{}_ptr, ", names[k]);
    loads += fmt::format("    {0} = tk.load({0}_ptr + offs, mask=mask)\n", names[k]);
    sig += ptrSig(b, ins[k]) + ", ";
  }
  if (equalOperands && ins.size() >= 2)
    for (int64_t i = 0; i < b.n; ++i)
      if (rng() % 3 == 0)
        for (size_t k = 0; k < dtypeBytes(ins[1]); ++k)
          run.buffers[1].bytes[i * dtypeBytes(ins[1]) + k] =
              run.buffers[0].bytes[i * dtypeBytes(ins[0]) + k];
  size_t maskBuf = run.buffers.size();
  run.buffers.push_back(maskBuffer(b.n, rng));
  run.buffers.push_back(outputBuffer("out", out, b.n, tol));
  run.source = "import tk\n\n\n@tk.jit\ndef k(" + params +
               "m_ptr, out_ptr, n, BLOCK: tk.constexpr):\n" + maskLines(b) + loads +
               "    tk.store(out_ptr + offs, " + expr + ", mask=mask)\n";
  run.opts.kernel = "k";
  run.opts.signature =
      sig + "*i32, " + ptrSig(b, out) + (b.mask == Blocks::Mask::Aligned ? ", i32:16" : ", i32");
  for (size_t i = 0; i < run.buffers.size(); ++i)
    run.args.push_back(CaseArg::buf(i));
  run.args.push_back(CaseArg::integer(b.n));
  if (ref) {
    size_t nIn = ins.size();
    run.reference = [=](const std::vector<CaseBuffer> &bufs) {
      Expected e = unwritten(bufs.back());
      for (int64_t i = 0; i < b.n; ++i) {
        if (!activeLane(b, bufs, maskBuf, i))
          continue;
        Elem v[4];
        for (size_t k = 0; k < nIn; ++k)
          v[k] = at(bufs[k], i);
        expectAt(e, bufs.back(), i, ref(ins[0], v));
      }
      return std::vector<Expected>{std::move(e)};
    };
  }
  return run;
}

namespace {

/// Tolerances of the approximate math functions, in ulps of the result
/// dtype plus an absolute term; 16-bit results are computed in fp32 and
/// rounded once, so they may differ by one ulp of their own.
// fp64 goes through libdevice on the GPU (1-2 ulp) and libm here (1 ulp).
std::function<Tol(DType)> mathTol(double ulps32, double abs32, double ulps64 = 3,
                                  double ulps16 = 1) {
  return [=](DType d) -> Tol {
    if (d == DType::F32)
      return {ulps32, abs32};
    if (d == DType::F64)
      return {ulps64, 0};
    return {ulps16, abs32};
  };
}

std::vector<ElementwiseOp> elementwiseOps() {
  std::vector<DType> num = numeric();
  std::vector<DType> intsAndBool = kInts;
  intsAndBool.insert(intsAndBool.begin(), DType::I1);
  auto floatOnly = [](double lo, double hi) {
    return [=](DType d, int) { return realIn(d, lo, hi); };
  };
  // Divisors: any value of either sign, never zero; the dividend mixes
  // large and small. INT_MIN / -1 is excluded (LLVM's sdiv makes it poison).
  auto divGen = [](DType d, int operand) -> Gen {
    if (isFloat(d))
      return realIn(d, -8, 8);
    if (operand == 0)
      return anyInt(d);
    return [d](Rng &rng) {
      for (;;) {
        Elem e = rng() % 4 == 0 ? anyInt(d)(rng) : intIn(d, isSigned(d) ? -20 : 1, 20)(rng);
        if (!(isSigned(d) && e.i == -1))
          return e;
      }
    };
  };
  auto shiftGen = [](DType d, int operand) -> Gen {
    if (operand == 0)
      return anyInt(d);
    return [d](Rng &rng) { return Elem::ofInt(uniformInt(rng, 0, bits(d) - 1)); };
  };
  std::vector<ElementwiseOp> ops;
  auto add = [&](ElementwiseOp op) { ops.push_back(std::move(op)); };

  // Arithmetic.
  add({"add", "x + y", 2, num, nullptr, nullptr, [](DType d, const Elem *v) {
         return isFloat(d) ? real(v[0].f + v[1].f) : wrapped(u(v[0]) + u(v[1]));
       }});
  add({"sub", "x - y", 2, num, nullptr, nullptr, [](DType d, const Elem *v) {
         return isFloat(d) ? real(v[0].f - v[1].f) : wrapped(u(v[0]) - u(v[1]));
       }});
  add({"mul", "x * y", 2, num, nullptr, nullptr, [](DType d, const Elem *v) {
         return isFloat(d) ? real(v[0].f * v[1].f) : wrapped(u(v[0]) * u(v[1]));
       }});
  // `/` is IEEE division on floats (div.rn today; 2 ulp leaves room for
  // div.full.f32 should the back end choose it) and fp32 division of the
  // converted operands on integers.
  add({"truediv", "x / y", 2, num, divGen, [](DType d) { return isFloat(d) ? d : DType::F32; },
       [](DType d, const Elem *v) {
         if (isFloat(d))
           return real(v[0].f / v[1].f);
         double a = isUnsigned(d) ? double(float(u(v[0]))) : double(float(v[0].i));
         double b = isUnsigned(d) ? double(float(u(v[1]))) : double(float(v[1].i));
         return real(a / b);
       },
       [](DType d) {
         return Tol{d == DType::F64 ? 0.0 : 2.0, 0};
       }});
  add({"floordiv", "x // y", 2, num, divGen, nullptr, [](DType d, const Elem *v) {
         if (isFloat(d))
           // The quotient rounds to the compute type (fp32 for 16-bit floats).
           return real(std::floor(
               roundTo(d == DType::F64 ? DType::F64 : DType::F32, real(v[0].f / v[1].f)).f));
         return isUnsigned(d) ? wrapped(u(v[0]) / u(v[1])) : Elem::ofInt(v[0].i / v[1].i);
       }});
  add({"rem", "x % y", 2, num, divGen, nullptr, [](DType d, const Elem *v) {
         if (isFloat(d))
           return real(std::fmod(v[0].f, v[1].f));
         return isUnsigned(d) ? wrapped(u(v[0]) % u(v[1])) : Elem::ofInt(v[0].i % v[1].i);
       }});
  add({"cdiv", "tk.cdiv(x, y)", 2, kInts,
       [](DType d, int operand) { return operand == 0 ? intIn(d, 1, 100) : intIn(d, 1, 20); },
       nullptr, [](DType, const Elem *v) { return Elem::ofInt((v[0].i + v[1].i - 1) / v[1].i); }});
  add({"neg", "-x", 1, num, nullptr, nullptr,
       [](DType d, const Elem *v) { return isFloat(d) ? real(-v[0].f) : wrapped(0 - u(v[0])); }});
  add({"abs", "tk.abs(x)", 1, num, nullptr, nullptr, [](DType d, const Elem *v) {
         if (isFloat(d))
           return real(std::fabs(v[0].f));
         return isSigned(d) && v[0].i < 0 ? wrapped(0 - u(v[0])) : v[0];
       }});
  add({"maximum", "tk.maximum(x, y)", 2, num, nullptr, nullptr,
       [](DType d, const Elem *v) { return less(d, v[0], v[1]) ? v[1] : v[0]; }});
  add({"minimum", "tk.minimum(x, y)", 2, num, nullptr, nullptr,
       [](DType d, const Elem *v) { return less(d, v[1], v[0]) ? v[1] : v[0]; }});
  add({"where", "tk.where(x < y, y - x, x)", 2, num, nullptr, nullptr, [](DType d, const Elem *v) {
         if (!less(d, v[0], v[1]))
           return v[0];
         return isFloat(d) ? real(v[1].f - v[0].f) : wrapped(u(v[1]) - u(v[0]));
       }});
  add({"clamp", "tk.clamp(x, -2.5, 3.0)", 1, kFloats, nullptr, nullptr,
       [](DType, const Elem *v) { return real(std::min(std::max(v[0].f, -2.5), 3.0)); }});

  // Bitwise and shifts (shift amounts inside the width: PTX clamps larger
  // ones, LLVM makes them poison).
  add({"and", "x & y", 2, intsAndBool, nullptr, nullptr,
       [](DType, const Elem *v) { return wrapped(u(v[0]) & u(v[1])); }});
  add({"or", "x | y", 2, intsAndBool, nullptr, nullptr,
       [](DType, const Elem *v) { return wrapped(u(v[0]) | u(v[1])); }});
  add({"xor", "x ^ y", 2, intsAndBool, nullptr, nullptr,
       [](DType, const Elem *v) { return wrapped(u(v[0]) ^ u(v[1])); }});
  add({"invert", "~x", 1, kInts, nullptr, nullptr,
       [](DType, const Elem *v) { return wrapped(~u(v[0])); }});
  add({"shl", "x << y", 2, kInts, shiftGen, nullptr,
       [](DType, const Elem *v) { return wrapped(u(v[0]) << v[1].i); }});
  add({"shr", "x >> y", 2, kInts, shiftGen, nullptr, [](DType d, const Elem *v) {
         return isUnsigned(d) ? wrapped(u(v[0]) >> v[1].i) : Elem::ofInt(v[0].i >> v[1].i);
       }});

  // Comparisons (an i1 result stored as a byte); y equals x at a third of
  // the lanes.
  auto cmp = [&](const char *family, const char *expr, std::vector<DType> dtypes,
                 std::function<bool(DType, const Elem &, const Elem &)> f) {
    ElementwiseOp op{family,
                     expr,
                     2,
                     std::move(dtypes),
                     nullptr,
                     [](DType) { return DType::I1; },
                     [f](DType d, const Elem *v) { return boolean(f(d, v[0], v[1])); }};
    op.equalOperands = true;
    add(std::move(op));
  };
  cmp("lt", "x < y", num, [](DType d, const Elem &a, const Elem &b) { return less(d, a, b); });
  cmp("le", "x <= y", num, [](DType d, const Elem &a, const Elem &b) { return !less(d, b, a); });
  cmp("gt", "x > y", num, [](DType d, const Elem &a, const Elem &b) { return less(d, b, a); });
  cmp("ge", "x >= y", num, [](DType d, const Elem &a, const Elem &b) { return !less(d, a, b); });
  cmp("eq", "x == y", kAll, [](DType d, const Elem &a, const Elem &b) { return equal(d, a, b); });
  cmp("ne", "x != y", kAll, [](DType d, const Elem &a, const Elem &b) { return !equal(d, a, b); });

  // Math. Inputs stay where the approximations are documented: exp's
  // argument error grows with |x| (x * log2(e) is rounded before ex2), sin
  // and cos are accurate on [-pi, pi], log and log2 have an absolute error
  // near 1.
  auto math = [&](const char *family, const char *expr, double lo, double hi, double (*f)(double),
                  std::function<Tol(DType)> tol) {
    add({family, expr, 1, kFloats, floatOnly(lo, hi), nullptr,
         [f](DType, const Elem *v) { return real(f(v[0].f)); }, std::move(tol)});
  };
  math(
      "exp", "tk.exp(x)", -10, 10, [](double x) { return std::exp(x); }, mathTol(8, 0));
  math(
      "exp2", "tk.exp2(x)", -14, 14, [](double x) { return std::exp2(x); }, mathTol(4, 0));
  math(
      "log", "tk.log(x)", 0.01, 100, [](double x) { return std::log(x); }, mathTol(4, 0x1p-21));
  math(
      "log2", "tk.log2(x)", 0.01, 100, [](double x) { return std::log2(x); }, mathTol(4, 0x1p-21));
  math(
      "sqrt", "tk.sqrt(x)", 0.001, 1000, [](double x) { return std::sqrt(x); }, mathTol(1, 0, 0));
  math(
      "sqrt_rn", "tk.sqrt_rn(x)", 0.001, 1000, [](double x) { return std::sqrt(x); },
      mathTol(0, 0, 0));
  math(
      "rsqrt", "tk.rsqrt(x)", 0.001, 1000, [](double x) { return 1 / std::sqrt(x); },
      mathTol(4, 0));
  math(
      "sin", "tk.sin(x)", -3.14159, 3.14159, [](double x) { return std::sin(x); },
      mathTol(4, 0x1p-20));
  math(
      "cos", "tk.cos(x)", -3.14159, 3.14159, [](double x) { return std::cos(x); },
      mathTol(4, 0x1p-20));
  math(
      "erf", "tk.erf(x)", -3, 3, [](double x) { return std::erf(x); }, mathTol(2, 3e-7));
  // sigmoid is exp, add and divide, each rounded to a 16-bit type on its own.
  math(
      "sigmoid", "tk.sigmoid(x)", -10, 10, [](double x) { return 1 / (1 + std::exp(-x)); },
      mathTol(8, 0, 3, 3));
  math(
      "floor", "tk.floor(x)", -100, 100, [](double x) { return std::floor(x); },
      [](DType) { return Tol{}; });
  math(
      "ceil", "tk.ceil(x)", -100, 100, [](double x) { return std::ceil(x); },
      [](DType) { return Tol{}; });
  add({"div_rn", "tk.div_rn(x, y)", 2, kFloats, nullptr, nullptr,
       [](DType, const Elem *v) { return real(v[0].f / v[1].f); }});
  add({"fdiv", "tk.fdiv(x, y)", 2, kFloats, nullptr, nullptr,
       [](DType, const Elem *v) { return real(v[0].f / v[1].f); },
       [](DType d) {
         return Tol{d == DType::F64 ? 0.0 : 2.0, 0};
       }});
  // fma rounds once on both sides; the reference's double fma rounds twice
  // for fp32 (a rare one-ulp difference), 16-bit fma may round through fp32.
  add({"fma", "tk.fma(x, y, z)", 3, kFloats, nullptr, nullptr,
       [](DType, const Elem *v) { return real(std::fma(v[0].f, v[1].f, v[2].f)); },
       [](DType d) {
         return Tol{d == DType::F64 ? 0.0 : 1.0, 0};
       }});
  return ops;
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

/// Source values for a cast from `s` to `t`: inside t's range when
/// float -> int (out of range is undefined), wide magnitudes when narrowing
/// floats (overflow to infinity and subnormals included), below 2^53 when an
/// i64/u64 goes to a 16-bit float (the interpreter rounds through fp64).
Gen castSource(DType s, DType t) {
  if (isFloat(s) && isInteger(t) && t != DType::I1) {
    double maxS = s == DType::F16 ? 65504 : 1e300;
    double hi = std::min(maxS, 0.9 * std::ldexp(1.0, int(bits(t)) - (isSigned(t) ? 1 : 0)));
    double lo = isSigned(t) ? -hi : 0.5;
    return [=](Rng &rng) {
      // Half small (fractions near zero), half over the whole range.
      return rng() & 1 ? realIn(s, std::max(lo, -100.0), std::min(hi, 100.0))(rng)
                       : realIn(s, lo, hi)(rng);
    };
  }
  if (isFloat(s) && isFloat(t)) {
    if (s == DType::F16)
      return logUniform(s, -24, 15.9);
    return s == DType::F64 ? logUniform(s, -160, 160) : logUniform(s, -140, 127.9);
  }
  if (isInteger(s) && isFloat(t) && bits(s) == 64 && bits(t) == 16)
    return [s](Rng &rng) {
      for (;;) {
        int64_t v = int64_t(rng() >> 11);
        if (v)
          return roundTo(s, Elem::ofInt(isSigned(s) && (rng() & 1) ? -v : v));
      }
    };
  return anyValue(s);
}

Elem castRef(DType s, DType t, const Elem &v) {
  if (t == DType::I1)
    return boolean(isFloat(s) ? v.f != 0 : v.i != 0);
  if (isFloat(s) && isFloat(t))
    return v;
  if (isFloat(s)) // toward zero; the value is in range
    return isUnsigned(t) ? wrapped(uint64_t(std::trunc(v.f)))
                         : Elem::ofInt(int64_t(std::trunc(v.f)));
  if (isFloat(t)) {
    // One rounding: 64-bit integers to fp32 directly, not through double.
    if (t == DType::F32 && bits(s) == 64)
      return real(isUnsigned(s) ? float(u(v)) : float(v.i));
    return real(isUnsigned(s) ? double(u(v)) : double(v.i));
  }
  return v; // integers: extended by readElem, wrapped by writeElem
}

//===----------------------------------------------------------------------===//
// Case list
//===----------------------------------------------------------------------===//

void addElementwise(std::vector<CaseDef> &cases) {
  for (const ElementwiseOp &op : elementwiseOps()) {
    const char *group = op.arity == 1 ? "unary" : op.arity == 2 ? "binary" : "ternary";
    for (DType d : op.dtypes) {
      DType out = op.result ? op.result(d) : d;
      Tol tol = op.tol ? op.tol(out) : Tol{};
      cases.push_back({fmt::format("{}/{}/{}", group, op.family, ir(d)), op.family, ir(d),
                       [op, d, out, tol](Rng &rng) {
                         return buildElementwise(rng, std::vector<DType>(op.arity, d), out, op.expr,
                                                 op.gen, op.ref, tol, op.equalOperands);
                       }});
    }
  }
}

void addCasts(std::vector<CaseDef> &cases) {
  for (DType s : kAll)
    for (DType t : kAll) {
      if (s == t)
        continue;
      std::string dt = ir(s) + "->" + ir(t);
      cases.push_back({"cast/" + dt, "cast", dt, [s, t](Rng &rng) {
                         return buildElementwise(
                             rng, {s}, t, "x.to(" + py(t) + ")",
                             [s, t](DType, int) { return castSource(s, t); },
                             [s, t](DType, const Elem *v) { return castRef(s, t, v[0]); }, {},
                             false);
                       }});
    }
  // Bitcasts between every pair of the same width: the bits are kept.
  for (DType s : kAll)
    for (DType t : kAll) {
      if (s == t || s == DType::I1 || t == DType::I1 || dtypeBits(s) != dtypeBits(t))
        continue;
      std::string dt = ir(s) + "->" + ir(t);
      cases.push_back({"bitcast/" + dt, "bitcast", dt, [s, t](Rng &rng) {
                         return buildElementwise(
                             rng, {s}, t, "x.to(" + py(t) + ", bitcast=True)",
                             [s](DType, int) { return anyBits(s); },
                             [s, t](DType, const Elem *v) {
                               std::byte b[8];
                               writeElem(b, s, v[0]);
                               return readElem(b, t);
                             },
                             {}, false);
                       }});
    }
}

// Mixed dtypes: the promotion rules of docs/language.md, checked GPU
// against interpreter (no host reference: the result dtype is the
// front end's business, tested elsewhere).
void addPromotions(std::vector<CaseDef> &cases) {
  struct P {
    DType a, b;
    const char *expr;
    DType out;
  };
  const P pairs[] = {
      {DType::I32, DType::F16, "x + y", DType::F32},
      {DType::F16, DType::BF16, "x * y", DType::F32},
      {DType::I32, DType::U32, "x - y", DType::U32},
      {DType::I8, DType::I64, "x * y", DType::I64},
      {DType::U8, DType::U8, "x + 1", DType::U8},
      {DType::I16, DType::I16, "x * 0.5", DType::F32},
      {DType::F16, DType::F32, "x + y", DType::F32},
      {DType::BF16, DType::F64, "x - y", DType::F64},
      {DType::U16, DType::I8, "x + y", DType::I32},
      {DType::I64, DType::F32, "x / y", DType::F32},
      {DType::F16, DType::I1, "tk.where(y, x, -x)", DType::F16},
  };
  for (const P &p : pairs) {
    std::string dt = ir(p.a) + "," + ir(p.b);
    cases.push_back(
        {fmt::format("promote/{}/{}", p.expr, dt), "promote", dt, [p](Rng &rng) {
           return buildElementwise(
               rng, {p.a, p.b}, p.out, p.expr,
               [](DType d, int) { return isFloat(d) ? realIn(d, -8, 8) : intIn(d, -50, 50); },
               nullptr, {p.out == DType::F16 ? 0.0 : 1.0, 0}, false);
         }});
  }
}

} // namespace

void addStructuredCases(std::vector<CaseDef> &cases); // DiffCasesStructured.cpp
void addLanguageCases(std::vector<CaseDef> &cases);   // DiffCasesLanguage.cpp
void addChainCases(std::vector<CaseDef> &cases);      // DiffCasesChains.cpp
void addLibdeviceCases(std::vector<CaseDef> &cases);  // DiffCasesLibdevice.cpp

const std::vector<CaseDef> &allCases() {
  static const std::vector<CaseDef> cases = [] {
    std::vector<CaseDef> c;
    addElementwise(c);
    addCasts(c);
    addPromotions(c);
    addStructuredCases(c);
    addLanguageCases(c);
    addChainCases(c);
    addLibdeviceCases(c);
    return c;
  }();
  return cases;
}

uint64_t caseSeed(const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name)
    h = (h ^ ch) * 1099511628211ull;
  if (const char *s = std::getenv("TK_DIFF_SEED"))
    h += std::strtoull(s, nullptr, 10);
  return h;
}

} // namespace tk::difftest
