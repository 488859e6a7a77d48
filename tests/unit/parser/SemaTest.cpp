// Tests of the builtin table (lang/Builtins.h) and the semantic checks
// (parser/Sema.h) through parseAndCheck. Negative cases for every check are
// also in tests/filecheck/diagnostics; here each check is exercised from both
// sides, and the annotations Sema leaves on the AST are checked.
#include "lang/Builtins.h"
#include "parser/Frontend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace tk {
namespace {

// The source tree from the build (CMake), not from __FILE__: ccache's
// base_dir makes __FILE__ relative to the build directory, which is not the
// directory ctest runs the binary in.
std::filesystem::path sourceRoot() { return TK_SOURCE_DIR; }

std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Checked {
  SourceManager sm;
  ast::Context ctx;
  DiagnosticEngine diag{sm};
  ast::Module *module = nullptr;

  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diag.diagnostics())
      out.push_back(d.message);
    return out;
  }
  std::string all() const { return diag.renderAll(); }
};

std::unique_ptr<Checked> check(const std::string &src, const CheckOptions &opts = {}) {
  auto c = std::make_unique<Checked>();
  BufferId id = c->sm.addBuffer("t.tk", src);
  c->module = parseAndCheck(c->sm, id, c->ctx, c->diag, opts);
  return c;
}

// A kernel with `body` (lines indented by 4) after the usual header.
std::string kernel(const std::string &params, const std::string &body) {
  return "import tk\n\n@tk.jit\ndef k(" + params + "):\n" + body;
}

::testing::AssertionResult clean(const std::string &src, const CheckOptions &opts = {}) {
  auto c = check(src, opts);
  if (!c->diag.hasErrors())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c->all();
}

::testing::AssertionResult failsWith(const std::string &src, const std::string &text,
                                     const CheckOptions &opts = {}) {
  auto c = check(src, opts);
  for (const std::string &e : c->errors())
    if (e.find(text) != std::string::npos)
      return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no error containing '" << text << "'; got:\n"
                                       << c->all();
}

//===----------------------------------------------------------------------===//
// The builtin table
//===----------------------------------------------------------------------===//

TEST(BuiltinsTest, NamesAreUniquePerScopeAndIndexedByEnum) {
  std::set<std::string> tk, py;
  size_t i = 0;
  for (const BuiltinInfo &b : allBuiltins()) {
    EXPECT_EQ(static_cast<size_t>(b.id), i++);
    auto &names = b.scope == BuiltinScope::Tk ? tk : py;
    EXPECT_TRUE(names.insert(std::string(b.name)).second) << b.name;
    if (b.kind != BuiltinKind::Unsupported && b.kind != BuiltinKind::DType) {
      EXPECT_FALSE(b.summary.empty()) << b.name;
    }
  }
  std::set<std::string> members;
  for (const TensorMemberInfo &m : allTensorMembers())
    EXPECT_TRUE(members.insert(std::string(m.name)).second) << m.name;
}

TEST(BuiltinsTest, EveryDTypeUnderBothSpellings) {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND)                                                 \
  for (std::string_view name : {std::string_view(IRNAME), std::string_view(PYNAME)}) {             \
    auto id = lookupTkBuiltin(name);                                                               \
    ASSERT_TRUE(id) << name;                                                                       \
    EXPECT_EQ(builtinInfo(*id).kind, BuiltinKind::DType);                                          \
    EXPECT_EQ(builtinInfo(*id).dtype, DType::ENUM);                                                \
  }
#include "lang/DTypes.def"
}

