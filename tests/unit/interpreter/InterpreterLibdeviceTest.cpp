// extern_elementwise on the interpreter (interpreter/InterpreterLibdevice.cpp):
// the table covers lang/Libdevice.def exactly, the directed roundings are
// the neighbours of the round-to-nearest result, conversions saturate as
// PTX's cvt does, the integer functions follow their definitions, and the
// transcendental functions are within one ulp of a long-double reference.
#include "InterpTestUtil.h"
#include "interpreter/InterpreterImpl.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tk;
using namespace tk::test;

namespace {

// Lanes checked; the block is 128 (make_range needs a power of two), the
// other lanes repeat the last value.
constexpr int64_t N = 100;

class LibdeviceTest : public InterpFixture {
protected:
  // Runs `%r = extern_elementwise {symbol = SYMBOL}` on the buffers `ins`
  // (one element per lane) into a fresh buffer of dtype `res`.
  HostBuffer call(const std::string &symbol, const std::vector<HostBuffer *> &ins, DType res) {
    constexpr int64_t B = 128;
    std::string rs(dtypeName(res));
    std::string params, loads, operands;
    for (size_t k = 0; k < ins.size(); ++k) {
      std::string ts(dtypeName(ins[k]->dtype())), a = "a" + std::to_string(k);
      params += "%" + a + ": ptr<" + ts + ">, ";
      loads += loadBlock("x" + std::to_string(k), a, B, ts);
      operands += (k ? ", %x" : "%x") + std::to_string(k);
    }
    std::string text = "func @k(" + params + "%o: ptr<" + rs + ">) {\n" + rangeLine(B) + loads +
                       "  %r = extern_elementwise " + operands + " {symbol = \"" + symbol +
                       "\"} : " + tensorOf(B, rs) + "\n" + storeBlock("r", "o", B, rs) +
                       "  return\n}\n";
    parse(text);
    HostBuffer o = HostBuffer::allocate("o", res, B);
    std::vector<InterpArg> args;
    for (HostBuffer *b : ins)
      args.push_back(InterpArg::pointer(*b));
    args.push_back(InterpArg::pointer(o));
    EXPECT_TRUE(run("k", args)) << errors();
    return o;
  }

  template <typename T> HostBuffer buffer(const std::string &name, DType d, std::vector<T> vs) {
    HostBuffer b = HostBuffer::allocate(name, d, 128);
    vs.resize(128, vs.empty() ? T(1) : vs.back());
    std::memcpy(b.data(), vs.data(), 128 * sizeof(T));
    b.markAllWritten();
    return b;
  }

  template <typename T> std::vector<T> randomValues(T lo, T hi) {
    std::vector<T> vs(N);
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<T> dist(lo, hi);
      for (T &v : vs)
        do
          v = dist(rng);
        while (v == 0);
    } else {
      std::uniform_int_distribution<T> dist(lo, hi);
      for (T &v : vs)
        v = dist(rng);
    }
    return vs;
  }

