#include "runtime/GpuKernel.h"

#include "compiler/Compiler.h"
#include "compiler/LaunchArgs.h"
#include "driver/CodeObject.h"
#include "driver/NvJitLink.h"
#include "driver/Ptxas.h"
#include "support/FileIO.h"
#include "support/Knobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace tk {

// The table of live kernels (see GpuKernel.h, "Ownership"): weak
// references, plus a strong one for each kernel compile() pinned.
class GpuKernelCache {
public:
  static std::shared_ptr<GpuKernel> getOrCompile(const std::string &source,
                                                 const std::string &fileName,
                                                 const GpuCompileOptions &opts, bool pin,
                                                 std::string &error, GpuFailure &failure);
  /// getOrCompile() for the public entry points: `failure` optional, reset
  /// first.
  static std::shared_ptr<GpuKernel> get(const std::string &source, const std::string &fileName,
                                        const GpuCompileOptions &opts, bool pin, std::string &error,
                                        GpuFailure *failure) {
    GpuFailure local;
    GpuFailure &f = failure ? *failure : local;
    f = GpuFailure();
    return getOrCompile(source, fileName, opts, pin, error, f);
  }

private:
  // The two loads of a compiled kernel `c` into `k`: PTX -> cubin -> CUDA
  // module, or code object -> HIP module. False with `error` and `failure`.
  static bool loadCuda(GpuKernel &k, CudaDriver &driver, CompiledPTX &c, const CacheKey &key,
                       const JitOptions &jit, std::string &error, GpuFailure &failure);
  static bool loadHip(GpuKernel &k, HipDriver &hip, CompiledPTX &c, std::string &error,
                      GpuFailure &failure);
};

namespace {

// The most runtime parameters a kernel may have; launch() builds the
// driver's parameter array on the stack with this many slots.
constexpr size_t kMaxParams = 256;
constexpr unsigned kWarpSize = 32;

// How a runtime parameter is passed at launch: its slot (compiler/
// LaunchArgs.h), whose kinds are GpuArg's.
GpuParam describeParam(const KernelParam &param) {
  GpuParam p;
  p.name = param.name;
  p.typeName = param.typeName;
  std::optional<SlotKind> slot = slotKindOf(param);
  // A CUtensorMap (a `tma` descriptor) is passed by Python's launch only.
  p.supported = slot.has_value() && *slot != SlotKind::TensorMap;
  if (!p.supported)
    slot.reset();
  p.kind = GpuArg::Kind(slot.value_or(SlotKind::Pointer));
  return p;
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The version of the kernel payload's layout (inside the cache entry).
constexpr uint32_t kPayloadVersion = 2;

} // namespace

CacheKey gpuCompileKey(const std::string &source, const std::string &fileName,
                       const GpuCompileOptions &opts) {
  // A knob that does not parse fails the compile itself; the key is the
  // defaults' then.
  CompileOptions options = toCompileOptions(opts);
  std::string ignored;
  options.readKnobs(ignored);
  return gpuCompileKey(source, fileName, opts, options);
}

CacheKey gpuCompileKey(const std::string &source, const std::string &fileName,
                       const GpuCompileOptions &opts, const CompileOptions &options) {
  // Fields in a fixed order, each length-prefixed by the builder; the
  // constants map is ordered, so the key is deterministic.
  CacheKeyBuilder b;
  b.add("tk-gpu-kernel").add(compilerVersion()).add(source).add(fileName).add(opts.kernel);
  b.add(opts.signature);
  b.add(int64_t(opts.constants.size()));
  for (const auto &[name, value] : opts.constants)
    b.add(name).add(int64_t(value.kind)).add(value.str());
  // Every option that changes the code (warps, stages, arch, debug, and the
  // knobs: TK_LLVM_OPT, TK_WGMMA_*, TK_LIBDEVICE_PATH), as the compiler
  // sees them.
  b.add(options.keyText());
  b.add(int64_t(opts.keyExtras.size()));
  for (const std::string &extra : opts.keyExtras)
    b.add(extra);
  return b.key();
}

std::string serializeCompiledPTX(const CompiledPTX &c) {
  ByteWriter w;
  w.u32(kPayloadVersion);
  w.str(c.name);
  w.str(c.ptx);
  w.u32(uint32_t(c.numWarps));
  w.u32(uint32_t(c.sharedBytes));
  w.u32(c.dynamicShared ? 1 : 0);
  w.u32(uint32_t(c.params.size()));
  for (const GpuParam &p : c.params) {
    w.str(p.name);
    w.u32(uint32_t(p.kind));
    w.u32(p.supported ? 1 : 0);
    w.str(p.typeName);
  }
  w.str(c.codeObject);
  return std::move(w.bytes());
}

bool parseCompiledPTX(std::string_view payload, CompiledPTX &c) {
  ByteReader r(payload);
  if (r.u32() != kPayloadVersion)
    return false;
  c.name = r.str();
  c.ptx = r.str();
  c.numWarps = int(r.u32());
  c.sharedBytes = int(r.u32());
  c.dynamicShared = r.u32() != 0;
  uint32_t n = r.u32();
  c.params.clear();
  // Each parameter takes at least 24 bytes: a bound on n before reserving.
  if (!r.ok() || n > payload.size() / 24)
    return false;
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    GpuParam p;
    p.name = r.str();
    uint32_t kind = r.u32();
    if (kind > uint32_t(GpuArg::Kind::F64))
      return false;
    p.kind = GpuArg::Kind(kind);
    p.supported = r.u32() != 0;
    p.typeName = r.str();
    c.params.push_back(std::move(p));
  }
  c.codeObject = r.str();
  return r.done() && c.numWarps > 0 && !c.ptx.empty();
}