TEST(BuiltinsTest, BriefListIsCovered) {
  for (const char *name : {"program_id",
                           "num_programs",
                           "arange",
                           "zeros",
                           "zeros_like",
                           "full",
                           "cast",
                           "load",
                           "store",
                           "sum",
                           "max",
                           "min",
                           "argmax",
                           "argmin",
                           "reduce",
                           "xor_sum",
                           "cumsum",
                           "cumprod",
                           "associative_scan",
                           "dot",
                           "where",
                           "maximum",
                           "minimum",
                           "clamp",
                           "exp",
                           "exp2",
                           "log",
                           "log2",
                           "sqrt",
                           "sqrt_rn",
                           "rsqrt",
                           "sin",
                           "cos",
                           "abs",
                           "floor",
                           "ceil",
                           "erf",
                           "fma",
                           "sigmoid",
                           "softmax",
                           "cdiv",
                           "div_rn",
                           "fdiv",
                           "umulhi",
                           "broadcast",
                           "broadcast_to",
                           "expand_dims",
                           "reshape",
                           "view",
                           "permute",
                           "trans",
                           "ravel",
                           "cat",
                           "join",
                           "atomic_add",
                           "atomic_max",
                           "atomic_min",
                           "atomic_and",
                           "atomic_or",
                           "atomic_xor",
                           "atomic_xchg",
                           "atomic_cas",
                           "static_assert",
                           "static_print",
                           "device_print",
                           "device_assert",
                           "debug_barrier",
                           "multiple_of",
                           "max_contiguous",
                           "max_constancy",
                           "assume",
                           "range",
                           "static_range",
                           "constexpr",
                           "jit",
                           "autotune",
                           "heuristics",
                           "Config",
                           "next_power_of_2"}) {
    auto id = lookupTkBuiltin(name);
    ASSERT_TRUE(id) << name;
    EXPECT_NE(builtinInfo(*id).kind, BuiltinKind::Unsupported) << name;
  }
  for (const char *name : {"range", "min", "max", "abs", "int", "float", "bool", "len", "print"})
    EXPECT_TRUE(lookupPythonBuiltin(name)) << name;
  for (const char *name : {"to", "sum", "shape", "dtype", "reshape", "trans"})
    EXPECT_TRUE(lookupTensorMember(name)) << name;
}

TEST(BuiltinsTest, SignaturesFollowTriton) {
  const BuiltinInfo &load = builtinInfo(BuiltinId::Load);
  EXPECT_EQ(load.signature.minPositional(), 1u);
  EXPECT_EQ(load.signature.maxPositional(), 8u);
  EXPECT_EQ(load.signature.params[1].name, "mask");
  EXPECT_EQ(load.signature.params[1].defaultText, "None");
  EXPECT_EQ(formatSignature(builtinInfo(BuiltinId::Arange)), "tk.arange(start, end)");

  const BuiltinInfo &reshape = builtinInfo(BuiltinId::Reshape);
  EXPECT_TRUE(reshape.signature.isVariadic());
  EXPECT_EQ(reshape.signature.maxPositional(), 1u);
  EXPECT_TRUE(reshape.signature.findKeyword("can_reorder"));
  EXPECT_FALSE(reshape.signature.findKeyword("shape")); // variadic: not a keyword

  const BuiltinInfo &jit = builtinInfo(BuiltinId::Jit);
  EXPECT_TRUE(jit.signature.params[1].keywordOnly);
  EXPECT_EQ(jit.signature.maxPositional(), 1u);
  EXPECT_NE(formatSignature(jit).find("fn=None, *, version=None"), std::string::npos);

  EXPECT_EQ(formatSignature(builtinInfo(BuiltinId::StaticPrint)),
            "tk.static_print(*values, sep=' ', end='\\n', file=None, flush=False)");
  EXPECT_EQ(formatSignature(builtinInfo(BuiltinId::DTypeF16)), "tk.float16");
  EXPECT_EQ(formatSignature(tensorMemberInfo(TensorMemberId::To)),
            "x.to(dtype, fp_downcast_rounding=None, bitcast=False)");
}

TEST(BuiltinsTest, SignatureParserSplitsOnlyTopLevelCommas) {
  Signature s = Signature::parse("a, b=(1, 2), c='x, y', *rest, d=[3, 4]");
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[1].defaultText, "(1, 2)");
  EXPECT_EQ(s.params[2].defaultText, "'x, y'");
  EXPECT_TRUE(s.params[3].variadic);
  EXPECT_TRUE(s.params[4].keywordOnly);
  EXPECT_EQ(s.minPositional(), 1u);
  EXPECT_EQ(s.maxPositional(), 3u);
}

