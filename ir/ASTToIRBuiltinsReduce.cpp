// The reductions and scans: tk.sum / max / min / argmax / argmin / xor_sum
// (axis=None flattens first; keep_dims), tk.reduce and tk.associative_scan
// with a @tk.jit combine function inlined into the op's region, and
// tk.cumsum / cumprod.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

// sum/max/min/argmax/argmin/xor_sum with axis=None and keep_dims.
Val BuiltinCall::reduce(const std::string &kind) {
  Value *x = tensor("input");
  if (!x)
    return Val::error();
  if (!x->type()->isTensor())
    return fail(fmt::format("{} needs a tensor, got {}", name, typeStr(x)));
  if (x->type()->isPointerLike())
    return fail(fmt::format("{} needs numeric elements, got {}", name, typeStr(x)));
  if (args.has("dtype")) {
    Val d = args.get("dtype");
    if (d.kind != Val::Kind::DType)
      return fail(fmt::format("dtype must be a dtype, got {}", describe(d)));
    x = L.castTo(x, d.type, loc);
  } else if (kind == "sum" && x->type()->isIntLike() && dtypeBits(x->type()->dtype()) < 32) {
    // Small integers sum in i32 (Triton), so a block of i8 does not wrap.
    x = L.castTo(x, ctx.i32(), loc);
  }
  bool keepDims = args.has("keep_dims") && L.constTruth(args.get("keep_dims")).value_or(false);
  int axis = 0;
  if (!args.has("axis")) {
    if (x->type()->rank() != 1)
      x = b.reshape(loc, x, {x->type()->numElements()});
  } else {
    std::optional<int64_t> a = constInt(L, args.get("axis"), args.loc("axis"), "axis");
    if (!a)
      return Val::error();
    std::optional<int> n = axisFor(L, *a, x->type()->rank(), args.loc("axis"), x->type());
    if (!n)
      return Val::error();
    axis = *n;
  }
  unsigned rank = x->type()->rank();
  Value *r;
  if (kind == "xor_sum") {
    if (!x->type()->isIntLike())
      return fail(fmt::format("{} needs integer elements, got {}", name, typeStr(x)));
    Operation *op = b.createReduce(loc, {x}, axis);
    Builder::InsertionGuard g(b);
    b.setInsertionPointToEnd(&op->body());
    b.yield(loc, {b.binary(Opcode::Xor, loc, op->body().argument(0), op->body().argument(1))});
    r = op->result();
  } else {
    r = b.reduce(loc, x, axis, kind);
  }
  if (keepDims) {
    if (!args.has("axis")) {
      std::vector<int64_t> ones(rank, 1);
      r = b.splat(loc, r, ones);
    } else if (r->type()->isTensor()) {
      r = b.expandDims(loc, r, axis);
    } else {
      r = b.splat(loc, r, {1});
    }
  }
  return Val::dyn(r);
}

