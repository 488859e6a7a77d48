// The PTX -> cubin compilers of GpuKernel's load path (driver/NvJitLink.h,
// driver/Ptxas.h, ptxCompilerOrder in runtime/GpuKernel.h): the order and
// TK_PTX_COMPILER, nvJitLink and ptxas on real PTX and on broken PTX (no GPU
// needed, only the toolkit: each skips visibly without it), and on a GPU
// every compiler forced in turn loads a vector add whose results are exact,
// with a broken choice falling back to the driver and saying why.
#include "driver/CudaDriver.h"
#include "driver/NvJitLink.h"
#include "driver/Ptxas.h"
#include "runtime/GpuKernel.h"
#include "tests/unit/driver/DriverTestUtil.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace tk;
using tk::test::ScopedEnv;

namespace {

std::string vectorAddPTX(std::string &error) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/01-vector-add.tk");
  std::stringstream ss;
  ss << in.rdbuf();
  GpuCompileOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  std::string ptx;
  std::vector<GpuParam> params;
  int numWarps = 0;
  if (!compileToPTX(ss.str(), "01-vector-add.tk", opts, ptx, params, numWarps, error))
    return "";
  return ptx;
}

bool isElf(const std::string &image) {
  return image.size() > 4 && image.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
}

// PTX that parses but names an undefined register: every assembler rejects it.
const char *kBrokenPTX = ".version 8.0\n.target sm_90\n.address_size 64\n"
                         ".visible .entry broken() {\n  mov.u32 %r1, %r2;\n  ret;\n}\n";

} // namespace

TEST(PtxCompilerTest, OrderFollowsTheRequest) {
  ScopedEnv env("TK_PTX_COMPILER", nullptr);
  std::string note;
  JitOptions jit;
  // The default: the toolkit's ptxas, then the driver's JIT.
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"ptxas", "driver"}));
  EXPECT_EQ(note, "");
  jit.compiler = "ptxas";
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"ptxas", "driver"}));
  jit.compiler = "driver";
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"driver"}));
  // The environment counts only when the options do not name one.
  ScopedEnv forced("TK_PTX_COMPILER", "nvjitlink");
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"driver"}));
  jit.compiler = "";
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"nvjitlink", "driver"}));
  jit.compiler = "nvcc";
  EXPECT_EQ(ptxCompilerOrder(jit, note), (std::vector<std::string>{"driver"}));
  EXPECT_NE(note.find("unknown PTX compiler 'nvcc'"), std::string::npos) << note;
}

TEST(PtxCompilerTest, JitLevelFollowsTheRequest) {
  std::string error;
  JitOptions jit;
  {
    ScopedEnv unset("TK_JIT_LEVEL", nullptr);
    ASSERT_TRUE(requestJitLevel(jit, error)) << error;
    EXPECT_EQ(jit.optimizationLevel, -1);
    EXPECT_EQ(jitLevel(jit), kDefaultJitLevel);
  }
  ScopedEnv forced("TK_JIT_LEVEL", "4");
  ASSERT_TRUE(requestJitLevel(jit, error)) << error;
  EXPECT_EQ(jit.optimizationLevel, 4);
  // The options' own level wins over the environment.
  jit.optimizationLevel = 1;
  ASSERT_TRUE(requestJitLevel(jit, error)) << error;
  EXPECT_EQ(jit.optimizationLevel, 1);
  ScopedEnv bad("TK_JIT_LEVEL", "O3");
  jit.optimizationLevel = -1;
  EXPECT_FALSE(requestJitLevel(jit, error));
  EXPECT_NE(error.find("TK_JIT_LEVEL=\"O3\" is not one of 0,1,2,3,4"), std::string::npos) << error;
}

TEST(PtxCompilerTest, NvJitLinkAssemblesAndReportsErrors) {
  // PTX first: a tree without LLVM (the sanitizer build) skips before
  // loading the toolkit's library.
  std::string error;
  std::string ptx = vectorAddPTX(error);
  if (ptx.empty())
    GTEST_SKIP() << "no PTX (built without LLVM?): " << error;
  if (!nvJitLinkAvailable(error))
    GTEST_SKIP() << error;
  std::string cubin;
  ASSERT_TRUE(linkWithNvJitLink(ptx, "sm_90", -1, cubin, error)) << error;
  EXPECT_TRUE(isElf(cubin));
  // The kernel's name is in the image's symbol table.
  EXPECT_NE(cubin.find("add_kernel"), std::string::npos);
  std::string bad;
  EXPECT_FALSE(linkWithNvJitLink(kBrokenPTX, "sm_90", 3, bad, error));
  EXPECT_TRUE(bad.empty());
  EXPECT_NE(error.find("nvJitLink"), std::string::npos) << error;
  EXPECT_NE(error.find("-arch=sm_90 -O3"), std::string::npos) << error;
}

