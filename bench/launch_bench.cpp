// launch_bench: host time per launch of a tiny kernel through tk's C++ API
// (GpuKernel::launch) against raw driver loops on the same CUfunction,
// measured in the same run (issue 5's target: tk within 15% of raw).
//
//   launch_bench [--iters N] [--rounds R] [--json FILE]
//
// The kernel is the 4-argument add of bench/python_launch_bench.py
// (x, y, out, n; one program of 1024 elements), so the raw figures are the
// floor of the Python launch of the same kernel. Three raw ways to pass the
// parameters are timed (issue 6 asks which is cheapest):
//   raw        cuLaunchKernel with kernelParams (one pointer per parameter)
//   raw_extra  cuLaunchKernel with `extra`: one packed buffer
//              (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE)
//   raw_ex     cuLaunchKernelEx (a CUlaunchConfig, no attributes)
// and tk's GpuKernel::launch. Each round times N launches back to back on
// the default stream and one synchronize at the end, every variant in turn
// (so drift in clocks or queue state hits all); the figures are the medians
// over rounds of (loop + synchronize) / N. The kernel is written here, so the
// bench needs no file from the tree. Without a GPU it says so and exits with
// status 1.
#include "driver/CudaDriver.h"
#include "driver/GpuKernel.h"

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
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
      iters = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      jsonPath = argv[++i];
    else {
      std::fprintf(stderr, "usage: launch_bench [--iters N] [--rounds R] [--json FILE]\n");
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
  std::vector<float> result(kN);
  if (!out.download(result.data(), kN * sizeof(float), error))
    return fail(error);
  for (int32_t i = 0; i < kN; ++i)
    if (result[size_t(i)] != hx[size_t(i)] + hy[size_t(i)])
      return fail("the add kernel did not write x + y (element " + std::to_string(i) + ": " +
                  std::to_string(result[size_t(i)]) + ")");

  double rawUs = median(variants[0].times);
  double tkUs = median(variants.back().times), ratio = tkUs / rawUs;
  std::printf("device: %s\n", cuda->deviceName().c_str());
  std::printf("%ld launches x %d rounds, 1 program of %u threads, 4 arguments, medians:\n", iters,
              rounds, threads);
  for (const Variant &v : variants)
    std::printf("  %-10s %8.3f us/launch  (%.3f x raw)\n", v.name, median(v.times),
                median(v.times) / rawUs);
  std::printf("  ratio tk/raw %.3f  (target <= 1.15: %s)\n", ratio,
              ratio <= 1.15 ? "met" : "NOT met");
  if (!jsonPath.empty()) {
    FILE *f = std::fopen(jsonPath.c_str(), "w");
    if (!f)
      return fail("cannot write " + jsonPath);
    std::fprintf(f,
                 "{\n  \"device\": \"%s\",\n  \"iters\": %ld,\n  \"rounds\": %d,\n"
                 "  \"threads\": %u,\n  \"raw_us_per_launch\": %.4f,\n"
                 "  \"tk_us_per_launch\": %.4f,\n  \"ratio\": %.4f,\n  \"target_ratio\": 1.15",
                 cuda->deviceName().c_str(), iters, rounds, threads, rawUs, tkUs, ratio);
    for (const Variant &v : variants)
      std::fprintf(f, ",\n  \"%s_us\": %.4f,\n  \"%s_rounds_us\": %s", v.name, median(v.times),
                   v.name, jsonArray(v.times).c_str());
    std::fprintf(f, "\n}\n");
    std::fclose(f);
  }
  return 0;
}
