// reduce, scan and dot on random blocks against references computed here
// in double (or int64), plus custom combiner regions.
#include "InterpTestUtil.h"

#include <fmt/format.h>

using namespace tk;
using namespace tk::test;

namespace {

class ReduceTest : public InterpFixture {
protected:
  // Loads an R x C block of `t` from %x (row-major) as %x2.
  static std::string load2D(int64_t R, int64_t C, const std::string &t) {
    return fmt::format(R"(  %r = make_range {{end = {0}, start = 0}} : tensor<{0}xi32>
  %c = make_range {{end = {1}, start = 0}} : tensor<{1}xi32>
  %r2 = expand_dims %r {{axis = 1}} : tensor<{0}x1xi32>
  %c2 = expand_dims %c {{axis = 0}} : tensor<1x{1}xi32>
  %rb = broadcast %r2 : tensor<{0}x{1}xi32>
  %cb = broadcast %c2 : tensor<{0}x{1}xi32>
  %cs = constant {{value = {1}}} : tensor<{0}x{1}xi32>
  %rs = mul %rb, %cs : tensor<{0}x{1}xi32>
  %offs = add %rs, %cb : tensor<{0}x{1}xi32>
  %xp = splat %x : tensor<{0}x{1}xptr<{2}>>
  %xq = addptr %xp, %offs : tensor<{0}x{1}xptr<{2}>>
  %x2 = load %xq : tensor<{0}x{1}x{2}>
)",
                       R, C, t);
  }
  static std::string store1D(const std::string &v, int64_t n, const std::string &t) {
    return fmt::format(R"(  %or = make_range {{end = {1}, start = 0}} : tensor<{1}xi32>
  %op = splat %o : tensor<{1}xptr<{2}>>
  %oq = addptr %op, %or : tensor<{1}xptr<{2}>>
  store %oq, %{0}
)",
                       v, n, t);
  }
};

TEST_F(ReduceTest, SumMaxMinArgmaxAlongEachAxis) {
  const int64_t R = 8, C = 16;
  for (DType d : {DType::F32, DType::F16, DType::I32, DType::F64}) {
    std::string t(dtypeName(d));
    for (int axis = 0; axis < 2; ++axis) {
      int64_t outN = axis == 0 ? C : R;
      for (std::string kind : {"sum", "max", "min", "argmax", "argmin"}) {
        std::string rt = kind.starts_with("arg") ? "i32" : t;
        module.reset();
        parse(fmt::format("func @k(%x: ptr<{}>, %o: ptr<{}>) {{\n", t, rt) + load2D(R, C, t) +
              fmt::format("  %y = reduce %x2 {{axis = {}, kind = \"{}\"}} : tensor<{}x{}>\n", axis,
                          kind, outN, rt) +
              store1D("y", outN, rt) + "  return\n}\n");
        HostBuffer x = random("x", d, R * C, -10, 10), o = HostBuffer::allocate("o", DType::I32, 1);
        o = HostBuffer::allocate("o", kind.starts_with("arg") ? DType::I32 : d, outN);
        ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
        for (int64_t j = 0; j < outN; ++j) {
          double sum = 0, mx = -INFINITY, mn = INFINITY;
          int64_t amax = 0, amin = 0;
          for (int64_t k = 0; k < (axis == 0 ? R : C); ++k) {
            double v = axis == 0 ? x.get(k * C + j) : x.get(j * C + k);
            sum += v;
            if (v > mx)
              mx = v, amax = k;
            if (v < mn)
              mn = v, amin = k;
          }
          double got = o.get(j);
          SCOPED_TRACE(fmt::format("{} {} axis {} out {}", kind, t, axis, j));
          if (kind == "sum")
            // A tree of (len - 1) rounded adds: log2(len) roundings on any
            // path, each within half an ulp of the running magnitude.
            EXPECT_NEAR(got, sum, d == DType::F16 ? 0.1 : 1e-4);
          else if (kind == "max")
            EXPECT_EQ(got, mx);
          else if (kind == "min")
            EXPECT_EQ(got, mn);
          else if (kind == "argmax")
            EXPECT_EQ(got, amax);
          else
            EXPECT_EQ(got, amin);
        }
      }
    }
  }
}

TEST_F(ReduceTest, ArgmaxTiesPickTheFirstAndNaNIsIgnored) {
  parse(R"(func @k(%x: ptr<fp32>, %o: ptr<i32>) {
  %r = make_range {end = 8, start = 0} : tensor<8xi32>
  %xp = splat %x : tensor<8xptr<fp32>>
  %xq = addptr %xp, %r : tensor<8xptr<fp32>>
  %v = load %xq : tensor<8xfp32>
  %a = reduce %v {axis = 0, kind = "argmax"} : i32
  store %o, %a
  return
}
)");
  std::vector<float> mem = {1, 5, NAN, 5, 2, 5, -1, 0};
  HostBuffer x = HostBuffer::wrap("x", mem.data(), 32, DType::F32);
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), 1);
}

