// Internal to analysis/: the transfer functions of axis info, the facts about
// an op's result computed from the facts about its operands. AxisInfo.cpp
// walks the IR (control flow, loop fixpoints, hints) and asks these rules for
// every other op; AxisInfoRules.cpp holds them, by op family.
#pragma once

#include "analysis/AxisInfo.h"

#include <cassert>
#include <functional>

namespace tk::axisinfo {

constexpr int64_t kMaxDiv = AxisInfo::kMaxDivisibility;

/// a * b, saturating at kMaxDivisibility (both are divisibilities, >= 1).
inline int64_t satMul(int64_t a, int64_t b) {
  assert(a >= 1 && b >= 1);
  return a > kMaxDiv / b ? kMaxDiv : a * b;
}

inline bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// The dimensions analysed for a type: its shape, or one dimension of size 1
/// for scalars and pointers.
inline std::vector<int64_t> dimsOf(Type *t) {
  if (t->isTensor())
    return t->shape();
  return {1};
}

using Lookup = std::function<const AxisInfo &(Value *)>;

/// The facts about the single result of `op` (not for, while or if), given
/// the facts about its operands through `lookup`.
AxisInfo transfer(Operation &op, const Lookup &lookup);

} // namespace tk::axisinfo
