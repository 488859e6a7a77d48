// AST -> IR lowering: promotion, broadcasting, division, specialisation,
// control flow, inlining and the errors, each checked on the lowered IR (or
// the diagnostic), plus a round trip of every tutorial through the IR parser.
#include "ir/ASTToIR.h"
#include "ir/IRParser.h"
#include "ir/IRPrinter.h"
#include "parser/Frontend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

namespace tk {
namespace {

struct Lowered {
  bool ok = false;
  std::string ir;    // the printed module
  std::string diags; // rendered diagnostics
  std::vector<Diagnostic> list;
};

// Lowers `kernel` of `source` with a signature and -D style constants.
Lowered lower(const std::string &source, const std::string &kernel, const std::string &signature,
              std::map<std::string, ConstValue> constants = {},
              std::vector<std::string> doNotSpecialize = {}) {
  SourceManager sm;
  BufferId id = sm.addBuffer("test.tk", source);
  ast::Context actx;
  DiagnosticEngine diag(sm);
  Lowered r;
  ast::Module *m = parseAndCheck(sm, id, actx, diag);
  if (!diag.hasErrors()) {
    IRContext ctx(sm);
    Module module(ctx);
    KernelSpec spec{kernel, signature, std::move(constants), std::move(doNotSpecialize)};
    r.ok = lowerKernel(*m, spec, ctx, module, diag) != nullptr;
    r.ir = printModule(module);
  }
  r.diags = diag.renderAll();
  r.list = diag.diagnostics();
  return r;
}

// A one-kernel module: `body` is indented under
// `def k(x_ptr, y_ptr, n, B: tk.constexpr):`.
Lowered kernel(const std::string &body, const std::string &signature = "*fp32, *fp32, i32",
               int64_t block = 128) {
  std::string src = "import tk\n\n@tk.jit\ndef k(x_ptr, y_ptr, n, B: tk.constexpr):\n";
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);)
    src += "    " + line + "\n";
  return lower(src, "k", signature, {{"B", ConstValue::ofInt(block)}});
}

bool contains(const std::string &s, const std::string &what) {
  return s.find(what) != std::string::npos;
}

#define EXPECT_IR(r, text)                                                                         \
  do {                                                                                             \
    EXPECT_TRUE((r).ok) << (r).diags;                                                              \
    EXPECT_TRUE(contains((r).ir, text)) << "expected '" << (text) << "' in:\n" << (r).ir;          \
  } while (0)
#define EXPECT_ERROR(r, text)                                                                      \
  do {                                                                                             \
    EXPECT_FALSE((r).ok) << (r).ir;                                                                \
    EXPECT_TRUE(contains((r).diags, text)) << "expected '" << (text) << "' in:\n" << (r).diags;    \
  } while (0)

//===----------------------------------------------------------------------===//
// Promotion
//===----------------------------------------------------------------------===//

// Loads two tensors of the given dtypes and adds them; returns the IR.
Lowered addOf(const std::string &a, const std::string &b) {
  std::string src = "import tk\n\n@tk.jit\ndef k(p, q, o):\n"
                    "    offs = tk.arange(0, 64)\n"
                    "    x = tk.load(p + offs)\n"
                    "    y = tk.load(q + offs)\n"
                    "    tk.store(o + offs, (x + y).to(tk.float32))\n";
  return lower(src, "k", "*" + a + ", *" + b + ", *fp32");
}

