// JitKernel: the sources of a kernel and its helpers from several "files",
// compiled as one module; diagnostics in each file's own lines; runs through
// the interpreter on the caller's memory.
#include "JitKernel.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace tk {
namespace {

// What the Python side sends for `from util import twice_plus` and
// `import tk as tl`: decorator lines blanked, a jit decorator above `def`,
// and the prelude that imports it.
const char *kKernel = "\n"
                      "@_tk_jit_\n"
                      "def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    mask = offs < n\n"
                      "    x = tl.load(x_ptr + offs, mask=mask)\n"
                      "    tl.store(out_ptr + offs, twice_plus(x) * FACTOR, mask=mask)\n";
const char *kHelper = "@_tk_jit_\n"
                      "def twice_plus(v):\n"
                      "    return v * 2 + OFFSET\n";
const char *kPrelude = "from tk import jit as _tk_jit_\n";

JitRequest scaleRequest() {
  JitRequest req;
  req.sources = {
      {"/src/kern.py", kKernel, 40}, {"/src/util.py", kHelper, 7}, {"<tk prelude>", kPrelude, 1}};
  req.kernel = "scale";
  req.signature = "*fp32:16, *fp32:16, i32";
  req.constants["BLOCK"] = ConstValue::ofInt(64);
  req.constants["FACTOR"] = ConstValue::ofFloat(0.5);
  req.constants["OFFSET"] = ConstValue::ofInt(3);
  req.externalGlobals = {"FACTOR", "OFFSET"};
  req.moduleAliases = {"tl"};
  return req;
}

JitArg pointer(std::vector<float> &v, const char *name) {
  JitArg a;
  a.kind = JitArg::Kind::Pointer;
  a.base = reinterpret_cast<uint64_t>(v.data());
  a.bytes = v.size() * sizeof(float);
  a.dtype = DType::F32;
  a.name = name;
  return a;
}

// A run over `programs` programs along x, without a step budget.
InterpretOptions gridOf(int64_t programs) {
  InterpretOptions o;
  o.grid = {programs, 1, 1};
  o.maxSteps = 0;
  return o;
}

JitArg integer(int64_t v) {
  JitArg a;
  a.kind = JitArg::Kind::Int;
  a.intValue = v;
  return a;
}

TEST(JitKernelTest, HelperFromAnotherFileInlinesAndRuns) {
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(scaleRequest(), errors);
  ASSERT_TRUE(k) << errors;
  EXPECT_EQ(k->argumentNames(), (std::vector<std::string>{"x_ptr", "out_ptr", "n"}));
  EXPECT_NE(k->ir().find("func @scale"), std::string::npos);
  EXPECT_EQ(k->irOpt().find("twice_plus"), std::string::npos) << "the helper is inlined";

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-4, 4);
  const int64_t n = 150;
  std::vector<float> x(n), out(n, 123.0f);
  for (float &v : x)
    v = dist(rng);
  std::string printed;
  ASSERT_EQ(RunResult::Ok, k->run({pointer(x, "x_ptr"), pointer(out, "out_ptr"), integer(n)},
                                  gridOf(3), printed, errors))
      << errors;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_FLOAT_EQ(out[i], (x[i] * 2 + 3) * 0.5f) << i;
}

TEST(JitKernelTest, ErrorsPointIntoEachFile) {
  JitRequest req = scaleRequest();
  req.sources[1].text = "@_tk_jit_\ndef twice_plus(v):\n    return v * 2 + OFFSETT\n";
  std::string errors;
  EXPECT_FALSE(JitKernel::compile(req, errors));
  // Line 3 of the helper's text is line 9 of util.py.
  EXPECT_NE(errors.find("/src/util.py:9:20: error: undefined name 'OFFSETT'"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("did you mean 'OFFSET'"), std::string::npos) << errors;
}

TEST(JitKernelTest, SignatureMistakesAreDiagnostics) {
  JitRequest req = scaleRequest();
  req.signature = "*fp32:16, i32";
  std::string errors;
  EXPECT_FALSE(JitKernel::compile(req, errors));
  EXPECT_NE(errors.find("/src/kern.py:42:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("the signature has 2 entries"), std::string::npos) << errors;
}

TEST(JitKernelTest, UnknownKernelName) {
  JitRequest req = scaleRequest();
  req.kernel = "scael";
  std::string errors;
  EXPECT_FALSE(JitKernel::compile(req, errors));
  EXPECT_NE(errors.find("scael"), std::string::npos) << errors;
}

TEST(JitKernelTest, OutOfBoundsNamesTheArgument) {
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(scaleRequest(), errors);
  ASSERT_TRUE(k) << errors;
  std::vector<float> x(10, 1.5f), out(100, 0.25f);
  std::string printed;
  // n = 100 but x holds 10 elements.
  EXPECT_EQ(RunResult::Failed, k->run({pointer(x, "x_ptr"), pointer(out, "out_ptr"), integer(100)},
                                      gridOf(2), printed, errors));
  EXPECT_NE(errors.find("/src/kern.py:45:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("'x_ptr'"), std::string::npos) << errors;
}

TEST(JitKernelTest, SameMemoryTwiceIsOneBuffer) {
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(scaleRequest(), errors);
  ASSERT_TRUE(k) << errors;
  std::vector<float> x = {1.0f, -2.5f, 7.0f};
  std::string printed;
  ASSERT_EQ(RunResult::Ok, k->run({pointer(x, "x_ptr"), pointer(x, "out_ptr"), integer(3)},
                                  gridOf(1), printed, errors))
      << errors;
  EXPECT_FLOAT_EQ(x[0], 2.5f);
  EXPECT_FLOAT_EQ(x[1], -1.0f);
  EXPECT_FLOAT_EQ(x[2], 8.5f);
}

TEST(JitKernelTest, StoredArgumentsAreTheOutputs) {
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(scaleRequest(), errors);
  ASSERT_TRUE(k) << errors;
  EXPECT_EQ(k->storedArguments(), (std::vector<bool>{false, true, false}));
}

// A read-only array the kernel stores to is refused before the run, at the
// store, and nothing is written; the same array as an input is fine.
TEST(JitKernelTest, ReadOnlyOutputIsRefusedBeforeTheRun) {
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(scaleRequest(), errors);
  ASSERT_TRUE(k) << errors;
  std::vector<float> x = {1.0f, -2.5f, 7.0f}, out = {9.0f, 9.0f, 9.0f};
  JitArg ro = pointer(out, "out_ptr");
  ro.readOnly = true;
  std::string printed;
  EXPECT_EQ(RunResult::BadArgument,
            k->run({pointer(x, "x_ptr"), ro, integer(3)}, gridOf(1), printed, errors));
  EXPECT_NE(errors.find("/src/kern.py:46:5: error: argument 'out_ptr' is a read-only array"),
            std::string::npos)
      << errors;
  EXPECT_EQ(out, (std::vector<float>{9.0f, 9.0f, 9.0f}));
  JitArg roIn = pointer(x, "x_ptr");
  roIn.readOnly = true;
  EXPECT_EQ(RunResult::Ok,
            k->run({roIn, pointer(out, "out_ptr"), integer(3)}, gridOf(1), printed, errors))
      << errors;
  EXPECT_FLOAT_EQ(out[1], -1.0f);
}

} // namespace
} // namespace tk
