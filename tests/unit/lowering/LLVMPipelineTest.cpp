// tk's LLVM pipelines (lowering/PTXEmitter.cpp) must parse in the LLVM tk is
// built with. The session-5 pipeline (TK_LLVM_OPT=lean: LLVM 19's O3 less
// five InstCombine runs, GVN's load elimination and called-value
// propagation, with a lower limit for dead store elimination) must give the
// PTX LLVM's own O3 gives (TK_LLVM_OPT=O3) on kernels it was chosen on: the
// softmax tutorial at two widths and the 128x128x32 fp16 ring matmul, whose
// shared-memory stores and loads are what the limit and the memory
// dependence queries were about. The limit is a process-wide LLVM option set
// by the first lean compile, so this binary is its own process and compiles
// at O3 before anything else. The default (short) pipeline is neither: what
// it must do to the PTX is checked by FileCheck (codegen/llvm-pipeline.tk,
// lowering/pipeline-*.tk). TK_LLVM_OPT=O0 (no optimisation) must differ from
// both, so the comparisons would notice a pipeline that does nothing. No GPU
// needed; a tree without LLVM skips.
#include "runtime/GpuKernel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

using namespace tk;

namespace {

std::string tutorial(const char *name) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The PTX of `opts` with TK_LLVM_OPT set to `level` (nullptr: unset, the
// short default); the variable is restored afterwards. Empty on failure, with
// the reason in `error`.
std::string ptxAt(const char *level, const std::string &source, const char *file,
                  const GpuCompileOptions &opts, std::string &error) {
  const char *old = std::getenv("TK_LLVM_OPT");
  std::string saved = old ? old : "";
  if (level)
    setenv("TK_LLVM_OPT", level, 1);
  else
    unsetenv("TK_LLVM_OPT");
  CompiledPTX out;
  bool ok = compileToPTX(source, file, opts, out, error);
  if (old)
    setenv("TK_LLVM_OPT", saved.c_str(), 1);
  else
    unsetenv("TK_LLVM_OPT");
  return ok ? out.ptx : "";
}

struct Case {
  const char *file;
  GpuCompileOptions opts;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (auto [block, warps] : {std::pair{1024, 4}, std::pair{16384, 16}}) {
    Case c{"02-fused-softmax.tk", {}};
    c.opts.kernel = "softmax_kernel";
    c.opts.signature = "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16";
    c.opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(block);
    c.opts.numWarps = warps;
    out.push_back(c);
  }
  Case mm{"04-matmul.tk", {}};
  mm.opts.kernel = "matmul_kernel";
  mm.opts.signature = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                      "i32:16, i32:1, i32:16, i32:1";
  for (auto [name, value] : {std::pair{"BLOCK_SIZE_M", 128}, std::pair{"BLOCK_SIZE_N", 128},
                             std::pair{"BLOCK_SIZE_K", 32}, std::pair{"GROUP_SIZE_M", 8}})
    mm.opts.constants[name] = ConstValue::ofInt(value);
  mm.opts.constants["ACTIVATION"] = ConstValue::ofString("");
  mm.opts.numWarps = 4;
  mm.opts.numStages = 4;
  out.push_back(mm);
  return out;
}

} // namespace

TEST(LLVMPipelineTest, LeanPTXIsO3sOnSoftmaxAndTheRingMatmul) {
  std::vector<Case> all = cases();
  std::vector<std::string> o3;
  std::string error;
  // LLVM's O3 first, while LLVM's options are still its defaults.
  for (const Case &c : all) {
    o3.push_back(ptxAt("O3", tutorial(c.file), c.file, c.opts, error));
    if (o3.back().empty())
      GTEST_SKIP() << "no PTX (built without LLVM?): " << error;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const Case &c = all[i];
    SCOPED_TRACE(::testing::Message() << c.file << " " << c.opts.numWarps << " warps");
    std::string lean = ptxAt("lean", tutorial(c.file), c.file, c.opts, error);
    ASSERT_FALSE(lean.empty()) << error;
    std::string none = ptxAt("O0", tutorial(c.file), c.file, c.opts, error);
    ASSERT_FALSE(none.empty()) << error;
    std::string short_ = ptxAt(nullptr, tutorial(c.file), c.file, c.opts, error);
    ASSERT_FALSE(short_.empty()) << error;
    EXPECT_EQ(lean, o3[i]);
    EXPECT_NE(lean, none);
    EXPECT_NE(short_, none);
    EXPECT_NE(short_, lean);
    EXPECT_NE(lean.find(".entry " + c.opts.kernel), std::string::npos);
    EXPECT_NE(short_.find(".entry " + c.opts.kernel), std::string::npos);
  }
}

// An arch tk does not compile for is an error naming it (LLVM alone would
// only warn on stderr and go on); every supported one compiles.
TEST(LLVMPipelineTest, UnsupportedArchIsAnError) {
  Case c = cases().front();
  std::string error;
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    c.opts.arch = arch;
    std::string ptx = ptxAt(nullptr, tutorial(c.file), c.file, c.opts, error);
    if (ptx.empty() && error.find("without LLVM") != std::string::npos)
      GTEST_SKIP() << error;
    EXPECT_NE(ptx.find(std::string(".target ") + arch), std::string::npos) << arch << ": " << error;
  }
  for (const char *arch : {"sm_75", "sm90", "sm_9x", "compute_90", ""}) {
    c.opts.arch = arch;
    error.clear();
    EXPECT_TRUE(ptxAt(nullptr, tutorial(c.file), c.file, c.opts, error).empty()) << arch;
    EXPECT_NE(error.find(std::string("unsupported GPU arch '") + arch + "'"), std::string::npos)
        << error;
  }
}
