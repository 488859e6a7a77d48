// tk/Autotuner.h: pick the fastest of several configs of a kernel for the
// shapes a program sees, remember the choice (in memory and on disk), and
// launch the winner.
//
//   std::vector<tk::Config> configs = {
//       tk::Config({{"BLOCK_SIZE", 1024}}, /*numWarps=*/4),
//       tk::Config({{"BLOCK_SIZE", 1024}}, 8),
//       tk::Config({{"BLOCK_SIZE", 2048}}, 8)};
//   tk::AutotuneOptions tuning;
//   tuning.key = {"n_cols"};              // runtime parameters whose values select a result
//   tk::Autotuner softmax = tk::Autotuner::fromFile("02-fused-softmax.tk", opts, configs, tuning);
//   auto grid = [&](const tk::Config &) { return tk::Grid(n_rows); };
//   softmax.launch(grid, stream, out, in, n_cols, n_cols, n_rows, n_cols);
//
// The first launch for a key benchmarks every config (CUDA events, warm-up,
// repetitions, median), then launches the fastest; later launches with the
// same key launch it directly, from any thread, without a lock, an
// allocation or a Kernel copy (a lock-free table of tuned keys). The
// autotuner keeps the kernels it loaded until it goes. The key is the
// values of the `key` parameters plus the dtype of every pointer parameter;
// results persist under $TK_CACHE_DIR/autotune/ (default ~/.cache/tk), keyed
// also by the kernel source, the options, the config list and the GPU's
// name, so a second process launches without tuning.
//
// Before a config is compiled for the device, configs that need more threads
// or shared memory than the device has are pruned; configs that fail to
// compile or launch are scored unusable with their reason (all unusable: an
// Error listing each reason). In-place kernels name the pointer parameters
// to zero before each timed launch (resetToZero) or to save before tuning and
// restore after each config (restoreValue); those arguments must carry their
// size (a DeviceMemory, or Arg::pointer(address, bytes)).
//
// Progress goes to a callback; the default, printProgress, writes a line to
// stderr while tuning when stderr is a terminal, and with
// TK_PRINT_AUTOTUNING=1 the winner and the time spent. It lives in this
// header: tk's library itself never prints.
#pragma once

#include "tk/Kernel.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

namespace tk {

/// One point of the tuning space: constexpr values and launch options.
struct Config {
  std::map<std::string, Constant> meta;
  int numWarps = 4;
  int numStages = 3;

