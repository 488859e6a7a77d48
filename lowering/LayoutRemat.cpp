// Values in another layout without data movement (see LayoutRemat.h).
#include "lowering/LayoutRemat.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

namespace tk {

const LayoutAttr *valueLayout(const Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t ? t->layout() : nullptr;
}

bool isRematerializable(const Operation *op) {
  return op && (op->is(Opcode::Constant) || op->is(Opcode::Splat) || op->is(Opcode::MakeRange));
}

namespace {

// The result dimensions a reshape inserts, in increasing order, when all it
// does is insert dimensions of size 1 ([n] -> [1, 1, n]); nullopt otherwise.
std::optional<std::vector<unsigned>> insertedUnitDims(const Operation &op) {
  if (!op.is(Opcode::Reshape))
    return std::nullopt;
  const std::vector<int64_t> &in = op.operand(0)->type()->shape(),
                             &out = op.result()->type()->shape();
  std::vector<unsigned> inserted;
  size_t i = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    if (i < in.size() && out[d] == in[i]) {
      ++i;
      continue;
    }
    if (out[d] != 1)
      return std::nullopt;
    inserted.push_back(static_cast<unsigned>(d));
  }
  if (i != in.size())
    return std::nullopt;
  return inserted;
}

} // namespace

bool isRecomputable(const Operation *op) {
  if (!op || op->numResults() != 1 || op->numRegions() != 0 || !op->isSideEffectFree())
    return false;
  if (op->is(Opcode::Broadcast) || op->is(Opcode::ExpandDims))
    return true;
  if (op->is(Opcode::Reshape))
    return op->operand(0)->type()->isTensor() && insertedUnitDims(*op).has_value();
  if (!op->hasTrait(OpTrait::Elementwise))
    return false;
  return std::all_of(op->operands().begin(), op->operands().end(),
                     [](Value *v) { return v->type()->isTensor(); });
}

const LayoutAttr *operandLayoutFor(IRContext &ctx, const Operation &op, const LayoutAttr *l) {
  if (op.is(Opcode::ExpandDims))
    return SliceLayout::get(ctx, static_cast<unsigned>(*op.attrs().getInt("axis")), l);
  if (std::optional<std::vector<unsigned>> inserted = insertedUnitDims(op)) {
    // One expand_dims per inserted dimension, the last one outermost.
    for (auto d = inserted->rbegin(); d != inserted->rend(); ++d)
      l = SliceLayout::get(ctx, *d, l);
    return l;
  }
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

bool isMmaDerived(const LayoutAttr *l) {
  while (auto *s = dyn_cast<SliceLayout>(l))
    l = s->parent();
  return isa<MmaLayout>(l) || isa<AMDMmaLayout>(l);
}

namespace {

bool isLoop(const Operation *op) { return op && (op->is(Opcode::For) || op->is(Opcode::While)); }

// Whether an mma value `v` is computed from is a loop's result or argument.
bool fromLoopAccumulator(const Value *v) {
  std::vector<const Value *> work = {v};
  std::set<const Value *> seen;
  while (!work.empty() && seen.size() < 64) {
    const Value *x = work.back();
    work.pop_back();
    if (!seen.insert(x).second || !isMmaDerived(valueLayout(x)))
      continue;
    if (x->isBlockArgument()) {
      if (isLoop(x->ownerBlock()->parentOp()))
        return true;
      continue;
    }
    const Operation *def = x->definingOp();
    if (isLoop(def))
      return true;
    if (def)
      for (const Value *operand : def->operands())
        work.push_back(operand);
  }
  return false;
}

// Consecutive elements a thread holds in layout `l` along the fastest
// dimension of `along`.
int64_t runAlong(const LayoutAttr *l, const LayoutAttr *along, const std::vector<int64_t> &shape) {
  ThreadMap map(l, shape);
  unsigned fast = ThreadMap(along, shape).order()[0];
  if (map.order()[0] != fast)
    return 1;
  return std::min(map.dim(fast).size, map.dim(fast).extent);
}

} // namespace

bool storesFromAccumulator(const Value *v, const LayoutAttr *acc, const LayoutAttr *coalesced) {
  if (!v->type()->isTensor() || !coalesced || isa<MmaLayout>(coalesced) ||
      isa<AMDMmaLayout>(coalesced) || layoutRank(acc) != layoutRank(coalesced))
    return true;
  const std::vector<int64_t> &shape = v->type()->shape();
  // An AMD matrix-core accumulator gives a thread one element per row
  // along N: its tile is converted to the store's layout through LDS for
  // wide stores (no measurement here says otherwise; the NVIDIA
  // accumulators' loop rule below was measured on the H100/H200).
  const LayoutAttr *base = acc;
  while (auto *s = dyn_cast<SliceLayout>(base))
    base = s->parent();
  return (!isa<AMDMmaLayout>(base) && fromLoopAccumulator(v)) ||
         runAlong(coalesced, coalesced, shape) <= runAlong(acc, coalesced, shape);
}

} // namespace tk
