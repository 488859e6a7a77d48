// Autotuner: picks the fastest of a list of configs (meta-parameter values
// plus num_warps and num_stages) for each tuning key, and remembers the choice
// in memory and on disk so a second process does not tune again. It is the
// one autotuner behind the public C++ API (include/tk/Autotuner.h), Python's
// @tk.autotune and the dispatchers tkc --aot writes.
//
//   std::vector<tune::Config> configs = {
//       {{{"BLOCK", ConstValue::ofInt(128)}}, /*numWarps=*/4, /*numStages=*/3},
//       {{{"BLOCK", ConstValue::ofInt(256)}}, 8, 3}};
//   tune::Options opts;
//   opts.kernelName = "softmax";
//   opts.identity = "<hash of the source, signature, options>";
//   opts.deviceName = "NVIDIA H200";
//   tune::Tuner tuner(configs, opts);
//   std::string key = tune::makeKey({{"n_cols", "4096"}}, {{"x_ptr", "fp32"}});
//   std::string error;
//   const tune::Result *r = tuner.tune(key, [&](size_t i) { return timeConfig(i); }, error);
//   if (!r) ... error lists each config with the reason it is unusable
//   r->best        index of the winner; r->trials[i].ms the median of config i
//
// The caller supplies the benchmark (a function from a config index to a
// Trial), so the tuner itself never touches a GPU: the GPU layers pass one
// built on benchmarkWithEvents(), the unit tests a fake. What the tuner owns:
// pruning (a user callback, then the built-in resource check of each config
// against the device's limits, before any config is compiled for the
// device), scoring (a config whose benchmark fails, throws or returns no time
// is unusable and keeps its reason), the in-memory table, the disk cache and
// progress reports through a callback (library code never prints; the
// public API and Python install a callback that prints when stderr is a
// terminal).
//
// Checks: with setCheck(), the output of every config that benchmarks is
// compared with the first usable config's (some configs run but compute
// something else: a tile that misses a masked edge, a race in a split
// reduction), and a config whose output differs is rejected with the first
// differing element; a config whose kernel spills registers (the local
// memory the driver reports after loading, Trial::spillBytes) is reported,
// and rejected when Options::rejectSpills says so. The final progress report
// lists them.
//
// Parallel compilation: with setCompile(), every config that survives the
// prunes is checked and compiled for the device first, by a small thread
// pool (compileThreads(): TK_COMPILE_THREADS, else one thread per config up
// to the hardware's threads), and only then benchmarked, one config after
// another on the caller's thread. Compiling dominates a first tuning (a
// matmul config costs 0.3-1 s through LLVM and the PTX JIT, its benchmark
// ~0.1 s), so 8 configs on 8 cores take about the time of the slowest one.
//
// Disk cache: one entry per (compiler, identity, key, config list, device)
// under <cacheDir>/autotune/, in CompileCache's verified format (a header
// with the SHA-256 key and payload checksum, written to a temporary file and
// renamed) with a text payload that repeats every identifying line; an entry
// is used only when all of it checks out, otherwise it is ignored (and
// overwritten by the next tuning), never trusted.
#pragma once

#include "driver/CudaDriver.h"
#include "driver/HipDriver.h"
#include "ir/Specialize.h"
#include "runtime/CompileCache.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tk::tune {

/// One point of the tuning space.
struct Config {
  /// Meta-parameters (constexprs) by name, in the order given.
  std::vector<std::pair<std::string, ConstValue>> meta;
  int numWarps = 4;
  int numStages = 3;

  /// "BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3": deterministic,
  /// used in messages and in the disk cache's identity.
  std::string str() const;
};

/// The tuning key from the key arguments' values and every tensor
/// argument's dtype: "n_cols=4096; x_ptr:fp32, y_ptr:fp32". Values are
/// whatever text identifies them (decimal integers, Python reprs); a newline
/// in a value is replaced so the key stays one line.
std::string makeKey(const std::vector<std::pair<std::string, std::string>> &keyValues,
                    const std::vector<std::pair<std::string, std::string>> &tensorDtypes);

/// The outcome of benchmarking one config.
struct Trial {
  bool usable = false;
  bool pruned = false;   // removed by a prune before benchmarking
  bool rejected = false; // ran, but its output differs from the reference config's (or it
                         // spills and Options::rejectSpills asks to reject that)
  double ms = 0;         // median time per launch when usable
  std::string reason;    // why not usable
  /// Local memory per thread of the config's kernel (register spills), as
  /// the driver reports it after loading; -1 when the benchmark does not say.
  int64_t spillBytes = -1;
  std::string note; // a report that does not make the config unusable ("spills ...")
  static Trial time(double ms);
  static Trial failure(std::string reason);
  static Trial rejection(std::string reason);
};

/// A device's limits on one program (one CUDA block).
struct Limits {
  int maxThreadsPerBlock = 1024;
  int sharedBytesPerBlock = 48 * 1024; // static shared memory
  int registersPerBlock = 65536;
};