  Config() = default;
  Config(std::map<std::string, Constant> meta, int numWarps = 4, int numStages = 3)
      : meta(std::move(meta)), numWarps(numWarps), numStages(numStages) {}
  /// An integer meta-parameter (for grid functions); throws when absent.
  int64_t intValue(const std::string &name) const;
  /// "BLOCK_SIZE=1024, num_warps=8, num_stages=3".
  std::string str() const;
};

/// A progress report (see the header comment).
struct AutotuneProgress {
  std::string kernel;
  std::string key;
  size_t done = 0, total = 0; // configs benchmarked or pruned / to do
  int best = -1;              // best config so far, -1 if none yet
  double bestMs = 0;
  std::string bestConfig;
  double elapsedSeconds = 0;
  bool finished = false;
  bool fromCache = false; // nothing was benchmarked: memory or disk had it
  /// With `finished`: a line per config rejected (its output differs from
  /// the first usable config's, or it spills with rejectSpills) or reported
  /// (it spills registers).
  std::vector<std::string> reports;
};
using ProgressCallback = std::function<void(const AutotuneProgress &)>;

/// Whether TK_PRINT_AUTOTUNING asks for each tuning's winner (the knob table's
/// rule: 1, true, yes, on).
bool printAutotuningRequested();

/// The default progress callback (see the header comment).
inline void printProgress(const AutotuneProgress &p) {
  static const bool tty = ::isatty(2) == 1;
  bool printWinner = printAutotuningRequested();
  if (tty && !p.fromCache && p.total > 0) {
    std::fprintf(stderr, "\rtk autotune %s [%zu/%zu] best %.4f ms (%s) %.1f s\033[K",
                 p.kernel.c_str(), p.done, p.total, p.bestMs, p.bestConfig.c_str(),
                 p.elapsedSeconds);
    if (p.finished)
      std::fputc('\n', stderr);
  }
  for (const std::string &line : p.reports)
    std::fprintf(stderr, "tk autotune %s [%s]: %s\n", p.kernel.c_str(), p.key.c_str(),
                 line.c_str());
  if (printWinner && p.finished)
    std::fprintf(stderr, "tk autotuning: %s [%s]: best %s: %.4f ms; %s\n", p.kernel.c_str(),
                 p.key.c_str(), p.bestConfig.c_str(), p.bestMs,
                 p.fromCache ? "from the cache, no tuning"
                             : ("tuned in " + std::to_string(p.elapsedSeconds) + " s").c_str());
}

struct AutotuneOptions {
  /// Runtime parameters (by name) whose values form the tuning key.
  std::vector<std::string> key;
  /// Pointer parameters zeroed before every timed launch.
  std::vector<std::string> resetToZero;
  /// Pointer parameters saved before tuning and restored after each config.
  std::vector<std::string> restoreValue;
  /// Keeps a subset of the configs for the key values (name -> value text);
  /// must keep at least one.
  std::function<std::vector<Config>(const std::vector<Config> &,
                                    const std::map<std::string, std::string> &keyValues)>
      prune;
  double warmupMs = 25; // launches before timing, by estimated time
  double repMs = 100;   // timed launches, by estimated time
  /// Compare every config's output with the first usable config's and reject
  /// those that differ: the pointer arguments that carry their size
  /// (tk::DeviceMemory, Arg::pointer(address, bytes)) are saved before
  /// tuning, put back before each config's check launch and compared after
  /// it, within the tolerance of their dtype (runtime/ResultCheck.h).
  bool checkOutputs = true;
  /// Reject configs whose kernel spills registers (they are reported either
  /// way).
  bool rejectSpills = false;
  bool diskCache = true;
  std::string cacheDir; // empty: $TK_CACHE_DIR, else ~/.cache/tk
  ProgressCallback progress = printProgress;
};

/// The grid for a config: Triton's `grid = lambda META: ...`.
using GridFn = std::function<Grid(const Config &)>;

namespace detail {
struct AutotunerData;
}

class Autotuner {
public:
  /// Configs of one kernel compiled from a .tk file or source text; `base`
  /// gives the kernel, signature and fixed constants, each config adds its
  /// meta-parameters and launch options.
  static Autotuner fromFile(const std::string &path, const KernelOptions &base,
                            std::vector<Config> configs, AutotuneOptions options = {});
  static Autotuner fromSource(const std::string &source, const KernelOptions &base,
                              std::vector<Config> configs, AutotuneOptions options = {},
                              const std::string &fileName = "<source>");
  /// Configs compiled ahead of time (tkc --aot): one image per config.
  /// `identity` names the kernel in the disk cache (tkc writes the source
  /// hash).
  static Autotuner fromImages(const std::string &identity, std::vector<Config> configs,
                              std::vector<Kernel::Image> images, AutotuneOptions options = {});

  /// Tunes for these arguments' key if it is new, then launches the best.
  template <class... Ts> void launch(const GridFn &grid, const Stream &stream, const Ts &...args) {
    const Arg list[] = {Arg(args)...};
    check(tryLaunch(grid, ArgList(list, sizeof...(Ts)), stream));
  }
  void launch(const GridFn &grid, ArgList args, const Stream &stream = Stream()) {
    check(tryLaunch(grid, args, stream));
  }
  Status tryLaunch(const GridFn &grid, ArgList args, const Stream &stream = Stream()) noexcept;

  /// The best config for these arguments, tuning (with `grid`) if needed.
  const Config &best(const GridFn &grid, ArgList args, const Stream &stream = Stream());
  /// Its kernel.
  Kernel bestKernel(const GridFn &grid, ArgList args, const Stream &stream = Stream());
  /// The key text of these arguments: "n_cols=4096; x_ptr:fp32, ...".
  std::string keyOf(ArgList args);

  const std::vector<Config> &configs() const;

private:
  explicit Autotuner(std::shared_ptr<detail::AutotunerData> data) : data_(std::move(data)) {}
  std::shared_ptr<detail::AutotunerData> data_;
};

} // namespace tk