TEST_F(ReduceTest, CustomCombinerArgmaxWithTwoOperands) {
  const int64_t N = 64;
  parse(fmt::format(R"(func @k(%x: ptr<fp32>, %o: ptr<fp32>, %oi: ptr<i32>) {{
  %r = make_range {{end = {0}, start = 0}} : tensor<{0}xi32>
  %xp = splat %x : tensor<{0}xptr<fp32>>
  %xq = addptr %xp, %r : tensor<{0}xptr<fp32>>
  %v = load %xq : tensor<{0}xfp32>
  %m, %i = reduce %v, %r {{axis = 0}} : fp32, i32 {{
  ^bb0(%a0: fp32, %i0: i32, %a1: fp32, %i1: i32):
    %gt = cmpf %a0, %a1 {{predicate = "oge"}} : i1
    %mv = select %gt, %a0, %a1 : fp32
    %mi = select %gt, %i0, %i1 : i32
    yield %mv, %mi
  }}
  store %o, %m
  store %oi, %i
  return
}}
)",
                    N));
  HostBuffer x = random("x", DType::F32, N), o = HostBuffer::allocate("o", DType::F32, 1);
  HostBuffer oi = HostBuffer::allocate("oi", DType::I32, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::pointer(oi)}))
      << errors();
  int64_t best = 0;
  for (int64_t i = 1; i < N; ++i)
    if (x.get(i) > x.get(best))
      best = i;
  EXPECT_EQ(o.get(0), x.get(best));
  EXPECT_EQ(oi.get(0), best);
}

// A non-commutative combiner (keep the left value) shows the tree keeps
// left operands left: the result is the first element.
TEST_F(ReduceTest, CombinerOrderIsLeftToRight) {
  parse(R"(func @k(%x: ptr<i32>, %o: ptr<i32>) {
  %r = make_range {end = 16, start = 0} : tensor<16xi32>
  %xp = splat %x : tensor<16xptr<i32>>
  %xq = addptr %xp, %r : tensor<16xptr<i32>>
  %v = load %xq : tensor<16xi32>
  %f = reduce %v {axis = 0} : i32 {
  ^bb0(%a: i32, %b: i32):
    yield %a
  }
  store %o, %f
  return
}
)");
  HostBuffer x = random("x", DType::I32, 16, -99, 99), o = HostBuffer::allocate("o", DType::I32, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), x.get(0));
}

TEST_F(ReduceTest, ScansForwardReverseAndCustom) {
  const int64_t N = 32;
  for (std::string kind : {"cumsum", "cumprod"})
    for (bool reverse : {false, true}) {
      module.reset();
      parse(fmt::format(R"(func @k(%x: ptr<i64>, %o: ptr<i64>) {{
  %r = make_range {{end = {0}, start = 0}} : tensor<{0}xi32>
  %xp = splat %x : tensor<{0}xptr<i64>>
  %xq = addptr %xp, %r : tensor<{0}xptr<i64>>
  %v = load %xq : tensor<{0}xi64>
  %s = scan %v {{axis = 0, kind = "{1}", reverse = {2}}} : tensor<{0}xi64>
  %op = splat %o : tensor<{0}xptr<i64>>
  %oq = addptr %op, %r : tensor<{0}xptr<i64>>
  store %oq, %s
  return
}}
)",
                        N, kind, reverse ? "true" : "false"));
      HostBuffer x = random("x", DType::I64, N, -3, 3),
                 o = HostBuffer::allocate("o", DType::I64, N);
      ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
      int64_t acc = kind == "cumsum" ? 0 : 1;
      for (int64_t s = 0; s < N; ++s) {
        int64_t i = reverse ? N - 1 - s : s;
        int64_t v = static_cast<int64_t>(x.get(i));
        acc = kind == "cumsum" ? acc + v : int64_t(uint64_t(acc) * uint64_t(v));
        EXPECT_EQ(o.get(i), double(acc)) << kind << " reverse=" << reverse << " at " << i;
      }
    }
  // A custom combiner on a 2-D block along axis 1: running maximum.
  module.reset();
  parse(R"(func @k(%x: ptr<fp32>, %o: ptr<fp32>) {
)" + load2D(4, 8, "fp32") +
        R"(  %s = scan %x2 {axis = 1} : tensor<4x8xfp32> {
  ^bb0(%a: fp32, %b: fp32):
    %m = max %a, %b {nan = "propagate"} : fp32
    yield %m
  }
  %op = splat %o : tensor<4x8xptr<fp32>>
  %oq = addptr %op, %offs : tensor<4x8xptr<fp32>>
  store %oq, %s
  return
}
)");
  HostBuffer x = random("x", DType::F32, 32), o = HostBuffer::allocate("o", DType::F32, 32);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
  for (int r = 0; r < 4; ++r) {
    double m = -INFINITY;
    for (int c = 0; c < 8; ++c) {
      m = std::max(m, x.get(r * 8 + c));
      EXPECT_EQ(o.get(r * 8 + c), m);
    }
  }
}

