// The public C++ API on the GPU (part of gpu_tests; skipped without a GPU):
// every scalar kind reaches the kernel with its value (converted at launch
// from the C++ type passed), launch-time specialisation compiles correct
// variants (a unit stride, a ragged size, a misaligned pointer each give the
// right answer), and a kernel loaded from an image (AOT) launches the same.
// tests/unit/runtime/PublicApiFakeTest.cpp checks the bytes and the variants'
// PTX without a GPU; this checks what the GPU computes with them.
#include "tk/tk.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!tk::deviceAvailable(&why))                                                                \
      GTEST_SKIP() << "no GPU: " << why;                                                           \
  } while (0)

// Every scalar parameter widened to fp64 into out[0..9].
const char *kScalars = "import tk\n"
                       "@tk.jit\n"
                       "def scalars(out_ptr, b, c, s, i, u, l, h, bh, f, d):\n"
                       "    tk.store(out_ptr + 0, b.to(tk.float64))\n"
                       "    tk.store(out_ptr + 1, c.to(tk.float64))\n"
                       "    tk.store(out_ptr + 2, s.to(tk.float64))\n"
                       "    tk.store(out_ptr + 3, i.to(tk.float64))\n"
                       "    tk.store(out_ptr + 4, u.to(tk.float64))\n"
                       "    tk.store(out_ptr + 5, l.to(tk.float64))\n"
                       "    tk.store(out_ptr + 6, h.to(tk.float64))\n"
                       "    tk.store(out_ptr + 7, bh.to(tk.float64))\n"
                       "    tk.store(out_ptr + 8, f.to(tk.float64))\n"
                       "    tk.store(out_ptr + 9, d)\n";

tk::KernelOptions scalarOptions() {
  tk::KernelOptions o;
  o.kernel = "scalars";
  o.signature = "*fp64, i1, i8, i16, i32, u32, i64, fp16, bf16, fp32, fp64";
  return o;
}

void expectScalars(const tk::Kernel &k) {
  std::mt19937 rng(42);
  tk::DeviceMemory out(10 * sizeof(double));
  for (int trial = 0; trial < 8; ++trial) {
    int c = int(rng() % 256) - 128, s = int(rng() % 65536) - 32768;
    int i = int(rng());
    unsigned u = unsigned(rng()) | 0x80000000u; // above INT32_MAX
    int64_t l = (int64_t(rng()) << 31) ^ int64_t(rng());
    double f = double(int(rng() % 2000) - 1000) / 8; // exact in fp32
    double d = std::ldexp(double(rng()), -13);
    bool b = trial % 2 == 1;
    // Mixed C++ types: each converts to its parameter's type at launch.
    k.launch(tk::Grid(1), tk::Stream(), out, b, int64_t(c), s, i, u, l, 0.75, tk::Arg::bf16(-3.5),
             f, d);
    tk::synchronize();
    std::vector<double> got = out.toHost<double>();
    std::vector<double> want = {double(b), double(c), double(s), double(i), double(u),
                                double(l), 0.75,      -3.5,      f,         d};
    for (int j = 0; j < 10; ++j)
      EXPECT_EQ(got[j], want[j]) << "parameter " << j << " trial " << trial;
  }
}

TEST(PublicApiGpu, EveryScalarKindReachesTheKernel) {
  REQUIRE_GPU();
  expectScalars(tk::Kernel::fromSource(kScalars, scalarOptions(), "scalars.tk"));
}

TEST(PublicApiGpu, ImageKernelsTakeEveryScalarKind) {
  REQUIRE_GPU();
  tk::KernelOptions o = scalarOptions();
  o.specialize = false;
  tk::Kernel compiled = tk::Kernel::fromSource(kScalars, o, "scalars.tk");
  if (compiled.ptx().empty())
    GTEST_SKIP() << "the compile cache gave a cubin without PTX";
  tk::Kernel::Image im;
  im.name = compiled.name();
  im.ptx = compiled.ptx().c_str();
  im.params = compiled.parameterKinds();
  im.paramNames = compiled.parameterNames();
  im.numWarps = compiled.numWarps();
  expectScalars(tk::Kernel::fromImage(im));
}

// y[i] = x[i * stride] for i < n.
const char *kCopy = "import tk\n"
                    "@tk.jit\n"
                    "def copy(x_ptr, y_ptr, n, stride, BLOCK: tk.constexpr):\n"
                    "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
                    "    v = tk.load(x_ptr + offs * stride, mask=offs < n)\n"
                    "    tk.store(y_ptr + offs, v, mask=offs < n)\n";

TEST(PublicApiGpu, SpecialisedVariantsComputeTheSame) {
  REQUIRE_GPU();
  tk::KernelOptions o;
  o.kernel = "copy";
  o.signature = "*fp32, *fp32, i32, i32";
  o.constants["BLOCK"] = 512;
  tk::Kernel k = tk::Kernel::fromSource(kCopy, o, "copy.tk");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int maxN = 4096;
  std::vector<float> x(size_t(maxN) * 3 + 8);
  for (float &v : x)
    v = dist(rng);
  tk::DeviceMemory dx = tk::DeviceMemory::fromHost(x), dy(size_t(maxN) * sizeof(float) + 16);
  // (n, stride, element offset of x): unit stride with n % 16 == 0 and an
  // aligned x (every fact), a ragged n, stride 2 and 3, x misaligned by one
  // element, and stride 1 again (the first variant, cached).
  struct Case {
    int n, stride, offset;
  };
  std::vector<const void *> functions;
  for (Case c : {Case{4096, 1, 0}, Case{1000, 1, 0}, Case{2048, 2, 0}, Case{999, 3, 0},
                 Case{4096, 1, 1}, Case{4096, 1, 0}}) {
    dy.zero();
    uint64_t xAddress = dx.address() + uint64_t(c.offset) * sizeof(float);
    std::vector<tk::Arg> args{tk::Arg::pointer(xAddress), dy, c.n, c.stride};
    functions.push_back(k.specialized(args).function());
    k.launch(tk::Grid(unsigned((c.n + 511) / 512)), args);
    tk::synchronize();
    std::vector<float> y = dy.toHost<float>();
    int wrong = 0;
    for (int j = 0; j < maxN; ++j) {
      float want = j < c.n ? x[size_t(c.offset) + size_t(j) * size_t(c.stride)] : 0.0f;
      wrong += y[size_t(j)] != want;
    }
    EXPECT_EQ(wrong, 0) << "n " << c.n << " stride " << c.stride << " offset " << c.offset;
  }
  EXPECT_NE(functions[0], functions[2]); // stride 1 and stride 2 differ
  EXPECT_EQ(functions[0], functions[5]); // the same facts, the same variant
}

} // namespace
