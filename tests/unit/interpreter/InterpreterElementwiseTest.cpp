// Elementwise ops on random blocks, against references computed here in
// double (floats) or int64 (integers), for every dtype they take.
#include "InterpTestUtil.h"

#include <functional>
#include <limits>

using namespace tk;
using namespace tk::test;

namespace {

constexpr int64_t N = 128;

class ElementwiseTest : public InterpFixture {
protected:
  // Runs `%y = OP %a, %b ATTRS : tensor<NxRES>` on random inputs of type T
  // and checks every element against ref(a, b) within `ulps` units in the
  // last place of the result type (0: exact).
  void checkBinary(const std::string &op, const std::string &attrs, DType t, DType res,
                   std::function<double(double, double)> ref, double ulps = 0, double lo = -4,
                   double hi = 4) {
    std::string ts(dtypeName(t)), rs(dtypeName(res));
    std::string text = "func @k(%a: ptr<" + ts + ">, %b: ptr<" + ts + ">, %o: ptr<" + rs +
                       ">) {\n" + rangeLine(N) + loadBlock("x", "a", N, ts) +
                       loadBlock("y", "b", N, ts) + "  %z = " + op + " %x, %y " + attrs + " : " +
                       tensorOf(N, rs) + "\n" + storeBlock("z", "o", N, rs) + "  return\n}\n";
    parse(text);
    HostBuffer a = random("a", t, N, lo, hi), b = random("b", t, N, lo, hi);
    HostBuffer o = HostBuffer::allocate("o", res, N);
    ASSERT_TRUE(run("k", {InterpArg::pointer(a), InterpArg::pointer(b), InterpArg::pointer(o)}))
        << errors();
    for (int64_t i = 0; i < N; ++i) {
      double want = ref(a.get(i), b.get(i));
      double tol = ulps * ulpOf(res, want);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(o.get(i))) << op << " " << i;
      else
        EXPECT_NEAR(o.get(i), want, tol)
            << op << " on " << ts << ": " << a.get(i) << ", " << b.get(i);
    }
  }

  void checkUnary(const std::string &op, DType t, std::function<double(double)> ref, double ulps,
                  double lo = -4, double hi = 4) {
    std::string ts(dtypeName(t));
    std::string text = "func @k(%a: ptr<" + ts + ">, %o: ptr<" + ts + ">) {\n" + rangeLine(N) +
                       loadBlock("x", "a", N, ts) + "  %z = " + op + " %x : " + tensorOf(N, ts) +
                       "\n" + storeBlock("z", "o", N, ts) + "  return\n}\n";
    parse(text);
    HostBuffer a = random("a", t, N, lo, hi);
    HostBuffer o = HostBuffer::allocate("o", t, N);
    ASSERT_TRUE(run("k", {InterpArg::pointer(a), InterpArg::pointer(o)})) << errors();
    for (int64_t i = 0; i < N; ++i) {
      double want = ref(a.get(i));
      EXPECT_NEAR(o.get(i), want, ulps * ulpOf(t, want))
          << op << " on " << ts << "(" << a.get(i) << ")";
    }
  }
};

