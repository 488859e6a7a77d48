// --propagate-dot-layouts: keeps the values computed from a dot's accumulator
// in the accumulator's own layout, so a chain dot -> elementwise/reduction ->
// dot (attention's online softmax) stays in registers. Runs after
// --accelerate-dot (which puts the dots' results in mma layouts and converts
// them back to the layouts their users had).
//
// 1. Forward: from every value in an mma layout, each user that can compute
//    in the layout of its operand takes it: elementwise ops and broadcast
//    the same layout, a reduction along axis a its slice(a, L) (a row max
//    or sum of the accumulator: within a thread, then the shuffles of the
//    lanes of a quad; no shared memory unless warps split the axis),
//    expand_dims of slice(a, P) the parent P (a row vector broadcast back),
//    a convert_layout away from it becomes a no-op, and a value a loop
//    yields makes that slot of the loop (argument and result) carry it. The
//    first layout to reach a value wins.
// 2. Every op whose operands no longer fit its result gets them converted:
//    elementwise operands, reduction operands, a loop's init and yield, the
//    accumulator of a dot. A store of a value now in the new layout follows
//    it when its pointers and mask can be recomputed there (an index tile);
//    other users (loads, scans, reshapes, ...) get the value converted back.
//    A conversion goes right after the value's definition, so a value from
//    before a loop is converted once; --remove-layout-conversions later
//    recomputes the cheap ones (splats, index chains) in place.
// 3. A dot whose A operand (16-bit) is now an accumulator of the same rows
//    (the previous dot of a chain, cast to fp16) reads it as the mma A
//    operand, dot_operand<op_idx = 0, parent = its mma, k_width = 2>: a
//    renaming of registers (analysis/DataMovement.h, convertIsLocal), and the
//    dot lowers with A from registers (mma.sync's fragments; wgmma's A in
//    registers). A loop-invariant A (Q, loaded before the loop) is converted
//    to that layout once before the loop. Where a chained A cannot be had in
//    registers the dot stages it through shared memory as before and says
//    why in `operand_reason` (TK_DUMP_IR=propagate-dot-layouts).
//
//   %s = dot %q, %k, %z : mma1                 %s = dot %q', %k, %z : mma1
//   %c = convert_layout %s : blocked           %m = reduce %s {max} : slice<1, mma1>
//   %m = reduce %c {max} : slice<1, blocked>   %p = exp2 (sub %s, bcast(%m)) : mma1
//   %p = exp2 (sub %c, bcast(%m)) : blocked ->  %h = fptrunc %p : mma1
//   %h = fptrunc %p : blocked                  %a = convert_layout %h : dot_operand<0, mma2>
//   %o = dot %h, %v, %acc : mma2               %o = dot %a, %v, %acc : mma2
#include "analysis/DataMovement.h"
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "lowering/LayoutRemat.h"
#include "lowering/Pass.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <set>

namespace tk {
namespace {

// Index and mask chains a following store recomputes at most this long.
constexpr int kStoreRecomputeBudget = 24;

bool isDistributed(const LayoutAttr *l) { return l && !isa<SharedLayout>(l); }

class Propagator {
public:
  Propagator(IRContext &ctx, Function &fn) : ctx_(ctx), fn_(fn) {}

  bool run() {
    forward();
    if (!retype_.empty())
      rewrite();
    operands();
    return changed_;
  }

private:
  // --- 1. forward

  const LayoutAttr *current(Value *v) const {
    auto it = retype_.find(v);
    return it != retype_.end() ? it->second : valueLayout(v);
  }

  // Whether `v` may take layout `l` (and now has it): a tensor not yet given
  // another one by this pass and not itself in an mma layout.
  bool accepts(Value *v, const LayoutAttr *l) {
    if (!v->type()->isTensor() || layoutRank(l) != v->type()->rank())
      return false;
    if (current(v) == l)
      return true;
    return !retype_.count(v) && !isMmaDerived(valueLayout(v)) && isDistributed(valueLayout(v));
  }

  void propose(Value *v, const LayoutAttr *l) {
    if (!accepts(v, l) || current(v) == l)
      return;
    retype_[v] = l;
    queue_.push_back(v);
  }

  void forward() {
    auto seed = [&](Value *v) {
      if (isMmaDerived(valueLayout(v)))
        queue_.push_back(v);
    };
    fn_.walk([&](Operation *op) {
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (unsigned b = 0; b < op->region(r).numBlocks(); ++b)
          for (Value *a : op->region(r).block(b).arguments())
            seed(a);
      for (Value *v : op->results())
        seed(v);
    });
    std::set<std::pair<Value *, Operation *>> seen;
    while (!queue_.empty()) {
      Value *v = queue_.front();
      queue_.pop_front();
      const LayoutAttr *l = current(v);
      for (Operation *user : v->users())
        if (seen.insert({v, user}).second)
          visit(*user, v, l);
    }
  }