// histogram(input, num_bins, mask): counts[b] = #{i : input[i] == b and
// mask[i]}, as the sum over i of the one-hot [len, num_bins] comparison; a
// value outside [0, num_bins) matches no bin.
Val BuiltinCall::histogram() {
  Value *x = tensor("input");
  if (!x)
    return Val::error();
  if (!x->type()->isTensor() || x->type()->rank() != 1 || !x->type()->isIntLike() ||
      x->type()->dtype() == DType::I1)
    return L.fail(args.loc("input"),
                  fmt::format("{} needs a 1-D tensor of integers, got {}", name, typeStr(x)));
  std::optional<int64_t> bins = constInt(L, args.get("num_bins"), args.loc("num_bins"), "num_bins");
  if (!bins)
    return Val::error();
  if (!isPowerOfTwo(*bins))
    return L.fail(args.loc("num_bins"),
                  fmt::format("{}: num_bins must be a power of two, got {}", name, *bins));
  int64_t len = x->type()->shape()[0];
  // The one-hot pairs are laid out with the bins first when there are many
  // bins and few values: the layout then spreads bins over threads, and each
  // thread sums its own; otherwise the values go first and the sum crosses
  // threads. (ptxas for sm_90a: 8 values into 512 bins spill 7 KB with the
  // values first and none with the bins first. Bins first at 256 values into
  // 512 bins gave wrong counts on the H200, through a convert_layout of the
  // broadcast values in shared-memory rounds, while values first was right:
  // more values stay values first.)
  bool binsFirst = len <= 64 && *bins >= len;
  int valueAxis = binsFirst ? 1 : 0;
  std::vector<int64_t> pairs =
      binsFirst ? std::vector<int64_t>{*bins, len} : std::vector<int64_t>{len, *bins};
  if (std::optional<std::string> error = tensorShapeError(pairs))
    return L.fail(loc, fmt::format("{} of {} values into {} bins: {}", name, len, *bins, *error));
  Value *mask = nullptr;
  if (args.has("mask")) {
    mask = tensor("mask");
    if (!mask)
      return Val::error();
    if (mask->type()->dtype() != DType::I1 ||
        (mask->type()->isTensor() && mask->type()->shape() != x->type()->shape()))
      return L.fail(args.loc("mask"),
                    fmt::format("{}: mask must be a bool scalar or a tensor<{}xi1>, got {}", name,
                                len, typeStr(mask)));
  }
  // Compare in the wider of the input's type and i32 (the bins' index type).
  Type *elem = x->type()->elementType();
  if (dtypeBits(elem->dtype()) < 32)
    x = L.castTo(x, isSigned(elem->dtype()) ? ctx.i32() : ctx.scalar(DType::U32), loc);
  Value *binIds = L.castTo(b.makeRange(loc, 0, *bins), x->type()->elementType(), loc);
  auto spread = [&](Value *v, int axis) {
    return v->type()->isTensor() ? b.broadcast(loc, b.expandDims(loc, v, 1 - axis), pairs)
                                 : L.broadcastTo(v, pairs, loc);
  };
  // The layout pass takes the first operand's layout: the operand laid out
  // first goes first.
  Value *values = spread(x, valueAxis), *ids = spread(binIds, 1 - valueAxis);
  Value *hit = binsFirst ? b.cmpi(loc, "eq", ids, values) : b.cmpi(loc, "eq", values, ids);
  if (mask)
    hit = b.binary(Opcode::And, loc, hit, spread(mask, valueAxis));
  return Val::dyn(b.reduce(loc, L.castTo(hit, ctx.i32(), loc), valueAxis, "sum"));
}

// reduce / associative_scan with a @tk.jit combine function.
Val BuiltinCall::combine(bool isScan) {
  Val in = args.get("input");
  std::vector<Val> inputs = in.kind == Val::Kind::Tuple ? in.elts : std::vector<Val>{in};
  std::vector<Value *> operands;
  for (const Val &v : inputs) {
    if (!v.isDyn() || !v.v->type()->isTensor())
      return fail(fmt::format("{} needs tensors, got {}", name, describe(v)));
    operands.push_back(v.v);
  }
  if (operands.empty())
    return fail(fmt::format("{} needs at least one tensor, got an empty tuple", name));
  Val fn = args.get("combine_fn");
  if (fn.kind != Val::Kind::Func)
    return fail(fmt::format("combine_fn must be a @tk.jit function, got {}", describe(fn)));
  std::optional<int64_t> a = constInt(L, args.get("axis"), args.loc("axis"), "axis");
  if (!a)
    return Val::error();
  std::optional<int> axis = axisFor(L, *a, operands[0]->type()->rank(), loc, operands[0]->type());
  if (!axis)
    return Val::error();
  for (Value *v : operands)
    if (v->type()->shape() != operands[0]->type()->shape())
      return fail(fmt::format("{} inputs must have one shape, got {} and {}", name,
                              typeStr(operands[0]), typeStr(v)));
  bool reverse = args.has("reverse") && L.constTruth(args.get("reverse")).value_or(false);
  Operation *op =
      isScan ? b.createScan(loc, operands, *axis, reverse) : b.createReduce(loc, operands, *axis);
  {
    Builder::InsertionGuard g(b);
    b.setInsertionPointToEnd(&op->body());
    std::vector<Val> blockArgs;
    for (Value *v : op->body().arguments())
      blockArgs.push_back(Val::dyn(v));
    std::vector<Value *> results;
    if (!L.inlineCombiner(fn.fn, blockArgs, loc, results))
      return Val::error();
    b.yield(loc, results);
  }
  std::vector<Value *> rs = op->results();
  if (!isScan && args.has("keep_dims") && L.constTruth(args.get("keep_dims")).value_or(false))
    for (Value *&r : rs)
      r = r->type()->isTensor() ? b.expandDims(loc, r, *axis) : b.splat(loc, r, {1});
  // A tuple in gives a tuple out, one element or more (Triton's rule:
  // `s, = tl.reduce((x,), 0, f)`); a bare tensor gives a bare result.
  if (in.kind != Val::Kind::Tuple)
    return Val::dyn(rs[0]);
  std::vector<Val> elts;
  for (Value *r : rs)
    elts.push_back(Val::dyn(r));
  return Val::tuple(elts);
}

