#include "lang/Float16.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tk {
namespace {

// Rounds |value| (finite, not NaN) to a binary format with `mantBits` stored
// mantissa bits and exponent bias `bias`, to nearest with ties to even or
// toward zero. Returns the exponent and mantissa fields as one number without
// the sign, unbounded above: the caller decides what too large means
// (infinity, or the largest finite value).
uint64_t roundMagnitude(double value, int bias, int mantBits, bool towardZero) {
  uint64_t b = std::bit_cast<uint64_t>(value);
  int exp = static_cast<int>((b >> 52) & 0x7FF);
  uint64_t mant = b & ((uint64_t(1) << 52) - 1);
  if (exp == 0)
    return 0; // double subnormals are far below the smallest subnormal of 16 bits or less
  int e = exp - 1023;
  int minNormalExp = 1 - bias;
  uint64_t sig = mant | (uint64_t(1) << 52); // 53 bits with the implicit one
  // Bits of `sig` to drop: normal numbers keep mantBits + 1; below the
  // normal range the result is a multiple of the smallest subnormal.
  int shift = 52 - mantBits + (e < minNormalExp ? minNormalExp - e : 0);
  if (shift > 53)
    return 0; // below half of the smallest subnormal
  uint64_t q = sig >> shift;
  uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (!towardZero && (rem > half || (rem == half && (q & 1))))
    ++q;
  if (e < minNormalExp)
    return q; // subnormal; q == 2^mantBits is the smallest normal, which reads right
  // q carries the implicit one at bit mantBits, which adds one to the
  // exponent field: hence `e + bias - 1`. A carry out of the mantissa rounds
  // up into the next binade by the same addition.
  return (uint64_t(e + bias - 1) << mantBits) + q;
}

// Rounds a double to an IEEE format with `expBits` exponent bits and
// `mantBits` stored mantissa bits (sign in the top bit of a 16-bit pattern).
// Both 16-bit formats are this one function with different widths, which
// keeps the rounding rules in one place.
uint16_t roundDouble(double value, int expBits, int mantBits) {
  uint64_t b = std::bit_cast<uint64_t>(value);
  uint16_t sign = static_cast<uint16_t>((b >> 63) << 15);
  int exp = static_cast<int>((b >> 52) & 0x7FF);
  uint64_t mant = b & ((uint64_t(1) << 52) - 1);
  uint16_t expMask = static_cast<uint16_t>(((1u << expBits) - 1) << mantBits);
  if (exp == 0x7FF) {
    if (mant == 0)
      return sign | expMask; // infinity
    // NaN: keep the top payload bits and set the quiet bit.
    uint16_t payload = static_cast<uint16_t>(mant >> (52 - mantBits));
    return sign | expMask | payload | static_cast<uint16_t>(1u << (mantBits - 1));
  }
  uint64_t bits = roundMagnitude(value, (1 << (expBits - 1)) - 1, mantBits, false);
  if (bits >= expMask)
    return sign | expMask; // overflow to infinity
  return sign | static_cast<uint16_t>(bits);
}

// The fp8 formats: exponent bias, stored mantissa bits, the largest finite
// magnitude's pattern, and whether the all-ones exponent is infinity/NaN
// (IEEE, e5) or the top pattern 0x7F alone is NaN (e4nv) or nothing is (e4b15).
struct Fp8Format {
  int bias;
  int mantBits;
  uint8_t maxFinite;
  enum { Ieee, TopIsNaN, AllFinite } special;
};

Fp8Format fp8Format(DType t) {
  switch (t) {
  case DType::F8E5:
    return {15, 2, 0x7B, Fp8Format::Ieee};
  case DType::F8E4B15:
    return {15, 3, 0x7F, Fp8Format::AllFinite};
  default:
    return {7, 3, 0x7E, Fp8Format::TopIsNaN};
  }
}
} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else {
    // Subnormal (or zero): mant * 2^-24 is exact in float.
    float v = static_cast<float>(mant) * 0x1p-24f;
    return (h & 0x8000) ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t doubleToHalf(double value) { return roundDouble(value, 5, 10); }
uint16_t doubleToBF16(double value) { return roundDouble(value, 8, 7); }

} // namespace tk

namespace tk {

float fp8ToFloat(uint8_t bits, DType format) {
  Fp8Format f = fp8Format(format);
  bool neg = bits & 0x80;
  unsigned mag = bits & 0x7F;
  unsigned exp = mag >> f.mantBits, mant = mag & ((1u << f.mantBits) - 1);
  unsigned expAllOnes = 0x7Fu >> f.mantBits;
  float v;
  if (f.special == Fp8Format::TopIsNaN && mag == 0x7F)
    v = std::numeric_limits<float>::quiet_NaN();
  else if (f.special == Fp8Format::Ieee && exp == expAllOnes)
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mantBits);
  else
    v = std::ldexp(static_cast<float>(mant | (1u << f.mantBits)),
                   static_cast<int>(exp) - f.bias - f.mantBits);
  return neg ? -v : v;
}

uint8_t doubleToFp8(double value, DType format, bool towardZero) {
  Fp8Format f = fp8Format(format);
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value))
    return f.special == Fp8Format::AllFinite ? sign | f.maxFinite : 0x7F;
  if (std::isinf(value))
    return sign | f.maxFinite;
  uint64_t bits = roundMagnitude(std::fabs(value), f.bias, f.mantBits, towardZero);
  return sign | static_cast<uint8_t>(std::min<uint64_t>(bits, f.maxFinite));
}

} // namespace tk