  void visit(Operation &u, Value *v, const LayoutAttr *l) {
    switch (u.opcode()) {
    case Opcode::ConvertLayout: {
      const LayoutAttr *to = valueLayout(u.result());
      // Conversions to a dot operand or a shared buffer are wanted there.
      if (isa<BlockedLayout>(to) || isa<SliceLayout>(to))
        propose(u.result(), l);
      return;
    }
    case Opcode::Broadcast:
      return propose(u.result(), l);
    case Opcode::ExpandDims: {
      auto *slice = dyn_cast<SliceLayout>(l);
      if (slice && slice->dim() == static_cast<unsigned>(*u.attrs().getInt("axis")))
        propose(u.result(), slice->parent());
      return;
    }
    case Opcode::Reduce: {
      unsigned axis = static_cast<unsigned>(*u.attrs().getInt("axis"));
      if (layoutRank(l) < 2)
        return;
      for (Value *r : u.results())
        propose(r, SliceLayout::get(ctx_, axis, l));
      return;
    }
    case Opcode::Yield: {
      Operation *parent = u.parentBlock()->parentOp();
      for (unsigned i = 0; i < u.numOperands(); ++i) {
        if (u.operand(i) != v || !parent)
          continue;
        if (parent->is(Opcode::For)) {
          // Argument and result together, or neither.
          Value *arg = parent->body().argument(i + 1), *res = parent->result(i);
          if (accepts(arg, l) && accepts(res, l)) {
            propose(arg, l);
            propose(res, l);
          }
        } else if (parent->is(Opcode::If)) {
          propose(parent->result(i), l);
        }
      }
      return;
    }
    default:
      if (u.hasTrait(OpTrait::Elementwise) && u.numResults() == 1)
        propose(u.result(), l);
      return;
    }
  }

  // --- the new types

  void rewrite() {
    for (auto &[v, l] : retype_) {
      original_[v] = valueLayout(v);
      v->setType(ctx_.tensor(v->type()->shape(), v->type()->elementType(), l));
    }
    changed_ = true;
    // Fix the operands of every op, enclosing ops first.
    std::vector<Operation *> ops;
    fn_.walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops)
      fixOperands(*op);
    // Conversions left between equal layouts.
    for (Operation *op : ops)
      if (op->is(Opcode::ConvertLayout) &&
          valueLayout(op->operand(0)) == valueLayout(op->result())) {
        op->result()->replaceAllUsesWith(op->operand(0));
        op->erase();
      }
  }

  const LayoutAttr *originalLayout(Value *v) const {
    auto it = original_.find(v);
    return it != original_.end() ? it->second : valueLayout(v);
  }
  bool retyped(Value *v) const { return original_.count(v) != 0; }

  // Makes operand `i` of `op` have layout `l`: a conversion right after the
  // operand's definition (at the start of its block for a block argument),
  // one per (value, layout).
  void require(Operation &op, unsigned i, const LayoutAttr *l) {
    Value *v = op.operand(i);
    if (!l || !v->type()->isTensor() || valueLayout(v) == l)
      return;
    op.setOperand(i, converted(v, l));
  }

