// The shape builtins: broadcast / broadcast_to, expand_dims, reshape / view
// / ravel, permute / trans, and flip, join, split, interleave and cat, which
// are built from reshapes, selects and reductions over an axis.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tk::astir {

using namespace ast;

namespace {

// Element 0 (or, with `right`, element 1) of each line of a 2-long axis: a
// reduction whose combiner keeps its left (right) operand, exact for every
// dtype, pointers included (the combiner's left operand is the lower
// position, in the interpreter and on the GPU).
Value *pickOfPair(Builder &b, SourceLoc loc, Value *x, int axis, bool right) {
  Operation *op = b.createReduce(loc, {x}, axis);
  Builder::InsertionGuard g(b);
  b.setInsertionPointToEnd(&op->body());
  b.yield(loc, {op->body().argument(right ? 1 : 0)});
  return op->result();
}

} // namespace

std::optional<Val> BuiltinCall::lowerShape() {
  switch (info.id) {
  case BuiltinId::BroadcastTo: {
    Value *x = tensor("input");
    std::vector<Val> dims = args.rest;
    if (dims.size() == 1 && dims[0].kind == Val::Kind::Tuple)
      dims = dims[0].elts;
    std::optional<std::vector<int64_t>> shape = shapeOf(L, Val::tuple(dims), loc);
    if (!x || !shape)
      return Val::error();
    Value *r = L.broadcastTo(x, *shape, loc);
    return r ? Val::dyn(r) : Val::error();
  }
  case BuiltinId::Broadcast: {
    Value *x, *y;
    if (!L.unify(args.get("input"), args.get("other"), loc, x, y, "tk.broadcast", false))
      return Val::error();
    return Val::tuple({Val::dyn(x), Val::dyn(y)});
  }
  case BuiltinId::ExpandDims: {
    // One axis or a tuple of them (Triton's), each counted in the result's
    // rank; negative ones from the end.
    Value *x = tensor("input");
    if (!x)
      return Val::error();
    Val axisArg = args.get("axis");
    std::vector<Val> given = axisArg.kind == Val::Kind::Tuple ? axisArg.elts : std::vector{axisArg};
    int64_t rank = x->type()->rank() + int64_t(given.size());
    std::vector<int64_t> axes;
    for (const Val &g : given) {
      std::optional<int64_t> a = constInt(L, g, args.loc("axis"), "axis");
      if (!a)
        return Val::error();
      int64_t axis = *a < 0 ? *a + rank : *a;
      if (axis < 0 || axis >= rank)
        return L.fail(args.loc("axis"),
                      fmt::format("invalid axis {} for expand_dims of {}: the result has rank {}, "
                                  "so an axis is in [{}, {}]",
                                  *a, typeStr(x), rank, -rank, rank - 1));
      axes.push_back(axis);
    }
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return L.fail(args.loc("axis"),
                    fmt::format("expand_dims of {} has duplicate axes, normalized axes = [{}]",
                                typeStr(x), fmt::join(axes, ", ")));
    for (int64_t axis : sorted)
      x = x->type()->isTensor() ? b.expandDims(loc, x, int(axis)) : b.splat(loc, x, {1});
    return Val::dyn(x);
  }
  case BuiltinId::Reshape:
  case BuiltinId::View:
  case BuiltinId::Ravel: {
    Value *x = tensor(args.sig->params[0].name);
    if (!x)
      return Val::error();
    std::vector<int64_t> shape{x->type()->numElements()};
    if (info.id != BuiltinId::Ravel) {
      std::vector<Val> dims = args.rest;
      if (dims.size() == 1 && dims[0].kind == Val::Kind::Tuple)
        dims = dims[0].elts;
      std::optional<std::vector<int64_t>> s = shapeOf(L, Val::tuple(dims), loc);
      if (!s)
        return Val::error();
      shape = *s;
    }
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (!x->type()->isTensor() || n != x->type()->numElements())
      return L.fail(loc, fmt::format("cannot reshape {} ({} elements) to {} ({} elements)",
                                     typeStr(x), x->type()->numElements(), shapeStr(shape), n));
    return Val::dyn(b.reshape(loc, x, shape));
  }
  case BuiltinId::Permute:
  case BuiltinId::Trans: {
    Value *x = tensor("input");
    if (!x)
      return Val::error();
    std::vector<Val> dims = args.rest;
    if (dims.size() == 1 && dims[0].kind == Val::Kind::Tuple)
      dims = dims[0].elts;
    std::vector<int64_t> order;
    for (const Val &d : dims) {
      if (d.kind != Val::Kind::Int)
        return L.fail(loc,
                      fmt::format("dimensions must be compile-time integers, got {}", describe(d)));
      order.push_back(d.i);
    }
    unsigned rank = x->type()->rank();
    // tk.trans without dimensions swaps the last two (a batched 2-D
    // transpose), as Triton's does.
    if (order.empty() && info.id == BuiltinId::Trans && rank >= 2) {
      for (unsigned i = 0; i < rank; ++i)
        order.push_back(i);
      std::swap(order[rank - 2], order[rank - 1]);
    }
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = sorted.size() == rank;
    for (size_t i = 0; perm && i < rank; ++i)
      perm = sorted[i] == int64_t(i);
    if (!perm)
      return L.fail(loc, fmt::format("{} is not a permutation of the dimensions of {}",
                                     shapeStr(order), typeStr(x)));
    return Val::dyn(b.trans(loc, x, order));
  }
  case BuiltinId::Gather: {
    // Triton's rules: one rank, index's dimensions equal src's except along
    // axis, an integer index; the result has index's shape.
    Value *src = tensor("src"), *index = tensor("index");
    if (!src || !index)
      return Val::error();
    if (!src->type()->isTensor())
      return L.fail(args.loc("src"),
                    fmt::format("tk.gather needs a tensor src, got {}", typeStr(src)));
    if (!index->type()->isTensor() || index->type()->isPointerLike() ||
        !isInteger(index->type()->dtype()) || index->type()->dtype() == DType::I1)
      return L.fail(
          args.loc("index"),
          fmt::format("tk.gather needs a tensor of integers as index, got {}", typeStr(index)));
    unsigned rank = src->type()->rank();
    if (index->type()->rank() != rank)
      return L.fail(args.loc("index"),
                    fmt::format("tk.gather: src and index must have the same rank, got {} and {}",
                                typeStr(src), typeStr(index)));
    std::optional<int64_t> a = constInt(L, args.get("axis"), args.loc("axis"), "axis");
    std::optional<int> axis =
        a ? axisFor(L, *a, rank, args.loc("axis"), src->type()) : std::nullopt;
    if (!axis)
      return Val::error();
    const std::vector<int64_t> &ss = src->type()->shape(), &is = index->type()->shape();
    for (unsigned d = 0; d < rank; ++d)
      if (int(d) != *axis && ss[d] != is[d])
        return L.fail(args.loc("index"),
                      fmt::format("tk.gather: index {} must match src {} in every dimension but "
                                  "axis {} (dimension {} is {} and {})",
                                  shapeStr(is), shapeStr(ss), *axis, d, is[d], ss[d]));
    return Val::dyn(b.gather(loc, src, index, *axis));
  }
  case BuiltinId::Flip: {
    // Reversing an axis of 2^s elements reverses the s bits of the index: the
    // axis is split into s axes of 2 and each is swapped, picking each half
    // by a sum over the axis with the other half zeroed. The sums run on the
    // integer bits (floats through a same-width bitcast), so they are exact.
    Value *x = tensor("x");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || x->type()->isPointerLike())
      return L.fail(loc, fmt::format("tk.flip needs a numeric tensor, got {}", typeStr(x)));
    unsigned rank = x->type()->rank();
    Val d = args.get("dim");
    std::optional<int64_t> a = constInt(
        L, d.kind == Val::Kind::None ? Val::ofInt(int64_t(rank) - 1) : d, args.loc("dim"), "dim");
    std::optional<int> axis = a ? axisFor(L, *a, rank, loc, x->type()) : std::nullopt;
    if (!axis)
      return Val::error();
    std::vector<int64_t> shape = x->type()->shape();
    int bits = 0;
    while ((int64_t(1) << bits) < shape[*axis])
      ++bits;
    if (bits == 0)
      return Val::dyn(x);
    Type *elem = x->type()->elementType();
    DType dt = x->type()->dtype();
    Type *word = dt == DType::I1 ? ctx.scalar(DType::I8)
                 : isFloat(dt)   ? ctx.scalar(dtypeBits(dt) == 16   ? DType::I16
                                              : dtypeBits(dt) == 32 ? DType::I32
                                                                    : DType::I64)
                                 : elem;
    Value *y = L.castTo(x, word, loc, /*bitcast=*/isFloat(dt));
    if (!y)
      return Val::error();
    std::vector<int64_t> split(shape.begin(), shape.begin() + *axis);
    split.insert(split.end(), size_t(bits), 2);
    split.insert(split.end(), shape.begin() + *axis + 1, shape.end());
    y = b.reshape(loc, y, split);
    Value *zero = L.broadcastTo(b.constantInt(loc, 0, word), split, loc);
    for (int j = 0; j < bits; ++j) {
      int at = *axis + j;
      std::vector<int64_t> laneShape(split.size(), 1);
      laneShape[at] = 2;
      Value *lane = b.reshape(loc, b.makeRange(loc, 0, 2), laneShape);
      Val low = L.binary(BinaryOp::Sub, Val::ofInt(1), Val::dyn(lane), loc);
      if (!low.isDyn())
        return Val::error();
      Value *isLow = L.broadcastTo(L.castTo(low.v, ctx.i1(), loc), split, loc);
      auto half = [&](bool wantLow) {
        Value *kept = wantLow ? b.select(loc, isLow, y, zero) : b.select(loc, isLow, zero, y);
        Value *r = b.reduce(loc, kept, at, "sum");
        r = r->type()->isTensor() ? b.expandDims(loc, r, at) : b.splat(loc, r, {1});
        return L.broadcastTo(r, split, loc);
      };
      y = b.select(loc, isLow, half(false), half(true));
    }
    y = b.reshape(loc, y, shape);
    return Val::dyn(dt == DType::I1 ? L.castTo(y, elem, loc) : L.castTo(y, elem, loc, isFloat(dt)));
  }
  case BuiltinId::Join:
  case BuiltinId::Cat: {
    // join(a, b): a new minor dimension of 2, [..., 0] = a and [..., 1] = b,
    // built as a select over a broadcast; cat(a, b) along dimension 0 is
    // join's result with that dimension moved to the front and merged.
    bool isCat = info.id == BuiltinId::Cat;
    Value *x, *y;
    if (!L.unify(args.get(isCat ? "input" : "a"), args.get(isCat ? "other" : "b"), loc, x, y,
                 isCat ? "tk.cat" : "tk.join"))
      return Val::error();
    if (isCat && (!x->type()->isTensor() || x->type()->rank() == 0))
      return L.fail(loc, fmt::format("tk.cat needs tensors, got {}", typeStr(x)));
    std::vector<int64_t> shape = x->type()->shape();
    std::vector<int64_t> joined = shape;
    joined.push_back(2);
    if (std::optional<std::string> error = tensorShapeError(joined))
      return L.fail(loc, fmt::format("{} of {}: {}", name, typeStr(x), *error));
    auto minor = [&](Value *v) {
      return L.broadcastTo(v->type()->isTensor() ? b.expandDims(loc, v, int(shape.size()))
                                                 : b.splat(loc, v, {1}),
                           joined, loc);
    };
    std::vector<int64_t> pickShape(joined.size(), 1);
    pickShape.back() = 2;
    Value *lane = b.reshape(loc, b.makeRange(loc, 0, 2), pickShape);
    Val first = L.binary(BinaryOp::Sub, Val::ofInt(1), Val::dyn(lane), loc);
    if (!first.isDyn())
      return Val::error();
    Value *pick = L.broadcastTo(L.castTo(first.v, ctx.i1(), loc), joined, loc);
    Value *j = b.select(loc, pick, minor(x), minor(y));
    if (!isCat)
      return Val::dyn(j);
    std::vector<int64_t> order = {int64_t(shape.size())};
    for (size_t i = 0; i < shape.size(); ++i)
      order.push_back(int64_t(i));
    std::vector<int64_t> out = shape;
    out[0] *= 2;
    return Val::dyn(b.reshape(loc, b.trans(loc, j, order), out));
  }
  case BuiltinId::Split: {
    // Triton's inverse of join: [..., 2] -> two [...] (two scalars for [2]).
    Value *x = tensor("a");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || x->type()->shape().back() != 2)
      return L.fail(args.loc("a"), fmt::format("tk.split needs a tensor whose last dimension is "
                                               "2, got {}",
                                               typeStr(x)));
    int axis = int(x->type()->rank()) - 1;
    return Val::tuple({Val::dyn(pickOfPair(b, loc, x, axis, false)),
                       Val::dyn(pickOfPair(b, loc, x, axis, true))});
  }
  case BuiltinId::Interleave: {
    // tk.join along a new minor dimension, merged into the last one:
    // [a0, b0, a1, b1, ...]; two scalars give [a, b].
    Args joinArgs = args;
    std::optional<Val> j = BuiltinCall(L, builtinInfo(BuiltinId::Join), joinArgs, loc).lowerShape();
    if (!j || !j->isDyn())
      return Val::error();
    std::vector<int64_t> shape = j->v->type()->shape();
    if (shape.size() == 1)
      return *j;
    shape.pop_back();
    shape.back() *= 2;
    return Val::dyn(b.reshape(loc, j->v, shape));
  }
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
