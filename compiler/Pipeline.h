// Pipeline: the passes of the two pass stages of the compile (Compiler.h),
// in order, one line each.
//
//   PassManager pm(diag);
//   buildPipeline(pm);      // block: inline, canonicalize, cse, dce
//   buildGPUPipeline(pm);   // gpu: coalesce ... insert-barriers
//   pm.run(module);
//
// A new pass joins the compiler by one line here (and one row in
// lowering/Passes.def). The GPU passes read their options from attributes
// of each function, which setKernelOptions records.
#pragma once

#include "lowering/PassManager.h"

namespace tk {

class Module;
struct CompileOptions;

/// The block passes: target-independent clean-up of the IR.
void buildPipeline(PassManager &pm);

/// The GPU passes that follow buildPipeline before code generation: layout
/// assignment, dot acceleration, software pipelining, then shared memory and
/// barriers.
void buildGPUPipeline(PassManager &pm);

/// Records the compile options the GPU passes read as attributes of every
/// function that does not set them itself: `num_warps`, `num_stages` (when
/// positive: the software pipeliner's ring depth), `arch` (only an
/// arch-specific target such as sm_90a, whose instructions accelerate-dot
/// may use: wgmma), `max_shared_bytes` (below sm_90's), and the debug
/// switches `wgmma_inflight` / `wgmma_native` (only when off) and
/// `wgmma_ring` (only when not `auto`).
void setKernelOptions(Module &module, const CompileOptions &options);

} // namespace tk
