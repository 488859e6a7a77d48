// GpuKernel on a machine without a GPU (CI): compiling for the GPU reports
// the missing driver instead of crashing, and the part of the C++ API that
// needs no GPU — compiling to PTX and describing the launch parameters —
// works. On a machine with a driver the no-driver check skips; tests/gpu
// covers that side.
#include "runtime/GpuKernel.h"
#include "driver/CudaDriver.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace tk;

namespace {

std::string readTutorial(const std::string &name) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GpuCompileOptions vectorAddOptions() {
  GpuCompileOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  return opts;
}

// Code generation is absent from trees built without LLVM (sanitizers).
bool hasCodegen(const std::string &error) {
  return error.find("code generation") == std::string::npos;
}

} // namespace

TEST(GpuKernelTest, CompileWithoutDriverReportsIt) {
  std::string why;
  if (CudaDriver::get(why))
    GTEST_SKIP() << "a CUDA driver is present";
  std::string error;
  GpuKernel *k = GpuKernel::compile(readTutorial("01-vector-add.tk"), "01-vector-add.tk",
                                    vectorAddOptions(), error);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(error, why);

  // Device memory is the device's runtime's, CUDA's else HIP's: with
  // neither, the error gives both reasons.
  std::string noHip;
  if (HipDriver::get(noHip))
    GTEST_SKIP() << "a HIP runtime is present";
  DeviceBuffer buffer;
  std::string allocError;
  EXPECT_FALSE(buffer.allocate(1024, allocError));
  EXPECT_EQ(allocError, why + "; " + noHip);
  EXPECT_EQ(buffer.ptr(), 0u);
}

TEST(GpuKernelTest, CompileToPTXDescribesLaunchParameters) {
  std::string ptx, error;
  std::vector<GpuParam> params;
  int numWarps = 0;
  GpuCompileOptions opts = vectorAddOptions();
  opts.numWarps = 8;
  bool ok = compileToPTX(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, ptx, params,
                         numWarps, error);
  if (!ok && !hasCodegen(error))
    GTEST_SKIP() << "built without LLVM: " << error;
  ASSERT_TRUE(ok) << error;
  EXPECT_NE(ptx.find(".entry add_kernel"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_EQ(numWarps, 8);
  // BLOCK_SIZE is a constexpr: it takes no launch argument.
  ASSERT_EQ(params.size(), 4u);
  const char *names[] = {"x_ptr", "y_ptr", "output_ptr", "n_elements"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(params[i].name, names[i]);
    EXPECT_EQ(params[i].kind, GpuArg::Kind::Pointer);
    EXPECT_TRUE(params[i].supported);
  }
  EXPECT_EQ(params[3].name, names[3]);
  EXPECT_EQ(params[3].kind, GpuArg::Kind::I32);
}

TEST(GpuKernelTest, ScalarKindsFollowTheSignature) {
  const std::string source = "import tk\n"
                             "@tk.jit\n"
                             "def k(p, a, b, c, d):\n"
                             "    tk.store(p, a + b + c + d)\n";
  GpuCompileOptions opts;
  opts.kernel = "k";
  opts.signature = "*fp64, i64, fp32, u32, fp64";
  std::string ptx, error;
  std::vector<GpuParam> params;
  int numWarps = 0;
  bool ok = compileToPTX(source, "k.tk", opts, ptx, params, numWarps, error);
  if (!ok && !hasCodegen(error))
    GTEST_SKIP() << "built without LLVM: " << error;
  ASSERT_TRUE(ok) << error;
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[1].kind, GpuArg::Kind::I64);
  EXPECT_EQ(params[2].kind, GpuArg::Kind::F32);
  EXPECT_EQ(params[3].kind, GpuArg::Kind::I32);
  EXPECT_TRUE(params[3].supported);
  // fp64 scalars have their own launch kind.
  EXPECT_EQ(params[4].kind, GpuArg::Kind::F64);
  EXPECT_TRUE(params[4].supported);
  EXPECT_EQ(params[4].name, "d");
}

TEST(GpuKernelTest, SourceErrorsComeBackRendered) {
  const std::string source = "import tk\n"
                             "@tk.jit\n"
                             "def k(p):\n"
                             "    tk.store(p, undefined_name)\n";
  GpuCompileOptions opts;
  opts.kernel = "k";
  opts.signature = "*fp32";
  std::string ptx, error;
  std::vector<GpuParam> params;
  int numWarps = 0;
  EXPECT_FALSE(compileToPTX(source, "bad.tk", opts, ptx, params, numWarps, error));
  EXPECT_NE(error.find("bad.tk:4:"), std::string::npos) << error;
  EXPECT_NE(error.find("undefined_name"), std::string::npos) << error;
  EXPECT_NE(error.find("^"), std::string::npos) << error;
}

// num_stages reaches --pipeline as tkc's --num-stages does: 1 keeps the loop
// plain, 3 stages the dot's fp16 operands through a cp.async ring.
TEST(GpuKernelTest, NumStagesReachesThePipeline) {
  const std::string source = R"(import tk


@tk.jit
def k(a, b, c, K, BM: tk.constexpr, BN: tk.constexpr, BK: tk.constexpr):
    rm = tk.arange(0, BM)
    rn = tk.arange(0, BN)
    rk = tk.arange(0, BK)
    acc = tk.zeros([BM, BN], dtype=tk.float32)
    for k0 in range(0, K, BK):
        x = tk.load(a + rm[:, None] * K + (k0 + rk)[None, :])
        y = tk.load(b + (k0 + rk)[:, None] * BN + rn[None, :])
        acc += tk.dot(x, y)
    tk.store(c + rm[:, None] * BN + rn[None, :], acc)
)";
  GpuCompileOptions opts;
  opts.kernel = "k";
  opts.signature = "*fp16:16, *fp16:16, *fp32:16, i32:16";
  opts.constants = {
      {"BM", ConstValue::ofInt(64)}, {"BN", ConstValue::ofInt(64)}, {"BK", ConstValue::ofInt(32)}};
  for (int stages : {1, 3}) {
    opts.numStages = stages;
    std::string ptx, error;
    std::vector<GpuParam> params;
    int numWarps = 0;
    bool ok = compileToPTX(source, "k.tk", opts, ptx, params, numWarps, error);
    if (!ok && !hasCodegen(error))
      GTEST_SKIP() << "built without LLVM: " << error;
    ASSERT_TRUE(ok) << error;
    EXPECT_EQ(ptx.find("cp.async") != std::string::npos, stages == 3) << "stages " << stages;
  }
}

TEST(GpuKernelTest, UnknownKernelAndBadSignatureAreErrors) {
  std::string ptx, error;
  std::vector<GpuParam> params;
  int numWarps = 0;
  GpuCompileOptions opts = vectorAddOptions();
  opts.kernel = "no_such_kernel";
  EXPECT_FALSE(compileToPTX(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, ptx, params,
                            numWarps, error));
  EXPECT_NE(error.find("no kernel named 'no_such_kernel'"), std::string::npos) << error;

  opts = vectorAddOptions();
  opts.signature = "*fp32:16, *fp32:16, i32"; // one parameter short
  error.clear();
  EXPECT_FALSE(compileToPTX(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, ptx, params,
                            numWarps, error));
  EXPECT_NE(error.find("01-vector-add.tk:"), std::string::npos) << error;
}
