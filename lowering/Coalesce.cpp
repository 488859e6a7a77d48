// --coalesce: layout assignment. Every tensor value gets a layout (ir/Layout.h).
//
// Loads and stores are the anchors: each gets the blocked layout that gives a
// thread the widest vector the pointers allow (16 bytes at most) along their
// most contiguous dimension, consecutive lanes the consecutive vectors
// (coalesced across the warp), and the warps what remains. Other values take
// layouts from their neighbours: elementwise ops and broadcast keep one
// layout, a reduction gives the slice of its operand's layout, expand_dims of
// a slice gives the parent, a dot's accumulator and a gather's index have
// their result's layout.
// Where two layouts meet, a convert_layout is inserted (a constant, splat or
// make_range is re-created in the layout its user needs instead: that costs
// nothing).
//
//   %p = addptr %base, %offs : tensor<1024xptr<fp32>>       (contiguous, 16-byte aligned)
//   %x = load %p, %m : tensor<1024xfp32>
// becomes, with 4 warps,
//   %x = load %p, %m : tensor<1024xfp32, blocked<size = [4], threads = [32], warps = [4],
//                                                 order = [0]>>
// and %base, %offs and %m take the same layout.
//
// The assignment runs backward then forward, twice when a loop needs it:
//  1. backward: the layouts users want flow to the values they use (the load's
//     pointer, mask and other want the load's layout; an elementwise op's
//     operands want its result's layout; ...). The first want of a value wins.
//  2. forward: each value takes its want, else a layout derived from its
//     operands (preferring one that came from an anchor), else the default
//     blocked layout of its shape.
// A loop-carried value whose body turns out to yield an anchored layout (a
// LayerNorm accumulator `acc += load(...)`) is re-run with that layout as the
// loop's, so the accumulator is not converted on every iteration. That holds
// too when a user after the loop wants another layout (the partial sums
// `dw += dy * xhat` of a LayerNorm backward, stored as fp32 after the loop
// from fp16 loads inside it): the loop carries the layout of the loads that
// feed the yielded value, and the one conversion to the store's layout is
// after the loop instead of one per load on every iteration, whatever the
// value's size (one larger than shared memory converts in rounds).
#include "analysis/AxisInfo.h"
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "lowering/Pass.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace tk {
namespace {

constexpr int64_t kMaxVectorBytes = 16;
int64_t floorPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

bool isMemoryOp(const Operation &op) {
  return op.is(Opcode::Load) || op.is(Opcode::Store) || op.is(Opcode::AtomicRMW) ||
         op.is(Opcode::AtomicCAS);
}

// Ops with no tensor operands that are cheaper to re-create in another layout
// than to convert.
bool isRematerializable(const Operation *op) {
  return op && (op->is(Opcode::Constant) || op->is(Opcode::Splat) || op->is(Opcode::MakeRange));
}

class LayoutAssigner {
public:
  LayoutAssigner(Function &fn, IRContext &ctx, int64_t numWarps)
      : fn_(fn), ctx_(ctx), numWarps_(numWarps), warpSize_(functionWarpSize(fn)), axis_(fn) {}

  void run() {
    fn_.walk([&](Operation *op) {
      if (isMemoryOp(*op) && op->operand(0)->type()->isTensor())
        anchors_[op] = anchorLayout(*op);
    });
    // Two rounds suffice for one level of loop-carried hints; a third covers
    // nested loops whose hints arrive one level per round.
    for (int round = 0; round < 3; ++round) {
      want_.clear();
      layout_.clear();
      strong_.clear();
      hintsChanged_ = false;
      propagateWants(fn_.body());
      assign(fn_.body());
      if (!hintsChanged_)
        break;
    }
    retype(fn_.body());
    rewrite(fn_.body());
  }

private:
  // --- anchors

