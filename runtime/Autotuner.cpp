// Autotuner: see Autotuner.h.
#include "runtime/Autotuner.h"

#include "runtime/CompileCache.h"
#include "support/Knobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <thread>

namespace tk::tune {

namespace {

std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// A time printed so that reading it back gives the same double.
std::string msText(double ms) { return fmt::format("{:.9g}", ms); }

} // namespace

std::string hashText(const std::string &text) { return CacheKeyBuilder().add(text).key().hex(); }

std::string Config::str() const {
  std::string s;
  for (const auto &[name, value] : meta)
    s += fmt::format("{}={}, ", name, value.str());
  return s + fmt::format("num_warps={}, num_stages={}", numWarps, numStages);
}

std::string makeKey(const std::vector<std::pair<std::string, std::string>> &keyValues,
                    const std::vector<std::pair<std::string, std::string>> &tensorDtypes) {
  std::string s;
  for (size_t i = 0; i < keyValues.size(); ++i)
    s += fmt::format("{}{}={}", i ? ", " : "", keyValues[i].first, keyValues[i].second);
  s += ";";
  for (size_t i = 0; i < tensorDtypes.size(); ++i)
    s += fmt::format("{}{}:{}", i ? ", " : " ", tensorDtypes[i].first, tensorDtypes[i].second);
  return oneLine(s);
}

Trial Trial::time(double ms) {
  Trial t;
  t.usable = true;
  t.ms = ms;
  return t;
}

Trial Trial::failure(std::string reason) {
  Trial t;
  t.reason = reason.empty() ? "failed without a message" : std::move(reason);
  return t;
}

Trial Trial::rejection(std::string reason) {
  Trial t = failure(std::move(reason));
  t.rejected = true;
  return t;
}

std::string exceedsLimits(const Resources &need, const Limits &limits) {
  if (need.threads > limits.maxThreadsPerBlock)
    return fmt::format("needs {} threads per program; the device allows {}", need.threads,
                       limits.maxThreadsPerBlock);
  if (need.sharedBytes > limits.sharedBytesPerBlock)
    return fmt::format("needs {} bytes of shared memory per program; the device has {}",
                       need.sharedBytes, limits.sharedBytesPerBlock);
  if (need.registersPerThread >= 0 && need.threads > 0 &&
      int64_t(need.registersPerThread) * need.threads > limits.registersPerBlock)
    return fmt::format("needs {} registers per thread x {} threads = {} per program; the device "
                       "has {}",
                       need.registersPerThread, need.threads,
                       int64_t(need.registersPerThread) * need.threads, limits.registersPerBlock);
  return "";
}

bool queryLimits(CudaDriver &driver, Limits &out, std::string &error) {
  // cuda.h's CUdevice_attribute values.
  constexpr int kMaxThreadsPerBlock = 1, kMaxSharedPerBlock = 8, kRegistersPerBlock = 12;
  const CudaFunctions &api = driver.api();
  return driver.check(api.cuDeviceGetAttribute(&out.maxThreadsPerBlock, kMaxThreadsPerBlock,
                                               driver.device()),
                      "cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK)", error) &&
         driver.check(api.cuDeviceGetAttribute(&out.sharedBytesPerBlock, kMaxSharedPerBlock,
                                               driver.device()),
                      "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK)", error) &&
         driver.check(
             api.cuDeviceGetAttribute(&out.registersPerBlock, kRegistersPerBlock, driver.device()),
             "cuDeviceGetAttribute(MAX_REGISTERS_PER_BLOCK)", error);
}

int sharedBytesInPTX(const std::string &ptx) {
  // Declarations look like `.shared .align 16 .b8 smem[4096];` (possibly
  // `.extern .shared` for dynamic memory, which has no size and is skipped).
  int64_t total = 0;
  std::istringstream in(ptx);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find(".shared ");
    if (at == std::string::npos || line.find(".extern") != std::string::npos)
      continue;
    size_t open = line.find('[', at), close = line.find(']', at);
    if (open == std::string::npos || close == std::string::npos || close <= open + 1)
      continue;
    int64_t count = std::atoll(line.substr(open + 1, close - open - 1).c_str());
    int64_t elem = 1;
    for (auto [type, bytes] : {std::pair{".b16", 2},
                               {".b32", 4},
                               {".b64", 8},
                               {".f32", 4},
                               {".f64", 8},
                               {".u32", 4},
                               {".u64", 8},
                               {".f16", 2}})
      if (line.find(type, at) != std::string::npos && line.find(type, at) < open)
        elem = bytes;
    total += count * elem;
  }
  return int(std::min<int64_t>(total, std::numeric_limits<int>::max()));
}

