#include "IRTestUtil.h"

#include "ir/Builder.h"
#include "ir/ConstantFold.h"
#include "lang/Float16.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

namespace tk {
namespace {

// Builds `op a, b` on scalars of `t` and folds it with the given constants.
struct Folder {
  SourceManager sm;
  IRContext ctx{sm};
  Module m{ctx};
  Builder b{ctx};
  Function *fn;

  Folder() { fn = b.createFunction(m, "f", {}, {}, {}); }

  std::optional<Attribute> binary(Opcode opc, DType d, Attribute x, Attribute y,
                                  const char *pred = nullptr) {
    Type *t = ctx.scalar(d);
    Value *a = isFloat(d) ? b.constantFloat({}, 0.0, t) : b.constantInt({}, 0, t);
    Operation *op;
    if (pred)
      op = (isFloat(d) ? b.cmpf({}, pred, a, a) : b.cmpi({}, pred, a, a))->definingOp();
    else if (opc == Opcode::Max || opc == Opcode::Min)
      op = (opc == Opcode::Max ? b.max({}, a, a) : b.min({}, a, a))->definingOp();
    else
      op = b.binary(opc, {}, a, a)->definingOp();
    return foldOp(*op, {x, y});
  }

  std::optional<Attribute> cast(Opcode opc, DType from, DType to, Attribute x) {
    Type *t = ctx.scalar(from);
    Value *a = isFloat(from) ? b.constantFloat({}, 0.0, t) : b.constantInt({}, 0, t);
    return foldOp(*b.cast(opc, {}, a, ctx.scalar(to))->definingOp(), {x});
  }
};

TEST(ConstantFold, IntegerArithmeticWrapsLikeTheMachine) {
  Folder f;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    int8_t a = int8_t(rng()), b = int8_t(rng());
    EXPECT_EQ(f.binary(Opcode::Add, DType::I8, a, b)->getInt(), int8_t(uint8_t(a) + uint8_t(b)));
    EXPECT_EQ(f.binary(Opcode::Mul, DType::I8, a, b)->getInt(), int8_t(uint8_t(a) * uint8_t(b)));
    uint16_t ua = uint16_t(rng()), ub = uint16_t(rng());
    EXPECT_EQ(f.binary(Opcode::Sub, DType::U16, ua, ub)->getInt(), uint16_t(ua - ub));
    int32_t x = int32_t(rng()), y = int32_t(rng() % 1000) - 500;
    if (y == 0)
      continue;
    EXPECT_EQ(f.binary(Opcode::Div, DType::I32, x, y)->getInt(), x / y);
    EXPECT_EQ(f.binary(Opcode::Rem, DType::I32, x, y)->getInt(), x % y);
    int64_t floorQ = static_cast<int64_t>(std::floor(double(x) / double(y)));
    EXPECT_EQ(f.binary(Opcode::FloorDiv, DType::I32, x, y)->getInt(), floorQ) << x << " // " << y;
    int s = int(rng() % 32);
    EXPECT_EQ(f.binary(Opcode::AShr, DType::I32, x, s)->getInt(), x >> s);
    EXPECT_EQ(f.binary(Opcode::LShr, DType::I32, x, s)->getInt(), int32_t(uint32_t(x) >> s));
    EXPECT_EQ(f.binary(Opcode::CmpI, DType::I32, x, y, "ult")->getInt(),
              int64_t(uint32_t(x) < uint32_t(y)));
    EXPECT_EQ(f.binary(Opcode::CmpI, DType::I32, x, y, "sge")->getInt(), int64_t(x >= y));
    EXPECT_EQ(
        f.binary(Opcode::Max, DType::U32, int64_t(uint32_t(x)), int64_t(uint32_t(y)))->getInt(),
        int64_t(std::max(uint32_t(x), uint32_t(y))));
  }
  // Undefined results do not fold.
  EXPECT_FALSE(f.binary(Opcode::Div, DType::I32, 5, 0));
  EXPECT_FALSE(f.binary(Opcode::Shl, DType::I32, 5, 32));
  EXPECT_FALSE(f.binary(Opcode::Div, DType::I64, std::numeric_limits<int64_t>::min(), -1));
}

double referenceHalf(float a) {
#ifdef __FLT16_MAX__
  return double(static_cast<_Float16>(a));
#else
  return double(halfToFloat(floatToHalf(a)));
#endif
}

TEST(ConstantFold, FloatRoundingToEveryFormat) {
  Folder f;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    float a = std::ldexp(float(rng() % 100000) / 777.f - 64.f, int(rng() % 20) - 10);
    float b = std::ldexp(float(rng() % 100000) / 333.f - 150.f, int(rng() % 20) - 10);
    EXPECT_EQ(f.binary(Opcode::Add, DType::F32, double(a), double(b))->getFloat(), double(a + b));
    EXPECT_EQ(f.binary(Opcode::Mul, DType::F32, double(a), double(b))->getFloat(), double(a * b));
    EXPECT_EQ(f.binary(Opcode::Div, DType::F32, double(a), double(b))->getFloat(), double(a / b));
    // fp16 rounding agrees with an independent RNE conversion: the C++
    // compiler's _Float16 where it has one (g++), else the interpreter's
    // (clang 14 on x86, the sanitizer tree, lacks _Float16).
    EXPECT_EQ(roundToDType(double(a), DType::F16), referenceHalf(a)) << a;
    // bf16: round the fp32 bit pattern to nearest even on bit 16.
    uint32_t u;
    std::memcpy(&u, &a, 4);
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
    float bf;
    std::memcpy(&bf, &u, 4);
    EXPECT_EQ(roundToDType(double(a), DType::BF16), double(bf)) << a;
  }
  EXPECT_EQ(roundToDType(65520.0, DType::F16), INFINITY); // past the fp16 max after rounding
  EXPECT_EQ(roundToDType(65504.0, DType::F16), 65504.0);
  EXPECT_EQ(roundToDType(std::ldexp(1.0, -25), DType::F16), 0.0); // ties to even (zero)
  EXPECT_EQ(roundToDType(std::ldexp(3.0, -26), DType::F16), std::ldexp(1.0, -24));
}

