#include "IRTestUtil.h"

#include "ir/Builder.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

struct Case {
  const char *body; // the ops of `func @f(args) { ... return }`
  const char *message;
};

// Arguments available to every case.
constexpr const char *kArgs =
    "%i: i32, %f: fp32, %c: i1, %p: ptr<fp32>, %t: tensor<128xfp32>, %u: tensor<64xfp32>, "
    "%tp: tensor<128xptr<fp32>>, %m64: tensor<64xi1>, %a: tensor<16x32xfp16>, "
    "%b: tensor<16x16xfp16>, %acc: tensor<16x16xfp32>, %ti: tensor<128xi32>";

// One negative case per rule; each message names the concrete types.
const Case kCases[] = {
    {"%0 = add %t, %u : tensor<128xfp32>",
     "'add' operands have different types: tensor<128xfp32> and tensor<64xfp32>"},
    {"%0 = add %i, %i : fp32", "'add' result type must be i32, got fp32"},
    {"%0 = and %f, %f : fp32", "'and' needs integer operands, got fp32"},
    {"%0 = exp %i : i32", "'exp' needs float operands, got i32"},
    {"%0 = cmpi %i, %i {predicate = \"olt\"} : i1", "unknown integer predicate \"olt\""},
    {"%0 = cmpf %f, %f {predicate = \"olt\"} : i32", "'cmpf' result type must be i1, got i32"},
    {"%0 = cmpi %i, %i : i1", "'cmpi' needs attribute 'predicate' (string)"},
    {"%0 = program_id {axis = \"x\"} : i32", "attribute 'axis' must be int, got string \"x\""},
    {"%0 = program_id {axis = 3} : i32", "axis must be 0, 1 or 2, got 3"},
    {"%0 = sext %i : i16", "'sext' cannot cast i32 to i16: the result must be wider"},
    {"%0 = fptrunc %f : fp64", "'fptrunc' cannot cast fp32 to fp64"},
    {"%0 = bitcast %f : i64", "'bitcast' cannot cast fp32 to i64: the bit widths differ"},
    {"%0 = max %i, %i {nan = \"number\"} : i32", "'max' on integers takes no 'nan' attribute"},
    {"%0 = select %i, %f, %f : fp32", "'select' condition must be i1, got i32"},
    {"%0 = make_range {end = 96, start = 0} : tensor<96xi32>",
     "size 96 (end - start) is not a power of two"},
    {"%0 = make_range {end = 64, start = 0} : tensor<32xi32>",
     "'make_range' result type must be tensor<64xi32>, got tensor<32xi32>"},
    {"%0 = splat %t : tensor<128xfp32>", "'splat' needs a scalar or pointer operand"},
    {"%0 = broadcast %t : tensor<128x4xfp32>", "cannot broadcast [128] to [128, 4]"},
    {"%0 = expand_dims %t {axis = 2} : tensor<128x1xfp32>", "axis 2 is out of range for rank 1"},
    {"%0 = reshape %t : tensor<64xfp32>", "from [128] (128 elements) to [64] (64 elements)"},
    {"%0 = trans %acc {order = [0, 0]} : tensor<16x16xfp32>",
     "order [0, 0] is not a permutation of the 2 dimensions"},
    {"%0 = addptr %tp, %t : tensor<128xptr<fp32>>",
     "needs an integer offset, got tensor<128xfp32>"},
    {"%0 = load %tp, %m64 : tensor<128xfp32>",
     "mask must be tensor<128xi1> (i1 in the pointer's shape), got tensor<64xi1>"},
    {"%0 = load %p : fp16", "must be fp32, got fp16"},
    {"%0 = load %t : fp32", "'load' needs a pointer or a tensor of pointers, got tensor<128xfp32>"},
    {"store %tp, %u", "'store' stored value must be tensor<128xfp32>, got tensor<64xfp32>"},
    {"%0 = reduce %t {axis = 1, kind = \"sum\"} : fp32", "axis 1 is out of range"},
    {"%0 = reduce %t {axis = 0, kind = \"prod\"} : fp32", "unknown kind \"prod\""},
    {"%0 = reduce %t {axis = 0, kind = \"argmax\"} : fp32", "result type must be i32, got fp32"},
    {"%0 = dot %a, %b, %acc {input_precision = \"ieee\"} : tensor<16x16xfp32>",
     "shapes do not agree: [16, 32] x [16, 16] + [16, 16]"},
    {"%0 = dot %b, %b, %acc {input_precision = \"fp8\"} : tensor<16x16xfp32>",
     "unknown input_precision \"fp8\""},
    {"%0 = atomic_rmw %p, %f {kind = \"nand\"} : fp32", "unknown kind \"nand\""},
    {"%0 = atomic_cas %p, %i, %f : fp32", "'atomic_cas' compared value must be fp32, got i32"},
    {"assert %i {message = \"x\"}", "'assert' condition must be i1, got i32"},
    {"%0 = call %f {callee = \"nope\"} : fp32", "calls unknown function '@nope'"},
    {"%0 = constant {value = 1} : fp32", "of type fp32 needs a float value, got 1"},
    {"%0 = constant {value = 1} : ptr<fp32>", "cannot be a pointer"},
    {"%0 = if %c : i32 {\n^bb0:\n yield %f\n} {\n^bb0:\n yield %i\n}",
     "'yield' passes (fp32) but the then region of 'if' needs (i32)"},
    {"%0 = if %t : i32 {\n^bb0:\n yield %i\n} {\n^bb0:\n yield %i\n}",
     "condition must be an i1 scalar, got tensor<128xfp32>"},
    {"for %i, %i, %f {\n^bb0(%k: i32):\n yield\n}",
     "lower bound, upper bound and step must have one type, got i32, i32, fp32"},
    {"%0 = for %i, %i, %i, %f : fp32 {\n^bb0(%k: i32):\n yield %f\n}",
     "body arguments must be (i32, fp32) (induction variable, then carried values), got (i32)"},
    {"%0 = while %i : i32 {\n^bb0(%w: i32):\n yield %w\n} {\n^bb0(%v: i32):\n yield %v\n}",
     "'while' before region must end with 'condition'"},
    {"%0 = reduce %t {axis = 0} : fp32 {\n^bb0(%x: fp32, %y: fp32):\n yield %i\n}",
     "'yield' passes (i32) but the combiner region of 'reduce' needs (fp32)"},
    {"yield", "'yield' is a terminator but is not the last op of its block"},
    {"condition %c", "'condition' must end the 'before' region of a 'while'"},
    {"%0 = add %i : i32", "'add' expects 2 operand(s), got 1"},
    {"%0 = splat %f {x = 1} : tensor<4xfp32>\n %1 = store %p, %f : i32",
     "'store' expects 0 result(s), got 1"},
};

