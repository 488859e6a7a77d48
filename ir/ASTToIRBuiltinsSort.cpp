// tk.sort and tk.topk: Triton's bitonic network, step for step, so the
// results are Triton's bit for bit (which of two equal keys, -0.0 and +0.0,
// or NaN lands where included). Built from reshapes, a reduction over an
// axis of 2 and selects, like Triton's own; no op of their own.
//
// The n elements of a line (the sorted dimension, a power of two, made the
// last) sit at the low log2(n) bits of the flat index p of the whole tensor.
// One compare-and-swap at bit i pairs p with p ^ 2^i: each keeps its own
// value x or takes its partner's y,
//
//   takes y  when  (x > y) != (flip(p) ^ bit_i(p))
//
// so with flip = 0 the lower position gets the smaller value. A merge of
// stage s runs the swaps at bits s-1, ..., 0, with flip = bit_s(p)
// (alternating runs of 2^s) or a constant (the last stage: 0 ascending, 1
// descending); sorting runs the stages 1 .. log2(n). The partner of every
// element at once is x ^ xor_sum over the pair: x viewed as [p >> (i+1), 2,
// 2^i], xor-reduced over the middle axis and broadcast back (floats through
// their bits).
//
// topk(k) sorts runs of k (stages 1 .. log2(k)), then halves the line until
// k remain: the elementwise max (min when ascending) of neighbouring runs
// (a reduction over bit log2(k)), re-merged at stage log2(k). For k = 4 of
// 8 descending, [5 1 7 3 | 2 8 6 4] sorts its runs alternately to
// [7 5 3 1 | 2 4 6 8], keeps max(7,2) max(5,4) max(3,6) max(1,8) =
// [7 5 6 8], and merges them to [8 7 6 5].
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

namespace {

int log2Of(int64_t n) {
  int bits = 0;
  while ((int64_t(1) << bits) < n)
    ++bits;
  return bits;
}

/// The network over a flat tensor of numeric elements.
class Bitonic {
public:
  Bitonic(BuiltinCall &call, Type *elem) : c_(call), b_(call.b), loc_(call.loc), elem_(elem) {
    DType d = elem->dtype();
    // The exchange moves bits: floats as the same-width integer, i1 as i8.
    word_ = d == DType::I1 ? call.ctx.scalar(DType::I8)
            : isFloat(d)   ? call.ctx.scalar(dtypeBits(d) == 16   ? DType::I16
                                             : dtypeBits(d) == 32 ? DType::I32
                                                                  : DType::I64)
                           : elem;
  }

  /// Stage `stage` of the network; order 0 ascending, 1 descending, 2
  /// alternating by bit `stage` of the position.
  Value *merge(Value *x, int stage, int order) {
    int64_t n = x->type()->numElements();
    Value *flip =
        order == 2 ? bit(n, stage) : b_.constantInt(loc_, order, c_.ctx.tensor({n}, DType::I1));
    for (int j = stage - 1; j >= 0; --j)
      x = compareSwap(x, flip, j);
    return x;
  }

  /// Keeps, of each pair of runs of 2^i, the elementwise max (or min):
  /// half the elements.
  Value *halve(Value *x, int i, bool keepMax) {
    int64_t n = x->type()->numElements();
    Value *v = b_.reshape(loc_, x, {n >> (i + 1), 2, int64_t(1) << i});
    Value *r = b_.reduce(loc_, v, 1, keepMax ? "max" : "min");
    return b_.reshape(loc_, r, {n / 2});
  }

private:
  BuiltinCall &c_;
  Builder &b_;
  SourceLoc loc_;
  Type *elem_, *word_;

  /// Bit i of each position of a flat tensor of n elements, as i1.
  Value *bit(int64_t n, int i) {
    Value *p = b_.makeRange(loc_, 0, n);
    Value *shifted = b_.binary(Opcode::LShr, loc_, p, b_.constantInt(loc_, i, p->type()));
    Value *one = b_.constantInt(loc_, 1, p->type());
    return b_.cmpi(loc_, "ne", b_.binary(Opcode::And, loc_, shifted, one),
                   b_.constantInt(loc_, 0, p->type()));
  }

  Value *toWord(Value *x) { return c_.L.castTo(x, word_, loc_, isFloat(elem_->dtype())); }
  Value *fromWord(Value *w) {
    return elem_->dtype() == DType::I1 ? c_.L.castTo(w, elem_, loc_)
                                       : c_.L.castTo(w, elem_, loc_, isFloat(elem_->dtype()));
  }

