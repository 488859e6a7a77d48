// HipDriver: ROCm's HIP runtime, reached through dlopen("libamdhip64.so") at
// first use, so libtk builds, links and runs on machines with no ROCm and no
// AMD GPU. It is to the amdgcn target what CudaDriver is to nvptx: only the
// entry points tk needs are looked up, into a table of function pointers
// (HipFunctions), and the few HIP types they use are declared here
// (ABI-compatible with hip_runtime_api.h), so no HIP header is needed.
//
//   std::string error;
//   HipDriver *hip = HipDriver::get(error);
//   if (!hip)
//     ... error is "no HIP runtime: libamdhip64.so not found (libamdhip64.so:
//         cannot open shared object file: No such file or directory; nor
//         libamdhip64.so.6 or libamdhip64.so.5)"
//   hipModule_t module;                   // a code object (tkc --emit=hsaco)
//   if (!hip->loadModule(hsaco, module, error))
//     ... "hipModuleLoadData failed: hipErrorInvalidImage (device kernel image
//         is invalid)"
//   hipFunction_t f;
//   hip->getFunction(module, "add_kernel", f, error);
//   void *args[] = {&x, &y, &out, &n};    // one pointer per explicit argument
//   hip->launch(f, {grid, 1, 1}, {128, 1, 1}, 0, stream, args, error);
//
// Every failure is returned as text naming the call and HIP's error
// (hipGetErrorName and hipGetErrorString); nothing here aborts or prints.
//
// Device: get() initialises the runtime once and selects device 0 on the
// calling thread (hipSetDevice: HIP has no primary context to retain; its
// current device is per thread, 0 unless set). Another thread calls
// makeCurrent() before its first call.
//
// Launch arguments: hipModuleLaunchKernel reads the explicit arguments of a
// launch by the code object's own metadata (`.args`: offset, size and kind
// of each) and fills every hidden argument (hidden_block_count_*, the group
// sizes, ...) itself. With `args` (kernelParams) it copies `.size` bytes from
// each pointer; with a packed buffer (launchPacked, HIP_LAUNCH_PARAM_* in
// `extra`) it copies each argument from the buffer at its `.offset`. The
// runtime (runtime/GpuKernel.h, amdgpuLaunchInfo) reads that metadata
// (driver/CodeObject.h) and checks it against the kernel's parameters before
// the first launch.
#pragma once

#include "driver/CudaDriver.h" // KernelResources, DeviceLimits

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tk {

// HIP's types, as hip_runtime_api.h declares them (handles are opaque
// pointers; a device pointer is a void *).
using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void *;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;

/// The HIP entry points tk uses, looked up by name from libamdhip64.
struct HipFunctions {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipDeviceGet)(hipDevice_t *, int);
  hipError_t (*hipDeviceGetName)(char *, int, hipDevice_t);
  hipError_t (*hipDeviceGetAttribute)(int *, int, int);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipGetDevice)(int *);
  hipError_t (*hipDeviceSynchronize)();
  hipError_t (*hipRuntimeGetVersion)(int *);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
  hipError_t (*hipFuncGetAttribute)(int *, int, hipFunction_t);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, hipStream_t, void **, void **);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t, void *, size_t);
  hipError_t (*hipMemcpyDtoH)(void *, hipDeviceptr_t, size_t);
  hipError_t (*hipMemset)(void *, int, size_t);
  hipError_t (*hipStreamCreate)(hipStream_t *);
  hipError_t (*hipStreamDestroy)(hipStream_t);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t *);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  // Unlike CUDA's, these two return the text.
  const char *(*hipGetErrorName)(hipError_t);
  const char *(*hipGetErrorString)(hipError_t);
};

class HipDriver {
public:
  /// The library names get() tries, in order: the unversioned name (ROCm's
  /// /opt/rocm/lib, a -dev package), then the sonames of ROCm 6 and 5.
  static constexpr const char *kLibraryNames[] = {"libamdhip64.so", "libamdhip64.so.6",
                                                  "libamdhip64.so.5"};