  const LayoutAttr *anchorLayout(Operation &op) {
    Value *ptr = op.operand(0);
    const std::vector<int64_t> &shape = ptr->type()->shape();
    unsigned fast = axis_.mostContiguousDim(ptr);
    std::vector<int64_t> order = {fast};
    for (size_t d = shape.size(); d-- > 0;)
      if (d != fast)
        order.push_back(static_cast<int64_t>(d));

    Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
    int64_t elemBytes = pointee->isPointer() ? 8 : int64_t(dtypeBytes(pointee->dtype()));
    int64_t vec = std::min({kMaxVectorBytes / elemBytes, axis_.contiguity(ptr, fast),
                            std::max<int64_t>(1, axis_.alignment(ptr) / elemBytes)});
    Value *mask = nullptr;
    if (op.is(Opcode::Load) && op.numOperands() > 1)
      mask = op.operand(1);
    else if ((op.is(Opcode::Store) || op.is(Opcode::AtomicRMW)) && op.numOperands() > 2)
      mask = op.operand(2);
    if (mask)
      vec = std::min(vec, axis_.maskAlignment(mask, fast));
    // Atomics are issued one element at a time.
    if (!op.is(Opcode::Load) && !op.is(Opcode::Store))
      vec = 1;
    // Spread the elements over all threads before widening the vectors.
    int64_t perThread = std::max<int64_t>(1, ptr->type()->numElements() / (numWarps_ * warpSize_));
    vec = floorPowerOfTwo(std::max<int64_t>(1, std::min(vec, perThread)));
    return makeBlockedLayout(ctx_, shape, order, vec, numWarps_, warpSize_);
  }

  // --- 1. backward: wants

  const LayoutAttr *want(Value *v) const {
    auto it = want_.find(v);
    return it == want_.end() ? nullptr : it->second;
  }
  void setWant(Value *v, const LayoutAttr *l) {
    if (l && v->type()->isTensor() && layoutRank(l) == v->type()->rank())
      want_.emplace(v, l);
  }

  // The layout the loop carries in slot i, when something decided it: what
  // an earlier round learnt from the body (assignFor), else what the users
  // of the result or of the argument want.
  const LayoutAttr *carried(Operation &loop, unsigned i, Value *result, Value *arg) {
    if (auto it = hints_.find({&loop, i}); it != hints_.end())
      return it->second;
    if (const LayoutAttr *l = want(result))
      return l;
    return want(arg);
  }

  // The layout of a load or store of `body` (an anchor, so run on every
  // iteration) that computes `v` through elementwise ops of `body` alone,
  // and through the branches of its `if`s (Inductor's welford_reduce picks
  // the first iteration's values in one); null when there is none. The walk
  // stops at other ops (a dot, a reduction, a broadcast) and at values from
  // outside the body.
  const LayoutAttr *bodyAnchorLayout(Block &body, Value *v) const {
    std::vector<Value *> work = {v};
    std::map<Value *, bool> seen;
    std::vector<const Block *> blocks = {&body};
    while (!work.empty() && seen.size() < 64) {
      Value *x = work.back();
      work.pop_back();
      Operation *def = x->definingOp();
      if (!def || std::find(blocks.begin(), blocks.end(), def->parentBlock()) == blocks.end() ||
          !seen.emplace(x, true).second)
        continue;
      if (auto a = anchors_.find(def); a != anchors_.end())
        return a->second;
      if (def->is(Opcode::If)) {
        for (unsigned r = 0; r < 2; ++r) {
          blocks.push_back(&def->body(r));
          work.push_back(def->body(r).terminator()->operand(x->index()));
        }
      } else if (def->hasTrait(OpTrait::Elementwise)) {
        for (Value *operand : def->operands())
          if (operand->type()->isTensor())
            work.push_back(operand);
      }
    }
    return nullptr;
  }

  void propagateWants(Block &block) {
    std::vector<Operation *> ops = block.opsVector();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      propagateWants(**it);
  }

