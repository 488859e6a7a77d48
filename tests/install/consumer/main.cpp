// Built against an installed tk (tests/install): the public headers, tk::tk,
// a tk_add_kernels launcher. Without a GPU it checks what needs none.
#include "vector_add.h"

#include <tk/tk.h>

#include <cstdio>
#include <random>

int main() {
  std::printf("tk %s\n", TK_VERSION_STRING);
  std::string why;
  if (!tk::deviceAvailable(&why)) {
    // The public API reports the missing driver as a tk::Error, never an abort.
    try {
      tk::DeviceMemory m(16);
      return 1;
    } catch (const tk::Error &e) {
      std::printf("no GPU, as expected: %s\n", e.what());
    }
    return tk_aot::vector_add::configs().size() == 1 ? 0 : 1;
  }
  const int n = 100003;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = d(rng);
    y[i] = d(rng);
  }
  tk::DeviceMemory dx = tk::DeviceMemory::fromHost(x), dy = tk::DeviceMemory::fromHost(y);
  tk::DeviceMemory a(n * 4), b(n * 4);
  tk::KernelOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = 256;
  tk::Kernel k = tk::Kernel::fromFile(TK_KERNEL, opts);
  tk::Grid grid((n + 255) / 256);
  k.launch(grid, tk::Stream(), dx, dy, a, n);
  tk_aot::vector_add::launch_config(0, grid, tk::Stream(), dx, dy, b, n);
  tk::synchronize();
  std::vector<float> ra = a.toHost<float>(), rb = b.toHost<float>();
  for (int i = 0; i < n; ++i)
    if (ra[i] != x[i] + y[i] || rb[i] != ra[i]) {
      std::printf("mismatch at %d\n", i);
      return 1;
    }
  std::printf("JIT and AOT vector add match on the GPU\n");
  return 0;
}
