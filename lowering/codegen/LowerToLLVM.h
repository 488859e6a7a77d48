// lowerToLLVM: block IR with layouts (after --coalesce) -> an LLVM module for
// the GPU, one kernel per function. Each tensor value becomes the registers
// its layout gives the thread (ir/Layout.h ThreadMap); scalars stay scalars.
//
//   llvm::LLVMContext llctx;
//   TargetOptions opts;                      // sm_90, 4 warps
//   std::unique_ptr<llvm::Module> m = lowerToLLVM(module, opts, llctx, diag);
//   if (!m) ...                              // errors are in diag
//
// The lowering is split by op family (codegen/*ToLLVM.cpp) behind TargetInfo.
// Ops not supported yet (dot, scan, atomics, print, ...) are reported as
// located errors. PTXEmitter.h turns the module into PTX.
#pragma once

#include "ir/Module.h"
#include "lang/Diagnostics.h"
#include "lowering/codegen/TargetOptions.h"

#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tk {

/// Null after reporting errors, among them the budgets of TargetOptions
/// (elements per thread, LLVM instructions) and an interruption
/// (IRLimits::interrupted of the module's context).
std::unique_ptr<llvm::Module> lowerToLLVM(Module &module, const TargetOptions &options,
                                          llvm::LLVMContext &llctx, DiagnosticEngine &diag);

/// The error of a kernel over TargetOptions::maxLLVMInstructions: `count`
/// instructions `when` ("by here", "after tk's LLVM pipeline").
std::string overInstructionBudget(std::string_view kernel, int64_t count, int64_t budget,
                                  std::string_view when);

} // namespace tk
