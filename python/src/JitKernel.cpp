#include "JitKernel.h"

#include "LaunchCheck.h"
#include "analysis/StoredArguments.h"
#include "ir/IRPrinter.h"
#include "lang/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>

namespace tk {
namespace {

CacheKey gpuKey(const JitRequest &req, const CompileOptions &options) {
  CacheKeyBuilder b;
  b.add("python-jit-v7").add(compilerVersion()).add(options.keyText());
  // A chosen libdevice file is part of the key by its contents too (as
  // Triton hashes extern_libs), so a file replaced in place recompiles.
  if (!options.libdevicePath.empty()) {
    std::ifstream in(options.libdevicePath, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    b.add(bytes);
  }
  b.add(int64_t(req.sources.size()));
  for (const JitSource &src : req.sources)
    b.add(src.fileName).add(src.text).add(int64_t(src.firstLine));
  b.add(req.kernel).add(req.signature);
  b.add(int64_t(req.constants.size()));
  for (const auto &[name, value] : req.constants)
    b.add(name).add(int64_t(value.kind)).add(value.str());
  for (const auto *list : {&req.externalGlobals, &req.moduleAliases, &req.doNotSpecialize}) {
    b.add(int64_t(list->size()));
    for (const std::string &x : *list)
      b.add(x);
  }
  b.add(int64_t(req.userModules.size()));
  for (const auto &[module, members] : req.userModules) {
    b.add(module).add(int64_t(members.size()));
    for (const auto &[attr, fn] : members)
      b.add(attr).add(fn);
  }
  return b.add(int64_t(req.numWarps)).add(int64_t(req.numStages)).add(req.arch).key();
}

// cuLaunchKernel's parameters: one packed buffer through `extra` unless a
// benchmark asks for the pointer array (setPackedLaunches). From C++
// the two cost the same; from Python the packed buffer had the lower median
// in three of four H200 runs (4.45 / 4.41 / 4.62 / 5.64 us against 5.08 /
// 4.58 / 5.90 / 5.11 us: bench/results/notes/launch.md),
// differences that are within the host's noise but lean one way.
constexpr bool kPackedByDefault = true;

// What a launch needs from a GPU compile, as a cache payload.
std::string serialize(const JitKernel &k) {
  ByteWriter w;
  w.str(k.name());
  w.str(k.ir());
  w.str(k.irOpt());
  w.str(k.ptx());
  w.u32(uint32_t(k.numWarps()));
  w.u32(k.dynamicShared());
  w.u32(uint32_t(k.argumentNames().size()));
  for (size_t i = 0; i < k.argumentNames().size(); ++i) {
    w.str(k.argumentNames()[i]);
    w.str(k.argumentTypes()[i]);
    w.u32(uint32_t(k.layout().kinds[i]));
    w.u32(k.storedArguments()[i] ? 1 : 0);
  }
  w.str(k.codeObject());
  return std::move(w.bytes());
}

} // namespace

JitKernel::~JitKernel() {
  // In the context current on this thread (device 0's primary context, the
  // one tk loads into and torch and CuPy share); the current context is not
  // switched from a destructor. A failed unload (no context on this thread,
  // a context already destroyed at exit) leaves the module to the context.
  if (cuModule_ && driver_)
    driver_->api().cuModuleUnload(cuModule_);
  std::string ignored;
  if (hipModule_ && hip_)
    hip_->unloadModule(hipModule_, ignored);
}

std::unique_ptr<JitKernel> JitKernel::compile(const JitRequest &req, std::string &errors,
                                              bool useCache) {
  // The compiler's options, the code knobs (TK_LLVM_OPT, TK_WGMMA_*, ...)
  // included: the cache key covers every one of them.
  CompileOptions options;
  options.arch = req.arch;
  options.numWarps = req.numWarps;
  options.numStages = req.numStages;
  // The interpreter's compile reads only the budgets: the code knobs are
  // the GPU's.
  if (req.gpu ? !options.readKnobs(errors) : !options.limits.readKnobs(errors))
    return nullptr;
  if (!req.libdevicePath.empty())
    options.libdevicePath = req.libdevicePath;
  options.fpFusion = req.fpFusion;
  options.reflectFtz = req.reflectFtz;
  std::unique_ptr<JitKernel> k(new JitKernel);
  k->name_ = req.kernel;
  if (req.gpu) {
    k->cacheKey_ = gpuKey(req, options);
    std::string payload;
    if (useCache && !req.remarks &&
        CompileCache::process().lookup(k->cacheKey_, CacheKind::Kernel, payload) &&
        k->readPayload(payload, req.arch)) {
      k->request_ = std::make_unique<JitRequest>(req);
      k->gpu_ = true;
      k->arch_ = req.arch;
      k->ptxFromCache_ = true;
      return k;
    }
    k = std::unique_ptr<JitKernel>(new JitKernel);
    k->name_ = req.kernel;
    k->cacheKey_ = gpuKey(req, options);
  }
  // The compile, stage by stage (compiler/Compiler.h): TK_DUMP_IR and
  // TK_TIME_PASSES text is kept for the Python side to write to stderr
  // (library code does not print).
  JitKernel *raw = k.get();
  CompileHooks hooks =
      CompileHooks::fromKnobs([raw](std::string_view text) { raw->passLog_ += text; });
  hooks.interrupted = req.interrupted;
  hooks.remarks = req.remarks;
  k->hasRemarks_ = req.remarks;
  k->comp_ = std::make_unique<Compilation>(options, std::move(hooks));
  Compilation &c = *k->comp_;
  std::vector<SourceText> texts;
  for (const JitSource &src : req.sources)
    texts.push_back({src.fileName, src.text, src.firstLine});
  CheckOptions check;
  check.externalGlobals = req.externalGlobals;
  check.externalModuleAliases = req.moduleAliases;
  check.externalUserModules = req.userModules;
  if (!c.parse(texts, check)) {
    errors = c.diag().renderAll();
    return nullptr;
  }
  if (!c.ast()->findFunction(req.kernel)) {
    errors =
        fmt::format("error: no @tk.jit function named '{}' in the sources given\n", req.kernel);
    return nullptr;
  }
  KernelSpec spec;
  spec.kernel = req.kernel;
  spec.signature = req.signature;
  spec.constants = req.constants;
  spec.doNotSpecialize = req.doNotSpecialize;
  if (!c.lowerToIR(std::span(&spec, 1))) {
    errors = c.diag().renderAll();
    return nullptr;
  }
  for (const KernelParam &p : c.kernelParams(req.kernel))
    k->argumentNames_.push_back(p.name);
  k->ir_ = printModule(c.module());
  k->gpu_ = req.gpu;
  k->numWarps_ = req.numWarps;
  k->arch_ = req.arch;
  if (!(req.gpu ? c.runGpuPasses() : c.runBlockPasses())) {
    errors = c.diag().renderAll();
    return nullptr;
  }
  k->irOpt_ = printModule(c.module());
  k->fn_ = c.module().lookup(req.kernel);
  if (!k->fn_) {
    errors = fmt::format("error: the pipeline removed kernel '{}'\n", req.kernel);
    return nullptr;
  }
  for (Operation *store : tk::storedArguments(c.module(), *k->fn_))
    k->storedArguments_.push_back(store != nullptr);
  if (req.gpu) {
    // For an AMD GPU arch: the AMDGPU assembly, then the code object the
    // HIP runtime loads (a second trip through the back end).
    std::string ptx;
    if (!c.emitPTX(ptx) || (isAMDGPUArch(req.arch) && !c.emitCodeObject(k->codeObject_))) {
      errors = c.diag().renderAll();
      return nullptr;
    }
    CompiledKernel compiled = c.compiled(req.kernel, std::move(ptx));
    k->ptx_ = std::move(compiled.ptx);
    k->remarksCubin_ = std::move(compiled.cubin);
    k->remarks_ = std::move(compiled.remarks);
    k->numWarps_ = compiled.numWarps;
    if (compiled.dynamicShared)
      k->dynamicShared_ = unsigned(compiled.sharedBytes);
    std::vector<SlotKind> kinds;
    for (const KernelParam &p : compiled.params) {
      std::optional<SlotKind> slot = slotKindOf(p);
      if (!slot) {
        errors = fmt::format("error: argument '{}' of {}: a runtime parameter of type {} cannot "
                             "be passed to a GPU launch; make it a tk.constexpr\n",
                             p.name, req.kernel, p.typeName);
        return nullptr;
      }
      k->argumentTypes_.push_back(p.typeName);
      kinds.push_back(*slot);
    }
    if (!k->setLayout(kinds, errors))
      return nullptr;
    CompileCache::process().store(k->cacheKey_, CacheKind::Kernel, serialize(*k));
  }
  if (!req.gpu) // the GPU's are the compiled kernel's, above
    k->remarks_ = c.kernelRemarks(req.kernel);
  return k;
}

bool JitKernel::setLayout(std::span<const SlotKind> kinds, std::string &errors) {
  if (!isAMDGPUArch(arch_)) {
    layout_ = paramLayout(kinds);
    return true;
  }
  // amdgcn: the code object's metadata lays out the arguments (checked
  // against the parameters) and gives the workgroup size.
  AmdgpuLaunch launch;
  if (!amdgpuLaunchInfo(codeObject_, name_, kinds, launch, errors))
    return false;
  layout_ = std::move(launch.layout);
  block_ = launch.block;
  return true;
}

bool JitKernel::readPayload(const std::string &payload, const std::string &arch) {
  ByteReader r(payload);
  name_ = r.str();
  ir_ = r.str();
  irOpt_ = r.str();
  ptx_ = r.str();
  numWarps_ = int(r.u32());
  dynamicShared_ = r.u32();
  uint32_t n = r.u32();
  std::vector<SlotKind> kinds;
  for (uint32_t i = 0; r.ok() && i < n; ++i) {
    argumentNames_.push_back(r.str());
    argumentTypes_.push_back(r.str());
    uint32_t kind = r.u32();
    uint32_t stored = r.u32();
    if (kind > uint32_t(SlotKind::F64) || stored > 1)
      return false;
    kinds.push_back(SlotKind(kind));
    storedArguments_.push_back(stored == 1);
  }
  codeObject_ = r.str();
  arch_ = arch;
  std::string ignored;
  return r.done() && setLayout(kinds, ignored);
}

bool JitKernel::llvmIR(std::string &out, std::string &errors) {
  if (!gpu_) {
    errors = "error: LLVM IR exists only for GPU compiles";
    return false;
  }
  if (llvm_.empty() && !comp_) {
    std::unique_ptr<JitKernel> fresh = compile(*request_, errors, /*useCache=*/false);
    if (!fresh || !fresh->llvmIR(llvm_, errors))
      return false;
  }
  if (llvm_.empty() && !comp_->emitLLVM(llvm_)) {
    errors = comp_->diag().renderAll();
    return false;
  }
  out = llvm_;
  return true;
}

bool JitKernel::load(std::string &errors) {
  if (loaded())
    return true;
  failure_ = GpuFailure();
  if (!gpu_) {
    errors = "error: only a kernel compiled for the GPU can be loaded";
    return false;
  }
  if (isAmdgpu())
    return loadHip(errors);
  CudaDriver *driver = CudaDriver::get(errors);
  if (!driver || !driver->makeCurrent(errors))
    return false;
  // PTX -> cubin exactly as GpuKernel does it (driver/GpuKernel.h): the
  // cubin cached per driver version, device, JIT level and requested
  // compiler, TK_PTX_COMPILER honoured (nvjitlink or ptxas first, the
  // driver's JIT as the fallback); the module is loaded from the cubin
  // either way.
  CubinLoad loaded;
  if (!loadThroughCubinCache(*driver, CompileCache::process(), cacheKey_, ptx_, JitOptions(),
                             loaded, errors, remarksCubin_))
    return false;
  cubinFromCache_ = loaded.fromCache;
  ptxCompiler_ = loaded.fromCache ? "" : loaded.compiler;
  CUmodule module = loaded.module;
  CUfunction function = nullptr;
  if (!driver->getFunction(module, name_, function, errors) ||
      !driver->queryResources(function, resources_, errors)) {
    driver->api().cuModuleUnload(module);
    return false;
  }
  GpuKernelInfo info;
  setLoadedInfo(info, resources_, numWarps_, numWarps_ * 32, int(dynamicShared_));
  // Above the default 48 KiB a kernel opts in to its dynamic shared memory.
  if (!checkKernelResources(name_, info, driver->limits(), errors, failure_) ||
      (info.staticSharedBytes + info.dynamicSharedBytes > driver->limits().maxSharedPerBlock &&
       !driver->setMaxDynamicShared(function, info.dynamicSharedBytes, errors))) {
    driver->api().cuModuleUnload(module);
    return false;
  }
  driver_ = driver;
  cuModule_ = module;
  function_ = function;
  remarksCubin_ = {}; // loaded: the module holds the code now
  return true;
}

bool JitKernel::loadHip(std::string &errors) {
  HipDriver *hip = HipDriver::get(errors);
  if (!hip || !hip->makeCurrent(errors))
    return false;
  hipModule_t module = nullptr;
  hipFunction_t function = nullptr;
  if (!hip->loadModule(codeObject_, module, errors))
    return false;
  KernelResources resources;
  std::string ignored;
  if (!hip->getFunction(module, name_, function, errors) ||
      !hip->queryResources(function, resources, errors)) {
    hip->unloadModule(module, ignored);
    return false;
  }
  GpuKernelInfo info;
  setLoadedInfo(info, resources, numWarps_, int(block_[0] * block_[1] * block_[2]), 0);
  if (!checkKernelResources(name_, info, hip->limits(), errors, failure_)) {
    hip->unloadModule(module, ignored);
    return false;
  }
  resources_ = resources;
  hip_ = hip;
  hipModule_ = module;
  hipFunction_ = function;
  return true;
}

bool JitKernel::launch(const std::array<unsigned, 3> &grid, void **slots, CUstream stream,
                       std::string &errors) const {
  return launchWith(grid, slots, nullptr, stream, errors);
}

bool JitKernel::launchPacked(const std::array<unsigned, 3> &grid, void *params, CUstream stream,
                             std::string &errors) const {
  if (hipFunction_) {
    // The buffer holds each explicit argument at its `.args` offset
    // (layout_ came from the code object); HIP copies them from there.
    if (hip_->launchPacked(hipFunction_, grid, block_, 0, reinterpret_cast<hipStream_t>(stream),
                           params, layout_.bytes, errors))
      return true;
    return hipLaunchFailed(grid, errors);
  }
  // cuda.h's CU_LAUNCH_PARAM_BUFFER_POINTER (1), _SIZE (2) and _END (0).
  size_t bytes = layout_.bytes;
  void *extra[] = {reinterpret_cast<void *>(uintptr_t(1)), params,
                   reinterpret_cast<void *>(uintptr_t(2)), &bytes, nullptr};
  return launchWith(grid, nullptr, extra, stream, errors);
}

bool JitKernel::launchWith(const std::array<unsigned, 3> &grid, void **params, void **extra,
                           CUstream stream, std::string &errors) const {
  if (hipFunction_) {
    // HIP reads each explicit argument's `.size` bytes through its pointer.
    if (hip_->launch(hipFunction_, grid, block_, 0, reinterpret_cast<hipStream_t>(stream), params,
                     errors))
      return true;
    return hipLaunchFailed(grid, errors);
  }
  assert(function_ && "launch after load()");
  constexpr unsigned kWarpSize = 32;
  unsigned threads = unsigned(numWarps_) * kWarpSize;
  CUresult r = driver_->api().cuLaunchKernel(function_, grid[0], grid[1], grid[2], threads, 1, 1,
                                             dynamicShared_, stream, params, extra);
  if (r == 0)
    return true;
  errors = fmt::format("launch of '{}' on grid ({}, {}, {}) with {} threads per program failed: {}",
                       name_, grid[0], grid[1], grid[2], threads, driver_->errorText(r));
  return false;
}

bool JitKernel::hipLaunchFailed(const std::array<unsigned, 3> &grid, std::string &errors) const {
  errors = fmt::format("launch of '{}' on grid ({}, {}, {}) with {} threads per program failed: {}",
                       name_, grid[0], grid[1], grid[2], block_[0] * block_[1] * block_[2], errors);
  return false;
}

bool &JitKernel::packedFlag() {
  // Written only by setPackedLaunches, which Python calls holding the GIL,
  // as every launch does.
  static bool packed = kPackedByDefault;
  return packed;
}

RunResult JitKernel::run(const std::vector<JitArg> &args, const InterpretOptions &runOptions,
                         std::string &printed, std::string &errors) {
  return runOn(args, runOptions, printed, errors, nullptr);
}

RunResult JitKernel::check(const std::vector<JitArg> &args, const std::vector<uint64_t> &gpuAfter,
                           const InterpretOptions &runOptions, std::string &printed,
                           std::string &report) {
  const auto &g = runOptions.grid;
  InterpretOptions options = runOptions;
  const int64_t numPrograms = g[0] * g[1] * g[2];
  options.programs = samplePrograms(numPrograms);
  std::vector<StoreRecord> log;
  options.storeLog = &log;
  std::optional<CheckReport> found;
  auto compare = [&](const std::vector<HostBuffer> &buffers, const std::vector<size_t> &bufferOf) {
    // One entry per buffer, named after its first argument; the GPU's copy
    // is any of its arguments' (an array passed twice is one buffer, and
    // only the argument stored through was copied back).
    std::vector<CheckBuffer> check;
    std::vector<int> entry(buffers.size(), -1);
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].kind != JitArg::Kind::Pointer)
        continue;
      const std::byte *gpu =
          i < gpuAfter.size() ? reinterpret_cast<const std::byte *>(gpuAfter[i]) : nullptr;
      int &e = entry[bufferOf[i]];
      if (e < 0) {
        e = int(check.size());
        check.push_back({&buffers[bufferOf[i]], gpu, args[i].name, args[i].offset});
      } else if (!check[size_t(e)].gpu) {
        check[size_t(e)].gpu = gpu;
      }
    }
    found = compareStores(log, check, int64_t(options.programs.size()) == numPrograms, name_);
  };
  RunResult result = runOn(args, options, printed, report, compare);
  if (result != RunResult::Ok || !found)
    return result;
  if (found->mismatch) {
    DiagnosticEngine diag(comp_->sources());
    Diagnostic &d = diag.error(found->loc, found->message);
    d.notes.push_back(
        {SourceLoc(), fmt::format("{} of the launch's {} programs ran on the interpreter, on "
                                  "copies of its inputs; {} elements compared before this one",
                                  options.programs.size(), numPrograms, found->compared - 1)});
    report = diag.renderAll();
    return RunResult::Mismatch;
  }
  report = fmt::format("TK_CHECK: '{}': {} of {} programs, {} stored elements as on the GPU{}",
                       name_, options.programs.size(), numPrograms, found->compared,
                       found->skippedAtomics
                           ? fmt::format(" ({} written by atomics not compared: not every "
                                         "program ran)",
                                         found->skippedAtomics)
                           : "");
  return RunResult::Ok;
}