  /// Each element's partner across bit i: w ^ (w ^ w') for the pair (w, w').
  Value *partner(Value *x, int i) {
    int64_t n = x->type()->numElements();
    std::vector<int64_t> pairs = {n >> (i + 1), 2, int64_t(1) << i};
    Value *w = b_.reshape(loc_, toWord(x), pairs);
    Operation *op = b_.createReduce(loc_, {w}, 1);
    {
      Builder::InsertionGuard g(b_);
      b_.setInsertionPointToEnd(&op->body());
      b_.yield(loc_,
               {b_.binary(Opcode::Xor, loc_, op->body().argument(0), op->body().argument(1))});
    }
    Value *both = b_.broadcast(loc_, b_.expandDims(loc_, op->result(), 1), pairs);
    return fromWord(b_.reshape(loc_, b_.binary(Opcode::Xor, loc_, w, both), {n}));
  }

  Value *compareSwap(Value *x, Value *flip, int i) {
    Value *y = partner(x, i);
    Val gt = c_.L.compare(CmpOp::Gt, Val::dyn(x), Val::dyn(y), loc_);
    int64_t n = x->type()->numElements();
    Value *want = b_.binary(Opcode::Xor, loc_, flip, bit(n, i));
    Value *take = b_.binary(Opcode::Xor, loc_, gt.v, want);
    return b_.select(loc_, take, y, x);
  }
};

} // namespace

std::optional<Val> BuiltinCall::lowerSort() {
  if (info.id != BuiltinId::Sort && info.id != BuiltinId::Topk)
    return std::nullopt; // another family's
  bool isTopk = info.id == BuiltinId::Topk;
  Value *x = tensor("x");
  if (!x)
    return Val::error();
  if (!x->type()->isTensor() || x->type()->isPointerLike())
    return L.fail(args.loc("x"),
                  fmt::format("{} needs a tensor of numbers, got {}", name, typeStr(x)));
  unsigned rank = x->type()->rank();
  Val d = args.get("dim");
  std::optional<int64_t> a = constInt(
      L, d.kind == Val::Kind::None ? Val::ofInt(int64_t(rank) - 1) : d, args.loc("dim"), "dim");
  std::optional<int> dim = a ? axisFor(L, *a, rank, args.loc("dim"), x->type()) : std::nullopt;
  if (!dim)
    return Val::error();
  std::optional<bool> descending = true;
  if (args.has("descending") || !isTopk) {
    descending = L.constTruth(args.get("descending"));
    if (!descending || !args.get("descending").isConst())
      return L.fail(args.loc("descending"),
                    fmt::format("{}: descending must be a compile-time bool, got {}", name,
                                describe(args.get("descending"))));
  }
  int64_t n = x->type()->shape()[*dim];
  int64_t keep = n;
  if (isTopk) {
    std::optional<int64_t> kv = constInt(L, args.get("k"), args.loc("k"), "k");
    if (!kv)
      return Val::error();
    if (!isPowerOfTwo(*kv) || *kv > n)
      return L.fail(args.loc("k"),
                    fmt::format("tk.topk: k must be a power of two no larger than the size of "
                                "dimension {} ({}), got {}",
                                *dim, n, *kv));
    keep = *kv;
  }

  // The sorted dimension last (Triton sorts only the last one; others move
  // there and back).
  std::vector<int64_t> toLast, back(rank);
  for (unsigned i = 0; i < rank; ++i)
    if (int(i) != *dim)
      toLast.push_back(i);
  toLast.push_back(*dim);
  for (unsigned i = 0; i < rank; ++i)
    back[toLast[i]] = i;
  Value *y = int(rank) - 1 == *dim ? x : b.trans(loc, x, toLast);
  std::vector<int64_t> shape = y->type()->shape();

  Bitonic net(*this, x->type()->elementType());
  int logN = log2Of(n), logK = log2Of(keep);
  int last = *descending ? 1 : 0;
  Value *h = b.reshape(loc, y, {y->type()->numElements()});
  for (int s = 1; s <= logK; ++s)
    h = net.merge(h, s, s < logN ? 2 : last);
  for (int s = logK + 1; s <= logN; ++s) {
    h = net.halve(h, logK, *descending);
    h = net.merge(h, logK, s < logN ? 2 : last);
  }
  shape.back() = keep;
  h = b.reshape(loc, h, shape);
  return Val::dyn(int(rank) - 1 == *dim ? h : b.trans(loc, h, back));
}

} // namespace tk::astir