TEST(PtxCompilerTest, PtxasAssemblesAndReportsErrors) {
  std::string searched, error;
  if (findPtxas(searched).empty())
    GTEST_SKIP() << "no ptxas (looked at: " << searched << ")";
  std::string ptx = vectorAddPTX(error);
  if (ptx.empty())
    GTEST_SKIP() << "no PTX (built without LLVM?): " << error;
  std::string cubin;
  ASSERT_TRUE(assembleWithPtxas(ptx, "sm_90", cubin, error, 3)) << error;
  EXPECT_TRUE(isElf(cubin));
  EXPECT_NE(cubin.find("add_kernel"), std::string::npos);
  EXPECT_FALSE(assembleWithPtxas(kBrokenPTX, "sm_90", cubin, error));
  EXPECT_NE(error.find("failed (exit status"), std::string::npos) << error;
  EXPECT_NE(error.find("%r"), std::string::npos)
      << "ptxas's own message names the register: " << error;
  ScopedEnv path("TK_PTXAS_PATH", "/nonexistent/ptxas");
  EXPECT_FALSE(assembleWithPtxas(ptx, "sm_90", cubin, error));
  EXPECT_NE(error.find("ptxas not found"), std::string::npos) << error;
}

TEST(PtxCompilerTest, EachCompilerLoadsAnExactKernelOnTheGpu) {
  std::string error;
  CudaDriver *driver = CudaDriver::get(error);
  if (!driver)
    GTEST_SKIP() << "no GPU: " << error;
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/01-vector-add.tk");
  std::stringstream ss;
  ss << in.rdbuf();
  const int n = 5000;
  std::vector<float> x(n), y(n), out(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  DeviceBuffer dx, dy, dout;
  ASSERT_TRUE(dx.allocate(n * 4, error) && dy.allocate(n * 4, error) &&
              dout.allocate(n * 4, error) && dx.upload(x.data(), n * 4, error) &&
              dy.upload(y.data(), n * 4, error))
      << error;
  struct Case {
    const char *env, *ptxasPath, *expected, *fallbackMentions;
  } cases[] = {
      {"driver", nullptr, "driver", ""},
      {"nvjitlink", nullptr, "nvjitlink", ""},
      {"ptxas", nullptr, "ptxas", ""},
      {"ptxas", "/nonexistent/ptxas", "driver", "ptxas not found"},
      {"cuobjdump", nullptr, "driver", "unknown PTX compiler 'cuobjdump'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.env) + (c.ptxasPath ? " (no ptxas)" : ""));
    ScopedEnv compiler("TK_PTX_COMPILER", c.env);
    ScopedEnv ptxas("TK_PTXAS_PATH", c.ptxasPath);
    std::string probe, searched;
    if (c.expected == std::string("nvjitlink") && !nvJitLinkAvailable(probe))
      continue; // the fallback path is covered by the cases below
    if (c.expected == std::string("ptxas") && findPtxas(searched).empty())
      continue;
    GpuCompileOptions opts;
    opts.kernel = "add_kernel";
    opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
    opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
    // A new key per case and per run (the disk cache may already be in use
    // by this process): every case compiles its own cubin.
    opts.keyExtras = {fmt::format("ptx compiler test {} {} {} {}", c.env, c.ptxasPath != nullptr,
                                  getpid(), std::random_device()())};
    GpuKernel *k = GpuKernel::compile(ss.str(), "01-vector-add.tk", opts, error);
    ASSERT_TRUE(k) << error;
    EXPECT_EQ(k->info().ptxCompiler, c.expected);
    EXPECT_NE(k->info().ptxCompilerFallback.find(c.fallbackMentions), std::string::npos)
        << k->info().ptxCompilerFallback;
    EXPECT_TRUE(isElf(k->cubin()));
    ASSERT_TRUE(dout.upload(std::vector<float>(n, -1.0f).data(), n * 4, error)) << error;
    GpuArg args[] = {dx.arg(), dy.arg(), dout.arg(), GpuArg::ofI32(n)};
    ASSERT_TRUE(k->launch({(n + 1023) / 1024, 1, 1}, args, nullptr, error)) << error;
    ASSERT_TRUE(driver->synchronize(error) && dout.download(out.data(), n * 4, error)) << error;
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], x[i] + y[i]) << "element " << i;
  }
}