RunResult JitKernel::runOn(const std::vector<JitArg> &args, const InterpretOptions &runOptions,
                           std::string &printed, std::string &errors,
                           const BufferInspector &inspect) {
  if (gpu_) {
    errors = "error: a kernel compiled for the GPU cannot run on the interpreter";
    return RunResult::Failed;
  }
  DiagnosticEngine diag(comp_->sources());
  // A read-only array the kernel may store through is refused before
  // anything runs, so none of the caller's memory is written.
  std::vector<Operation *> stores = tk::storedArguments(comp_->module(), *fn_);
  for (size_t i = 0; i < args.size() && i < stores.size(); ++i)
    if (args[i].kind == JitArg::Kind::Pointer && args[i].readOnly && stores[i]) {
      diag.error(stores[i]->loc(),
                 fmt::format("argument '{}' is a read-only array (not writeable), and '{}' may "
                             "store to it here; pass a writeable array (a copy: numpy.array(x))",
                             args[i].name, name_));
      errors = diag.renderAll();
      return RunResult::BadArgument;
    }
  // One HostBuffer per distinct memory range: an array passed twice (in-place
  // kernels) is one buffer, so its two pointers see each other's stores. It
  // is read-only when every argument for it is.
  std::vector<HostBuffer> buffers;
  std::map<std::pair<uint64_t, uint64_t>, size_t> bufferOf;
  buffers.reserve(args.size());
  for (const JitArg &a : args) {
    if (a.kind != JitArg::Kind::Pointer)
      continue;
    auto key = std::make_pair(a.base, a.bytes);
    if (auto it = bufferOf.find(key); it != bufferOf.end()) {
      if (!a.readOnly)
        buffers[it->second].setReadOnly(false);
      continue;
    }
    bufferOf[key] = buffers.size();
    buffers.push_back(HostBuffer::wrap(a.name, reinterpret_cast<void *>(a.base),
                                       static_cast<size_t>(a.bytes), a.dtype));
    buffers.back().setReadOnly(a.readOnly);
  }
  std::vector<InterpArg> interpArgs;
  std::vector<size_t> bufferOfArg(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const JitArg &a = args[i];
    switch (a.kind) {
    case JitArg::Kind::Pointer:
      bufferOfArg[i] = bufferOf[{a.base, a.bytes}];
      interpArgs.push_back(InterpArg::pointer(buffers[bufferOfArg[i]], a.offset));
      break;
    case JitArg::Kind::Int:
      interpArgs.push_back(InterpArg::integer(a.intValue));
      break;
    case JitArg::Kind::Float:
      interpArgs.push_back(InterpArg::real(a.floatValue));
      break;
    }
  }
  InterpretOptions options = runOptions;
  options.numThreads = std::max(1u, options.numThreads);
  options.printOutput = &printed;
  InterpretStats stats;
  if (interpret(comp_->module(), *fn_, interpArgs, options, diag, &stats)) {
    if (inspect)
      inspect(buffers, bufferOfArg);
    return RunResult::Ok;
  }
  errors = diag.renderAll();
  return stats.readOnlyStore ? RunResult::BadArgument : RunResult::Failed;
}

} // namespace tk
