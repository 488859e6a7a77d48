// --insert-barriers (InsertBarriers.h): the dataflow over pending accesses.
//
// Pending sets only grow across loop iterations (bounded by the finite set of
// accesses in the function), so the iteration ends; a barrier placed in an
// earlier iteration stays (it is needed for a subset of the final state).
#include "lowering/InsertBarriers.h"
#include "analysis/SharedMemory.h"
#include "lang/Remarks.h"
#include "lowering/Pass.h"

#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace tk {
namespace {

using Pending = std::set<std::tuple<int64_t, int64_t, bool>>; // begin, end, write

bool conflicts(const Pending &pending, const std::vector<SharedAccess> &accesses) {
  for (const SharedAccess &a : accesses)
    for (const auto &[begin, end, write] : pending)
      if ((write || a.write) && a.begin < end && begin < a.end)
        return true;
  return false;
}

void add(Pending &pending, const std::vector<SharedAccess> &accesses) {
  for (const SharedAccess &a : accesses)
    pending.insert({a.begin, a.end, a.write});
}

class BarrierFlow {
public:
  BarrierFlow(int64_t numWarps, bool why) : numWarps_(numWarps), why_(why) {}

  /// Ops that need a barrier before them.
  std::set<Operation *> needs;
  /// With `why`: for each op of `needs`, the first earlier access it
  /// conflicted with (the op, and whether that one wrote).
  std::map<Operation *, std::pair<Operation *, bool>> because;

  Pending block(Block &block, Pending pending) {
    for (Operation &op : block)
      pending = flowOp(op, std::move(pending));
    return pending;
  }

private:
  Pending flowOp(Operation &op, Pending pending) {
    switch (op.opcode()) {
    case Opcode::Barrier:
    case Opcode::AsyncWait: // cp.async.wait_group, then bar.sync
      return {};
    case Opcode::If: {
      Pending out = block(op.body(0), pending);
      Pending other = block(op.body(1), std::move(pending));
      out.insert(other.begin(), other.end());
      return out;
    }
    case Opcode::For:
      return loop(std::move(pending), [&](Pending head) { return block(op.body(), head); });
    case Opcode::While: {
      // before runs first and on every exit; after feeds the back edge.
      Pending head = loop(std::move(pending), [&](Pending h) {
        return block(op.body(1), block(op.body(0), std::move(h)));
      });
      return block(op.body(0), std::move(head));
    }
    default:
      break;
    }
    std::vector<std::vector<SharedAccess>> phases = sharedAccesses(op, numWarps_);
    if (phases.empty())
      return pending;
    if (needs.count(&op) || conflicts(pending, phases.front())) {
      if (why_ && !because.count(&op))
        because[&op] = conflictWith(pending, phases.front());
      needs.insert(&op);
      pending.clear();
    }
    if (phases.size() > 1)
      pending.clear(); // the op's own barriers order everything before them
    add(pending, phases.back());
    if (why_)
      for (const SharedAccess &a : phases.back())
        origin_.emplace(std::make_tuple(a.begin, a.end, a.write), &op);
    return pending;
  }

  // The loop header's pending set: the entry's joined with the back edge's,
  // until it stops growing.
  template <typename Body> Pending loop(Pending head, Body body) {
    for (;;) {
      Pending next = head;
      Pending latch = body(head);
      next.insert(latch.begin(), latch.end());
      if (next == head)
        return head;
      head = std::move(next);
    }
  }

  // The op that made the first pending access `accesses` conflict with.
  std::pair<Operation *, bool> conflictWith(const Pending &pending,
                                            const std::vector<SharedAccess> &accesses) const {
    for (const SharedAccess &a : accesses)
      for (const auto &p : pending) {
        const auto &[begin, end, write] = p;
        if ((write || a.write) && a.begin < end && begin < a.end)
          if (auto it = origin_.find(p); it != origin_.end())
            return {it->second, write};
      }
    return {nullptr, false};
  }

  int64_t numWarps_;
  bool why_;
  // Each access range, with the first op that made it (remarks only).
  std::map<std::tuple<int64_t, int64_t, bool>, Operation *> origin_;
};

} // namespace

int64_t insertBarriers(Function &fn, RemarkSink *remarks) {
  BarrierFlow flow(functionNumWarps(fn), remarks != nullptr);
  flow.block(fn.body(), {});
  // Insert in program order (the set is keyed by address).
  std::vector<Operation *> targets;
  fn.walk([&](Operation *op) {
    if (flow.needs.count(op))
      targets.push_back(op);
  });
  for (Operation *op : targets) {
    op->parentBlock()->insert(op, Operation::create(Opcode::Barrier, op->loc(), {}, {}));
    if (!remarks)
      continue;
    auto [other, wrote] = flow.because[op];
    std::string why =
        other == op ? fmt::format("it {} the same shared memory in the loop's previous iteration",
                                  wrote ? "wrote" : "read")
        : other     ? fmt::format("{} at line {} {} the same shared memory", other->name(),
                                  remarks->line(other->loc()), wrote ? "wrote" : "read")
                    : std::string("an earlier access touched the same shared memory");
    remarks
        ->add(op->loc(), "barrier", RemarkStatus::Analysis, fn.name(),
              fmt::format("barrier before {}: {}; every warp must finish that access first",
                          op->name(), why))
        .with("conflict_line", other ? remarks->line(other->loc()) : 0);
  }
  return static_cast<int64_t>(targets.size());
}

namespace {

class InsertBarriersPass : public Pass {
public:
  InsertBarriersPass() : Pass(PassId::InsertBarriers) {}
  bool run(Module &m, DiagnosticEngine &) override {
    bool changed = false;
    for (auto &fn : m.functions())
      changed |= insertBarriers(*fn, m.remarks()) > 0;
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createInsertBarriersPass() { return std::make_unique<InsertBarriersPass>(); }

} // namespace tk