const DType kFloats[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

// fp16/bf16 are computed in fp32 and rounded once; for + - * / that is the
// correctly rounded result, so the reference (exact in double, then the
// dtype's rounding through HostBuffer::set) must match exactly: tolerance
// 0.5 ulp covers the reference's own rounding.
TEST_F(ElementwiseTest, FloatArithmetic) {
  for (DType t : kFloats) {
    checkBinary(
        "add", "", t, t, [](double x, double y) { return x + y; }, 0.5);
    checkBinary(
        "sub", "", t, t, [](double x, double y) { return x - y; }, 0.5);
    checkBinary(
        "mul", "", t, t, [](double x, double y) { return x * y; }, 0.5);
    checkBinary(
        "div", "", t, t, [](double x, double y) { return x / y; }, 0.5);
    checkBinary(
        "rem", "", t, t, [](double x, double y) { return std::fmod(x, y); }, 0.5);
    checkBinary(
        "floordiv", "", t, t, [](double x, double y) { return std::floor(x / y); }, 1);
    checkBinary("max", "{nan = \"propagate\"}", t, t,
                [](double x, double y) { return std::max(x, y); });
    checkBinary("min", "{nan = \"number\"}", t, t,
                [](double x, double y) { return std::min(x, y); });
  }
}

TEST_F(ElementwiseTest, IntegerArithmeticFollowsC) {
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64}) {
    double lo = -100, hi = 100;
    auto wrap = [t](double v) {
      int bits = dtypeBits(t);
      int64_t x = static_cast<int64_t>(v);
      if (bits < 64) {
        x &= (int64_t(1) << bits) - 1;
        if (x >= (int64_t(1) << (bits - 1)))
          x -= int64_t(1) << bits;
      }
      return double(x);
    };
    checkBinary(
        "add", "", t, t, [&](double x, double y) { return wrap(x + y); }, 0, lo, hi);
    checkBinary(
        "mul", "", t, t, [&](double x, double y) { return wrap(x * y); }, 0, lo, hi);
    checkBinary(
        "div", "", t, t, [](double x, double y) { return std::trunc(x / y); }, 0, lo, hi);
    checkBinary(
        "rem", "", t, t, [](double x, double y) { return std::fmod(x, y); }, 0, lo, hi);
    checkBinary(
        "floordiv", "", t, t, [](double x, double y) { return std::floor(x / y); }, 0, lo, hi);
    checkBinary(
        "max", "", t, t, [](double x, double y) { return std::max(x, y); }, 0, lo, hi);
    checkBinary(
        "xor", "", t, t, [](double x, double y) { return double(int64_t(x) ^ int64_t(y)); }, 0, lo,
        hi);
  }
  for (DType t : {DType::U8, DType::U16, DType::U32, DType::U64}) {
    checkBinary(
        "div", "", t, t, [](double x, double y) { return std::trunc(x / y); }, 0, 1, 250);
    checkBinary(
        "sub", "", t, t,
        [t](double x, double y) {
          double r = x - y;
          return r < 0 ? r + std::ldexp(1.0, dtypeBits(t)) : r;
        },
        0, 1, 250);
  }
}

TEST_F(ElementwiseTest, ShiftsClampLikeTheGPU) {
  parse(R"(
func @k(%o: ptr<i32>) {
  %range = make_range {end = 4, start = 0} : tensor<4xi32>
  %c = constant {value = -8} : tensor<4xi32>
  %s = constant {value = 11} : tensor<4xi32>
  %amt = mul %range, %s : tensor<4xi32>
  %l = shl %c, %amt : tensor<4xi32>
  %a = ashr %c, %amt : tensor<4xi32>
  %r = lshr %c, %amt : tensor<4xi32>
  %p = splat %o : tensor<4xptr<i32>>
  %p0 = addptr %p, %range : tensor<4xptr<i32>>
  store %p0, %l
  %c4 = constant {value = 4} : tensor<4xi32>
  %r4 = add %range, %c4 : tensor<4xi32>
  %p1 = addptr %p, %r4 : tensor<4xptr<i32>>
  store %p1, %a
  %c8 = constant {value = 8} : tensor<4xi32>
  %r8 = add %range, %c8 : tensor<4xi32>
  %p2 = addptr %p, %r8 : tensor<4xptr<i32>>
  store %p2, %r
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 12);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  // Amounts 0, 11, 22, 33; the last is past the width and clamps.
  EXPECT_EQ(o.get(0), -8);
  EXPECT_EQ(o.get(1), -8 * 2048);
  EXPECT_EQ(o.get(3), 0);
  EXPECT_EQ(o.get(5), -1);
  EXPECT_EQ(o.get(7), -1);
  EXPECT_EQ(o.get(9), double(uint32_t(-8) >> 11));
  EXPECT_EQ(o.get(11), 0);
}

TEST_F(ElementwiseTest, DivisionByZeroAndOverflowAreDefined) {
  parse(R"(
func @k(%o: ptr<i32>) {
  %z = constant {value = 0} : i32
  %x = constant {value = 7} : i32
  %m = constant {value = -2147483648} : i32
  %n1 = constant {value = -1} : i32
  %d = div %x, %z : i32
  %r = rem %x, %z : i32
  %w = div %m, %n1 : i32
  %o1 = addptr %o, %x : ptr<i32>
  store %o, %d
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %p1 = addptr %o, %one : ptr<i32>
  %p2 = addptr %o, %two : ptr<i32>
  store %p1, %r
  store %p2, %w
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 3);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), -1);
  EXPECT_EQ(o.get(1), 7);
  EXPECT_EQ(o.get(2), -2147483648.0);
}

