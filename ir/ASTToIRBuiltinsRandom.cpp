// The random numbers: tk.randint4x, randint, rand, rand4x, randn, randn4x,
// the generator and conversions of Triton's tl.random, so a kernel gets the
// same bits from tk as from Triton for the same seed and offsets. They are
// built here from integer and float IR ops (no op of their own), so the
// interpreter and every back end run them as they run any arithmetic.
//
// The generator is Philox 4x32 (4x64 for 64-bit offsets; Salmon et al.,
// "Parallel Random Numbers: As Easy as 1, 2, 3", SC 2011) with n_rounds
// rounds (10 by default). The counter is (offset, 0, 0, 0), the key the seed
// as (low 32 bits, high 32 bits) (4x64: (seed, 0)). One round, in unsigned
// arithmetic of the counter's width:
//
//   c0, c1, c2, c3 = hi(B * c2) ^ c1 ^ k0,  lo(B * c2),
//                    hi(A * c0) ^ c3 ^ k1,  lo(A * c0)
//   k0, k1 = k0 + W0, k1 + W1
//
// with the multipliers A, B and the Weyl increments W0, W1 of kPhilox below.
// The four counter words are randint4x; randint is the first. rand maps a
// word to [0, 1) as Triton does: read it as signed, fold negatives with
// x -> -x - 1 (so 0 <= x < 2^31), and multiply by the largest fp32 below
// 2^-31 (the fp32 product stays below 1). randn is the Box-Muller transform
// of the first two uniforms, r * cos(2 pi u2) with r = sqrt(-2 log(u1)) and
// u1 at least 1e-7.
#include "ir/ASTToIRBuiltins.h"

#include <fmt/format.h>

