// DCE: erases ops whose results are unused and that have no effects, and
// loop-carried values of `for` that nothing outside the loop observes.
//
// Unused loads go too (a load has no effect, it is only not movable), unless
// volatile. `while` loops stay: erasing one could remove an infinite loop.
//
// A carried value i of a `for` is dead when result i is unused and its body
// argument only feeds side-effect-free ops of the body whose results end in
// the yield's operand i and nowhere else:
//
//   %r:2 = for ... iter_args(%a, %b)     // %r#1 unused
//     %t = add %b, %c                    // only feeds yield #1
//     yield %x, %t
//
// Then the argument, the yield operand, the init operand and the result go,
// and the ops computing it die with them.
#include "lowering/Pass.h"

#include <set>

namespace tk {
namespace {

bool isTriviallyDead(Operation *op) {
  if (op->hasTrait(OpTrait::Terminator))
    return false;
  for (Value *r : op->results())
    if (r->hasUses())
      return false;
  if (op->isSideEffectFree())
    return true;
  return op->hasTrait(OpTrait::MemRead) && !op->hasTrait(OpTrait::MemWrite) &&
         !op->attrs().getBool("volatile").value_or(false);
}

// The ops of `body` reached from carried argument `i`, if they are all
// effect-free, region-free ops of the body whose values reach the yield only
// at operand i; nullopt otherwise.
std::optional<std::set<Operation *>> deadCarriedSlice(Block &body, unsigned i) {
  Operation *yield = body.terminator();
  std::set<Operation *> slice;
  std::vector<Value *> work = {body.argument(1 + i)};
  while (!work.empty()) {
    Value *v = work.back();
    work.pop_back();
    for (Operation *user : v->users()) {
      if (user == yield) {
        for (unsigned k = 0; k < yield->numOperands(); ++k)
          if (yield->operand(k) == v && k != i)
            return std::nullopt;
        continue;
      }
      if (user->parentBlock() != &body || user->numRegions() || !user->isSideEffectFree())
        return std::nullopt;
      if (slice.insert(user).second)
        for (Value *r : user->results())
          work.push_back(r);
    }
  }
  return slice;
}

bool removeDeadCarried(Operation *loop) {
  bool changed = false;
  Block &body = loop->body();
  Operation *yield = body.terminator();
  if (!yield || yield->numOperands() != loop->numResults())
    return false;
  for (unsigned i = loop->numResults(); i-- > 0;) {
    if (loop->result(i)->hasUses())
      continue;
    std::optional<std::set<Operation *>> slice = deadCarriedSlice(body, i);
    if (!slice)
      continue;
    yield->eraseOperand(i);
    // Users before definitions: erase the slice back to front.
    std::vector<Operation *> ops = body.opsVector();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      if (slice->count(*it))
        (*it)->erase();
    body.eraseArgument(1 + i);
    loop->eraseResult(i);
    loop->eraseOperand(3 + i);
    changed = true;
  }
  return changed;
}

bool processBlock(Block &block) {
  bool changed = false;
  std::vector<Operation *> ops = block.opsVector();
  // Back to front: users die before the ops they use, so chains go in one sweep.
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation *op = *it;
    if (isTriviallyDead(op)) {
      op->erase();
      changed = true;
      continue;
    }
    if (op->is(Opcode::For))
      changed |= removeDeadCarried(op);
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (unsigned b = 0; b < op->region(r).numBlocks(); ++b)
        changed |= processBlock(op->region(r).block(b));
    // Emptied regions can make the op itself dead now.
    if (isTriviallyDead(op)) {
      op->erase();
      changed = true;
    }
  }
  return changed;
}

class DCEPass : public Pass {
public:
  DCEPass() : Pass(PassId::DCE) {}

  bool run(Module &module, DiagnosticEngine &) override {
    bool changed = false;
    for (auto &fn : module.functions())
      // A bounded fixpoint: each round only removes ops, so it ends, and
      // one more round than needed is cheap.
      for (int round = 0; round < 16 && processBlock(fn->body()); ++round)
        changed = true;
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

} // namespace tk
