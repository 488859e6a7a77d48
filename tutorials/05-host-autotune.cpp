// Tutorial 5: autotuning and launching tk kernels from host C++.
//
// A host program (an inference server, a test harness) uses tk through its
// public headers alone (<tk/tk.h>) and links libtk: it compiles the softmax
// of tutorial 2 and the matmul of tutorial 4 from their .tk files, lets the
// autotuner pick the fastest config for each shape it sees, launches it,
// checks the result against a CPU reference and prints timings.
//
//   build/tutorials/05-host-autotune [--tutorials DIR] [--first-launch]
//                                    [--tune-matmul SIZE]
//
// Tuning happens on the first launch of each key (the softmax's n_cols, the
// matmul's M, N, K); the results are kept under $TK_CACHE_DIR/autotune/, so a
// second run launches at once (--first-launch times exactly that: one softmax
// launch with n_cols = 4096 on 16 rows, then exit). --tune-matmul 4096 gives
// issue 7's figure, to set beside bench/autotune_triton.py: the 8 matmul
// configs tuned at SIZE^3 in this process alone (compile, JIT and benchmark
// included; with an empty $TK_CACHE_DIR nothing comes from a cache), then
// exit; run again, the same command times a second process's first launch
// (the choice and the cubins come from the disk cache). The configs compile
// in parallel (TK_COMPILE_THREADS threads; by default one per config up to
// the machine's cores) and are then benchmarked one by one. With
// TK_PRINT_AUTOTUNING=1 the winner of each key and the tuning time go to
// stderr. Without a GPU the program says so and exits 0. Built by the normal
// build (tutorials/CMakeLists.txt); outside the tree: find_package(tk) and
// target_link_libraries(app PRIVATE tk::tk).
#include "tutorial_host.h"

#include <tk/tk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using tutorial::Clock;
using tutorial::fromHalf;
using tutorial::msSince;
using tutorial::nextPowerOfTwo;
using tutorial::timeMs;
using tutorial::toHalf;

//
// Softmax: one program per row. BLOCK_SIZE is fixed by the row length (a
// heuristic, Triton's next_power_of_2), so there is one autotuner per block
// size; it tunes num_warps, keyed by n_cols.
//

struct Softmax {
  std::string path;
  std::map<unsigned, tk::Autotuner> byBlock;

  tk::Autotuner &tuner(unsigned block) {
    auto it = byBlock.find(block);
    if (it != byBlock.end())
      return it->second;
    tk::KernelOptions base;
    base.kernel = "softmax_kernel";
    base.signature = "*fp32:16, *fp32:16, i32, i32, i32, i32";
    base.constants["BLOCK_SIZE"] = int(block);
    std::vector<tk::Config> configs;
    for (int warps : {1, 2, 4, 8, 16})
      if (warps * 32 <= int(block))
        configs.push_back(tk::Config({}, warps));
    tk::AutotuneOptions tuning;
    tuning.key = {"n_cols"};
    return byBlock.emplace(block, tk::Autotuner::fromFile(path, base, configs, tuning))
        .first->second;
  }
};

bool runSoftmax(Softmax &sm, int rows, int cols, std::mt19937 &rng, bool firstOnly,
                Clock::time_point programStart) {
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(size_t(rows) * size_t(cols));
  for (float &v : x)
    v = dist(rng);
  tk::DeviceMemory in = tk::DeviceMemory::fromHost(x);
  tk::DeviceMemory out(x.size() * sizeof(float));
  tk::Autotuner &tuner = sm.tuner(nextPowerOfTwo(unsigned(cols)));
  auto grid = [&](const tk::Config &) { return tk::Grid(unsigned(rows)); };
  tk::Stream stream;
  auto launch = [&] { tuner.launch(grid, stream, out, in, cols, cols, rows, cols); };

  auto start = Clock::now();
  launch();
  tk::synchronize();
  double first = msSince(start);
  if (firstOnly) {
    std::printf("softmax %dx%d: first launch %.2f ms after the tuner was created, %.2f ms "
                "after main() began\n",
                rows, cols, first, msSince(programStart));
    return true;
  }
  std::vector<float> got = out.toHost<float>();
  double maxErr = 0;
  for (int r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * size_t(cols)];
    float mx = *std::max_element(row, row + cols);
    double sum = 0;
    for (int c = 0; c < cols; ++c)
      sum += std::exp(double(row[c]) - mx);
    for (int c = 0; c < cols; ++c) {
      double want = std::exp(double(row[c]) - mx) / sum;
      maxErr = std::max(maxErr, std::abs(double(got[size_t(r) * size_t(cols) + size_t(c)]) - want));
    }
  }
  double ms = timeMs(launch, 20);
  const tk::Config &best = tuner.best(grid, std::vector<tk::Arg>{out, in, cols, cols, rows, cols});
  double gbps = 2.0 * double(x.size()) * sizeof(float) / (ms * 1e6);
  bool ok = maxErr < 1e-5;
  std::printf("softmax %5dx%-5d best {%s}  first launch %8.1f ms  launch+sync %.4f ms  %6.1f GB/s"
              "  max err %.2e  %s\n",
              rows, cols, best.str().c_str(), first, ms, gbps, maxErr, ok ? "ok" : "MISMATCH");
  return ok;
}