/// What a config needs; -1 where unknown (not checked).
struct Resources {
  int threads = -1;
  int sharedBytes = -1;
  int registersPerThread = -1;
};

/// "needs 65536 bytes of shared memory per program; the device has 49152",
/// or "" when `need` fits `limits`.
std::string exceedsLimits(const Resources &need, const Limits &limits);

/// The device's limits (cuDeviceGetAttribute); false with `error` without
/// a driver.
bool queryLimits(CudaDriver &driver, Limits &out, std::string &error);

/// The GPU runtime a tuning runs on: the one its kernels were compiled for
/// (CUDA for nvptx, HIP for amdgcn: the target seam of runtime/GpuKernel.h).
/// Limits, memory, streams and events go through it; device addresses are
/// the integers both drivers use, streams and events each driver's own
/// handles (a null stream is the default one).
class Runtime {
public:
  explicit Runtime(CudaDriver &cuda) : cuda_(&cuda) {}
  explicit Runtime(HipDriver &hip) : hip_(&hip) {}

  bool isHip() const { return hip_ != nullptr; }
  std::string deviceName() const;
  /// queryLimits()'s on CUDA; on HIP the threads and LDS per workgroup, and
  /// no register limit (the AMDGPU back end fits the kernel's workgroup).
  bool limits(Limits &out, std::string &error) const;
  bool synchronize(void *stream, std::string &error) const;
  bool allocate(size_t bytes, uint64_t &out, std::string &error) const;
  bool free(uint64_t ptr, std::string &error) const;
  bool fill(uint64_t dst, unsigned char byte, size_t bytes, std::string &error) const;
  bool copyToHost(void *dst, uint64_t src, size_t bytes, std::string &error) const;
  bool copyToDevice(uint64_t dst, const void *src, size_t bytes, std::string &error) const;
  bool createEvent(void *&out, std::string &error) const;
  void destroyEvent(void *event) const;
  bool recordEvent(void *event, void *stream, std::string &error) const;
  bool waitEvent(void *event, std::string &error) const;
  /// The milliseconds between two recorded events that have completed.
  bool elapsedMs(void *start, void *stop, float &ms, std::string &error) const;

private:
  CudaDriver *cuda_ = nullptr;
  HipDriver *hip_ = nullptr;
};

/// The static shared memory a PTX module declares (.shared arrays), in
/// bytes; what the code generator sizes it to.
int sharedBytesInPTX(const std::string &ptx);

/// One progress report: after each benchmarked config and once at the end.
struct Progress {
  std::string kernel;
  std::string key;
  size_t done = 0;  // configs benchmarked (or pruned) so far
  size_t total = 0; // configs after the user's prune
  int best = -1;    // index of the best usable config so far
  double bestMs = 0;
  double elapsedSeconds = 0;
  bool finished = false;
  bool fromCache = false; // the result came from memory or disk, nothing ran
  std::string bestConfig; // Config::str() of `best`
  /// With `finished`: one line per config rejected (another result than the
  /// reference's, spills with rejectSpills) or reported (spills), "[2]
  /// BLOCK=256, num_warps=8, num_stages=3: rejected: ...".
  std::vector<std::string> reports;
};
using ProgressFn = std::function<void(const Progress &)>;

struct Options {
  std::string kernelName;
  /// What identifies the kernel: a hash of its source, signature and
  /// compile options (the caller's). Part of the disk cache's identity.
  std::string identity;
  std::string deviceName;
  /// The cache root; empty: CompileCache's cacheDirectory() ($TK_CACHE_DIR,
  /// else ~/.cache/tk; set but empty: no disk cache). Files go to
  /// <root>/autotune/.
  std::string cacheDir;
  bool diskCache = true; // also off when TK_AUTOTUNE_CACHE=0
  /// Threads that compile configs (setCompile); 0: compileThreads()'s
  /// choice.
  unsigned compileThreads = 0;
  /// Reject (not only report) configs whose kernel spills registers to
  /// local memory (Trial::spillBytes > 0).
  bool rejectSpills = false;
};

/// How many threads compile `jobs` configs: `requested` when nonzero, else
/// TK_COMPILE_THREADS when it is a positive integer, else
/// min(jobs, std::thread::hardware_concurrency()); never more than `jobs`,
/// at least 1.
unsigned compileThreads(size_t jobs, unsigned requested = 0);

/// Calls fn(0) ... fn(n - 1), each once, on `threads` threads (the caller's
/// among them: 1 runs them in order on the caller's thread) and returns when
/// all are done. Indices are handed out in order as threads free up. `fn`
/// must be safe to call concurrently and must not throw.
void parallelFor(size_t n, unsigned threads, const std::function<void(size_t)> &fn);

/// The result for one key.
struct Result {
  std::string key;
  size_t best = 0;
  std::vector<Trial> trials; // one per config, in config order
  double seconds = 0;        // time spent tuning (0 when from disk)
  bool fromDisk = false;
};

