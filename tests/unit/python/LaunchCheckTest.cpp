// TK_CHECK's interpreter side (python/src/LaunchCheck.h, JitKernel::check)
// without a GPU: the program sample, the tolerances, and a launch whose
// "GPU" copy is the interpreter's own result (every element agrees) and then
// the same with one element changed beyond its dtype's tolerance and one
// within it (the first is reported at its store, with its program, index and
// both values).
#include "LaunchCheck.h"
#include "JitKernel.h"
#include "ir/Attribute.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace tk {
namespace {

TEST(LaunchCheckTest, TheSampleCoversSmallGridsAndTheEdgesOfLargeOnes) {
  EXPECT_EQ(samplePrograms(5), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(samplePrograms(64).size(), 64u);
  std::vector<int64_t> s = samplePrograms(1000003);
  ASSERT_EQ(s.size(), 64u);
  EXPECT_EQ(s.front(), 0);
  EXPECT_EQ(s.back(), 1000002);
  for (size_t i = 1; i < s.size(); ++i)
    EXPECT_LT(s[i - 1], s[i]);
  EXPECT_TRUE(samplePrograms(0).empty());
}

// out[i] = x[i] + y[i] * 0.5 over 1000 elements, 128 per program.
const char *kKernel = "\n"
                      "@_tk_jit_\n"
                      "def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    mask = offs < n\n"
                      "    x = tl.load(x_ptr + offs, mask=mask)\n"
                      "    y = tl.load(y_ptr + offs, mask=mask)\n"
                      "    tl.store(out_ptr + offs, x + y * 0.5, mask=mask)\n";

JitArg pointer(std::vector<float> &v, const char *name) {
  JitArg a;
  a.kind = JitArg::Kind::Pointer;
  a.base = reinterpret_cast<uint64_t>(v.data());
  a.bytes = v.size() * sizeof(float);
  a.dtype = DType::F32;
  a.name = name;
  return a;
}

TEST(LaunchCheckTest, AnElementBeyondItsToleranceIsReportedAtItsStore) {
  JitRequest req;
  req.sources = {{"/src/axpy.py", kKernel, 10},
                 {"<tk prelude>", "from tk import jit as _tk_jit_\n", 1}};
  req.kernel = "axpy";
  req.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  req.constants["BLOCK"] = ConstValue::ofInt(128);
  req.moduleAliases = {"tl"};
  std::string errors;
  std::unique_ptr<JitKernel> k = JitKernel::compile(req, errors);
  ASSERT_TRUE(k) << errors;
  ASSERT_EQ(k->storedArguments(), (std::vector<bool>{false, false, true, false}));

  const int n = 1000; // 8 programs, the last one ragged
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> x(n), y(n), out(n, 0.0f);
  for (int i = 0; i < n; ++i)
    x[i] = dist(rng), y[i] = dist(rng);
  // What the GPU would leave: the right answer, computed here in fp32.
  std::vector<float> gpu(n);
  for (int i = 0; i < n; ++i)
    gpu[i] = x[i] + y[i] * 0.5f;
  JitArg count;
  count.kind = JitArg::Kind::Int;
  count.intValue = n;
  InterpretOptions o;
  o.grid = {8, 1, 1};
  auto check = [&](std::string &report) {
    std::vector<float> copy = out; // each check runs on fresh copies
    std::string printed;
    return k->check({pointer(x, "x_ptr"), pointer(y, "y_ptr"), pointer(copy, "out_ptr"), count},
                    {0, 0, reinterpret_cast<uint64_t>(gpu.data()), 0}, o, printed, report);
  };
  std::string report;
  ASSERT_EQ(check(report), RunResult::Ok) << report;
  EXPECT_EQ(report, "TK_CHECK: 'axpy': 8 of 8 programs, 1000 stored elements as on the GPU");

  // Within fp32's tolerance: still as on the GPU.
  gpu[5] = std::nextafter(gpu[5], 100.0f);
  ASSERT_EQ(check(report), RunResult::Ok) << report;
  // Element 900 (program 7) off by 0.25: reported, at the store (line 17).
  float right = gpu[900];
  gpu[900] = right + 0.25f;
  ASSERT_EQ(check(report), RunResult::Mismatch) << report;
  EXPECT_NE(report.find("/src/axpy.py:17:5: error: TK_CHECK: 'axpy' stored different values on "
                        "the GPU and on the interpreter in program (7, 0, 0): element 900 of "
                        "'out_ptr' (byte 3600 of its buffer) is"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("on the GPU and " + formatDouble(right) + " on the interpreter (fp32: "),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("tl.store(out_ptr + offs"), std::string::npos) << "the source line";
  EXPECT_NE(report.find("8 of the launch's 8 programs ran on the interpreter"), std::string::npos)
      << report;
}

} // namespace
} // namespace tk