TEST(ASTToIRPromotion, Table) {
  struct Case {
    const char *a, *b, *result;
  };
  // Kind order bool < int < float; the wider wins; unsigned wins at equal
  // width; fp16 with bf16 meets in fp32.
  const Case cases[] = {
      {"i1", "i32", "i32"},     {"i8", "i32", "i32"},     {"i32", "i64", "i64"},
      {"i32", "u32", "u32"},    {"u8", "i32", "i32"},     {"i64", "u32", "i64"},
      {"i32", "fp16", "fp16"},  {"i64", "fp32", "fp32"},  {"fp16", "fp32", "fp32"},
      {"bf16", "fp32", "fp32"}, {"fp16", "bf16", "fp32"}, {"fp32", "fp64", "fp64"},
      {"i1", "fp16", "fp16"},   {"u16", "i8", "u16"},
  };
  for (const Case &c : cases) {
    Lowered r = addOf(c.a, c.b);
    EXPECT_IR(r, std::string("add "));
    EXPECT_TRUE(contains(r.ir, std::string(" : tensor<64x") + c.result + ">\n"))
        << c.a << " + " << c.b << " should compute in " << c.result << ":\n"
        << r.ir;
    // Symmetric.
    Lowered s = addOf(c.b, c.a);
    EXPECT_TRUE(contains(s.ir, std::string(" : tensor<64x") + c.result + ">\n"))
        << c.b << " + " << c.a << ":\n"
        << s.ir;
  }
}

TEST(ASTToIRPromotion, PythonScalarKeepsTensorType) {
  // A Python int does not widen an int16 or fp16 tensor; a Python float does
  // turn an integer tensor into fp32.
  std::string src = "import tk\n\n@tk.jit\ndef k(p, q):\n"
                    "    offs = tk.arange(0, 32)\n"
                    "    x = tk.load(p + offs)\n"
                    "    tk.store(q + offs, (x * 3 + 1).to(tk.float32))\n";
  Lowered i16 = lower(src, "k", "*i16, *fp32");
  EXPECT_IR(i16, "mul");
  EXPECT_TRUE(contains(i16.ir, "constant {value = 3} : tensor<32xi16>") ||
              contains(i16.ir, "constant {value = 3} : i16"))
      << i16.ir;
  EXPECT_TRUE(contains(i16.ir, "add %8, %10 : tensor<32xi16>")) << i16.ir; // not widened to i32
  Lowered f16 = lower(src, "k", "*fp16, *fp32");
  EXPECT_IR(f16, "mul");
  EXPECT_FALSE(contains(f16.ir, "tensor<32xfp32> \n")) << f16.ir;
  std::string fsrc = "import tk\n\n@tk.jit\ndef k(p, q):\n"
                     "    offs = tk.arange(0, 32)\n"
                     "    tk.store(q + offs, tk.load(p + offs) * 0.5)\n";
  Lowered i32 = lower(fsrc, "k", "*i32, *fp32");
  EXPECT_IR(i32, "sitofp");
  EXPECT_IR(i32, "mul");
}

TEST(ASTToIRPromotion, DynamicScalarPromotesTensor) {
  // A runtime fp32 scalar is not a Python scalar: fp16 * fp32 -> fp32.
  std::string src = "import tk\n\n@tk.jit\ndef k(p, q, s):\n"
                    "    offs = tk.arange(0, 32)\n"
                    "    tk.store(q + offs, tk.load(p + offs) * s)\n";
  Lowered r = lower(src, "k", "*fp16, *fp32, fp32");
  EXPECT_IR(r, "fpext");
  EXPECT_IR(r, "mul");
}

//===----------------------------------------------------------------------===//
// Division
//===----------------------------------------------------------------------===//

TEST(ASTToIRDivision, TrueDivisionOfIntsIsFp32) {
  Lowered r = kernel("offs = tk.arange(0, B)\n"
                     "tk.store(y_ptr + offs, offs / n)\n");
  EXPECT_IR(r, "sitofp");
  EXPECT_IR(r, "div");
  EXPECT_IR(r, "tensor<128xfp32>");
}

TEST(ASTToIRDivision, FloorDivAndModAreCStyleOnTensors) {
  Lowered r = kernel("offs = tk.arange(0, B) - 64\n"
                     "q = offs // 7\n"
                     "m = offs % 7\n"
                     "tk.store(y_ptr + offs + 64, (q + m).to(tk.float32))\n");
  // Truncating integer division: the IR's `div` and `rem`, not `floordiv`.
  EXPECT_IR(r, "= div ");
  EXPECT_IR(r, "= rem ");
  EXPECT_FALSE(contains(r.ir, "floordiv")) << r.ir;
}