unsigned compileThreads(size_t jobs, unsigned requested) {
  if (jobs == 0)
    return 1;
  size_t n = requested;
  if (n == 0)
    n = size_t(readInt(Knob::CompileThreads).value);
  if (n == 0)
    n = std::max(1u, std::thread::hardware_concurrency());
  return unsigned(std::min(n, jobs));
}

void parallelFor(size_t n, unsigned threads, const std::function<void(size_t)> &fn) {
  // A shared counter hands out the indices: a config that compiles slowly
  // does not hold up the others queued behind it on the same thread.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++)
      fn(i);
  };
  std::vector<std::thread> pool;
  size_t extra = std::min<size_t>(threads, n);
  for (size_t t = 1; t < extra; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

Tuner::Tuner(std::vector<Config> configs, Options options)
    : configs_(std::move(configs)), options_(std::move(options)) {}

std::string Tuner::cachePath(const std::string &key) const {
  if (!options_.diskCache || !readBool(Knob::AutotuneCache).value)
    return "";
  std::string root = options_.cacheDir.empty() ? cacheDirectory() : options_.cacheDir;
  if (root.empty())
    return "";
  std::string name = options_.kernelName.empty() ? "kernel" : options_.kernelName;
  // Keep the file name to safe characters; the hash makes it unique.
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      c = '_';
  return fmt::format("{}/autotune/{}-{}.{}", root, name, cacheKey(key).hex().substr(0, 32),
                     cacheKindName(CacheKind::Autotune));
}

CacheKey Tuner::cacheKey(const std::string &key) const {
  return CacheKeyBuilder().add(identityText(key)).key();
}

std::string Tuner::identityText(const std::string &key) const {
  // Every line a stored result must match exactly to be used; the entry's
  // key is their hash, and the payload repeats them so a file can be read.
  std::string s = fmt::format("tk-autotune 2\ncompiler {}\nkernel {}\nidentity {}\ndevice {}\n"
                              "key {}\nconfigs {}\n",
                              oneLine(compilerVersion()), oneLine(options_.kernelName),
                              oneLine(options_.identity), oneLine(options_.deviceName),
                              oneLine(key), configs_.size());
  for (size_t i = 0; i < configs_.size(); ++i)
    s += fmt::format("config {} {}\n", i, oneLine(configs_[i].str()));
  return s;
}

bool Tuner::readDisk(const std::string &key, Result &out) const {
  std::string path = cachePath(key);
  if (path.empty())
    return false;
  // The entry's header carries the key and a SHA-256 of the payload, so a
  // truncated, damaged or foreign file is a miss here.
  std::string text, why;
  if (readCacheEntry(path, cacheKey(key), CacheKind::Autotune, text, why) != CacheRead::Hit)
    return false;
  // Payload: the identity lines, "best N", one "trial ..." line per config.
  std::string identity = identityText(key);
  if (text.compare(0, identity.size(), identity) != 0)
    return false;
  std::istringstream rest(text.substr(identity.size()));
  std::string word, line;
  size_t best = 0;
  if (!(rest >> word >> best) || word != "best" || best >= configs_.size())
    return false;
  Result r;
  r.key = key;
  r.best = best;
  r.fromDisk = true;
  std::getline(rest, line);
  for (size_t i = 0; i < configs_.size(); ++i) {
    if (!std::getline(rest, line))
      return false;
    // "trial I ms T [NOTE]", "trial I unusable REASON", "trial I pruned
    // REASON" or "trial I rejected REASON".
    std::istringstream fields(line);
    size_t index = 0;
    std::string kind;
    if (!(fields >> word >> index >> kind) || word != "trial" || index != i)
      return false;
    Trial t;
    if (kind == "ms") {
      if (!(fields >> t.ms) || !(t.ms >= 0))
        return false;
      t.usable = true;
      std::getline(fields >> std::ws, t.note);
    } else if (kind == "unusable" || kind == "pruned" || kind == "rejected") {
      t.pruned = kind == "pruned";
      t.rejected = kind == "rejected";
      std::getline(fields >> std::ws, t.reason);
    } else {
      return false;
    }
    r.trials.push_back(std::move(t));
  }
  if (!r.trials[best].usable)
    return false;
  out = std::move(r);
  return true;
}

std::string Tuner::payload(const Result &result) const {
  std::string text = identityText(result.key) + fmt::format("best {}\n", result.best);
  for (size_t i = 0; i < result.trials.size(); ++i) {
    const Trial &t = result.trials[i];
    if (t.usable)
      text += fmt::format("trial {} ms {}{}{}\n", i, msText(t.ms), t.note.empty() ? "" : " ",
                          oneLine(t.note));
    else
      text += fmt::format("trial {} {} {}\n", i,
                          t.pruned     ? "pruned"
                          : t.rejected ? "rejected"
                                       : "unusable",
                          oneLine(t.reason));
  }
  return text;
}

void Tuner::writeDisk(const Result &result) const {
  std::string path = cachePath(result.key);
  if (path.empty())
    return;
  // Atomic (temporary file + rename) and verified on read; a cache that
  // cannot be written is not an error: the result stays in memory.
  std::string error;
  if (createDirectories(std::filesystem::path(path).parent_path().string(), error))
    writeCacheEntry(path, cacheKey(result.key), CacheKind::Autotune, payload(result), error);
}

void Tuner::report(const Result &r, size_t done, size_t total, double elapsed, bool finished,
                   bool fromCache) const {
  if (!progress_)
    return;
  Progress p;
  p.kernel = options_.kernelName;
  p.key = r.key;
  p.done = done;
  p.total = total;
  p.elapsedSeconds = elapsed;
  p.finished = finished;
  p.fromCache = fromCache;
  for (size_t i = 0; i < r.trials.size(); ++i)
    if (r.trials[i].usable && (p.best < 0 || r.trials[i].ms < r.trials[size_t(p.best)].ms))
      p.best = int(i);
  if (p.best >= 0) {
    p.bestMs = r.trials[size_t(p.best)].ms;
    p.bestConfig = configs_[size_t(p.best)].str();
  }
  if (finished)
    for (size_t i = 0; i < r.trials.size(); ++i) {
      const Trial &t = r.trials[i];
      if (t.rejected)
        p.reports.push_back(
            fmt::format("[{}] {}: rejected: {}", i, configs_[i].str(), oneLine(t.reason)));
      else if (t.usable && !t.note.empty())
        p.reports.push_back(fmt::format("[{}] {}: {}", i, configs_[i].str(), oneLine(t.note)));
    }
  progress_(p);
}

const Result *Tuner::lookup(const std::string &key) {
  if (auto it = results_.find(key); it != results_.end())
    return &it->second;
  Result r;
  if (!readDisk(key, r))
    return nullptr;
  return &results_.emplace(key, std::move(r)).first->second;
}

// The checks that need no benchmark: the config's resources against the
// device's limits, then (with setCompile) its compile. A default Trial
// (not usable, no reason) means "go on and benchmark it".
Trial Tuner::prepare(size_t i) const {
  Resources need;
  std::string why;
  try {
    if (need_ && !need_(i, need, why))
      return Trial::failure(why);
    if (std::string over = need_ ? exceedsLimits(need, limits_) : ""; !over.empty()) {
      Trial t = Trial::failure(over);
      t.pruned = true;
      return t;
    }
    if (compile_ && !compile_(i, why))
      return Trial::failure(why);
  } catch (const std::exception &e) {
    return Trial::failure(e.what());
  }
  return Trial();
}

// A usable config's spills and output, after its benchmark: the spills
// reported (rejected with rejectSpills), the output compared with the
// reference's (the first usable config becomes the reference).
Trial Tuner::judge(size_t i, Trial t, int &reference) const {
  if (t.spillBytes > 0) {
    t.note = fmt::format("spills registers: {} bytes of local memory per thread", t.spillBytes);
    if (options_.rejectSpills) {
      Trial spilled = Trial::rejection(t.note + " (spilling configs are rejected)");
      spilled.spillBytes = t.spillBytes;
      return spilled;
    }
  }
  if (!check_)
    return t;
  size_t ref = reference < 0 ? i : size_t(reference);
  std::string difference;
  bool agrees = false;
  try {
    agrees = check_(i, ref, difference);
  } catch (const std::exception &e) {
    difference = e.what();
  }
  if (reference < 0) {
    if (!agrees)
      return Trial::failure("its output could not be kept as the reference: " + difference);
    reference = int(i);
    return t;
  }
  if (agrees)
    return t;
  return Trial::rejection(fmt::format("computes another result than config [{}] ({}): {}", ref,
                                      configs_[ref].str(), difference));
}

const Result *Tuner::tune(const std::string &key, const BenchFn &bench, std::string &error) {
  if (configs_.empty()) {
    error = fmt::format("autotuning '{}': no configs", options_.kernelName);
    return nullptr;
  }
  if (const Result *known = lookup(key)) {
    report(*known, known->trials.size(), known->trials.size(), 0, true, true);
    return known;
  }
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Result r;
  r.key = key;
  r.trials.assign(configs_.size(), Trial::failure("pruned by prune_configs_by"));
  for (Trial &t : r.trials)
    t.pruned = true;

  std::vector<size_t> keep(configs_.size());
  for (size_t i = 0; i < keep.size(); ++i)
    keep[i] = i;
  if (prune_) {
    std::vector<size_t> kept = prune_(configs_, key);
    keep.clear();
    for (size_t i : kept)
      if (i < configs_.size() && std::find(keep.begin(), keep.end(), i) == keep.end())
        keep.push_back(i);
    if (keep.empty()) {
      error = fmt::format("autotuning '{}' for key '{}': the prune kept none of the {} configs",
                          options_.kernelName, key, configs_.size());
      return nullptr;
    }
  }

  // With a compile function every config is checked and compiled first, in
  // parallel; benchmarks then run one at a time (they share the GPU, and
  // timings taken while other threads load modules would be noisy).
  std::vector<Trial> prepared(keep.size());
  if (compile_)
    parallelFor(keep.size(), compileThreads(keep.size(), options_.compileThreads),
                [&](size_t k) { prepared[k] = prepare(keep[k]); });
  size_t done = 0;
  int reference = -1; // the first usable config: the others' outputs are compared with its
  for (size_t k = 0; k < keep.size(); ++k) {
    size_t i = keep[k];
    Trial t = compile_ ? std::move(prepared[k]) : prepare(i);
    if (t.reason.empty()) {
      try {
        t = bench(i);
      } catch (const std::exception &e) {
        t = Trial::failure(e.what());
      }
      if (t.usable && !(t.ms >= 0 && t.ms < std::numeric_limits<double>::infinity()))
        t = Trial::failure(fmt::format("the benchmark returned {} ms", t.ms));
      if (t.usable)
        t = judge(i, std::move(t), reference);
    }
    r.trials[i] = std::move(t);
    report(r, ++done, keep.size(), elapsed(), false, false);
  }

  int best = -1;
  for (size_t i : keep)
    if (r.trials[i].usable && (best < 0 || r.trials[i].ms < r.trials[size_t(best)].ms))
      best = int(i);
  if (best < 0) {
    error = fmt::format("autotuning '{}' for key '{}': no usable config", options_.kernelName, key);
    for (size_t i : keep)
      error += fmt::format("\n  [{}] {}: {}", i, configs_[i].str(), r.trials[i].reason);
    return nullptr;
  }
  r.best = size_t(best);
  r.seconds = elapsed();
  report(r, done, keep.size(), r.seconds, true, false);
  writeDisk(r);
  return &results_.emplace(key, std::move(r)).first->second;
}

std::string Runtime::deviceName() const { return hip_ ? hip_->deviceName() : cuda_->deviceName(); }

bool Runtime::limits(Limits &out, std::string &error) const {
  if (!hip_)
    return queryLimits(*cuda_, out, error);
  const DeviceLimits &l = hip_->limits();
  out.maxThreadsPerBlock = l.maxThreadsPerBlock;
  out.sharedBytesPerBlock = l.maxSharedPerBlock;
  out.registersPerBlock =
      l.maxRegistersPerBlock > 0 ? l.maxRegistersPerBlock : std::numeric_limits<int>::max();
  return true;
}

bool Runtime::synchronize(void *stream, std::string &error) const {
  return hip_ ? hip_->synchronizeStream(static_cast<hipStream_t>(stream), error)
              : cuda_->check(cuda_->api().cuStreamSynchronize(static_cast<CUstream>(stream)),
                             "cuStreamSynchronize", error);
}

bool Runtime::allocate(size_t bytes, uint64_t &out, std::string &error) const {
  return hip_ ? hip_->allocate(bytes, out, error) : cuda_->allocate(bytes, out, error);
}

bool Runtime::free(uint64_t ptr, std::string &error) const {
  return hip_ ? hip_->free(ptr, error) : cuda_->free(ptr, error);
}

bool Runtime::fill(uint64_t dst, unsigned char byte, size_t bytes, std::string &error) const {
  return hip_ ? hip_->fill(dst, byte, bytes, error) : cuda_->fill(dst, byte, bytes, error);
}

bool Runtime::copyToHost(void *dst, uint64_t src, size_t bytes, std::string &error) const {
  return hip_ ? hip_->copyToHost(dst, src, bytes, error)
              : cuda_->copyToHost(dst, src, bytes, error);
}

bool Runtime::copyToDevice(uint64_t dst, const void *src, size_t bytes, std::string &error) const {
  return hip_ ? hip_->copyToDevice(dst, src, bytes, error)
              : cuda_->copyToDevice(dst, src, bytes, error);
}

bool Runtime::createEvent(void *&out, std::string &error) const {
  if (hip_) {
    hipEvent_t e = nullptr;
    bool ok = hip_->createEvent(e, error);
    out = e;
    return ok;
  }
  CUevent e = nullptr;
  bool ok = cuda_->check(cuda_->api().cuEventCreate(&e, 0), "cuEventCreate", error);
  out = e;
  return ok;
}

void Runtime::destroyEvent(void *event) const {
  std::string ignored;
  if (hip_)
    hip_->destroyEvent(static_cast<hipEvent_t>(event), ignored);
  else
    cuda_->api().cuEventDestroy(static_cast<CUevent>(event));
}

bool Runtime::recordEvent(void *event, void *stream, std::string &error) const {
  return hip_ ? hip_->recordEvent(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream),
                                  error)
              : cuda_->check(cuda_->api().cuEventRecord(static_cast<CUevent>(event),
                                                        static_cast<CUstream>(stream)),
                             "cuEventRecord", error);
}

