#include "driver/HipDriver.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <mutex>
#include <utility>

namespace tk {
namespace {

// hipDeviceAttribute_t values, the same from ROCm 5.0 to 6.x (the
// CUDA-compatible block of the enum, alphabetical, from 0).
constexpr int kDevMaxThreadsPerBlock = 56;
constexpr int kDevMultiprocessorCount = 63;
constexpr int kDevMaxSharedMemoryPerBlock = 74;
constexpr int kDevWarpSize = 87;
// hipFunction_attribute values (CUDA's CUfunction_attribute order).
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;
// hipModuleLaunchKernel's `extra` markers. HIP_LAUNCH_PARAM_END is 3, not
// CUDA's 0: HIP refuses an array that does not end with it.
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(uintptr_t(1));
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(uintptr_t(2));
void *const kLaunchParamEnd = reinterpret_cast<void *>(uintptr_t(3));

struct Symbol {
  void **slot;
  const char *name;
};

template <class F> void **slotOf(F &fn) { return reinterpret_cast<void **>(&fn); }

// Every entry point is required: HIP's exported names have been stable
// (unversioned) for these since ROCm 5.0.
std::vector<Symbol> symbolTable(HipFunctions &f) {
  return {
      {slotOf(f.hipInit), "hipInit"},
      {slotOf(f.hipGetDeviceCount), "hipGetDeviceCount"},
      {slotOf(f.hipDeviceGet), "hipDeviceGet"},
      {slotOf(f.hipDeviceGetName), "hipDeviceGetName"},
      {slotOf(f.hipDeviceGetAttribute), "hipDeviceGetAttribute"},
      {slotOf(f.hipSetDevice), "hipSetDevice"},
      {slotOf(f.hipGetDevice), "hipGetDevice"},
      {slotOf(f.hipDeviceSynchronize), "hipDeviceSynchronize"},
      {slotOf(f.hipRuntimeGetVersion), "hipRuntimeGetVersion"},
      {slotOf(f.hipModuleLoadData), "hipModuleLoadData"},
      {slotOf(f.hipModuleUnload), "hipModuleUnload"},
      {slotOf(f.hipModuleGetFunction), "hipModuleGetFunction"},
      {slotOf(f.hipFuncGetAttribute), "hipFuncGetAttribute"},
      {slotOf(f.hipModuleLaunchKernel), "hipModuleLaunchKernel"},
      {slotOf(f.hipMalloc), "hipMalloc"},
      {slotOf(f.hipFree), "hipFree"},
      {slotOf(f.hipMemcpyHtoD), "hipMemcpyHtoD"},
      {slotOf(f.hipMemcpyDtoH), "hipMemcpyDtoH"},
      {slotOf(f.hipMemset), "hipMemset"},
      {slotOf(f.hipStreamCreate), "hipStreamCreate"},
      {slotOf(f.hipStreamDestroy), "hipStreamDestroy"},
      {slotOf(f.hipStreamSynchronize), "hipStreamSynchronize"},
      {slotOf(f.hipEventCreate), "hipEventCreate"},
      {slotOf(f.hipEventRecord), "hipEventRecord"},
      {slotOf(f.hipEventSynchronize), "hipEventSynchronize"},
      {slotOf(f.hipEventElapsedTime), "hipEventElapsedTime"},
      {slotOf(f.hipEventDestroy), "hipEventDestroy"},
      {slotOf(f.hipGetErrorName), "hipGetErrorName"},
      {slotOf(f.hipGetErrorString), "hipGetErrorString"},
  };
}

void *asPointer(uint64_t address) { return reinterpret_cast<void *>(uintptr_t(address)); }

} // namespace

HipDriver *HipDriver::get(std::string &error) {
  // Loaded once per process; a failed load is remembered too, so a machine
  // without ROCm pays for the dlopen attempts once.
  static std::once_flag once;
  static HipDriver *instance = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<std::string> names(std::begin(kLibraryNames), std::end(kLibraryNames));
    std::unique_ptr<HipDriver> driver = open(names, failure);
    instance = driver.release(); // never destroyed: kernels may outlive static destructors
  });
  if (!instance)
    error = failure;
  return instance;
}

std::unique_ptr<HipDriver> HipDriver::open(const std::vector<std::string> &libraries,
                                           std::string &error) {
  std::unique_ptr<HipDriver> driver(new HipDriver());
  if (!driver->initialize(libraries, error))
    return nullptr;
  return driver;
}

HipDriver::~HipDriver() {
  if (library_)
    dlclose(library_);
}