// tk.map_elementwise(scalar_fn, *args, pack=1): one map_elementwise op over
// the args broadcast to one shape, scalar_fn inlined into its body on
// scalars. Its result types are what scalar_fn returns, known only after
// inlining: it goes into a result-less draft first, whose body then moves
// into the real op (as a dynamic if's branches do).
Val BuiltinCall::mapElementwise() {
  Val fn = args.get("scalar_fn");
  if (fn.kind != Val::Kind::Func)
    return L.fail(
        args.loc("scalar_fn"),
        fmt::format("{}'s scalar_fn must be a @tk.jit function, got {}", name, describe(fn)));
  int64_t pack = 1;
  if (args.has("pack")) {
    Val packVal = args.get("pack");
    if (packVal.kind != Val::Kind::Int || !isPowerOfTwo(packVal.i))
      return L.fail(args.loc("pack"),
                    fmt::format("{}'s pack must be a compile-time power of two, got {}", name,
                                describe(packVal)));
    pack = packVal.i;
  }
  if (args.rest.empty())
    return fail(fmt::format("{} needs at least one argument after scalar_fn", name));
  std::vector<Value *> xs;
  std::vector<int64_t> shape;
  if (!broadcastValues(args.rest, loc, xs, shape))
    return Val::error();
  int64_t numElements = 1;
  for (int64_t d : shape)
    numElements *= d;
  if (numElements % pack != 0)
    return L.fail(args.loc("pack"),
                  fmt::format("{}'s pack ({}) must divide the number of elements of the "
                              "broadcast args ({}{})",
                              name, pack, numElements, shape.empty() ? ", a scalar" : ""));

  AttrDict attrs;
  attrs.set("pack", pack);
  Operation *draft = b.create(Opcode::MapElementwise, loc, xs, {}, attrs, 1);
  std::vector<Val> scalars;
  for (Value *x : xs)
    for (int64_t j = 0; j < pack; ++j)
      scalars.push_back(Val::dyn(draft->body().addArgument(x->type()->elementType())));
  std::vector<Value *> yields;
  {
    Builder::InsertionGuard g(b);
    b.setInsertionPointToEnd(&draft->body());
    Val r = L.inlineCall(fn.fn, scalars, {}, loc);
    if (!r.ok())
      return Val::error();
    std::vector<Val> flat = r.kind == Val::Kind::Tuple ? r.elts : std::vector<Val>{r};
    if (r.kind == Val::Kind::None || flat.empty() || flat.size() % size_t(pack) != 0)
      return fail(fmt::format("{}'s scalar_fn '{}' must return pack ({}) values per result, "
                              "returns {}",
                              name, fn.fn->name, pack, describe(r)));
    for (const Val &v : flat) {
      Value *y = L.materialize(v, loc);
      if (!y)
        return Val::error();
      if (y->type()->isTensor())
        return fail(fmt::format("{}'s scalar_fn '{}' must return scalars, returns {}", name,
                                fn.fn->name, typeStr(y)));
      yields.push_back(y);
    }
    b.yield(loc, yields);
  }
  std::vector<Type *> resultTypes;
  for (size_t i = 0; i < yields.size(); i += size_t(pack)) {
    Type *t = yields[i]->type();
    for (size_t j = 1; j < size_t(pack); ++j)
      if (yields[i + j]->type() != t)
        return fail(fmt::format("{}'s scalar_fn '{}' returns {} and {} for elements of one "
                                "result; with pack={} it returns pack values of each result in "
                                "turn",
                                name, fn.fn->name, typeStr(yields[i]), typeStr(yields[i + j]),
                                pack));
    resultTypes.push_back(shape.empty() ? t : ctx.tensor(shape, t));
  }

  b.setInsertionPoint(draft);
  Operation *op = b.create(Opcode::MapElementwise, loc, xs, resultTypes, std::move(attrs), 1);
  for (Value *arg : draft->body().arguments())
    arg->replaceAllUsesWith(op->body().addArgument(arg->type()));
  for (Operation *inner : draft->body().opsVector())
    op->body().insert(nullptr, draft->body().remove(inner));
  draft->erase();
  b.setInsertionPointAfter(op);
  if (op->numResults() == 1)
    return Val::dyn(op->result(0));
  std::vector<Val> results;
  for (Value *res : op->results())
    results.push_back(Val::dyn(res));
  return Val::tuple(std::move(results));
}

