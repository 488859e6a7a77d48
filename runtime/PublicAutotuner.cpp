// The public tk::Autotuner (include/tk/Autotuner.h) over tune::Tuner: it
// resolves the key and in-place parameters by name, compiles (or loads) one
// kernel per config, checks each config's resources before compiling it for
// the device, benchmarks with events and launches the winner. Everything
// runs on the runtime the kernels are compiled for (GpuKernel.h's target
// seam): HIP's events, streams and memory for an AMD arch, CUDA's
// otherwise; a program's threads are the compiled kernel's (num_warps x 32
// on NVIDIA, the code object's workgroup on AMD), never assumed.
//
// A first tuning compiles every surviving config in parallel (the tuner's
// thread pool calls the resource check and kernelFor() from several
// threads), then benchmarks them one by one. What that touches is safe to
// run concurrently: each compile has its own SourceManager, diagnostics, IR
// and LLVMContext; the NVPTX target registers once (std::call_once); the
// compile cache and GpuKernel's kernel table lock; the driver's calls run
// with the primary context made current on the calling thread; kernels[i]
// is written only by the thread compiling config i.
#include "lowering/codegen/TargetOptions.h"
#include "runtime/Autotuner.h"
#include "runtime/PublicApiImpl.h"
#include "runtime/ResultCheck.h"
#include "support/Knobs.h"
#include "tk/Autotuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace tk {

bool printAutotuningRequested() { return readBool(Knob::PrintAutotuning).value; }

int64_t Config::intValue(const std::string &name) const {
  auto it = meta.find(name);
  if (it == meta.end() || it->second.kind != Constant::Kind::Int)
    throw Error(fmt::format("config {{{}}} has no integer meta-parameter '{}'", str(), name));
  return it->second.intValue;
}

std::string Config::str() const {
  tune::Config c;
  for (const auto &[name, value] : meta)
    c.meta.emplace_back(name, detail::toConstValue(value));
  c.numWarps = numWarps;
  c.numStages = numStages;
  return c.str();
}

namespace detail {

struct AutotunerData {
  std::string kernelName;
  std::string identity;
  // A kernel compiled from source ...
  std::string source, fileName;
  KernelOptions base;
  // ... or ahead-of-time images, one per config.
  std::vector<Kernel::Image> images;

  std::vector<Config> configs;
  AutotuneOptions options;
  // Per specialisation key (include/tk/Kernel.h; images have one key), a
  // kernel per config, loaded on first need. A key's vector is created under
  // `mutex` before the thread pool compiles into it, one slot per thread.
  std::map<Specializer::Key, std::vector<Kernel>> kernels;
  Specializer specializer;
  bool specializes = false;

  // Resolved on first use.
  bool resolved = false;
  std::vector<std::string> paramNames;
  std::vector<std::string> paramTypes; // "*fp32", "i32", ...
  std::vector<size_t> keyIndex, zeroIndex, restoreIndex;
  std::unique_ptr<tune::Tuner> tuner;
  std::optional<tune::Runtime> runtime; // the kernels' target's
  tune::Limits limits;
  std::map<std::vector<int64_t>, size_t> chosen; // key values -> config
  std::mutex mutex;

  // The launch fast path: each tuned key (its values' bits and its
  // specialisation facts) with the winner's kernel, found without `mutex`
  // (LaunchTable) once `ready` says resolve() has set, for good, the fields
  // the lookup reads (paramNames, keyIndex, specializer, specializes).
  struct Tuned {
    uint64_t hash;
    std::vector<int64_t> bits;
    Specializer::Key spec;
    size_t best;
    Kernel kernel;
  };
  LaunchTable<Tuned> tuned;
  std::atomic<bool> ready{false};
  // Key parameters the fast path reads into a stack array; more go the
  // slow way.
  static constexpr size_t kFastKeyParams = 16;

