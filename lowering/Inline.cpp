// --inline: replaces every `call` of a function of the same module by a copy
// of the callee's body, then erases the callees that nothing calls any more.
//
//   func @twice(%arg0: i32) -> i32 {          func @k(%arg0: i32) {
//     %0 = add %arg0, %arg0 : i32               %0 = add %arg0, %arg0 : i32
//     return %0                        ==>      store ..., %0
//   }                                           return
//   func @k(%arg0: i32) {                     }
//     %0 = call %arg0 {callee = "twice"} : i32
//     store ..., %0
//     return
//   }
//
// Callees are inlined into first (a post-order walk of the call graph), so a
// body copied into its caller has no calls left and each call is expanded
// once. A function is a kernel, and stays, when no call named it before the
// pass ran; a function that was called and is not called any more goes.
// Recursion cannot be inlined: it is reported at the call that closes the
// cycle and that call stays. A chain of helpers each calling the next twice
// doubles at every level, so a file of 30 small functions could make a
// billion ops: a function may grow to the compile's budget of operations
// (IRLimits::maxOps, TK_MAX_OPS) and no further; the call that would take
// it past is an error, and the pass stops there.
#include "ir/IRContext.h"
#include "lowering/Pass.h"

#include <fmt/format.h>
#include <map>
#include <set>

namespace tk {
namespace {

using ValueMap = std::map<Value *, Value *>;

Value *lookup(const ValueMap &map, Value *v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

// A deep copy of `op` with its operands renamed through `map`; the copy's
// results and block arguments are added to `map`.
std::unique_ptr<Operation> cloneOp(Operation &op, ValueMap &map) {
  std::vector<Value *> operands;
  for (Value *v : op.operands())
    operands.push_back(lookup(map, v));
  std::vector<Type *> resultTypes;
  for (Value *r : op.results())
    resultTypes.push_back(r->type());
  std::unique_ptr<Operation> copy =
      Operation::create(op.opcode(), op.loc(), operands, resultTypes, op.attrs(), op.numRegions());
  for (unsigned i = 0; i < op.numResults(); ++i)
    map[op.result(i)] = copy->result(i);
  for (unsigned r = 0; r < op.numRegions(); ++r)
    for (unsigned b = 0; b < op.region(r).numBlocks(); ++b) {
      Block &from = op.region(r).block(b);
      Block *to = copy->region(r).addBlock();
      for (Value *arg : from.arguments())
        map[arg] = to->addArgument(arg->type());
      for (Operation &inner : from)
        to->insert(nullptr, cloneOp(inner, map));
    }
  return copy;
}

std::vector<Operation *> callsIn(Function &fn) {
  std::vector<Operation *> calls;
  fn.walk([&](Operation *op) {
    if (op->is(Opcode::Call))
      calls.push_back(op);
  });
  return calls;
}

std::string calleeName(Operation *call) { return call->attrs().getString("callee").value_or(""); }

int64_t numOps(Function &fn) {
  int64_t n = 0;
  fn.walk([&](Operation *) { ++n; });
  return n;
}

class Inliner {
public:
  Inliner(Module &module, DiagnosticEngine &diag) : module_(module), diag_(diag) {}

  bool run() {
    std::set<std::string> calledBefore;
    for (auto &fn : module_.functions())
      for (Operation *call : callsIn(*fn))
        calledBefore.insert(calleeName(call));

    for (auto &fn : module_.functions())
      inlineInto(*fn);

    std::set<std::string> calledAfter;
    for (auto &fn : module_.functions())
      for (Operation *call : callsIn(*fn))
        calledAfter.insert(calleeName(call));
    std::vector<Function *> dead;
    for (auto &fn : module_.functions())
      if (calledBefore.count(fn->name()) && !calledAfter.count(fn->name()))
        dead.push_back(fn.get());
    for (Function *fn : dead)
      module_.eraseFunction(fn);
    return changed_ || !dead.empty();
  }

private:
  enum class State { Unvisited, Visiting, Done };

  // The depth of this recursion is the length of a call chain, bounded by
  // the number of functions (a cycle stops at a Visiting function).
  void inlineInto(Function &fn) {
    State &state = states_[&fn];
    if (state != State::Unvisited || overBudget_)
      return;
    state = State::Visiting;
    const int64_t maxOps = module_.context().limits().maxOps;
    int64_t size = numOps(fn);
    for (Operation *call : callsIn(fn)) {
      Function *callee = module_.lookup(calleeName(call));
      if (!callee)
        continue; // the verifier reports unknown callees
      if (states_[callee] == State::Visiting) {
        diag_.error(call->loc(), fmt::format("cannot inline the recursive call of '@{}' from '@{}'",
                                             callee->name(), fn.name()));
        continue;
      }
      inlineInto(*callee);
      if (overBudget_)
        break;
      // The call goes, the callee's body less its return comes.
      auto [known, fresh] = sizes_.try_emplace(callee, 0);
      if (fresh)
        known->second = numOps(*callee);
      int64_t grown = size + known->second - 2;
      if (maxOps > 0 && grown > maxOps) {
        diag_.error(call->loc(),
                    fmt::format("inlining '@{}' here would make '@{}' {} operations, over the "
                                "compile's budget of {} (TK_MAX_OPS); call helpers in fewer "
                                "places, or in a loop",
                                callee->name(), fn.name(), grown, maxOps));
        overBudget_ = true; // one error: the callers would only repeat it
        break;
      }
      if (inlineCall(call, *callee))
        size = grown;
    }
    states_[&fn] = State::Done;
  }

  // False for a call left alone.
  bool inlineCall(Operation *call, Function &callee) {
    Operation *ret = callee.body().terminator();
    // Mismatched calls are the verifier's to report; leave them alone.
    if (!ret || !ret->is(Opcode::Return) || ret->numOperands() != call->numResults() ||
        callee.numArguments() != call->numOperands())
      return false;
    ValueMap map;
    for (unsigned i = 0; i < callee.numArguments(); ++i)
      map[callee.argument(i)] = call->operand(i);
    Block *block = call->parentBlock();
    for (Operation *op : callee.body().opsVector())
      if (op != ret)
        block->insert(call, cloneOp(*op, map));
    for (unsigned i = 0; i < call->numResults(); ++i)
      call->result(i)->replaceAllUsesWith(lookup(map, ret->operand(i)));
    call->erase();
    changed_ = true;
    return true;
  }

  Module &module_;
  DiagnosticEngine &diag_;
  // Looked up only, never iterated.
  std::map<Function *, State> states_;
  std::map<Function *, int64_t> sizes_; // of callees, once inlined into
  bool changed_ = false;
  bool overBudget_ = false;
};

class InlinePass : public Pass {
public:
  InlinePass() : Pass(PassId::Inline) {}
  bool run(Module &module, DiagnosticEngine &diag) override { return Inliner(module, diag).run(); }
};

} // namespace

std::unique_ptr<Pass> createInlinePass() { return std::make_unique<InlinePass>(); }

} // namespace tk
