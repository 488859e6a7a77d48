// TargetOptions: what the GPU back end is compiling for. Plain data, free of
// LLVM headers, so tkc and the driver can fill it in.
//
//   TargetOptions opts;
//   opts.arch = "sm_90a";     // sm_80, sm_86, sm_89, sm_90, sm_90a
//   opts.numWarps = 8;        // used where a kernel has no num_warps attribute
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tk {

struct TargetOptions {
  /// The GPU architecture, `sm_NN` with an optional `a` suffix (sm_80+).
  std::string arch = "sm_90";
  /// Warps per program for kernels whose IR does not say (a function's
  /// `num_warps` attribute, set by --coalesce, wins).
  int numWarps = 4;
  /// LLVM's optimisation pipeline: "" is tk's own (lowering/PTXEmitter.cpp),
  /// "O0" none, "O1".."O3" LLVM's default pipelines (TK_LLVM_OPT).
  std::string llvmOpt;
  /// The libdevice bitcode to link; "" finds the toolkit's (TK_LIBDEVICE_PATH).
  std::string libdevicePath;
  /// amdgcn: the folder of ROCm's device-library bitcode (ocml.bc, ockl.bc);
  /// "" finds the installed one (TK_ROCM_DEVICE_LIBS; ROCmDeviceLibs.h).
  std::string rocmDeviceLibsPath;
  /// Test only (TK_TEST_MISCOMPILE): every floating-point add is lowered as
  /// a subtract, a wrong answer for TK_CHECK's tests to catch.
  bool testMiscompile = false;
  /// Floating-point contraction (Triton's enable_fp_fusion): a multiply
  /// feeding an add may become one fma, and plain add/sub/mul are emitted
  /// without `.rn` so ptxas may fuse them too. Off: every op rounds on its
  /// own (`add.rn.f32`, `mul.rn.f32`), as the interpreter computes.
  bool fpFusion = true;
  /// Flush-to-zero in libdevice and tk.exp2 (Triton's enable_reflect_ftz):
  /// the module flag nvvm-reflect-ftz = 1 picks libdevice's flushing paths,
  /// and fp32 exp2 is one ex2.approx.ftz.f32 (subnormal results are 0).
  /// Off: libdevice's IEEE paths, and exp2's subnormal results exact.
  bool reflectFtz = true;
  /// Budgets (0: no limit), whose errors name them and what to change: the
  /// elements a thread may hold in one tensor (TK_MAX_ELEMENTS_PER_THREAD),
  /// and the LLVM instructions of a kernel as lowered and after tk's LLVM
  /// pipeline, before NVPTX code generation (TK_MAX_LLVM_INSTRUCTIONS). A
  /// budget never changes the code, only whether there is any.
  int64_t maxElementsPerThread = 0;
  int64_t maxLLVMInstructions = 0;
};

/// The one table of the targets tk compiles for: the sm_80+ processors of
/// LLVM 19's NVPTX back end (`llc -march=nvptx64 -mcpu=help`). Anything
/// else (sm_91, sm_100, sm_80a, sm_999) is an error naming these, never a
/// target LLVM does not know (it would only warn on stderr, and the PTX
/// would be wrong). Newer GPUs run sm_90 PTX, which their driver compiles
/// forward (python/tk/runtime/jit.py's target_arch picks it for them).
inline constexpr std::string_view kSupportedArchs[] = {"sm_80", "sm_86", "sm_87",
                                                       "sm_89", "sm_90", "sm_90a"};
/// "sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a", for messages.
inline constexpr std::string_view kSupportedArchList = "sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a";

/// Whether `arch` is in kSupportedArchs. tkc checks --arch with it, and the
/// PTX emitter every other caller's arch (the C++ API, TK_ARCH).
constexpr bool isSupportedArch(std::string_view arch) {
  for (std::string_view a : kSupportedArchs)
    if (a == arch)
      return true;
  return false;
}

/// The AMD GPUs tk compiles for (`--target=amdgcn`, compile only): LLVM 19's
/// AMDGPU processors gfx90a (MI200), gfx942 (MI300) and gfx1100 (RDNA3).
inline constexpr std::string_view kAMDGPUArchs[] = {"gfx90a", "gfx942", "gfx1100"};
inline constexpr std::string_view kAMDGPUArchList = "gfx90a, gfx942, gfx1100";
/// LDS (shared memory) one workgroup may use on every arch of kAMDGPUArchs.
inline constexpr int64_t kAMDGPULDSBytes = 64 * 1024;

/// Whether `arch` is one of kAMDGPUArchs (the amdgcn target).
constexpr bool isAMDGPUArch(std::string_view arch) {
  for (std::string_view a : kAMDGPUArchs)
    if (a == arch)
      return true;
  return false;
}

/// The hardware wavefront LLVM compiles an AMD GPU arch for: 64 lanes on
/// gfx9 (gfx90a, gfx942: wave64 only), 32 on gfx10 and newer (gfx1100:
/// LLVM's default, wave32). The width of the cross-lane instructions and
/// ROCm's __oclc_wavefrontsize64, and tk's warp there (warpSizeFor).
constexpr int amdgpuWavefrontSize(std::string_view arch) {
  return arch.starts_with("gfx9") ? 64 : 32;
}

/// Shared memory one program may use on `arch`: the per-block opt-in
/// maximum of the CUDA programming guide (the SM's shared memory less the 1
/// KiB the system reserves per block). The back end rejects kernels over it
/// and --pipeline sizes its rings under it (the `max_shared_bytes` function
/// attribute, set by setKernelOptions where it is below sm_90's).
constexpr int64_t maxSharedBytesFor(std::string_view arch) {
  if (arch.starts_with("sm_90"))
    return 227 * 1024;
  if (arch == "sm_80" || arch == "sm_87")
    return 163 * 1024;
  return 99 * 1024; // sm_86, sm_89
}

/// Threads per warp of tk's layouts on `arch` (a function's
/// `threads_per_warp`, ir/Layout.h): 32 on NVIDIA GPUs and on wave32 AMD
/// GPUs (gfx1100), the 64-lane wavefront on gfx9 (gfx90a, gfx942), whose
/// num_warps then counts wavefronts (a program is num_warps x 64 threads),
/// as Triton's AMD back end counts them.
constexpr int64_t warpSizeFor(std::string_view arch) {
  return isAMDGPUArch(arch) ? amdgpuWavefrontSize(arch) : 32;
}

} // namespace tk