  void propagateWants(Operation &op) {
    if (auto a = anchors_.find(&op); a != anchors_.end()) {
      for (Value *v : op.operands())
        setWant(v, a->second);
      return;
    }
    const LayoutAttr *r = op.numResults() ? want(op.result()) : nullptr;
    switch (op.opcode()) {
    case Opcode::Broadcast:
      setWant(op.operand(0), r);
      return;
    case Opcode::Dot:
      setWant(op.operand(2), r); // the accumulator is the result's
      return;
    case Opcode::Gather:
      // The index is in the result's layout; a wider index keeps its own
      // (indexIsWider).
      if (!indexIsWider(op))
        setWant(op.operand(1), r);
      return;
    case Opcode::ExpandDims:
      if (r)
        setWant(op.operand(0), SliceLayout::get(ctx_, *op.attrs().getInt("axis"), r));
      return;
    case Opcode::Reduce:
      // Every operand of a tuple reduce in one layout (codegen/ReduceToLLVM.cpp
      // combines register r of each together): the parent of the slice the
      // results want.
      if (auto *s = dyn_cast<SliceLayout>(r); s && s->dim() == *op.attrs().getInt("axis"))
        for (Value *v : op.operands())
          setWant(v, s->parent());
      return;
    case Opcode::Scan:
    case Opcode::InlineAsm:
    case Opcode::MapElementwise: {
      // One layout for every operand and result: the first any result wants.
      const LayoutAttr *l = nullptr;
      for (Value *res : op.results())
        if (!l)
          l = want(res);
      for (Value *v : op.operands())
        setWant(v, l);
      return;
    }
    case Opcode::For: {
      Block &body = op.body();
      for (unsigned i = 0; i < op.numResults(); ++i) {
        const LayoutAttr *l = carried(op, i, op.result(i), body.argument(i + 1));
        setWant(op.result(i), l);
        setWant(body.argument(i + 1), l);
        setWant(op.operand(3 + i), l);
        setWant(body.terminator()->operand(i), l);
      }
      return propagateWants(body);
    }
    case Opcode::If:
      for (unsigned i = 0; i < op.numResults(); ++i)
        for (unsigned r2 = 0; r2 < 2; ++r2)
          setWant(op.body(r2).terminator()->operand(i), want(op.result(i)));
      propagateWants(op.body(0));
      return propagateWants(op.body(1));
    case Opcode::While:
      propagateWants(op.body(1));
      return propagateWants(op.body(0));
    default:
      if (op.hasTrait(OpTrait::Elementwise))
        for (Value *v : op.operands())
          setWant(v, r);
      return;
    }
  }

  // --- 2. forward: layouts

  const LayoutAttr *layout(Value *v) const {
    auto it = layout_.find(v);
    return it == layout_.end() ? nullptr : it->second;
  }
  void set(Value *v, const LayoutAttr *l, bool strong) {
    if (!v->type()->isTensor())
      return;
    if (!l)
      l = defaultBlockedLayout(ctx_, v->type()->shape(), numWarps_, warpSize_);
    layout_[v] = l;
    if (strong)
      strong_[v] = true;
  }
  bool isStrong(Value *v) const { return strong_.count(v) != 0; }
  // A gather whose index elements are wider than its result's (i64 indices
  // of fp16 values): where the index's layout (its load's) and the users'
  // differ, converting the result moves fewer bytes than converting the
  // index, so the index's layout is the result's.
  static bool indexIsWider(const Operation &gather) {
    auto bytes = [](Value *v) {
      Type *e = v->type()->elementType();
      return e->isPointer() ? int64_t(8) : int64_t(dtypeBytes(e->dtype()));
    };
    return bytes(gather.operand(1)) > bytes(gather.result());
  }
  // want, else `derived`, else the default; strong when wanted or derived
  // from a strong value.
  void decide(Value *v, const LayoutAttr *derived, bool derivedStrong) {
    if (const LayoutAttr *w = want(v))
      return set(v, w, true);
    set(v, derived, derived && derivedStrong);
  }

  void assign(Block &block) {
    for (Operation &op : block)
      assign(op);
  }