TEST(Verifier, EachRuleHasALocatedMessage) {
  for (const Case &c : kCases) {
    test::ParsedIR ir;
    std::string text = std::string("func @f(") + kArgs + ") {\n  " + c.body + "\n  return\n}\n";
    ASSERT_TRUE(ir.parse(text)) << text << ir.errors();
    EXPECT_FALSE(ir.verify()) << text;
    std::string errors = ir.errors();
    EXPECT_NE(errors.find(c.message), std::string::npos) << "expected: " << c.message << "\ngot:\n"
                                                         << errors;
    // Errors point into the .tkir text, at the offending op (line 2 or later).
    EXPECT_NE(errors.find("t.tkir:"), std::string::npos) << errors;
    EXPECT_EQ(errors.find("t.tkir:1:"), std::string::npos) << errors;
  }
}

TEST(Verifier, AcceptsWellFormedIR) {
  test::ParsedIR ir;
  ASSERT_TRUE(ir.parse(std::string("func @f(") + kArgs + R"() {
  %0 = add %t, %t : tensor<128xfp32>
  %1 = dot %b, %b, %acc {input_precision = "ieee"} : tensor<16x16xfp32>
  %2 = reduce %t {axis = 0, kind = "max"} : fp32
  %3 = trans %a {order = [1, 0]} : tensor<32x16xfp16>
  return
})"));
  EXPECT_TRUE(ir.verify()) << ir.errors();
}

TEST(Verifier, UseBeforeDefinitionAndOutsideItsRegion) {
  SourceManager sm;
  BufferId buf = sm.addBuffer("k.tk", "");
  IRContext ctx(sm);
  Module m(ctx);
  Builder b(ctx);
  Function *fn = b.createFunction(m, "f", {ctx.i32(), ctx.i1()}, {ctx.i32()}, {buf, 1, 1});
  Value *x = b.add({buf, 2, 3}, fn->argument(0), fn->argument(0));
  Value *y = b.mul({buf, 3, 3}, x, x);
  // Move the mul above the add it uses.
  y->definingOp()->moveBefore(x->definingOp());
  Operation *ifOp = b.createIf({buf, 4, 3}, fn->argument(1), {});
  b.setInsertionPointToEnd(&ifOp->body(0));
  Value *inner = b.add({buf, 5, 5}, x, x);
  b.yield({}, {});
  b.setInsertionPointToEnd(&ifOp->body(1));
  b.yield({}, {});
  b.setInsertionPointToEnd(&fn->body());
  b.ret({buf, 7, 3}, {inner}); // defined inside the then region
  DiagnosticEngine diag(sm);
  EXPECT_FALSE(verifyModule(m, diag));
  std::string errors = diag.renderAll();
  EXPECT_NE(errors.find("k.tk:3:3: error: 'mul' operand #0 (i32) is used before its definition"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("k.tk:2:3: note: defined here"), std::string::npos) << errors;
  EXPECT_NE(errors.find("k.tk:7:3: error: 'return' operand #0"), std::string::npos) << errors;
}

TEST(Verifier, FunctionLevelRules) {
  test::ParsedIR ir;
  ASSERT_TRUE(
      ir.parse("func @f(%a: i32) -> i32 {\n  %0 = add %a, %a : i32\n}\n"
               "func @g(%a: i32) {\n  %0 = call %a, %a {callee = \"f\"} : i32\n  return\n}\n"));
  EXPECT_FALSE(ir.verify());
  std::string errors = ir.errors();
  EXPECT_NE(errors.find("function '@f' must end with 'return'"), std::string::npos) << errors;
  EXPECT_NE(errors.find("passes (i32, i32) to '@f', which takes (i32)"), std::string::npos)
      << errors;
}

} // namespace
} // namespace tk
