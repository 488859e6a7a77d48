// The public C++ API (include/tk/Error.h, Device.h, Kernel.h) over the
// driver layer: the device's runtime (CudaDriver, or HipDriver on a machine
// with an AMD GPU and no CUDA driver: detail::DeviceRuntime) for the device,
// memory and streams, GpuKernel for compiling and launching (on the runtime
// of the kernel's target). Every failure becomes a tk::Status or tk::Error
// carrying the driver's message; nothing here prints or aborts.
#include "lang/Float16.h"
#include "runtime/Autotuner.h"
#include "runtime/GpuKernel.h"
#include "runtime/PublicApiImpl.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <cctype>
#include <new>

namespace tk {

Status Status::failure(std::string message) {
  Status s;
  s.message = message.empty() ? "unknown error" : std::move(message);
  // CudaDriver's messages name the error: "...: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  size_t at = s.message.find("CUDA_ERROR_");
  if (at != std::string::npos) {
    size_t end = at;
    while (end < s.message.size() &&
           (std::isupper(static_cast<unsigned char>(s.message[end])) ||
            std::isdigit(static_cast<unsigned char>(s.message[end])) || s.message[end] == '_'))
      ++end;
    s.cudaError = s.message.substr(at, end - at);
  }
  return s;
}

CudaDriver &detail::driverOrThrow() {
  std::string error;
  CudaDriver *driver = CudaDriver::get(error);
  if (!driver)
    throw Error(error);
  return *driver;
}

detail::DeviceRuntime detail::deviceRuntime(std::string &error) {
  // Decided once per process by each driver's get(), so every call here
  // picks the same runtime.
  DeviceRuntime r;
  std::string noCuda, noHip;
  if ((r.cuda = CudaDriver::get(noCuda)))
    return r;
  if ((r.hip = HipDriver::get(noHip)))
    return r;
  error = noCuda + "; " + noHip;
  return r;
}

detail::DeviceRuntime detail::deviceRuntimeOrThrow() {
  std::string error;
  DeviceRuntime r = deviceRuntime(error);
  if (!r)
    throw Error(error);
  return r;
}

bool deviceAvailable(std::string *why) {
  std::string error;
  bool ok = bool(detail::deviceRuntime(error));
  if (why)
    *why = ok ? "" : error;
  return ok;
}

DeviceInfo deviceInfo() {
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  DeviceInfo info;
  if (r.hip) {
    // AMD: no compute capability; LDS per workgroup; registers are the
    // compiler's to fit (HipDriver::limits).
    info.name = r.hip->deviceName();
    info.multiprocessors = r.hip->computeUnits();
    info.maxThreadsPerBlock = r.hip->limits().maxThreadsPerBlock;
    info.sharedBytesPerBlock = r.hip->limits().maxSharedPerBlock;
    return info;
  }
  CudaDriver &driver = *r.cuda;
  tune::Limits limits;
  std::string error;
  if (!tune::queryLimits(driver, limits, error))
    throw Error(error);
  info.name = driver.deviceName();
  info.computeCapability = driver.computeCapability();
  info.multiprocessors = driver.multiprocessorCount();
  info.maxThreadsPerBlock = limits.maxThreadsPerBlock;
  info.sharedBytesPerBlock = limits.sharedBytesPerBlock;
  info.registersPerBlock = limits.registersPerBlock;
  return info;
}

void synchronize() {
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (!(r.hip ? r.hip->synchronize(error) : r.cuda->synchronize(error)))
    throw Error(error);
}

//
// Stream
//

Stream Stream::create() {
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  void *s = nullptr;
  std::string error;
  hipStream_t hs = nullptr;
  CUstream cs = nullptr;
  if (r.hip ? !r.hip->createStream(hs, error)
            : !r.cuda->check(r.cuda->api().cuStreamCreate(&cs, 0), "cuStreamCreate", error))
    throw Error(error);
  s = r.hip ? static_cast<void *>(hs) : static_cast<void *>(cs);
  Stream out;
  out.handle_ = s;
  out.owned_ = true;
  return out;
}

Stream Stream::wrap(void *handle) {
  Stream out;
  out.handle_ = handle;
  return out;
}

Stream::~Stream() {
  if (owned_ && handle_) {
    std::string error;
    detail::DeviceRuntime r = detail::deviceRuntime(error);
    if (r.hip)
      r.hip->destroyStream(static_cast<hipStream_t>(handle_), error);
    else if (r.cuda)
      r.cuda->api().cuStreamDestroy(static_cast<CUstream>(handle_));
  }
}

Stream::Stream(Stream &&other) noexcept : handle_(other.handle_), owned_(other.owned_) {
  other.handle_ = nullptr;
  other.owned_ = false;
}

Stream &Stream::operator=(Stream &&other) noexcept {
  if (this != &other) {
    Stream old(std::move(*this));
    handle_ = other.handle_;
    owned_ = other.owned_;
    other.handle_ = nullptr;
    other.owned_ = false;
  }
  return *this;
}

void Stream::synchronize() const {
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (r.hip ? !r.hip->synchronizeStream(static_cast<hipStream_t>(handle_), error)
            : !r.cuda->check(r.cuda->api().cuStreamSynchronize(static_cast<CUstream>(handle_)),
                             "cuStreamSynchronize", error))
    throw Error(error);
}

//
// DeviceMemory
//

DeviceMemory::DeviceMemory(size_t bytes) {
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (!(r.hip ? r.hip->allocate(bytes, ptr_, error) : r.cuda->allocate(bytes, ptr_, error)))
    throw Error(error);
  bytes_ = bytes;
}

DeviceMemory::~DeviceMemory() { release(); }

void DeviceMemory::release() noexcept {
  if (ptr_) {
    std::string error;
    detail::DeviceRuntime r = detail::deviceRuntime(error);
    if (r.hip)
      r.hip->free(ptr_, error);
    else if (r.cuda)
      r.cuda->free(ptr_, error);
  }
  ptr_ = 0;
  bytes_ = 0;
}

DeviceMemory::DeviceMemory(DeviceMemory &&other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

DeviceMemory &DeviceMemory::operator=(DeviceMemory &&other) noexcept {
  if (this != &other) {
    release();
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

namespace {

void checkSize(const char *what, size_t bytes, size_t have) {
  if (bytes > have)
    throw Error(fmt::format("DeviceMemory::{}: {} bytes requested but the allocation has {}", what,
                            bytes, have));
}

} // namespace

void DeviceMemory::upload(const void *src, size_t bytes) {
  checkSize("upload", bytes, bytes_);
  if (!bytes)
    return;
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (!(r.hip ? r.hip->copyToDevice(ptr_, src, bytes, error)
              : r.cuda->copyToDevice(ptr_, src, bytes, error)))
    throw Error(error);
}

void DeviceMemory::download(void *dst, size_t bytes) const {
  checkSize("download", bytes, bytes_);
  if (!bytes)
    return;
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (!(r.hip ? r.hip->copyToHost(dst, ptr_, bytes, error)
              : r.cuda->copyToHost(dst, ptr_, bytes, error)))
    throw Error(error);
}

void DeviceMemory::zero() {
  if (!bytes_)
    return;
  detail::DeviceRuntime r = detail::deviceRuntimeOrThrow();
  std::string error;
  if (!(r.hip ? r.hip->fill(ptr_, 0, bytes_, error) : r.cuda->fill(ptr_, 0, bytes_, error)))
    throw Error(error);
}

//
// Kernel
//

const char *argKindName(Arg::Kind kind) {
  // The driver's names, in the same order.
  return gpuArgKindName(static_cast<GpuArg::Kind>(kind));
}

Arg Arg::fp16(double x) { return fp16Bits(doubleToHalf(x)); }
Arg Arg::bf16(double x) { return bf16Bits(doubleToBF16(x)); }

std::string Constant::str() const { return detail::toConstValue(*this).str(); }

ConstValue detail::toConstValue(const Constant &c) {
  switch (c.kind) {
  case Constant::Kind::Int:
    return ConstValue::ofInt(c.intValue);
  case Constant::Kind::Float:
    return ConstValue::ofFloat(c.floatValue);
  case Constant::Kind::Bool:
    return ConstValue::ofBool(c.boolValue);
  case Constant::Kind::String:
    return ConstValue::ofString(c.stringValue);
  }
  return ConstValue::none();
}

GpuCompileOptions detail::toGpuOptions(const KernelOptions &options) {
  GpuCompileOptions o;
  o.kernel = options.kernel;
  o.signature = options.signature;
  for (const auto &[name, value] : options.constants)
    o.constants[name] = toConstValue(value);
  o.numWarps = options.numWarps;
  o.numStages = options.numStages;
  o.arch = options.arch;
  o.fpFusion = options.fpFusion;
  o.reflectFtz = options.reflectFtz;
  o.remarks = options.remarks;
  return o;
}

detail::KernelData::~KernelData() {
  // An image's module; a compiled kernel's goes with its last GpuKernel
  // handle. Nothing to report to from here.
  std::string ignored;
  if (module && driver)
    driver->unloadModule(module, ignored);
}

std::shared_ptr<const detail::KernelData>
detail::KernelData::fromGpu(std::shared_ptr<const GpuKernel> gpu) {
  auto d = std::make_shared<KernelData>();
  d->name = gpu->name();
  d->ptx = gpu->ptx();
  d->numWarps = gpu->numWarps();
  d->threads =
      gpu->info().threadsPerProgram > 0 ? gpu->info().threadsPerProgram : gpu->numWarps() * 32;
  d->registers = gpu->resources().registers;
  d->localBytes = gpu->resources().localBytes;
  d->sharedBytes = gpu->resources().staticSharedBytes;
  for (const GpuParam &p : gpu->params()) {
    d->paramNames.push_back(p.name);
    d->kinds.push_back(static_cast<Arg::Kind>(p.kind));
  }
  d->gpu = std::move(gpu);
  return d;
}

Kernel detail::KernelData::wrap(std::shared_ptr<const KernelData> data) {
  return Kernel(std::move(data));
}

Status Kernel::tryFromSource(const std::string &source, const KernelOptions &options,
                             const std::string &fileName, Kernel &out) noexcept {
  try {
    std::string error;
    GpuCompileOptions opts = detail::toGpuOptions(options);
    std::shared_ptr<const GpuKernel> gpu = GpuKernel::compileShared(source, fileName, opts, error);
    if (!gpu)
      return Status::failure(error);
    auto data = detail::KernelData::fromGpu(std::move(gpu));
    if (options.specialize) {
      auto variants = std::make_shared<detail::SpecializedVariants>();
      if (!variants->specializer.init(source, fileName, opts, options.doNotSpecialize, error))
        return Status::failure(error);
      if (variants->specializer.active()) {
        variants->source = source;
        variants->fileName = fileName;
        variants->base = std::move(opts);
        std::const_pointer_cast<detail::KernelData>(data)->variants = std::move(variants);
      }
    }
    out = Kernel(std::move(data));
    return {};
  } catch (const std::exception &e) {
    return Status::failure(e.what());
  }
}

Status Kernel::tryFromFile(const std::string &path, const KernelOptions &options,
                           Kernel &out) noexcept {
  std::string source, error;
  if (!detail::readFile(path, source, error))
    return Status::failure(error);
  return tryFromSource(source, options, path, out);
}

Kernel Kernel::fromSource(const std::string &source, const KernelOptions &options,
                          const std::string &fileName) {
  Kernel k;
  check(tryFromSource(source, options, fileName, k));
  return k;
}

Kernel Kernel::fromFile(const std::string &path, const KernelOptions &options) {
  Kernel k;
  check(tryFromFile(path, options, k));
  return k;
}

bool detail::readFile(const std::string &path, std::string &text, std::string &error) {
  return readInputFile(path, text, error);
}

Kernel Kernel::fromImage(const Image &image) {
  CudaDriver &driver = detail::driverOrThrow();
  std::string error;
  auto d = std::make_shared<detail::KernelData>();
  d->name = image.name;
  d->paramNames = image.paramNames;
  d->kinds = image.params;
  d->numWarps = image.numWarps;
  d->threads = image.numWarps * 32; // images are PTX and cubins
  d->dynamicShared = unsigned(std::max(0, image.dynamicSharedBytes));
  if (d->paramNames.size() != d->kinds.size())
    throw Error(fmt::format("kernel image '{}': {} parameter names for {} parameters", image.name,
                            d->paramNames.size(), d->kinds.size()));
  // A cubin built for this very device loads without the JIT; otherwise the
  // PTX goes through the driver's JIT.
  bool useCubin = image.cubin && image.cubinBytes && image.cubinArch == driver.computeCapability();
  std::string bytes =
      useCubin ? std::string(reinterpret_cast<const char *>(image.cubin), image.cubinBytes)
               : std::string(image.ptx ? image.ptx : "");
  if (!useCubin)
    d->ptx = bytes;
  if (bytes.empty())
    throw Error(fmt::format("kernel image '{}' has no PTX and no cubin for sm_{}", image.name,
                            driver.computeCapability()));
  KernelResources res;
  if (!driver.makeCurrent(error) || !driver.loadModule(bytes, d->module, error))
    throw Error(fmt::format("kernel '{}': {}", image.name, error));
  d->driver = &driver; // from here on `d` unloads the module, on failure too
  if (!driver.getFunction(d->module, image.name, d->function, error) ||
      !driver.queryResources(d->function, res, error))
    throw Error(fmt::format("kernel '{}': {}", image.name, error));
  // Dynamic shared memory above the default 48 KiB needs the function's
  // opt-in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8).
  if (d->dynamicShared > 48 * 1024 &&
      !driver.check(driver.api().cuFuncSetAttribute(d->function, 8, int(d->dynamicShared)),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", error))
    throw Error(fmt::format("kernel '{}': {}", image.name, error));
  d->registers = res.registers;
  d->localBytes = res.localBytes;
  d->sharedBytes = res.staticSharedBytes;
  d->api = &driver.api();
  return Kernel(d);
}

namespace {

std::string countMismatch(const detail::KernelData &d, size_t passed) {
  return argCountError(d.name, d.paramNames, passed);
}

} // namespace

bool Kernel::launchRaw(Grid grid, ArgList args, void *stream, Status *status) const noexcept {
  constexpr size_t kMaxArgs = 64;
  if (!data_) {
    *status = Status::failure("launch of an empty tk::Kernel");
    return false;
  }
  const detail::KernelData &d = *data_;
  if (args.size() > kMaxArgs || args.size() != d.kinds.size()) {
    *status = Status::failure(countMismatch(d, args.size()));
    return false;
  }
  // Each argument converted to its parameter's kind. GpuArg has no default
  // constructor: the array is raw storage filled in place (GpuArg is
  // trivially destructible).
  alignas(GpuArg) unsigned char storage[kMaxArgs * sizeof(GpuArg)];
  GpuArg *gpuArgs = reinterpret_cast<GpuArg *>(storage);
  for (size_t i = 0; i < args.size(); ++i)
    if (!detail::convertArg(args[i], d.kinds[i], gpuArgs[i])) {
      *status =
          Status::failure(detail::conversionError(d.name, i, d.paramNames[i], d.kinds[i], args[i]));
      return false;
    }
  if (d.gpu) {
    // The kernel (a variant, or d.gpu) is held by `d`, which this handle
    // holds: its module cannot be unloaded during the launch.
    const GpuKernel *gpu = d.gpu.get();
    std::string error;
    if (d.variants) {
      const detail::SpecializedVariants::Variant *v = d.variants->variantFor(args, error);
      if (!v) {
        *status = Status::failure(error);
        return false;
      }
      gpu = v->kernel.get();
    }
    // GpuKernel launches with the dynamic shared memory it knows about.
    if (!gpu->launch({grid.x, grid.y, grid.z}, std::span<const GpuArg>(gpuArgs, args.size()),
                     static_cast<CUstream>(stream), error)) {
      *status = Status::failure(error);
      return false;
    }
    return true;
  }
  // An image kernel: the driver reads each parameter through a pointer to
  // the converted value (at the start of GpuArg).
  void *slots[kMaxArgs];
  for (size_t i = 0; i < args.size(); ++i)
    slots[i] = static_cast<void *>(&gpuArgs[i].value);
  CUresult r =
      d.api->cuLaunchKernel(d.function, grid.x, grid.y, grid.z, unsigned(d.numWarps) * 32, 1, 1,
                            d.dynamicShared, static_cast<CUstream>(stream), slots, nullptr);
  if (r != 0) {
    std::string error;
    std::string ignored;
    CudaDriver *driver = CudaDriver::get(ignored);
    if (driver)
      driver->check(r, "cuLaunchKernel", error);
    *status = Status::failure(fmt::format("kernel '{}': {}", d.name, error));
    return false;
  }
  return true;
}

Kernel Kernel::specialized(ArgList args) const {
  if (!data_ || !data_->variants)
    return *this;
  const detail::KernelData &d = *data_;
  if (args.size() != d.kinds.size())
    throw Error(countMismatch(d, args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    alignas(GpuArg) unsigned char storage[sizeof(GpuArg)];
    if (!detail::convertArg(args[i], d.kinds[i], *reinterpret_cast<GpuArg *>(storage)))
      throw Error(detail::conversionError(d.name, i, d.paramNames[i], d.kinds[i], args[i]));
  }
  std::string error;
  const detail::SpecializedVariants::Variant *v = d.variants->variantFor(args, error);
  if (!v)
    throw Error(error);
  return Kernel(detail::KernelData::fromGpu(v->kernel));
}

Status Kernel::tryLaunch(Grid grid, ArgList args, const Stream &stream) const noexcept {
  Status s;
  launchRaw(grid, args, stream.handle(), &s);
  return s;
}

static const std::string kEmpty;
static const std::vector<std::string> kNoNames;
static const std::vector<Arg::Kind> kNoKinds;

const std::string &Kernel::name() const { return data_ ? data_->name : kEmpty; }
const std::string &Kernel::ptx() const { return data_ ? data_->ptx : kEmpty; }
const std::vector<std::string> &Kernel::parameterNames() const {
  return data_ ? data_->paramNames : kNoNames;
}
const std::vector<Arg::Kind> &Kernel::parameterKinds() const {
  return data_ ? data_->kinds : kNoKinds;
}
int Kernel::numWarps() const { return data_ ? data_->numWarps : 0; }
int Kernel::registers() const { return data_ ? data_->registers : 0; }
int Kernel::localBytes() const { return data_ ? data_->localBytes : 0; }
int Kernel::sharedBytes() const { return data_ ? data_->sharedBytes : 0; }
const std::vector<KernelRemark> &Kernel::remarks() const {
  static const std::vector<KernelRemark> none; // an image, or no kernel
  return data_ && data_->gpu ? data_->gpu->remarks() : none;
}
void *Kernel::function() const {
  if (!data_)
    return nullptr;
  return data_->gpu ? data_->gpu->nativeFunction() : data_->function;
}

} // namespace tk
