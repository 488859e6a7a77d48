// tk.dot: the operands checked (inner dimensions, every dimension >= 16,
// one element type, the accumulator's shape and kind, out_dtype as Triton
// reads it, input_precision), zeros for a missing accumulator, one `dot` op; a batched
// (3-D) dot as one 2-D dot per batch index. input_precision "bf16x3",
// "bf16x6" and "tf32x3" on fp32 operands become bf16 or tf32 dots of the
// operands' split parts. tk.dot_scaled is emulated here too: each operand
// decoded from its format (uint8 bits for e2m1 / e4m3 / e5m2) to bf16 or
// fp16, times its e8m0 scale, then one dot.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

#include <cmath>
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

// The micro formats of tk.dot_scaled: exponent and mantissa bits, bias.
struct MiniFloat {
  int bits, mant, bias;
  bool nanAllOnes; // e4m3 (fn): S.1111.111 is NaN, there is no inf
};

std::optional<MiniFloat> miniFloat(const std::string &format) {
  if (format == "e2m1")
    return MiniFloat{4, 1, 1, false};
  if (format == "e4m3")
    return MiniFloat{8, 3, 7, true};
  if (format == "e5m2")
    return MiniFloat{8, 2, 15, false};
  return std::nullopt;
}

} // namespace

// `bits` (u8, one value in the low f.bits bits) as fp32: sign and magnitude
// placed as fp16 bits (the mantissa at fp16's top, the exponent above it:
// the fp16 is the value times 2^(bias - 15), subnormals included), widened
// and rescaled exactly; e5m2 keeps fp16's inf and NaN, e4m3's all-ones
// magnitude is NaN.
static Value *decodeMini(Lowerer &L, Builder &b, IRContext &ctx, SourceLoc loc, Value *bits,
                         const MiniFloat &f) {
  std::vector<int64_t> shape = bits->type()->shape();
  Type *u16 = ctx.scalar(DType::U16);
  auto k16 = [&](int64_t v) { return L.broadcastTo(b.constantInt(loc, v, u16), shape, loc); };
  Value *w = b.cast(Opcode::ZExt, loc, bits, u16);
  Value *mag = b.binary(Opcode::And, loc, w, k16((1 << (f.bits - 1)) - 1));
  Value *sign =
      b.binary(Opcode::Shl, loc, b.binary(Opcode::LShr, loc, w, k16(f.bits - 1)), k16(15));
  Value *h = b.binary(Opcode::Or, loc, sign, b.binary(Opcode::Shl, loc, mag, k16(10 - f.mant)));
  Value *x = b.cast(Opcode::FPExt, loc, b.cast(Opcode::Bitcast, loc, h, ctx.scalar(DType::F16)),
                    ctx.f32());
  if (f.bias != 15)
    x = b.mul(
        loc, x,
        L.broadcastTo(b.constantFloat(loc, double(1 << (15 - f.bias)), ctx.f32()), shape, loc));
  if (f.nanAllOnes) {
    Value *nan = L.broadcastTo(b.constantFloat(loc, std::nan(""), ctx.f32()), shape, loc);
    x = b.select(loc, b.cmpi(loc, "eq", mag, k16((1 << (f.bits - 1)) - 1)), nan, x);
  }
  return x;
}

// [.., R, ..] with a new axis of 2 after `axis`, [.., 0, ..] = lo and
// [.., 1, ..] = hi, merged into `axis` (lo, hi alternate along it).
static Value *interleaveAlong(Lowerer &L, Builder &b, IRContext &ctx, SourceLoc loc, Value *lo,
                              Value *hi, int axis) {
  std::vector<int64_t> shape = lo->type()->shape(), pair = shape;
  pair.insert(pair.begin() + axis + 1, 2);
  std::vector<int64_t> laneShape(pair.size(), 1);
  laneShape[axis + 1] = 2;
  Value *lane = b.reshape(loc, b.makeRange(loc, 0, 2), laneShape);
  Value *isLo = L.broadcastTo(
      b.cmpi(loc, "eq", lane, L.broadcastTo(b.constantInt(loc, 0, ctx.i32()), laneShape, loc)),
      pair, loc);
  Value *j = b.select(loc, isLo, L.broadcastTo(b.expandDims(loc, lo, axis + 1), pair, loc),
                      L.broadcastTo(b.expandDims(loc, hi, axis + 1), pair, loc));
  std::vector<int64_t> out = shape;
  out[axis] *= 2;
  return b.reshape(loc, j, out);
}

