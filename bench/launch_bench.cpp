// launch_bench: host time per launch of a tiny kernel through tk's C++ APIs
// (GpuKernel::launch, tk::Kernel::launch, tk::Autotuner::launch) against raw
// driver loops on the same CUfunction, measured in the same run (issue 5's
// target: tk within 15% of raw; issue 7's: the autotuner's launch too).
//
//   launch_bench [--iters N] [--rounds R] [--json FILE] [--stand-in] [--only A,B]
//
// The kernel is the 4-argument add of bench/python_launch_bench.py
// (x, y, out, n; one program of 1024 elements), so the raw figures are the
// floor of the Python launch of the same kernel. Three raw ways to pass the
// parameters are timed (issue 6 asks which is cheapest):
//   raw          cuLaunchKernel with kernelParams (one pointer per parameter)
//   raw_extra    cuLaunchKernel with `extra`: one packed buffer
//                (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE)
//   raw_ex       cuLaunchKernelEx (a CUlaunchConfig, no attributes)
// and tk's three launch paths:
//   tk           GpuKernel::launch with GpuArgs built once
//   tk_kernel    tk::Kernel::launch(grid, stream, x, y, out, n): the public
//                API as tutorials call it (tk::Args built, converted, the
//                specialisation key computed on every launch)
//   tk_autotuner tk::Autotuner::launch with the same arguments, after the
//                first launch tuned its key (two configs): the key lookup
//                on top of tk_kernel
// Each round times N launches back to back on the default stream and one
// synchronize at the end, every variant in turn (so drift in clocks or queue
// state hits all); the figures are the medians over rounds of (loop +
// synchronize) / N. The kernel is written here, so the bench needs no file
// from the tree. Without a GPU it says so and exits with status 1.
// --stand-in runs against the stand-in libcuda of tests/python/fake_cuda.c
// (LD_LIBRARY_PATH=build/tests/unit/runtime/fakecuda): nothing runs on a
// device, so the result is not checked, and the figures are tk's host cost
// above a driver call that costs almost nothing. --only times the named
// variants and raw (for a profiler: `valgrind --tool=callgrind` counts the
// instructions of one path without the others').
#include "driver/CudaDriver.h"
#include "runtime/GpuKernel.h"
#include "tk/tk.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

const char *kAddKernel = R"(import tk


@tk.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)
)";