const char *gpuArgKindName(GpuArg::Kind kind) { return slotKindName(SlotKind(kind)); }

bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, std::string &ptx, std::vector<GpuParam> &params,
                  int &numWarps, std::string &error) {
  CompiledPTX c;
  if (!compileToPTX(source, fileName, opts, c, error))
    return false;
  ptx = std::move(c.ptx);
  params = std::move(c.params);
  numWarps = c.numWarps;
  return true;
}

CompileOptions toCompileOptions(const GpuCompileOptions &opts) {
  CompileOptions c;
  c.arch = opts.arch;
  c.numWarps = opts.numWarps;
  c.numStages = opts.numStages;
  c.debug = opts.debug;
  c.fpFusion = opts.fpFusion;
  c.reflectFtz = opts.reflectFtz;
  return c;
}

bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, CompiledPTX &out, std::string &error) {
  CompileOptions options = toCompileOptions(opts);
  if (!options.readKnobs(error))
    return false;
  return compileToPTX(source, fileName, opts, options, out, error);
}

bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, const CompileOptions &options, CompiledPTX &out,
                  std::string &error) {
  // Each compile has its own source manager and diagnostics: the caller gets
  // them rendered (file:line:col, source line, caret), which is all a host
  // program can do with them. TK_DUMP_IR and TK_TIME_PASSES write to stderr:
  // a user who sets them asked for exactly that.
  KernelSpec spec{opts.kernel, opts.signature, opts.constants, {}};
  CompileHooks hooks = CompileHooks::fromKnobs();
  hooks.remarks = hooks.remarks || opts.remarks;
  if (hooks.active())
    hooks.sink = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stderr); };
  CompiledKernel compiled;
  if (!compileKernel({fileName, source, 1}, spec, options, hooks, compiled, error))
    return false;
  out.name = compiled.name;
  out.ptx = std::move(compiled.ptx);
  out.numWarps = compiled.numWarps;
  out.sharedBytes = int(compiled.sharedBytes);
  out.dynamicShared = compiled.dynamicShared;
  out.remarks = std::move(compiled.remarks);
  out.cubin = std::move(compiled.cubin);
  out.codeObject = std::move(compiled.codeObject);
  out.params.clear();
  for (const KernelParam &p : compiled.params)
    out.params.push_back(describeParam(p));
  return true;
}

