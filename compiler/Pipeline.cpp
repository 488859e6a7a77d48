#include "compiler/Pipeline.h"

#include "compiler/Compiler.h"
#include "ir/Layout.h"
#include "ir/Module.h"
#include "lowering/codegen/TargetOptions.h"

namespace tk {

void buildPipeline(PassManager &pm) {
  pm.add(createInlinePass());
  pm.add(createCanonicalizePass());
  pm.add(createCSEPass());
  pm.add(createDCEPass());
}

void buildGPUPipeline(PassManager &pm) {
  pm.add(createCoalescePass());
  pm.add(createAccelerateDotPass());
  pm.add(createPropagateDotLayoutsPass());
  pm.add(createSoftwarePipelinePass());
  pm.add(createRemoveLayoutConversionsPass());
  pm.add(createCSEPass());
  pm.add(createDCEPass());
  pm.add(createAllocateSharedPass());
  pm.add(createInsertBarriersPass());
}

void setKernelOptions(Module &module, const CompileOptions &options) {
  const std::string &arch = options.arch;
  for (auto &fn : module.functions()) {
    AttrDict &attrs = fn->attrs();
    if (!attrs.has("num_warps"))
      attrs.set("num_warps", Attribute(int64_t(options.numWarps)));
    if (options.numStages > 0 && !attrs.has("num_stages"))
      attrs.set("num_stages", Attribute(int64_t(options.numStages)));
    if ((arch.ends_with('a') || isAMDGPUArch(arch)) && !attrs.has("arch"))
      attrs.set("arch", Attribute(arch));
    // A warp of 64 threads (the wavefront of wave64 AMD GPUs) for every
    // layout; 32 is the default, not recorded.
    if (warpSizeFor(arch) != kWarpSize && !attrs.has("threads_per_warp"))
      attrs.set("threads_per_warp", Attribute(warpSizeFor(arch)));
    // Below sm_90's (the default the pipeliner assumes), the arch's shared
    // memory limit, for the pipeliner to size its rings under.
    int64_t limit = isAMDGPUArch(arch) ? kAMDGPULDSBytes : maxSharedBytesFor(arch);
    if (!arch.empty() && limit < maxSharedBytesFor("sm_90") && !attrs.has("max_shared_bytes"))
      attrs.set("max_shared_bytes", Attribute(limit));
    // The debug switches are recorded only when off, so the IR of a default
    // compile does not mention them.
    if (!options.wgmmaInflight && !attrs.has("wgmma_inflight"))
      attrs.set("wgmma_inflight", Attribute(false));
    if (!options.wgmmaNative && !attrs.has("wgmma_native"))
      attrs.set("wgmma_native", Attribute(false));
    if (options.wgmmaRing != "auto" && !options.wgmmaRing.empty() && !attrs.has("wgmma_ring"))
      attrs.set("wgmma_ring", Attribute(options.wgmmaRing));
    // fp8 wgmma is on unless TK_FP8_WGMMA=0 (recorded only when off).
    if (!options.fp8Wgmma && !attrs.has("fp8_wgmma"))
      attrs.set("fp8_wgmma", Attribute(false));
  }
}

} // namespace tk