  void assign(Operation &op) {
    if (auto a = anchors_.find(&op); a != anchors_.end()) {
      if (op.numResults())
        set(op.result(), a->second, true);
      return;
    }
    switch (op.opcode()) {
    case Opcode::Reduce: {
      for (unsigned r = 0; r < op.numRegions(); ++r)
        assign(op.body(r));
      // The operands share one layout (converted to it in the rewrite): the
      // first strong operand's, else the first operand's; each result is its
      // slice along the axis.
      unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
      const LayoutAttr *in = nullptr;
      bool strong = false;
      for (Value *v : op.operands())
        if (layout(v) && (!in || (!strong && isStrong(v))))
          in = layout(v), strong = isStrong(v);
      for (Value *res : op.results())
        if (res->type()->isTensor() && in)
          set(res, SliceLayout::get(ctx_, axis, in), strong);
      return;
    }
    case Opcode::ExpandDims: {
      Value *in = op.operand(0);
      unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
      const LayoutAttr *derived = layout(in) ? expandLayout(ctx_, layout(in), axis) : nullptr;
      return decide(op.result(), derived, isStrong(in));
    }
    case Opcode::Scan:
    case Opcode::InlineAsm:
    case Opcode::MapElementwise:
      return assignScan(op);
    case Opcode::Gather: {
      // The result is laid out as its index (codegen/ShapeToLLVM.cpp reads
      // each result element at its index's register); the source may be in
      // any layout, it goes through shared memory. An anchored index wider
      // than the result keeps its layout over what users want.
      Value *index = op.operand(1);
      if (indexIsWider(op) && isStrong(index))
        return set(op.result(), layout(index), true);
      return decide(op.result(), layout(index), isStrong(index));
    }
    case Opcode::For:
      return assignFor(op);
    case Opcode::If:
      assign(op.body(0));
      assign(op.body(1));
      for (unsigned i = 0; i < op.numResults(); ++i) {
        Value *y = op.body(0).terminator()->operand(i);
        decide(op.result(i), layout(y), isStrong(y));
      }
      return;
    case Opcode::While: {
      Block &before = op.body(0), &after = op.body(1);
      for (unsigned i = 0; i < op.numOperands(); ++i)
        decide(before.argument(i), layout(op.operand(i)), isStrong(op.operand(i)));
      assign(before);
      Operation *cond = before.terminator();
      for (unsigned i = 0; i < op.numResults(); ++i) {
        Value *c = cond->operand(i + 1);
        decide(op.result(i), layout(c), isStrong(c));
        set(after.argument(i), layout(op.result(i)), isStrong(op.result(i)));
      }
      return assign(after);
    }
    default:
      break;
    }
    for (unsigned r = 0; r < op.numRegions(); ++r)
      assign(op.body(r));
    // Elementwise, broadcast, convert and the rest: the first strong operand
    // layout, else the first operand layout of the same rank.
    const LayoutAttr *derived = nullptr;
    bool strong = false;
    if (op.numResults() == 1 && op.result()->type()->isTensor()) {
      unsigned rank = op.result()->type()->rank();
      for (Value *v : op.operands()) {
        const LayoutAttr *l = layout(v);
        if (!l || layoutRank(l) != rank || op.is(Opcode::Reshape) || op.is(Opcode::Trans))
          continue;
        if (!derived || (!strong && isStrong(v))) {
          derived = l;
          strong = isStrong(v);
        }
      }
    }
    for (Value *r : op.results())
      decide(r, derived, strong);
  }

  // A scan's results share one layout (its operands are converted to it in
  // the rewrite; codegen/ScanToLLVM.cpp scans them together): the first a
  // result wants, else the first strong operand's, else the first operand's.
  // A multi-operand scan (cummax's values and indices) would otherwise give
  // each result the layout of its own user.
  void assignScan(Operation &op) {
    for (unsigned r = 0; r < op.numRegions(); ++r)
      assign(op.body(r));
    const LayoutAttr *l = nullptr;
    bool strong = false;
    for (Value *r : op.results())
      if (!l && want(r))
        l = want(r), strong = true;
    for (Value *v : op.operands())
      if (!l || (!strong && isStrong(v)))
        l = layout(v), strong = isStrong(v);
    for (Value *r : op.results())
      set(r, l, strong);
  }

