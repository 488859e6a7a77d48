// tk.dot: the operands checked (inner dimensions, every dimension >= 16,
// one element type, the accumulator's shape and kind, out_dtype as Triton
// reads it, input_precision), zeros for a missing accumulator, one `dot` op; a batched
// (3-D) dot as one 2-D dot per batch index. input_precision "bf16x3",
// "bf16x6" and "tf32x3" on fp32 operands become bf16 or tf32 dots of the
// operands' split parts.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

#include <utility>

namespace tk::astir {

using namespace ast;

namespace {

// x (fp32) as `parts` tensors whose sum in fp32 is x to about 8 * parts
// (bf16) or 11 * parts (tf32) mantissa bits: part i is x - part 0 - ... -
// part i-1 as bf16 (rounded to nearest), or as tf32 (fp32 with its 13 low
// mantissa bits cleared, so the tf32 product takes it exactly; the last tf32
// part stays fp32 for the product to round).
std::vector<Value *> splitParts(Builder &b, IRContext &ctx, SourceLoc loc, Value *x, int parts,
                                bool tf32) {
  std::vector<Value *> out;
  Value *rest = x;
  for (int i = 0; i < parts; ++i) {
    if (tf32 && i + 1 == parts) {
      out.push_back(rest); // the tf32 product rounds the last part itself
    } else if (tf32) {
      Value *bits = b.cast(Opcode::Bitcast, loc, rest, ctx.i32());
      Value *highBits = b.binary(Opcode::And, loc, bits,
                                 b.constantInt(loc, int64_t(int32_t(0xffffe000u)), bits->type()));
      out.push_back(b.cast(Opcode::Bitcast, loc, highBits, ctx.f32()));
    } else {
      out.push_back(b.cast(Opcode::FPTrunc, loc, rest, ctx.scalar(DType::BF16)));
    }
    if (i + 1 < parts)
      rest =
          b.sub(loc, rest, tf32 ? out.back() : b.cast(Opcode::FPExt, loc, out.back(), ctx.f32()));
  }
  return out;
}

// fp32 x fp32 as tensor-core products of split operands (Triton's bf16x3,
// bf16x6 and tf32x3): the operands split into hi + mid (bf16x3, tf32x3) or
// hi + mid + lo (bf16x6) parts, the cross products summed smallest first
// from zeros (x3: mid*hi, hi*mid; bf16x6: mid*mid, lo*hi, hi*lo, mid*hi,
// hi*mid), NaNs of that sum set to 0 (an infinite operand leaves inf - inf =
// NaN in its lower parts; the hi*hi product still carries the inf or NaN),
// then hi*hi, then the accumulator (null: none) added.
Value *splitDot(Builder &b, IRContext &ctx, SourceLoc loc, Value *x, Value *y, Value *acc,
                Value *zeros, const std::string &precision) {
  bool six = precision == "bf16x6", tf32 = precision == "tf32x3";
  int parts = six ? 3 : 2;
  std::vector<Value *> xs = splitParts(b, ctx, loc, x, parts, tf32),
                       ys = splitParts(b, ctx, loc, y, parts, tf32);
  std::vector<std::pair<int, int>> cross = {{1, 0}, {0, 1}};
  if (six)
    cross = {{1, 1}, {2, 0}, {0, 2}, {1, 0}, {0, 1}};
  Value *sum = zeros;
  for (auto [i, j] : cross)
    sum = b.dot(loc, xs[i], ys[j], sum, "tf32");
  sum = b.select(loc, b.cmpf(loc, "uno", sum, sum), zeros, sum);
  Value *d = b.dot(loc, xs[0], ys[0], sum, "tf32");
  return acc ? b.add(loc, d, acc) : d;
}

} // namespace

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
    if (precision != "ieee" && precision != "tf32" && precision != "tf32x3" &&
        precision != "bf16x3" && precision != "bf16x6")
      return L.fail(args.loc("input_precision"),
                    fmt::format("input_precision must be \"ieee\", \"tf32\", \"tf32x3\", "
                                "\"bf16x3\" or \"bf16x6\", got \"{}\"",
                                precision));
    // bf16x3 / bf16x6 / tf32x3 split fp32 operands; other operands take
    // their default.
    bool split = precision == "bf16x3" || precision == "bf16x6" || precision == "tf32x3";
    if (split && a->type()->dtype() != DType::F32)
      precision = a->type()->isFloatLike() ? "tf32" : "ieee";
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
      }
      Value *given = acc;
      if (!acc || (split && in == DType::F32)) {
        Value *zero = L.materialize(Val::ofInt(0), loc, outElem);
        acc = L.broadcastTo(L.castTo(zero, outElem, loc), {m, n}, loc);
        if (!acc)
          return nullptr; // [m, n] past the bound on a tensor's elements
      }
      if (split && in == DType::F32) {
        if (given && given->type()->elementType() != ctx.f32()) {
          L.fail(args.loc("acc"),
                 fmt::format("tk.dot: input_precision=\"{}\" needs an fp32 accumulator, got {}",
                             precision, typeStr(given)));
          return nullptr;
        }
        return splitDot(b, ctx, loc, x, y, given, acc, precision);
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
