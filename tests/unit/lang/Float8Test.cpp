// fp8 conversions (fp8e4nv, fp8e5, fp8e4b15): known answers at the special
// values, and random doubles against the nearest representable value found
// by searching every pattern.
#include "lang/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace tk;

namespace {

constexpr DType kFormats[] = {DType::F8E4NV, DType::F8E5, DType::F8E4B15};

// The reference: the finite pattern nearest to x (ties to the even
// mantissa), saturated to the largest finite value; NaN gives 0x7F.
uint8_t nearestPattern(double x, DType f, bool towardZero) {
  if (std::isnan(x))
    return f == DType::F8E4B15 ? (std::signbit(x) ? 0xFF : 0x7F) : 0x7F;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(x);
  uint8_t best = 0;
  double bestErr = std::numeric_limits<double>::infinity();
  for (unsigned p = 0; p < 0x80; ++p) {
    double v = fp8ToFloat(static_cast<uint8_t>(p), f);
    if (!std::isfinite(v))
      continue;
    if (towardZero) {
      if (v <= a && (bestErr == std::numeric_limits<double>::infinity() || v > fp8ToFloat(best, f)))
        best = static_cast<uint8_t>(p), bestErr = a - v;
      continue;
    }
    double err = std::fabs(v - a);
    if (err < bestErr || (err == bestErr && (p & 1) == 0))
      best = static_cast<uint8_t>(p), bestErr = err;
  }
  return sign | best;
}

} // namespace

TEST(Float8Test, SpecialValues) {
  // fp8e4nv: max 448, no infinity, NaN 0x7F; saturates.
  EXPECT_EQ(doubleToFp8(1.0, DType::F8E4NV), 0x38);
  EXPECT_EQ(doubleToFp8(448.0, DType::F8E4NV), 0x7E);
  EXPECT_EQ(doubleToFp8(464.0, DType::F8E4NV), 0x7E); // the tie past the max: saturates
  EXPECT_EQ(doubleToFp8(1e9, DType::F8E4NV), 0x7E);
  EXPECT_EQ(doubleToFp8(INFINITY, DType::F8E4NV), 0x7E);
  EXPECT_EQ(doubleToFp8(-INFINITY, DType::F8E4NV), 0xFE);
  EXPECT_EQ(doubleToFp8(NAN, DType::F8E4NV), 0x7F);
  EXPECT_EQ(doubleToFp8(0x1p-6, DType::F8E4NV), 0x08);  // smallest normal
  EXPECT_EQ(doubleToFp8(0x1p-9, DType::F8E4NV), 0x01);  // smallest subnormal
  EXPECT_EQ(doubleToFp8(0x1p-10, DType::F8E4NV), 0x00); // half of it: ties to even (0)
  EXPECT_EQ(doubleToFp8(3 * 0x1p-10, DType::F8E4NV), 0x02);
  EXPECT_EQ(doubleToFp8(-0.0, DType::F8E4NV), 0x80);
  EXPECT_EQ(doubleToFp8(1.0 + 1.0 / 16, DType::F8E4NV), 0x38); // tie: even
  EXPECT_EQ(doubleToFp8(1.0 + 3.0 / 16, DType::F8E4NV), 0x3A); // tie: even (up)
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7F, DType::F8E4NV)));
  EXPECT_TRUE(std::isnan(fp8ToFloat(0xFF, DType::F8E4NV)));
  EXPECT_EQ(fp8ToFloat(0x7E, DType::F8E4NV), 448.0f);
  EXPECT_EQ(fp8ToFloat(0x01, DType::F8E4NV), 0x1p-9f);
  // fp8e5: IEEE-like, max 57344; inf 0x7C; cvt.satfinite saturates.
  EXPECT_EQ(doubleToFp8(1.0, DType::F8E5), 0x3C);
  EXPECT_EQ(doubleToFp8(57344.0, DType::F8E5), 0x7B);
  EXPECT_EQ(doubleToFp8(61440.0, DType::F8E5), 0x7B);
  EXPECT_EQ(doubleToFp8(INFINITY, DType::F8E5), 0x7B);
  EXPECT_EQ(doubleToFp8(-INFINITY, DType::F8E5), 0xFB);
  EXPECT_EQ(doubleToFp8(NAN, DType::F8E5), 0x7F);
  EXPECT_EQ(doubleToFp8(0x1p-16, DType::F8E5), 0x01);
  EXPECT_EQ(doubleToFp8(0x1p-17, DType::F8E5), 0x00);
  EXPECT_EQ(fp8ToFloat(0x7C, DType::F8E5), INFINITY);
  EXPECT_EQ(fp8ToFloat(0xFC, DType::F8E5), -INFINITY);
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7D, DType::F8E5)));
  EXPECT_EQ(fp8ToFloat(0x01, DType::F8E5), 0x1p-16f);
  // fp8e4b15: every pattern finite, max 1.875.
  EXPECT_EQ(doubleToFp8(1.0, DType::F8E4B15), 0x78);
  EXPECT_EQ(doubleToFp8(1.875, DType::F8E4B15), 0x7F);
  EXPECT_EQ(doubleToFp8(100.0, DType::F8E4B15), 0x7F);
  EXPECT_EQ(doubleToFp8(-100.0, DType::F8E4B15), 0xFF);
  EXPECT_EQ(fp8ToFloat(0x7F, DType::F8E4B15), 1.875f);
  EXPECT_EQ(fp8ToFloat(0x01, DType::F8E4B15), 0x1p-17f);
  // Toward zero: 1.2 lies between 1.125 and 1.25.
  EXPECT_EQ(doubleToFp8(1.2, DType::F8E4NV), 0x3A);
  EXPECT_EQ(doubleToFp8(1.2, DType::F8E4NV, true), 0x39);
  EXPECT_EQ(doubleToFp8(-1.2, DType::F8E4NV, true), 0xB9);
}

TEST(Float8Test, EveryFinitePatternRoundTrips) {
  for (DType f : kFormats)
    for (unsigned p = 0; p < 0x100; ++p) {
      float v = fp8ToFloat(static_cast<uint8_t>(p), f);
      if (!std::isfinite(v))
        continue;
      EXPECT_EQ(doubleToFp8(v, f), p) << dtypeName(f) << " " << std::hex << p;
      // Widening goes through fp16 on the GPU: every value is an fp16 value.
      EXPECT_EQ(halfToFloat(floatToHalf(v)), v) << dtypeName(f) << " " << std::hex << p;
    }
}

TEST(Float8Test, RandomValuesRoundToTheNearest) {
  std::mt19937_64 rng(18);
  std::uniform_real_distribution<double> exponent(-22, 18), unit(-1, 1);
  for (DType f : kFormats)
    for (int i = 0; i < 20000; ++i) {
      double x = unit(rng) * std::exp2(exponent(rng));
      // Also exact midpoints between neighbouring values: the ties.
      if (i % 4 == 0) {
        uint8_t p = static_cast<uint8_t>(rng() & 0x7E);
        double lo = fp8ToFloat(p, f), hi = fp8ToFloat(static_cast<uint8_t>(p + 1), f);
        if (std::isfinite(lo) && std::isfinite(hi))
          x = (lo + hi) / 2;
      }
      for (bool rtz : {false, true})
        ASSERT_EQ(doubleToFp8(x, f, rtz), nearestPattern(x, f, rtz))
            << dtypeName(f) << " " << x << (rtz ? " rtz" : "");
    }
}