// One operand of tk.dot_scaled as [M, K] (lhs) or [K, N] (rhs) of `comp`
// (bf16 or fp16); null after reporting.
static Value *scaledOperand(BuiltinCall &call, bool rhs, const std::string &format, Type *comp,
                            bool fastMath) {
  Lowerer &L = call.L;
  Builder &b = call.b;
  IRContext &ctx = call.ctx;
  Args &args = call.args;
  SourceLoc loc = call.loc;
  auto tensor = [&](const char *param) { return call.tensor(param); };
  const char *vName = rhs ? "rhs" : "lhs", *sName = rhs ? "rhs_scale" : "lhs_scale";
  Value *v = tensor(vName);
  if (!v)
    return nullptr;
  SourceLoc vloc = args.loc(vName);
  if (!v->type()->isTensor() || v->type()->rank() != 2) {
    L.fail(vloc, fmt::format("tk.dot_scaled: {} must be a 2-D tensor, got {}", vName, typeStr(v)));
    return nullptr;
  }
  int kAxis = rhs ? 0 : 1;
  DType dt = v->type()->dtype();
  Value *x;
  if (std::optional<MiniFloat> f = miniFloat(format)) {
    if (dt != DType::U8 && dt != DType::I8) {
      L.fail(vloc, fmt::format("tk.dot_scaled: {}_format \"{}\" takes its bits as a uint8 "
                               "tensor, got {}",
                               vName, format, typeStr(v)));
      return nullptr;
    }
    if (dt == DType::I8)
      v = b.cast(Opcode::Bitcast, loc, v, ctx.scalar(DType::U8));
    if (f->bits == 4) {
      // two values a byte along K, the first in the low nibble
      std::vector<int64_t> shape = v->type()->shape();
      Type *u8 = ctx.scalar(DType::U8);
      Value *lo =
          b.binary(Opcode::And, loc, v, L.broadcastTo(b.constantInt(loc, 15, u8), shape, loc));
      Value *hi =
          b.binary(Opcode::LShr, loc, v, L.broadcastTo(b.constantInt(loc, 4, u8), shape, loc));
      Value *x0 = decodeMini(L, b, ctx, loc, lo, *f);
      Value *x1 = decodeMini(L, b, ctx, loc, hi, *f);
      x = interleaveAlong(L, b, ctx, loc, x0, x1, kAxis);
    } else {
      x = decodeMini(L, b, ctx, loc, v, *f);
    }
  } else {
    DType want = format == "bf16" ? DType::BF16 : DType::F16;
    if (dt != want) {
      L.fail(vloc, fmt::format("tk.dot_scaled: {}_format is \"{}\" but {} is {}", vName, format,
                               vName, typeStr(v)));
      return nullptr;
    }
    x = v;
  }
  std::vector<int64_t> shape = x->type()->shape();
  int64_t K = shape[kAxis], R = shape[1 - kAxis];
  if (!args.has(sName))
    return L.castTo(x, comp, loc);
  Value *s = tensor(sName);
  if (!s)
    return nullptr;
  SourceLoc sloc = args.loc(sName);
  if (!s->type()->isTensor() ||
      (s->type()->dtype() != DType::U8 && s->type()->dtype() != DType::I8)) {
    L.fail(sloc, fmt::format("tk.dot_scaled: {} must be a uint8 (e8m0) tensor, got {}", sName,
                             typeStr(s)));
    return nullptr;
  }
  if (K % 32 != 0 || s->type()->shape() != std::vector<int64_t>{R, K / 32}) {
    L.fail(sloc, fmt::format("tk.dot_scaled: {} must be [{}, K // 32] = [{}, {}] (one scale per "
                             "32 elements along K = {}), got {}",
                             sName, R, R, K / 32, K, typeStr(s)));
    return nullptr;
  }
  if (s->type()->dtype() == DType::I8)
    s = b.cast(Opcode::Bitcast, loc, s, ctx.scalar(DType::U8));
  // Per element along K: [R, K/32] -> [R, K/32, 32] -> [R, K] (-> [K, R]).
  auto spread = [&](Value *t) {
    Value *w = L.broadcastTo(b.expandDims(loc, t, 2), {R, K / 32, 32}, loc);
    w = b.reshape(loc, w, {R, K});
    return rhs ? b.trans(loc, w, {1, 0}) : w;
  };
  // 2^(s - 127) as fp32 bits (s = 0 is 0, s = 255 inf), then in `comp`.
  Type *u32 = ctx.scalar(DType::U32);
  Value *sf = b.cast(Opcode::Bitcast, loc,
                     b.binary(Opcode::Shl, loc, b.cast(Opcode::ZExt, loc, s, u32),
                              L.broadcastTo(b.constantInt(loc, 23, u32), {R, K / 32}, loc)),
                     ctx.f32());
  Value *scale = b.cast(Opcode::FPExt, loc, L.castTo(sf, comp, loc), ctx.f32());
  Value *xs = b.cast(Opcode::FPExt, loc, L.castTo(x, comp, loc), ctx.f32());
  Value *p = L.castTo(b.mul(loc, xs, spread(scale)), comp, loc);
  if (!fastMath) {
    Value *isNan =
        b.cmpi(loc, "eq", s,
               L.broadcastTo(b.constantInt(loc, 255, ctx.scalar(DType::U8)), {R, K / 32}, loc));
    Value *nan = L.broadcastTo(L.castTo(b.constantFloat(loc, std::nan(""), ctx.f32()), comp, loc),
                               shape, loc);
    p = b.select(loc, spread(isNan), nan, p);
  }
  return p;
}