void setLoadedInfo(GpuKernelInfo &info, const KernelResources &resources, int numWarps,
                   int threadsPerProgram, int dynamicSharedBytes) {
  info.registers = resources.registers;
  info.localBytes = resources.localBytes;
  info.staticSharedBytes = resources.staticSharedBytes;
  info.dynamicSharedBytes = dynamicSharedBytes;
  info.maxThreadsPerBlock = resources.maxThreadsPerBlock;
  info.numWarps = numWarps;
  info.threadsPerProgram = threadsPerProgram;
}

bool checkKernelResources(const std::string &kernel, const GpuKernelInfo &info,
                          const DeviceLimits &limits, std::string &error, GpuFailure &failure) {
  int64_t threads =
      info.threadsPerProgram > 0 ? info.threadsPerProgram : int64_t(info.numWarps) * kWarpSize;
  int64_t threadLimit = std::min(info.maxThreadsPerBlock, limits.maxThreadsPerBlock);
  struct Use {
    const char *resource;
    int64_t needed, limit;
    const char *unit;
  } uses[] = {
      {"shared memory", int64_t(info.staticSharedBytes) + info.dynamicSharedBytes,
       limits.maxSharedPerBlockOptin, "bytes per program"},
      {"registers", int64_t(info.registers) * threads, limits.maxRegistersPerBlock,
       "registers per program"},
      {"threads", threads, threadLimit, "threads per program"},
  };
  for (const Use &u : uses)
    if (u.limit > 0 && u.needed > u.limit) {
      failure.kind = GpuFailure::Kind::OutOfResources;
      failure.resource = u.resource;
      failure.needed = u.needed;
      failure.limit = u.limit;
      error = fmt::format("kernel '{}' is out of resources: {}: needs {} {}, the device allows {}",
                          kernel, u.resource, u.needed, u.unit, u.limit);
      if (u.resource == std::string("registers"))
        error += fmt::format(" ({} registers per thread x {} threads; fewer warps or a smaller "
                             "block use fewer)",
                             info.registers, threads);
      return false;
    }
  return true;
}

namespace {

// Every PTX compiler GpuKernel knows. The default puts the toolkit's ptxas
// first and the driver's JIT after it: Triton assembles with ptxas, and on
// the same PTX the driver's built-in assembler (driver 580, any JIT level)
// gives memory-bound kernels more registers than ptxas 13.0 and fewer
// programs per SM: the plain LayerNorm forward at 16384 columns 160
// registers against 127 and 0.78 of Triton against 1.00, RMSNorm forward
// 39 against 32 and 0.90 against 1.00 (H100, bench/results/notes/
// ptx-compiler.md). nvJitLink is the driver's assembler again, after a
// 6-136 ms dlopen (bench/results/notes/compile-time.md, "2026-11-30 00:57").
constexpr const char *kPtxCompilers[] = {"driver", "nvjitlink", "ptxas"};

bool isPtxCompiler(const std::string &name) {
  return std::find(std::begin(kPtxCompilers), std::end(kPtxCompilers), name) !=
         std::end(kPtxCompilers);
}

// The forced compiler: jit.compiler, else TK_PTX_COMPILER, else "".
std::string requestedCompiler(const JitOptions &jit) {
  if (!jit.compiler.empty())
    return jit.compiler;
  // Checked against the compilers below, with a note for an unknown one.
  return readRaw(Knob::PtxCompiler).value_or("");
}

// sm_<cc>, plus `a` when the PTX asks for the arch-specific features of
// exactly this device (".target sm_90a"). A cubin is only good for its own
// major version, so the PTX's target never replaces the device's.
std::string cubinArch(const std::string &ptx, int computeCapability) {
  std::string arch = fmt::format("sm_{}", computeCapability);
  size_t at = ptx.find(".target ");
  if (at != std::string::npos && ptx.compare(at + 8, arch.size() + 1, arch + "a") == 0)
    arch += 'a';
  return arch;
}

} // namespace

std::vector<std::string> ptxCompilerOrder(const JitOptions &jit, std::string &note) {
  std::string forced = requestedCompiler(jit);
  if (forced.empty())
    forced = std::string(knobInfo(Knob::PtxCompiler).defaultValue);
  if (!isPtxCompiler(forced)) {
    note = fmt::format("unknown PTX compiler '{}' (TK_PTX_COMPILER: driver, nvjitlink or ptxas)",
                       forced);
    return {"driver"};
  }
  if (forced == "driver")
    return {"driver"};
  return {forced, "driver"};
}

