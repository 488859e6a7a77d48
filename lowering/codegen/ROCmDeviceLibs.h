// ROCmDeviceLibs: math on amdgcn through ROCm's device libraries, the
// bitcode of Debian's rocm-device-libs (ocml.bc: math; ockl.bc: integer
// functions, and the hostcall printf of print and assert), linked into a
// generated module only when a kernel calls one of their functions, as
// libdevice is on NVPTX (Libdevice.h).
//
//   const ROCmFunction *f = rocmEquivalent("__nv_exp");  // __ocml_exp_f64, F64
//   ... the lowering calls f->symbol (AMDGPUTarget::callLibdevice) ...
//   if (!linkROCmDeviceLibs(*llmod, options.rocmDeviceLibsPath, options.arch, diag)) ...
//
// rocmEquivalent is the table of ROCmLibdevice.def: libdevice's functions
// (tk's fp64 math and the libdevice.NAME builtins name them) that have an
// equivalent there. The bitcode is looked for in the folder
// TargetOptions::rocmDeviceLibsPath (TK_ROCM_DEVICE_LIBS; only that), else
// $ROCM_PATH/amdgcn/bitcode, /opt/rocm/amdgcn/bitcode and Debian's
// /usr/lib/x86_64-linux-gnu/amdgcn/bitcode; where no folder holds it, the
// lowering reports that at the op (AMDGPUTarget::missingLibrary), naming the
// folders tried and what to install.
//
// Linking takes only the functions the module uses (and what they call),
// internalised so tk's pipeline inlines them and drops the rest, and then
// defines the control constants the libraries read (ROCm ships each as a
// one-constant library, oclc_*.bc, that the clang driver links): tk defines
// them itself, as Triton and XLA do, because Debian's 5.2.3 has no
// oclc_isa_version_942.bc or _1100.bc. oclcControls lists them. Private to
// lowering.
#pragma once

#include "lang/DType.h"
#include "lang/Diagnostics.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace tk {

/// ROCm's function for one libdevice symbol: its name and result dtype (its
/// arguments are the libdevice overload's).
struct ROCmFunction {
  std::string_view libdevice; // "__nv_clzll"
  std::string_view symbol;    // "__ockl_clz_u64"
  DType result;               // I64 (libdevice's is I32: the count is truncated)
};

/// Every row of ROCmLibdevice.def, in table order.
std::span<const ROCmFunction> allROCmEquivalents();
/// ROCm's equivalent of libdevice's `libdeviceSymbol`, or null where the
/// device libraries have none.
const ROCmFunction *rocmEquivalent(std::string_view libdeviceSymbol);
/// The library file that defines `symbol`: "ocml.bc" for __ocml_*,
/// "ockl.bc" for __ockl_*, "" otherwise.
std::string_view rocmLibraryOf(std::string_view symbol);

/// The folders tried for the bitcode, in order: `explicitPath` alone when it
/// is not empty.
std::vector<std::string> rocmDeviceLibCandidates(const std::string &explicitPath);
/// The path of `file` ("ocml.bc") in the first candidate folder holding it;
/// "" when none does.
std::string findROCmDeviceLib(const std::string &explicitPath, std::string_view file);
/// Why `file` cannot be found: the folders tried and what to install.
std::string missingROCmDeviceLibMessage(const std::string &explicitPath, std::string_view file);

/// One control constant of the device libraries for an arch: the oclc
/// library ROCm ships for it (oclc_daz_opt_off.bc), the global it defines,
/// its width in bits and value.
struct OclcControl {
  std::string library;
  std::string name;
  unsigned bits;
  uint32_t value;
};
/// The control constants tk defines for `arch` (one of kAMDGPUArchs):
/// the ISA version (9010 for gfx90a, 9402 for gfx942, 11000 for gfx1100),
/// the ABI version (500: code object version 5), wave64 on gfx9 only,
/// finite_only, unsafe_math and daz_opt off, correctly rounded fp32 sqrt.
std::vector<OclcControl> oclcControls(std::string_view arch);

/// Links the ocml and ockl functions `m` declares from the bitcode found for
/// `explicitPath` and defines the control constants for `arch`; true when
/// there were none or the link succeeded, false after reporting an error.
bool linkROCmDeviceLibs(llvm::Module &m, const std::string &explicitPath, std::string_view arch,
                        DiagnosticEngine &diag);

} // namespace tk