TEST(ConstantFold, FloatComparisonsAndNaNSemantics) {
  Folder f;
  double nan = NAN;
  EXPECT_EQ(f.binary(Opcode::CmpF, DType::F32, nan, 1.0, "olt")->getInt(), 0);
  EXPECT_EQ(f.binary(Opcode::CmpF, DType::F32, nan, 1.0, "ult")->getInt(), 1);
  EXPECT_EQ(f.binary(Opcode::CmpF, DType::F32, nan, nan, "uno")->getInt(), 1);
  EXPECT_EQ(f.binary(Opcode::CmpF, DType::F32, 2.0, 1.0, "ogt")->getInt(), 1);
  // max defaults to nan = "propagate" in the builder.
  EXPECT_TRUE(std::isnan(f.binary(Opcode::Max, DType::F32, nan, 1.0)->getFloat()));
  EXPECT_EQ(f.binary(Opcode::Max, DType::F32, -0.0, 0.0)->getFloat(), 0.0);
  EXPECT_FALSE(std::signbit(f.binary(Opcode::Max, DType::F32, -0.0, 0.0)->getFloat()));
  EXPECT_TRUE(std::signbit(f.binary(Opcode::Min, DType::F32, 0.0, -0.0)->getFloat()));
}

TEST(ConstantFold, Casts) {
  Folder f;
  EXPECT_EQ(f.cast(Opcode::SExt, DType::I8, DType::I32, -5)->getInt(), -5);
  EXPECT_EQ(f.cast(Opcode::ZExt, DType::I8, DType::I32, -5)->getInt(), 251);
  EXPECT_EQ(f.cast(Opcode::ZExt, DType::I1, DType::I32, 1)->getInt(), 1);
  EXPECT_EQ(f.cast(Opcode::Trunc, DType::I32, DType::I8, 300)->getInt(), 44);
  EXPECT_EQ(f.cast(Opcode::FPToSI, DType::F32, DType::I32, -3.9)->getInt(), -3);
  EXPECT_FALSE(f.cast(Opcode::FPToSI, DType::F32, DType::I8, 300.0));
  EXPECT_FALSE(f.cast(Opcode::FPToUI, DType::F32, DType::U8, -1.0));
  EXPECT_EQ(f.cast(Opcode::UIToFP, DType::U32, DType::F32, int64_t(4294967295u))->getFloat(),
            4294967296.0);
  EXPECT_EQ(f.cast(Opcode::SIToFP, DType::I64, DType::F32, int64_t((1LL << 53) + 1))->getFloat(),
            double(float((1LL << 53) + 1)));
  EXPECT_EQ(f.cast(Opcode::Bitcast, DType::F32, DType::I32, 1.0)->getInt(), 0x3f800000);
  EXPECT_EQ(f.cast(Opcode::Bitcast, DType::I32, DType::U32, -1)->getInt(), 4294967295);
  EXPECT_EQ(f.cast(Opcode::FPTrunc, DType::F32, DType::F16, 0.1f)->getFloat(), 0.0999755859375);
}

TEST(ConstantFold, NormalizeInt) {
  EXPECT_EQ(normalizeInt(200, DType::I8), -56);
  EXPECT_EQ(normalizeInt(-56, DType::U8), 200);
  EXPECT_EQ(normalizeInt(3, DType::I1), 1);
  EXPECT_EQ(normalizeInt(-1, DType::U64), -1); // stored as 64-bit two's complement
}

} // namespace
} // namespace tk