namespace {

// The compiler a load tries first: part of the loaded kernels' key (and of
// the cubin's, in loadThroughCubinCache), so that a kernel made by one
// assembler is not served when another is asked for.
std::string firstPtxCompiler(const JitOptions &jit) {
  std::string note;
  return ptxCompilerOrder(jit, note).front();
}

} // namespace

bool ptxToCubinWith(const std::string &compiler, CudaDriver &driver, const std::string &ptx,
                    const JitOptions &jit, std::string &cubin, std::string &error) {
  if (compiler == "driver")
    return driver.linkToCubin(ptx, cubin, error, jit);
  std::string arch = cubinArch(ptx, driver.computeCapability());
  if (compiler == "nvjitlink")
    return linkWithNvJitLink(ptx, arch, jitLevel(jit), cubin, error);
  if (compiler == "ptxas")
    return assembleWithPtxas(ptx, arch, cubin, error, jitLevel(jit));
  error = fmt::format("unknown PTX compiler '{}'", compiler);
  return false;
}

bool requestJitLevel(JitOptions &jit, std::string &error) {
  if (jit.optimizationLevel >= 0)
    return true;
  KnobValue<std::string> level = readString(Knob::JitLevel);
  if (!level.ok()) {
    error = level.error;
    return false;
  }
  if (!level.value.empty())
    jit.optimizationLevel = std::stoi(level.value);
  return true;
}

bool loadThroughCubinCache(CudaDriver &driver, CompileCache &cache, const CacheKey &ptxKey,
                           const std::string &ptx, const JitOptions &requested, CubinLoad &out,
                           std::string &error, const std::string &assembled) {
  JitOptions jit = requested;
  if (!requestJitLevel(jit, error))
    return false;
  std::string orderNote;
  std::vector<std::string> order = ptxCompilerOrder(jit, orderNote);
  // PTX -> cubin, cached per driver version, device, optimisation level and
  // the compiler tried first; the module is loaded from the cubin either way
  // (loading a cubin costs a fraction of a millisecond, compiling PTX tens
  // of milliseconds).
  CacheKey cubinKey = CacheKeyBuilder()
                          .add(ptxKey.hex())
                          .add(int64_t(driver.driverVersion()))
                          .add(int64_t(driver.computeCapability()))
                          .add(int64_t(jit.optimizationLevel))
                          .add(order.front())
                          .key();
  out = CubinLoad();
  // A driver older than the toolkit rejects its cubin: then as usual.
  std::string rejected;
  if (!assembled.empty() && driver.loadModule(assembled, out.module, rejected)) {
    out.cubin = assembled;
    out.compiler = "ptxas";
    return true;
  }
  if (cache.lookup(cubinKey, CacheKind::Cubin, out.cubin) &&
      driver.loadModule(out.cubin, out.module, error)) {
    out.fromCache = true;
    return true;
  }
  // No cubin, or one the driver rejects: compile the PTX and replace it. A
  // compiler that fails, or whose cubin the driver will not load (a toolkit
  // newer than the driver), hands over to the next; the driver's JIT is last.
  out.fallback = orderNote;
  for (const std::string &compiler : order) {
    auto t0 = Clock::now();
    std::string failure;
    bool ok = ptxToCubinWith(compiler, driver, ptx, jit, out.cubin, failure);
    double ms = msSince(t0);
    if (ok && !driver.loadModule(out.cubin, out.module, failure)) {
      failure = "the driver rejected its cubin: " + failure;
      ok = false;
    }
    if (ok) {
      out.jitMs = ms;
      out.compiler = compiler;
      cache.store(cubinKey, CacheKind::Cubin, out.cubin);
      return true;
    }
    if (compiler == order.back()) {
      error = failure;
      return false;
    }
    // Only the first line: a full ptxas log would drown the note.
    out.fallback += fmt::format("{}{}: {}", out.fallback.empty() ? "" : "; ", compiler,
                                failure.substr(0, failure.find('\n')));
  }
  return false;
}

