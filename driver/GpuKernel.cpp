#include "driver/GpuKernel.h"

#include "ir/ASTToIR.h"
#include "lowering/PTXEmitter.h"
#include "lowering/Pipeline.h"
#include "parser/Frontend.h"

#include <fmt/format.h>

#include <cassert>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

namespace tk {

// The cache of compiled kernels: one per process, never emptied, so the
// pointers compile() returns stay valid until exit (the modules stay loaded).
class GpuKernelCache {
public:
  static GpuKernel *getOrCompile(const std::string &source, const std::string &fileName,
                                 const GpuCompileOptions &opts, std::string &error);
};

namespace {

// The most runtime parameters a kernel may have; launch() builds the
// driver's parameter array on the stack with this many slots.
constexpr size_t kMaxParams = 256;
constexpr unsigned kWarpSize = 32;

// How a scalar or pointer IR argument is passed at launch.
GpuParam describeParam(const std::string &name, Type *type) {
  GpuParam p;
  p.name = name;
  p.typeName = type->str();
  if (type->isPointer()) {
    p.kind = GpuArg::Kind::Pointer;
    return p;
  }
  switch (type->dtype()) {
  case DType::I32:
  case DType::U32:
    p.kind = GpuArg::Kind::I32;
    break;
  case DType::I64:
  case DType::U64:
    p.kind = GpuArg::Kind::I64;
    break;
  case DType::F32:
    p.kind = GpuArg::Kind::F32;
    break;
  default:
    p.supported = false;
    break;
  }
  return p;
}

// The cache key spells out every input of a compile, each prefixed with its
// length so that no two different inputs give the same key. The options map
// is ordered, so the key is deterministic.
std::string cacheKey(const std::string &source, const std::string &fileName,
                     const GpuCompileOptions &opts) {
  std::string key;
  auto add = [&key](const std::string &field) {
    key += std::to_string(field.size());
    key += ':';
    key += field;
  };
  add(source);
  add(fileName);
  add(opts.kernel);
  add(opts.signature);
  for (const auto &[name, value] : opts.constants) {
    add(name);
    add(std::to_string(int(value.kind)) + value.str());
  }
  add(std::to_string(opts.numWarps));
  add(opts.arch);
  return key;
}

} // namespace

const char *gpuArgKindName(GpuArg::Kind kind) {
  switch (kind) {
  case GpuArg::Kind::Pointer:
    return "pointer";
  case GpuArg::Kind::I32:
    return "i32";
  case GpuArg::Kind::I64:
    return "i64";
  case GpuArg::Kind::F32:
    return "fp32";
  }
  return "?";
}

bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, std::string &ptx, std::vector<GpuParam> &params,
                  int &numWarps, std::string &error) {
  // Each compile has its own source manager and diagnostics: the caller gets
  // them rendered (file:line:col, source line, caret), which is all a host
  // program can do with them.
  SourceManager sm;
  BufferId buffer = sm.addBuffer(fileName, source);
  DiagnosticEngine diag(sm);
  ast::Context actx;
  auto fail = [&]() {
    error = diag.renderAll();
    return false;
  };
  ast::Module *m = parseAndCheck(sm, buffer, actx, diag);
  if (diag.hasErrors())
    return fail();
  const ast::FunctionDef *def = m->findFunction(opts.kernel);
  if (!def) {
    error = fmt::format("{}: error: no kernel named '{}'", fileName, opts.kernel);
    return false;
  }
  KernelSpec spec;
  spec.kernel = opts.kernel;
  spec.signature = opts.signature;
  spec.constants = opts.constants;
  std::vector<ParamBinding> bindings;
  if (!specializeParams(*def, spec, diag, bindings))
    return fail();

  IRContext ctx(sm);
  Module module(ctx);
  if (!lowerKernel(*m, spec, ctx, module, diag))
    return fail();
  for (auto &fn : module.functions())
    if (!fn->attrs().has("num_warps"))
      fn->attrs().set("num_warps", Attribute(int64_t(opts.numWarps)));
  PassManager pm(diag);
  buildPipeline(pm);
  buildGPUPipeline(pm);
  if (!pm.run(module))
    return fail();
  Function *fn = module.lookup(opts.kernel);
  assert(fn && "the pipeline keeps the kernel");
  TargetOptions target;
  target.arch = opts.arch;
  target.numWarps = opts.numWarps;
  ptx.clear();
  if (!emitPTX(module, target, ptx, diag))
    return fail();

  // The IR arguments are the bindings that have one, in parameter order.
  params.clear();
  for (const ParamBinding &b : bindings)
    if (b.isArgument)
      params.push_back(describeParam(b.name, fn->argument(unsigned(params.size()))->type()));
  assert(params.size() == fn->numArguments() && "one IR argument per runtime parameter");
  numWarps = int(fn->attrs().getInt("num_warps").value_or(opts.numWarps));
  return true;
}