std::optional<Val> BuiltinCall::lowerReduction() {
  switch (info.id) {
  case BuiltinId::Sum:
    return reduce("sum");
  case BuiltinId::Max:
  case BuiltinId::Min: {
    const char *kind = info.id == BuiltinId::Max ? "max" : "min";
    Val r = reduce(kind);
    if (!r.ok() || !args.has("return_indices") ||
        !L.constTruth(args.get("return_indices")).value_or(false))
      return r;
    Val idx = reduce(info.id == BuiltinId::Max ? "argmax" : "argmin");
    return idx.ok() ? Val::tuple({r, idx}) : idx;
  }
  case BuiltinId::Argmax:
    return reduce("argmax");
  case BuiltinId::Argmin:
    return reduce("argmin");
  case BuiltinId::XorSum:
    return reduce("xor_sum");
  case BuiltinId::Reduce:
    return combine(false);
  case BuiltinId::AssociativeScan:
    return combine(true);
  case BuiltinId::MapElementwise:
    return mapElementwise();
  case BuiltinId::Cumsum:
  case BuiltinId::Cumprod: {
    Value *x = tensor("input");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || x->type()->isPointerLike())
      return L.fail(
          loc, fmt::format("{} needs a numeric tensor, got {}", qualifiedName(info), typeStr(x)));
    // Triton's rules: bf16 is scanned in fp32 (the result is fp32); then a
    // cumsum takes `dtype`, or widens integers narrower than 32 bits to
    // int32 / uint32 of their signedness (i1 counts as unsigned); cumprod
    // keeps the dtype.
    bool isSum = info.id == BuiltinId::Cumsum;
    if (x->type()->dtype() == DType::BF16)
      x = L.castTo(x, ctx.f32(), loc);
    if (isSum && args.has("dtype") && args.get("dtype").kind == Val::Kind::DType)
      x = L.castTo(x, args.get("dtype").type, loc);
    else if (isSum && x->type()->isIntLike() && dtypeBits(x->type()->dtype()) < 32)
      x = L.castTo(x, isSigned(x->type()->dtype()) ? ctx.i32() : ctx.scalar(DType::U32), loc);
    std::optional<int64_t> a =
        constInt(L, args.get("axis").kind == Val::Kind::None ? Val::ofInt(0) : args.get("axis"),
                 args.loc("axis"), "axis");
    std::optional<int> axis = a ? axisFor(L, *a, x->type()->rank(), loc, x->type()) : std::nullopt;
    if (!axis)
      return Val::error();
    bool reverse = args.has("reverse") && L.constTruth(args.get("reverse")).value_or(false);
    return Val::dyn(
        b.scan(loc, x, *axis, info.id == BuiltinId::Cumsum ? "cumsum" : "cumprod", reverse));
  }
  case BuiltinId::Histogram:
    return histogram();
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