bool GpuKernelCache::loadCuda(GpuKernel &k, CudaDriver &driver, CompiledPTX &c, const CacheKey &key,
                              const JitOptions &jit, std::string &error, GpuFailure &failure) {
  auto driverFailure = [&]() {
    failure.kind = GpuFailure::Kind::Driver;
    return false;
  };
  GpuKernelInfo &info = k.info_;
  if (!driver.makeCurrent(error))
    return driverFailure();
  CubinLoad loaded;
  if (!loadThroughCubinCache(driver, CompileCache::process(), key, k.ptx_, jit, loaded, error,
                             c.cubin)) {
    error = fmt::format("kernel '{}': {}", k.name_, error);
    return driverFailure();
  }
  k.module_ = loaded.module;
  k.driver_ = &driver;
  k.api_ = &driver.api();
  k.cubin_ = std::move(loaded.cubin);
  info.fromCubin = loaded.fromCache;
  info.jitMs = loaded.jitMs;
  info.ptxCompiler = loaded.compiler;
  info.ptxCompilerFallback = loaded.fallback;
  if (!driver.getFunction(k.module_, k.name_, k.function_, error) ||
      !driver.queryResources(k.function_, k.resources_, error)) {
    error = fmt::format("kernel '{}': {}", k.name_, error);
    return driverFailure();
  }
  setLoadedInfo(info, k.resources_, k.numWarps_, k.numWarps_ * int(kWarpSize),
                c.dynamicShared ? c.sharedBytes : 0);
  k.block_ = {unsigned(info.threadsPerProgram), 1, 1};
  if (!checkKernelResources(k.name_, info, driver.limits(), error, failure))
    return false;
  // Above the default 48 KiB a kernel must opt in to its dynamic shared
  // memory before the first launch.
  k.dynamicShared_ = unsigned(info.dynamicSharedBytes);
  if (info.staticSharedBytes + info.dynamicSharedBytes > driver.limits().maxSharedPerBlock &&
      !driver.setMaxDynamicShared(k.function_, info.dynamicSharedBytes, error)) {
    error = fmt::format("kernel '{}': {}", k.name_, error);
    return driverFailure();
  }
  return true;
}

bool GpuKernelCache::loadHip(GpuKernel &k, HipDriver &hip, CompiledPTX &c, std::string &error,
                             GpuFailure &failure) {
  auto driverFailure = [&]() {
    failure.kind = GpuFailure::Kind::Driver;
    return false;
  };
  // The code object's metadata is checked against the parameters before
  // anything is loaded: a launch passes exactly what it describes.
  AmdgpuLaunch launch;
  std::vector<SlotKind> kinds;
  for (GpuArg::Kind kind : k.kinds_)
    kinds.push_back(SlotKind(kind));
  if (!amdgpuLaunchInfo(c.codeObject, k.name_, kinds, launch, error)) {
    failure.kind = GpuFailure::Kind::Compile;
    return false;
  }
  GpuKernelInfo &info = k.info_;
  if (!hip.makeCurrent(error))
    return driverFailure();
  hipModule_t module = nullptr;
  if (!hip.loadModule(c.codeObject, module, error)) {
    error = fmt::format("kernel '{}': {}", k.name_, error);
    return driverFailure();
  }
  k.hip_ = &hip; // from here on the kernel unloads the module, on failure too
  k.hipModule_ = module;
  k.codeObject_ = std::move(c.codeObject);
  if (!hip.getFunction(module, k.name_, k.hipFunction_, error) ||
      !hip.queryResources(k.hipFunction_, k.resources_, error)) {
    error = fmt::format("kernel '{}': {}", k.name_, error);
    return driverFailure();
  }
  k.block_ = launch.block;
  // LDS is static on amdgcn: nothing is passed at launch.
  setLoadedInfo(info, k.resources_, k.numWarps_,
                int(launch.block[0] * launch.block[1] * launch.block[2]), 0);
  return checkKernelResources(k.name_, info, hip.limits(), error, failure);
}

