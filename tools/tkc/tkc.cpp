#include "lowering/LLVMTarget.h"
#include <cstdio>
namespace tk { const char *versionString(); }
int main() {
  std::printf("tkc %s (LLVM %s, nvptx %s)\n", tk::versionString(), tk::llvmVersion().c_str(),
              tk::hasNVPTXTarget() ? "yes" : "no");
}