TEST_F(ReduceTest, DotAccumulatesInFp32AndInt32) {
  const int64_t M = 16, K = 32, N = 8;
  struct Case {
    std::string in, acc, precision;
  };
  for (const Case &cs :
       {Case{"fp16", "fp32", "ieee"}, Case{"bf16", "fp32", "ieee"}, Case{"fp32", "fp32", "ieee"},
        Case{"fp32", "fp32", "tf32"}, Case{"i8", "i32", "ieee"}, Case{"fp64", "fp64", "ieee"}}) {
    module.reset();
    SCOPED_TRACE(cs.in + " -> " + cs.acc + " " + cs.precision);
    std::string text =
        fmt::format(R"(func @k(%a: ptr<{3}>, %b: ptr<{3}>, %c: ptr<{4}>, %o: ptr<{4}>) {{
  %rm = make_range {{end = {0}, start = 0}} : tensor<{0}xi32>
  %rk = make_range {{end = {1}, start = 0}} : tensor<{1}xi32>
  %rn = make_range {{end = {2}, start = 0}} : tensor<{2}xi32>
  %m1 = expand_dims %rm {{axis = 1}} : tensor<{0}x1xi32>
  %k0 = expand_dims %rk {{axis = 0}} : tensor<1x{1}xi32>
  %k1 = expand_dims %rk {{axis = 1}} : tensor<{1}x1xi32>
  %n0 = expand_dims %rn {{axis = 0}} : tensor<1x{2}xi32>
  %cK = constant {{value = {1}}} : tensor<{0}x1xi32>
  %mK = mul %m1, %cK : tensor<{0}x1xi32>
  %mKb = broadcast %mK : tensor<{0}x{1}xi32>
  %k0b = broadcast %k0 : tensor<{0}x{1}xi32>
  %aoff = add %mKb, %k0b : tensor<{0}x{1}xi32>
  %cN = constant {{value = {2}}} : tensor<{1}x1xi32>
  %kN = mul %k1, %cN : tensor<{1}x1xi32>
  %kNb = broadcast %kN : tensor<{1}x{2}xi32>
  %n0b = broadcast %n0 : tensor<{1}x{2}xi32>
  %boff = add %kNb, %n0b : tensor<{1}x{2}xi32>
  %cN2 = constant {{value = {2}}} : tensor<{0}x1xi32>
  %mN = mul %m1, %cN2 : tensor<{0}x1xi32>
  %mNb = broadcast %mN : tensor<{0}x{2}xi32>
  %n0c = broadcast %n0 : tensor<{0}x{2}xi32>
  %coff = add %mNb, %n0c : tensor<{0}x{2}xi32>
  %ap = splat %a : tensor<{0}x{1}xptr<{3}>>
  %aq = addptr %ap, %aoff : tensor<{0}x{1}xptr<{3}>>
  %av = load %aq : tensor<{0}x{1}x{3}>
  %bp = splat %b : tensor<{1}x{2}xptr<{3}>>
  %bq = addptr %bp, %boff : tensor<{1}x{2}xptr<{3}>>
  %bv = load %bq : tensor<{1}x{2}x{3}>
  %cp = splat %c : tensor<{0}x{2}xptr<{4}>>
  %cq = addptr %cp, %coff : tensor<{0}x{2}xptr<{4}>>
  %cv = load %cq : tensor<{0}x{2}x{4}>
  %d = dot %av, %bv, %cv {{input_precision = "{5}"}} : tensor<{0}x{2}x{4}>
  %op = splat %o : tensor<{0}x{2}xptr<{4}>>
  %oq = addptr %op, %coff : tensor<{0}x{2}xptr<{4}>>
  store %oq, %d
  return
}}
)",
                    M, K, N, cs.in, cs.acc, cs.precision);
    parse(text);
    DType in = *parseDTypeName(cs.in), acc = *parseDTypeName(cs.acc);
    bool isInt = isInteger(in);
    HostBuffer a = random("a", in, M * K, isInt ? -100 : -2, isInt ? 100 : 2);
    HostBuffer b = random("b", in, K * N, isInt ? -100 : -2, isInt ? 100 : 2);
    HostBuffer c = random("c", acc, M * N, -5, 5), o = HostBuffer::allocate("o", acc, M * N);
    ASSERT_TRUE(run("k", {InterpArg::pointer(a), InterpArg::pointer(b), InterpArg::pointer(c),
                          InterpArg::pointer(o)}))
        << errors();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double want = c.get(m * N + n);
        for (int64_t k = 0; k < K; ++k)
          want += a.get(m * K + k) * b.get(k * N + n);
        // Exact for int8 (|sum| < 2^31); fp32 accumulation of 32 products of
        // magnitude <= 4: well within 1e-4; tf32 rounds inputs to 11 bits.
        double tol = isInt ? 0 : cs.precision == "tf32" ? 0.05 : in == DType::F64 ? 1e-12 : 1e-4;
        EXPECT_NEAR(o.get(m * N + n), want, tol) << m << "," << n;
      }
  }
}

} // namespace
