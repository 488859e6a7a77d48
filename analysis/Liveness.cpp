// Liveness of shared-memory users (see Liveness.h).
#include "analysis/Liveness.h"

#include <algorithm>

namespace tk {
namespace {

bool escapes(const Operation *user) {
  return user->hasTrait(OpTrait::Terminator) || user->is(Opcode::For) || user->is(Opcode::While) ||
         user->is(Opcode::If) || user->is(Opcode::Call);
}

// A cp.async ring (--pipeline): a buffer that async_copy writes.
bool isRing(const Operation &alloc) {
  const std::vector<Operation *> &users = alloc.result()->users();
  return std::any_of(users.begin(), users.end(),
                     [](const Operation *u) { return u->is(Opcode::AsyncCopy); });
}

} // namespace

Liveness::Liveness(Function &fn) {
  fn.walk([&](Operation *op) {
    first_[op] = static_cast<int64_t>(order_.size());
    order_.push_back(op);
  });
  // Backwards, so that the ops of a region (numbered after their op) have
  // their last number before the op that holds them asks for it.
  for (size_t i = order_.size(); i-- > 0;) {
    Operation *op = order_[i];
    int64_t end = first_[op];
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (unsigned b = 0; b < op->region(r).numBlocks(); ++b)
        for (Operation &inner : op->region(r).block(b))
          end = std::max(end, last_[&inner]);
    last_[op] = end;
  }
}

int64_t Liveness::bufferEnd(const Operation &alloc) const {
  int64_t end = first(alloc);
  Operation *home = alloc.parentOp(); // null at the function's top level
  for (Operation *user : alloc.result()->users()) {
    if (escapes(user))
      return kForever;
    // A use inside a loop the alloc is outside of: the next iteration uses
    // the buffer again, so it stays live to the end of that loop.
    int64_t useEnd = last(*user);
    for (Operation *p = user->parentOp(); p && p != home; p = p->parentOp())
      if (p->is(Opcode::For) || p->is(Opcode::While))
        useEnd = std::max(useEnd, last(*p));
    end = std::max(end, useEnd);
  }
  if (!isRing(alloc))
    return end;
  // A ring's bytes are free once no copy into them is in flight and every
  // thread has read them: at the `async_wait {pending = 0}` (wait_group 0,
  // then bar.sync) that --pipeline puts after the loop, in the ring's own
  // block (so it runs whenever the loop did). That wait is also the barrier
  // between the ring's last reads and the first writes of scratch placed
  // over it. Without one, copies (even masked-off ones, which write zeros)
  // may still land later: the ring then stays live to the end.
  for (size_t i = static_cast<size_t>(end) + 1; i < order_.size(); ++i) {
    const Operation *op = order_[i];
    if (op->is(Opcode::AsyncWait) && op->parentBlock() == alloc.parentBlock() &&
        op->attrs().getInt("pending").value_or(-1) == 0)
      return first(*op);
  }
  return kForever;
}

} // namespace tk