GpuKernel *GpuKernelCache::getOrCompile(const std::string &source, const std::string &fileName,
                                        const GpuCompileOptions &opts, std::string &error) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<GpuKernel>> kernels;

  CudaDriver *driver = CudaDriver::get(error);
  if (!driver)
    return nullptr;
  std::string key = cacheKey(source, fileName, opts);
  // Compiles run under the lock: two threads asking for the same kernel
  // compile it once, and loading a module is serialised anyway.
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = kernels.find(key); it != kernels.end())
    return it->second.get();

  std::unique_ptr<GpuKernel> k(new GpuKernel());
  k->name_ = opts.kernel;
  if (!compileToPTX(source, fileName, opts, k->ptx_, k->params_, k->numWarps_, error))
    return nullptr;
  if (k->params_.size() > kMaxParams) {
    error = fmt::format("kernel '{}' has {} runtime parameters; launch supports at most {}",
                        opts.kernel, k->params_.size(), kMaxParams);
    return nullptr;
  }
  for (const GpuParam &p : k->params_) {
    k->kinds_.push_back(p.kind);
    k->allSupported_ = k->allSupported_ && p.supported;
  }
  if (!driver->makeCurrent(error) || !driver->loadModule(k->ptx_, k->module_, error) ||
      !driver->getFunction(k->module_, opts.kernel, k->function_, error) ||
      !driver->queryResources(k->function_, k->resources_, error)) {
    error = fmt::format("kernel '{}': {}", opts.kernel, error);
    return nullptr;
  }
  k->driver_ = driver;
  k->api_ = &driver->api();
  GpuKernel *result = k.get();
  kernels.emplace(std::move(key), std::move(k));
  return result;
}

GpuKernel *GpuKernel::compile(const std::string &source, const std::string &fileName,
                              const GpuCompileOptions &opts, std::string &error) {
  return GpuKernelCache::getOrCompile(source, fileName, opts, error);
}

GpuKernel *GpuKernel::compileFile(const std::string &path, const GpuCompileOptions &opts,
                                  std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("cannot read '{}'", path);
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  return compile(text.str(), path, opts, error);
}

bool GpuKernel::launch(std::array<unsigned, 3> grid, std::span<const GpuArg> args, CUstream stream,
                       std::string &error) const {
  // The fast path: the driver reads each parameter's bytes through a
  // pointer, and GpuArg keeps its value at offset 0, so the array can point
  // straight at the caller's arguments. cuLaunchKernel copies the values
  // before it returns, so nothing needs to outlive this call.
  const size_t n = kinds_.size();
  if (args.size() != n || !allSupported_)
    return reportMismatch(args, error);
  void *slots[kMaxParams];
  for (size_t i = 0; i < n; ++i) {
    if (args[i].kind != kinds_[i])
      return reportMismatch(args, error);
    slots[i] = const_cast<void *>(static_cast<const void *>(&args[i].value));
  }
  CUresult r =
      api_->cuLaunchKernel(function_, grid[0], grid[1], grid[2], unsigned(numWarps_) * kWarpSize, 1,
                           1, 0, stream, slots, nullptr);
  if (r == 0)
    return true;
  error = fmt::format("launch of '{}' on grid ({}, {}, {}) with {} threads per program failed: {}",
                      name_, grid[0], grid[1], grid[2], unsigned(numWarps_) * kWarpSize,
                      driver_->errorText(r));
  return false;
}

// The slow path of launch(): say exactly what is wrong.
bool GpuKernel::reportMismatch(std::span<const GpuArg> args, std::string &error) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (!params_[i].supported) {
      error = fmt::format("kernel '{}': parameter {} ('{}') has type {}, which launch() cannot "
                          "pass (it takes pointers, i32, i64 and fp32)",
                          name_, i, params_[i].name, params_[i].typeName);
      return false;
    }
  if (args.size() != params_.size()) {
    std::string names;
    for (const GpuParam &p : params_)
      names += (names.empty() ? "" : ", ") + p.name;
    error = fmt::format("kernel '{}' takes {} arguments ({}) but {} were passed", name_,
                        params_.size(), names, args.size());
    return false;
  }
  for (size_t i = 0; i < params_.size(); ++i)
    if (args[i].kind != params_[i].kind) {
      error = fmt::format("kernel '{}': argument {} ('{}') is {} in the signature ({}) but the "
                          "argument passed is {}",
                          name_, i, params_[i].name, gpuArgKindName(params_[i].kind),
                          params_[i].typeName, gpuArgKindName(args[i].kind));
      return false;
    }
  assert(false && "reportMismatch called without a mismatch");
  return false;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (!ptr_)
    return;
  // A failure to free (a context torn down first) has nowhere to go from a
  // destructor; the memory is lost either way.
  std::string ignored;
  if (CudaDriver *driver = CudaDriver::get(ignored))
    driver->free(ptr_, ignored);
  ptr_ = 0;
  bytes_ = 0;
}

bool DeviceBuffer::allocate(size_t bytes, std::string &error) {
  release();
  CudaDriver *driver = CudaDriver::get(error);
  if (!driver || !driver->allocate(bytes, ptr_, error))
    return false;
  bytes_ = bytes;
  return true;
}

bool DeviceBuffer::upload(const void *src, size_t bytes, std::string &error) {
  if (bytes > bytes_) {
    error = fmt::format("upload of {} bytes into a device buffer of {}", bytes, bytes_);
    return false;
  }
  CudaDriver *driver = CudaDriver::get(error);
  return driver && driver->copyToDevice(ptr_, src, bytes, error);
}

bool DeviceBuffer::download(void *dst, size_t bytes, std::string &error) const {
  if (bytes > bytes_) {
    error = fmt::format("download of {} bytes from a device buffer of {}", bytes, bytes_);
    return false;
  }
  CudaDriver *driver = CudaDriver::get(error);
  return driver && driver->copyToHost(dst, ptr_, bytes, error);
}

} // namespace tk