  void assignFor(Operation &op) {
    Block &body = op.body();
    std::vector<const LayoutAttr *> slots;
    for (unsigned i = 0; i < op.numResults(); ++i) {
      Value *init = op.operand(3 + i), *arg = body.argument(i + 1);
      const LayoutAttr *l = carried(op, i, op.result(i), arg);
      bool strong = l != nullptr;
      if (!l && isStrong(init)) {
        l = layout(init);
        strong = true;
      }
      set(arg, l, strong);
      slots.push_back(layout(arg));
    }
    assign(body);
    // Slots a user after the loop decides and no load of the body computes.
    std::vector<unsigned> unanchored;
    for (unsigned i = 0; i < op.numResults(); ++i) {
      Value *y = body.terminator()->operand(i);
      Value *arg = body.argument(i + 1);
      set(op.result(i), slots[i], isStrong(arg));
      if (!y->type()->isTensor() || hints_.count({&op, i}))
        continue;
      // The body yields an anchored layout the loop did not carry: carry it
      // next round.
      const LayoutAttr *hint = nullptr;
      if (isStrong(y) && !isStrong(arg) && layout(y) != slots[i])
        hint = layout(y);
      // The loop carries what a user after it wants, but loads in the body
      // compute the yielded value in another layout: carry theirs, and
      // convert once after the loop.
      else if (want(op.result(i)) == slots[i]) {
        const LayoutAttr *l = bodyAnchorLayout(body, y);
        if (!l)
          unanchored.push_back(i);
        else if (l != slots[i])
          hint = l;
      }
      if (hint) {
        hints_[{&op, i}] = hint;
        hintsChanged_ = true;
      }
    }
    // A carried value of the same shape that no load computes (welford's
    // count, `weight + 1` from a constant) follows the loads' layout of its
    // companions, which the body combines it with (`delta / weight`):
    // carried in the layout its users after the loop want, it would be
    // converted on every iteration instead of once after the loop.
    for (unsigned i : unanchored) {
      for (unsigned j = 0; j < op.numResults(); ++j) {
        auto h = hints_.find({&op, j});
        if (j != i && h != hints_.end() && h->second != slots[i] &&
            op.result(j)->type()->shape() == op.result(i)->type()->shape()) {
          hints_[{&op, i}] = h->second;
          hintsChanged_ = true;
          break;
        }
      }
    }
  }

  // --- 3. the rewrite

  Type *typeWith(Value *v, const LayoutAttr *l) {
    return ctx_.tensor(v->type()->shape(), v->type()->elementType(), l);
  }

  void retype(Block &block) {
    for (Value *a : block.arguments())
      if (const LayoutAttr *l = layout(a))
        a->setType(typeWith(a, l));
    for (Operation &op : block) {
      for (unsigned r = 0; r < op.numRegions(); ++r)
        for (unsigned b = 0; b < op.region(r).numBlocks(); ++b)
          retype(op.region(r).block(b));
      for (Value *v : op.results())
        if (const LayoutAttr *l = layout(v))
          v->setType(typeWith(v, l));
    }
  }

  const LayoutAttr *layoutOf(Value *v) {
    auto *t = dyn_cast<TensorType>(v->type());
    return t ? t->layout() : nullptr;
  }

  // Makes operand `i` of `op` have layout `l`.
  void require(Operation &op, unsigned i, const LayoutAttr *l) {
    Value *v = op.operand(i);
    if (!l || !v->type()->isTensor() || layoutOf(v) == l)
      return;
    Builder b(ctx_);
    b.setInsertionPoint(&op);
    Operation *def = v->definingOp();
    Value *replacement;
    if (isRematerializable(def)) {
      auto key = std::make_pair(v, l);
      auto it = remat_.find(key);
      if (it == remat_.end()) {
        // Next to the original, so every later user can share it.
        b.setInsertionPointAfter(def);
        Operation *copy =
            b.create(def->opcode(), def->loc(), def->operands(), {typeWith(v, l)}, def->attrs());
        it = remat_.emplace(key, copy->result()).first;
      }
      replacement = it->second;
    } else {
      replacement = b.create(Opcode::ConvertLayout, op.loc(), {v}, {typeWith(v, l)})->result();
    }
    op.setOperand(i, replacement);
  }

  void rewrite(Block &block) {
    for (Operation *op : block.opsVector())
      rewrite(*op);
  }