TEST_F(ElementwiseTest, MathFunctions) {
  for (DType t : kFloats) {
    // Computed in fp32 (fp64 for fp64) with libm; a couple of ulps of the
    // result type cover libm and the final rounding.
    double u = t == DType::F64 ? 4 : 2;
    checkUnary(
        "exp", t, [](double x) { return std::exp(x); }, u);
    checkUnary(
        "exp2", t, [](double x) { return std::exp2(x); }, u);
    checkUnary(
        "log", t, [](double x) { return std::log(x); }, u, 0.01, 8);
    checkUnary(
        "log2", t, [](double x) { return std::log2(x); }, u, 0.01, 8);
    checkUnary(
        "sqrt", t, [](double x) { return std::sqrt(x); }, 0.5, 0.01, 8);
    checkUnary(
        "rsqrt", t, [](double x) { return 1 / std::sqrt(x); }, u, 0.01, 8);
    checkUnary(
        "sin", t, [](double x) { return std::sin(x); }, u + 2);
    checkUnary(
        "cos", t, [](double x) { return std::cos(x); }, u + 2);
    checkUnary(
        "abs", t, [](double x) { return std::fabs(x); }, 0);
    checkUnary(
        "neg", t, [](double x) { return -x; }, 0);
    checkUnary(
        "floor", t, [](double x) { return std::floor(x); }, 0);
    checkUnary(
        "ceil", t, [](double x) { return std::ceil(x); }, 0);
    checkUnary(
        "erf", t, [](double x) { return std::erf(x); }, u);
  }
  checkUnary(
      "abs", DType::I32, [](double x) { return std::fabs(x); }, 0, -1000, 1000);
  checkUnary(
      "neg", DType::I16, [](double x) { return -x; }, 0, -1000, 1000);
}

