// CudaDriver: the CUDA Driver API, reached through dlopen("libcuda.so.1") at
// first use, so libtk builds, links and runs on machines with no GPU and no
// CUDA driver. Only the entry points tk needs are looked up, into a table of
// function pointers (CudaFunctions); the few CUDA types they use are declared
// here (ABI-compatible with cuda.h), so no CUDA header is needed to build.
//
//   std::string error;
//   CudaDriver *cuda = CudaDriver::get(error);
//   if (!cuda)
//     ... error is "no CUDA driver: libcuda.so.1 not found (libcuda.so.1: cannot
//         open shared object file: No such file or directory)"
//   CUmodule module;
//   if (!cuda->loadModule(ptx, module, error))
//     ... error is "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT
//         compilation failed)" followed by the JIT's own log lines
//   std::string cubin;                    // PTX -> cubin, to cache and reload
//   if (!cuda->linkToCubin(ptx, cubin, error)) ...
//   CUdeviceptr p;
//   if (!cuda->allocate(4096, p, error)) ...
//
// Every failure is returned as text naming the call and the CUDA error
// (cuGetErrorName and cuGetErrorString); nothing here aborts or prints.
//
// Context: get() initialises the driver once, retains device 0's primary
// context (the one the CUDA runtime, PyTorch and CuPy share) and makes it
// current on the calling thread. Another thread calls makeCurrent() before
// its first driver call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tk {