class Tuner {
public:
  /// The user's prune: the indices of the configs to keep, given the key.
  using PruneFn =
      std::function<std::vector<size_t>(const std::vector<Config> &, const std::string &key)>;
  /// What config `index` needs; false with `error` when that cannot be
  /// found out (the config is then unusable with that reason).
  using ResourceFn = std::function<bool(size_t index, Resources &out, std::string &error)>;
  using BenchFn = std::function<Trial(size_t index)>;
  /// Compiles config `index` for the device ahead of its benchmark; false
  /// with `error` (the config is then unusable with that reason). Called
  /// concurrently from the compile threads, as is the ResourceFn when both
  /// are set, so both must be thread-safe; an exception counts as a failure.
  using CompileFn = std::function<bool(size_t index, std::string &error)>;
  /// Compares the output config `index` computed (in its benchmark) with
  /// config `reference`'s: true when they agree, false with `difference`
  /// ("element 17 of 'out' is 1.5, the reference's 2.25 (fp32: ...)"). The
  /// reference is the first config that benchmarks usably; it is called
  /// first with index == reference, to keep that output (false then makes
  /// the config unusable with the reason). An exception counts as false.
  using CheckFn = std::function<bool(size_t index, size_t reference, std::string &difference)>;

  Tuner(std::vector<Config> configs, Options options);

  void setPrune(PruneFn prune) { prune_ = std::move(prune); }
  void setResourceCheck(ResourceFn need, Limits limits) {
    need_ = std::move(need);
    limits_ = limits;
  }
  void setProgress(ProgressFn progress) { progress_ = std::move(progress); }
  /// Without a compile function (the default) each config's resource check
  /// runs right before its benchmark, on the caller's thread.
  void setCompile(CompileFn compile) { compile_ = std::move(compile); }
  /// With a check, every usable config's output is compared with the
  /// reference's, and a config whose output differs is rejected (unusable,
  /// Trial::rejected, listed in the final Progress's reports).
  void setCheck(CheckFn check) { check_ = std::move(check); }

  /// The result for `key`: from memory, from disk, or by benchmarking every
  /// config that survives the prunes with `bench`. Null after setting
  /// `error` when no config is usable (each one's reason is listed) or the
  /// prune kept none. The pointer stays valid as long as the tuner.
  const Result *tune(const std::string &key, const BenchFn &bench, std::string &error);
  /// The result already known for `key` (memory or disk), or null.
  const Result *lookup(const std::string &key);

  const std::vector<Config> &configs() const { return configs_; }
  /// The file that holds (or would hold) `key`'s result; "" when the disk
  /// cache is off.
  std::string cachePath(const std::string &key) const;

private:
  std::string identityText(const std::string &key) const;
  CacheKey cacheKey(const std::string &key) const;
  std::string payload(const Result &result) const;
  bool readDisk(const std::string &key, Result &out) const;
  void writeDisk(const Result &result) const;
  Trial prepare(size_t index) const;
  Trial judge(size_t index, Trial trial, int &reference) const;
  void report(const Result &r, size_t done, size_t total, double elapsed, bool finished,
              bool fromCache) const;

  std::vector<Config> configs_;
  Options options_;
  PruneFn prune_;
  ResourceFn need_;
  Limits limits_;
  ProgressFn progress_;
  CompileFn compile_;
  CheckFn check_;
  std::map<std::string, Result> results_;
};

/// How benchmarkWithEvents times a config (Triton's do_bench defaults).
struct BenchOptions {
  double warmupMs = 25; // launches before timing, by estimated time
  double repMs = 100;   // timed launches, by estimated time
  int maxReps = 1000;   // at most this many warm-up and this many timed launches
  bool flushL2 = true;  // overwrite a 256 MiB buffer before each timed launch
};

/// Times `launch` on `stream`: a first launch (and synchronize) that catches
/// failures, an estimate over 5 launches, warm-up launches worth warmupMs,
/// then repMs worth of launches each between two events, with
/// `beforeEach` (resetting arguments to zero, say; may be empty) and the L2
/// flush outside the events. The median of the timed launches. The events,
/// stream synchronizes and flush are `runtime`'s (CUDA's or HIP's).
Trial benchmarkWithEvents(const Runtime &runtime, void *stream,
                          const std::function<bool(std::string &)> &launch,
                          const std::function<bool(std::string &)> &beforeEach,
                          const BenchOptions &options);
/// The same on CUDA.
inline Trial benchmarkWithEvents(CudaDriver &driver, CUstream stream,
                                 const std::function<bool(std::string &)> &launch,
                                 const std::function<bool(std::string &)> &beforeEach,
                                 const BenchOptions &options) {
  return benchmarkWithEvents(Runtime(driver), stream, launch, beforeEach, options);
}

/// The SHA-256 of `text` in hex (CompileCache's); kernel identities.
std::string hashText(const std::string &text);

} // namespace tk::tune