  Value *converted(Value *v, const LayoutAttr *l) {
    auto key = std::make_pair(v, l);
    if (auto it = converts_.find(key); it != converts_.end())
      return it->second;
    Builder b(ctx_);
    if (Operation *def = v->definingOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(v->ownerBlock());
    SourceLoc loc = v->definingOp() ? v->definingOp()->loc() : fn_.loc();
    Value *c = b.create(Opcode::ConvertLayout, loc, {v},
                        {ctx_.tensor(v->type()->shape(), v->type()->elementType(), l)})
                   ->result();
    converts_[key] = c;
    changed_ = true;
    return c;
  }

  void fixOperands(Operation &op) {
    bool resultRetyped = false;
    for (Value *r : op.results())
      resultRetyped |= retyped(r);
    switch (op.opcode()) {
    case Opcode::ConvertLayout:
      return;
    case Opcode::For: {
      Block &body = op.body();
      for (unsigned i = 0; i < op.numResults(); ++i) {
        const LayoutAttr *l = valueLayout(body.argument(i + 1));
        require(op, 3 + i, l);
        require(*body.terminator(), i, l);
      }
      return;
    }
    case Opcode::If:
      for (unsigned i = 0; i < op.numResults(); ++i)
        for (unsigned b = 0; b < 2; ++b)
          require(*op.body(b).terminator(), i, valueLayout(op.result(i)));
      return;
    case Opcode::Yield:
    case Opcode::Condition:
      return; // their parents' business
    case Opcode::Dot:
      return require(op, 2, valueLayout(op.result()));
    case Opcode::Store:
      if (retyped(op.operand(1)) && follows(op))
        return;
      break;
    default:
      break;
    }
    if (resultRetyped) {
      const LayoutAttr *l = valueLayout(op.result());
      if (op.is(Opcode::Reduce))
        l = cast<SliceLayout>(l)->parent();
      else if (op.is(Opcode::ExpandDims))
        l = SliceLayout::get(ctx_, static_cast<unsigned>(*op.attrs().getInt("axis")), l);
      for (unsigned i = 0; i < op.numOperands(); ++i)
        require(op, i, l);
      return;
    }
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (retyped(op.operand(i)))
        require(op, i, originalLayout(op.operand(i)));
  }

  // A store of a value now in a new layout: stores it from there when its
  // pointers and mask can be recomputed in that layout (converted here,
  // recomputed by --remove-layout-conversions), as the dot epilogue does.
  // Not when the store's own layout gives wider stores of a dot result no
  // loop carries (storesFromAccumulator, LayoutRemat.h): the value is then
  // converted back to it.
  bool follows(Operation &store) {
    const LayoutAttr *l = valueLayout(store.operand(1));
    if (!storesFromAccumulator(store.operand(1), l, originalLayout(store.operand(1))))
      return false;
    int budget = kStoreRecomputeBudget;
    for (unsigned i = 0; i < store.numOperands(); ++i)
      if (i != 1 && !recomputable(ctx_, store.operand(i), l, budget))
        return false;
    for (unsigned i = 0; i < store.numOperands(); ++i)
      require(store, i, l);
    return true;
  }

  // --- 3. A operands in registers

  void operands() {
    std::vector<Operation *> dots;
    fn_.walk([&](Operation *op) {
      if (op->is(Opcode::Dot) && mmaLayoutOf(op->result()->type()))
        dots.push_back(op);
    });
    for (Operation *dot : dots)
      registerOperand(*dot);
  }

  // The accumulator or loop-invariant A of `dot` as dot_operand (op 0), or
  // the reason it stays staged.
  void registerOperand(Operation &dot) {
    Value *a = dot.operand(0);
    const MmaLayout *mma = mmaLayoutOf(dot.result()->type());
    const LayoutAttr *from = valueLayout(a);
    DType dt = a->type()->dtype();
    if (!from || isa<DotOperandLayout>(from) || (dt != DType::F16 && dt != DType::BF16))
      return;
    Operation *def = a->definingOp();
    if (def && def->is(Opcode::RingView))
      return;
    bool chained = isMmaDerived(from);
    bool invariant = !chained && isLoopInvariant(a, dot);
    if (!chained && !invariant)
      return;
    const DotOperandLayout *want = DotOperandLayout::get(ctx_, 0, mma, 2);
    if (chained && !sameThreadElements(a, want)) {
      dot.attrs().set("operand_reason", chainReason(a, mma));
      changed_ = true;
      return;
    }
    require(dot, 0, want);
  }

  // Whether `v` is defined outside every loop that holds `user`'s block up to
  // the innermost `for` around it (and there is one).
  static bool isLoopInvariant(Value *v, Operation &user) {
    Operation *loop = user.parentOp();
    while (loop && !loop->is(Opcode::For))
      loop = loop->parentOp();
    if (!loop)
      return false;
    Operation *def = v->definingOp();
    if (def)
      return !def->isInside(loop);
    Operation *owner = v->ownerBlock() ? v->ownerBlock()->parentOp() : nullptr;
    return owner != loop && !(owner && owner->isInside(loop));
  }

  // Whether every thread holds the elements `v` would have in `l` already.
  static bool sameThreadElements(Value *v, const LayoutAttr *l) {
    return layoutsHoldSameElements(valueLayout(v), l, v->type()->shape());
  }

  std::string chainReason(Value *a, const MmaLayout *mma) {
    const LayoutAttr *from = valueLayout(a);
    const LayoutAttr *base = from;
    while (auto *s = dyn_cast<SliceLayout>(base))
      base = s->parent();
    auto *src = cast<MmaLayout>(base);
    if (src->warps()[1] != 1)
      return fmt::format("the A operand comes from an accumulator whose warps [{}, {}] split its "
                         "columns; the operand registers need whole rows per warp (warps [W, 1])",
                         src->warps()[0], src->warps()[1]);
    if (src->warps()[0] != mma->warps()[0])
      return fmt::format("the A operand's rows are spread over {} warps, this dot's over {}",
                         src->warps()[0], mma->warps()[0]);
    return fmt::format("the A operand's layout {} does not give each thread its {} registers",
                       from->str(), DotOperandLayout::get(ctx_, 0, mma, 2)->str());
  }

  IRContext &ctx_;
  Function &fn_;
  std::deque<Value *> queue_;
  // Keyed by pointers, looked up only (iteration over retype_ only sets
  // types, which does not depend on its order).
  std::map<Value *, const LayoutAttr *> retype_, original_;
  std::map<std::pair<Value *, const LayoutAttr *>, Value *> converts_;
  bool changed_ = false;
};

class PropagateDotLayoutsPass : public Pass {
public:
  PropagateDotLayoutsPass() : Pass(PassId::PropagateDotLayouts) {}

  bool run(Module &module, DiagnosticEngine &) override {
    bool changed = false;
    for (auto &fn : module.functions())
      changed |= Propagator(module.context(), *fn).run();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createPropagateDotLayoutsPass() {
  return std::make_unique<PropagateDotLayoutsPass>();
}

} // namespace tk
