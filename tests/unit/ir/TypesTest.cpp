#include "ir/IRContext.h"
#include "ir/IRParser.h"
#include "lang/Diagnostics.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

TEST(Types, ScalarsPointersAndTensorsAreUniqued) {
  SourceManager sm;
  IRContext ctx(sm);
  EXPECT_EQ(ctx.scalar(DType::F32), ctx.f32());
  EXPECT_NE(ctx.scalar(DType::F16), ctx.scalar(DType::BF16));
  Type *p = ctx.pointer(ctx.f32());
  EXPECT_EQ(p, ctx.pointer(ctx.scalar(DType::F32), PointerType::kGlobal));
  EXPECT_NE(p, ctx.pointer(ctx.f32(), PointerType::kShared));
  Type *t = ctx.tensor({128, 64}, DType::F32);
  EXPECT_EQ(t, ctx.tensor({128, 64}, ctx.f32()));
  EXPECT_NE(t, ctx.tensor({64, 128}, DType::F32));
  EXPECT_NE(t, ctx.tensor({128, 64}, DType::F16));
  EXPECT_EQ(ctx.tensor({8}, p), ctx.tensor({8}, ctx.pointer(ctx.f32())));
}

TEST(Types, Queries) {
  SourceManager sm;
  IRContext ctx(sm);
  Type *t = ctx.tensor({4, 8, 2}, DType::U16);
  EXPECT_EQ(t->rank(), 3u);
  EXPECT_EQ(t->numElements(), 64);
  EXPECT_TRUE(t->isIntLike());
  EXPECT_FALSE(t->isFloatLike());
  EXPECT_EQ(t->dtype(), DType::U16);
  EXPECT_EQ(ctx.withElement(t, ctx.i1()), ctx.tensor({4, 8, 2}, DType::I1));
  EXPECT_EQ(ctx.withElement(ctx.f32(), ctx.i1()), ctx.i1());
  EXPECT_EQ(ctx.withShape(t, {}), ctx.scalar(DType::U16));
  Type *pt = ctx.tensor({16}, ctx.pointer(ctx.scalar(DType::F16)));
  EXPECT_TRUE(pt->isPointerLike());
  EXPECT_EQ(ctx.f32()->numElements(), 1);
}

TEST(Types, PrintAndParse) {
  SourceManager sm;
  IRContext ctx(sm);
  DiagnosticEngine diag(sm);
  for (const char *text : {"i1", "u64", "bf16", "ptr<fp32>", "ptr<i8, 3>", "ptr<ptr<fp16>>",
                           "tensor<128xfp32>", "tensor<2x4x8xptr<i32>>"}) {
    Type *t = parseType(ctx, text, {}, diag);
    ASSERT_NE(t, nullptr) << text << "\n" << diag.renderAll();
    EXPECT_EQ(t->str(), text);
  }
  EXPECT_EQ(parseType(ctx, "tensor<4x4xfp32>", {}, diag), ctx.tensor({4, 4}, DType::F32));
  for (const char *bad : {"f32", "tensor<fp32>", "tensor<4xtensor<4xi32>>", "ptr<tensor<4xi8>>",
                          "ptr<i32", "i32 i32", "tensor<-1xi32>"}) {
    DiagnosticEngine d(sm);
    EXPECT_EQ(parseType(ctx, bad, {}, d), nullptr) << bad;
    EXPECT_TRUE(d.hasErrors()) << bad;
  }
}

TEST(Types, ElementCountBound) {
  EXPECT_FALSE(tensorShapeError(std::vector<int64_t>{128, 64}));
  EXPECT_FALSE(tensorShapeError(std::vector<int64_t>{kMaxTensorElements}));
  EXPECT_FALSE(tensorShapeError(std::vector<int64_t>{1 << 16, 1 << 15}));
  std::optional<std::string> over = tensorShapeError(std::vector<int64_t>{1 << 16, 1 << 16});
  ASSERT_TRUE(over);
  EXPECT_EQ(*over, "tensor shape [65536, 65536] has 4294967296 elements; a tensor holds at most "
                   "2^31 (2147483648)");
  // Products past int64: 2^62 * 4, and three dimensions whose running
  // product wraps to a small positive number.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{int64_t(1) << 62, 4},
                                     std::vector<int64_t>{int64_t(1) << 40, int64_t(1) << 40, 1},
                                     std::vector<int64_t>{int64_t(1) << 32, int64_t(1) << 32, 2}}) {
    std::optional<std::string> e = tensorShapeError(shape);
    ASSERT_TRUE(e) << shapeStr(shape);
    EXPECT_NE(e->find("more than 2^63 elements"), std::string::npos) << *e;
  }
  EXPECT_EQ(*tensorShapeError(std::vector<int64_t>{4, 0}),
            "tensor dimensions must be positive, got [4, 0]");
  // The IR parser asks the same question of every tensor type it reads.
  SourceManager sm;
  IRContext ctx(sm);
  DiagnosticEngine diag(sm);
  EXPECT_EQ(parseType(ctx, "tensor<4611686018427387904x4xfp32>", {}, diag), nullptr);
  EXPECT_TRUE(diag.hasErrors());
  EXPECT_EQ(parseType(ctx, "tensor<65536x32768xfp32>", {}, diag),
            ctx.tensor({65536, 32768}, DType::F32));
}

TEST(Attributes, SortedDictionaryAndExactFloats) {
  AttrDict d;
  d.set("zeta", 1);
  d.set("alpha", std::string("x"));
  d.set("mid", 0.1);
  d.set("zeta", int64_t(2)); // replaces
  EXPECT_EQ(d.str(), "{alpha = \"x\", mid = 0.1, zeta = 2}");
  EXPECT_EQ(d.getInt("zeta"), 2);
  EXPECT_FALSE(d.getInt("alpha").has_value());
  EXPECT_TRUE(d.erase("mid"));
  EXPECT_FALSE(d.has("mid"));
  EXPECT_EQ(formatDouble(1.0), "1.0");
  EXPECT_EQ(formatDouble(-0.0), "-0.0");
  EXPECT_EQ(formatDouble(1e300), "1e+300");
  EXPECT_NE(Attribute(0.0), Attribute(-0.0));
  EXPECT_EQ(Attribute(std::vector<int64_t>{1, 0}).str(), "[1, 0]");
}

} // namespace
} // namespace tk