bool HipDriver::initialize(const std::vector<std::string> &libraries, std::string &error) {
  // RTLD_LOCAL keeps the runtime's symbols out of the global namespace; tk
  // only ever reaches it through the table. The first name's failure is the
  // one reported (the others are usually the same "not found").
  std::string first, why;
  for (const std::string &name : libraries) {
    library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_) {
      first = name;
      break;
    }
    if (first.empty()) {
      const char *e = dlerror();
      first = name;
      why = e ? e : "unknown";
    }
  }
  if (!library_) {
    std::string others;
    for (size_t i = 1; i < libraries.size(); ++i)
      others += fmt::format("{}{}",
                            i == 1                      ? ""
                            : i + 1 == libraries.size() ? " or "
                                                        : ", ",
                            libraries[i]);
    error = fmt::format("no HIP runtime: {} not found ({}{})", first, why,
                        others.empty() ? "" : "; nor " + others);
    return false;
  }
  for (const Symbol &s : symbolTable(api_)) {
    void *p = dlsym(library_, s.name);
    if (!p) {
      error = fmt::format("HIP runtime too old: {} has no '{}'", first, s.name);
      return false;
    }
    *s.slot = p;
  }
  if (!check(api_.hipInit(0), "hipInit", error))
    return false;
  int count = 0;
  if (!check(api_.hipGetDeviceCount(&count), "hipGetDeviceCount", error))
    return false;
  if (count == 0) {
    error = "no HIP device: the runtime is loaded but reports 0 devices";
    return false;
  }
  if (!check(api_.hipDeviceGet(&device_, 0), "hipDeviceGet", error) || !makeCurrent(error))
    return false;
  const std::pair<int *, int> attributes[] = {
      {&limits_.maxThreadsPerBlock, kDevMaxThreadsPerBlock},
      {&limits_.maxSharedPerBlock, kDevMaxSharedMemoryPerBlock},
      {&computeUnits_, kDevMultiprocessorCount},
      {&warpSize_, kDevWarpSize}};
  for (auto [slot, attribute] : attributes)
    if (!check(api_.hipDeviceGetAttribute(slot, attribute, device_), "hipDeviceGetAttribute",
               error))
      return false;
  // LDS has no opt-in above the per-workgroup size. Registers are not
  // checked: the AMDGPU back end allocates them for the kernel's exact
  // workgroup size (amdgpu-flat-work-group-size), so a compiled kernel fits.
  limits_.maxSharedPerBlockOptin = limits_.maxSharedPerBlock;
  limits_.maxRegistersPerBlock = 0;
  return true;
}

std::string HipDriver::errorText(hipError_t result) const {
  const char *name = api_.hipGetErrorName(result);
  if (!name)
    return fmt::format("unknown HIP error {}", result);
  const char *text = api_.hipGetErrorString(result);
  if (!text || !*text)
    return name;
  return fmt::format("{} ({})", name, text);
}

bool HipDriver::check(hipError_t result, const char *what, std::string &error) const {
  if (result == 0)
    return true;
  error = fmt::format("{} failed: {}", what, errorText(result));
  return false;
}

bool HipDriver::makeCurrent(std::string &error) {
  return check(api_.hipSetDevice(device_), "hipSetDevice", error);
}

std::string HipDriver::deviceName() const {
  char name[256] = {};
  if (api_.hipDeviceGetName(name, sizeof(name) - 1, device_) != 0)
    return "unknown device";
  return name;
}

int HipDriver::runtimeVersion() const {
  int v = 0;
  api_.hipRuntimeGetVersion(&v);
  return v;
}

bool HipDriver::loadModule(const std::string &codeObject, hipModule_t &out, std::string &error) {
  // A code object is an ELF: its size is in its headers.
  return check(api_.hipModuleLoadData(&out, codeObject.data()), "hipModuleLoadData", error);
}

bool HipDriver::getFunction(hipModule_t module, const std::string &name, hipFunction_t &out,
                            std::string &error) {
  hipError_t r = api_.hipModuleGetFunction(&out, module, name.c_str());
  if (r == 0)
    return true;
  error = fmt::format("hipModuleGetFunction('{}') failed: {}", name, errorText(r));
  return false;
}

bool HipDriver::unloadModule(hipModule_t module, std::string &error) {
  // The device synchronize acts on the calling thread's current device: the
  // last handle to a kernel may go on any thread, so device 0 is selected
  // for the call and the thread's own device restored after it.
  int previous = device_;
  bool restore = api_.hipGetDevice(&previous) == 0 && previous != device_;
  if (restore && !makeCurrent(error))
    return false;
  // A failed synchronize (an earlier launch's error) is not this call's to
  // report; the unload is still attempted.
  api_.hipDeviceSynchronize();
  bool ok = check(api_.hipModuleUnload(module), "hipModuleUnload", error);
  if (restore)
    api_.hipSetDevice(previous);
  return ok;
}