bool Runtime::waitEvent(void *event, std::string &error) const {
  return hip_ ? hip_->check(hip_->api().hipEventSynchronize(static_cast<hipEvent_t>(event)),
                            "hipEventSynchronize", error)
              : cuda_->check(cuda_->api().cuEventSynchronize(static_cast<CUevent>(event)),
                             "cuEventSynchronize", error);
}

bool Runtime::elapsedMs(void *start, void *stop, float &ms, std::string &error) const {
  return hip_ ? hip_->check(hip_->api().hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start),
                                                            static_cast<hipEvent_t>(stop)),
                            "hipEventElapsedTime", error)
              : cuda_->check(cuda_->api().cuEventElapsedTime(&ms, static_cast<CUevent>(start),
                                                             static_cast<CUevent>(stop)),
                             "cuEventElapsedTime", error);
}

Trial benchmarkWithEvents(const Runtime &rt, void *stream,
                          const std::function<bool(std::string &)> &launch,
                          const std::function<bool(std::string &)> &beforeEach,
                          const BenchOptions &options) {
  std::string error;
  auto fail = [&] { return Trial::failure(error); };
  auto prepare = [&] { return !beforeEach || beforeEach(error); };

  // Events and the L2 flush buffer are released on every path out.
  struct Owned {
    const Runtime &rt;
    std::vector<void *> events;
    uint64_t flush = 0;
    ~Owned() {
      for (void *e : events)
        rt.destroyEvent(e);
      std::string ignored;
      if (flush)
        rt.free(flush, ignored);
    }
  } res{rt, {}, 0};
  auto event = [&](void *&e) {
    if (!rt.createEvent(e, error))
      return false;
    res.events.push_back(e);
    return true;
  };
  constexpr size_t kFlushBytes = size_t(256) << 20;
  if (options.flushL2 && !rt.allocate(kFlushBytes, res.flush, error))
    return fail();
  // On the legacy (CUDA) or default (HIP) stream.
  auto flush = [&] { return !res.flush || rt.fill(res.flush, 0, kFlushBytes, error); };

  // A first launch: compile-time and launch-time failures show up here.
  if (!prepare() || !launch(error) || !rt.synchronize(stream, error))
    return fail();

  void *start = nullptr, *stop = nullptr;
  if (!event(start) || !event(stop))
    return fail();
  float estimate = 0;
  if (!rt.recordEvent(start, stream, error))
    return fail();
  for (int i = 0; i < 5; ++i)
    if (!launch(error))
      return fail();
  if (!rt.recordEvent(stop, stream, error) || !rt.waitEvent(stop, error) ||
      !rt.elapsedMs(start, stop, estimate, error))
    return fail();
  double per = std::max(double(estimate) / 5, 1e-4);
  int warmups = std::clamp(int(options.warmupMs / per), 1, std::max(1, options.maxReps));
  int reps = std::clamp(int(options.repMs / per), 1, std::max(1, options.maxReps));

  for (int i = 0; i < warmups; ++i)
    if (!launch(error))
      return fail();
  std::vector<std::pair<void *, void *>> timed(size_t(reps), {nullptr, nullptr});
  for (auto &[a, b] : timed)
    if (!event(a) || !event(b))
      return fail();
  for (auto &[a, b] : timed) {
    if (!prepare() || !flush() || !rt.recordEvent(a, stream, error) || !launch(error) ||
        !rt.recordEvent(b, stream, error))
      return fail();
  }
  if (!rt.synchronize(stream, error))
    return fail();
  std::vector<double> ms;
  for (auto &[a, b] : timed) {
    float t = 0;
    if (!rt.elapsedMs(a, b, t, error))
      return fail();
    ms.push_back(t);
  }
  std::nth_element(ms.begin(), ms.begin() + ptrdiff_t(ms.size() / 2), ms.end());
  return Trial::time(ms[ms.size() / 2]);
}

} // namespace tk::tune