TEST(ASTToIRDivision, ConstexprDivisionIsPythonStyle) {
  // Random constants: the folded value must match Python's // and %.
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> dist(-100, 100);
  for (int i = 0; i < 20; ++i) {
    int a = dist(rng), b = dist(rng);
    if (b == 0)
      b = 3;
    int q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
      --q;
      m += b;
    }
    std::string body = "tk.static_assert((" + std::to_string(a) + ") // (" + std::to_string(b) +
                       ") == " + std::to_string(q) + ")\n" + "tk.static_assert((" +
                       std::to_string(a) + ") % (" + std::to_string(b) +
                       ") == " + std::to_string(m) + ")\n";
    Lowered r = kernel(body);
    EXPECT_TRUE(r.ok) << a << " // " << b << ": " << r.diags;
  }
}

//===----------------------------------------------------------------------===//
// Broadcasting and shapes
//===----------------------------------------------------------------------===//

TEST(ASTToIRBroadcast, ExpandDimsAndBroadcast) {
  Lowered r = kernel("i = tk.arange(0, 16)\n"
                     "j = tk.arange(0, 32)\n"
                     "p = x_ptr + i[:, None] * 32 + j[None, :]\n"
                     "tk.store(p, tk.load(p) + 1.0)\n");
  EXPECT_IR(r, "expand_dims");
  EXPECT_IR(r, "broadcast");
  EXPECT_IR(r, "tensor<16x32xptr<fp32>>");
}

TEST(ASTToIRBroadcast, RankExtensionOnTheLeft) {
  // [32] with [16, 32]: NumPy aligns on the right.
  Lowered r = kernel("a = tk.zeros((16, 32), dtype=tk.float32)\n"
                     "b = tk.arange(0, 32).to(tk.float32)\n"
                     "c = a + b\n"
                     "tk.static_assert(c.shape == (16, 32))\n");
  EXPECT_IR(r, "broadcast");
}

TEST(ASTToIRBroadcast, MismatchIsAnError) {
  Lowered r = kernel("a = tk.arange(0, 128)\n"
                     "b = tk.arange(0, 64)\n"
                     "c = a + b\n");
  EXPECT_ERROR(r, "cannot broadcast [128] with [64]");
  EXPECT_EQ(r.list.front().loc.line, 7u); // the line of `a + b`
}

TEST(ASTToIRBroadcast, LoadMaskAndOtherFollowThePointer) {
  Lowered r = kernel("offs = tk.arange(0, B)\n"
                     "x = tk.load(x_ptr + offs, mask=offs < n, other=0)\n"
                     "tk.store(y_ptr + offs, x, mask=offs < n)\n");
  EXPECT_IR(r, "load");
  EXPECT_IR(r, "constant {value = 0.0} : fp32"); // `other` cast to the pointee type
}

TEST(ASTToIRBroadcast, ArangeMustBePowerOfTwo) {
  EXPECT_ERROR(kernel("offs = tk.arange(0, 100)\n"), "size must be a power of two");
}

//===----------------------------------------------------------------------===//
// Specialisation
//===----------------------------------------------------------------------===//

const char *kAdd = "import tk\n\n@tk.jit\ndef add(x_ptr, y_ptr, n, BLOCK: tk.constexpr):\n"
                   "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
                   "    tk.store(y_ptr + offs, tk.load(x_ptr + offs, mask=offs < n), mask=offs < "
                   "n)\n";

TEST(ASTToIRSpecialize, DivisibilityAttribute) {
  Lowered r = lower(kAdd, "add", "*fp32:16, *fp32, i32:16, 256");
  EXPECT_IR(r, "%arg0: ptr<fp32> {divisibility = 16}, %arg1: ptr<fp32>, %arg2: i32 "
               "{divisibility = 16})");
  EXPECT_IR(r, "tensor<256xi32>");
}

TEST(ASTToIRSpecialize, EqualToOneBecomesConstant) {
  Lowered r = lower(kAdd, "add", "*fp32, *fp32, i32:1", {{"BLOCK", ConstValue::ofInt(64)}});
  EXPECT_IR(r, "%arg2: i32 {constant = 1}");
  // The comparison uses the constant, not the argument.
  EXPECT_EQ(r.ir.find("%arg2"), r.ir.rfind("%arg2")) << r.ir; // declared, never used
}

