// NvJitLink: PTX -> cubin with the CUDA toolkit's nvJitLink library, loaded
// at run time with dlopen (tk has no link-time dependency on the toolkit).
// It runs the same assembler as ptxas, in process. On an H200 with CUDA 13
// it gave the same cubin as the driver's JIT in the same time, so GpuKernel
// uses it only when asked (TK_PTX_COMPILER=nvjitlink) and falls back to the
// driver when it is missing or fails (docs/driver.md has the measurements).
//
//   std::string cubin, error;
//   if (!linkWithNvJitLink(ptx, "sm_90", 3, cubin, error))
//     ... "nvJitLink not found (looked for libnvJitLink.so.13, libnvJitLink.so
//          in /usr/local/cuda/lib64, ...)" or "nvJitLinkComplete failed
//          (error 4):" and nvJitLink's own log
//
// The library is searched in $CUDA_HOME/lib64, /usr/local/cuda/lib64, then
// the loader path (LD_LIBRARY_PATH, ldconfig), .so.13 before .so.12 and the
// unversioned name. It is opened once per process and never closed.
#pragma once

#include <string>

namespace tk {

/// True when libnvJitLink could be loaded (once per process; later calls
/// are free); otherwise `error` says where it looked.
bool nvJitLinkAvailable(std::string &error);

/// Assembles `ptx` for `arch` ("sm_90", "sm_90a") at ptxas optimisation
/// level `optLevel` (0-3) into a cubin (an ELF image). False with `error`
/// carrying nvJitLink's result code and its error log.
bool linkWithNvJitLink(const std::string &ptx, const std::string &arch, int optLevel,
                       std::string &cubin, std::string &error);

} // namespace tk