std::shared_ptr<GpuKernel> GpuKernelCache::getOrCompile(const std::string &source,
                                                        const std::string &fileName,
                                                        const GpuCompileOptions &opts, bool pin,
                                                        std::string &error, GpuFailure &failure) {
  // One slot per kernel, each with its own lock: two threads asking for the
  // same kernel compile it once, while different kernels (an autotuner's
  // configs, compiled by a thread pool) compile in parallel. A slot holds a
  // weak reference, so the table does not keep a module loaded; a thread
  // holds its slot through a shared_ptr while it uses it, so a slot can
  // leave the table (below) without pulling it from under that thread.
  struct Slot {
    std::mutex mutex;
    std::weak_ptr<GpuKernel> kernel;
    std::shared_ptr<GpuKernel> pinned; // compile()'s kernels: never unloaded
  };
  // Never destroyed: destroying it at exit would unload pinned modules from
  // static destructors, after the driver may have shut down.
  static std::mutex &mutex = *new std::mutex;
  static auto &kernels = *new std::map<CacheKey, std::shared_ptr<Slot>>;
  static size_t sweepAt = 64;

  auto driverFailure = [&]() -> std::shared_ptr<GpuKernel> {
    failure.kind = GpuFailure::Kind::Driver;
    return nullptr;
  };
  // The target picks the runtime: HIP for an AMD GPU arch, else CUDA.
  const bool amdgpu = isAMDGPUArch(opts.arch);
  CudaDriver *driver = nullptr;
  HipDriver *hip = nullptr;
  if (amdgpu ? !(hip = HipDriver::get(error)) : !(driver = CudaDriver::get(error)))
    return driverFailure();
  // The compiler's options, knobs included, are read once: the key and the
  // compile see the same values.
  CompileOptions options = toCompileOptions(opts);
  if (!options.readKnobs(error)) {
    failure.kind = GpuFailure::Kind::Compile;
    return nullptr;
  }
  CacheKey key = gpuCompileKey(source, fileName, opts, options);
  // The loaded kernel also depends on the JIT level and the PTX compiler
  // asked for; the PTX does not.
  JitOptions jit;
  jit.optimizationLevel = opts.jitOptimizationLevel;
  if (!requestJitLevel(jit, error)) {
    failure.kind = GpuFailure::Kind::Compile;
    return nullptr;
  }
  CacheKey loadedKey = CacheKeyBuilder()
                           .add(key.hex())
                           .add(int64_t(jit.optimizationLevel))
                           .add(firstPtxCompiler(jit))
                           .add(int64_t(opts.remarks))
                           .key();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // A process that makes kernels at run time leaves a slot per kernel it
    // dropped: sweep those once the table has doubled since the last sweep
    // (amortised O(1) per request). A slot goes when no thread holds it and
    // its kernel is gone; try_lock takes the slot's lock only if free, so
    // the sweep never waits on a compile.
    if (kernels.size() >= sweepAt) {
      for (auto it = kernels.begin(); it != kernels.end();) {
        std::unique_lock<std::mutex> slotLock(it->second->mutex, std::try_to_lock);
        bool dead = slotLock && it->second.use_count() == 1 && !it->second->pinned &&
                    it->second->kernel.expired();
        slotLock = {};
        it = dead ? kernels.erase(it) : std::next(it);
      }
      sweepAt = std::max<size_t>(64, 2 * kernels.size());
    }
    std::shared_ptr<Slot> &s = kernels[loadedKey];
    if (!s)
      s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (std::shared_ptr<GpuKernel> live = slot->kernel.lock()) {
    if (pin)
      slot->pinned = live;
    return live;
  }

  // The kernel owns its module from the moment it is loaded, so every
  // failure below unloads it.
  std::shared_ptr<GpuKernel> k(new GpuKernel());
  GpuKernelInfo &info = k->info_;
  CompileCache &cache = CompileCache::process();
  CompiledPTX c;
  std::string payload;
  // A cached entry is trusted only when it parses and names this kernel.
  // Remarks are not cached: a compile that asks for them runs.
  if (!opts.remarks && cache.lookup(key, CacheKind::Kernel, payload) &&
      parseCompiledPTX(payload, c) && c.name == opts.kernel) {
    info.origin = GpuKernelOrigin::Cache;
  } else {
    auto t0 = Clock::now();
    if (!compileToPTX(source, fileName, opts, options, c, error)) {
      failure.kind = GpuFailure::Kind::Compile;
      return nullptr;
    }
    info.compileMs = msSince(t0);
    cache.store(key, CacheKind::Kernel, serializeCompiledPTX(c));
  }
  if (c.params.size() > kMaxParams) {
    error = fmt::format("kernel '{}' has {} runtime parameters; launch supports at most {}",
                        opts.kernel, c.params.size(), kMaxParams);
    failure.kind = GpuFailure::Kind::Compile;
    return nullptr;
  }
  k->name_ = opts.kernel;
  k->ptx_ = std::move(c.ptx);
  k->remarks_ = std::move(c.remarks);
  k->params_ = std::move(c.params);
  k->numWarps_ = c.numWarps;
  for (const GpuParam &p : k->params_) {
    k->kinds_.push_back(p.kind);
    k->allSupported_ = k->allSupported_ && p.supported;
  }
  auto t0 = Clock::now();
  if (!(amdgpu ? loadHip(*k, *hip, c, error, failure)
               : loadCuda(*k, *driver, c, key, jit, error, failure)))
    return nullptr;
  info.loadMs = msSince(t0) - info.jitMs; // the JIT is reported on its own
  slot->kernel = k;
  if (pin)
    slot->pinned = k;
  return k;
}