TEST(ASTToIRSpecialize, DoNotSpecialize) {
  Lowered r = lower(kAdd, "add", "*fp32:16, *fp32, i32:16, 256", {}, {"n", "x_ptr"});
  EXPECT_IR(r, "%arg0: ptr<fp32>, %arg1: ptr<fp32>, %arg2: i32)");
  std::string dec = std::string(kAdd);
  dec.replace(dec.find("@tk.jit"), 7, "@tk.jit(do_not_specialize=[\"n\"])");
  Lowered d = lower(dec, "add", "*fp32:16, *fp32, i32:1, 256");
  EXPECT_IR(d, "%arg2: i32)");
  EXPECT_IR(d, "{divisibility = 16}");
}

TEST(ASTToIRSpecialize, SignatureWithoutConstexprsAndAnnotations) {
  Lowered r = lower(kAdd, "add", "*fp16, *fp16, i64", {{"BLOCK", ConstValue::ofInt(32)}});
  EXPECT_IR(r, "%arg2: i64");
  EXPECT_IR(r, "tensor<32xfp16>");
  std::string annotated = "import tk\n\n@tk.jit\ndef k(p: \"*fp32:16\", n: \"i32\", B: "
                          "tk.constexpr = 64):\n    tk.store(p + tk.arange(0, B), 1.0)\n";
  Lowered a = lower(annotated, "k", "");
  EXPECT_IR(a, "%arg0: ptr<fp32> {divisibility = 16}, %arg1: i32)");
  EXPECT_IR(a, "tensor<64xptr<fp32>>");
}

TEST(ASTToIRSpecialize, Errors) {
  EXPECT_ERROR(lower(kAdd, "add", "*fp32, *fp32"), "the signature has 2 entries but 'add' has 4");
  EXPECT_ERROR(lower(kAdd, "add", ""), "parameter 'x_ptr' of 'add' has no type");
  EXPECT_ERROR(lower(kAdd, "add", "*fp32, *fp32, i32"), "constexpr parameter 'BLOCK'");
  EXPECT_ERROR(lower(kAdd, "add", "*fq32, *fp32, i32, 4"), "unknown dtype 'fq32'");
}

