#include "ir/Builder.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

// The vector-add kernel, built the way AST -> IR builds it.
TEST(Builder, VectorAdd) {
  SourceManager sm;
  BufferId buf = sm.addBuffer("add.tk", "");
  IRContext ctx(sm);
  Module m(ctx);
  Builder b(ctx);
  SourceLoc loc{buf, 3, 5};
  Type *pf32 = ctx.pointer(ctx.f32());
  Function *fn = b.createFunction(m, "add", {pf32, pf32, pf32, ctx.i32()}, {}, loc);
  fn->argAttrs(0).set("divisibility", 16);
  Value *pid = b.programId(loc, 0);
  Value *block = b.constantInt(loc, 1024, ctx.i32());
  Value *start = b.mul(loc, pid, block);
  Value *offs = b.add(loc, b.splat(loc, start, {1024}), b.makeRange(loc, 0, 1024));
  Value *mask = b.cmpi(loc, "slt", offs, b.splat(loc, fn->argument(3), {1024}));
  auto ptrs = [&](unsigned arg) {
    return b.addptr(loc, b.splat(loc, fn->argument(arg), {1024}), offs);
  };
  Value *x = b.load(loc, ptrs(0), mask);
  Value *y = b.load(loc, ptrs(1), mask);
  b.store(loc, ptrs(2), b.add(loc, x, y), mask);
  b.ret(loc, {});

  EXPECT_EQ(x->type(), ctx.tensor({1024}, DType::F32));
  EXPECT_EQ(mask->type(), ctx.tensor({1024}, DType::I1));
  DiagnosticEngine diag(sm);
  EXPECT_TRUE(verifyModule(m, diag)) << diag.renderAll();
  std::string text = printModule(m);
  EXPECT_NE(text.find("func @add(%arg0: ptr<fp32> {divisibility = 16}"), std::string::npos);
  EXPECT_NE(text.find("= load %"), std::string::npos);
  PrintOptions withLocs;
  withLocs.locations = true;
  EXPECT_NE(printModule(m, withLocs).find("loc(\"add.tk\":3:5)"), std::string::npos);
}

TEST(Builder, ForLoopWithCarriedValueAndUses) {
  SourceManager sm;
  IRContext ctx(sm);
  Module m(ctx);
  Builder b(ctx);
  Function *fn = b.createFunction(m, "sum", {ctx.f32(), ctx.i32()}, {ctx.f32()}, {});
  Value *lo = b.constantInt({}, 0, ctx.i32());
  Value *step = b.constantInt({}, 1, ctx.i32());
  Operation *loop = b.createFor({}, lo, fn->argument(1), step, {fn->argument(0)});
  {
    Builder::InsertionGuard g(b);
    b.setInsertionPointToEnd(&loop->body());
    Value *acc = loop->body().argument(1);
    b.yield({}, {b.add({}, acc, acc)});
  }
  b.ret({}, {loop->result(0)});
  EXPECT_EQ(loop->body().numArguments(), 2u);
  EXPECT_EQ(loop->result(0)->type(), ctx.f32());
  EXPECT_EQ(fn->argument(0)->users().size(), 1u);
  EXPECT_EQ(loop->body().argument(1)->users().size(), 2u); // used twice by one add
  DiagnosticEngine diag(sm);
  EXPECT_TRUE(verifyModule(m, diag)) << diag.renderAll();

  // Replacing uses keeps the use lists right.
  Value *acc = loop->body().argument(1);
  Operation *add = acc->users()[0];
  add->result()->replaceAllUsesWith(acc);
  EXPECT_FALSE(add->result()->hasUses());
  add->erase();
  EXPECT_FALSE(acc->users().empty());
  EXPECT_EQ(loop->body().size(), 1u);
}

TEST(Builder, IfWhileReduceShapes) {
  SourceManager sm;
  IRContext ctx(sm);
  Module m(ctx);
  Builder b(ctx);
  Function *fn = b.createFunction(m, "f", {ctx.tensor({32, 16}, DType::F32), ctx.i1()}, {}, {});
  Value *x = fn->argument(0);
  EXPECT_EQ(b.reduce({}, x, 1, "sum")->type(), ctx.tensor({32}, DType::F32));
  EXPECT_EQ(b.reduce({}, x, 0, "argmax")->type(), ctx.tensor({16}, DType::I32));
  EXPECT_EQ(b.trans({}, x, {1, 0})->type(), ctx.tensor({16, 32}, DType::F32));
  EXPECT_EQ(b.expandDims({}, x, 1)->type(), ctx.tensor({32, 1, 16}, DType::F32));
  Value *row = b.reduce({}, b.reduce({}, x, 1, "max"), 0, "max");
  EXPECT_EQ(row->type(), ctx.f32()); // rank 0 is a scalar
  Operation *ifOp = b.createIf({}, fn->argument(1), {ctx.f32()});
  EXPECT_EQ(ifOp->numRegions(), 2u);
  Operation *w = b.createWhile({}, {row}, {ctx.f32()});
  EXPECT_EQ(w->body(0).numArguments(), 1u);
  EXPECT_EQ(w->body(1).numArguments(), 1u);
  Operation *red = b.createReduce({}, {x, x}, 0);
  EXPECT_EQ(red->body().numArguments(), 4u);
  EXPECT_EQ(red->result(1)->type(), ctx.tensor({16}, DType::F32));
}

} // namespace
} // namespace tk
