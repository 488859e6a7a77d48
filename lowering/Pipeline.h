// Pipeline: the passes tk runs on the block IR, in order.
//
//   PassManager pm(diag);
//   buildPipeline(pm);   // canonicalize, cse, dce
//   pm.run(module);
//
// Pipeline.cpp lists the passes and does nothing else; a new pass joins the
// compiler by one line there (and one row in Passes.def).
#pragma once

#include "lowering/PassManager.h"

namespace tk {

void buildPipeline(PassManager &pm);

/// The GPU passes that follow buildPipeline before code generation: layout
/// assignment, then clean-up of what it leaves.
void buildGPUPipeline(PassManager &pm);

} // namespace tk