  Status resolve();
  Status keyBits(std::span<const Arg> args, std::vector<int64_t> &bits) const;
  const Tuned *findTuned(std::span<const int64_t> bits, const Specializer::Key &spec) const;
  const Tuned *fastLookup(std::span<const Arg> args) const noexcept;
  Status tunedFor(const GridFn &grid, std::span<const Arg> args, void *stream, const Tuned *&out);
  std::string keyText(std::span<const Arg> args) const;
  GpuCompileOptions optionsFor(size_t index, const Specializer::Key &key) const;
  std::vector<Kernel> &kernelsFor(const Specializer::Key &key);
  Status kernelFor(size_t index, const Specializer::Key &key, Kernel &out);
  Status choose(const GridFn &grid, std::span<const Arg> args, void *stream, size_t &best,
                Specializer::Key &key);
};

namespace {

// A key parameter's value as 64 bits (an integer's value, a float's
// pattern); false for a pointer.
bool keyValue(const Arg &a, int64_t &out) noexcept {
  if (isIntKind(a.kind)) {
    out = intArgValue(a);
    return true;
  }
  if (isFloatKind(a.kind)) {
    double v = floatArgValue(a);
    std::memcpy(&out, &v, sizeof(double));
    return true;
  }
  return false;
}

uint64_t tunedHash(std::span<const int64_t> bits, const Specializer::Key &spec) {
  uint64_t h = hashOf(spec);
  for (int64_t b : bits)
    h = mixHash(h, uint64_t(b));
  return h;
}

std::string argText(const Arg &a) {
  if (isIntKind(a.kind))
    return std::to_string(intArgValue(a));
  if (isFloatKind(a.kind))
    return fmt::format("{}", floatArgValue(a));
  return "pointer";
}

// The names and types ("*fp32", "i32") of the runtime parameters of
// `opts.kernel`, from the front end alone.
Status frontEndParams(const std::string &source, const std::string &fileName,
                      const GpuCompileOptions &opts, std::vector<std::string> &names,
                      std::vector<std::string> &types) {
  std::vector<ParamBinding> bindings;
  std::string error;
  if (!frontEndBindings(source, fileName, opts, bindings, error))
    return Status::failure(error);
  for (const ParamBinding &b : bindings)
    if (b.isArgument) {
      names.push_back(b.name);
      types.push_back((b.isPointer ? "*" : "") + std::string(dtypeName(b.dtype)));
    }
  return {};
}

// The config's PTX through the compile cache, so that GpuKernel::compile of
// the same config right after finds it there (in memory, or on disk in
// another process) instead of compiling it a second time.
bool cachedPTX(const std::string &source, const std::string &fileName,
               const GpuCompileOptions &opts, CompiledPTX &out, std::string &error) {
  CompileCache &cache = CompileCache::process();
  CacheKey key = gpuCompileKey(source, fileName, opts);
  std::string payload;
  if (cache.lookup(key, CacheKind::Kernel, payload) && parseCompiledPTX(payload, out) &&
      out.name == opts.kernel)
    return true;
  if (!compileToPTX(source, fileName, opts, out, error))
    return false;
  cache.store(key, CacheKind::Kernel, serializeCompiledPTX(out));
  return true;
}

// What one program of a compiled config needs: on amdgcn the workgroup and
// LDS of the code object's metadata (the launch's own, amdgpuLaunchInfo),
// else num_warps x 32 threads and the static shared memory the PTX declares.
bool programResources(const CompiledPTX &c, tune::Resources &need, std::string &why) {
  if (c.codeObject.empty()) {
    need.threads = c.numWarps * 32;
    need.sharedBytes = tune::sharedBytesInPTX(c.ptx);
    return true;
  }
  std::vector<SlotKind> kinds;
  for (const GpuParam &p : c.params)
    kinds.push_back(SlotKind(p.kind));
  AmdgpuLaunch launch;
  if (!amdgpuLaunchInfo(c.codeObject, c.name, kinds, launch, why))
    return false;
  need.threads = int(launch.block[0] * launch.block[1] * launch.block[2]);
  need.sharedBytes = int(launch.ldsBytes);
  return true;
}

GpuCompileOptions configOptions(const KernelOptions &base, const Config &c) {
  KernelOptions o = base;
  for (const auto &[name, value] : c.meta)
    o.constants[name] = value;
  o.numWarps = c.numWarps;
  o.numStages = c.numStages;
  return toGpuOptions(o);
}

} // namespace

Status AutotunerData::resolve() {
  if (resolved)
    return {};
  if (configs.empty())
    return Status::failure(fmt::format("autotuner of '{}' has no configs", kernelName));
  paramNames.clear();
  paramTypes.clear();
  if (images.empty()) {
    GpuCompileOptions first = configOptions(base, configs[0]);
    Status s = frontEndParams(source, fileName, first, paramNames, paramTypes);
    if (!s)
      return s;
    if (base.specialize) {
      std::string error;
      if (!specializer.init(source, fileName, first, base.doNotSpecialize, error))
        return Status::failure(error);
      specializes = specializer.active();
    }
  } else {
    paramNames = images[0].paramNames;
    for (Arg::Kind k : images[0].params)
      paramTypes.push_back(k == Arg::Kind::Pointer ? "*" : argKindName(k));
  }
  auto indices = [&](const std::vector<std::string> &names, const char *what, bool pointers,
                     std::vector<size_t> &out) -> Status {
    out.clear();
    for (const std::string &n : names) {
      auto it = std::find(paramNames.begin(), paramNames.end(), n);
      if (it == paramNames.end()) {
        std::string all;
        for (size_t i = 0; i < paramNames.size(); ++i)
          all += (i ? ", " : "") + paramNames[i];
        return Status::failure(fmt::format("autotuner of '{}': {} names '{}', which is not a "
                                           "runtime parameter ({})",
                                           kernelName, what, n, all));
      }
      size_t i = size_t(it - paramNames.begin());
      bool isPointer = paramTypes[i].starts_with("*");
      if (isPointer != pointers)
        return Status::failure(fmt::format("autotuner of '{}': {} names '{}', which is {}",
                                           kernelName, what, n,
                                           isPointer ? "a pointer" : "not a pointer"));
      out.push_back(i);
    }
    return {};
  };
  Status s = indices(options.key, "the key", false, keyIndex);
  if (s)
    s = indices(options.resetToZero, "resetToZero", true, zeroIndex);
  if (s)
    s = indices(options.restoreValue, "restoreValue", true, restoreIndex);
  if (!s)
    return s;

  // The target's runtime: an AMD arch (source kernels only: images hold
  // PTX) tunes through HIP.
  std::string error;
  if (images.empty() && isAMDGPUArch(configOptions(base, configs[0]).arch)) {
    HipDriver *hip = HipDriver::get(error);
    if (!hip)
      return Status::failure(error);
    runtime.emplace(*hip);
  } else {
    runtime.emplace(driverOrThrow());
  }
  if (!runtime->limits(limits, error))
    return Status::failure(error);
  std::vector<tune::Config> tc;
  for (const Config &c : configs) {
    tune::Config t;
    for (const auto &[name, value] : c.meta)
      t.meta.emplace_back(name, toConstValue(value));
    t.numWarps = c.numWarps;
    t.numStages = c.numStages;
    tc.push_back(std::move(t));
  }
  tune::Options to;
  to.kernelName = kernelName;
  to.identity = identity;
  to.deviceName = runtime->deviceName();
  to.cacheDir = options.cacheDir;
  to.diskCache = options.diskCache;
  to.rejectSpills = options.rejectSpills;
  tuner = std::make_unique<tune::Tuner>(std::move(tc), to);
  if (options.progress)
    tuner->setProgress([cb = options.progress](const tune::Progress &p) {
      AutotuneProgress out;
      out.kernel = p.kernel;
      out.key = p.key;
      out.done = p.done;
      out.total = p.total;
      out.best = p.best;
      out.bestMs = p.bestMs;
      out.bestConfig = p.bestConfig;
      out.elapsedSeconds = p.elapsedSeconds;
      out.finished = p.finished;
      out.fromCache = p.fromCache;
      out.reports = p.reports;
      cb(out);
    });
  kernels.clear();
  resolved = true;
  ready.store(true, std::memory_order_release);
  return {};
}

Status AutotunerData::keyBits(std::span<const Arg> args, std::vector<int64_t> &bits) const {
  if (args.size() != paramNames.size())
    return Status::failure(fmt::format("autotuner of '{}': {} arguments passed; the kernel takes "
                                       "{}",
                                       kernelName, args.size(), paramNames.size()));
  bits.clear();
  for (size_t i : keyIndex) {
    int64_t b = 0;
    if (!keyValue(args[i], b))
      return Status::failure(fmt::format("autotuner of '{}': key parameter '{}' got a pointer",
                                         kernelName, paramNames[i]));
    bits.push_back(b);
  }
  return {};
}

const AutotunerData::Tuned *AutotunerData::findTuned(std::span<const int64_t> bits,
                                                     const Specializer::Key &spec) const {
  return tuned.find([&] { return tunedHash(bits, spec); },
                    [&](const Tuned &t) {
                      return sameKey(t.spec, spec) &&
                             std::equal(t.bits.begin(), t.bits.end(), bits.begin(), bits.end());
                    });
}

const AutotunerData::Tuned *AutotunerData::fastLookup(std::span<const Arg> args) const noexcept {
  // The key as keyBits() and choose() compute it, in place: a wrong count
  // or a pointer for a key parameter finds nothing, and the slow path
  // reports it.
  if (!ready.load(std::memory_order_acquire) || args.size() != paramNames.size() ||
      keyIndex.size() > kFastKeyParams)
    return nullptr;
  int64_t bits[kFastKeyParams];
  for (size_t j = 0; j < keyIndex.size(); ++j)
    if (!keyValue(args[keyIndex[j]], bits[j]))
      return nullptr;
  Specializer::Key spec = specializes ? specializer.keyOf(args) : Specializer::Key{0, 0};
  return findTuned(std::span<const int64_t>(bits, keyIndex.size()), spec);
}

Status AutotunerData::tunedFor(const GridFn &grid, std::span<const Arg> args, void *stream,
                               const Tuned *&out) {
  size_t best = 0;
  Specializer::Key spec;
  if (Status s = choose(grid, args, stream, best, spec); !s)
    return s;
  std::vector<int64_t> bits;
  if (Status s = keyBits(args, bits); !s)
    return s;
  if ((out = findTuned(bits, spec)))
    return {};
  Kernel k;
  if (Status s = kernelFor(best, spec, k); !s)
    return s;
  uint64_t hash = tunedHash(bits, spec);
  out = tuned.insert(std::make_unique<Tuned>(Tuned{hash, std::move(bits), spec, best, k}));
  return {};
}

std::string AutotunerData::keyText(std::span<const Arg> args) const {
  std::vector<std::pair<std::string, std::string>> values, dtypes;
  for (size_t i : keyIndex)
    values.emplace_back(paramNames[i], i < args.size() ? argText(args[i]) : "?");
  for (size_t i = 0; i < paramNames.size(); ++i)
    if (paramTypes[i].starts_with("*"))
      dtypes.emplace_back(paramNames[i], paramTypes[i].substr(1));
  return tune::makeKey(values, dtypes);
}

GpuCompileOptions AutotunerData::optionsFor(size_t index, const Specializer::Key &key) const {
  GpuCompileOptions o = configOptions(base, configs[index]);
  return specializes ? specializer.optionsFor(o, key) : o;
}

std::vector<Kernel> &AutotunerData::kernelsFor(const Specializer::Key &key) {
  std::vector<Kernel> &v = kernels[key];
  v.resize(configs.size());
  return v;
}

Status AutotunerData::kernelFor(size_t index, const Specializer::Key &key, Kernel &out) {
  // While the compile threads run, the key's vector exists (choose() made
  // it) and each thread owns its slot; on the launch path (under the mutex,
  // no threads) a key seen for the first time gets its vector here.
  auto it = kernels.find(key);
  Kernel &slot = (it != kernels.end() ? it->second : kernelsFor(key))[index];
  if (slot.valid()) {
    out = slot;
    return {};
  }
  if (images.empty()) {
    // The config's constants, warps and facts, through the same options the
    // resource check compiled with.
    std::string error;
    std::shared_ptr<const GpuKernel> gpu =
        GpuKernel::compileShared(source, fileName, optionsFor(index, key), error);
    if (!gpu)
      return Status::failure(error);
    out = KernelData::wrap(KernelData::fromGpu(std::move(gpu)));
  } else {
    try {
      out = Kernel::fromImage(images[index]);
    } catch (const Error &e) {
      return Status::failure(e.what());
    }
  }
  slot = out;
  return {};
}

Status AutotunerData::choose(const GridFn &grid, std::span<const Arg> args, void *stream,
                             size_t &best, Specializer::Key &specKey) {
  if (Status s = resolve(); !s)
    return s;
  std::vector<int64_t> bits;
  if (Status s = keyBits(args, bits); !s)
    return s;
  specKey = specializes ? specializer.keyOf(args) : Specializer::Key{0, 0};
  if (auto it = chosen.find(bits); it != chosen.end()) {
    best = it->second;
    return {};
  }
  // Before the compile threads start: they only look their key up.
  kernelsFor(specKey);
  std::string key = keyText(args);
  const tune::Runtime &rt = *runtime;
  std::string error;

  if (options.prune)
    tuner->setPrune([&](const std::vector<tune::Config> &, const std::string &) {
      std::map<std::string, std::string> values;
      for (size_t i : keyIndex)
        values[paramNames[i]] = argText(args[i]);
      std::vector<Config> kept = options.prune(configs, values);
      std::vector<size_t> out;
      for (const Config &k : kept)
        for (size_t i = 0; i < configs.size(); ++i)
          if (configs[i].meta == k.meta && configs[i].numWarps == k.numWarps &&
              configs[i].numStages == k.numStages)
            out.push_back(i);
      return out;
    });
  // Resources before the driver compiles anything: threads and static
  // shared memory of tk's own compile (programResources), or of the image's
  // PTX.
  tuner->setResourceCheck(
      [&](size_t i, tune::Resources &need, std::string &why) {
        if (images.empty()) {
          CompiledPTX c;
          return cachedPTX(source, fileName, optionsFor(i, specKey), c, why) &&
                 programResources(c, need, why);
        }
        need.threads = configs[i].numWarps * 32;
        need.sharedBytes = tune::sharedBytesInPTX(images[i].ptx ? images[i].ptx : "");
        return true;
      },
      limits);

  // In-place arguments: sizes are needed to save and zero them.
  auto sized = [&](size_t i) -> Status {
    if (args[i].bytes == 0)
      return Status::failure(fmt::format("autotuner of '{}': '{}' is reset or restored between "
                                         "trials, so its argument must carry its size (pass a "
                                         "tk::DeviceMemory or tk::Arg::pointer(address, bytes))",
                                         kernelName, paramNames[i]));
    return {};
  };
  std::vector<std::vector<unsigned char>> saved;
  for (size_t i : restoreIndex) {
    if (Status s = sized(i); !s)
      return s;
    saved.emplace_back(args[i].bytes);
    if (!rt.copyToHost(saved.back().data(), args[i].value.pointer, args[i].bytes, error))
      return Status::failure(error);
  }
  for (size_t i : zeroIndex)
    if (Status s = sized(i); !s)
      return s;
  auto restore = [&](std::string &err) {
    for (size_t j = 0; j < restoreIndex.size(); ++j)
      if (!rt.copyToDevice(args[restoreIndex[j]].value.pointer, saved[j].data(), saved[j].size(),
                           err))
        return false;
    return true;
  };

  // The output check: every sized pointer argument saved now, put back
  // before each config's check launch, and read after it.
  std::vector<size_t> checkIndex;
  std::vector<std::vector<unsigned char>> original;
  std::map<size_t, std::vector<std::vector<unsigned char>>> outputs; // by config
  if (options.checkOutputs)
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].kind == Arg::Kind::Pointer && args[i].bytes > 0) {
        checkIndex.push_back(i);
        original.emplace_back(args[i].bytes);
        if (!rt.copyToHost(original.back().data(), args[i].value.pointer, args[i].bytes, error))
          return Status::failure(error);
      }
  auto putBack = [&](std::string &err) {
    for (size_t j = 0; j < checkIndex.size(); ++j)
      if (!rt.copyToDevice(args[checkIndex[j]].value.pointer, original[j].data(),
                           original[j].size(), err))
        return false;
    return true;
  };

  tune::BenchOptions bo;
  bo.warmupMs = options.warmupMs;
  bo.repMs = options.repMs;
  auto bench = [&](size_t i) -> tune::Trial {
    Kernel k;
    if (Status s = kernelFor(i, specKey, k); !s)
      return tune::Trial::failure(s.message);
    // Registers are known only once the driver has compiled the kernel.
    std::string over = tune::exceedsLimits({KernelData::of(k).threads, -1, k.registers()}, limits);
    if (!over.empty())
      return tune::Trial::failure(over);
    Grid g = grid(configs[i]);
    auto launch = [&](std::string &err) {
      Status st;
      if (k.launchRaw(g, args, stream, &st))
        return true;
      err = st.message;
      return false;
    };
    auto zero = [&](std::string &err) {
      for (size_t z : zeroIndex)
        if (!rt.fill(args[z].value.pointer, 0, args[z].bytes, err))
          return false;
      return true;
    };
    if (!checkIndex.empty()) {
      // One launch on the arguments as they were before tuning; its output
      // is what the check compares.
      std::string err;
      std::vector<std::vector<unsigned char>> out(checkIndex.size());
      if (!putBack(err) || !zero(err) || !launch(err) || !rt.synchronize(stream, err))
        return tune::Trial::failure(err);
      for (size_t j = 0; j < checkIndex.size(); ++j) {
        out[j].resize(original[j].size());
        if (!rt.copyToHost(out[j].data(), args[checkIndex[j]].value.pointer, out[j].size(), err))
          return tune::Trial::failure(err);
      }
      outputs[i] = std::move(out);
    }
    std::function<bool(std::string &)> before;
    if (!zeroIndex.empty())
      before = zero;
    tune::Trial t = tune::benchmarkWithEvents(rt, stream, launch, before, bo);
    t.spillBytes = k.localBytes();
    std::string err;
    if (!restore(err) && t.usable)
      t = tune::Trial::failure(err);
    return t;
  };
  if (!checkIndex.empty())
    tuner->setCheck([&](size_t i, size_t ref, std::string &difference) {
      auto mine = outputs.find(i);
      if (mine == outputs.end()) {
        difference = "its output was not captured";
        return false;
      }
      for (size_t j = 0; j < checkIndex.size() && i != ref; ++j) {
        const std::string &type = paramTypes[checkIndex[j]]; // "*fp32"
        std::optional<DType> d = parseDTypeName(type.substr(1));
        DType dtype = d.value_or(DType::U8);
        const auto *got = reinterpret_cast<const std::byte *>(mine->second[j].data());
        const auto *expected = reinterpret_cast<const std::byte *>(outputs.at(ref)[j].data());
        size_t count = mine->second[j].size() / dtypeBytes(dtype);
        if (std::optional<Difference> diff = firstDifference(
                got, expected, count, dtype, largestMagnitude(expected, count, dtype))) {
          difference =
              fmt::format("element {} of '{}' is {}, config [{}]'s is {} ({})", diff->index,
                          paramNames[checkIndex[j]], diff->got, ref, diff->expected, diff->why);
          return false;
        }
      }
      if (i != ref)
        outputs.erase(i);
      return true;
    });
  // Compiled (and loaded) by the tuner's thread pool before any benchmark.
  tuner->setCompile([&](size_t i, std::string &why) {
    Kernel k;
    Status s = kernelFor(i, specKey, k);
    why = s.message;
    return bool(s);
  });
  const tune::Result *r = tuner->tune(key, bench, error);
  tuner->setPrune(nullptr);
  tuner->setResourceCheck(nullptr, limits);
  tuner->setCompile(nullptr);
  tuner->setCheck(nullptr);
  if (!r)
    return Status::failure(error);
  best = r->best;
  chosen.emplace(std::move(bits), best);
  return {};
}

} // namespace detail