std::optional<Val> BuiltinCall::lowerDot() {
  switch (info.id) {
  case BuiltinId::DotScaled: {
    std::string formats[2];
    for (int i = 0; i < 2; ++i) {
      const char *param = i ? "rhs_format" : "lhs_format";
      Val f = args.get(param);
      if (f.kind != Val::Kind::Str || !(miniFloat(f.s) || f.s == "bf16" || f.s == "fp16"))
        return L.fail(args.loc(param),
                      fmt::format("tk.dot_scaled: {} must be \"e2m1\", \"e4m3\", \"e5m2\", "
                                  "\"bf16\" or \"fp16\"{}",
                                  param, f.kind == Val::Kind::Str ? ", got \"" + f.s + "\"" : ""));
      formats[i] = f.s;
      const char *pack = i ? "rhs_k_pack" : "lhs_k_pack";
      if (args.has(pack) && !L.constTruth(args.get(pack)).value_or(true))
        return L.fail(args.loc(pack),
                      fmt::format("tk.dot_scaled: {}=False (packing along {}) is not supported; "
                                  "pack along K",
                                  pack, i ? "N" : "M"));
    }
    if (Val od = args.get("out_dtype");
        od.kind == Val::Kind::DType && (od.type->isPointer() || od.type != ctx.f32()))
      return L.fail(
          args.loc("out_dtype"),
          fmt::format("tk.dot_scaled: out_dtype must be tk.float32, got {}", od.type->str()));
    bool fastMath = args.has("fast_math") && L.constTruth(args.get("fast_math")).value_or(false);
    // Triton's emulation: bf16, or fp16 when either operand is fp16.
    Type *comp =
        ctx.scalar(formats[0] == "fp16" || formats[1] == "fp16" ? DType::F16 : DType::BF16);
    Value *x = scaledOperand(*this, false, formats[0], comp, fastMath);
    Value *y = x ? scaledOperand(*this, true, formats[1], comp, fastMath) : nullptr;
    if (!y)
      return Val::error();
    int64_t m = x->type()->shape()[0], k = x->type()->shape()[1];
    int64_t k2 = y->type()->shape()[0], n = y->type()->shape()[1];
    if (k != k2)
      return L.fail(loc, fmt::format("tk.dot_scaled: lhs has K = {} but rhs K = {} (an e2m1 "
                                     "operand holds two values a byte along K)",
                                     k, k2));
    if (m < 16 || n < 16 || k < 16)
      return L.fail(loc, fmt::format("tk.dot_scaled needs M, N, K >= 16, got M = {}, N = {}, "
                                     "K = {}",
                                     m, n, k));
    Value *acc;
    if (args.has("acc")) {
      if (!(acc = tensor("acc")))
        return Val::error();
      if (acc->type()->shape() != std::vector<int64_t>{m, n} ||
          acc->type()->elementType() != ctx.f32())
        return L.fail(args.loc("acc"),
                      fmt::format("tk.dot_scaled: the accumulator is {} but the product is "
                                  "tensor<{}x{}xfp32>",
                                  typeStr(acc), m, n));
    } else {
      acc = L.broadcastTo(b.constantFloat(loc, 0.0, ctx.f32()), {m, n}, loc);
    }
    return Val::dyn(b.dot(loc, x, y, acc, "tf32"));
  }
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
    std::optional<int64_t> imprecise;
    if (args.has("max_num_imprecise_acc")) {
      imprecise = constInt(L, args.get("max_num_imprecise_acc"), args.loc("max_num_imprecise_acc"),
                           "max_num_imprecise_acc");
      if (!imprecise)
        return Val::error();
      if (*imprecise < 0)
        return L.fail(
            args.loc("max_num_imprecise_acc"),
            fmt::format("tk.dot: max_num_imprecise_acc must be >= 0, got {}", *imprecise));
    }
    auto fp8 = [](Value *v) {
      return v->type()->elementType()->isScalar() && isFp8(v->type()->dtype());
    };
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
      // Dimensions below 16 are the GPU pipeline's to refuse (AccelerateDot),
      // as Triton's GPU compile does; the interpreter computes them, as
      // Triton's interpreter does.
      // fp8 operands (the two formats may differ) stay fp8: --accelerate-dot
      // keeps them for sm_90a's fp8 wgmma and widens them exactly to fp16
      // for every other path. They take fp16's rules for the product's
      // type (fp32, or fp16 with out_dtype).
      bool f8 = fp8(x) && fp8(y);
      if (!f8 && x->type()->elementType() != y->type()->elementType()) {
        L.fail(loc, fmt::format("tk.dot operands must have one element type, got {} and {}",
                                typeStr(x), typeStr(y)));
        return nullptr;
      }
      // The product's element type, Triton's rule: integer operands give
      // i32 and fp32/bf16 ones fp32 whatever out_dtype says (Triton ignores
      // it there); fp64 gives fp64; fp16 takes out_dtype, fp16 or fp32.
      DType in = f8 ? DType::F16 : x->type()->dtype();
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
      // max_num_imprecise_acc (fp8 only, as in Triton): the K elements the
      // fp8 wgmma sums before its partial sum is added into the fp32
      // accumulator; at most K.
      if (f8 && imprecise && *imprecise > k) {
        L.fail(
            args.loc("max_num_imprecise_acc"),
            fmt::format("tk.dot: max_num_imprecise_acc = {} is more than K = {}", *imprecise, k));
        return nullptr;
      }
      Value *d = b.dot(loc, x, y, acc, precision);
      if (f8 && imprecise)
        d->definingOp()->attrs().set("max_num_imprecise_acc", tk::Attribute(*imprecise));
      return d;
    };
    unsigned ra = a->type()->rank(), rc = c->type()->rank();
    if (ra == 2 && rc == 2) {
      Value *r = dot2(a, c, acc3);
      return r ? Val::dyn(r) : Val::error();
    }
    // More than one batch axis (Triton's dot of rank 4 and up): the batch
    // axes fold into one for the 3-D product and unfold after it.
    std::vector<int64_t> batchShape;
    if (ra > 3 && ra == rc) {
      std::vector<int64_t> sa = a->type()->shape(), sc = c->type()->shape();
      bool same = std::equal(sa.begin(), sa.end() - 2, sc.begin()) &&
                  (!acc3 || (acc3->type()->rank() == ra &&
                             std::equal(sa.begin(), sa.end() - 2, acc3->type()->shape().begin())));
      if (same) {
        batchShape.assign(sa.begin(), sa.end() - 2);
        int64_t folded = 1;
        for (int64_t d : batchShape)
          folded *= d;
        auto fold = [&](Value *x) -> Value * {
          std::vector<int64_t> shape = x->type()->shape();
          return b.reshape(loc, x, {folded, shape[shape.size() - 2], shape.back()});
        };
        a = fold(a);
        c = fold(c);
        if (acc3)
          acc3 = fold(acc3);
        ra = rc = 3;
      }
    }
    if (ra != 3 || rc != 3 || a->type()->shape()[0] != c->type()->shape()[0] ||
        (acc3 && (acc3->type()->rank() != 3 || acc3->type()->shape()[0] != a->type()->shape()[0])))
      return L.fail(loc, fmt::format("tk.dot needs 2-D tensors, or ones of rank 3 and up "
                                     "with the same batch axes, got {} and {}",
                                     typeStr(a), typeStr(c)));
    // fp8 operands of a batched product widen exactly to fp16 first (the
    // slices below sum them).
    if (fp8(a) && fp8(c)) {
      a = L.castTo(a, ctx.scalar(DType::F16), loc);
      c = L.castTo(c, ctx.scalar(DType::F16), loc);
    }
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
    if (!batchShape.empty()) {
      std::vector<int64_t> shape = batchShape;
      shape.push_back(out->type()->shape()[1]);
      shape.push_back(out->type()->shape()[2]);
      out = b.reshape(loc, out, shape);
    }
    return Val::dyn(out);
  }
  default:
    return std::nullopt; // another family's
  }
}

} // namespace tk::astir
