#include "lowering/Pipeline.h"

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

} // namespace tk
