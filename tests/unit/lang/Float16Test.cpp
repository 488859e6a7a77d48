// fp16 and bf16 conversions: round to nearest even, subnormals, overflow,
// infinities and NaN, and that widening is exact.
#include "lang/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tk;

TEST(Float16Test, ExactValuesRoundTrip) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  // Every one of the 63488 finite patterns widens and rounds back to itself.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7C00) == 0x7C00)
      continue;
    EXPECT_EQ(floatToHalf(halfToFloat(uint16_t(b))), b) << std::hex << b;
    EXPECT_EQ(floatToBF16(bf16ToFloat(uint16_t(b))), b) << std::hex << b;
  }
}

TEST(Float16Test, TiesGoToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1.
  EXPECT_EQ(doubleToHalf(1.0 + 0x1p-11), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(doubleToHalf(1.0 + 3 * 0x1p-11), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(doubleToHalf(1.0 + 0x1p-11 + 0x1p-30), 0x3C01);
  // bf16: 1 + 2^-8 ties to 1.0; 1 + 3 * 2^-8 to 1 + 2^-6.
  EXPECT_EQ(doubleToBF16(1.0 + 0x1p-8), 0x3F80);
  EXPECT_EQ(doubleToBF16(1.0 + 3 * 0x1p-8), 0x3F82);
}

TEST(Float16Test, SubnormalsAndUnderflow) {
  EXPECT_EQ(doubleToHalf(0x1p-25), 0x0000);           // tie with 0: even
  EXPECT_EQ(doubleToHalf(0x1p-25 + 0x1p-40), 0x0001); // above the tie
  EXPECT_EQ(doubleToHalf(3 * 0x1p-25), 0x0002);       // 1.5 ulp ties to 2
  EXPECT_EQ(doubleToHalf(-0x1p-26), 0x8000);          // keeps the sign
  EXPECT_EQ(doubleToHalf(0x1p-14 - 0x1p-25), 0x0400); // rounds up to the smallest normal
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_FLOAT_EQ(halfToFloat(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(doubleToBF16(0x1p-133), 0x0001); // bf16's smallest subnormal
}

TEST(Float16Test, OverflowInfinityAndNaN) {
  EXPECT_EQ(doubleToHalf(65519.99), 0x7BFF);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7C00); // the tie goes to even: infinity
  EXPECT_EQ(doubleToHalf(1e10), 0x7C00);
  EXPECT_EQ(doubleToHalf(-INFINITY), 0xFC00);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7C00)));
  uint16_t n = doubleToHalf(NAN);
  EXPECT_EQ(n & 0x7C00, 0x7C00);
  EXPECT_NE(n & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(halfToFloat(n)));
  EXPECT_TRUE(std::isnan(bf16ToFloat(doubleToBF16(NAN))));
  EXPECT_EQ(doubleToBF16(3.5e38), 0x7F80); // past bf16's largest finite value
}

// Against an independent reference: the nearest fp16 value found by search
// over all finite patterns, ties to the even pattern.
TEST(Float16Test, RandomDoublesMatchNearestValue) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-26, 16);
  for (int t = 0; t < 2000; ++t) {
    double x = std::ldexp(mant(rng), expo(rng));
    if (x == 0)
      continue;
    uint16_t best = 0;
    double bestErr = INFINITY;
    for (uint32_t b = 0; b < 0x7C00; ++b) {
      uint16_t cand = uint16_t(b | (x < 0 ? 0x8000 : 0));
      double err = std::fabs(double(halfToFloat(cand)) - x);
      if (err < bestErr || (err == bestErr && (cand & 1) == 0)) {
        bestErr = err;
        best = cand;
      }
    }
    if (std::fabs(x) >= 65520.0)
      continue; // overflow is checked above
    EXPECT_EQ(doubleToHalf(x), best) << x;
  }
}
