// Canonicalize: local simplifications, repeated until nothing changes.
//
//  - constant folding: an op whose operands are all constants (scalars or
//    splat tensors) becomes a constant, with tk's exact integer wrapping and
//    float rounding (ir/ConstantFold.h); shape ops of a constant (splat,
//    broadcast, expand_dims, reshape, trans) become a constant of the new
//    shape.
//  - identities: x+0, x-0, x*1, x/1, x<<0 -> x; x*0, x-x, x^x -> 0 for
//    integers (for floats x*0 is not 0 when x is NaN or inf, and x+0.0 is not x
//    when x is -0.0, so floats only drop x+(-0.0), x-0.0, x*1.0 and x/1.0);
//    and/or with x itself, all ones or zero; neg(neg x) -> x; select with a
//    constant condition or equal arms; casts, broadcasts, reshapes and
//    transposes that do nothing; broadcast/expand_dims/reshape/trans of a
//    splat -> one splat; addptr p, 0 -> p.
//  - add(dot(a, b, 0), x) -> dot(a, b, x) (`acc += tk.dot(a, b)`; see
//    accumulateIntoDot).
//  - control flow: an `if` on a constant condition is replaced by the ops of
//    the branch taken; a `for` whose constant bounds give no iteration is
//    replaced by its initial values.
//
// New constants are created in front of the op they replace; CSE merges the
// duplicates.
#include "ir/Builder.h"
#include "ir/ConstantFold.h"
#include "lowering/Pass.h"

#include <cmath>

namespace tk {
namespace {

const Attribute *constantValue(Value *v) {
  Operation *def = v->definingOp();
  if (!def || !def->is(Opcode::Constant))
    return nullptr;
  return def->attrs().get("value");
}

bool isIntConstant(Value *v, int64_t want) {
  const Attribute *a = constantValue(v);
  return a && a->isInt() && v->type()->isIntLike() &&
         normalizeInt(a->getInt(), v->type()->dtype()) == normalizeInt(want, v->type()->dtype());
}

bool isFloatConstant(Value *v, double want, bool checkSign = false) {
  const Attribute *a = constantValue(v);
  if (!a || !a->isFloat() || a->getFloat() != want)
    return false;
  return !checkSign || std::signbit(a->getFloat()) == std::signbit(want);
}

bool isOne(Value *v) { return isIntConstant(v, 1) || isFloatConstant(v, 1.0); }

class Canonicalizer {
public:
  explicit Canonicalizer(IRContext &ctx) : b_(ctx) {}

  bool runOnBlock(Block &block) {
    bool changed = false;
    for (Operation *op : block.opsVector()) {
      if (simplify(op)) {
        changed = true;
        continue; // the op is gone or rewritten; the next round looks again
      }
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (unsigned i = 0; i < op->region(r).numBlocks(); ++i)
          changed |= runOnBlock(op->region(r).block(i));
    }
    return changed;
  }

private:
  /// Replaces every result of `op` by `values` and erases it.
  bool replace(Operation *op, const std::vector<Value *> &values) {
    for (unsigned i = 0; i < op->numResults(); ++i) {
      if (values[i]->type() != op->result(i)->type())
        return false; // never change a type; the rewrite does not apply
    }
    for (unsigned i = 0; i < op->numResults(); ++i)
      op->result(i)->replaceAllUsesWith(values[i]);
    op->erase();
    return true;
  }

  Value *makeConstant(Operation *at, const Attribute &value, Type *type) {
    b_.setInsertionPoint(at);
    AttrDict attrs;
    attrs.set("value", value);
    return b_.create(Opcode::Constant, at->loc(), {}, {type}, std::move(attrs))->result();
  }

  bool replaceWithConstant(Operation *op, const Attribute &value) {
    Type *t = op->result()->type();
    if (t->isFloatLike() != value.isFloat() || t->isPointerLike())
      return false;
    return replace(op, {makeConstant(op, value, t)});
  }

  bool simplify(Operation *op) {
    if (op->is(Opcode::Constant) || op->numResults() == 0)
      return op->is(Opcode::If) && simplifyIf(op);
    if (foldConstants(op))
      return true;
    if (op->is(Opcode::If))
      return simplifyIf(op);
    if (op->is(Opcode::For))
      return simplifyFor(op);
    return simplifyIdentity(op);
  }

