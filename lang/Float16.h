// Float16: the 16-bit float formats (IEEE fp16 and bfloat16) as the GPU
// stores and rounds them, for the interpreter and for host code that fills or
// reads fp16/bf16 buffers.
//
// Values of these types are kept as their 16-bit patterns. Conversions to
// them round to nearest, ties to even, from a double in one step (so fptrunc
// from fp64 is not rounded twice), keep infinities, turn too-large values
// into infinity, produce subnormals, and keep NaNs NaN (quiet):
//
//   floatToHalf(1.0f) == 0x3C00;     halfToFloat(0x3C00) == 1.0f
//   doubleToHalf(65520.0) == 0x7C00  // the tie between 65504 and 65536 goes to even: inf
//   doubleToHalf(0x1p-25) == 0x0000  // half the smallest subnormal: ties to even (0)
//   doubleToBF16(1.00390625) == 0x3F80  // 1 + 2^-8: the tie goes to even (1.0)
//
// Widening (halfToFloat, bf16ToFloat) is exact.
#pragma once

#include <cstdint>

namespace tk {

float halfToFloat(uint16_t bits);
float bf16ToFloat(uint16_t bits);
uint16_t doubleToHalf(double value);
uint16_t doubleToBF16(double value);
/// float -> 16 bits: exact widening to double, then one rounding.
inline uint16_t floatToHalf(float value) { return doubleToHalf(value); }
inline uint16_t floatToBF16(float value) { return doubleToBF16(value); }

} // namespace tk
