// --remove-layout-conversions: deletes convert_layout ops that --coalesce
// (or later passes) left behind when they can go without adding others.
//
// Each rewrite removes at least one convert_layout and adds none, so the
// pass ends (it repeats until nothing changes):
//
//  1. a conversion to the layout the value already has is the value;
//  2. convert(convert(x)) converts x once (or is x, when back at x's layout);
//  3. a conversion of a constant, splat or make_range is that op again,
//     created in the wanted layout (the copy costs no data movement);
//  4. a conversion of an elementwise result used only by that conversion,
//     whose operands are all free in the target layout (converted from it,
//     or rematerialisable as in 3), becomes the elementwise op in the target
//     layout: the conversion is hoisted above the op and cancels.
//
//   %a = convert_layout %x : L1 -> L2
//   %b = exp %a : L2
//   %c = convert_layout %b : L2 -> L1          ==>   %b' = exp %x : L1
//
// Only ops of the same block are combined in 4, so nothing moves into or out
// of a loop. Ops left without users are erased.
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "lowering/Pass.h"

#include <algorithm>
#include <vector>

namespace tk {
namespace {

const LayoutAttr *layoutOfValue(Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t ? t->layout() : nullptr;
}

bool isRematerializable(const Operation *op) {
  return op && (op->is(Opcode::Constant) || op->is(Opcode::Splat) || op->is(Opcode::MakeRange));
}

class Remover {
public:
  explicit Remover(IRContext &ctx) : ctx_(ctx) {}

  bool run(Function &fn) {
    bool changed = false;
    // Every successful rewrite removes a convert_layout, so this is bounded
    // by their number.
    for (bool again = true; again;) {
      again = false;
      std::vector<Operation *> converts;
      fn.walk([&](Operation *op) {
        if (op->is(Opcode::ConvertLayout))
          converts.push_back(op);
      });
      for (Operation *op : converts)
        if (rewrite(*op)) {
          again = changed = true;
          break; // the list may hold erased ops now
        }
    }
    return changed;
  }

private:
  Type *retype(Value *v, const LayoutAttr *l) {
    return ctx_.tensor(v->type()->shape(), v->type()->elementType(), l);
  }

  void eraseIfDead(Operation *op) {
    if (!op)
      return;
    for (Value *r : op->results())
      if (r->hasUses())
        return;
    if (op->isSideEffectFree())
      op->erase();
  }

  // The value of `v` in layout `l` without a conversion, created before
  // `before` when it needs an op; null when that would need a conversion.
  Value *freeIn(Value *v, const LayoutAttr *l, Operation *before) {
    if (layoutOfValue(v) == l)
      return v;
    Operation *def = v->definingOp();
    if (def && def->is(Opcode::ConvertLayout) && layoutOfValue(def->operand(0)) == l)
      return def->operand(0);
    if (isRematerializable(def)) {
      Builder b(ctx_);
      b.setInsertionPoint(before);
      return b.create(def->opcode(), def->loc(), def->operands(), {retype(v, l)}, def->attrs())
          ->result();
    }
    return nullptr;
  }

  bool rewrite(Operation &cvt) {
    Value *in = cvt.operand(0), *out = cvt.result();
    const LayoutAttr *target = layoutOfValue(out);
    Operation *def = in->definingOp();
    // 1 and 2.
    Value *direct = nullptr;
    if (layoutOfValue(in) == target)
      direct = in;
    else if (def && def->is(Opcode::ConvertLayout) && layoutOfValue(def->operand(0)) == target)
      direct = def->operand(0);
    if (direct) {
      out->replaceAllUsesWith(direct);
      cvt.erase();
      eraseIfDead(def);
      return true;
    }
    if (def && def->is(Opcode::ConvertLayout)) {
      cvt.setOperand(0, def->operand(0));
      eraseIfDead(def);
      return true;
    }
    // 3.
    if (isRematerializable(def)) {
      Value *copy = freeIn(in, target, &cvt);
      out->replaceAllUsesWith(copy);
      cvt.erase();
      eraseIfDead(def);
      return true;
    }
    // 4.
    if (!def || !def->hasTrait(OpTrait::Elementwise) || def->numResults() != 1 ||
        def->numRegions() != 0 || def->parentBlock() != cvt.parentBlock() ||
        in->users().size() != 1 || !def->isSideEffectFree())
      return false;
    for (Value *v : def->operands()) {
      if (!v->type()->isTensor())
        return false;
      Operation *d = v->definingOp();
      bool free = layoutOfValue(v) == target || isRematerializable(d) ||
                  (d && d->is(Opcode::ConvertLayout) && layoutOfValue(d->operand(0)) == target);
      if (!free)
        return false;
    }
    std::vector<Value *> operands;
    std::vector<Operation *> oldDefs;
    for (Value *v : def->operands()) {
      operands.push_back(freeIn(v, target, &cvt));
      if (Operation *d = v->definingOp();
          d && std::find(oldDefs.begin(), oldDefs.end(), d) == oldDefs.end())
        oldDefs.push_back(d);
    }
    Builder b(ctx_);
    b.setInsertionPoint(&cvt);
    Operation *moved =
        b.create(def->opcode(), def->loc(), operands, {retype(in, target)}, def->attrs());
    out->replaceAllUsesWith(moved->result());
    cvt.erase();
    def->erase();
    for (Operation *d : oldDefs)
      eraseIfDead(d);
    return true;
  }

  IRContext &ctx_;
};

class RemoveLayoutConversionsPass : public Pass {
public:
  RemoveLayoutConversionsPass() : Pass(PassId::RemoveLayoutConversions) {}

  bool run(Module &module, DiagnosticEngine &) override {
    bool changed = false;
    for (auto &fn : module.functions())
      changed |= Remover(module.context()).run(*fn);
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRemoveLayoutConversionsPass() {
  return std::make_unique<RemoveLayoutConversionsPass>();
}

} // namespace tk
