// tk.dot: the operands checked (inner dimensions, every dimension >= 16,
// one element type, the accumulator's shape and kind, out_dtype as Triton
// reads it, input_precision), zeros for a missing accumulator, one `dot` op; a batched
// (3-D) dot as one 2-D dot per batch index.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

std::optional<Val> BuiltinCall::lowerDot() {
  switch (info.id) {
  case BuiltinId::Dot: {
    Value *a = tensor("input"), *c = a ? tensor("other") : nullptr;
    if (!c)
      return Val::error();
    Value *acc3 = nullptr;
    if (args.has("acc") && !(acc3 = tensor("acc")))
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
      // The product's element type, Triton's rule: integer operands give
      // i32 and fp32/bf16 ones fp32 whatever out_dtype says (Triton ignores
      // it there); fp64 gives fp64; fp16 takes out_dtype, fp16 or fp32.
      DType in = x->type()->dtype();
      Val od = args.get("out_dtype");
      Type *outElem = !isFloat(in)       ? ctx.i32()
                      : in == DType::F64 ? ctx.scalar(DType::F64)
                                         : ctx.f32();
      if (od.kind == Val::Kind::DType && isFloat(in) && !od.type->isPointer() &&
          od.type->dtype() == DType::BF16) {
        L.fail(args.loc("out_dtype"), "tk.dot: out_dtype=bfloat16 is not supported; use "
                                      "out_dtype=float32 (or float16) and convert the result "
                                      "with .to(tk.bfloat16)");
        return nullptr;
      }
      if (od.kind == Val::Kind::DType && in == DType::F16) {
        if (od.type != ctx.f32() && od.type != ctx.scalar(DType::F16)) {
          L.fail(args.loc("out_dtype"),
                 fmt::format("tk.dot: out_dtype is {} but fp16 operands take fp16 or fp32",
                             od.type->str()));
          return nullptr;
        }
        outElem = od.type;
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
        if (!acc)
          return nullptr; // [m, n] past the bound on a tensor's elements
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
    std::vector<int64_t> outShape = {batch, a->type()->shape()[1], c->type()->shape()[2]};
    if (std::optional<std::string> error = tensorShapeError(outShape))
      return L.fail(loc, fmt::format("tk.dot of {} and {}: {}", typeStr(a), typeStr(c), *error));
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
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
