// Values in another layout without data movement (see LayoutRemat.h).
#include "lowering/LayoutRemat.h"

#include <algorithm>

namespace tk {

const LayoutAttr *valueLayout(const Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t ? t->layout() : nullptr;
}

bool isRematerializable(const Operation *op) {
  return op && (op->is(Opcode::Constant) || op->is(Opcode::Splat) || op->is(Opcode::MakeRange));
}

bool isRecomputable(const Operation *op) {
  if (!op || op->numResults() != 1 || op->numRegions() != 0 || !op->isSideEffectFree())
    return false;
  if (op->is(Opcode::Broadcast) || op->is(Opcode::ExpandDims))
    return true;
  if (!op->hasTrait(OpTrait::Elementwise))
    return false;
  return std::all_of(op->operands().begin(), op->operands().end(),
                     [](Value *v) { return v->type()->isTensor(); });
}

const LayoutAttr *operandLayoutFor(IRContext &ctx, const Operation &op, const LayoutAttr *l) {
  if (op.is(Opcode::ExpandDims))
    return SliceLayout::get(ctx, static_cast<unsigned>(*op.attrs().getInt("axis")), l);
  return l; // elementwise and broadcast: the same layout
}

Value *alreadyIn(Value *v, const LayoutAttr *l) {
  if (valueLayout(v) == l)
    return v;
  Operation *def = v->definingOp();
  if (def && def->is(Opcode::ConvertLayout) && valueLayout(def->operand(0)) == l)
    return def->operand(0);
  return nullptr;
}

bool recomputable(IRContext &ctx, Value *v, const LayoutAttr *l, int &budget) {
  if (alreadyIn(v, l) || isRematerializable(v->definingOp()))
    return true;
  Operation *def = v->definingOp();
  // A conversion's operand can be computed in `l` instead.
  if (def && def->is(Opcode::ConvertLayout))
    return recomputable(ctx, def->operand(0), l, budget);
  if (!isRecomputable(def) || --budget < 0)
    return false;
  const LayoutAttr *want = operandLayoutFor(ctx, *def, l);
  for (Value *operand : def->operands())
    if (!recomputable(ctx, operand, want, budget))
      return false;
  return true;
}

} // namespace tk
