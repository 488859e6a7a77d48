#include "lang/Float16.h"

#include <bit>
#include <cstring>

namespace tk {
namespace {

// Rounds a double to a binary format with `expBits` exponent bits and
// `mantBits` stored mantissa bits (IEEE layout, sign in the top bit of a
// 16-bit pattern). Both 16-bit formats are this one function with different
// widths, which keeps the rounding rules in one place.
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
  if (exp == 0)
    return sign; // double subnormals are far below the smallest 16-bit subnormal
  int bias = (1 << (expBits - 1)) - 1;
  int e = exp - 1023;
  int minNormalExp = 1 - bias;
  uint64_t sig = mant | (uint64_t(1) << 52); // 53 bits with the implicit one
  // Bits of `sig` to drop: normal numbers keep mantBits + 1; below the
  // normal range the result is a multiple of the smallest subnormal.
  int shift = 52 - mantBits + (e < minNormalExp ? minNormalExp - e : 0);
  if (shift > 53)
    return sign; // below half of the smallest subnormal
  uint64_t q = sig >> shift;
  uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  uint64_t bits;
  if (e < minNormalExp)
    bits = q; // subnormal; q == 2^mantBits is the smallest normal, which reads right
  else
    // q carries the implicit one at bit mantBits, which adds one to the
    // exponent field: hence `e + bias - 1`. A carry out of the mantissa
    // rounds up into the next binade by the same addition.
    bits = (uint64_t(e + bias - 1) << mantBits) + q;
  if (bits >= expMask)
    return sign | expMask; // overflow to infinity
  return sign | static_cast<uint16_t>(bits);
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
