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
//  5. a conversion of a value that a few cheap ops compute (elementwise
//     ops, broadcast, expand_dims over the leaves of 3 or values already in
//     the target layout; at most kRecomputeBudget ops) is those ops again,
//     cloned in the target layout: an index or mask tile that both a load
//     (in its layout) and a store (in another) use is computed twice in
//     registers instead of going through shared memory once.
//
//   %m = and %r, %c : L1         (from splat/make_range/expand_dims/broadcast)
//   %k = convert_layout %m : L1 -> L2    ==>   %m' = and %r', %c' : L2
//
// Only ops of the same block are combined in 4, and 5 clones an op of an
// enclosing block next to the op it copies, so nothing moves into or out of
// a loop. Ops left without users are erased.
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "lowering/LayoutRemat.h"
#include "lowering/Pass.h"

#include <algorithm>
#include <map>
#include <vector>

namespace tk {
namespace {

// Rule 5 clones at most this many ops per conversion: an index or mask
// chain (splat, make_range, add, expand_dims, cmp, broadcast, and) is 6-10.
constexpr int kRecomputeBudget = 16;

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

  // Whether `v` costs no conversion in layout `l`: already there, or made
  // again there as in rule 3.
  bool isFree(Value *v, const LayoutAttr *l) {
    return alreadyIn(v, l) || isRematerializable(v->definingOp());
  }

  // The value of `v` in layout `l` without a conversion, created before
  // `before` when it needs an op; null when that would need a conversion.
  Value *freeIn(Value *v, const LayoutAttr *l, Operation *before) {
    if (Value *there = alreadyIn(v, l))
      return there;
    Operation *def = v->definingOp();
    if (isRematerializable(def)) {
      Builder b(ctx_);
      b.setInsertionPoint(before);
      return b.create(def->opcode(), def->loc(), def->operands(), {retype(v, l)}, def->attrs())
          ->result();
    }
    return nullptr;
  }

  // `v` in layout `l` for `cvt`, cloning as recomputable() found possible,
  // each value once (`done`). A clone of an op in `cvt`'s block goes right
  // before `cvt` (computed where it is needed, live no longer than that);
  // a clone of an op from an enclosing block goes right after the op it
  // copies, so a value from before a loop is not recomputed in every
  // iteration. Either way its operands (clones made first, or values
  // defined before the op) are defined before it.
  Value *recompute(Value *v, const LayoutAttr *l, Operation &cvt,
                   std::map<std::pair<Value *, const LayoutAttr *>, Value *> &done) {
    if (Value *there = alreadyIn(v, l))
      return there;
    Operation *def = v->definingOp();
    auto key = std::make_pair(v, l);
    if (auto it = done.find(key); it != done.end())
      return it->second;
    if (def->is(Opcode::ConvertLayout))
      return done[key] = recompute(def->operand(0), l, cvt, done);
    std::vector<Value *> operands = def->operands();
    if (!isRematerializable(def)) {
      const LayoutAttr *want = operandLayoutFor(ctx_, *def, l);
      for (Value *&operand : operands)
        operand = recompute(operand, want, cvt, done);
    }
    Builder b(ctx_);
    if (def->parentBlock() == cvt.parentBlock())
      b.setInsertionPoint(&cvt);
    else
      b.setInsertionPointAfter(def);
    Value *copy =
        b.create(def->opcode(), def->loc(), operands, {retype(v, l)}, def->attrs())->result();
    done[key] = copy;
    return copy;
  }

  bool rewrite(Operation &cvt) {
    Value *in = cvt.operand(0), *out = cvt.result();
    const LayoutAttr *target = valueLayout(out);
    Operation *def = in->definingOp();
    // 1 and 2.
    if (Value *direct = alreadyIn(in, target)) {
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
      return recomputeInTarget(cvt);
    for (Value *v : def->operands()) {
      if (!v->type()->isTensor())
        return false;
      if (!isFree(v, target))
        return recomputeInTarget(cvt);
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

  // 5.
  bool recomputeInTarget(Operation &cvt) {
    Value *in = cvt.operand(0), *out = cvt.result();
    const LayoutAttr *target = valueLayout(out);
    Operation *def = in->definingOp();
    int budget = kRecomputeBudget;
    if (!target || !isRecomputable(def) || !recomputable(ctx_, in, target, budget))
      return false;
    std::map<std::pair<Value *, const LayoutAttr *>, Value *> done;
    Value *copy = recompute(in, target, cvt, done);
    out->replaceAllUsesWith(copy);
    cvt.erase();
    eraseIfDead(def);
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