  bool foldConstants(Operation *op) {
    if (op->numRegions() || op->numResults() != 1)
      return false;
    std::vector<Attribute> values;
    for (Value *v : op->operands()) {
      const Attribute *a = constantValue(v);
      if (!a)
        return false;
      values.push_back(*a);
    }
    switch (op->opcode()) {
    case Opcode::Splat:
    case Opcode::Broadcast:
    case Opcode::ExpandDims:
    case Opcode::Reshape:
    case Opcode::Trans:
      return replaceWithConstant(op, values[0]);
    default:
      break;
    }
    if (!op->hasTrait(OpTrait::Elementwise) || !op->hasTrait(OpTrait::Pure))
      return false;
    std::optional<Attribute> folded = foldOp(*op, values);
    return folded && replaceWithConstant(op, *folded);
  }

  bool simplifyIdentity(Operation *op) {
    auto operand = [&](unsigned i) { return op->operand(i); };
    Type *t = op->result()->type();
    bool isInt = t->isIntLike();
    switch (op->opcode()) {
    case Opcode::Add:
      for (unsigned i = 0; i < 2; ++i)
        if (isIntConstant(operand(i), 0) || isFloatConstant(operand(i), -0.0, true))
          return replace(op, {operand(1 - i)});
      return accumulateIntoDot(op);
    case Opcode::Sub:
      if (isIntConstant(operand(1), 0) || isFloatConstant(operand(1), 0.0, true))
        return replace(op, {operand(0)});
      if (isInt && operand(0) == operand(1))
        return replaceWithConstant(op, Attribute(int64_t(0)));
      return false;
    case Opcode::Mul:
      for (unsigned i = 0; i < 2; ++i) {
        if (isOne(operand(i)))
          return replace(op, {operand(1 - i)});
        if (isInt && isIntConstant(operand(i), 0))
          return replace(op, {operand(i)});
      }
      return false;
    case Opcode::Div:
      return isOne(operand(1)) && replace(op, {operand(0)});
    case Opcode::Shl:
    case Opcode::AShr:
    case Opcode::LShr:
      return isIntConstant(operand(1), 0) && replace(op, {operand(0)});
    case Opcode::And:
    case Opcode::Or:
      if (operand(0) == operand(1))
        return replace(op, {operand(0)});
      for (unsigned i = 0; i < 2; ++i) {
        // and x, -1 -> x; or x, 0 -> x; and x, 0 -> 0; or x, -1 -> -1
        bool identity = isIntConstant(operand(i), op->is(Opcode::And) ? -1 : 0);
        bool absorbing = isIntConstant(operand(i), op->is(Opcode::And) ? 0 : -1);
        if (identity)
          return replace(op, {operand(1 - i)});
        if (absorbing)
          return replace(op, {operand(i)});
      }
      return false;
    case Opcode::Xor:
      if (operand(0) == operand(1))
        return replaceWithConstant(op, Attribute(int64_t(0)));
      for (unsigned i = 0; i < 2; ++i)
        if (isIntConstant(operand(i), 0))
          return replace(op, {operand(1 - i)});
      return false;
    case Opcode::Neg: {
      Operation *inner = operand(0)->definingOp();
      return inner && inner->is(Opcode::Neg) && replace(op, {inner->operand(0)});
    }
    case Opcode::Select: {
      if (operand(1) == operand(2))
        return replace(op, {operand(1)});
      const Attribute *c = constantValue(operand(0));
      if (c && c->isInt())
        return replace(op, {operand(c->getInt() ? 1 : 2)});
      return false;
    }
    case Opcode::AddPtr:
      return isIntConstant(operand(1), 0) && replace(op, {operand(0)});
    case Opcode::Bitcast:
    case Opcode::Broadcast:
    case Opcode::Reshape:
      if (operand(0)->type() == t)
        return replace(op, {operand(0)});
      return shapeOfSplat(op);
    case Opcode::Trans:
    case Opcode::ExpandDims:
      if (op->is(Opcode::Trans)) {
        const std::vector<int64_t> &order = op->attrs().get("order")->getIntArray();
        bool identity = true;
        for (size_t i = 0; i < order.size(); ++i)
          identity &= order[i] == int64_t(i);
        if (identity && operand(0)->type() == t)
          return replace(op, {operand(0)});
      }
      return shapeOfSplat(op);
    default:
      return false;
    }
  }

