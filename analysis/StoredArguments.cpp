#include "analysis/StoredArguments.h"

#include <map>
#include <set>

namespace tk {
namespace {

bool holdsPointers(const Value *v) { return v->type()->elementType()->isPointer(); }

bool writesThroughOperand0(Opcode op) {
  return op == Opcode::Store || op == Opcode::AtomicRMW || op == Opcode::AtomicCAS;
}

// The arguments each pointer value may derive from, to a fixed point.
class PointerSources {
public:
  PointerSources(Module &module, Function &fn,
                 std::map<const Function *, std::vector<Operation *>> &summaries)
      : module_(module), fn_(fn), summaries_(summaries) {
    for (unsigned i = 0; i < fn.numArguments(); ++i)
      if (holdsPointers(fn.argument(i)))
        sources_[fn.argument(i)].insert(i);
    // Each round only adds arguments to finite sets: it ends.
    do {
      changed_ = false;
      fn.walk([&](Operation *op) { transfer(*op); });
    } while (changed_);
  }

  std::vector<Operation *> stored() {
    std::vector<Operation *> first(fn_.numArguments(), nullptr);
    auto mark = [&](const Value *ptr, Operation *op) {
      for (unsigned a : of(ptr))
        if (!first[a])
          first[a] = op;
    };
    fn_.walk([&](Operation *op) {
      if (writesThroughOperand0(op->opcode())) {
        mark(op->operand(0), op);
      } else if (op->opcode() == Opcode::Call) {
        Function *callee = calleeOf(*op);
        if (!callee)
          return;
        const std::vector<Operation *> &inner = summaryOf(*callee);
        for (unsigned j = 0; j < op->numOperands() && j < inner.size(); ++j)
          if (inner[j])
            mark(op->operand(j), op);
      }
    });
    return first;
  }

private:
  const std::set<unsigned> &of(const Value *v) {
    static const std::set<unsigned> none;
    auto it = sources_.find(v);
    return it == sources_.end() ? none : it->second;
  }

  void add(const Value *to, const Value *from) {
    if (!holdsPointers(to))
      return;
    auto it = sources_.find(from);
    if (it == sources_.end())
      return;
    std::set<unsigned> &dst = sources_[to];
    for (unsigned a : it->second)
      changed_ |= dst.insert(a).second;
  }

  Function *calleeOf(Operation &call) {
    std::optional<std::string> name = call.attrs().getString("callee");
    return name ? module_.lookup(*name) : nullptr;
  }

  const std::vector<Operation *> &summaryOf(Function &callee) {
    auto it = summaries_.find(&callee);
    if (it != summaries_.end())
      return it->second;
    // Recursion: the callee in progress counts as storing through nothing
    // (the interpreter's dynamic check covers what this misses).
    summaries_[&callee] = std::vector<Operation *>(callee.numArguments(), nullptr);
    std::vector<Operation *> s = PointerSources(module_, callee, summaries_).stored();
    return summaries_[&callee] = std::move(s);
  }

  void transfer(Operation &op) {
    switch (op.opcode()) {
    case Opcode::For: {
      // for %lo, %hi, %step, inits -> body(iv, carried...) -> yield -> results
      Block &body = op.body();
      Operation *yield = body.terminator();
      for (unsigned j = 0; j + 3 < op.numOperands(); ++j) {
        add(body.argument(j + 1), op.operand(j + 3));
        add(op.result(j), op.operand(j + 3));
        if (yield && j < yield->numOperands()) {
          add(body.argument(j + 1), yield->operand(j));
          add(op.result(j), yield->operand(j));
        }
      }
      return;
    }
    case Opcode::While: {
      // operands -> before(args) -> condition %c, vals -> after(args), results;
      // after's yield -> before(args)
      Block &before = op.body(0), &after = op.body(1);
      Operation *cond = before.terminator(), *yield = after.terminator();
      for (unsigned j = 0; j < op.numOperands() && j < before.numArguments(); ++j)
        add(before.argument(j), op.operand(j));
      for (unsigned j = 0; yield && j < yield->numOperands() && j < before.numArguments(); ++j)
        add(before.argument(j), yield->operand(j));
      for (unsigned j = 1; cond && j < cond->numOperands(); ++j) {
        if (j - 1 < after.numArguments())
          add(after.argument(j - 1), cond->operand(j));
        if (j - 1 < op.numResults())
          add(op.result(j - 1), cond->operand(j));
      }
      return;
    }
    case Opcode::If:
      for (unsigned r = 0; r < op.numRegions(); ++r)
        if (Operation *yield = op.body(r).terminator())
          for (unsigned j = 0; j < yield->numOperands() && j < op.numResults(); ++j)
            add(op.result(j), yield->operand(j));
      return;
    case Opcode::Load:
    case Opcode::IntToPtr:
    case Opcode::AtomicRMW:
    case Opcode::AtomicCAS:
      return; // pointers read from memory or made from integers: unknown
    default:
      // Pointers made from pointers (addptr, splat, select, a helper's
      // results from its arguments, ...): from all of their operands.
      for (Value *r : op.results())
        for (Value *o : op.operands())
          add(r, o);
      return;
    }
  }

  Module &module_;
  Function &fn_;
  std::map<const Function *, std::vector<Operation *>> &summaries_;
  std::map<const Value *, std::set<unsigned>> sources_;
  bool changed_ = false;
};

} // namespace

std::vector<Operation *> storedArguments(Module &module, Function &fn) {
  std::map<const Function *, std::vector<Operation *>> summaries;
  return PointerSources(module, fn, summaries).stored();
}

} // namespace tk
