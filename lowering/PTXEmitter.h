// PTXEmitter: the last stage of GPU code generation. Block IR with layouts
// (after the GPU pipeline) -> LLVM IR (lowering/codegen) -> tk's LLVM
// pipeline (a dozen passes, not O3: ptxas optimises again; TargetOptions::
// llvmOpt picks LLVM's own O0..O3 instead) -> PTX text from the NVPTX back
// end; for an AMD GPU arch (gfx90a, gfx942, gfx1100) the AMDGPU back end's
// assembly or object file instead (docs/codegen.md, "AMDGPU").
//
//   TargetOptions opts;  opts.arch = "sm_90a";
//   std::string ptx;
//   if (emitPTX(module, opts, ptx, diag))
//     ... ptx holds ".version 8.0 / .target sm_90a / .entry softmax_kernel(...)"
//
// The PTX ISA version is 8.0 for every supported arch (sm_80..sm_90a need at
// most that; LLVM 19 emits up to 8.5). No LLVM header is included here, so
// tkc and the driver use this without LLVM's compile cost.
#pragma once

#include "ir/Module.h"
#include "lang/Diagnostics.h"
#include "lowering/codegen/TargetOptions.h"

#include <string>

namespace tk {

/// The optimised LLVM IR of every kernel of `module`, as text.
bool emitLLVMIR(Module &module, const TargetOptions &options, std::string &out,
                DiagnosticEngine &diag);
/// Where emitPTX's time goes, in milliseconds (bench/compile_bench.cpp).
struct PTXTimings {
  double lowerMs = 0;   // block IR -> LLVM IR, verification, libdevice linking
  double optMs = 0;     // LLVM's optimisation pipeline (tk's, or llvmOpt's)
  double codegenMs = 0; // NVPTX code generation to PTX text
};

/// The PTX of every kernel of `module`; with `timings`, the time of each step;
/// with `llvmText`, the optimised LLVM IR it was generated from.
/// For an AMD GPU arch (isAMDGPUArch), the same gives the AMDGPU assembly.
bool emitPTX(Module &module, const TargetOptions &options, std::string &out, DiagnosticEngine &diag,
             PTXTimings *timings = nullptr, std::string *llvmText = nullptr);
/// The relocatable ELF object of every kernel of `module` (for an AMD GPU
/// arch: what `ld.lld -shared` links into a code object, driver/Lld.h).
bool emitObject(Module &module, const TargetOptions &options, std::string &out,
                DiagnosticEngine &diag, PTXTimings *timings = nullptr);

} // namespace tk