GpuKernel::~GpuKernel() {
  // Nothing to report to: a failed unload (the driver already shut down at
  // exit) leaves the module to the context.
  std::string ignored;
  if (module_ && driver_)
    driver_->unloadModule(module_, ignored);
  if (hipModule_ && hip_)
    hip_->unloadModule(hipModule_, ignored);
}

std::shared_ptr<const GpuKernel> GpuKernel::compileShared(const std::string &source,
                                                          const std::string &fileName,
                                                          const GpuCompileOptions &opts,
                                                          std::string &error, GpuFailure *failure) {
  return GpuKernelCache::get(source, fileName, opts, /*pin=*/false, error, failure);
}

GpuKernel *GpuKernel::compile(const std::string &source, const std::string &fileName,
                              const GpuCompileOptions &opts, std::string &error,
                              GpuFailure *failure) {
  return GpuKernelCache::get(source, fileName, opts, /*pin=*/true, error, failure).get();
}

GpuKernel *GpuKernel::compileFile(const std::string &path, const GpuCompileOptions &opts,
                                  std::string &error, GpuFailure *failure) {
  std::string text;
  if (!readInputFile(path, text, error)) {
    if (failure)
      failure->kind = GpuFailure::Kind::Compile;
    return nullptr;
  }
  return compile(text, path, opts, error, failure);
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
  if (hip_) {
    // HIP reads each explicit argument's bytes through its pointer, as many
    // as the code object's `.args` say (checked against kinds_ at load).
    if (hip_->launch(hipFunction_, grid, block_, 0, reinterpret_cast<hipStream_t>(stream), slots,
                     error))
      return true;
    error = fmt::format("launch of '{}' on grid ({}, {}, {}) with {} threads per program failed: "
                        "{}",
                        name_, grid[0], grid[1], grid[2], block_[0] * block_[1] * block_[2], error);
    return false;
  }
  CUresult r =
      api_->cuLaunchKernel(function_, grid[0], grid[1], grid[2], unsigned(numWarps_) * kWarpSize, 1,
                           1, dynamicShared_, stream, slots, nullptr);
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
                          "pass",
                          name_, i, params_[i].name, params_[i].typeName);
      return false;
    }
  if (args.size() != params_.size()) {
    std::vector<std::string> names;
    for (const GpuParam &p : params_)
      names.push_back(p.name);
    error = argCountError(name_, names, args.size());
    return false;
  }
  // launch() takes each argument in its parameter's own kind (the public
  // API converts first); the wording is LaunchArgs' one.
  for (size_t i = 0; i < params_.size(); ++i)
    if (args[i].kind != params_[i].kind) {
      error = argError(name_, i, params_[i].name, SlotKind(params_[i].kind),
                       toArgValue(args[i].kind, args[i].value));
      return false;
    }
  assert(false && "reportMismatch called without a mismatch");
  return false;
}