TEST(ASTToIRSpecialize, ParseConstValue) {
  EXPECT_EQ(parseConstValue("128").intValue, 128);
  EXPECT_EQ(parseConstValue("-0x10").intValue, -16);
  EXPECT_EQ(parseConstValue("1e-5").kind, ConstValue::Kind::Float);
  EXPECT_EQ(parseConstValue("True").kind, ConstValue::Kind::Bool);
  EXPECT_EQ(parseConstValue("tk.float16").dtype, DType::F16);
  EXPECT_EQ(parseConstValue("bf16").dtype, DType::BF16);
  EXPECT_EQ(parseConstValue("leaky_relu").stringValue, "leaky_relu");
  EXPECT_EQ(parseConstValue("'x'").stringValue, "x");
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

TEST(ASTToIRControl, ConstexprIfPicksItsBranch) {
  // The untaken branch is ill-typed for this specialisation and is never lowered.
  std::string body = "offs = tk.arange(0, B)\n"
                     "if B > 64:\n"
                     "    x = tk.load(x_ptr + offs) * 2.0\n"
                     "else:\n"
                     "    x = tk.arange(0, 3)\n"
                     "tk.store(y_ptr + offs, x)\n";
  Lowered r = kernel(body);
  EXPECT_IR(r, "mul");
  EXPECT_FALSE(contains(r.ir, " if ")) << r.ir;
  EXPECT_ERROR(kernel(body, "*fp32, *fp32, i32", 32), "power of two");
}

TEST(ASTToIRControl, StaticRangeUnrolls) {
  Lowered r = kernel("offs = tk.arange(0, B)\n"
                     "acc = tk.zeros([B], dtype=tk.float32)\n"
                     "for i in tk.static_range(3):\n"
                     "    acc += tk.load(x_ptr + offs + i * B)\n"
                     "tk.store(y_ptr + offs, acc)\n");
  EXPECT_TRUE(r.ok) << r.diags;
  size_t loads = 0;
  for (size_t p = r.ir.find("load "); p != std::string::npos; p = r.ir.find("load ", p + 1))
    ++loads;
  EXPECT_EQ(loads, 3u) << r.ir;
  EXPECT_FALSE(contains(r.ir, "for ")) << r.ir;
}

TEST(ASTToIRControl, LoopCarriedValues) {
  Lowered r = kernel("offs = tk.arange(0, B)\n"
                     "acc = tk.zeros([B], dtype=tk.float32)\n"
                     "count = 0\n"
                     "for i in range(0, n, 4):\n"
                     "    acc += tk.load(x_ptr + offs + i)\n"
                     "    count += 1\n"
                     "tk.store(y_ptr + offs, acc + count)\n");
  EXPECT_IR(r, "= for ");
  EXPECT_IR(r, "yield");
  EXPECT_IR(r, "tensor<128xfp32>, i32"); // two carried values
}

TEST(ASTToIRControl, CarriedTypeChangeIsAnError) {
  Lowered r = kernel("acc = 0\n"
                     "for i in range(n):\n"
                     "    acc = acc + tk.load(x_ptr + tk.arange(0, B))\n");
  EXPECT_ERROR(r, "loop-carried variable 'acc' changes type in the loop: i32 before it, "
                  "tensor<128xfp32> at the end of the body");
}

TEST(ASTToIRControl, DynamicIfYields) {
  Lowered r = kernel("offs = tk.arange(0, B)\n"
                     "x = tk.load(x_ptr + offs)\n"
                     "if n > 10:\n"
                     "    x = x * 2.0\n"
                     "else:\n"
                     "    x = x + 1.0\n"
                     "tk.store(y_ptr + offs, x)\n");
  EXPECT_IR(r, "= if ");
  EXPECT_IR(r, "yield");
}

TEST(ASTToIRControl, DynamicIfTypeMismatch) {
  Lowered r = kernel("x = 1\n"
                     "if n > 10:\n"
                     "    x = tk.load(x_ptr + tk.arange(0, B))\n"
                     "else:\n"
                     "    x = n\n");
  EXPECT_ERROR(r, "variable 'x' is tensor<128xfp32> after the 'if' branch but i32 after the "
                  "'else' branch");
}

TEST(ASTToIRControl, WhileLoop) {
  Lowered r = kernel("i = 0\n"
                     "while i < n:\n"
                     "    i += 2\n"
                     "tk.store(y_ptr, i.to(tk.float32))\n");
  EXPECT_IR(r, "= while ");
  EXPECT_IR(r, "condition");
}

//===----------------------------------------------------------------------===//
// Inlining and compile-time checks
//===----------------------------------------------------------------------===//

TEST(ASTToIRInline, HelpersInlineWithConstexprArguments) {
  std::string src = "import tk\n\n"
                    "@tk.jit\ndef scale(x, FACTOR: tk.constexpr):\n"
                    "    tk.static_assert(FACTOR > 1, 'factor too small')\n"
                    "    return x * FACTOR, FACTOR + 1\n\n"
                    "@tk.jit\ndef k(p):\n"
                    "    offs = tk.arange(0, 16)\n"
                    "    y, f = scale(tk.load(p + offs), 4)\n"
                    "    tk.static_assert(f == 5)\n"
                    "    tk.store(p + offs, y)\n";
  Lowered r = lower(src, "k", "*fp32");
  EXPECT_IR(r, "mul");
  EXPECT_FALSE(contains(r.ir, "call")) << r.ir;
  std::string bad = src;
  bad.replace(bad.find("tk.load(p + offs), 4)"), 21, "tk.load(p + offs), 1)");
  EXPECT_ERROR(lower(bad, "k", "*fp32"), "static assertion failed: factor too small");
}

TEST(ASTToIRInline, ReduceWithCombineFunction) {
  std::string src = "import tk\n\n"
                    "@tk.jit\ndef add(a, b):\n    return a + b\n\n"
                    "@tk.jit\ndef k(p):\n"
                    "    x = tk.load(p + tk.arange(0, 16))\n"
                    "    tk.store(p, tk.reduce(x, 0, add))\n";
  Lowered r = lower(src, "k", "*fp32");
  EXPECT_IR(r, "reduce");
  EXPECT_IR(r, "yield");
}

TEST(ASTToIRInline, StaticPrintIsANote) {
  Lowered r = kernel("tk.static_print('block', B)\n");
  EXPECT_TRUE(r.ok) << r.diags;
  EXPECT_TRUE(contains(r.diags, "note: tk.static_print: block constexpr int 128")) << r.diags;
}

TEST(ASTToIRErrors, LocatedTypeErrors) {
  EXPECT_ERROR(kernel("x = tk.load(x_ptr + tk.arange(0, B))\ny = x << 2\n"),
               "'<<' needs integer operands");
  EXPECT_ERROR(kernel("tk.store(y_ptr + tk.arange(0, B), 1.0, mask=tk.arange(0, B))\n"),
               "mask must be a boolean (i1) tensor, got tensor<128xi32>");
  EXPECT_ERROR(kernel("x = tk.exp(tk.arange(0, B))\n"), "tk.exp needs a float operand");
  EXPECT_ERROR(kernel("x = tk.sum(tk.arange(0, B), axis=1)\n"),
               "axis 1 is out of range for tensor<128xi32>");
  EXPECT_ERROR(kernel("a = tk.zeros((32, 16), dtype=tk.float16)\n"
                      "c = tk.dot(a, a)\n"),
               "tk.dot: the inner dimensions differ: [32, 16] x [32, 16]");
  EXPECT_ERROR(kernel("x = x_ptr * 2\n"), "invalid operands");
}

//===----------------------------------------------------------------------===//
// Tutorials: lowered, verified, and the text parses back to the same text.
//===----------------------------------------------------------------------===//

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ASTToIRTutorials, RoundTrip) {
  struct Tutorial {
    const char *file, *kernel, *signature;
    std::map<std::string, ConstValue> constants;
  };
  const Tutorial tutorials[] = {
      {"01-vector-add.tk",
       "add_kernel",
       "*fp32:16, *fp32:16, *fp32:16, i32",
       {{"BLOCK_SIZE", ConstValue::ofInt(1024)}}},
      {"02-fused-softmax.tk",
       "softmax_kernel",
       "*fp32:16, *fp32:16, i32, i32, i32, i32",
       {{"BLOCK_SIZE", ConstValue::ofInt(1024)}}},
      {"03-layer-norm.tk",
       "layer_norm_fwd",
       "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32, i32, fp32",
       {{"BLOCK_SIZE", ConstValue::ofInt(512)}}},
      {"04-matmul.tk",
       "matmul_kernel",
       "*fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1",
       {{"BLOCK_SIZE_M", ConstValue::ofInt(128)},
        {"BLOCK_SIZE_N", ConstValue::ofInt(64)},
        {"BLOCK_SIZE_K", ConstValue::ofInt(32)},
        {"GROUP_SIZE_M", ConstValue::ofInt(8)},
        {"ACTIVATION", ConstValue::ofString("leaky_relu")}}},
  };
  for (const Tutorial &t : tutorials) {
    std::string source = readFile(std::string(TK_SOURCE_DIR) + "/tutorials/" + t.file);
    ASSERT_FALSE(source.empty()) << t.file;
    Lowered r = lower(source, t.kernel, t.signature, t.constants);
    ASSERT_TRUE(r.ok) << t.file << ":\n" << r.diags;

    SourceManager sm;
    BufferId id = sm.addBuffer("roundtrip.tkir", r.ir);
    DiagnosticEngine diag(sm);
    IRContext ctx(sm);
    std::unique_ptr<Module> parsed = parseIR(ctx, id, diag);
    ASSERT_TRUE(parsed && !diag.hasErrors()) << t.file << ":\n" << diag.renderAll();
    EXPECT_EQ(printModule(*parsed), r.ir) << t.file;
  }
}

} // namespace
} // namespace tk