  /// The process's runtime, loaded and initialised on the first call
  /// (device 0 current on the calling thread). Null when there is no usable
  /// runtime or device; `error` then says why. Decided once per process.
  static HipDriver *get(std::string &error);
  /// A runtime of its own from the first of `libraries` (names or paths)
  /// that loads, initialised as get()'s; for tests and tools that point at
  /// one library. The library is closed with the object.
  static std::unique_ptr<HipDriver> open(const std::vector<std::string> &libraries,
                                         std::string &error);
  ~HipDriver();
  HipDriver(const HipDriver &) = delete;
  HipDriver &operator=(const HipDriver &) = delete;

  const HipFunctions &api() const { return api_; }
  hipDevice_t device() const { return device_; }

  /// "hipErrorOutOfMemory (out of memory)".
  std::string errorText(hipError_t result) const;
  /// True when `result` is hipSuccess; otherwise sets `error` to "<what>
  /// failed: <errorText>" and returns false.
  bool check(hipError_t result, const char *what, std::string &error) const;

  /// Selects device 0 on the calling thread.
  bool makeCurrent(std::string &error);

  /// "AMD Instinct MI300X"; compute units; the wavefront size (64 on
  /// gfx90a/gfx942, 32 on gfx11); hipRuntimeGetVersion's number.
  std::string deviceName() const;
  int computeUnits() const { return computeUnits_; }
  int warpSize() const { return warpSize_; }
  int runtimeVersion() const;
  /// Threads and LDS per workgroup (maxSharedPerBlockOptin is
  /// maxSharedPerBlock: HIP has no opt-in above it) and the registers a
  /// workgroup may use (0 where the runtime does not say).
  const DeviceLimits &limits() const { return limits_; }

  /// Loads a code object (an ELF, `tkc --emit=hsaco`).
  bool loadModule(const std::string &codeObject, hipModule_t &out, std::string &error);
  bool getFunction(hipModule_t module, const std::string &name, hipFunction_t &out,
                   std::string &error);
  /// Unloads a module loaded by loadModule, from any thread, after a device
  /// synchronize (HIP does not promise to wait for the module's kernels still
  /// queued or running).
  bool unloadModule(hipModule_t module, std::string &error);
  /// hipFuncGetAttribute: registers per thread, scratch (private) bytes per
  /// thread, static LDS bytes, the most threads the function allows.
  bool queryResources(hipFunction_t function, KernelResources &out, std::string &error);

  /// hipModuleLaunchKernel with `args` as kernelParams: `grid` in
  /// workgroups, `block` in threads.
  bool launch(hipFunction_t function, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
              unsigned sharedBytes, hipStream_t stream, void **args, std::string &error) const;
  /// The same with the explicit arguments packed in `kernargs` (`bytes`
  /// bytes, each argument at its metadata offset), passed through `extra`.
  bool launchPacked(hipFunction_t function, std::array<unsigned, 3> grid,
                    std::array<unsigned, 3> block, unsigned sharedBytes, hipStream_t stream,
                    void *kernargs, size_t bytes, std::string &error) const;

  // Device memory, for tests, examples and benchmarks (addresses as the
  // integers CudaDriver also uses).
  bool allocate(size_t bytes, uint64_t &out, std::string &error);
  bool free(uint64_t ptr, std::string &error);
  bool copyToDevice(uint64_t dst, const void *src, size_t bytes, std::string &error);
  bool copyToHost(void *dst, uint64_t src, size_t bytes, std::string &error);
  bool fill(uint64_t dst, unsigned char byte, size_t bytes, std::string &error);
  bool synchronize(std::string &error);

  // Streams and events (the null stream is HIP's default stream).
  bool createStream(hipStream_t &out, std::string &error);
  bool destroyStream(hipStream_t stream, std::string &error);
  bool synchronizeStream(hipStream_t stream, std::string &error);
  /// Events, to time work on a stream: elapsedMs waits for `stop`, then
  /// gives the milliseconds between the two records.
  bool createEvent(hipEvent_t &out, std::string &error);
  bool recordEvent(hipEvent_t event, hipStream_t stream, std::string &error);
  bool elapsedMs(hipEvent_t start, hipEvent_t stop, float &ms, std::string &error);
  bool destroyEvent(hipEvent_t event, std::string &error);

private:
  HipDriver() = default;
  bool initialize(const std::vector<std::string> &libraries, std::string &error);

  void *library_ = nullptr;
  HipFunctions api_{};
  hipDevice_t device_ = 0;
  int computeUnits_ = 0;
  int warpSize_ = 0;
  DeviceLimits limits_;
};

} // namespace tk
