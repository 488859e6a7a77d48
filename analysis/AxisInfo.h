// AxisInfo: what the compiler knows, per dimension, about the values of an
// integer or pointer tensor: how long its runs of consecutive values are, how
// aligned the start of each run is, and how long its runs of equal values are.
// Coalescing reads it to choose vector widths and thread orders; a load whose
// pointers are contiguous in runs of 4 fp32 starting on 16-byte boundaries can
// be one 128-bit access per thread.
//
// For a value of shape [S0, S1, ...], along dimension d (a scalar counts as one
// dimension of size 1), each line of values is cut into aligned blocks:
//
//   contiguity[d] = C  blocks of C elements (at index 0, C, 2C, ...) hold
//                      consecutive values x, x+1, ..., x+C-1 (pointers:
//                      consecutive elements of the pointee type);
//   divisibility[d] = D  the first value of every such block is a multiple of
//                      D (pointers: D bytes), D a power of two;
//   constancy[d] = K   blocks of K elements hold one value;
//   constant           the single value of every element, when known.
//
// Small arrays, one dimension of 8 elements:
//
//   [0 1 2 3 4 5 6 7]        contiguity 8, divisibility 2^30 (0; see below), constancy 1
//   [8 9 10 11 24 25 26 27]  contiguity 4, divisibility 8, constancy 1
//   [3 3 3 3 9 9 9 9]        contiguity 1, divisibility 1, constancy 4
//   [16 16 16 16 16 16 16 16] contiguity 1, divisibility 16, constancy 8, constant 16
//
// C and K are powers of two that divide the dimension; a value never has both
// C > 1 and K > 1 along one dimension. With C = 1 every element starts a
// block, so D then divides every element; with C > 1 the elements inside a
// block are D-aligned only at its start. Divisibility saturates at
// kMaxDivisibility (2^30): 0 is a multiple of everything.
//
// The lattice: facts only ever weaken by a join, the per-dimension gcd (for
// powers of two, the minimum), and a constant survives a join only when both
// sides have the same one. Loop-carried block arguments start from the loop's
// inits and are joined with what the body yields until nothing changes; `if`
// results join their two yields.
//
// Worked examples (BLOCK = 1024, x_ptr : ptr<fp32> {divisibility = 16},
// n : i32 {divisibility = 16}):
//
//   pid  = program_id                   C [1]     D [1]      K [1]
//   base = pid * 1024                   C [1]     D [1024]   K [1]
//   r    = make_range 0, 1024           C [1024]  D [2^30]   K [1]
//   offs = splat(base) + r              C [1024]  D [1024]   K [1]
//          the first element is pid*1024: over all programs only 1024 divides it
//   ptrs = addptr splat(x_ptr), offs    C [1024]  D [16]     K [1]
//          min(16 bytes of the base, 1024 elements * 4 bytes of the offset)
//   mask = offs < splat(n)              C [1]     D [1]      K [16]
//          blocks of 16 start at multiples of 16 and n is one, so no block
//          straddles n: the mask is uniform over 16 elements
//
// so alignment(ptrs) = 16 bytes (4 fp32 per access) and maskAlignment(mask)
// = 16 elements. In two dimensions, for a [64, 128] tile of a row-major
// matrix with 128 columns:
//
//   rows = expand_dims(make_range 0, 64, 1) * 128    [64x1]    C [1, 1]    D [128, 128]
//   cols = expand_dims(make_range 0, 128, 0)         [1x128]   C [1, 128]  D [1, 2^30]
//   offs = broadcast(rows) + broadcast(cols)         [64x128]  C [1, 128]  D [1, 128]
//
// each row is one run of 128 consecutive offsets starting at a multiple of
// 128; along dimension 0 consecutive elements differ by 128.
//
// Seeds: function arguments with `divisibility = N`; constants; make_range
// (contiguity = its size, divisibility of its start); program_id and
// num_programs (nothing known). Hints recorded by the front end on the
// defining op as int-array attributes, one entry per dimension, strengthen the
// computed facts (each is a promise by the author, like Triton's):
//   tk.multiple_of = [16]     divisibility
//   tk.max_contiguous = [16]  contiguity
//   tk.max_constancy = [16]   constancy
//
// Division and remainder assume non-negative dividends, as index arithmetic
// has them (Triton assumes the same): truncating division of a negative run
// would break the runs the rules promise.
#pragma once

#include "ir/Module.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tk {

struct AxisInfo {
  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::optional<int64_t> constant;

  unsigned rank() const { return static_cast<unsigned>(contiguity.size()); }

  /// Nothing known: every fact is 1, over `rank` dimensions (at least one).
  static AxisInfo unknown(unsigned rank);
  /// Every element equals `value`; `shape` empty for a scalar.
  static AxisInfo ofConstant(int64_t value, const std::vector<int64_t> &shape);
  /// Every element is the same unknown value (a splat): constancy = shape.
  static AxisInfo uniform(const std::vector<int64_t> &shape, int64_t divisibility);

  /// The divisibility every element along `dim` is known to have.
  int64_t elementDivisibility(unsigned dim) const {
    return contiguity[dim] > 1 ? 1 : divisibility[dim];
  }
  /// The divisibility of the first element of every aligned block of
  /// `length` elements along `dim` (a power of two).
  int64_t divisibilityAt(unsigned dim, int64_t length) const;

  /// The per-dimension gcd; the constant survives when both agree.
  static AxisInfo join(const AxisInfo &a, const AxisInfo &b);

  bool operator==(const AxisInfo &other) const = default;

  /// "contiguity = [1024], divisibility = [16], constancy = [1]", then
  /// ", constant = 5" when known.
  std::string str() const;
};

/// The largest power of two dividing `v` (kMaxDivisibility for 0).
int64_t powerOfTwoDivisor(int64_t v);

/// Axis info of every value of one function, computed on construction. The
/// function must verify; the results describe it until it changes.
///
///   AxisInfoAnalysis axis(fn);
///   axis.get(offs).contiguity[0];        // 1024
///   axis.alignment(ptrs);                // 16 (bytes)
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(Function &fn);

  /// The facts about `v`, a value of the function (any type: values that are
  /// not integers or pointers get constancy only).
  const AxisInfo &get(Value *v) const;

  int64_t contiguity(Value *v, unsigned dim) const { return get(v).contiguity[dim]; }
  int64_t divisibility(Value *v, unsigned dim) const { return get(v).divisibility[dim]; }
  int64_t constancy(Value *v, unsigned dim) const { return get(v).constancy[dim]; }

  /// The dimension with the longest runs of consecutive values (the last one
  /// among equals): the one a vectorised access runs along.
  unsigned mostContiguousDim(Value *v) const;
  /// Bytes by which the accesses of a vectorised load or store through `ptr`
  /// (a pointer or tensor of pointers) are aligned along its most contiguous
  /// dimension: min(divisibility, contiguity * element bytes).
  int64_t alignment(Value *ptr) const;
  /// Elements over which `mask` is uniform along `dim`, which bounds the
  /// vector width of a masked access.
  int64_t maskAlignment(Value *mask, unsigned dim) const;

private:
  std::map<Value *, AxisInfo> infos_;
};

} // namespace tk
