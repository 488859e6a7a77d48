// Liveness: when each user of shared memory is live, as an interval of
// program-order numbers, so that --allocate-shared (AllocateShared.cpp) may
// give two users the same bytes exactly when their intervals do not meet.
//
// Ops are numbered by a walk in program order, a region op before the ops of
// its regions: first(op) is an op's number, last(op) the largest number in
// its regions (its own when it has none), so a loop's interval spans its
// body. An op's scratch is live during the op only, [first, last]; a
// local_alloc buffer from the alloc to bufferEnd():
//
//   0  %buf = local_alloc %x        buffer [0, 4]: used in a loop that the
//   1  for %lo, %hi, %step {        alloc is outside of, so live to the loop's
//   2    %v = local_load %buf       end (the next iteration reads it again)
//   3    %c = convert_layout %v     scratch [3, 3]
//   4    yield                      the for: first 1, last 4
//      }
//   5  %r = reduce %y ...           scratch [5, 5]: may take %buf's bytes
//   6  return
//
// A buffer that flows into control flow (a terminator's operand, an operand
// of for/while/if, a call argument) could be used anywhere later: it lives
// to the end (kForever). A cp.async ring (a buffer that async_copy writes)
// lives until the `async_wait {pending = 0}` after its last use in the
// ring's own block (until then copies may still land, masked-off ones too),
// or to the end when there is none.
#pragma once

#include "ir/Module.h"

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace tk {

class Liveness {
public:
  /// The end of a buffer live to the end of the function.
  static constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

  /// Numbers the ops of `fn`; the IR's structure must not change while this
  /// is used (attributes may).
  explicit Liveness(Function &fn);

  /// Every op of the function, in program order (the walk's): order()[first(op)] == op.
  const std::vector<Operation *> &order() const { return order_; }
  int64_t first(const Operation &op) const { return first_.at(&op); }
  int64_t last(const Operation &op) const { return last_.at(&op); }

  /// The last number at which the buffer of `alloc` (a local_alloc) is live:
  /// at least first(alloc); kForever when it flows into control flow or is a
  /// ring without a closing wait.
  int64_t bufferEnd(const Operation &alloc) const;

private:
  std::vector<Operation *> order_;
  std::map<const Operation *, int64_t> first_, last_;
};

} // namespace tk
