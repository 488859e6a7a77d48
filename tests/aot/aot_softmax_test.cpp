// The code tkc --aot generated for the softmax tutorial (tests/aot/
// CMakeLists.txt): its static API without a GPU; on a GPU, one config
// launched directly and the autotuning dispatcher, both against a CPU
// softmax of random rows.
#include "softmax_aot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

} // namespace

int main() {
  using K = tk_aot::softmax_aot;
  static_assert(K::kNumConfigs == 2);
  expect(K::configs().size() == 2, "two configs");
  expect(K::configs()[0].numWarps == 4 && K::configs()[1].numWarps == 8, "config warps");
  expect(K::options().key == std::vector<std::string>{"n_cols"}, "the key");

  std::string why;
  if (!tk::deviceAvailable(&why)) {
    std::printf("aot_softmax_test: GPU part skipped: %s\n", why.c_str());
    try {
      (void)K::kernel(0);
      expect(false, "loading without a GPU throws");
    } catch (const tk::Error &e) {
      expect(std::string(e.what()).find("no CUDA driver") != std::string::npos,
             "the error says there is no driver");
    }
    std::printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
  }

  const int rows = 333, cols = 1000;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-5, 5);
  std::vector<float> x(size_t(rows) * cols);
  for (float &v : x)
    v = dist(rng);
  tk::DeviceMemory in = tk::DeviceMemory::fromHost(x), out(x.size() * 4);
  auto check = [&](const char *what) {
    std::vector<float> got = out.toHost<float>();
    double maxErr = 0;
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * cols];
      float mx = *std::max_element(row, row + cols);
      double sum = 0;
      for (int c = 0; c < cols; ++c)
        sum += std::exp(double(row[c]) - mx);
      for (int c = 0; c < cols; ++c)
        maxErr = std::max(
            maxErr, std::abs(got[size_t(r) * cols + c] - std::exp(double(row[c]) - mx) / sum));
    }
    std::printf("%s: max error %.2e\n", what, maxErr);
    expect(maxErr < 1e-5, what);
  };
  tk::Stream stream = tk::Stream::create();
  K::launch_config(1, tk::Grid(rows), stream, out, in, cols, cols, rows, cols);
  stream.synchronize();
  check("launch_config(1)");
  out.zero();
  K::options().diskCache = false;
  K::launch([&](const tk::Config &) { return tk::Grid(rows); }, stream, out, in, cols, cols, rows,
            cols);
  stream.synchronize();
  check("the dispatcher");
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
