// tk's LLVM pipeline (lowering/PTXEmitter.cpp) and LLVM's own O1..O3, which
// TK_LLVM_OPT picks for measuring, must parse in the LLVM tk is built with
// and optimise: each gives PTX that differs from TK_LLVM_OPT=O0 (none), so a
// pipeline that silently did nothing would be noticed; what tk's own must do
// to the PTX is checked by FileCheck (codegen/llvm-pipeline.tk,
// lowering/pipeline-*.tk). A value the knob does not take fails the compile
// with an error naming it. Cases: the softmax tutorial at two widths and the
// 128x128x32 fp16 ring matmul. No GPU needed; a tree without LLVM skips.
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

TEST(LLVMPipelineTest, EveryPipelineParsesAndOptimises) {
  std::string error;
  for (const Case &c : cases()) {
    SCOPED_TRACE(::testing::Message() << c.file << " " << c.opts.numWarps << " warps");
    std::string none = ptxAt("O0", tutorial(c.file), c.file, c.opts, error);
    if (none.empty())
      GTEST_SKIP() << "no PTX (built without LLVM?): " << error;
    for (const char *level : {"O1", "O2", "O3", static_cast<const char *>(nullptr)}) {
      std::string ptx = ptxAt(level, tutorial(c.file), c.file, c.opts, error);
      ASSERT_FALSE(ptx.empty()) << (level ? level : "tk's") << ": " << error;
      EXPECT_NE(ptx, none) << (level ? level : "tk's") << " optimised nothing";
      EXPECT_NE(ptx.find(".entry " + c.opts.kernel), std::string::npos);
    }
  }
}

TEST(LLVMPipelineTest, AnUnknownPipelineIsAnError) {
  Case c = cases().front();
  std::string error;
  EXPECT_TRUE(ptxAt("lean", tutorial(c.file), c.file, c.opts, error).empty());
  EXPECT_EQ(error, "TK_LLVM_OPT=\"lean\" is not one of O0,O1,O2,O3");
}