// The driver's types, as cuda.h declares them (handles are opaque pointers).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUlinkState = struct CUlinkState_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// The driver entry points tk uses, looked up by name from libcuda.
struct CudaFunctions {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLinkCreate)(unsigned, int *, void **, CUlinkState *);
  CUresult (*cuLinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *,
                            void **);
  CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*cuLinkDestroy)(CUlinkState);
  // Optional (null when the library lacks it): looked up apart from the
  // table, so a driver without it still loads.
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  // CUDA 12.0 and later (TMA): the CUtensorMap of a tiled view of a tensor.
  CUresult (*cuTensorMapEncodeTiled)(void *map, int dataType, uint32_t rank, void *address,
                                     const uint64_t *dims, const uint64_t *strides,
                                     const uint32_t *box, const uint32_t *elementStrides,
                                     int interleave, int swizzle, int l2Promotion, int oobFill);
  // CUDA graphs (tk::Graph): stream capture, instantiation (CUDA 11.4 and
  // later), replay. The capture mode is cuda.h's CUstreamCaptureMode.
  CUresult (*cuStreamBeginCapture)(CUstream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

/// A tiled CUtensorMap's fields (cuTensorMapEncodeTiled's), innermost
/// dimension first as the driver takes them: `strides` has rank - 1 entries
/// in bytes (of dimensions 1..rank-1), `box` the block. The enums are
/// cuda.h's values (CUtensorMapDataType, CUtensorMapSwizzle, ...).
struct TensorMapSpec {
  int dataType = 0;
  uint64_t address = 0;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box;
  int swizzle = 0;     // CU_TENSOR_MAP_SWIZZLE_NONE
  int l2Promotion = 2; // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
  int oobFill = 0;     // 0: zeros; 1: NaN (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
};

/// What cuFuncGetAttribute reports about a loaded kernel.
struct KernelResources {
  int registers = 0;         // per thread
  int localBytes = 0;        // per thread: spills and local arrays
  int staticSharedBytes = 0; // per program
  int maxThreadsPerBlock = 0;
};

/// The device's per-program limits that a kernel's resources are checked
/// against before its first launch.
struct DeviceLimits {
  int maxThreadsPerBlock = 0;
  int maxRegistersPerBlock = 0;   // 32-bit registers for all threads of a program
  int maxSharedPerBlock = 0;      // without opting in (48 KiB)
  int maxSharedPerBlockOptin = 0; // with cuFuncSetAttribute (227 KiB on sm_90)
};

/// Options for PTX -> cubin. optimizationLevel -1: tk's default,
/// kDefaultJitLevel (2; the compilers' own default is the driver's 4,
/// ptxas's and nvJitLink's -O3); 0-4 for the driver, 0-3 (4 read as 3) for
/// the others. compiler: "driver",
/// "nvjitlink" or "ptxas" forces one (GpuKernel's load path; CudaDriver
/// itself always JITs); "" reads TK_PTX_COMPILER, else the default order
/// (runtime/GpuKernel.h, ptxCompilerOrder).
struct JitOptions {
  int optimizationLevel = -1;
  std::string compiler;
};

/// The JIT level tk compiles at unless asked otherwise: 2. On the H200 the
/// 128x128x32 ring matmul JITs in 158 instead of 442 ms at level 2 (246
/// registers and no spills against 255 and 64 spill bytes at 4) and runs 3%
/// faster, with bit-identical output; softmax JITs 3-8% faster at the same
/// kernel speed (bench/results/notes/compile-time.md, "2026-11-30 02:45").
constexpr int kDefaultJitLevel = 2;
/// The level `jit` compiles at.
inline int jitLevel(const JitOptions &jit) {
  return jit.optimizationLevel >= 0 ? jit.optimizationLevel : kDefaultJitLevel;
}

class CudaDriver {
public:
  /// The process's driver, loaded and initialised on the first call (device
  /// 0, its primary context current on the calling thread). Null when there
  /// is no usable driver or GPU; `error` then says why.
  static CudaDriver *get(std::string &error);

  const CudaFunctions &api() const { return api_; }
  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string errorText(CUresult result) const;
  /// True when `result` is success; otherwise sets `error` to "<what> failed:
  /// <errorText>" and returns false.
  bool check(CUresult result, const char *what, std::string &error) const;

  /// Makes the primary context current on the calling thread.
  bool makeCurrent(std::string &error);

  /// "NVIDIA H200"; the compute capability as 90 for sm_90; the SM count.
  std::string deviceName() const;
  int computeCapability() const;
  int multiprocessorCount() const;
  /// cuDriverGetVersion: 13000 for CUDA 13.0.
  int driverVersion() const;
  const DeviceLimits &limits() const { return limits_; }

  /// Loads PTX (NUL-terminated text) or a cubin; the JIT's error log (and
  /// its info log, when it has something to say) is appended to `error`.
  bool loadModule(const std::string &image, CUmodule &out, std::string &error,
                  const JitOptions &jit = {});
  /// Compiles PTX to a cubin for this device with the driver's JIT
  /// (cuLinkCreate / cuLinkAddData / cuLinkComplete); errors carry the log.
  bool linkToCubin(const std::string &ptx, std::string &cubin, std::string &error,
                   const JitOptions &jit = {});
  /// Lets `function` use up to `bytes` of dynamic shared memory (needed
  /// above 48 KiB).
  bool setMaxDynamicShared(CUfunction function, int bytes, std::string &error);
  bool getFunction(CUmodule module, const std::string &name, CUfunction &out, std::string &error);
  /// Unloads a module loaded by loadModule, from any thread: with the
  /// primary context current for the call (the thread's own current context
  /// is restored afterwards), after a context synchronize, because the
  /// driver does not promise to wait for the module's kernels still queued
  /// or running. False with the driver's error (the module then stays
  /// loaded, e.g. at exit once the driver is shutting down).
  bool unloadModule(CUmodule module, std::string &error);
  bool queryResources(CUfunction function, KernelResources &out, std::string &error);
  /// The 128 bytes of the CUtensorMap `spec` describes, into `out`; false
  /// with the driver's error (or that it has no cuTensorMapEncodeTiled).
  bool encodeTensorMap(const TensorMapSpec &spec, void *out, std::string &error) const;
  /// Whether the graph entry points (CudaFunctions' last six) are all there;
  /// `error` says which is missing otherwise.
  bool hasGraphs(std::string &error) const;

  // Device memory, for tests, examples and benchmarks.
  bool allocate(size_t bytes, CUdeviceptr &out, std::string &error);
  bool free(CUdeviceptr ptr, std::string &error);
  bool copyToDevice(CUdeviceptr dst, const void *src, size_t bytes, std::string &error);
  bool copyToHost(void *dst, CUdeviceptr src, size_t bytes, std::string &error);
  bool fill(CUdeviceptr dst, unsigned char byte, size_t bytes, std::string &error);
  bool synchronize(std::string &error);

private:
  CudaDriver() = default;
  bool initialize(std::string &error);

  void *library_ = nullptr;
  CudaFunctions api_{};
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceLimits limits_;
};

} // namespace tk
