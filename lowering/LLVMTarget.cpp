#include "lowering/LLVMTarget.h"

#ifdef TK_WITH_LLVM
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

#include <mutex>
#endif

namespace tk {

#ifdef TK_WITH_LLVM
std::string llvmVersion() { return LLVM_VERSION_STRING; }

bool hasNVPTXTarget() {
  // LLVM's target registry is process-global; register NVPTX once.
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  return llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", error) != nullptr;
}

bool hasAMDGPUTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    // Object files of modules with inline assembly (ROCm's ockl hostcall,
    // for print and assert) go through the assembler's parser.
    LLVMInitializeAMDGPUAsmParser();
  });
  std::string error;
  return llvm::TargetRegistry::lookupTarget("amdgcn-amd-amdhsa", error) != nullptr;
}
#else
std::string llvmVersion() { return {}; }
bool hasNVPTXTarget() { return false; }
bool hasAMDGPUTarget() { return false; }
#endif

} // namespace tk