// Built with += rather than "`" + text: GCC 12 warns (-Wrestrict) on the latter.
std::string inBackquotes(const std::string &text) {
  std::string out = "`";
  out += text;
  out += '`';
  return out;
}

// docs/language.md lists every builtin; this keeps the two in sync.
TEST(BuiltinsTest, LanguageReferenceListsEverySignature) {
  std::string doc = readFile(sourceRoot() / "docs" / "language.md");
  ASSERT_FALSE(doc.empty());
  for (const BuiltinInfo &b : allBuiltins()) {
    if (b.kind == BuiltinKind::DType)
      continue; // listed as a table of spellings
    std::string text = b.kind == BuiltinKind::Unsupported ? qualifiedName(b) : formatSignature(b);
    EXPECT_NE(doc.find(inBackquotes(text)), std::string::npos) << "docs/language.md lacks " << text;
  }
  for (const TensorMemberInfo &m : allTensorMembers())
    EXPECT_NE(doc.find(inBackquotes(formatSignature(m))), std::string::npos)
        << "docs/language.md lacks " << formatSignature(m);
  for (const EnumMemberInfo &e : allEnumMembers())
    EXPECT_NE(doc.find(inBackquotes(qualifiedName(e))), std::string::npos)
        << "docs/language.md lacks " << qualifiedName(e);
}

// tk.PropagateNan.ALL reads as a constant; a member it lacks is an error
// with a suggestion, and the enum itself cannot be called.
TEST(SemaTest, EnumMembers) {
  EXPECT_TRUE(clean(kernel("p", "    x = tk.load(p)\n"
                                "    tk.store(p, tk.maximum(x, 0.0, "
                                "propagate_nan=tk.PropagateNan.ALL))\n")));
  EXPECT_TRUE(
      clean("import tk\nfrom tk import PropagateNan\n\n@tk.jit\ndef k(p):\n"
            "    tk.store(p, tk.minimum(tk.load(p), 1.0, propagate_nan=PropagateNan.NONE))\n"));
  EXPECT_TRUE(failsWith(kernel("p", "    a = tk.PropagateNan.AL\n"),
                        "tk.PropagateNan has no member 'AL'; did you mean 'ALL'?"));
  EXPECT_TRUE(failsWith(kernel("p", "    a = tk.PropagateNan(1)\n"),
                        "tk.PropagateNan is an enum, not a function; use its members "
                        "(tk.PropagateNan.NONE or tk.PropagateNan.ALL)"));
  ASSERT_NE(lookupEnumMember(BuiltinId::PropagateNan, "ALL"), nullptr);
  EXPECT_EQ(lookupEnumMember(BuiltinId::PropagateNan, "ALL")->value, 0xFFFF);
  EXPECT_EQ(lookupEnumMember(BuiltinId::PropagateNan, "NONE")->value, 0);
  EXPECT_EQ(lookupEnumMember(BuiltinId::PropagateNan, "SOME"), nullptr);
}

//===----------------------------------------------------------------------===//
// Kernels that must pass
//===----------------------------------------------------------------------===//

TEST(SemaTest, TutorialsPassCleanly) {
  auto dir = sourceRoot() / "tutorials";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tk")
      files.push_back(e.path());
  ASSERT_FALSE(files.empty());
  for (const auto &f : files)
    EXPECT_TRUE(clean(readFile(f))) << f;
}

