#include "lowering/PTXEmitter.h"

#include "lowering/LLVMTarget.h"
#include "lowering/codegen/LowerToLLVM.h"
#ifdef TK_WITH_LLVM
#include "lowering/codegen/Libdevice.h"
#endif

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>

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

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const std::string &arch,
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
  // Code generation at the Default level, not Aggressive: at Aggressive
  // NVPTX runs GVN over the IR before instruction selection (EarlyCSE
  // otherwise), twice; O3 has already removed what GVN would find. Of 46
  // kernels (the tutorials' softmax, layer norm and matmul configs, every
  // FileCheck PTX test) 45 get byte-identical PTX and the 46th (libdevice's
  // fp64 sin/cos reduction loop) 4 instructions fewer; codegen of the
  // 128x128x32 matmul takes 40 instead of 70 ms (llc -O2 vs -O3 on the O3
  // IR; compile-load-2026-11-30-3.md).
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine("nvptx64-nvidia-cuda", arch, kPTXFeatures, to, std::nullopt,
                                  std::nullopt, llvm::CodeGenOptLevel::Default));
}

// The target machine for `options.arch`, made once per thread and reused:
// creating one parses the target's tables (about a millisecond), and a warm
// process compiles many kernels. Per thread because a TargetMachine is not
// meant to generate code for two modules at once (the autotuner compiles in
// parallel). Null after reporting an error.
llvm::TargetMachine *targetMachine(const TargetOptions &options, DiagnosticEngine &diag) {
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  auto it = machines.find(options.arch);
  if (it != machines.end())
    return it->second.get();
  std::unique_ptr<llvm::TargetMachine> tm = makeTargetMachine(options.arch, diag);
  if (!tm)
    return nullptr;
  return machines.emplace(options.arch, std::move(tm)).first->second.get();
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// LLVM's optimisation pipeline: O3 unless TK_LLVM_OPT says O1 or O2 (for
// measuring compile time against kernel speed; docs/driver.md has the
// numbers) or O0 (no optimisation: --emit=llvm then shows the IR as tk's
// lowering made it). Anything else means O3. Lighter pipelines were measured
// and rejected (compile-load-2026-11-30-3.md): O1 changes the PTX of 16 of 46
// kernels (tutorials and FileCheck tests), O3 without its costliest pass on
// the matmul, dead store elimination (30-40 ms of the 128x128x32 ring's ~90),
// makes scan-tuple.tk's PTX 6% longer.
std::optional<llvm::OptimizationLevel> llvmOptLevel() {
  const char *env = std::getenv("TK_LLVM_OPT");
  std::string level = env ? env : "";
  if (level == "O0")
    return std::nullopt;
  if (level == "O1")
    return llvm::OptimizationLevel::O1;
  if (level == "O2")
    return llvm::OptimizationLevel::O2;
  return llvm::OptimizationLevel::O3;
}

// Lowers, verifies and optimises; null after reporting an error.
std::unique_ptr<llvm::Module> buildOptimized(Module &module, const TargetOptions &options,
                                             llvm::LLVMContext &llctx, llvm::TargetMachine &tm,
                                             DiagnosticEngine &diag, PTXTimings *timings) {
  auto t0 = Clock::now();
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
  if (timings)
    timings->lowerMs = msSince(t0);
  t0 = Clock::now();
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
  if (std::optional<llvm::OptimizationLevel> level = llvmOptLevel()) {
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(*level);
    mpm.run(*llmod, mam);
  }
  if (timings)
    timings->optMs = msSince(t0);
  return llmod;
}

} // namespace

bool emitLLVMIR(Module &module, const TargetOptions &options, std::string &out,
                DiagnosticEngine &diag) {
  llvm::TargetMachine *tm = targetMachine(options, diag);
  if (!tm)
    return false;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod =
      buildOptimized(module, options, llctx, *tm, diag, /*timings=*/nullptr);
  if (!llmod)
    return false;
  llvm::raw_string_ostream os(out);
  llmod->print(os, nullptr);
  return true;
}

bool emitPTX(Module &module, const TargetOptions &options, std::string &out, DiagnosticEngine &diag,
             PTXTimings *timings) {
  llvm::TargetMachine *tm = targetMachine(options, diag);
  if (!tm)
    return false;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod = buildOptimized(module, options, llctx, *tm, diag, timings);
  if (!llmod)
    return false;
  auto t0 = Clock::now();
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    diag.error({}, "internal error: the NVPTX target cannot emit assembly");
    return false;
  }
  pm.run(*llmod);
  out.append(ptx.begin(), ptx.end());
  if (timings)
    timings->codegenMs = msSince(t0);
  return true;
}
#else
bool emitLLVMIR(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
bool emitPTX(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag, PTXTimings *) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
#endif

} // namespace tk
