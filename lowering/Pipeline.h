// Pipeline: the passes tk runs on the block IR, in order.
//
//   PassManager pm(diag);
//   buildPipeline(pm);   // canonicalize, cse, dce
//   pm.run(module);
//
// Pipeline.cpp lists the passes (and records the options they read, below);
// a new pass joins the compiler by one line there (and one row in
// Passes.def).
#pragma once

#include "lowering/PassManager.h"

#include <string>

namespace tk {

class Module;

void buildPipeline(PassManager &pm);

/// The GPU passes that follow buildPipeline before code generation: layout
/// assignment, then clean-up of what it leaves.
void buildGPUPipeline(PassManager &pm);

/// Records the compile options the GPU passes read as attributes of every
/// function that does not set them itself: `num_warps`, `num_stages` (when
/// positive: --pipeline's ring depth) and `arch` (only an arch-specific
/// target such as sm_90a, whose instructions --accelerate-dot may use:
/// wgmma). tkc, the C++ API and the Python JIT all compile through it.
///
///   setKernelOptions(module, /*numWarps=*/8, /*numStages=*/4, "sm_90a");
void setKernelOptions(Module &module, int numWarps, int numStages, const std::string &arch);

} // namespace tk