//
// Matmul (fp16 in, fp16 out, fp32 accumulation): tunes the tile sizes and
// warps, keyed by M, N and K.
//

// The matmul autotuner over the 8 configs bench/autotune_triton.py gives
// Triton. `timeline`: a line per benchmarked config on stdout (the first
// one's time is when the parallel compile phase ended).
tk::Autotuner matmulTuner(const std::string &dir, bool timeline = false) {
  tk::KernelOptions base;
  base.kernel = "matmul_kernel";
  // Types only: the launch specialises on the arguments, as Python's
  // @tk.jit does (include/tk/Kernel.h). Unit column strides become the
  // constant 1 and sizes and row strides that are multiples of 16 say so, so
  // the tiles load with cp.async in 16-byte vectors; 1000x784x400 compiles
  // its own variant (M = 1000 is no multiple of 16).
  base.signature = "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32";
  base.constants["GROUP_SIZE_M"] = 8;
  base.constants["ACTIVATION"] = "";
  std::vector<tk::Config> configs;
  for (auto [bm, bn, bk, w, s] : {std::tuple{128, 128, 32, 4, 3},
                                  {128, 64, 32, 4, 4},
                                  {64, 128, 32, 4, 4},
                                  {64, 64, 32, 4, 4},
                                  {128, 128, 64, 8, 3},
                                  {64, 32, 32, 2, 5},
                                  {32, 64, 32, 2, 5},
                                  {128, 256, 64, 8, 3}})
    configs.push_back(
        tk::Config({{"BLOCK_SIZE_M", bm}, {"BLOCK_SIZE_N", bn}, {"BLOCK_SIZE_K", bk}}, w, s));
  tk::AutotuneOptions tuning;
  tuning.key = {"M", "N", "K"};
  if (timeline)
    tuning.progress = [](const tk::AutotuneProgress &p) {
      std::printf("  [%zu/%zu] %.3f s since tuning began; best so far %.4f ms {%s}%s\n", p.done,
                  p.total, p.elapsedSeconds, p.bestMs, p.bestConfig.c_str(),
                  p.fromCache ? " (from the cache)" : "");
    };
  return tk::Autotuner::fromFile(dir + "/04-matmul.tk", base, configs, tuning);
}

// The largest relative error of `samples` random entries of C = A B against
// a double-precision reference.
double spotCheck(const std::vector<uint16_t> &a, const std::vector<uint16_t> &b,
                 const std::vector<uint16_t> &c, int M, int N, int K, int samples,
                 std::mt19937 &rng) {
  std::uniform_int_distribution<int> pickM(0, M - 1), pickN(0, N - 1);
  double maxErr = 0;
  for (int t = 0; t < samples; ++t) {
    int i = pickM(rng), j = pickN(rng);
    double want = 0;
    for (int k = 0; k < K; ++k)
      want += double(fromHalf(a[size_t(i) * size_t(K) + size_t(k)])) *
              double(fromHalf(b[size_t(k) * size_t(N) + size_t(j)]));
    double got = fromHalf(c[size_t(i) * size_t(N) + size_t(j)]);
    maxErr = std::max(maxErr, std::abs(got - want) / (1.0 + std::abs(want)));
  }
  return maxErr;
}

