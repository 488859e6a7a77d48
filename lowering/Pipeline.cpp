#include "lowering/Pipeline.h"

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
  pm.add(createSoftwarePipelinePass());
  pm.add(createRemoveLayoutConversionsPass());
  pm.add(createCSEPass());
  pm.add(createDCEPass());
  pm.add(createAllocateSharedPass());
  pm.add(createInsertBarriersPass());
}

void setKernelOptions(Module &module, int numWarps, int numStages, const std::string &arch) {
  for (auto &fn : module.functions()) {
    AttrDict &attrs = fn->attrs();
    if (!attrs.has("num_warps"))
      attrs.set("num_warps", Attribute(int64_t(numWarps)));
    if (numStages > 0 && !attrs.has("num_stages"))
      attrs.set("num_stages", Attribute(int64_t(numStages)));
    if (arch.ends_with('a') && !attrs.has("arch"))
      attrs.set("arch", Attribute(arch));
    // Below sm_90's (the default --pipeline assumes), the arch's shared
    // memory limit, for --pipeline to size its rings under.
    int64_t limit = maxSharedBytesFor(arch);
    if (!arch.empty() && limit < maxSharedBytesFor("sm_90") && !attrs.has("max_shared_bytes"))
      attrs.set("max_shared_bytes", Attribute(limit));
  }
}

} // namespace tk
