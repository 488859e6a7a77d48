// Float16: the 16-bit float formats (IEEE fp16 and bfloat16) and the fp8 ones as the GPU
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

#include "lang/DType.h"

#include <cstdint>

namespace tk {

float halfToFloat(uint16_t bits);
float bf16ToFloat(uint16_t bits);
uint16_t doubleToHalf(double value);
uint16_t doubleToBF16(double value);
/// float -> 16 bits: exact widening to double, then one rounding.
inline uint16_t floatToHalf(float value) { return doubleToHalf(value); }
inline uint16_t floatToBF16(float value) { return doubleToBF16(value); }

// The fp8 formats (DType::F8E4NV, F8E5, F8E4B15), kept as their 8-bit
// patterns: sign, exponent, mantissa.
//   fp8e4nv  (e4m3fn, bias 7):  no infinity; 0x7F/0xFF are NaN; max 448 (0x7E)
//   fp8e5    (e5m2, bias 15):   IEEE: 0x7C is infinity, 0x7D-0x7F NaN; max 57344 (0x7B)
//   fp8e4b15 (e4m3, bias 15):   every pattern finite; max 1.875 (0x7F)
// Narrowing rounds from a double in one step, to nearest with ties to even
// (or toward zero), and saturates as the GPU's cvt.rn.satfinite does: a
// magnitude past the largest finite value, infinity included, gives the
// largest finite value with its sign; NaN gives 0x7F (fp8e4b15, which has no
// NaN: the largest value with NaN's sign). Widening is exact.
//
//   doubleToFp8(448.0, DType::F8E4NV) == 0x7E;  doubleToFp8(1e9, DType::F8E4NV) == 0x7E
//   doubleToFp8(0x1p-10, DType::F8E4NV) == 0x00 // half the smallest subnormal 2^-9: even (0)
//   doubleToFp8(-INFINITY, DType::F8E5) == 0xFB // -57344
//   fp8ToFloat(0x01, DType::F8E5) == 0x1p-16f   // the smallest subnormal
float fp8ToFloat(uint8_t bits, DType format);
uint8_t doubleToFp8(double value, DType format, bool towardZero = false);

} // namespace tk