TEST(SemaTest, TritonStyleKernelsPass) {
  EXPECT_TRUE(clean(R"(import tk as tl
from tk import constexpr

EPS: tl.constexpr = 1e-5
NEG_INF = float('-inf')


@tl.jit
def _combine(a, b):
    return tl.maximum(a, b)


@tl.autotune(configs=[tl.Config({'BLOCK': 128}, num_warps=4)], key=['n'])
@tl.jit(do_not_specialize=['n'])
def row_max(x_ptr: "*fp32:16", out_ptr, n: "i32", stride, BLOCK: constexpr,
            HAS_BIAS: tl.constexpr = False, bias_ptr=None):
    """Row maxima."""
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK)
    mask = (cols < n) & (row >= 0)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=NEG_INF)
    if HAS_BIAS:
        b = tl.load(bias_ptr + cols, mask=mask, other=0.0)
    if HAS_BIAS:
        x = x + b
    if bias_ptr is not None:
        x = x * 2
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, n, BLOCK, num_stages=2):
        acc = tl.maximum(acc, x + i)
    for j in tl.static_range(2):
        last = j
    m = tl.reduce(acc + last, 0, _combine)
    y = x.to(tl.float16).to(x_ptr.dtype.element_ty)
    z = tl.where(mask, y, 0.0)[:, None] * EPS
    tl.store(out_ptr + row, m)
    tl.device_print("z", z, hex=False)
    w = tl.reshape(z, BLOCK, 1)
    while n > 0:
        n -= 1
        if n == 3:
            break
        else:
            continue
)"));
}

TEST(SemaTest, AnnotatesBindings) {
  auto c = check(R"(import tk
from tk import load
B = 4

@tk.jit
def h(v):
    return v

@tk.jit
def k(p):
    q = load(p) + B
    r = h(q) + tk.arange(0, 4)
    return min(r, q)
)");
  ASSERT_FALSE(c->diag.hasErrors()) << c->all();
  auto *k = c->module->findFunction("k");
  ASSERT_TRUE(k);
  // q = load(p) + B
  auto *assign = ast::cast<ast::Assign>(k->body[0]);
  auto *add = ast::cast<ast::Binary>(assign->value);
  auto *call = ast::cast<ast::Call>(add->lhs);
  auto *loadName = ast::cast<ast::Name>(call->callee);
  EXPECT_EQ(loadName->binding, ast::NameBinding::Builtin);
  EXPECT_EQ(builtinInfo(loadName->builtin).id, BuiltinId::Load);
  EXPECT_EQ(ast::cast<ast::Name>(call->args[0])->binding, ast::NameBinding::Param);
  EXPECT_EQ(ast::cast<ast::Name>(add->rhs)->binding, ast::NameBinding::Global);
  EXPECT_EQ(ast::cast<ast::Name>(assign->targets[0])->binding, ast::NameBinding::Local);
  // r = h(q) + tk.arange(0, 4)
  auto *add2 = ast::cast<ast::Binary>(ast::cast<ast::Assign>(k->body[1])->value);
  auto *hCall = ast::cast<ast::Call>(add2->lhs);
  EXPECT_EQ(ast::cast<ast::Name>(hCall->callee)->binding, ast::NameBinding::Function);
  EXPECT_EQ(ast::cast<ast::Name>(hCall->args[0])->binding, ast::NameBinding::Local);
  auto *arange = ast::cast<ast::Attribute>(ast::cast<ast::Call>(add2->rhs)->callee);
  EXPECT_EQ(builtinInfo(arange->builtin).id, BuiltinId::Arange);
  EXPECT_EQ(ast::cast<ast::Name>(arange->value)->binding, ast::NameBinding::Module);
  // return min(r, q)
  auto *ret = ast::cast<ast::Return>(k->body[2]);
  auto *minName = ast::cast<ast::Name>(ast::cast<ast::Call>(ret->value)->callee);
  EXPECT_EQ(builtinInfo(minName->builtin).id, BuiltinId::PyMin);
}

TEST(SemaTest, ExternalNamesFromPython) {
  std::string src =
      "@tl.jit\ndef k(x_ptr):\n    y = tl.load(x_ptr) * SCALE\n    z = helper(y, 1, 2, 3)\n";
  EXPECT_TRUE(failsWith(src, "undefined name 'tl'"));
  CheckOptions opts;
  opts.externalModuleAliases = {"tl"};
  opts.externalGlobals = {"SCALE", "helper"};
  EXPECT_TRUE(clean(src, opts));
  EXPECT_TRUE(
      failsWith("@tl.jit\ndef k(x_ptr):\n    y = tl.lod(x_ptr)\n", "did you mean 'load'", opts));
}

//===----------------------------------------------------------------------===//
// Each check, both ways
//===----------------------------------------------------------------------===//