// cuda.h's CUlaunchConfig (no attributes are passed) and cuLaunchKernelEx,
// looked up here: CudaFunctions has no entry for it.
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  tk::CUstream stream;
  void *attrs;
  unsigned numAttrs;
};
using LaunchKernelEx = tk::CUresult (*)(const LaunchConfig *, tk::CUfunction, void **, void **);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string jsonArray(const std::vector<double> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int fail(const std::string &what) {
  std::fprintf(stderr, "launch_bench: %s\n", what.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  using namespace tk;
  long iters = 100000;
  int rounds = 7;
  std::string jsonPath;
  bool standIn = false;
  std::string only; // ",a,b,": the variants to time besides raw; empty: all
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
      iters = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      jsonPath = argv[++i];
    else if (std::strcmp(argv[i], "--stand-in") == 0)
      standIn = true;
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only.append(",").append(argv[++i]).append(",");
    else {
      std::fprintf(stderr,
                   "usage: launch_bench [--iters N] [--rounds R] [--json FILE] [--stand-in] "
                   "[--only A,B]\n");
      return 2;
    }
  }
  if (iters < 1 || rounds < 1)
    return fail("--iters and --rounds must be at least 1");

  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return fail("no GPU, nothing to measure: " + error);

  GpuCompileOptions opts;
  opts.kernel = "add";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32:16";
  opts.constants["BLOCK"] = ConstValue::ofInt(1024);
  opts.numWarps = 4;
  GpuKernel *kernel = GpuKernel::compile(kAddKernel, "add.tk", opts, error);
  if (!kernel)
    return fail(error);
  constexpr int32_t kN = 1024;
  std::vector<float> hx(kN), hy(kN);
  for (int32_t i = 0; i < kN; ++i)
    hx[size_t(i)] = float(i) * 0.5f, hy[size_t(i)] = float(3 * i % 7);
  DeviceBuffer x, y, out;
  for (DeviceBuffer *b : {&x, &y, &out})
    if (!b->allocate(kN * sizeof(float), error))
      return fail(error);
  if (!x.upload(hx.data(), kN * sizeof(float), error) ||
      !y.upload(hy.data(), kN * sizeof(float), error))
    return fail(error);

  const std::array<unsigned, 3> grid = {1, 1, 1};
  const CudaFunctions &api = cuda->api();
  CUfunction fn = kernel->function();
  const unsigned threads = unsigned(kernel->numWarps()) * 32;

  // The raw loops: what a hand-written C++ launcher does, parameters packed
  // once outside the loop.
  CUdeviceptr px = x.ptr(), py = y.ptr(), pout = out.ptr();
  int32_t n = kN;
  void *rawParams[] = {&px, &py, &pout, &n};
  auto rawLoop = [&]() {
    for (long i = 0; i < iters; ++i)
      if (api.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, nullptr, rawParams, nullptr) != 0)
        return false;
    return true;
  };
  // One packed buffer: three pointers, then the i32 (28 bytes).
  alignas(8) char packed[28];
  std::memcpy(packed, &px, 8);
  std::memcpy(packed + 8, &py, 8);
  std::memcpy(packed + 16, &pout, 8);
  std::memcpy(packed + 24, &n, 4);
  size_t packedSize = sizeof(packed);
  void *extra[] = {reinterpret_cast<void *>(uintptr_t(1)), packed,
                   reinterpret_cast<void *>(uintptr_t(2)), &packedSize, nullptr};
  auto rawExtraLoop = [&]() {
    for (long i = 0; i < iters; ++i)
      if (api.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, nullptr, nullptr, extra) != 0)
        return false;
    return true;
  };
  void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto launchEx =
      libcuda ? reinterpret_cast<LaunchKernelEx>(dlsym(libcuda, "cuLaunchKernelEx")) : nullptr;
  LaunchConfig config = {1, 1, 1, threads, 1, 1, 0, nullptr, nullptr, 0};
  auto rawExLoop = [&]() {
    for (long i = 0; i < iters; ++i)
      if (launchEx(&config, fn, rawParams, nullptr) != 0)
        return false;
    return true;
  };
  // tk's loop: typed arguments checked and packed on every launch.
  GpuArg args[] = {x.arg(), y.arg(), out.arg(), GpuArg::ofI32(kN)};
  auto tkLoop = [&]() {
    for (long i = 0; i < iters; ++i)
      if (!kernel->launch(grid, args, nullptr, error))
        return false;
    return true;
  };
  // The public API on the same kernel and buffers: a tk::Kernel, and an
  // autotuner over two configs keyed on n, tuned by its first launch (in the
  // warm-up) and launching the winner from then on.
  tk::KernelOptions publicOpts;
  publicOpts.kernel = "add";
  publicOpts.signature = opts.signature;
  publicOpts.constants["BLOCK"] = 1024;
  publicOpts.numWarps = 4;
  tk::Kernel publicKernel;
  if (tk::Status s = tk::Kernel::tryFromSource(kAddKernel, publicOpts, "add.tk", publicKernel); !s)
    return fail(s.message);
  tk::KernelOptions tunedBase = publicOpts;
  tunedBase.constants.clear();
  tk::AutotuneOptions tuning;
  tuning.key = {"n"};
  tuning.progress = nullptr;
  // The two configs are one kernel at two warp counts: a short benchmark
  // picks either. The choice goes to the disk cache ($TK_CACHE_DIR), so a
  // second run (under a profiler, say) launches without tuning.
  tuning.warmupMs = 1;
  tuning.repMs = 5;
  tk::Autotuner tuner = tk::Autotuner::fromSource(
      kAddKernel, tunedBase, {tk::Config({{"BLOCK", 1024}}, 4), tk::Config({{"BLOCK", 1024}}, 2)},
      tuning, "add.tk");
  const tk::GridFn tunedGrid = [](const tk::Config &) { return tk::Grid(1); };
  const tk::Stream defaultStream;
  float *fx = reinterpret_cast<float *>(uintptr_t(px));
  float *fy = reinterpret_cast<float *>(uintptr_t(py));
  float *fout = reinterpret_cast<float *>(uintptr_t(pout));
  // The variadic launches tutorials write; they throw tk::Error on failure.
  auto publicLoop = [&]() {
    try {
      for (long i = 0; i < iters; ++i)
        publicKernel.launch(tk::Grid(1), defaultStream, fx, fy, fout, kN);
    } catch (const tk::Error &e) {
      error = e.what();
      return false;
    }
    return true;
  };
  auto tunedLoop = [&]() {
    try {
      for (long i = 0; i < iters; ++i)
        tuner.launch(tunedGrid, defaultStream, fx, fy, fout, kN);
    } catch (const tk::Error &e) {
      error = e.what();
      return false;
    }
    return true;
  };
  auto timed = [&](auto &loop, double &usPerLaunch) {
    auto start = std::chrono::steady_clock::now();
    bool ok = loop() && cuda->synchronize(error);
    auto stop = std::chrono::steady_clock::now();
    usPerLaunch = std::chrono::duration<double, std::micro>(stop - start).count() / double(iters);
    return ok;
  };

  struct Variant {
    const char *name;
    std::function<bool()> loop;
    std::vector<double> times;
  };
  std::vector<Variant> variants = {{"raw", rawLoop, {}}, {"raw_extra", rawExtraLoop, {}}};
  if (launchEx)
    variants.push_back({"raw_ex", rawExLoop, {}});
  variants.push_back({"tk", tkLoop, {}});
  variants.push_back({"tk_kernel", publicLoop, {}});
  variants.push_back({"tk_autotuner", tunedLoop, {}});
  if (!only.empty())
    std::erase_if(variants, [&](const Variant &v) {
      std::string needle;
      needle.append(",").append(v.name).append(",");
      return std::strcmp(v.name, "raw") != 0 && only.find(needle) == std::string::npos;
    });
  double ignored = 0;
  for (Variant &v : variants) // warm-up
    if (!timed(v.loop, ignored))
      return fail(std::string("warm-up launches failed (") + v.name + "): " + error);
  for (int r = 0; r < rounds; ++r)
    for (Variant &v : variants) {
      double t = 0;
      if (!timed(v.loop, t))
        return fail(std::string("launch failed (") + v.name + "): " + error);
      v.times.push_back(t);
    }
  // The stand-in driver runs nothing: there is no result to check.
  std::vector<float> result(kN);
  if (!standIn && !out.download(result.data(), kN * sizeof(float), error))
    return fail(error);
  for (int32_t i = 0; i < kN && !standIn; ++i)
    if (result[size_t(i)] != hx[size_t(i)] + hy[size_t(i)])
      return fail("the add kernel did not write x + y (element " + std::to_string(i) + ": " +
                  std::to_string(result[size_t(i)]) + ")");

  auto medianOf = [&](const char *name) {
    for (const Variant &v : variants)
      if (std::strcmp(v.name, name) == 0)
        return median(v.times);
    return 0.0;
  };
  double rawUs = medianOf("raw");
  double tkUs = medianOf("tk"), ratio = tkUs / rawUs;
  double tunedRatio = medianOf("tk_autotuner") / rawUs;
  std::printf("device: %s%s\n", cuda->deviceName().c_str(),
              standIn ? " (stand-in driver: host cost only, result not checked)" : "");
  std::printf("%ld launches x %d rounds, 1 program of %u threads, 4 arguments, medians:\n", iters,
              rounds, threads);
  for (const Variant &v : variants)
    std::printf("  %-12s %8.3f us/launch  (%.3f x raw)\n", v.name, median(v.times),
                median(v.times) / rawUs);
  // (0 for a variant --only left out.)
  for (auto [what, r] : {std::pair{"tk/raw", ratio}, std::pair{"tk_autotuner/raw", tunedRatio}})
    if (r > 0)
      std::printf("  ratio %s %.3f  (target <= 1.15: %s)\n", what, r,
                  r <= 1.15 ? "met" : "NOT met");
  if (!jsonPath.empty()) {
    FILE *f = std::fopen(jsonPath.c_str(), "w");
    if (!f)
      return fail("cannot write " + jsonPath);
    std::fprintf(f,
                 "{\n  \"device\": \"%s\",\n  \"iters\": %ld,\n  \"rounds\": %d,\n"
                 "  \"threads\": %u,\n  \"raw_us_per_launch\": %.4f,\n"
                 "  \"tk_us_per_launch\": %.4f,\n  \"ratio\": %.4f,\n  \"target_ratio\": 1.15,\n"
                 "  \"autotuner_ratio\": %.4f,\n  \"stand_in\": %s",
                 cuda->deviceName().c_str(), iters, rounds, threads, rawUs, tkUs, ratio, tunedRatio,
                 standIn ? "true" : "false");
    for (const Variant &v : variants)
      std::fprintf(f, ",\n  \"%s_us\": %.4f,\n  \"%s_rounds_us\": %s", v.name, median(v.times),
                   v.name, jsonArray(v.times).c_str());
    std::fprintf(f, "\n}\n");
    std::fclose(f);
  }
  return 0;
}