namespace {

std::string sourceIdentity(const std::string &source, const std::string &fileName,
                           const KernelOptions &base) {
  std::string text =
      fmt::format("{}\n{}\n{}\n{}\n", fileName, base.kernel, base.signature, base.arch);
  for (const auto &[name, value] : base.constants)
    text += fmt::format("{}={}\n", name, value.str());
  return tune::hashText(text + source);
}

} // namespace

Autotuner Autotuner::fromSource(const std::string &source, const KernelOptions &base,
                                std::vector<Config> configs, AutotuneOptions options,
                                const std::string &fileName) {
  auto d = std::make_shared<detail::AutotunerData>();
  d->kernelName = base.kernel;
  d->identity = sourceIdentity(source, fileName, base);
  d->source = source;
  d->fileName = fileName;
  d->base = base;
  d->configs = std::move(configs);
  d->options = std::move(options);
  return Autotuner(d);
}

Autotuner Autotuner::fromFile(const std::string &path, const KernelOptions &base,
                              std::vector<Config> configs, AutotuneOptions options) {
  std::string source, error;
  if (!detail::readFile(path, source, error))
    throw Error(error);
  return fromSource(source, base, std::move(configs), std::move(options), path);
}

Autotuner Autotuner::fromImages(const std::string &identity, std::vector<Config> configs,
                                std::vector<Kernel::Image> images, AutotuneOptions options) {
  if (images.size() != configs.size() || images.empty())
    throw Error(fmt::format("Autotuner::fromImages: {} images for {} configs", images.size(),
                            configs.size()));
  auto d = std::make_shared<detail::AutotunerData>();
  d->kernelName = images[0].name;
  d->identity = identity;
  d->images = std::move(images);
  d->configs = std::move(configs);
  d->options = std::move(options);
  return Autotuner(d);
}