TEST(SemaTest, NameResolution) {
  EXPECT_TRUE(failsWith(kernel("x", "    offs = 1\n    y = offz\n"),
                        "undefined name 'offz'; did you mean 'offs'?"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.lod(x)\n"),
                        "module 'tk' has no attribute 'lod'; did you mean 'load'?"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = BLOCK\n"), "undefined name 'BLOCK'"));
  EXPECT_TRUE(clean("import tk\nBLOCK = tk.constexpr(128)\n@tk.jit\ndef k(x):\n    y = BLOCK\n"));
  EXPECT_TRUE(failsWith("import triton\n", "tk kernels import tk, not triton"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = x.shap\n"), "did you mean 'shape'?"));
  EXPECT_TRUE(clean(kernel("x", "    y = x.shape[0] + x.dtype.primitive_bitwidth\n")));
  // A local that shadows a Python builtin is a local.
  EXPECT_TRUE(clean(kernel("x", "    max = tk.max(x, 0)\n    y = max + 1\n")));
  EXPECT_TRUE(
      failsWith(kernel("x", "    y = v\n    v = 1\n"), "'v' is used before it is assigned"));
}

TEST(SemaTest, ArityAndKeywords) {
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.arange(0, 4, 1)\n"),
                        "tk.arange() takes 2 positional arguments but 3 were given"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.arange(0)\n"),
                        "tk.arange() missing required argument 'end'"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.zeros()\n"),
                        "missing required arguments 'shape' and 'dtype'"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.load(x, msk=x)\n"), "did you mean 'mask'?"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.load(x, pointer=x)\n"),
                        "got multiple values for argument 'pointer'"));
  EXPECT_TRUE(clean(kernel("x", "    y = tk.arange(start=0, end=4)\n")));
  EXPECT_TRUE(clean(kernel("x", "    y = tk.reshape(x, 2, 2, 2, can_reorder=True)\n")));
  EXPECT_TRUE(failsWith(kernel("x", "    y = tk.reshape(x, 2, shape=2)\n"),
                        "unexpected keyword argument 'shape'"));
  EXPECT_TRUE(failsWith("import tk\n@tk.jit\ndef h(a, b=1):\n    return a\n@tk.jit\ndef k(x):\n"
                        "    y = h(1, 2, 3)\n",
                        "h() takes from 1 to 2 positional arguments but 3 were given"));
  EXPECT_TRUE(clean("import tk\n@tk.jit\ndef h(a, b=1):\n    return a\n@tk.jit\ndef k(x):\n"
                    "    y = h(1, b=2)\n"));
}

// Seeded random calls of fixed-arity builtins: an error exactly when the
// positional count is outside [min, max].
TEST(SemaTest, RandomArityAgainstTable) {
  std::mt19937 rng(1234);
  std::vector<const BuiltinInfo *> functions;
  for (const BuiltinInfo &b : allBuiltins())
    if (b.scope == BuiltinScope::Tk && b.kind == BuiltinKind::Function && !b.signature.isVariadic())
      functions.push_back(&b);
  for (int trial = 0; trial < 60; ++trial) {
    const BuiltinInfo &b = *functions[rng() % functions.size()];
    unsigned n = rng() % (b.signature.maxPositional() + 3);
    std::string args;
    for (unsigned i = 0; i < n; ++i)
      args += (i ? ", " : "") + std::string("x");
    // A function of a namespace is reached through it: libdevice.asin is
    // tk.extra.libdevice.asin, cuda.smid tk.extra.cuda.smid.
    std::string name(b.name);
    bool underExtra = name.rfind("libdevice.", 0) == 0 || name.rfind("cuda.", 0) == 0;
    std::string src =
        kernel("x", "    y = tk." + (underExtra ? "extra." + name : name) + "(" + args + ")\n");
    bool ok = n >= b.signature.minPositional() && n <= b.signature.maxPositional();
    EXPECT_EQ(clean(src), ok) << src;
  }
}

TEST(SemaTest, RandomTypeStrings) {
  std::mt19937 rng(99);
  const char *dtypes[] = {"i1",  "i8",   "i16",  "i32",  "i64", "u8",
                          "u32", "fp16", "bf16", "fp32", "fp64"};
  for (int trial = 0; trial < 40; ++trial) {
    std::string ty = rng() % 2 ? "*" : "";
    ty += dtypes[rng() % std::size(dtypes)];
    unsigned div = 1 + rng() % 40;
    bool withDiv = rng() % 2;
    if (withDiv) {
      ty += ':';
      ty += std::to_string(div);
    }
    bool ok = !withDiv || (div & (div - 1)) == 0;
    std::string param = "x: \"";
    param += ty;
    param += '"';
    std::string src = kernel(param, "    pass\n");
    EXPECT_EQ(clean(src), ok) << ty;
  }
  EXPECT_TRUE(failsWith(kernel("x: \"*f32\"", "    pass\n"), "did you mean 'fp32'?"));
  EXPECT_TRUE(failsWith(kernel("x: \"*float16\"", "    pass\n"), "did you mean 'fp16'?"));
}

TEST(SemaTest, AssignmentToConstexpr) {
  EXPECT_TRUE(
      failsWith(kernel("x, B: tk.constexpr", "    B = 2\n"), "cannot assign to constexpr 'B'"));
  EXPECT_TRUE(clean(kernel("x, B", "    B = 2\n")));
  EXPECT_TRUE(failsWith("import tk\nB = 1\n@tk.jit\ndef k(x):\n    B += 1\n",
                        "it is a module-level constant"));
  auto c = check(kernel("x, B: tk.constexpr", "    B = 2\n"));
  ASSERT_EQ(c->diag.diagnostics().size(), 1u);
  ASSERT_EQ(c->diag.diagnostics()[0].notes.size(), 1u);
  EXPECT_EQ(c->diag.diagnostics()[0].notes[0].loc.line, 4u); // the parameter
}

TEST(SemaTest, UnsupportedConstructs) {
  EXPECT_TRUE(failsWith(kernel("x", "    x[0] = 1\n"), "assignment to a subscript"));
  EXPECT_TRUE(
      failsWith(kernel("x", "    for i in range(2):\n        pass\n    else:\n        pass\n"),
                "'else' on a 'for' loop"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = x is 1\n"), "'is' other than against None"));
  EXPECT_TRUE(clean(kernel("x", "    if x is None:\n        pass\n")));
  // Identity of compile-time values folds (Inductor: `x.dtype is tl.float32`).
  EXPECT_TRUE(clean(kernel("x", "    y = x.dtype is tk.float32\n")));
  EXPECT_TRUE(failsWith(kernel("x", "    y = x is x\n"), "between compile-time values"));
  EXPECT_TRUE(failsWith(kernel("x", "    y = x not in (1, 2)\n"), "the 'not in' operator"));
  EXPECT_TRUE(failsWith(kernel("x", "    def f():\n        pass\n"), "nested function"));
  EXPECT_TRUE(failsWith(kernel("x", "    for i in x:\n        pass\n"), "iterating over 'x'"));
  EXPECT_TRUE(clean(kernel("x", "    for i in range(4):\n        pass\n")));
  EXPECT_TRUE(failsWith("import tk\n@tk.jit\n@functools.cache\ndef k(x):\n    pass\n",
                        "decorator 'functools.cache'"));
  EXPECT_TRUE(failsWith("import tk\nx = 1\nx + 1\n", "a module-level expression"));
  EXPECT_TRUE(clean("\"\"\"Docstring.\"\"\"\nimport tk\n"));
}

TEST(SemaTest, Recursion) {
  EXPECT_TRUE(failsWith("import tk\n@tk.jit\ndef f(x):\n    return g(x)\n@tk.jit\ndef g(x):\n"
                        "    return f(x)\n",
                        "recursion is not supported: f -> g -> f"));
  EXPECT_TRUE(clean("import tk\n@tk.jit\ndef f(x):\n    return g(x) + g(x)\n@tk.jit\ndef g(x):\n"
                    "    return x\n"));
  // A long chain of helpers is checked without deep recursion.
  std::string chain = "import tk\n";
  for (int i = 0; i < 3000; ++i)
    chain += "@tk.jit\ndef f" + std::to_string(i) + "(x):\n    return f" + std::to_string(i + 1) +
             "(x)\n";
  chain += "@tk.jit\ndef f3000(x):\n    return f0(x)\n";
  EXPECT_TRUE(failsWith(chain, "recursion is not supported: f0 -> f1 -> f2"));
}

TEST(SemaTest, MaybeUndefined) {
  EXPECT_TRUE(failsWith(kernel("x", "    if x > 0:\n        y = 1\n    z = y\n"),
                        "'y' may be undefined here: it is assigned only in the 'if' branch at "
                        "line 6"));
  EXPECT_TRUE(
      clean(kernel("x", "    if x > 0:\n        y = 1\n    else:\n        y = 2\n    z = y\n")));
  // A branch that returns does not reach the use.
  EXPECT_TRUE(
      clean(kernel("x", "    if x > 0:\n        return\n    else:\n        y = 2\n    z = y\n")));
  // Compile-time conditions: only one branch survives specialisation.
  EXPECT_TRUE(clean(kernel("x, B: tk.constexpr", "    if B:\n        y = 1\n    z = y\n")));
  EXPECT_TRUE(clean(kernel("x", "    if x is not None:\n        y = 1\n    z = y\n")));
  EXPECT_TRUE(clean(kernel("x", "    if x.dtype == tk.float16:\n        y = 1\n    z = y\n")));
  EXPECT_TRUE(failsWith(kernel("x", "    for i in range(x):\n        y = i\n    z = y\n"),
                        "which may run zero times"));
  EXPECT_TRUE(clean(kernel("x", "    y = 0\n    for i in range(x):\n        y = i\n    z = y\n")));
  EXPECT_TRUE(clean(kernel("x", "    for i in tk.static_range(4):\n        y = i\n    z = y\n")));
  EXPECT_TRUE(failsWith(kernel("x", "    while x > 0:\n        y = 1\n    z = y\n"),
                        "inside the 'while' loop"));
  // Each variable is reported once.
  auto c = check(kernel("x", "    if x > 0:\n        y = 1\n    z = y\n    w = y\n"));
  EXPECT_EQ(c->errors().size(), 1u) << c->all();
}

TEST(SemaTest, ControlFlowAndDefinitions) {
  EXPECT_TRUE(failsWith(kernel("x", "    break\n"), "'break' outside loop"));
  EXPECT_TRUE(clean(
      kernel("x", "    while x > 0:\n        if x == 2:\n            break\n        x -= 1\n")));
  EXPECT_TRUE(failsWith("import tk\nreturn 3\n", "'return' outside function"));
  EXPECT_TRUE(failsWith("import tk\n@tk.jit\ndef k(x):\n    pass\n@tk.jit\ndef k(y):\n    pass\n",
                        "redefinition of function 'k'"));
  EXPECT_TRUE(failsWith("import tk\ndef h(x):\n    return x\n", "not decorated with @tk.jit"));
  EXPECT_TRUE(failsWith("import tk\ndef h(x):\n    return x\n@tk.jit\ndef k(x):\n    y = h(x)\n",
                        "cannot call 'h': it is not a @tk.jit function"));
  EXPECT_TRUE(failsWith(kernel("x", "    f = 3\n    y = f(1)\n"), "'f' is not callable"));
  // A parameter may carry a @tk.jit function (Triton's idiom): a kernel's
  // constexpr one, or any parameter of a helper; what it holds is checked
  // when the call is lowered.
  EXPECT_TRUE(clean(kernel("x, ACT: tk.constexpr", "    y = ACT(x)\n")));
  EXPECT_TRUE(clean(kernel("x, combine_op", "    y = combine_op(x, x)\n")));
}

TEST(SemaTest, ParseErrorsSkipTheChecks) {
  auto c = check("import tk\n@tk.jit\ndef k(x):\n    y = (undefined +\n");
  ASSERT_TRUE(c->diag.hasErrors());
  for (const std::string &e : c->errors())
    EXPECT_EQ(e.find("undefined name"), std::string::npos) << e;
}

} // namespace
} // namespace tk
