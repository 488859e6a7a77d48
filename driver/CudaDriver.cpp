#include "driver/CudaDriver.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <mutex>
#include <string_view>
#include <vector>

namespace tk {
namespace {

// Enum values from cuda.h, fixed by the driver's ABI.
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSize = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;
constexpr int kJitOptimizationLevel = 7;
constexpr int kJitInputPtx = 1;
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;
constexpr int kDevMaxThreadsPerBlock = 1;
constexpr int kDevMaxSharedPerBlock = 8;
constexpr int kDevMaxRegistersPerBlock = 12;
constexpr int kDevMaxSharedPerBlockOptin = 97;
constexpr int kDevMultiprocessorCount = 16;
constexpr int kDevComputeCapabilityMajor = 75;
constexpr int kDevComputeCapabilityMinor = 76;

// One entry of the lookup table: where the pointer goes and the exported
// names to try, newest first. cuda.h maps several API names to versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2); the versioned one is the ABI the
// signature in CudaFunctions matches, and the plain name is the fallback a
// driver older than the version suffix exports.
struct Symbol {
  void **slot;
  const char *name;
  const char *fallback;
};

template <class F> void **slotOf(F &fn) { return reinterpret_cast<void **>(&fn); }

std::vector<Symbol> symbolTable(CudaFunctions &f) {
  return {
      {slotOf(f.cuInit), "cuInit", nullptr},
      {slotOf(f.cuDeviceGet), "cuDeviceGet", nullptr},
      {slotOf(f.cuDeviceGetCount), "cuDeviceGetCount", nullptr},
      {slotOf(f.cuDeviceGetName), "cuDeviceGetName", nullptr},
      {slotOf(f.cuDeviceGetAttribute), "cuDeviceGetAttribute", nullptr},
      {slotOf(f.cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain", nullptr},
      {slotOf(f.cuCtxSetCurrent), "cuCtxSetCurrent", nullptr},
      {slotOf(f.cuCtxSynchronize), "cuCtxSynchronize", nullptr},
      {slotOf(f.cuModuleLoadDataEx), "cuModuleLoadDataEx", nullptr},
      {slotOf(f.cuModuleUnload), "cuModuleUnload", nullptr},
      {slotOf(f.cuModuleGetFunction), "cuModuleGetFunction", nullptr},
      {slotOf(f.cuFuncGetAttribute), "cuFuncGetAttribute", nullptr},
      {slotOf(f.cuLaunchKernel), "cuLaunchKernel", nullptr},
      {slotOf(f.cuMemAlloc), "cuMemAlloc_v2", "cuMemAlloc"},
      {slotOf(f.cuMemFree), "cuMemFree_v2", "cuMemFree"},
      {slotOf(f.cuMemcpyHtoD), "cuMemcpyHtoD_v2", "cuMemcpyHtoD"},
      {slotOf(f.cuMemcpyDtoH), "cuMemcpyDtoH_v2", "cuMemcpyDtoH"},
      {slotOf(f.cuMemsetD8), "cuMemsetD8_v2", "cuMemsetD8"},
      {slotOf(f.cuStreamCreate), "cuStreamCreate", nullptr},
      {slotOf(f.cuStreamDestroy), "cuStreamDestroy_v2", "cuStreamDestroy"},
      {slotOf(f.cuStreamSynchronize), "cuStreamSynchronize", nullptr},
      {slotOf(f.cuEventCreate), "cuEventCreate", nullptr},
      {slotOf(f.cuEventRecord), "cuEventRecord", nullptr},
      {slotOf(f.cuEventSynchronize), "cuEventSynchronize", nullptr},
      // The plain name first: CUDA 13 added a _v2 with the same signature.
      {slotOf(f.cuEventElapsedTime), "cuEventElapsedTime", "cuEventElapsedTime_v2"},
      {slotOf(f.cuEventDestroy), "cuEventDestroy_v2", "cuEventDestroy"},
      {slotOf(f.cuGetErrorName), "cuGetErrorName", nullptr},
      {slotOf(f.cuGetErrorString), "cuGetErrorString", nullptr},
      {slotOf(f.cuDriverGetVersion), "cuDriverGetVersion", nullptr},
      {slotOf(f.cuFuncSetAttribute), "cuFuncSetAttribute", nullptr},
      {slotOf(f.cuLinkCreate), "cuLinkCreate_v2", "cuLinkCreate"},
      {slotOf(f.cuLinkAddData), "cuLinkAddData_v2", "cuLinkAddData"},
      {slotOf(f.cuLinkComplete), "cuLinkComplete", nullptr},
      {slotOf(f.cuLinkDestroy), "cuLinkDestroy", nullptr},
  };
}

// Entry points a driver may lack: left null, and what needs them says so.
std::vector<Symbol> optionalSymbols(CudaFunctions &f) {
  return {
      {slotOf(f.cuCtxGetCurrent), "cuCtxGetCurrent", nullptr},
      {slotOf(f.cuTensorMapEncodeTiled), "cuTensorMapEncodeTiled", nullptr},
      {slotOf(f.cuStreamBeginCapture), "cuStreamBeginCapture_v2", "cuStreamBeginCapture"},
      {slotOf(f.cuStreamEndCapture), "cuStreamEndCapture", nullptr},
      {slotOf(f.cuGraphInstantiateWithFlags), "cuGraphInstantiateWithFlags", nullptr},
      {slotOf(f.cuGraphLaunch), "cuGraphLaunch", nullptr},
      {slotOf(f.cuGraphExecDestroy), "cuGraphExecDestroy", nullptr},
      {slotOf(f.cuGraphDestroy), "cuGraphDestroy", nullptr},
  };
}

// dlsym of `s` (its name, else its fallback); null when neither is there.
void *lookUp(void *library, const Symbol &s) {
  void *p = dlsym(library, s.name);
  if (!p && s.fallback)
    p = dlsym(library, s.fallback);
  return p;
}

// The JIT writes at most this much of each log; longer logs are cut.
constexpr size_t kJitLogBytes = 16384;

// The JIT options every load and link passes: both log buffers (a failure is
// useless to the user without the error log) and the optimisation level
// (jitLevel: tk's default 2 unless asked otherwise). The arrays point into this object, which must
// outlive the driver call.
struct JitLogs {
  std::vector<char> info = std::vector<char>(kJitLogBytes, '\0');
  std::vector<char> error = std::vector<char>(kJitLogBytes, '\0');
  int options[5];
  void *values[5];
  unsigned count = 4;

  explicit JitLogs(const JitOptions &jit) {
    options[0] = kJitInfoLogBuffer;
    values[0] = info.data();
    options[1] = kJitInfoLogBufferSize;
    values[1] = reinterpret_cast<void *>(kJitLogBytes - 1);
    options[2] = kJitErrorLogBuffer;
    values[2] = error.data();
    options[3] = kJitErrorLogBufferSize;
    values[3] = reinterpret_cast<void *>(kJitLogBytes - 1);
    options[4] = kJitOptimizationLevel;
    values[4] = reinterpret_cast<void *>(uintptr_t(jitLevel(jit)));
    count = 5;
  }
  // "<what> failed: <error>", then the logs that have something in them.
  std::string describe(const std::string &failure) const {
    std::string s = failure;
    if (error[0])
      s += fmt::format("\nJIT error log:\n{}", error.data());
    if (info[0])
      s += fmt::format("\nJIT info log:\n{}", info.data());
    return s;
  }
};

} // namespace

CudaDriver *CudaDriver::get(std::string &error) {
  // Loaded once per process; a failed load is remembered too, so a machine
  // without a GPU pays for the dlopen attempt once.
  static std::once_flag once;
  static CudaDriver *instance = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    auto *driver = new CudaDriver();
    if (driver->initialize(failure))
      instance = driver;
    else
      delete driver;
  });
  if (!instance)
    error = failure;
  return instance;
}

bool CudaDriver::initialize(std::string &error) {
  // RTLD_LOCAL keeps libcuda's symbols out of the global namespace; tk only
  // ever reaches it through the table.
  library_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char *why = dlerror();
    error = fmt::format("no CUDA driver: libcuda.so.1 not found ({})", why ? why : "unknown");
    return false;
  }
  for (const Symbol &s : symbolTable(api_)) {
    void *p = lookUp(library_, s);
    if (!p) {
      error = fmt::format("CUDA driver too old: libcuda.so.1 has no '{}'", s.name);
      return false;
    }
    *s.slot = p;
  }
  for (const Symbol &s : optionalSymbols(api_))
    *s.slot = lookUp(library_, s);
  if (!check(api_.cuInit(0), "cuInit", error))
    return false;
  int count = 0;
  if (!check(api_.cuDeviceGetCount(&count), "cuDeviceGetCount", error))
    return false;
  if (count == 0) {
    error = "no CUDA device: the driver is loaded but reports 0 devices";
    return false;
  }
  if (!check(api_.cuDeviceGet(&device_, 0), "cuDeviceGet", error) ||
      !check(api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain", error))
    return false;
  const std::pair<int *, int> limits[] = {
      {&limits_.maxThreadsPerBlock, kDevMaxThreadsPerBlock},
      {&limits_.maxRegistersPerBlock, kDevMaxRegistersPerBlock},
      {&limits_.maxSharedPerBlock, kDevMaxSharedPerBlock},
      {&limits_.maxSharedPerBlockOptin, kDevMaxSharedPerBlockOptin}};
  for (auto [slot, attribute] : limits)
    if (!check(api_.cuDeviceGetAttribute(slot, attribute, device_), "cuDeviceGetAttribute", error))
      return false;
  return makeCurrent(error);
}

std::string CudaDriver::errorText(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api_.cuGetErrorName(result, &name) != 0 || !name)
    return fmt::format("unknown CUDA error {}", result);
  if (api_.cuGetErrorString(result, &text) != 0 || !text)
    return name;
  return fmt::format("{} ({})", name, text);
}

bool CudaDriver::check(CUresult result, const char *what, std::string &error) const {
  if (result == 0)
    return true;
  error = fmt::format("{} failed: {}", what, errorText(result));
  return false;
}

bool CudaDriver::makeCurrent(std::string &error) {
  return check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent", error);
}

std::string CudaDriver::deviceName() const {
  char name[256] = {};
  if (api_.cuDeviceGetName(name, sizeof(name) - 1, device_) != 0)
    return "unknown device";
  return name;
}

int CudaDriver::computeCapability() const {
  int major = 0, minor = 0;
  api_.cuDeviceGetAttribute(&major, kDevComputeCapabilityMajor, device_);
  api_.cuDeviceGetAttribute(&minor, kDevComputeCapabilityMinor, device_);
  return major * 10 + minor;
}

int CudaDriver::driverVersion() const {
  int v = 0;
  api_.cuDriverGetVersion(&v);
  return v;
}

int CudaDriver::multiprocessorCount() const {
  int n = 0;
  api_.cuDeviceGetAttribute(&n, kDevMultiprocessorCount, device_);
  return n;
}

bool CudaDriver::loadModule(const std::string &image, CUmodule &out, std::string &error,
                            const JitOptions &jit) {
  // A cubin (ELF) carries its size in its headers; PTX is NUL-terminated,
  // which std::string guarantees.
  JitLogs logs(jit);
  CUresult r = api_.cuModuleLoadDataEx(&out, image.c_str(), logs.count, logs.options, logs.values);
  if (r == 0)
    return true;
  error = logs.describe(fmt::format("cuModuleLoadDataEx failed: {}", errorText(r)));
  return false;
}

bool CudaDriver::linkToCubin(const std::string &ptx, std::string &cubin, std::string &error,
                             const JitOptions &jit) {
  JitLogs logs(jit);
  CUlinkState state = nullptr;
  CUresult r = api_.cuLinkCreate(logs.count, logs.options, logs.values, &state);
  if (r != 0) {
    error = fmt::format("cuLinkCreate failed: {}", errorText(r));
    return false;
  }
  // The input size counts the terminating NUL, as the driver expects for PTX.
  r = api_.cuLinkAddData(state, kJitInputPtx, const_cast<char *>(ptx.c_str()), ptx.size() + 1,
                         "kernel.ptx", 0, nullptr, nullptr);
  const char *what = "cuLinkAddData";
  void *image = nullptr;
  size_t size = 0;
  if (r == 0) {
    what = "cuLinkComplete";
    r = api_.cuLinkComplete(state, &image, &size);
  }
  // The image belongs to the link state: copy it out before destroying it.
  if (r == 0)
    cubin.assign(static_cast<const char *>(image), size);
  else
    error = logs.describe(fmt::format("{} failed: {}", what, errorText(r)));
  api_.cuLinkDestroy(state);
  return r == 0;
}

bool CudaDriver::setMaxDynamicShared(CUfunction function, int bytes, std::string &error) {
  return check(api_.cuFuncSetAttribute(function, kFuncMaxDynamicSharedSizeBytes, bytes),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", error);
}

bool CudaDriver::getFunction(CUmodule module, const std::string &name, CUfunction &out,
                             std::string &error) {
  CUresult r = api_.cuModuleGetFunction(&out, module, name.c_str());
  if (r == 0)
    return true;
  error = fmt::format("cuModuleGetFunction('{}') failed: {}", name, errorText(r));
  return false;
}

bool CudaDriver::unloadModule(CUmodule module, std::string &error) {
  // cuModuleUnload acts on the calling thread's current context, and the
  // last handle to a kernel may go on a thread that never made the primary
  // context current (a worker of the caller's pool) or made another one
  // current: switch for the call, then switch back.
  CUcontext previous = nullptr;
  bool restore = false;
  if (api_.cuCtxGetCurrent && api_.cuCtxGetCurrent(&previous) == 0)
    restore = previous != context_;
  if ((!api_.cuCtxGetCurrent || restore) && !makeCurrent(error))
    return false;
  // A failed synchronize (an earlier launch's sticky error) is not this
  // call's to report; the unload is still attempted.
  api_.cuCtxSynchronize();
  bool ok = check(api_.cuModuleUnload(module), "cuModuleUnload", error);
  if (restore)
    api_.cuCtxSetCurrent(previous);
  return ok;
}

bool CudaDriver::hasGraphs(std::string &error) const {
  CudaFunctions copy = api_;
  for (const Symbol &s : optionalSymbols(copy))
    if (std::string_view(s.name).starts_with("cuStream") ||
        std::string_view(s.name).starts_with("cuGraph"))
      if (!*s.slot) {
        error =
            fmt::format("CUDA driver too old for CUDA graphs: libcuda.so.1 has no '{}'", s.name);
        return false;
      }
  return true;
}

bool CudaDriver::encodeTensorMap(const TensorMapSpec &spec, void *out, std::string &error) const {
  if (!api_.cuTensorMapEncodeTiled) {
    error = "CUDA driver too old for TMA: libcuda.so.1 has no 'cuTensorMapEncodeTiled'";
    return false;
  }
  std::vector<uint32_t> elementStrides(spec.box.size(), 1);
  return check(api_.cuTensorMapEncodeTiled(out, spec.dataType, uint32_t(spec.dims.size()),
                                           reinterpret_cast<void *>(uintptr_t(spec.address)),
                                           spec.dims.data(), spec.strides.data(), spec.box.data(),
                                           elementStrides.data(), 0, spec.swizzle, spec.l2Promotion,
                                           spec.oobFill),
               "cuTensorMapEncodeTiled", error);
}

bool CudaDriver::queryResources(CUfunction function, KernelResources &out, std::string &error) {
  return check(api_.cuFuncGetAttribute(&out.registers, kFuncNumRegs, function),
               "cuFuncGetAttribute(NUM_REGS)", error) &&
         check(api_.cuFuncGetAttribute(&out.localBytes, kFuncLocalSizeBytes, function),
               "cuFuncGetAttribute(LOCAL_SIZE_BYTES)", error) &&
         check(api_.cuFuncGetAttribute(&out.staticSharedBytes, kFuncSharedSizeBytes, function),
               "cuFuncGetAttribute(SHARED_SIZE_BYTES)", error) &&
         check(api_.cuFuncGetAttribute(&out.maxThreadsPerBlock, kFuncMaxThreadsPerBlock, function),
               "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", error);
}

bool CudaDriver::allocate(size_t bytes, CUdeviceptr &out, std::string &error) {
  CUresult r = api_.cuMemAlloc(&out, bytes);
  if (r == 0)
    return true;
  error = fmt::format("cuMemAlloc({} bytes) failed: {}", bytes, errorText(r));
  return false;
}

bool CudaDriver::free(CUdeviceptr ptr, std::string &error) {
  return check(api_.cuMemFree(ptr), "cuMemFree", error);
}

bool CudaDriver::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes, std::string &error) {
  return check(api_.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD", error);
}

bool CudaDriver::copyToHost(void *dst, CUdeviceptr src, size_t bytes, std::string &error) {
  return check(api_.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH", error);
}

bool CudaDriver::fill(CUdeviceptr dst, unsigned char byte, size_t bytes, std::string &error) {
  return check(api_.cuMemsetD8(dst, byte, bytes), "cuMemsetD8", error);
}

bool CudaDriver::synchronize(std::string &error) {
  return check(api_.cuCtxSynchronize(), "cuCtxSynchronize", error);
}

} // namespace tk
