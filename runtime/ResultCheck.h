// ResultCheck: whether two results of one kernel agree, element by element,
// within the tolerance of their dtype. TK_CHECK compares a GPU launch with
// the interpreter through it (python/src/LaunchCheck.h), and the autotuner
// every config's output with the first usable config's (Autotuner.h).
//
//   Tolerance t = toleranceOf(DType::F32);             // rtol 1e-4, atol 1e-5
//   double scale = largestMagnitude(ref, n, DType::F32);
//   std::optional<Difference> d = firstDifference(got, ref, n, DType::F32, scale);
//   if (d) ... d->index 17, d->got "1.5", d->expected "2.25",
//          d->why "fp32: |difference| 0.75 > 0.000289 = 1e-4 x |2.25| + 1e-5 x 6.4, ..."
//
// Floats agree when |got - expected| <= rtol * |expected| + atol * scale,
// where scale is the largest magnitude among the expected values (so sums
// whose terms cancel are judged against the size of their terms), with
// (rtol, atol):
//
//   fp64 (1e-9, 1e-12)   fp32 (1e-4, 1e-5)   fp16 (2e-3, 1e-3)   bf16 (1.6e-2, 8e-3)
//
// NaN agrees with NaN, an infinity only with itself; integers, bools and
// pointers (U64) agree only when their bits do. The bounds are far above what
// another order of summation or the GPU's approximate exp2/log2/rsqrt (a few
// ulp) changes, and far below what a wrong instruction or config does.
#pragma once

#include "lang/DType.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tk {

struct Tolerance {
  double rtol = 0, atol = 0; // both 0: exact
};
Tolerance toleranceOf(DType dtype);

/// An element's value as text ("1.5", "-3", "true").
std::string elementText(const std::byte *p, DType dtype);
/// An element's value as a double (floats widened, integers converted).
double elementValue(const std::byte *p, DType dtype);

/// The largest finite magnitude among `count` elements (0 for integers).
double largestMagnitude(const std::byte *elements, size_t count, DType dtype);

/// Whether element `got` agrees with `expected`, as above.
bool elementsAgree(const std::byte *got, const std::byte *expected, DType dtype, double scale);

struct Difference {
  size_t index = 0; // of the first element that differs
  std::string got, expected;
  std::string why; // "fp32: |difference| 0.75 > 0.000289 = ..." or "i32: exact"
};

/// The first of `count` elements where `got` and `expected` disagree.
std::optional<Difference> firstDifference(const std::byte *got, const std::byte *expected,
                                          size_t count, DType dtype, double scale);
/// The explanation of a difference at one element ("why" above).
std::string differenceWhy(const std::byte *got, const std::byte *expected, DType dtype,
                          double scale);

} // namespace tk
