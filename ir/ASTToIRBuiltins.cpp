// The builtin families: each tk.* or Python builtin, its arguments bound by
// ASTToIRCalls.cpp, lowered to its ops.
#include "ir/ASTToIRArgs.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tk::astir {

using namespace ast;

namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// A dimension list: an int, or a tuple of ints (tk.zeros([M, N]), reshape(x, M, N)).
std::optional<std::vector<int64_t>> shapeOf(Lowerer &L, const Val &v, SourceLoc loc,
                                            bool powerOfTwo = true) {
  std::vector<Val> elts = v.kind == Val::Kind::Tuple ? v.elts : std::vector<Val>{v};
  std::vector<int64_t> shape;
  for (const Val &e : elts) {
    if (e.kind != Val::Kind::Int) {
      L.fail(loc, fmt::format("a shape must be compile-time integers, got {}", describe(v)));
      return std::nullopt;
    }
    if (e.i <= 0 || (powerOfTwo && !isPowerOfTwo(e.i))) {
      L.fail(loc, fmt::format("tensor dimensions must be powers of two, got {} in {}", e.i,
                              describe(v)));
      return std::nullopt;
    }
    shape.push_back(e.i);
  }
  return shape;
}

std::optional<int64_t> constInt(Lowerer &L, const Val &v, SourceLoc loc, const char *what) {
  if (v.kind == Val::Kind::Int || v.kind == Val::Kind::Bool)
    return v.i;
  L.fail(loc, fmt::format("{} must be a compile-time integer, got {}", what, describe(v)));
  return std::nullopt;
}

// Normalises a possibly negative axis for a rank; reports one out of range.
std::optional<int> axisFor(Lowerer &L, int64_t axis, unsigned rank, SourceLoc loc, Type *t) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= int64_t(rank)) {
    L.fail(loc, fmt::format("axis {} is out of range for {}", axis, t->str()));
    return std::nullopt;
  }
  return int(a);
}

} // namespace

//===----------------------------------------------------------------------===//
// The builtin families
//===----------------------------------------------------------------------===//

namespace {

class BuiltinLowering {
public:
  BuiltinLowering(Lowerer &l, Args &a, SourceLoc loc, std::string name)
      : L(l), b(l.builder()), ctx(l.ctx()), args(a), loc(loc), name(std::move(name)) {}

  Lowerer &L;
  Builder &b;
  IRContext &ctx;
  Args &args;
  SourceLoc loc;
  std::string name; // "tk.load", for messages

  Val fail(std::string msg) { return L.fail(loc, std::move(msg)); }

  // A tensor (or scalar) IR operand named `param`.
  Value *tensor(std::string_view param) {
    Val v = args.get(param);
    Value *r = L.materialize(v, args.loc(param));
    return r;
  }

  Val elementwiseMath(Opcode op, bool floatsOnly) {
    Value *x = tensor(args.sig->params[0].name);
    if (!x)
      return Val::error();
    if (x->type()->isPointerLike() || (floatsOnly && !x->type()->isFloatLike()))
      return fail(fmt::format("{} needs a {} operand, got {}", name,
                              floatsOnly ? "float" : "numeric", typeStr(x)));
    return Val::dyn(b.unary(op, loc, x));
  }

  Val minMax(bool isMax, const Val &x, const Val &y) {
    Value *a, *c;
    if (!L.unify(x, y, loc, a, c, isMax ? "maximum" : "minimum"))
      return Val::error();
    if (a->type()->isPointerLike())
      return fail(fmt::format("{} needs numeric operands, got {}", name, typeStr(a)));
    return Val::dyn(isMax ? b.max(loc, a, c, "number") : b.min(loc, a, c, "number"));
  }

