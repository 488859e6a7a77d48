#include "lowering/PTXEmitter.h"

#include "lowering/LLVMTarget.h"
#include "lowering/codegen/LowerToLLVM.h"
#ifdef TK_WITH_LLVM
#include "lowering/codegen/Libdevice.h"
#endif

#include <fmt/format.h>

#include <cstdlib>

#ifdef TK_WITH_LLVM
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#endif

namespace tk {

#ifdef TK_WITH_LLVM
namespace {

// The PTX ISA every supported arch accepts (sm_90a is the newest and needs
// 8.0); ptxas of CUDA 12 and 13 read it.
constexpr const char *kPTXFeatures = "+ptx80";

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const TargetOptions &options,
                                                       DiagnosticEngine &diag) {
  if (!hasNVPTXTarget()) {
    diag.error({}, "this tk was built without LLVM's NVPTX target");
    return nullptr;
  }
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", error);
  if (!target) {
    diag.error({}, fmt::format("no NVPTX target: {}", error));
    return nullptr;
  }
  llvm::TargetOptions to;
  // Floating-point contraction, as Triton's default (enable_fp_fusion): a
  // multiply feeding an add becomes one fma.rn (one rounding instead of two,
  // one instruction instead of two), and plain mul/add/sub are emitted without
  // .rn so ptxas may fuse them too. The interpreter stays unfused; tests
  // compare with tolerances (LayerNorm's (x - mean) * rstd * w + b is fmas).
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine("nvptx64-nvidia-cuda", options.arch, kPTXFeatures, to,
                                  std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

// LLVM's optimisation pipeline: O3 unless TK_LLVM_OPT says O1 or O2 (for
// measuring compile time against kernel speed; docs/driver.md has the
// numbers). Anything else means O3.
llvm::OptimizationLevel llvmOptLevel() {
  const char *env = std::getenv("TK_LLVM_OPT");
  std::string level = env ? env : "";
  if (level == "O1")
    return llvm::OptimizationLevel::O1;
  if (level == "O2")
    return llvm::OptimizationLevel::O2;
  return llvm::OptimizationLevel::O3;
}

// Lowers, verifies and optimises; null after reporting an error.
std::unique_ptr<llvm::Module> buildOptimized(Module &module, const TargetOptions &options,
                                             llvm::LLVMContext &llctx, llvm::TargetMachine &tm,
                                             DiagnosticEngine &diag) {
  std::unique_ptr<llvm::Module> llmod = lowerToLLVM(module, options, llctx, diag);
  if (!llmod)
    return nullptr;
  llmod->setDataLayout(tm.createDataLayout());
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*llmod, &os)) {
    // A lowering bug, not the user's: say so rather than crash in LLVM.
    diag.error({}, fmt::format("internal error: the generated LLVM IR is invalid:\n{}", problems));
    return nullptr;
  }
  // fp64 math calls libdevice: link what is used before O3 inlines it.
  if (!linkLibdevice(*llmod, diag))
    return nullptr;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvmOptLevel());
  mpm.run(*llmod, mam);
  return llmod;
}

} // namespace

bool emitLLVMIR(Module &module, const TargetOptions &options, std::string &out,
                DiagnosticEngine &diag) {
  std::unique_ptr<llvm::TargetMachine> tm = makeTargetMachine(options, diag);
  if (!tm)
    return false;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod = buildOptimized(module, options, llctx, *tm, diag);
  if (!llmod)
    return false;
  llvm::raw_string_ostream os(out);
  llmod->print(os, nullptr);
  return true;
}

bool emitPTX(Module &module, const TargetOptions &options, std::string &out,
             DiagnosticEngine &diag) {
  std::unique_ptr<llvm::TargetMachine> tm = makeTargetMachine(options, diag);
  if (!tm)
    return false;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod = buildOptimized(module, options, llctx, *tm, diag);
  if (!llmod)
    return false;
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    diag.error({}, "internal error: the NVPTX target cannot emit assembly");
    return false;
  }
  pm.run(*llmod);
  out.append(ptx.begin(), ptx.end());
  return true;
}
#else
bool emitLLVMIR(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
bool emitPTX(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
#endif

} // namespace tk