  // add(dot(a, b, 0), x) -> dot(a, b, x), the dot's only use being the add
  // and both in one block (`acc += tk.dot(a, b)` in a loop): the accumulator
  // is then loop-carried through the dot, so --accelerate-dot keeps it in the
  // mma layout and converts once after the loop instead of every iteration
  // (a 128x256 fp32 tile's conversion is 128 KiB of shared memory that the
  // cp.async ring could otherwise not share). The dot moves to the add, where
  // x is defined; a and b were defined before it. For floats this only
  // reassociates the sum, whose order a dot does not define anyway.
  bool accumulateIntoDot(Operation *add) {
    for (unsigned i = 0; i < 2; ++i) {
      Operation *dot = add->operand(i)->definingOp();
      if (!dot || !dot->is(Opcode::Dot) || dot->parentBlock() != add->parentBlock() ||
          dot->result()->users().size() != 1 || dot->result()->type() != add->result()->type())
        continue;
      Value *acc = dot->operand(2);
      if ((!isIntConstant(acc, 0) && !isFloatConstant(acc, 0.0)) ||
          add->operand(1 - i) == dot->result()) // add(d, d) has two uses; explicit anyway
        continue;
      dot->setOperand(2, add->operand(1 - i));
      dot->moveBefore(add);
      return replace(add, {dot->result()});
    }
    return false;
  }

  // broadcast/expand_dims/reshape/trans of a splat is a splat of the result shape.
  bool shapeOfSplat(Operation *op) {
    Operation *inner = op->operand(0)->definingOp();
    if (!inner || !inner->is(Opcode::Splat) || !op->result()->type()->isTensor())
      return false;
    b_.setInsertionPoint(op);
    Value *s =
        b_.create(Opcode::Splat, op->loc(), {inner->operand(0)}, {op->result()->type()})->result();
    return replace(op, {s});
  }

  bool simplifyIf(Operation *op) {
    const Attribute *c = constantValue(op->operand(0));
    if (!c || !c->isInt() || op->numRegions() != 2)
      return false;
    Block &taken = op->body(c->getInt() ? 0 : 1);
    Operation *yield = taken.terminator();
    if (!yield || yield->numOperands() != op->numResults())
      return false;
    for (unsigned i = 0; i < op->numResults(); ++i)
      if (yield->operand(i)->type() != op->result(i)->type())
        return false;
    for (Operation *inner : taken.opsVector())
      if (inner != yield)
        inner->moveBefore(op);
    return replace(op, yield->operands());
  }

  bool simplifyFor(Operation *op) {
    const Attribute *lo = constantValue(op->operand(0));
    const Attribute *hi = constantValue(op->operand(1));
    if (!lo || !hi || !lo->isInt() || !hi->isInt())
      return false;
    DType d = op->operand(0)->type()->dtype();
    bool empty = isSigned(d) ? normalizeInt(lo->getInt(), d) >= normalizeInt(hi->getInt(), d)
                             : uint64_t(normalizeInt(lo->getInt(), d)) >=
                                   uint64_t(normalizeInt(hi->getInt(), d));
    if (!empty)
      return false;
    std::vector<Value *> inits(op->operands().begin() + 3, op->operands().end());
    return replace(op, inits);
  }

  Builder b_;
};

class CanonicalizePass : public Pass {
public:
  CanonicalizePass() : Pass(PassId::Canonicalize) {}

  bool run(Module &module, DiagnosticEngine &) override {
    Canonicalizer c(module.context());
    bool changed = false;
    for (auto &fn : module.functions())
      // Every round shrinks or rewrites the IR toward a fixpoint; the bound
      // only guards against a pair of rules undoing each other.
      for (int round = 0; round < 32 && c.runOnBlock(fn->body()); ++round)
        changed = true;
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

} // namespace tk