  void rewrite(Operation &op) {
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (unsigned b = 0; b < op.region(r).numBlocks(); ++b)
        rewrite(op.region(r).block(b));
    if (auto a = anchors_.find(&op); a != anchors_.end()) {
      for (unsigned i = 0; i < op.numOperands(); ++i)
        require(op, i, a->second);
      return;
    }
    const LayoutAttr *r = op.numResults() ? layoutOf(op.result()) : nullptr;
    switch (op.opcode()) {
    case Opcode::Broadcast:
      return require(op, 0, r);
    case Opcode::Dot:
      // The accumulator in the result's layout (the verifier's rule: a dot's
      // result has its accumulator's type), whatever layout users gave the
      // result.
      return require(op, 2, r);
    case Opcode::Gather:
      return require(op, 1, r);
    case Opcode::Reduce: {
      // One layout for every operand: the parent of the results' slice, or
      // for a reduce to a scalar the first operand's.
      const LayoutAttr *in = layoutOf(op.operand(0));
      if (auto *s = r ? dyn_cast<SliceLayout>(r) : nullptr)
        in = s->parent();
      for (unsigned i = 0; i < op.numOperands(); ++i)
        require(op, i, in);
      return;
    }
    case Opcode::Scan:
    case Opcode::InlineAsm:
    case Opcode::MapElementwise:
      // Operands and results in one layout (codegen/ScanToLLVM.cpp; an
      // inline_asm takes register i of every operand and result together).
      for (unsigned i = 0; i < op.numOperands(); ++i)
        require(op, i, r);
      return;
    case Opcode::ExpandDims:
      if (r)
        require(op, 0, SliceLayout::get(ctx_, *op.attrs().getInt("axis"), r));
      return;
    case Opcode::For:
      for (unsigned i = 0; i < op.numResults(); ++i) {
        require(op, 3 + i, layoutOf(op.result(i)));
        require(*op.body().terminator(), i, layoutOf(op.result(i)));
      }
      return;
    case Opcode::If:
      for (unsigned i = 0; i < op.numResults(); ++i)
        for (unsigned b = 0; b < 2; ++b)
          require(*op.body(b).terminator(), i, layoutOf(op.result(i)));
      return;
    case Opcode::While: {
      Block &before = op.body(0), &after = op.body(1);
      for (unsigned i = 0; i < op.numOperands(); ++i) {
        require(op, i, layoutOf(before.argument(i)));
        require(*after.terminator(), i, layoutOf(before.argument(i)));
      }
      for (unsigned i = 0; i < op.numResults(); ++i)
        require(*before.terminator(), i + 1, layoutOf(op.result(i)));
      return;
    }
    default:
      if (op.hasTrait(OpTrait::Elementwise))
        for (unsigned i = 0; i < op.numOperands(); ++i)
          require(op, i, r);
      return;
    }
  }

  Function &fn_;
  IRContext &ctx_;
  int64_t numWarps_, warpSize_;
  AxisInfoAnalysis axis_;
  // Keyed by pointers and only looked up: nothing iterates them into output.
  std::map<Operation *, const LayoutAttr *> anchors_;
  std::map<Value *, const LayoutAttr *> want_, layout_;
  std::map<Value *, bool> strong_;
  std::map<std::pair<Operation *, unsigned>, const LayoutAttr *> hints_;
  std::map<std::pair<Value *, const LayoutAttr *>, Value *> remat_;
  bool hintsChanged_ = false;
};

class CoalescePass : public Pass {
public:
  CoalescePass() : Pass(PassId::Coalesce) {}

  bool run(Module &module, DiagnosticEngine &diag) override {
    bool changed = false;
    for (auto &fn : module.functions()) {
      int64_t numWarps = fn->attrs().getInt("num_warps").value_or(4);
      if (numWarps < 1 || numWarps > 32 || (numWarps & (numWarps - 1))) {
        diag.error(fn->loc(), fmt::format("num_warps of '@{}' must be a power of two from 1 to "
                                          "32, got {}",
                                          fn->name(), numWarps));
        return changed;
      }
      // A workgroup is at most 1024 threads: 16 of wave64's 64-lane warps.
      if (int64_t threads = numWarps * functionWarpSize(*fn); threads > 1024) {
        diag.error(fn->loc(), fmt::format("num_warps = {} of '@{}' is {} threads of {}-lane warps, "
                                          "more than the 1024 a program may have",
                                          numWarps, fn->name(), threads, functionWarpSize(*fn)));
        return changed;
      }
      if (!fn->attrs().has("num_warps")) {
        fn->attrs().set("num_warps", numWarps);
        changed = true;
      }
      LayoutAssigner(*fn, module.context(), numWarps).run();
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createCoalescePass() { return std::make_unique<CoalescePass>(); }

} // namespace tk
