// The LLVM side of tk's code generation: which LLVM is linked in and whether
// its NVPTX and AMDGPU backends are usable. Lowering to LLVM IR and PTX builds on this.
#pragma once

#include <string>

namespace tk {

/// "19.1.7", or empty when tk was built without LLVM (sanitizer builds).
std::string llvmVersion();

/// True when the NVPTX target is linked in and registered.
bool hasNVPTXTarget();
/// True when the AMDGPU target is linked in and registered.
bool hasAMDGPUTarget();

} // namespace tk