//===----------------------------------------------------------------------===//
// amdgcn launches
//===----------------------------------------------------------------------===//

bool amdgpuLaunchInfo(const std::string &codeObject, const std::string &kernel,
                      std::span<const SlotKind> kinds, AmdgpuLaunch &out, std::string &error) {
  out = AmdgpuLaunch();
  CodeObjectInfo info;
  if (!readCodeObject(codeObject, info, error)) {
    error = fmt::format("kernel '{}': {}", kernel, error);
    return false;
  }
  const CodeObjectKernel *k = info.find(kernel);
  if (!k) {
    error = fmt::format("kernel '{}': the code object has no kernel of that name", kernel);
    return false;
  }
  size_t explicitArgs = k->explicitArgs();
  if (explicitArgs != kinds.size()) {
    error = fmt::format("kernel '{}': the code object's metadata has {} explicit arguments but the "
                        "kernel has {} runtime parameters",
                        kernel, explicitArgs, kinds.size());
    return false;
  }
  for (size_t i = explicitArgs; i < k->args.size(); ++i)
    if (!k->args[i].hidden()) {
      error = fmt::format("kernel '{}': the code object's .args[{}] ({}) comes after a hidden "
                          "argument",
                          kernel, i, k->args[i].valueKind);
      return false;
    }
  uint32_t end = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const KernargEntry &a = k->args[i];
    const bool pointer = kinds[i] == SlotKind::Pointer;
    const uint32_t bytes = slotBytes(kinds[i]);
    const char *wantKind = pointer ? "global_buffer" : "by_value";
    if (a.valueKind != wantKind || a.size != bytes || a.offset % bytes != 0 || a.offset < end) {
      error = fmt::format("kernel '{}': argument {} is {} ({} bytes{}) but the code object passes "
                          ".args[{}] as {}, {} bytes at offset {}",
                          kernel, i, slotKindName(kinds[i]), bytes,
                          pointer ? ", a global buffer" : " by value", i, a.valueKind, a.size,
                          a.offset);
      return false;
    }
    out.layout.kinds.push_back(kinds[i]);
    out.layout.offsets.push_back(a.offset);
    end = a.offset + a.size;
  }
  out.layout.bytes = end;
  uint32_t threads = k->workgroupSize();
  if (threads == 0) {
    error = fmt::format("kernel '{}': the code object gives no workgroup size", kernel);
    return false;
  }
  out.block = k->reqdWorkgroupSize[0]
                  ? std::array<unsigned, 3>{k->reqdWorkgroupSize[0], k->reqdWorkgroupSize[1],
                                            k->reqdWorkgroupSize[2]}
                  : std::array<unsigned, 3>{threads, 1, 1};
  out.ldsBytes = k->groupSegmentFixedSize;
  out.scratchBytes = k->privateSegmentFixedSize;
  out.kernargSegmentBytes = k->kernargSegmentSize;
  for (size_t i = explicitArgs; i < k->args.size(); ++i)
    out.hidden.push_back(k->args[i].valueKind);
  return true;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

// DeviceMemory throws tk::Error; the buffer hands its message back.
template <class F> static bool catchError(F &&f, std::string &error) {
  try {
    f();
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

bool DeviceBuffer::allocate(size_t bytes, std::string &error) {
  memory_ = DeviceMemory(); // the old allocation goes first
  return catchError([&] { memory_ = DeviceMemory(bytes); }, error);
}

bool DeviceBuffer::upload(const void *src, size_t bytes, std::string &error) {
  return catchError([&] { memory_.upload(src, bytes); }, error);
}

bool DeviceBuffer::download(void *dst, size_t bytes, std::string &error) const {
  return catchError([&] { memory_.download(dst, bytes); }, error);
}

} // namespace tk