TEST_F(ElementwiseTest, FmaRoundsOnce) {
  parse(R"(
func @k(%o: ptr<fp32>) {
  %a = constant {value = 1.0000001192092896} : fp32
  %b = constant {value = 0.9999999403953552} : fp32
  %c = constant {value = -1.0} : fp32
  %f = fma %a, %b, %c : fp32
  store %o, %f
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::F32, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  // (1 + 2^-23)(1 - 2^-24) - 1 = 2^-23 - 2^-24 - 2^-47: separate rounding gives 2^-24.
  EXPECT_EQ(o.get(0), std::fma(double(1.0000001192092896f), double(0.9999999403953552f), -1.0));
}

TEST_F(ElementwiseTest, MinMaxNaNSemantics) {
  parse(R"(
func @k(%o: ptr<fp32>) {
  %n = constant {value = nan} : fp32
  %x = constant {value = 2.5} : fp32
  %a = max %n, %x {nan = "propagate"} : fp32
  %b = max %n, %x {nan = "number"} : fp32
  %c = min %x, %n {nan = "number"} : fp32
  %pz = constant {value = 0.0} : fp32
  %nz = constant {value = -0.0} : fp32
  %d = min %pz, %nz {nan = "number"} : fp32
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %three = constant {value = 3} : i32
  store %o, %a
  %p1 = addptr %o, %one : ptr<fp32>
  store %p1, %b
  %p2 = addptr %o, %two : ptr<fp32>
  store %p2, %c
  %p3 = addptr %o, %three : ptr<fp32>
  store %p3, %d
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::F32, 4);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  EXPECT_TRUE(std::isnan(o.get(0)));
  EXPECT_EQ(o.get(1), 2.5);
  EXPECT_EQ(o.get(2), 2.5);
  EXPECT_TRUE(std::signbit(o.get(3)));
}

TEST_F(ElementwiseTest, Comparisons) {
  checkBinary("cmpf", "{predicate = \"olt\"}", DType::F32, DType::I1,
              [](double x, double y) { return double(x < y); });
  checkBinary(
      "cmpf", "{predicate = \"une\"}", DType::F16, DType::I1,
      [](double x, double y) { return double(x != y); }, 0, -2, 2);
  checkBinary(
      "cmpi", "{predicate = \"sge\"}", DType::I32, DType::I1,
      [](double x, double y) { return double(x >= y); }, 0, -3, 3);
  // ult on signed values compares the bit patterns unsigned.
  checkBinary(
      "cmpi", "{predicate = \"ult\"}", DType::I8, DType::I1,
      [](double x, double y) { return double(uint8_t(int8_t(x)) < uint8_t(int8_t(y))); }, 0, -100,
      100);
  // NaN: ordered predicates false, unordered true.
  parse(R"(
func @k(%o: ptr<i1>) {
  %n = constant {value = nan} : fp32
  %x = constant {value = 1.0} : fp32
  %a = cmpf %n, %x {predicate = "oeq"} : i1
  %b = cmpf %n, %x {predicate = "une"} : i1
  %c = cmpf %n, %x {predicate = "uno"} : i1
  %d = cmpf %x, %x {predicate = "ord"} : i1
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %three = constant {value = 3} : i32
  store %o, %a
  %p1 = addptr %o, %one : ptr<i1>
  store %p1, %b
  %p2 = addptr %o, %two : ptr<i1>
  store %p2, %c
  %p3 = addptr %o, %three : ptr<i1>
  store %p3, %d
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I1, 4);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), 0);
  EXPECT_EQ(o.get(1), 1);
  EXPECT_EQ(o.get(2), 1);
  EXPECT_EQ(o.get(3), 1);
}

TEST_F(ElementwiseTest, SelectPicksPerElement) {
  parse("func @k(%a: ptr<fp16>, %b: ptr<fp16>, %o: ptr<fp16>) {\n" + rangeLine(N) +
        loadBlock("x", "a", N, "fp16") + loadBlock("y", "b", N, "fp16") +
        "  %c = cmpf %x, %y {predicate = \"ogt\"} : " + tensorOf(N, "i1") +
        "\n  %z = select %c, %x, %y : " + tensorOf(N, "fp16") + "\n" +
        storeBlock("z", "o", N, "fp16") + "  return\n}\n");
  HostBuffer a = random("a", DType::F16, N), b = random("b", DType::F16, N);
  HostBuffer o = HostBuffer::allocate("o", DType::F16, N);
  ASSERT_TRUE(run("k", {InterpArg::pointer(a), InterpArg::pointer(b), InterpArg::pointer(o)}))
      << errors();
  for (int64_t i = 0; i < N; ++i)
    EXPECT_EQ(o.get(i), std::max(a.get(i), b.get(i)));
}

// Every dtype to every other through the cast the verifier allows, against
// C++'s conversions with the GPU's rules for the corner cases.
TEST_F(ElementwiseTest, CastsBetweenAllDTypes) {
  const DType all[] = {DType::I1,   DType::I8,  DType::I16, DType::I32, DType::I64,
                       DType::U8,   DType::U16, DType::U32, DType::U64, DType::F16,
                       DType::BF16, DType::F32, DType::F64};
  for (DType from : all)
    for (DType to : all) {
      if (from == to)
        continue;
      bool fi = isInteger(from), ti = isInteger(to);
      std::string op;
      if (fi && ti)
        op = dtypeBits(to) > dtypeBits(from)   ? (isSigned(from) ? "sext" : "zext")
             : dtypeBits(to) < dtypeBits(from) ? "trunc"
                                               : "bitcast";
      else if (!fi && !ti)
        op = dtypeBits(to) > dtypeBits(from) ? "fpext" : "fptrunc";
      else if (fi)
        op = isUnsigned(from) || from == DType::I1 ? "uitofp" : "sitofp";
      else
        op = isUnsigned(to) || to == DType::I1 ? "fptoui" : "fptosi";
      std::string fs(dtypeName(from)), ts(dtypeName(to));
      module.reset();
      SCOPED_TRACE(op + " " + fs + " -> " + ts);
      parse("func @k(%a: ptr<" + fs + ">, %o: ptr<" + ts + ">) {\n" + rangeLine(N) +
            loadBlock("x", "a", N, fs) + "  %z = " + op + " %x : " + tensorOf(N, ts) + "\n" +
            storeBlock("z", "o", N, ts) + "  return\n}\n");
      double lo = from == DType::I1 ? 0 : isUnsigned(from) ? 1 : -100, hi = 100;
      if (from == DType::I1)
        hi = 1.99;
      HostBuffer a = random("a", from, N, lo, hi);
      HostBuffer o = HostBuffer::allocate("o", to, N);
      ASSERT_TRUE(run("k", {InterpArg::pointer(a), InterpArg::pointer(o)})) << errors();
      for (int64_t i = 0; i < N; ++i) {
        double x = a.get(i), want;
        if (fi && ti) {
          int64_t v = static_cast<int64_t>(x);
          if (from == DType::I1 && op == "sext")
            v = -v;
          int bits = dtypeBits(to);
          uint64_t u = bits == 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << bits) - 1);
          if (!isSigned(to))
            want = double(u);
          else if (bits == 64)
            want = double(int64_t(u));
          else
            want = (u >> (bits - 1)) ? double(int64_t(u) - (int64_t(1) << bits)) : double(u);
        } else if (!ti) {
          HostBuffer tmp = HostBuffer::allocate("t", to, 1);
          tmp.set(0, x); // the dtype's rounding
          want = tmp.get(0);
        } else {
          double t = std::trunc(x);
          double hiV = isSigned(to) ? std::ldexp(1.0, dtypeBits(to) - 1) - 1
                                    : std::ldexp(1.0, dtypeBits(to)) - 1;
          double loV = isSigned(to) ? -std::ldexp(1.0, dtypeBits(to) - 1) : 0;
          want = std::min(std::max(t, loV), hiV); // saturating
        }
        EXPECT_EQ(o.get(i), want) << "input " << x;
      }
    }
}

TEST_F(ElementwiseTest, BitcastKeepsBits) {
  parse(R"(
func @k(%o: ptr<i32>) {
  %x = constant {value = 1.0} : fp32
  %b = bitcast %x : i32
  store %o, %b
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), 0x3F800000);
}

TEST_F(ElementwiseTest, ConstantsRoundToTheirType) {
  parse(R"(
func @k(%o: ptr<fp16>) {
  %x = constant {value = 0.1} : tensor<4xfp16>
  %range = make_range {end = 4, start = 0} : tensor<4xi32>
  %p = splat %o : tensor<4xptr<fp16>>
  %q = addptr %p, %range : tensor<4xptr<fp16>>
  store %q, %x
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::F16, 4);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)})) << errors();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(o.get(i), halfToFloat(doubleToHalf(0.1)));
}

} // namespace