  template <typename T> static T at(const HostBuffer &b, int64_t i) {
    T v;
    std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

TEST_F(LibdeviceTest, TableCoversLangTableExactly) {
  std::vector<std::string> m = interp::libdeviceTableMismatches();
  std::string all;
  for (const std::string &s : m)
    all += "\n  " + s;
  EXPECT_TRUE(m.empty()) << all;
}

TEST_F(LibdeviceTest, DirectedRoundingsBracketTheNearestSum) {
  std::vector<float> x = randomValues<float>(-1e3f, 1e3f), y = randomValues<float>(-1e-3f, 1e-3f);
  HostBuffer a = buffer("a", DType::F32, x), b = buffer("b", DType::F32, y);
  HostBuffer rn = call("__nv_fadd_rn", {&a, &b}, DType::F32);
  HostBuffer rd = call("__nv_fadd_rd", {&a, &b}, DType::F32);
  HostBuffer ru = call("__nv_fadd_ru", {&a, &b}, DType::F32);
  HostBuffer rz = call("__nv_fadd_rz", {&a, &b}, DType::F32);
  for (int64_t i = 0; i < N; ++i) {
    double exact = double(x[i]) + double(y[i]); // exact: the exponents are close enough
    float d = at<float>(rd, i), u = at<float>(ru, i), n = at<float>(rn, i), z = at<float>(rz, i);
    EXPECT_EQ(n, float(exact)) << i;
    EXPECT_LE(double(d), exact) << i;
    EXPECT_GE(double(u), exact) << i;
    EXPECT_TRUE(d == u || std::nextafter(d, INFINITY) == u) << x[i] << " + " << y[i];
    EXPECT_EQ(z, exact < 0 ? u : d) << i;
  }
}

TEST_F(LibdeviceTest, DivAndSqrtRoundingModesInFp64) {
  std::vector<double> x = randomValues<double>(0.5, 8), y = randomValues<double>(0.5, 8);
  HostBuffer a = buffer("a", DType::F64, x), b = buffer("b", DType::F64, y);
  HostBuffer dd = call("__nv_ddiv_rd", {&a, &b}, DType::F64);
  HostBuffer du = call("__nv_ddiv_ru", {&a, &b}, DType::F64);
  HostBuffer sd = call("__nv_dsqrt_rd", {&a}, DType::F64);
  HostBuffer su = call("__nv_dsqrt_ru", {&a}, DType::F64);
  for (int64_t i = 0; i < N; ++i) {
    long double q = (long double)x[i] / y[i], s = std::sqrt((long double)x[i]);
    EXPECT_LE((long double)at<double>(dd, i), q);
    EXPECT_GE((long double)at<double>(du, i), q);
    EXPECT_LE(std::nextafter(at<double>(dd, i), INFINITY), at<double>(du, i));
    EXPECT_LE((long double)at<double>(sd, i), s);
    EXPECT_GE((long double)at<double>(su, i), s);
  }
}

TEST_F(LibdeviceTest, ConversionsSaturateAndTakeNanToZero) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  HostBuffer a = buffer<float>("a", DType::F32, {3e9f, -3e9f, nan, 2.5f, -2.5f, 3.5f, -0.7f});
  HostBuffer rn = call("__nv_float2int_rn", {&a}, DType::I32);
  HostBuffer rd = call("__nv_float2int_rd", {&a}, DType::I32);
  HostBuffer un = call("__nv_float2uint_rz", {&a}, DType::I32);
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> wantRn = {mx, mn, 0, 2, -2, 4, -1}, wantRd = {mx, mn, 0, 2, -3, 3, -1};
  std::vector<uint32_t> wantU = {3000000000u, 0, 0, 2, 0, 3, 0};
  for (int64_t i = 0; i < 7; ++i) {
    EXPECT_EQ(at<int32_t>(rn, i), wantRn[i]) << i;
    EXPECT_EQ(at<int32_t>(rd, i), wantRd[i]) << i;
    EXPECT_EQ(uint32_t(at<int32_t>(un, i)), wantU[i]) << i;
  }
}

TEST_F(LibdeviceTest, IntegerFunctionsFollowTheirDefinitions) {
  std::vector<int32_t> x = randomValues<int32_t>(std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max());
  std::vector<int32_t> y = randomValues<int32_t>(std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max());
  std::vector<int32_t> s = randomValues<int32_t>(0, 0xFFFF);
  x[0] = 0; // clz(0) = 32, ffs(0) = 0
  HostBuffer a = buffer("a", DType::I32, x), b = buffer("b", DType::I32, y),
             c = buffer("c", DType::I32, s);
  HostBuffer clz = call("__nv_clz", {&a}, DType::I32);
  HostBuffer ffs = call("__nv_ffs", {&a}, DType::I32);
  HostBuffer brev = call("__nv_brev", {&a}, DType::I32);
  HostBuffer perm = call("__nv_byte_perm", {&a, &b, &c}, DType::I32);
  HostBuffer hi = call("__nv_mulhi", {&a, &b}, DType::I32);
  HostBuffer hadd = call("__nv_hadd", {&a, &b}, DType::I32);
  for (int64_t i = 0; i < N; ++i) {
    uint32_t ux = uint32_t(x[i]), uy = uint32_t(y[i]);
    EXPECT_EQ(at<int32_t>(clz, i), std::countl_zero(ux)) << i;
    EXPECT_EQ(at<int32_t>(ffs, i), ux ? std::countr_zero(ux) + 1 : 0) << i;
    uint32_t rev = 0;
    for (int k = 0; k < 32; ++k)
      rev |= ((ux >> k) & 1u) << (31 - k);
    EXPECT_EQ(uint32_t(at<int32_t>(brev, i)), rev) << i;
    // byte_perm: result byte k is byte (selector nibble k & 7) of y:x.
    uint64_t both = (uint64_t(uy) << 32) | ux;
    uint32_t want = 0;
    for (int k = 0; k < 4; ++k)
      want |= uint32_t((both >> (8 * ((s[i] >> (4 * k)) & 7))) & 0xFF) << (8 * k);
    EXPECT_EQ(uint32_t(at<int32_t>(perm, i)), want) << i;
    EXPECT_EQ(at<int32_t>(hi, i), int32_t((int64_t(x[i]) * y[i]) >> 32)) << i;
    EXPECT_EQ(at<int32_t>(hadd, i), int32_t((int64_t(x[i]) + y[i]) >> 1)) << i;
  }
}

TEST_F(LibdeviceTest, TranscendentalsWithinOneUlp) {
  std::vector<float> x = randomValues<float>(-0.99f, 0.99f), y = randomValues<float>(0.1f, 4.f);
  HostBuffer a = buffer("a", DType::F32, x), b = buffer("b", DType::F32, y);
  HostBuffer asin = call("__nv_asinf", {&a}, DType::F32);
  HostBuffer pow = call("__nv_powf", {&b, &a}, DType::F32);
  HostBuffer erfinv = call("__nv_erfinvf", {&a}, DType::F32);
  for (int64_t i = 0; i < N; ++i) {
    auto ulp = [](float v) { return std::nextafter(std::fabs(v), INFINITY) - std::fabs(v); };
    float wa = float(std::asin((long double)x[i]));
    float wp = float(std::pow((long double)y[i], (long double)x[i]));
    EXPECT_NEAR(at<float>(asin, i), wa, ulp(wa)) << x[i];
    EXPECT_NEAR(at<float>(pow, i), wp, ulp(wp)) << y[i] << " ** " << x[i];
    // erfinv inverts erf: erf(erfinv(x)) is x within the slope's rounding.
    double back = std::erf(double(at<float>(erfinv, i)));
    EXPECT_NEAR(back, x[i], 4 * ulp(x[i]) + 1e-7) << x[i];
  }
}

TEST_F(LibdeviceTest, UnknownSymbolIsAVerifierError) {
  BufferId id = sm.addBuffer("bad.tkir", "func @k(%a: fp32) {\n"
                                         "  %r = extern_elementwise %a {symbol = \"__nv_nope\"} : "
                                         "fp32\n  return\n}\n");
  std::unique_ptr<Module> m = parseIR(ctx, id, diag);
  ASSERT_TRUE(m) << diag.renderAll();
  EXPECT_FALSE(verifyModule(*m, diag));
  EXPECT_NE(diag.renderAll().find("'__nv_nope' is not a libdevice function tk knows"),
            std::string::npos)
      << diag.renderAll();
}

} // namespace