Status Autotuner::tryLaunch(const GridFn &grid, ArgList args, const Stream &stream) noexcept {
  try {
    detail::AutotunerData &d = *data_;
    // A tuned key: no lock, no allocation, no Kernel copy (the entry's own
    // handle launches; it lives as long as `d`, which this object holds).
    const detail::AutotunerData::Tuned *t = d.fastLookup(args);
    if (!t) {
      std::lock_guard<std::mutex> lock(d.mutex);
      if (Status s = d.tunedFor(grid, args, stream.handle(), t); !s)
        return s;
    }
    Status s;
    t->kernel.launchRaw(grid(d.configs[t->best]), args, stream.handle(), &s);
    return s;
  } catch (const std::exception &e) {
    return Status::failure(e.what());
  }
}

const Config &Autotuner::best(const GridFn &grid, ArgList args, const Stream &stream) {
  std::lock_guard<std::mutex> lock(data_->mutex);
  size_t best = 0;
  detail::Specializer::Key key;
  check(data_->choose(grid, args, stream.handle(), best, key));
  return data_->configs[best];
}

Kernel Autotuner::bestKernel(const GridFn &grid, ArgList args, const Stream &stream) {
  std::lock_guard<std::mutex> lock(data_->mutex);
  size_t best = 0;
  detail::Specializer::Key key;
  check(data_->choose(grid, args, stream.handle(), best, key));
  Kernel k;
  check(data_->kernelFor(best, key, k));
  return k;
}

std::string Autotuner::keyOf(ArgList args) {
  std::lock_guard<std::mutex> lock(data_->mutex);
  check(data_->resolve());
  return data_->keyText(args);
}

const std::vector<Config> &Autotuner::configs() const { return data_->configs; }

} // namespace tk