  // sum/max/min/argmax/argmin/xor_sum with axis=None and keep_dims.
  Val reduce(const std::string &kind) {
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

  // reduce / associative_scan with a @tk.jit combine function.
  Val combine(bool isScan) {
    Val in = args.get("input");
    std::vector<Val> inputs = in.kind == Val::Kind::Tuple ? in.elts : std::vector<Val>{in};
    std::vector<Value *> operands;
    for (const Val &v : inputs) {
      if (!v.isDyn() || !v.v->type()->isTensor())
        return fail(fmt::format("{} needs tensors, got {}", name, describe(v)));
      operands.push_back(v.v);
    }
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
    if (rs.size() == 1)
      return Val::dyn(rs[0]);
    std::vector<Val> elts;
    for (Value *r : rs)
      elts.push_back(Val::dyn(r));
    return Val::tuple(elts);
  }

  // Pointer, optional mask and value operands of load/store/atomics, all
  // broadcast to one shape; the value is cast to the pointee type.
  bool memoryOperands(Value *&ptr, Value *&mask, Value *&value, const char *valueParam) {
    ptr = tensor("pointer");
    if (!ptr)
      return false;
    if (!ptr->type()->isPointerLike()) {
      fail(fmt::format("{} needs a pointer or a tensor of pointers, got {}", name, typeStr(ptr)));
      return false;
    }
    std::vector<int64_t> shape = ptr->type()->shape();
    mask = nullptr;
    value = nullptr;
    auto widen = [&](Value *v, SourceLoc at) {
      std::optional<std::vector<int64_t>> s = L.broadcastShapes(shape, v->type()->shape(), at);
      if (!s)
        return false;
      shape = *s;
      return true;
    };
    if (args.has("mask")) {
      mask = tensor("mask");
      if (!mask)
        return false;
      if (mask->type()->elementType() != ctx.i1()) {
        L.fail(args.loc("mask"),
               fmt::format("mask must be a boolean (i1) tensor, got {}", typeStr(mask)));
        return false;
      }
      if (!widen(mask, args.loc("mask")))
        return false;
    }
    Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
    if (valueParam && args.has(valueParam)) {
      value = L.materialize(args.get(valueParam), args.loc(valueParam), pointee);
      if (!value)
        return false;
      if (value->type()->isPointerLike() != pointee->isPointer()) {
        L.fail(args.loc(valueParam),
               fmt::format("cannot store {} through {}", typeStr(value), typeStr(ptr)));
        return false;
      }
      value = L.castTo(value, pointee, args.loc(valueParam));
      if (!value || !widen(value, args.loc(valueParam)))
        return false;
    }
    ptr = L.broadcastTo(ptr, shape, loc);
    if (mask)
      mask = L.broadcastTo(mask, shape, args.loc("mask"));
    if (value)
      value = L.broadcastTo(value, shape, args.loc(valueParam));
    return ptr && (!args.has("mask") || mask) && (!valueParam || !args.has(valueParam) || value);
  }

  void cacheAttrs(Operation *op) {
    auto str = [&](std::string_view p, const char *attr) {
      Val v = args.get(p);
      if (v.kind == Val::Kind::Str && !v.s.empty())
        op->setAttr(attr, v.s);
    };
    str("cache_modifier", "cache");
    str("eviction_policy", "evict");
  }

  Val atomic(const std::string &kind) {
    Value *ptr, *mask, *val;
    if (!memoryOperands(ptr, mask, val, "val"))
      return Val::error();
    if (!val)
      return fail(fmt::format("{} needs a value", name));
    Value *r = b.atomicRMW(loc, kind, ptr, val, mask);
    for (const char *p : {"sem", "scope"})
      if (Val v = args.get(p); v.kind == Val::Kind::Str)
        r->definingOp()->setAttr(p, v.s);
    return Val::dyn(r);
  }

  // tk.multiple_of / max_contiguous / max_constancy: a promise about the
  // value, recorded on its defining op (or on the kernel argument) for the
  // axis analysis; the value itself is unchanged.
  Val hint(const char *attr) {
    Val x = args.get("input");
    if (!x.isDyn())
      return fail(fmt::format("{} needs a tensor or scalar value, got {}", name, describe(x)));
    Val vs = args.get("values");
    std::vector<Val> elts = vs.kind == Val::Kind::Tuple ? vs.elts : std::vector<Val>{vs};
    std::vector<int64_t> values;
    for (const Val &e : elts) {
      if (e.kind != Val::Kind::Int || e.i <= 0)
        return fail(
            fmt::format("{} needs positive compile-time integers, got {}", name, describe(vs)));
      values.push_back(e.i);
    }
    unsigned rank = std::max(1u, x.v->type()->rank());
    if (values.size() == 1 && rank > 1)
      values.assign(rank, values[0]);
    if (values.size() != rank)
      return fail(fmt::format("{} needs one value per dimension of {}, got {}", name, typeStr(x.v),
                              values.size()));
    if (Operation *def = x.v->definingOp()) {
      def->setAttr(attr, values);
    } else if (x.v->ownerBlock() && !x.v->ownerBlock()->parentOp() &&
               std::string_view(attr) == "multiple_of") {
      Function *fn = x.v->ownerBlock()->parent()->parentFunction();
      if (fn)
        fn->argAttrs(x.v->index()).set("divisibility", values[0]);
    }
    return x;
  }
};

} // namespace

Val lowerBuiltin(Lowerer &L, const BuiltinInfo &info, Args &args, SourceLoc loc) {
  BuiltinLowering B(L, args, loc, qualifiedName(info));
  Builder &b = L.builder();
  IRContext &ctx_ = L.ctx();

  switch (info.id) {
  case BuiltinId::ProgramId:
  case BuiltinId::NumPrograms: {
    std::optional<int64_t> axis = constInt(L, args.get("axis"), args.loc("axis"), "axis");
    if (!axis)
      return Val::error();
    if (*axis < 0 || *axis > 2)
      return L.fail(args.loc("axis"),
                    fmt::format("{} axis must be 0, 1 or 2, got {}", qualifiedName(info), *axis));
    return Val::dyn(info.id == BuiltinId::ProgramId ? b.programId(loc, int(*axis))
                                                    : b.numPrograms(loc, int(*axis)));
  }
  case BuiltinId::Arange: {
    std::optional<int64_t> lo = constInt(L, args.get("start"), args.loc("start"), "start");
    std::optional<int64_t> hi =
        lo ? constInt(L, args.get("end"), args.loc("end"), "end") : std::nullopt;
    if (!hi)
      return Val::error();
    if (*hi <= *lo)
      return L.fail(
          loc, fmt::format("tk.arange({}, {}) is empty: end must be greater than start", *lo, *hi));
    if (!isPowerOfTwo(*hi - *lo))
      return L.fail(loc, fmt::format("tk.arange({}, {}) has {} elements; the size must be a power "
                                     "of two",
                                     *lo, *hi, *hi - *lo));
    if (*lo < 0 || *hi > (int64_t(1) << 31))
      return L.fail(loc, fmt::format("tk.arange({}, {}) does not fit in int32", *lo, *hi));
    return Val::dyn(b.makeRange(loc, *lo, *hi));
  }
  case BuiltinId::Zeros:
  case BuiltinId::Full: {
    std::optional<std::vector<int64_t>> shape = shapeOf(L, args.get("shape"), args.loc("shape"));
    if (!shape)
      return Val::error();
    Val d = args.get("dtype");
    if (d.kind != Val::Kind::DType || d.type->isPointer())
      return L.fail(args.loc("dtype"),
                    fmt::format("dtype must be a scalar dtype, got {}", describe(d)));
    Val value = info.id == BuiltinId::Zeros ? Val::ofInt(0) : args.get("value");
    Value *v = L.materialize(value, args.loc("value"), d.type);
    if (!v)
      return Val::error();
    v = L.castTo(v, d.type, loc);
    return Val::dyn(shape->empty() ? v : L.broadcastTo(v, *shape, loc));
  }
  case BuiltinId::ZerosLike: {
    Value *x = B.tensor("input");
    if (!x)
      return Val::error();
    Value *zero =
        L.castTo(L.materialize(Val::ofInt(0), loc, x->type()), x->type()->elementType(), loc);
    return Val::dyn(L.broadcastTo(zero, x->type()->shape(), loc));
  }
  case BuiltinId::Cast: {
    Value *x = B.tensor("input");
    Val d = args.get("dtype");
    if (!x)
      return Val::error();
    if (d.kind != Val::Kind::DType)
      return L.fail(args.loc("dtype"), fmt::format("dtype must be a dtype, got {}", describe(d)));
    bool bitcast = args.has("bitcast") && L.constTruth(args.get("bitcast")).value_or(false);
    Value *r = L.castTo(x, d.type, loc, bitcast);
    return r ? Val::dyn(r) : Val::error();
  }
  case BuiltinId::Load: {
    Value *ptr, *mask, *unused;
    if (!B.memoryOperands(ptr, mask, unused, nullptr))
      return Val::error();
    Value *other = nullptr;
    if (args.has("other")) {
      if (!mask)
        return L.fail(args.loc("other"), "tk.load: 'other' needs a mask");
      Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
      other = L.materialize(args.get("other"), args.loc("other"), pointee);
      if (!other)
        return Val::error();
      other = L.castTo(other, pointee, args.loc("other"));
      other = other ? L.broadcastTo(other, ptr->type()->shape(), args.loc("other")) : nullptr;
      if (!other)
        return Val::error();
    }
    Value *r = b.load(loc, ptr, mask, other);
    B.cacheAttrs(r->definingOp());
    if (args.has("volatile") && L.constTruth(args.get("volatile")).value_or(false))
      r->definingOp()->setAttr("volatile", true);
    return Val::dyn(r);
  }
  case BuiltinId::Store: {
    Value *ptr, *mask, *value;
    if (!B.memoryOperands(ptr, mask, value, "value"))
      return Val::error();
    B.cacheAttrs(b.store(loc, ptr, value, mask));
    return Val::none();
  }
  case BuiltinId::Sum:
    return B.reduce("sum");
  case BuiltinId::Max:
  case BuiltinId::Min: {
    const char *kind = info.id == BuiltinId::Max ? "max" : "min";
    Val r = B.reduce(kind);
    if (!r.ok() || !args.has("return_indices") ||
        !L.constTruth(args.get("return_indices")).value_or(false))
      return r;
    Val idx = B.reduce(info.id == BuiltinId::Max ? "argmax" : "argmin");
    return idx.ok() ? Val::tuple({r, idx}) : idx;
  }
  case BuiltinId::Argmax:
    return B.reduce("argmax");
  case BuiltinId::Argmin:
    return B.reduce("argmin");
  case BuiltinId::XorSum:
    return B.reduce("xor_sum");
  case BuiltinId::Reduce:
    return B.combine(false);
  case BuiltinId::AssociativeScan:
    return B.combine(true);
  case BuiltinId::Cumsum:
  case BuiltinId::Cumprod: {
    Value *x = B.tensor("input");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || x->type()->isPointerLike())
      return L.fail(
          loc, fmt::format("{} needs a numeric tensor, got {}", qualifiedName(info), typeStr(x)));
    if (args.has("dtype") && args.get("dtype").kind == Val::Kind::DType)
      x = L.castTo(x, args.get("dtype").type, loc);
    else if (x->type()->isIntLike() && dtypeBits(x->type()->dtype()) < 32)
      x = L.castTo(x, ctx_.i32(), loc);
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
  case BuiltinId::Dot: {
    Value *a = B.tensor("input"), *c = a ? B.tensor("other") : nullptr;
    if (!c)
      return Val::error();
    Value *acc3 = nullptr;
    if (args.has("acc") && !(acc3 = B.tensor("acc")))
      return Val::error();
    std::string precision = a->type()->isFloatLike() ? "tf32" : "ieee";
    if (Val p = args.get("input_precision"); p.kind == Val::Kind::Str)
      precision = p.s;
    else if (args.has("allow_tf32") && !L.constTruth(args.get("allow_tf32")).value_or(true))
      precision = "ieee";
    if (precision != "ieee" && precision != "tf32" && precision != "tf32x3")
      return L.fail(args.loc("input_precision"),
                    fmt::format("input_precision must be \"ieee\", \"tf32\" or \"tf32x3\", got "
                                "\"{}\"",
                                precision));
    // One 2-D product, acc (null: zeros) added.
    auto dot2 = [&](Value *x, Value *y, Value *acc) -> Value * {
      int64_t m = x->type()->shape()[0], k = x->type()->shape()[1];
      int64_t k2 = y->type()->shape()[0], n = y->type()->shape()[1];
      if (k != k2) {
        L.fail(loc, fmt::format("tk.dot: the inner dimensions differ: {} x {}",
                                shapeStr(x->type()->shape()), shapeStr(y->type()->shape())));
        return nullptr;
      }
      if (m < 16 || n < 16 || k < 16) {
        L.fail(loc, fmt::format("tk.dot needs every dimension >= 16, got [{}, {}] x [{}, {}]", m, k,
                                k2, n));
        return nullptr;
      }
      if (x->type()->elementType() != y->type()->elementType()) {
        L.fail(loc, fmt::format("tk.dot operands must have one element type, got {} and {}",
                                typeStr(x), typeStr(y)));
        return nullptr;
      }
      Type *outElem = x->type()->isFloatLike() ? ctx_.f32() : ctx_.i32();
      if (Val od = args.get("out_dtype"); od.kind == Val::Kind::DType) {
        outElem = od.type;
        if (outElem->isFloatLike() != x->type()->isFloatLike()) {
          L.fail(args.loc("out_dtype"),
                 fmt::format("tk.dot: out_dtype is {} but {} operands need {} type", outElem->str(),
                             x->type()->elementType()->str(),
                             x->type()->isFloatLike() ? "a float (e.g. fp32)"
                                                      : "an integer (e.g. int32)"));
          return nullptr;
        }
      }
      if (acc) {
        if (acc->type()->shape() != std::vector<int64_t>{m, n}) {
          L.fail(args.loc("acc"), fmt::format("tk.dot: the accumulator is {} but the product "
                                              "is [{}, {}]",
                                              typeStr(acc), m, n));
          return nullptr;
        }
        // The verifier's rule, said here with the kernel's own words: a float
        // product sums in a float accumulator, an integer one in an integer.
        if (acc->type()->isFloatLike() != x->type()->isFloatLike()) {
          L.fail(args.loc("acc"),
                 fmt::format("tk.dot: the accumulator is {} but {} operands need {} accumulator",
                             typeStr(acc), x->type()->elementType()->str(),
                             x->type()->isFloatLike() ? "a float (e.g. fp32)"
                                                      : "an integer (e.g. int32)"));
          return nullptr;
        }
      } else {
        Value *zero = L.materialize(Val::ofInt(0), loc, outElem);
        acc = L.broadcastTo(L.castTo(zero, outElem, loc), {m, n}, loc);
      }
      return b.dot(loc, x, y, acc, precision);
    };
    unsigned ra = a->type()->rank(), rc = c->type()->rank();
    if (ra == 2 && rc == 2) {
      Value *r = dot2(a, c, acc3);
      return r ? Val::dyn(r) : Val::error();
    }
    if (ra != 3 || rc != 3 || a->type()->shape()[0] != c->type()->shape()[0] ||
        (acc3 && (acc3->type()->rank() != 3 || acc3->type()->shape()[0] != a->type()->shape()[0])))
      return L.fail(loc, fmt::format("tk.dot needs 2-D tensors, or 3-D ones with one batch "
                                     "size, got {} and {}",
                                     typeStr(a), typeStr(c)));
    // Batched (Triton's 3-D dot): one 2-D product per batch index. Slice i
    // of an operand is a sum over the batch axis with the other slices
    // zeroed (exact: the other terms are 0), and the products go back into
    // their slice by a select.
    int64_t batch = a->type()->shape()[0];
    auto isSlice = [&](const std::vector<int64_t> &shape, int64_t i) {
      std::vector<int64_t> laneShape(shape.size(), 1);
      laneShape[0] = batch;
      Value *lane = b.reshape(loc, b.makeRange(loc, 0, int32_t(batch)), laneShape);
      Value *idx =
          L.broadcastTo(b.constantInt(loc, i, lane->type()->elementType()), laneShape, loc);
      return L.broadcastTo(b.cmpi(loc, "eq", lane, idx), shape, loc);
    };
    auto slice = [&](Value *x, int64_t i) -> Value * {
      if (!x)
        return nullptr;
      std::vector<int64_t> shape = x->type()->shape();
      Value *zero =
          L.broadcastTo(L.castTo(L.materialize(Val::ofInt(0), loc, x->type()->elementType()),
                                 x->type()->elementType(), loc),
                        shape, loc);
      return b.reduce(loc, b.select(loc, isSlice(shape, i), x, zero), 0, "sum");
    };
    Value *out = nullptr;
    for (int64_t i = 0; i < batch; ++i) {
      Value *d = dot2(slice(a, i), slice(c, i), acc3 ? slice(acc3, i) : nullptr);
      if (!d)
        return Val::error();
      std::vector<int64_t> shape = {batch, d->type()->shape()[0], d->type()->shape()[1]};
      Value *wide = L.broadcastTo(b.expandDims(loc, d, 0), shape, loc);
      out = out ? b.select(loc, isSlice(shape, i), wide, out) : wide;
    }
    return Val::dyn(out);
  }
  case BuiltinId::Where: {
    Val cond = args.get("condition");
    Value *x, *y;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.where"))
      return Val::error();
    Value *c = L.materialize(cond, args.loc("condition"));
    if (!c)
      return Val::error();
    if (c->type()->elementType() != ctx_.i1())
      c = L.castTo(c, ctx_.i1(), args.loc("condition"));
    std::optional<std::vector<int64_t>> shape =
        L.broadcastShapes(c->type()->shape(), x->type()->shape(), loc);
    if (!shape)
      return Val::error();
    return Val::dyn(b.select(loc, L.broadcastTo(c, *shape, loc), L.broadcastTo(x, *shape, loc),
                             L.broadcastTo(y, *shape, loc)));
  }
  case BuiltinId::Maximum:
  case BuiltinId::Minimum:
    return B.minMax(info.id == BuiltinId::Maximum, args.get("x"), args.get("y"));
  case BuiltinId::Clamp: {
    Val lo = B.minMax(true, args.get("x"), args.get("min"));
    return lo.ok() ? B.minMax(false, lo, args.get("max")) : lo;
  }
  case BuiltinId::Exp:
    return B.elementwiseMath(Opcode::Exp, true);
  case BuiltinId::Exp2:
    return B.elementwiseMath(Opcode::Exp2, true);
  case BuiltinId::Log:
    return B.elementwiseMath(Opcode::Log, true);
  case BuiltinId::Log2:
    return B.elementwiseMath(Opcode::Log2, true);
  case BuiltinId::Sqrt:
  case BuiltinId::SqrtRn:
    return B.elementwiseMath(Opcode::Sqrt, true);
  case BuiltinId::Rsqrt:
    return B.elementwiseMath(Opcode::Rsqrt, true);
  case BuiltinId::Sin:
    return B.elementwiseMath(Opcode::Sin, true);
  case BuiltinId::Cos:
    return B.elementwiseMath(Opcode::Cos, true);
  case BuiltinId::Floor:
    return B.elementwiseMath(Opcode::Floor, true);
  case BuiltinId::Ceil:
    return B.elementwiseMath(Opcode::Ceil, true);
  case BuiltinId::Erf:
    return B.elementwiseMath(Opcode::Erf, true);
  case BuiltinId::Abs:
  case BuiltinId::PyAbs: {
    Val x = args.get(args.sig->params[0].name);
    if (x.kind == Val::Kind::Int)
      return Val::ofInt(x.i < 0 ? -x.i : x.i);
    if (x.kind == Val::Kind::Float)
      return Val::ofFloat(std::fabs(x.f));
    return B.elementwiseMath(Opcode::Abs, false);
  }
  case BuiltinId::Fma: {
    Value *x, *y, *z, *x2;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.fma") ||
        !L.unify(Val::dyn(x), args.get("z"), loc, x2, z, "tk.fma") ||
        !L.unify(Val::dyn(y), Val::dyn(z), loc, y, z, "tk.fma"))
      return Val::error();
    if (!x2->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.fma needs float operands, got {}", typeStr(x2)));
    return Val::dyn(b.fma(loc, x2, y, z));
  }
  case BuiltinId::Sigmoid: {
    Val x = args.get("x");
    Value *v = L.materialize(x, loc);
    if (!v || !v->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.sigmoid needs a float operand, got {}", describe(x)));
    Value *e = b.unary(Opcode::Exp, loc, b.unary(Opcode::Neg, loc, v));
    Val den = L.binary(BinaryOp::Add, Val::ofFloat(1.0), Val::dyn(e), loc);
    return L.binary(BinaryOp::Div, Val::ofFloat(1.0), den, loc);
  }
  case BuiltinId::Cdiv: {
    Val x = args.get("x"), d = args.get("div");
    Val sum = L.binary(BinaryOp::Add, x, d, loc);
    Val minus = L.binary(BinaryOp::Sub, sum, Val::ofInt(1), loc);
    // Constants floor-divide (Python); IR values divide as C does, which
    // agrees for the non-negative sizes cdiv is meant for.
    return L.binary(BinaryOp::FloorDiv, minus, d, loc);
  }
  case BuiltinId::PointerType: {
    // A dtype: `tk.load(table + g).to(tk.pointer_type(tk.float16))` turns an
    // address loaded as an integer into a pointer (IntToPtr), as Triton's
    // grouped GEMM tutorial does with its tables of tensors.
    Val e = args.get("element_ty");
    if (e.kind != Val::Kind::DType || e.type->isPointer())
      return L.fail(args.loc("element_ty"),
                    fmt::format("tk.pointer_type needs a scalar dtype, got {}", describe(e)));
    if (args.has("address_space")) {
      std::optional<int64_t> as =
          constInt(L, args.get("address_space"), args.loc("address_space"), "address_space");
      if (!as)
        return Val::error();
      if (*as != 1)
        return L.fail(args.loc("address_space"),
                      fmt::format("tk.pointer_type: only global pointers (address_space=1), "
                                  "got {}",
                                  *as));
    }
    return Val::ofType(ctx_.pointer(e.type));
  }
  case BuiltinId::Softmax: {
    // Triton's: exp(x - max) / sum along dim (0 when None). The max and the
    // sum keep their dimension whatever keep_dims says, so a row softmax of
    // a 2-D tile (dim=1) broadcasts back along the right axis.
    Value *x = B.tensor("x");
    if (!x)
      return Val::error();
    if (!x->type()->isTensor() || !x->type()->isFloatLike())
      return L.fail(loc, fmt::format("tk.softmax needs a float tensor, got {}", typeStr(x)));
    Val d = args.get("dim");
    std::optional<int64_t> a =
        constInt(L, d.kind == Val::Kind::None ? Val::ofInt(0) : d, args.loc("dim"), "dim");
    std::optional<int> axis = a ? axisFor(L, *a, x->type()->rank(), loc, x->type()) : std::nullopt;
    if (!axis)
      return Val::error();
    auto keep = [&](Value *r) { return r->type()->isTensor() ? b.expandDims(loc, r, *axis) : r; };
    Val z =
        L.binary(BinaryOp::Sub, Val::dyn(x), Val::dyn(keep(b.reduce(loc, x, *axis, "max"))), loc);
    if (!z.isDyn())
      return Val::error();
    Value *num = b.unary(Opcode::Exp, loc, z.v);
    Val q = L.binary(BinaryOp::Div, Val::dyn(num), Val::dyn(keep(b.reduce(loc, num, *axis, "sum"))),
                     loc);
    Val ieee = args.get("ieee_rounding");
    if (ieee.kind == Val::Kind::Bool && ieee.i && q.isDyn() && q.v->definingOp() &&
        q.v->definingOp()->is(Opcode::Div))
      q.v->definingOp()->setAttr("rounding", "rn");
    return q;
  }
  case BuiltinId::Umulhi: {
    // The high half of the 64-bit product of two 32-bit integers, widened
    // with their signedness.
    Value *x, *y;
    if (!L.unify(args.get("x"), args.get("y"), loc, x, y, "tk.umulhi"))
      return Val::error();
    Type *elem = x->type()->elementType();
    if (!x->type()->isIntLike() || dtypeBits(x->type()->dtype()) != 32)
      return L.fail(loc,
                    fmt::format("tk.umulhi needs 32-bit integer operands, got {}", typeStr(x)));
    Type *wide = ctx_.scalar(isSigned(x->type()->dtype()) ? DType::I64 : DType::U64);
    Val p = L.binary(BinaryOp::Mul, Val::dyn(L.castTo(x, wide, loc)),
                     Val::dyn(L.castTo(y, wide, loc)), loc);
    Val hi = p.ok() ? L.binary(BinaryOp::RShift, p, Val::ofInt(32), loc) : p;
    if (!hi.isDyn())
      return Val::error();
    return Val::dyn(L.castTo(hi.v, elem, loc));
  }
  case BuiltinId::Flip: {
    // Reversing an axis of 2^s elements reverses the s bits of the index: the
    // axis is split into s axes of 2 and each is swapped, picking each half
    // by a sum over the axis with the other half zeroed. The sums run on the
    // integer bits (floats through a same-width bitcast), so they are exact.
    Value *x = B.tensor("x");
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
    Type *word = dt == DType::I1 ? ctx_.scalar(DType::I8)
                 : isFloat(dt)   ? ctx_.scalar(dtypeBits(dt) == 16   ? DType::I16
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
      Value *isLow = L.broadcastTo(L.castTo(low.v, ctx_.i1(), loc), split, loc);
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
    Value *pick = L.broadcastTo(L.castTo(first.v, ctx_.i1(), loc), joined, loc);
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
  case BuiltinId::DivRn:
  case BuiltinId::Fdiv: {
    // `/` on floats may be approximate on the GPU (docs/codegen.md, Math);
    // div_rn and fdiv(ieee_rounding=True) ask for the correctly rounded one.
    Val q = L.binary(BinaryOp::Div, args.get("x"), args.get("y"), loc);
    Val ieee = args.get("ieee_rounding");
    bool rn = info.id == BuiltinId::DivRn || (ieee.kind == Val::Kind::Bool && ieee.i);
    if (rn && q.isDyn() && q.v->definingOp() && q.v->definingOp()->is(Opcode::Div))
      q.v->definingOp()->setAttr("rounding", "rn");
    return q;
  }
  case BuiltinId::BroadcastTo: {
    Value *x = B.tensor("input");
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
    Value *x = B.tensor("input");
    if (!x)
      return Val::error();
    std::optional<int64_t> a = constInt(L, args.get("axis"), args.loc("axis"), "axis");
    if (!a)
      return Val::error();
    int64_t rank = x->type()->rank();
    int64_t axis = *a < 0 ? *a + rank + 1 : *a;
    if (axis < 0 || axis > rank)
      return L.fail(args.loc("axis"),
                    fmt::format("axis {} is out of range for expand_dims of {}", *a, typeStr(x)));
    if (!x->type()->isTensor())
      return Val::dyn(b.splat(loc, x, {1}));
    return Val::dyn(b.expandDims(loc, x, int(axis)));
  }
  case BuiltinId::Reshape:
  case BuiltinId::View:
  case BuiltinId::Ravel: {
    Value *x = B.tensor(args.sig->params[0].name);
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
    Value *x = B.tensor("input");
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
    if (order.empty() && rank == 2)
      order = {1, 0};
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
  case BuiltinId::AtomicAdd:
    return B.atomic("add");
  case BuiltinId::AtomicMax:
    return B.atomic("max");
  case BuiltinId::AtomicMin:
    return B.atomic("min");
  case BuiltinId::AtomicAnd:
    return B.atomic("and");
  case BuiltinId::AtomicOr:
    return B.atomic("or");
  case BuiltinId::AtomicXor:
    return B.atomic("xor");
  case BuiltinId::AtomicXchg:
    return B.atomic("xchg");
  case BuiltinId::AtomicCas: {
    Value *ptr = B.tensor("pointer");
    if (!ptr)
      return Val::error();
    if (!ptr->type()->isPointerLike())
      return L.fail(loc, fmt::format("tk.atomic_cas needs a pointer, got {}", typeStr(ptr)));
    Type *pointee = cast<PointerType>(ptr->type()->elementType())->pointee();
    Value *cmp = L.materialize(args.get("cmp"), loc, pointee);
    Value *val = L.materialize(args.get("val"), loc, pointee);
    if (!cmp || !val)
      return Val::error();
    cmp = L.broadcastTo(L.castTo(cmp, pointee, loc), ptr->type()->shape(), loc);
    val = L.broadcastTo(L.castTo(val, pointee, loc), ptr->type()->shape(), loc);
    if (!cmp || !val)
      return Val::error();
    return Val::dyn(b.atomicCAS(loc, ptr, cmp, val));
  }
  case BuiltinId::StaticAssert: {
    Val cond = args.get("cond");
    std::optional<bool> t = L.constTruth(cond);
    if (!t)
      return L.fail(args.loc("cond"), fmt::format("tk.static_assert needs a compile-time "
                                                  "condition, got {}",
                                                  describe(cond)));
    if (!*t) {
      Val msg = args.get("msg");
      std::string text = msg.kind == Val::Kind::Str ? msg.s : "";
      return L.fail(loc, "static assertion failed" + (text.empty() ? "" : ": " + text));
    }
    return Val::none();
  }
  case BuiltinId::StaticPrint: {
    std::string text;
    for (const Val &v : args.rest)
      text += (text.empty() ? "" : " ") + (v.kind == Val::Kind::Str ? v.s : describe(v));
    L.diag().report(Severity::Note, loc, "tk.static_print: " + text);
    return Val::none();
  }
  case BuiltinId::DevicePrint:
  case BuiltinId::PyPrint: {
    std::string prefix;
    std::vector<Val> rest = args.rest;
    if (info.id == BuiltinId::DevicePrint) {
      Val p = args.get("prefix");
      if (p.kind != Val::Kind::Str)
        return L.fail(args.loc("prefix"), fmt::format("tk.device_print needs a string prefix, got "
                                                      "{}",
                                                      describe(p)));
      prefix = p.s;
    } else if (!rest.empty() && rest[0].kind == Val::Kind::Str) {
      prefix = rest[0].s;
      rest.erase(rest.begin());
    }
    std::vector<Value *> values;
    for (const Val &v : rest) {
      Value *x = L.materialize(v, loc);
      if (!x)
        return Val::error();
      values.push_back(x);
    }
    Operation *op = b.print(loc, prefix, values);
    if (args.has("hex") && L.constTruth(args.get("hex")).value_or(false))
      op->setAttr("hex", true);
    return Val::none();
  }
  case BuiltinId::DeviceAssert: {
    Val cond = args.get("cond");
    Val msg = args.get("msg");
    std::string text = msg.kind == Val::Kind::Str ? msg.s : "";
    if (std::optional<bool> t = L.constTruth(cond)) {
      if (!*t)
        return L.fail(loc, "assertion is always false" + (text.empty() ? "" : ": " + text));
      return Val::none();
    }
    b.assertOp(loc, L.castTo(cond.v, ctx_.i1(), loc), text);
    return Val::none();
  }
  case BuiltinId::DebugBarrier:
    // bar.sync of the whole program on the GPU; the interpreter runs a
    // program's threads as one, so there it orders nothing.
    b.create(Opcode::Barrier, loc, {}, {});
    return Val::none();
  case BuiltinId::Assume: {
    // A promise for the optimiser (Triton's tl.assume); tk's analyses do not
    // use it yet, so the condition is checked for type errors and dropped.
    if (!args.get("cond").ok())
      return Val::error();
    return Val::none();
  }
  case BuiltinId::MultipleOf:
    return B.hint("multiple_of");
  case BuiltinId::MaxContiguous:
    return B.hint("max_contiguous");
  case BuiltinId::MaxConstancy:
    return B.hint("max_constancy");
  case BuiltinId::Constexpr:
    return args.get("value");
  case BuiltinId::NextPowerOf2: {
    std::optional<int64_t> n = constInt(L, args.get("n"), loc, "tk.next_power_of_2's n");
    if (!n)
      return Val::error();
    if (*n > (int64_t(1) << 62))
      return L.fail(loc, fmt::format("tk.next_power_of_2({}) overflows", *n));
    int64_t p = 1;
    while (p < *n)
      p <<= 1;
    return Val::ofInt(p);
  }
  case BuiltinId::PyMin:
  case BuiltinId::PyMax: {
    bool isMax = info.id == BuiltinId::PyMax;
    std::vector<Val> vals = {args.get("arg1")};
    vals.insert(vals.end(), args.rest.begin(), args.rest.end());
    if (vals.size() == 1 && vals[0].kind == Val::Kind::Tuple)
      vals = vals[0].elts;
    if (vals.empty())
      return L.fail(loc, fmt::format("{}() of nothing", isMax ? "max" : "min"));
    Val acc = vals[0];
    for (size_t i = 1; i < vals.size() && acc.ok(); ++i) {
      if (acc.isConst() && vals[i].isConst()) {
        Val less = L.compare(ast::CmpOp::Lt, vals[i], acc, loc);
        if (!less.ok())
          return less;
        if ((less.i != 0) != isMax)
          acc = vals[i];
      } else {
        acc = B.minMax(isMax, acc, vals[i]);
      }
    }
    return acc;
  }
  case BuiltinId::PyInt:
  case BuiltinId::PyFloat:
  case BuiltinId::PyBool: {
    Val x = args.get("x");
    if (info.id == BuiltinId::PyFloat && x.kind == Val::Kind::Str) {
      if (x.s == "inf" || x.s == "+inf")
        return Val::ofFloat(std::numeric_limits<double>::infinity());
      if (x.s == "-inf")
        return Val::ofFloat(-std::numeric_limits<double>::infinity());
      if (x.s == "nan")
        return Val::ofFloat(std::numeric_limits<double>::quiet_NaN());
    }
    if (!x.isScalarConst())
      return L.fail(
          loc, fmt::format("{}() needs a compile-time number, got {}", info.name, describe(x)));
    if (info.id == BuiltinId::PyBool)
      return Val::ofBool(*L.constTruth(x));
    if (info.id == BuiltinId::PyFloat)
      return Val::ofFloat(x.kind == Val::Kind::Float ? x.f : double(x.i));
    if (x.kind == Val::Kind::Float) {
      if (!std::isfinite(x.f) || std::fabs(x.f) > 9.2e18)
        return L.fail(loc, fmt::format("int() of {} does not fit in 64 bits", x.f));
      return Val::ofInt(int64_t(x.f));
    }
    return Val::ofInt(x.i);
  }
  case BuiltinId::PyLen: {
    Val x = args.get("obj");
    if (x.kind == Val::Kind::Tuple)
      return Val::ofInt(int64_t(x.elts.size()));
    if (x.isDyn() && x.v->type()->rank() == 1)
      return Val::ofInt(x.v->type()->shape()[0]);
    return L.fail(loc, fmt::format("len() needs a tuple or a 1-D tensor, got {}", describe(x)));
  }
  default:
    return L.fail(loc, fmt::format("not supported yet: {}", qualifiedName(info)));
  }
}

} // namespace tk::astir