bool HipDriver::queryResources(hipFunction_t function, KernelResources &out, std::string &error) {
  return check(api_.hipFuncGetAttribute(&out.registers, kFuncNumRegs, function),
               "hipFuncGetAttribute(NUM_REGS)", error) &&
         check(api_.hipFuncGetAttribute(&out.localBytes, kFuncLocalSizeBytes, function),
               "hipFuncGetAttribute(LOCAL_SIZE_BYTES)", error) &&
         check(api_.hipFuncGetAttribute(&out.staticSharedBytes, kFuncSharedSizeBytes, function),
               "hipFuncGetAttribute(SHARED_SIZE_BYTES)", error) &&
         check(api_.hipFuncGetAttribute(&out.maxThreadsPerBlock, kFuncMaxThreadsPerBlock, function),
               "hipFuncGetAttribute(MAX_THREADS_PER_BLOCK)", error);
}

bool HipDriver::launch(hipFunction_t function, std::array<unsigned, 3> grid,
                       std::array<unsigned, 3> block, unsigned sharedBytes, hipStream_t stream,
                       void **args, std::string &error) const {
  return check(api_.hipModuleLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                          block[2], sharedBytes, stream, args, nullptr),
               "hipModuleLaunchKernel", error);
}

bool HipDriver::launchPacked(hipFunction_t function, std::array<unsigned, 3> grid,
                             std::array<unsigned, 3> block, unsigned sharedBytes,
                             hipStream_t stream, void *kernargs, size_t bytes,
                             std::string &error) const {
  void *extra[] = {kLaunchParamBufferPointer, kernargs, kLaunchParamBufferSize, &bytes,
                   kLaunchParamEnd};
  return check(api_.hipModuleLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                          block[2], sharedBytes, stream, nullptr, extra),
               "hipModuleLaunchKernel", error);
}

bool HipDriver::allocate(size_t bytes, uint64_t &out, std::string &error) {
  void *p = nullptr;
  hipError_t r = api_.hipMalloc(&p, bytes);
  if (r == 0) {
    out = uint64_t(uintptr_t(p));
    return true;
  }
  error = fmt::format("hipMalloc({} bytes) failed: {}", bytes, errorText(r));
  return false;
}

bool HipDriver::free(uint64_t ptr, std::string &error) {
  return check(api_.hipFree(asPointer(ptr)), "hipFree", error);
}

bool HipDriver::copyToDevice(uint64_t dst, const void *src, size_t bytes, std::string &error) {
  return check(api_.hipMemcpyHtoD(asPointer(dst), const_cast<void *>(src), bytes), "hipMemcpyHtoD",
               error);
}

bool HipDriver::copyToHost(void *dst, uint64_t src, size_t bytes, std::string &error) {
  return check(api_.hipMemcpyDtoH(dst, asPointer(src), bytes), "hipMemcpyDtoH", error);
}

bool HipDriver::fill(uint64_t dst, unsigned char byte, size_t bytes, std::string &error) {
  return check(api_.hipMemset(asPointer(dst), byte, bytes), "hipMemset", error);
}

bool HipDriver::synchronize(std::string &error) {
  return check(api_.hipDeviceSynchronize(), "hipDeviceSynchronize", error);
}

bool HipDriver::createStream(hipStream_t &out, std::string &error) {
  return check(api_.hipStreamCreate(&out), "hipStreamCreate", error);
}

bool HipDriver::destroyStream(hipStream_t stream, std::string &error) {
  return check(api_.hipStreamDestroy(stream), "hipStreamDestroy", error);
}

bool HipDriver::synchronizeStream(hipStream_t stream, std::string &error) {
  return check(api_.hipStreamSynchronize(stream), "hipStreamSynchronize", error);
}

bool HipDriver::createEvent(hipEvent_t &out, std::string &error) {
  return check(api_.hipEventCreate(&out), "hipEventCreate", error);
}

bool HipDriver::recordEvent(hipEvent_t event, hipStream_t stream, std::string &error) {
  return check(api_.hipEventRecord(event, stream), "hipEventRecord", error);
}

bool HipDriver::elapsedMs(hipEvent_t start, hipEvent_t stop, float &ms, std::string &error) {
  return check(api_.hipEventSynchronize(stop), "hipEventSynchronize", error) &&
         check(api_.hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime", error);
}

bool HipDriver::destroyEvent(hipEvent_t event, std::string &error) {
  return check(api_.hipEventDestroy(event), "hipEventDestroy", error);
}

} // namespace tk
