#include "lowering/PTXEmitter.h"
#include "support/Quote.h"

#include "ir/IRContext.h"
#include "lowering/LLVMTarget.h"
#include "lowering/codegen/LowerToLLVM.h"
#ifdef TK_WITH_LLVM
#include "lowering/codegen/Libdevice.h"
#include "lowering/codegen/ROCmDeviceLibs.h"
#endif

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#ifdef TK_WITH_LLVM
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#endif

namespace tk {

#ifdef TK_WITH_LLVM
namespace {

// The PTX ISA every supported arch accepts (sm_90a is the newest and needs
// 8.0); ptxas of CUDA 12 and 13 read it.
constexpr const char *kPTXFeatures = "+ptx80";

// LLVM's target for `triple` (`what`: its name in errors); null, reported,
// when this tk was built without it or LLVM does not know the triple.
const llvm::Target *lookupLLVMTarget(const char *triple, const char *what, bool built,
                                     DiagnosticEngine &diag) {
  if (!built) {
    diag.error({}, fmt::format("this tk was built without LLVM's {} target", what));
    return nullptr;
  }
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    diag.error({}, fmt::format("no {} target: {}", what, error));
  return target;
}

// The AMDGPU target machine for an arch of kAMDGPUArchs (code object
// version 5, LLVM 19's default; wave64 on gfx9, wave32 on gfx11).
std::unique_ptr<llvm::TargetMachine> makeAMDGPUTargetMachine(const std::string &arch, bool fpFusion,
                                                             DiagnosticEngine &diag) {
  const llvm::Target *target =
      lookupLLVMTarget("amdgcn-amd-amdhsa", "AMDGPU", hasAMDGPUTarget(), diag);
  if (!target)
    return nullptr;
  llvm::TargetOptions to;
  // As on NVPTX (Triton's enable_fp_fusion).
  to.AllowFPOpFusion = fpFusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Standard;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine("amdgcn-amd-amdhsa", arch, "", to, llvm::Reloc::PIC_,
                                  std::nullopt, llvm::CodeGenOptLevel::Default));
}

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const std::string &arch, bool fpFusion,
                                                       DiagnosticEngine &diag) {
  if (isAMDGPUArch(arch))
    return makeAMDGPUTargetMachine(arch, fpFusion, diag);
  // LLVM would only warn on stderr about an unknown processor and go on.
  if (!isSupportedArch(arch)) {
    diag.error({}, fmt::format("unsupported GPU arch '{}': tk compiles for {} (nvptx) and {} "
                               "(amdgcn)",
                               showText(arch), kSupportedArchList, kAMDGPUArchList));
    return nullptr;
  }
  const llvm::Target *target =
      lookupLLVMTarget("nvptx64-nvidia-cuda", "NVPTX", hasNVPTXTarget(), diag);
  if (!target)
    return nullptr;
  llvm::TargetOptions to;
  // Floating-point contraction, as Triton's default (enable_fp_fusion): a
  // multiply feeding an add becomes one fma.rn (one rounding instead of two,
  // one instruction instead of two), and plain mul/add/sub are emitted without
  // .rn so ptxas may fuse them too. The interpreter stays unfused; tests
  // compare with tolerances (LayerNorm's (x - mean) * rstd * w + b is fmas).
  // Without it (enable_fp_fusion=False) NVPTX emits add.rn/mul.rn, which
  // ptxas does not contract either.
  to.AllowFPOpFusion = fpFusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Standard;
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
  thread_local std::map<std::pair<std::string, bool>, std::unique_ptr<llvm::TargetMachine>>
      machines;
  auto key = std::make_pair(options.arch, options.fpFusion);
  auto it = machines.find(key);
  if (it != machines.end())
    return it->second.get();
  std::unique_ptr<llvm::TargetMachine> tm = makeTargetMachine(options.arch, options.fpFusion, diag);
  if (!tm)
    return nullptr;
  return machines.emplace(key, std::move(tm)).first->second.get();
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// tk's LLVM pipeline: the dozen passes tk's lowering needs, in place of O3. ptxas optimises the PTX
// again (CSE, scheduling, unrolling, its own register allocation), so what LLVM must do is what
// ptxas cannot, or what makes code generation cheap:
//  - nvvm-reflect and inlining: libdevice's fp64 math (linked before);
//  - nvvm-intr-range: the ranges of tid/ctaid, from which InstCombine proves
//    `or disjoint` and no-wrap address arithmetic, so an element's address
//    is the tile's base plus a constant;
//  - SROA, EarlyCSE and one InstCombine: the lowering emits per-register
//    copies of the same coordinate arithmetic; without them NVPTX's
//    instruction selection works through all of it (O0: 29 instead of 14 ms
//    of code generation on the 128x128x64 8-warp matmul);
//  - reassociate: `(base | lane) | 512`, not `base | (lane | 512)`, so the
//    register offsets fold into the address (codegen/llvm-pipeline.tk);
//  - simplifycfg; infer-alignment (NVPTX's load/store vectoriser needs it to
//    merge shared loads into v2/v4); loop-rotate, so the K loop stays
//    bottom-tested as O3 leaves it; LICM; loop-unroll (the scan's sequential
//    combine loop); a second InstCombine and EarlyCSE; ADCE; globaldce.
// On 101 kernels (every FileCheck PTX test; the tutorial matmul at sm_90 and
// sm_90a, 7 tile configs x plain/A^T/B^T strides; the bias epilogue) ptxas
// -O2 gives 1.3% more SASS instructions in all than after the pipeline it
// replaced (LLVM's O3 less five of its InstCombine runs), in the same ptxas
// time: 57 kernels are identical, the others within
// -3..+7% except the scan tests (their combine loop, which O3 unrolls by
// five: 184 -> 336 and 584 -> 912 instructions); spills change only where
// there were some, or in one bf16 mma test (0 -> 4 bytes). The 128x128x64
// 8-warp wgmma matmul's LLVM optimisation takes 5.3 instead of 11.2 ms,
// its whole source -> PTX 21.8 instead of 27.6 (compile_bench, development
// machine); the 128x128x32 mma.sync one 29.5 instead of 38.0. Not kept:
// without the second InstCombine (the vector add's SASS +27%), without loop
// rotation (the matmuls' SASS 3-10% smaller, but a top-tested K loop that
// was never timed), without LSR in code generation (spills in the large
// mma.sync tiles), code generation at CodeGenOptLevel::None (twice the
// PTX, ptxas 10 ms slower).
// One pass a line, in LLVM's textual names (the NVPTX passes have no other
// public spelling); `function(...)`, `cgscc(...)` and `loop-mssa(...)` run
// the passes inside over each function, call-graph SCC and loop.
// On amdgcn the two NVVM passes are left out (the AMDGPU target registers
// no such names; there is no libdevice to reflect on: ROCm's ocml reads
// constants instead, which InstCombine folds and simplifycfg prunes).
std::string tkPipelineText(bool nvptx) {
  const char *passes = "cgscc("
                       /**/ "inline"
                       "),"
                       "function("
                       /**/ "sroa,"
                       /**/ "early-cse,"
                       /**/ "instcombine<max-iterations=1;no-verify-fixpoint>,"
                       /**/ "reassociate,"
                       /**/ "simplifycfg,"
                       /**/ "infer-alignment,"
                       /**/ "loop-mssa("
                       /*    */ "loop-rotate<header-duplication;no-prepare-for-lto>,"
                       /*    */ "licm"
                       /**/ "),"
                       /**/ "loop-unroll<O3>,"
                       /**/ "instcombine<max-iterations=1;no-verify-fixpoint>,"
                       /**/ "early-cse,"
                       /**/ "adce"
                       "),"
                       "globaldce";
  return std::string(nvptx ? "function("
                             /**/ "nvvm-reflect,"
                             /**/ "nvvm-intr-range"
                             "),"
                           : "") +
         passes;
}

// LLVM's optimisation pipeline: tk's own (above) unless the options name
// one of LLVM's levels: O0 (no optimisation: --emit=llvm then shows the IR as
// tk's lowering made it), O1, O2 or O3, for measuring against them.
enum class LLVMPipeline { None, O1, O2, O3, Tk };
LLVMPipeline llvmPipeline(const std::string &level) {
  if (level == "O0")
    return LLVMPipeline::None;
  if (level == "O1")
    return LLVMPipeline::O1;
  if (level == "O2")
    return LLVMPipeline::O2;
  if (level == "O3")
    return LLVMPipeline::O3;
  return LLVMPipeline::Tk;
}

// NVPTX's code generation of a kernel grows faster than its size (a
// 1024x1024 fp32 tile on 4 warps: minutes; docs/codegen/llvm-pipeline.md,
// "Large tiles"), so the optimised kernel's instructions are counted first,
// against TargetOptions::maxLLVMInstructions (TK_MAX_LLVM_INSTRUCTIONS).
bool withinInstructionBudget(Module &module, const llvm::Module &llmod, int64_t budget,
                             DiagnosticEngine &diag) {
  if (budget <= 0)
    return true;
  bool ok = true;
  for (const llvm::Function &f : llmod) {
    int64_t count = int64_t(f.getInstructionCount());
    if (f.isDeclaration() || count <= budget)
      continue;
    Function *fn = module.lookup(f.getName().str());
    diag.error(fn ? fn->loc() : SourceLoc{},
               overInstructionBudget(f.getName().str(), count, budget, "after tk's LLVM pipeline"));
    ok = false;
  }
  return ok;
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
  // fp64 math calls libdevice (ROCm's ocml and ockl on amdgcn): link what is
  // used before the pipeline inlines it.
  bool linked = isAMDGPUArch(options.arch)
                    ? linkROCmDeviceLibs(*llmod, options.rocmDeviceLibsPath, options.arch, diag)
                    : linkLibdevice(*llmod, options.libdevicePath, options.reflectFtz, diag);
  if (!linked)
    return nullptr;
  if (timings)
    timings->lowerMs = msSince(t0);
  t0 = Clock::now();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Ctrl-C (IRLimits::interrupted): the passes not yet run are skipped, and
  // the compile ends after the pipeline.
  IRLimits &limits = module.context().limits();
  llvm::PassInstrumentationCallbacks callbacks;
  callbacks.registerShouldRunOptionalPassCallback(
      [&limits](llvm::StringRef, llvm::Any) { return !limits.interruptRequested(); });
  llvm::PassBuilder pb(&tm, llvm::PipelineTuningOptions(), std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  switch (llvmPipeline(options.llvmOpt)) {
  case LLVMPipeline::None:
    break;
  case LLVMPipeline::O1:
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
    break;
  case LLVMPipeline::O2:
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    break;
  case LLVMPipeline::O3:
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    break;
  case LLVMPipeline::Tk:
    if (llvm::Error error =
            pb.parsePassPipeline(mpm, tkPipelineText(!isAMDGPUArch(options.arch)))) {
      // Only another LLVM than the one tk is built for gets here.
      diag.error({}, fmt::format("internal error: tk's LLVM pass pipeline does not parse: {}",
                                 llvm::toString(std::move(error))));
      return nullptr;
    }
    break;
  }
  mpm.run(*llmod, mam);
  if (timings)
    timings->optMs = msSince(t0);
  if (limits.interruptRequested()) {
    diag.error({}, "the compile was interrupted in LLVM's optimisation pipeline");
    return nullptr;
  }
  return withinInstructionBudget(module, *llmod, options.maxLLVMInstructions, diag)
             ? std::move(llmod)
             : nullptr;
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

namespace {

// The target's assembly (PTX, AMDGPU assembly) or object file of `module`.
bool emitFile(Module &module, const TargetOptions &options, std::string &out,
              DiagnosticEngine &diag, PTXTimings *timings, std::string *llvmText,
              llvm::CodeGenFileType fileType) {
  llvm::TargetMachine *tm = targetMachine(options, diag);
  if (!tm)
    return false;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod = buildOptimized(module, options, llctx, *tm, diag, timings);
  if (!llmod)
    return false;
  if (llvmText) {
    llvm::raw_string_ostream os(*llvmText);
    llmod->print(os, nullptr);
  }
  auto t0 = Clock::now();
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  // The IR was verified before optimisation (buildOptimized): no second
  // verifier run here (3% of the code generation of softmax-16384).
  if (tm->addPassesToEmitFile(pm, os, nullptr, fileType, /*DisableVerify=*/true)) {
    diag.error({}, fmt::format("internal error: the {} target cannot emit {}",
                               isAMDGPUArch(options.arch) ? "AMDGPU" : "NVPTX",
                               fileType == llvm::CodeGenFileType::ObjectFile ? "an object file"
                                                                             : "assembly"));
    return false;
  }
  pm.run(*llmod);
  out.append(ptx.begin(), ptx.end());
  if (timings)
    timings->codegenMs = msSince(t0);
  return true;
}

} // namespace

bool emitPTX(Module &module, const TargetOptions &options, std::string &out, DiagnosticEngine &diag,
             PTXTimings *timings, std::string *llvmText) {
  return emitFile(module, options, out, diag, timings, llvmText,
                  llvm::CodeGenFileType::AssemblyFile);
}

bool emitObject(Module &module, const TargetOptions &options, std::string &out,
                DiagnosticEngine &diag, PTXTimings *timings) {
  return emitFile(module, options, out, diag, timings, nullptr, llvm::CodeGenFileType::ObjectFile);
}
#else
bool emitLLVMIR(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
bool emitPTX(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag, PTXTimings *,
             std::string *) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
bool emitObject(Module &, const TargetOptions &, std::string &, DiagnosticEngine &diag,
                PTXTimings *) {
  diag.error({}, "this tk was built without LLVM (TK_WITH_LLVM=OFF): no GPU code generation");
  return false;
}
#endif

} // namespace tk