// Issue 7's figure: tuning the 8 matmul configs at n^3 from the first launch
// to its end, the only tk work this process does (--tune-matmul).
bool tuneMatmulOnly(const std::string &dir, int n, std::mt19937 &rng,
                    Clock::time_point programStart) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> a(size_t(n) * size_t(n)), b(a.size());
  for (uint16_t &v : a)
    v = toHalf(dist(rng));
  for (uint16_t &v : b)
    v = toHalf(dist(rng));
  tk::DeviceMemory da = tk::DeviceMemory::fromHost(a), db = tk::DeviceMemory::fromHost(b);
  tk::DeviceMemory dc(a.size() * 2);
  tk::synchronize();
  auto grid = [&](const tk::Config &c) {
    auto cdiv = [](int64_t x, int64_t y) { return unsigned((x + y - 1) / y); };
    return tk::Grid(cdiv(n, c.intValue("BLOCK_SIZE_M")) * cdiv(n, c.intValue("BLOCK_SIZE_N")));
  };
  std::vector<tk::Arg> args{da, db, dc, n, n, n, n, 1, n, 1, n, 1};
  tk::Stream stream;
  double setup = msSince(programStart);
  auto start = Clock::now();
  tk::Autotuner mm = matmulTuner(dir, true);
  tk::Status s = mm.tryLaunch(grid, args, stream);
  if (!s) {
    std::printf("matmul %d^3: %s\n", n, s.message.c_str());
    return false;
  }
  tk::synchronize();
  double tuned = msSince(start);
  double err = spotCheck(a, b, dc.toHost<uint16_t>(), n, n, n, 64, rng);
  const tk::Config &best = mm.best(grid, args);
  double ms = timeMs([&] { mm.launch(grid, stream, da, db, dc, n, n, n, n, 1, n, 1, n, 1); }, 10);
  const char *threads = std::getenv("TK_COMPILE_THREADS");
  std::printf("tk: autotune %zu matmul configs at %d^3 (first launch: compile, JIT and benchmark "
              "included; compile threads %s): %.2f s; best {%s}; launch+sync %.4f ms (%.1f "
              "TFLOP/s); max rel err %.2e %s; process start to the first launch done %.2f s "
              "(setup %.2f s)\n",
              mm.configs().size(), n, threads ? threads : "default", tuned / 1e3,
              best.str().c_str(), ms, 2.0 * n * n * double(n) / (ms * 1e9), err,
              err < 2e-2 ? "ok" : "MISMATCH", msSince(programStart) / 1e3, setup / 1e3);
  return err < 2e-2;
}

bool runMatmul(const std::string &dir, std::mt19937 &rng) {
  tk::Autotuner mm = matmulTuner(dir);
  bool allOk = true;
  for (auto shape : {std::tuple{512, 512, 512}, {1000, 784, 400}, {4096, 4096, 4096}}) {
    // (Plain ints, not structured bindings: lambdas below capture them.)
    const int M = std::get<0>(shape), N = std::get<1>(shape), K = std::get<2>(shape);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<uint16_t> a(size_t(M) * size_t(K)), b(size_t(K) * size_t(N));
    for (uint16_t &v : a)
      v = toHalf(dist(rng));
    for (uint16_t &v : b)
      v = toHalf(dist(rng));
    tk::DeviceMemory da = tk::DeviceMemory::fromHost(a), db = tk::DeviceMemory::fromHost(b);
    tk::DeviceMemory dc(size_t(M) * size_t(N) * 2);
    auto grid = [&](const tk::Config &c) {
      auto cdiv = [](int64_t x, int64_t y) { return unsigned((x + y - 1) / y); };
      return tk::Grid(cdiv(M, c.intValue("BLOCK_SIZE_M")) * cdiv(N, c.intValue("BLOCK_SIZE_N")));
    };
    tk::Stream stream;
    auto launch = [&] { mm.launch(grid, stream, da, db, dc, M, N, K, K, 1, N, 1, N, 1); };
    auto start = Clock::now();
    tk::Status s =
        mm.tryLaunch(grid, std::vector<tk::Arg>{da, db, dc, M, N, K, K, 1, N, 1, N, 1}, stream);
    if (!s) {
      std::printf("matmul %dx%dx%d: skipped: %s\n", M, N, K, s.message.c_str());
      return true; // the GPU matmul path may not exist yet; not a failure of this tutorial
    }
    tk::synchronize();
    double first = msSince(start);
    double maxErr = spotCheck(a, b, dc.toHost<uint16_t>(), M, N, K, 256, rng);
    double ms = timeMs(launch, 10);
    const tk::Config &best =
        mm.best(grid, std::vector<tk::Arg>{da, db, dc, M, N, K, K, 1, N, 1, N, 1});
    bool ok = maxErr < 2e-2;
    allOk = allOk && ok;
    std::printf("matmul %dx%dx%d best {%s}  first launch %.1f ms  launch+sync %.4f ms  %.1f "
                "TFLOP/s  max rel err %.2e  %s\n",
                M, N, K, best.str().c_str(), first, ms, 2.0 * M * N * K / (ms * 1e9), maxErr,
                ok ? "ok" : "MISMATCH");
  }
  return allOk;
}

//
// Host cost per launch: a raw cuLaunchKernel loop (libcuda looked up with
// dlsym, the kernel's CUfunction from tk) against tk::Kernel::launch (the
// API), a kernel loaded from its image as tkc --aot's launchers do, and
// tk::Autotuner::launch (the key lookup on top). Each loop issues 20000
// launches of a one-program softmax; the best of 5 rounds is reported.
//