namespace tk::astir {

using namespace ast;

namespace {

struct PhiloxConstants {
  uint64_t a, b, w0, w1; // multipliers of c0 and c2; key increments
  double scale;          // word -> [0, 1): the largest value with 2^(bits-1) * scale < 1
};

constexpr PhiloxConstants kPhilox32 = {0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85,
                                       4.6566127342e-10};
constexpr PhiloxConstants kPhilox64 = {0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15,
                                       0xBB67AE8584CAA73B, 1.0842020432385337e-19};

} // namespace

std::optional<Val> BuiltinCall::lowerRandom() {
  switch (info.id) {
  case BuiltinId::Randint4x:
  case BuiltinId::Randint:
  case BuiltinId::Rand:
  case BuiltinId::Rand4x:
  case BuiltinId::Randn:
  case BuiltinId::Randn4x:
    break;
  default:
    return std::nullopt; // another family's
  }

  // The seed: an integer scalar (or a block of them that broadcasts with the
  // offsets); the offsets: 32- or 64-bit integers, which pick the generator.
  Value *seed = tensor("seed");
  const std::string &offsetParam = args.sig->params[1].name; // offset, or offsets (rand4x)
  Value *offset = seed ? tensor(offsetParam) : nullptr;
  if (!offset)
    return Val::error();
  auto isInt = [&](Value *v) { return v->type()->isIntLike() && v->type()->dtype() != DType::I1; };
  if (!isInt(seed))
    return L.fail(args.loc("seed"), fmt::format("{}: seed must be an integer (a scalar or a "
                                                "tensor of integers), got {}",
                                                name, typeStr(seed)));
  unsigned bits = isInt(offset) ? dtypeBits(offset->type()->dtype()) : 0;
  if (bits != 32 && bits != 64)
    return L.fail(args.loc(offsetParam),
                  fmt::format("{}: {} must be 32- or 64-bit integers, got {}", name, offsetParam,
                              typeStr(offset)));
  int64_t rounds = 10;
  if (args.has("n_rounds")) {
    std::optional<int64_t> n = constInt(L, args.get("n_rounds"), args.loc("n_rounds"), "n_rounds");
    if (!n)
      return Val::error();
    if (*n < 0 || *n > 64)
      return L.fail(args.loc("n_rounds"),
                    fmt::format("{}: n_rounds must be between 0 and 64, got {}", name, *n));
    rounds = *n;
  }
  std::optional<std::vector<int64_t>> shape =
      L.broadcastShapes(seed->type()->shape(), offset->type()->shape(), loc);
  if (!shape)
    return Val::error();

  const PhiloxConstants &pc = bits == 32 ? kPhilox32 : kPhilox64;
  Type *word = ctx.scalar(bits == 32 ? DType::U32 : DType::U64);
  Type *u64 = ctx.scalar(DType::U64);
  auto widen = [&](Value *v) { return L.broadcastTo(v, *shape, loc); };
  auto k = [&](uint64_t v, Value *like) {
    return b.constantInt(loc, static_cast<int64_t>(v), like->type());
  };
  auto bin = [&](Opcode op, Value *x, Value *y) { return b.binary(op, loc, x, y); };

  // Key: the seed as u64 (sign-extended when signed, as Triton converts it),
  // split in two 32-bit halves, or (seed, 0) for the 64-bit generator.
  Value *seed64 = L.castTo(seed, u64, loc);
  Value *k0, *k1;
  if (bits == 32) {
    k0 = L.castTo(bin(Opcode::And, seed64, k(0xFFFFFFFF, seed64)), word, loc);
    k1 = L.castTo(bin(Opcode::LShr, seed64, k(32, seed64)), word, loc);
  } else {
    k0 = seed64;
    k1 = b.constantInt(loc, 0, seed64->type());
  }
  k0 = widen(k0);
  k1 = widen(k1);
  Value *c0 = widen(L.castTo(offset, word, loc, /*bitcast=*/true));
  Value *c1 = k(0, c0), *c2 = c1, *c3 = c1;
  Value *ma = k(pc.a, c0), *mb = k(pc.b, c0), *w0 = k(pc.w0, c0), *w1 = k(pc.w1, c0);
  for (int64_t r = 0; r < rounds; ++r) {
    Value *n0 = bin(Opcode::Xor, bin(Opcode::Xor, umulhi(mb, c2), c1), k0);
    Value *n2 = bin(Opcode::Xor, bin(Opcode::Xor, umulhi(ma, c0), c3), k1);
    Value *n1 = b.mul(loc, mb, c2), *n3 = b.mul(loc, ma, c0);
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 = b.add(loc, k0, w0);
    k1 = b.add(loc, k1, w1);
  }
  Value *words[4] = {c0, c1, c2, c3};
  if (info.id == BuiltinId::Randint4x)
    return Val::tuple({Val::dyn(c0), Val::dyn(c1), Val::dyn(c2), Val::dyn(c3)});
  if (info.id == BuiltinId::Randint)
    return Val::dyn(c0);

  // A word -> fp32 in [0, 1): signed, negatives folded (-x - 1 is ~x), times
  // the scale (the int -> fp32 conversion rounds to nearest, as Triton's).
  Type *sword = ctx.scalar(bits == 32 ? DType::I32 : DType::I64);
  auto uniform = [&](Value *w) {
    Value *x = L.castTo(w, sword, loc, /*bitcast=*/true);
    Value *neg = b.cmpi(loc, "slt", x, k(0, x));
    x = b.select(loc, neg, bin(Opcode::Xor, x, b.constantInt(loc, -1, x->type())), x);
    Value *f = L.castTo(x, ctx.f32(), loc);
    return b.mul(loc, f, b.constantFloat(loc, pc.scale, f->type()));
  };
  if (info.id == BuiltinId::Rand)
    return Val::dyn(uniform(c0));
  Value *u[4];
  for (int i = 0; i < 4; ++i)
    u[i] = info.id == BuiltinId::Randn && i >= 2 ? nullptr : uniform(words[i]);
  if (info.id == BuiltinId::Rand4x)
    return Val::tuple({Val::dyn(u[0]), Val::dyn(u[1]), Val::dyn(u[2]), Val::dyn(u[3])});

  // Box-Muller on (u1, u2): (r cos th, r sin th), r = sqrt(-2 log max(1e-7, u1)),
  // th = 2 pi u2.
  auto normals = [&](Value *u1, Value *u2) {
    Value *v1 = b.max(loc, b.constantFloat(loc, 1.0e-7, u1->type()), u1, "number");
    Value *th = b.mul(loc, b.constantFloat(loc, 6.283185307179586, u2->type()), u2);
    Value *r =
        b.unary(Opcode::Sqrt, loc,
                b.mul(loc, b.constantFloat(loc, -2.0, v1->type()), b.unary(Opcode::Log, loc, v1)));
    return std::pair{b.mul(loc, r, b.unary(Opcode::Cos, loc, th)),
                     b.mul(loc, r, b.unary(Opcode::Sin, loc, th))};
  };
  auto [n1, n2] = normals(u[0], u[1]);
  if (info.id == BuiltinId::Randn)
    return Val::dyn(n1);
  auto [n3, n4] = normals(u[2], u[3]);
  return Val::tuple({Val::dyn(n1), Val::dyn(n2), Val::dyn(n3), Val::dyn(n4)});
}

} // namespace tk::astir
