// CodeObject: what an AMDGPU code object (`tkc --emit=hsaco`, an ELF shared
// object) says about its kernels, read from its metadata note (owner
// "AMDGPU", type NT_AMDGPU_METADATA: a MessagePack map, the one
// `llvm-readobj --notes` prints as YAML). The HIP runtime reads the same
// note to lay out a launch's kernel arguments, so tk reads it too, to pass
// exactly what it describes (runtime/GpuKernel.h, amdgpuLaunchInfo).
//
//   CodeObjectInfo info;
//   std::string error;
//   if (!readCodeObject(hsaco, info, error)) ... "not an AMDGPU code object: ..."
//   const CodeObjectKernel *k = info.find("add_kernel");
//   k->args[3]           // {.offset 24, .size 4, .value_kind "by_value"}
//   k->args[4]           // {.offset 32, .size 4, .value_kind "hidden_block_count_x"}
//   k->explicitArgs()    // 4: the kernel's own parameters, before the hidden ones
//   k->reqdWorkgroupSize // {128, 1, 1}
//
// The reader takes untrusted bytes: every offset and length is checked, and
// anything malformed is an error naming what, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// One entry of a kernel's `.args`: an explicit argument (`by_value`,
/// `global_buffer`, ...) or a hidden one the runtime fills (`hidden_*`).
struct KernargEntry {
  std::string name;         // `.name` (LLVM's argument name; "" for hidden ones)
  uint32_t offset = 0;      // bytes into the kernarg segment
  uint32_t size = 0;        // bytes
  std::string valueKind;    // "by_value", "global_buffer", "hidden_block_count_x", ...
  std::string addressSpace; // "global" for a global_buffer, else ""
  bool hidden() const { return valueKind.rfind("hidden_", 0) == 0; }
};

/// One kernel of `amdhsa.kernels`.
struct CodeObjectKernel {
  std::string name;   // `.name`
  std::string symbol; // `.symbol`: the kernel descriptor, "<name>.kd"
  std::vector<KernargEntry> args;
  uint32_t kernargSegmentSize = 0; // explicit and hidden arguments, padded
  uint32_t kernargSegmentAlign = 0;
  uint32_t groupSegmentFixedSize = 0;          // LDS bytes
  uint32_t privateSegmentFixedSize = 0;        // scratch bytes per work-item
  std::array<uint32_t, 3> reqdWorkgroupSize{}; // all 0 when absent
  uint32_t maxFlatWorkgroupSize = 0;
  uint32_t wavefrontSize = 0;
  uint32_t sgprCount = 0, vgprCount = 0, agprCount = 0;

  /// The explicit arguments: the entries before the first hidden one.
  size_t explicitArgs() const;
  /// Bytes from the segment's start to the end of the last explicit
  /// argument.
  uint32_t explicitBytes() const;
  /// The threads of one workgroup the kernel is compiled for: the product of
  /// reqdWorkgroupSize, else maxFlatWorkgroupSize.
  uint32_t workgroupSize() const;
};

struct CodeObjectInfo {
  std::string target; // `amdhsa.target`: "amdgcn-amd-amdhsa--gfx942"
  std::vector<CodeObjectKernel> kernels;
  /// The kernel named `name`, or null.
  const CodeObjectKernel *find(std::string_view name) const;
};

/// Reads the metadata note of the code object `elf`; false with `error`
/// when the bytes are not an AMDGPU code object or the note is malformed.
bool readCodeObject(std::string_view elf, CodeObjectInfo &out, std::string &error);

} // namespace tk