void launchOverhead(Softmax &sm) {
  using LaunchFn = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void *, void **, void **);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto raw = lib ? reinterpret_cast<LaunchFn>(dlsym(lib, "cuLaunchKernel")) : nullptr;
  if (!raw) {
    std::printf("launch overhead: skipped (cuLaunchKernel not found)\n");
    return;
  }
  tk::KernelOptions opts;
  opts.kernel = "softmax_kernel";
  opts.signature = "*fp32:16, *fp32:16, i32, i32, i32, i32";
  opts.constants["BLOCK_SIZE"] = 1024;
  tk::Kernel k = tk::Kernel::fromFile(sm.path, opts);
  tk::Kernel::Image image;
  image.name = k.name();
  image.ptx = k.ptx().c_str();
  image.params = k.parameterKinds();
  image.paramNames = k.parameterNames();
  image.numWarps = k.numWarps();
  // (A kernel the compile cache loaded from a cubin has no PTX text: then
  // the image is the compiled kernel itself.)
  tk::Kernel aot = k.ptx().empty() ? k : tk::Kernel::fromImage(image);
  tk::Autotuner &tuner = sm.tuner(1024);
  const int rows = 1, cols = 1024, n = 20000;
  tk::DeviceMemory in(cols * 4), out(cols * 4);
  in.zero();
  uint64_t pin = in.address(), pout = out.address();
  int32_t a = cols, b = cols, c = rows, d = cols;
  void *params[] = {&pout, &pin, &a, &b, &c, &d};
  tk::Stream stream = tk::Stream::create();
  auto grid = [](const tk::Config &) { return tk::Grid(1); };
  auto measure = [&](auto &&launch) {
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 100; ++i)
        launch();
      stream.synchronize();
      auto start = Clock::now();
      for (int i = 0; i < n; ++i)
        launch();
      best = std::min(best, msSince(start) * 1000.0 / n);
      stream.synchronize();
    }
    return best;
  };
  unsigned threads = unsigned(k.numWarps()) * 32;
  double rawUs = measure(
      [&] { raw(k.function(), 1, 1, 1, threads, 1, 1, 0, stream.handle(), params, nullptr); });
  double apiUs = measure([&] { k.launch(tk::Grid(1), stream, out, in, cols, cols, rows, cols); });
  double aotUs = measure([&] { aot.launch(tk::Grid(1), stream, out, in, cols, cols, rows, cols); });
  double tunedUs = measure([&] { tuner.launch(grid, stream, out, in, cols, cols, rows, cols); });
  std::printf("launch overhead (host us per launch, best of 5 x %d): raw cuLaunchKernel %.3f, "
              "tk::Kernel %.3f (%.2fx), image/AOT kernel %.3f (%.2fx), tk::Autotuner %.3f "
              "(%.2fx)\n",
              n, rawUs, apiUs, apiUs / rawUs, aotUs, aotUs / rawUs, tunedUs, tunedUs / rawUs);
}

} // namespace

int main(int argc, char **argv) {
  auto programStart = Clock::now();
  std::string dir = TK_TUTORIALS_DIR;
  bool firstOnly = false;
  int tuneSize = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tutorials" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--first-launch")
      firstOnly = true;
    else if (a == "--tune-matmul" && i + 1 < argc && std::atoi(argv[i + 1]) > 0)
      tuneSize = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--tutorials DIR] [--first-launch] [--tune-matmul SIZE]\n",
                   argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!tk::deviceAvailable(&why)) {
    std::printf("05-host-autotune: skipped: no GPU (%s)\n", why.c_str());
    return 0;
  }
  try {
    tk::DeviceInfo gpu = tk::deviceInfo();
    if (!firstOnly)
      std::printf("%s (sm_%d, %d SMs)\n", gpu.name.c_str(), gpu.computeCapability,
                  gpu.multiprocessors);
    std::mt19937 rng(2026);
    if (tuneSize)
      return tuneMatmulOnly(dir, tuneSize, rng, programStart) ? 0 : 1;
    Softmax sm{dir + "/02-fused-softmax.tk", {}};
    // The key is n_cols alone, so 16 rows find what a full run tuned at
    // 4096x4096 (and keep input generation out of the measurement).
    if (firstOnly)
      return runSoftmax(sm, 16, 4096, rng, true, programStart) ? 0 : 1;
    bool ok = true;
    for (auto [rows, cols] : {std::pair{4096, 4096}, {1823, 781}, {8192, 1024}, {1024, 8192}})
      ok = runSoftmax(sm, rows, cols, rng, false, programStart) && ok;
    ok = runMatmul(dir, rng) && ok;
    launchOverhead(sm);
    std::printf("%s\n", ok ? "all results match the CPU reference" : "MISMATCHES (see above)");
    return ok ? 0 : 1;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "05-host-autotune: error: %s%s%s\n", e.what(),
                 e.cudaError().empty() ? "" : " ", e.cudaError().c_str());
    return 1;
  }
}
