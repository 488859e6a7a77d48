// The public C++ API's launch path on a machine without a GPU: the stand-in
// libcuda of tests/python/fake_cuda.c is loaded first (dlopen with
// RTLD_GLOBAL, so tk's dlopen("libcuda.so.1") finds it by its soname), and
// its cuLaunchKernel records the bytes of every parameter. The kernels are
// really compiled to PTX; only the device is pretend.
//
// What is checked: every scalar kind reaches the driver with the
// parameter's width and bits (bool, i8, i16, i32, u32, i64, fp16, bf16,
// fp32, fp64), arguments convert when their value survives and are refused
// with a message otherwise, launch-time specialisation (integers equal to 1
// or divisible by 16 or 8, pointers aligned to 16) compiles one variant per set
// of facts, and AOT images launch the same way.
#include "runtime/PublicApiImpl.h"
#include "tests/unit/runtime/CopyKernel.h"
#include "tk/tk.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Fake {
  void (*setParamSizes)(const int *, int) = nullptr;
  uint64_t (*lastParam)(int) = nullptr;
  int (*launchCount)() = nullptr;
  // Modules: loaded now, loads and unloads since the start, unloads made
  // without the primary context current; the thread's current context.
  int (*loadedModules)() = nullptr;
  int (*moduleLoads)() = nullptr;
  int (*moduleUnloads)() = nullptr;
  int (*unloadsOutsidePrimary)() = nullptr;
  int (*ctxSetCurrent)(void *) = nullptr;
  int (*ctxGetCurrent)(void **) = nullptr;
  // CUDA graphs: the graph calls in order since the reset, graphs alive.
  const char *(*graphCalls)() = nullptr;
  void (*graphCallsReset)() = nullptr;
  int (*liveGraphs)() = nullptr;
  bool loaded = false;
};

template <class F> void bind(void *lib, const char *name, F &f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

Fake &fake() {
  static Fake f = [] {
    Fake out;
    // A fresh cache directory: every kernel here compiles.
    static std::string dir = (std::filesystem::temp_directory_path() /
                              ("tk-public-api-fake-" + std::to_string(getpid())))
                                 .string();
    setenv("TK_CACHE_DIR", dir.c_str(), 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    void *lib = dlopen(TK_FAKE_CUDA, RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      return out;
    out.setParamSizes =
        reinterpret_cast<void (*)(const int *, int)>(dlsym(lib, "fake_set_param_sizes"));
    out.lastParam = reinterpret_cast<uint64_t (*)(int)>(dlsym(lib, "fake_last_param"));
    out.launchCount = reinterpret_cast<int (*)()>(dlsym(lib, "fake_launch_count"));
    bind(lib, "fake_loaded_modules", out.loadedModules);
    bind(lib, "fake_module_loads", out.moduleLoads);
    bind(lib, "fake_module_unloads", out.moduleUnloads);
    bind(lib, "fake_unloads_outside_primary", out.unloadsOutsidePrimary);
    bind(lib, "cuCtxSetCurrent", out.ctxSetCurrent);
    bind(lib, "cuCtxGetCurrent", out.ctxGetCurrent);
    bind(lib, "fake_graph_calls", out.graphCalls);
    bind(lib, "fake_graph_calls_reset", out.graphCallsReset);
    bind(lib, "fake_live_graphs", out.liveGraphs);
    out.loaded = out.setParamSizes && out.lastParam && out.launchCount && out.loadedModules &&
                 out.moduleLoads && out.moduleUnloads && out.unloadsOutsidePrimary &&
                 out.ctxSetCurrent && out.ctxGetCurrent && out.graphCalls && out.graphCallsReset &&
                 out.liveGraphs;
    return out;
  }();
  return f;
}

#define REQUIRE_FAKE()                                                                             \
  if (!fake().loaded || !tk::deviceAvailable())                                                    \
  GTEST_SKIP() << "the stand-in driver " TK_FAKE_CUDA " did not load"

// One parameter of every scalar kind; the kernel stores only the fp32 one.
const char *kScalars = "import tk\n"
                       "@tk.jit\n"
                       "def scalars(out_ptr, b, c, s, i, u, l, h, bh, f, d):\n"
                       "    tk.store(out_ptr, f)\n";

tk::KernelOptions scalarOptions() {
  tk::KernelOptions o;
  o.kernel = "scalars";
  o.signature = "*fp32, i1, i8, i16, i32, u32, i64, fp16, bf16, fp32, fp64";
  return o;
}

uint64_t bitsOf(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}
uint64_t bitsOf(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

TEST(PublicApiFake, EveryScalarKindReachesTheDriverWithItsWidth) {
  REQUIRE_FAKE();
  tk::Kernel k = tk::Kernel::fromSource(kScalars, scalarOptions(), "scalars.tk");
  std::vector<tk::Arg::Kind> want = {
      tk::Arg::Kind::Pointer, tk::Arg::Kind::I1,  tk::Arg::Kind::I8,  tk::Arg::Kind::I16,
      tk::Arg::Kind::I32,     tk::Arg::Kind::I32, tk::Arg::Kind::I64, tk::Arg::Kind::F16,
      tk::Arg::Kind::BF16,    tk::Arg::Kind::F32, tk::Arg::Kind::F64};
  EXPECT_EQ(k.parameterKinds(), want);
  const int sizes[] = {8, 1, 1, 2, 4, 4, 8, 2, 2, 4, 8};
  fake().setParamSizes(sizes, 11);

  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_int_distribution<int> i8(-128, 127), i16(-32768, 32767);
    std::uniform_int_distribution<int64_t> i64(INT64_MIN / 2, INT64_MAX / 2);
    std::uniform_real_distribution<double> real(-1e3, 1e3);
    int8_t c = int8_t(i8(rng));
    int16_t s = int16_t(i16(rng));
    int i = int(rng());
    unsigned u = unsigned(rng());
    int64_t l = i64(rng);
    float f = float(real(rng));
    double d = real(rng);
    bool b = trial % 2;
    float *out = reinterpret_cast<float *>(uintptr_t(0x1000 + 16 * trial));
    int before = fake().launchCount();
    // The C++ types' own kinds; fp16/bf16 through their factories.
    k.launch(tk::Grid(1), tk::Stream(), out, b, c, s, i, u, l, tk::Arg::fp16(1.5),
             tk::Arg::bf16(-2.0), f, d);
    ASSERT_EQ(fake().launchCount(), before + 1);
    EXPECT_EQ(fake().lastParam(0), uint64_t(uintptr_t(out)));
    EXPECT_EQ(fake().lastParam(1), uint64_t(b));
    EXPECT_EQ(fake().lastParam(2), uint64_t(uint8_t(c)));
    EXPECT_EQ(fake().lastParam(3), uint64_t(uint16_t(s)));
    EXPECT_EQ(fake().lastParam(4), uint64_t(uint32_t(i)));
    EXPECT_EQ(fake().lastParam(5), uint64_t(u));
    EXPECT_EQ(fake().lastParam(6), uint64_t(l));
    EXPECT_EQ(fake().lastParam(7), 0x3E00u); // fp16 1.5
    EXPECT_EQ(fake().lastParam(8), 0xC000u); // bf16 -2
    EXPECT_EQ(fake().lastParam(9), bitsOf(f));
    EXPECT_EQ(fake().lastParam(10), bitsOf(d));

    // Conversions that keep the value: ints to narrower and wider ints,
    // double to fp16 / bf16 / fp32, float to fp64.
    k.launch(tk::Grid(1), tk::Stream(), out, 1, int64_t(c), int64_t(s), int64_t(i), int64_t(u), i,
             1.5, -2.0, double(f), f);
    EXPECT_EQ(fake().lastParam(1), 1u);
    EXPECT_EQ(fake().lastParam(2), uint64_t(uint8_t(c)));
    EXPECT_EQ(fake().lastParam(3), uint64_t(uint16_t(s)));
    EXPECT_EQ(fake().lastParam(4), uint64_t(uint32_t(i)));
    EXPECT_EQ(fake().lastParam(5), uint64_t(u));
    EXPECT_EQ(fake().lastParam(6), uint64_t(int64_t(i)));
    EXPECT_EQ(fake().lastParam(7), 0x3E00u);
    EXPECT_EQ(fake().lastParam(8), 0xC000u);
    EXPECT_EQ(fake().lastParam(9), bitsOf(f));
    EXPECT_EQ(fake().lastParam(10), bitsOf(double(f)));
  }
}

TEST(PublicApiFake, ArgumentsThatDoNotConvertAreRefusedByName) {
  REQUIRE_FAKE();
  tk::Kernel k = tk::Kernel::fromSource(kScalars, scalarOptions(), "scalars.tk");
  float *out = reinterpret_cast<float *>(uintptr_t(0x1000));
  auto message = [&](auto... args) {
    std::vector<tk::Arg> list{args...};
    return k.tryLaunch(tk::Grid(1), list).message;
  };
  EXPECT_EQ(message(out, true, 300, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0),
            "kernel 'scalars': argument 2 ('c') is i8 in the signature; the i32 passed, 300, does "
            "not fit (-128 to 255)");
  EXPECT_EQ(message(out, 2, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0),
            "kernel 'scalars': argument 1 ('b') is i1 in the signature; the i32 passed, 2, does "
            "not fit (0 or 1)");
  EXPECT_EQ(message(out, true, 0, 0, int64_t(1) << 40, 0, 0, 0.0, 0.0, 0.0, 0.0),
            "kernel 'scalars': argument 4 ('i') is i32 in the signature; the i64 passed, "
            "1099511627776, does not fit (-2147483648 to 4294967295)");
  EXPECT_EQ(message(out, true, 0, 0, 0, 0, 0, 0.0, 0.0, 1, 0.0),
            "kernel 'scalars': argument 9 ('f') is fp32 in the signature but the argument passed "
            "is i32");
  EXPECT_EQ(message(out, true, 0, 0, 0.5, 0, 0, 0.0, 0.0, 0.0, 0.0),
            "kernel 'scalars': argument 4 ('i') is i32 in the signature but the argument passed "
            "is fp64");
  EXPECT_EQ(message(7, true, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0),
            "kernel 'scalars': argument 0 ('out_ptr') is pointer in the signature but the argument "
            "passed is i32");
  EXPECT_NE(message(out).find("takes 11 arguments (out_ptr, b, c, s, i, u, l, h, bh, f, d) but 1 "
                              "were passed"),
            std::string::npos);
}

tk::KernelOptions copyOptions() {
  tk::KernelOptions o;
  o.kernel = "copy";
  o.signature = "*fp32, *fp32, i32, i32";
  o.constants["BLOCK"] = 256;
  return o;
}

bool hasVectorLoad(const std::string &ptx) {
  return ptx.find("ld.global.v") != std::string::npos; // v2 or v4
}

TEST(PublicApiFake, LaunchesSpecialiseOnUnitStridesDivisibilityAndAlignment) {
  REQUIRE_FAKE();
  tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "copy.tk");
  EXPECT_FALSE(hasVectorLoad(k.ptx())) << "nothing known: scalar loads";
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x20000));
  std::vector<tk::Arg> facts{x, y, 4096, 1};
  tk::Kernel fast = k.specialized(facts);
  EXPECT_NE(fast.ptx(), k.ptx());
  EXPECT_TRUE(hasVectorLoad(fast.ptx())) << fast.ptx();
  // The same facts with other values: the same variant.
  std::vector<tk::Arg> same{reinterpret_cast<float *>(uintptr_t(0x30000)), y, 512, 1};
  EXPECT_EQ(k.specialized(same).ptx(), fast.ptx());
  // A misaligned pointer, n = 4095 and stride 2 each lose a fact.
  std::vector<tk::Arg> misaligned{reinterpret_cast<float *>(uintptr_t(0x10004)), y, 4096, 1};
  std::vector<tk::Arg> ragged{x, y, 4095, 1};
  std::vector<tk::Arg> strided{x, y, 4096, 2};
  EXPECT_FALSE(hasVectorLoad(k.specialized(misaligned).ptx()));
  EXPECT_NE(k.specialized(ragged).ptx(), fast.ptx());
  EXPECT_FALSE(hasVectorLoad(k.specialized(strided).ptx()));
  // launch() uses the variants; the arguments pass unchanged.
  const int sizes[] = {8, 8, 4, 4};
  fake().setParamSizes(sizes, 4);
  int before = fake().launchCount();
  k.launch(tk::Grid(16), facts);
  k.launch(tk::Grid(16), strided);
  EXPECT_EQ(fake().launchCount(), before + 2);
  EXPECT_EQ(fake().lastParam(3), 2u);

  // specialize = false, or the parameter named in doNotSpecialize: the
  // kernel compiled up front serves every launch.
  tk::KernelOptions off = copyOptions();
  off.specialize = false;
  tk::Kernel plain = tk::Kernel::fromSource(kCopy, off, "copy.tk");
  EXPECT_EQ(plain.specialized(facts).ptx(), plain.ptx());
  tk::KernelOptions named = copyOptions();
  named.doNotSpecialize = {"stride"};
  tk::Kernel keepStride = tk::Kernel::fromSource(kCopy, named, "copy.tk");
  EXPECT_FALSE(hasVectorLoad(keepStride.specialized(facts).ptx()));
  // Facts the signature states stay whatever the arguments say.
  tk::KernelOptions stated = copyOptions();
  stated.signature = "*fp32:16, *fp32:16, i32:16, i32:1";
  tk::Kernel given = tk::Kernel::fromSource(kCopy, stated, "copy.tk");
  EXPECT_TRUE(hasVectorLoad(given.ptx()));
  EXPECT_EQ(given.specialized(facts).ptx(), given.ptx());
}

const tk::KernelRemark *findRemark(const std::vector<tk::KernelRemark> &remarks,
                                   const std::string &kind, uint32_t line) {
  for (const tk::KernelRemark &r : remarks)
    if (r.kind == kind && r.line == line)
      return &r;
  return nullptr;
}

int64_t remarkNumber(const tk::KernelRemark &r, const std::string &name) {
  for (const auto &[n, value] : r.numbers)
    if (n == name)
      return value;
  return -1;
}

// KernelOptions::remarks: the compile's remarks on the kernel, located at
// the source's lines, with the same code as without; the variant compiled
// for a launch's facts has its own.
TEST(PublicApiFake, RemarksAreRecordedWhenAskedForAndDoNotChangeTheCode) {
  REQUIRE_FAKE();
  tk::KernelOptions plainOptions = copyOptions();
  plainOptions.signature = "*fp32:16, *fp32:16, i32, i32";
  tk::Kernel plain = tk::Kernel::fromSource(kCopy, plainOptions, "remarks-copy.tk");
  EXPECT_TRUE(plain.remarks().empty());

  tk::KernelOptions o = plainOptions;
  o.remarks = true;
  tk::Kernel k = tk::Kernel::fromSource(kCopy, o, "remarks-copy.tk");
  EXPECT_EQ(k.ptx(), plain.ptx());
  // Line 5 is the strided load: 4-byte accesses, limited by the stride.
  const tk::KernelRemark *load = findRemark(k.remarks(), "vectorize", 5);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->status, "missed");
  EXPECT_EQ(load->function, "copy");
  EXPECT_EQ(load->file, "remarks-copy.tk");
  EXPECT_EQ(load->col, 9u);
  EXPECT_EQ(remarkNumber(*load, "vector_bytes"), 4);
  EXPECT_NE(load->message.find("consecutive"), std::string::npos) << load->message;
  EXPECT_EQ(load->rendered.rfind("remarks-copy.tk:5:9: remark: ", 0), 0u) << load->rendered;
  EXPECT_NE(load->rendered.find("[vectorize]"), std::string::npos);
  EXPECT_NE(findRemark(k.remarks(), "coalesce", 5), nullptr);

  // With the stride specialised to 1 the same load is as wide as the layout
  // allows: 256 elements on 128 threads, 2 each, 8 bytes.
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x20000));
  std::vector<tk::Arg> facts{x, y, 4096, 1};
  tk::Kernel fast = k.specialized(facts);
  const tk::KernelRemark *wide = findRemark(fast.remarks(), "vectorize", 5);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(remarkNumber(*wide, "vector_bytes"), 8) << wide->message;
  EXPECT_EQ(remarkNumber(*wide, "per_thread"), 2) << wide->message;
}

// The rule itself (no driver needed): which facts a launch's arguments give.
TEST(PublicApiFake, TheFactsOfALaunchFollowPythonsRule) {
  tk::GpuCompileOptions base;
  base.kernel = "copy";
  base.signature = "*fp32, *fp32, i32, i32";
  base.constants["BLOCK"] = tk::ConstValue::ofInt(256);
  auto facts = [&](const std::string &source, std::vector<std::string> generic,
                   std::vector<tk::Arg> args) {
    tk::detail::Specializer s;
    std::string error;
    EXPECT_TRUE(s.init(source, "copy.tk", base, generic, error)) << error;
    return s.describe(s.keyOf(args));
  };
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *odd = reinterpret_cast<float *>(uintptr_t(0x10008));
  EXPECT_EQ(facts(kCopy, {}, {x, odd, 4096, 1}), "x_ptr:16, n:16, stride:1");
  EXPECT_EQ(facts(kCopy, {}, {x, x, -32, 0}), "x_ptr:16, y_ptr:16, n:16, stride:16");
  EXPECT_EQ(facts(kCopy, {}, {odd, odd, 1, int64_t(17)}), "n:1");
  // tk's ":8" (compiler/ArgSpecialization.h): 8 | n but not 16.
  EXPECT_EQ(facts(kCopy, {}, {x, odd, 1000, int64_t(-8)}), "x_ptr:16, n:8, stride:8");
  EXPECT_EQ(facts(kCopy, {"stride"}, {x, x, 4096, 1}), "x_ptr:16, y_ptr:16, n:16");
  // The kernel's own decorator keeps a parameter generic too.
  std::string decorated = kCopy;
  decorated.replace(decorated.find("@tk.jit"), 7, "@tk.jit(do_not_specialize=['stride', 2])");
  EXPECT_EQ(facts(decorated, {}, {x, x, 4096, 1}), "x_ptr:16, y_ptr:16");
  // The options of a key: the facts in the signature, the constants kept.
  tk::detail::Specializer s;
  std::string error;
  ASSERT_TRUE(s.init(kCopy, "copy.tk", base, {}, error)) << error;
  std::vector<tk::Arg> args{x, odd, 4096, 1};
  tk::GpuCompileOptions o = s.optionsFor(base, s.keyOf(args));
  EXPECT_EQ(o.signature, "*fp32:16, *fp32, i32:16, i32:1, 0");
  EXPECT_EQ(o.constants.at("BLOCK").intValue, 256);
  std::vector<tk::Arg> eights{x, odd, 1000, 24};
  EXPECT_EQ(s.optionsFor(base, s.keyOf(eights)).signature, "*fp32:16, *fp32, i32:8, i32:8, 0");
  // A base signature's fact and an argument's: the stronger divisibility.
  tk::GpuCompileOptions stated = base;
  stated.signature = "*fp32, *fp32, i32:8, i32:16";
  tk::detail::Specializer t;
  ASSERT_TRUE(t.init(kCopy, "copy.tk", stated, {}, error)) << error;
  std::vector<tk::Arg> mixed{x, odd, 4096, 24};
  EXPECT_EQ(t.optionsFor(stated, t.keyOf(mixed)).signature, "*fp32:16, *fp32, i32:16, i32:16, 0");
}

// ":8" specialises a launch from C++ as it does from Python: an fp16 copy
// whose n is a multiple of 8 (1000) loads two halves per instruction, as
// with 16 | n, where n = 1001 needs one 2-byte load per element.
TEST(PublicApiFake, LaunchesSpecialiseOnDivisibilityByEight) {
  REQUIRE_FAKE();
  tk::KernelOptions o = copyOptions();
  o.signature = "*fp16, *fp16, i32, i32";
  tk::Kernel k = tk::Kernel::fromSource(kCopy, o, "copy.tk");
  void *x = reinterpret_cast<void *>(uintptr_t(0x10000));
  void *y = reinterpret_cast<void *>(uintptr_t(0x20000));
  auto scalarLoads = [](const std::string &ptx) {
    return ptx.find("ld.global.b16") != std::string::npos;
  };
  std::vector<tk::Arg> eight{x, y, 1000, 1}, odd{x, y, 1001, 1};
  EXPECT_TRUE(scalarLoads(k.ptx())) << "nothing known: one load per element";
  tk::Kernel byEight = k.specialized(eight);
  EXPECT_FALSE(scalarLoads(byEight.ptx())) << byEight.ptx();
  EXPECT_TRUE(scalarLoads(k.specialized(odd).ptx()));
  EXPECT_EQ(byEight.ptx(), k.specialized(std::vector<tk::Arg>{x, y, 8, 1}).ptx());
  const int sizes[] = {8, 8, 4, 4};
  fake().setParamSizes(sizes, 4);
  int before = fake().launchCount();
  k.launch(tk::Grid(4), eight);
  EXPECT_EQ(fake().launchCount(), before + 1);
  EXPECT_EQ(fake().lastParam(2), 1000u);
}

// Tuning on n, in memory only, quietly, with the shortest benchmarks.
tk::AutotuneOptions quickTuning() {
  tk::AutotuneOptions tuning;
  tuning.key = {"n"};
  tuning.diskCache = false;
  tuning.progress = nullptr;
  tuning.warmupMs = 0.01;
  tuning.repMs = 0.01;
  return tuning;
}

// kCopy with BLOCK left to the configs.
tk::KernelOptions tunedCopyOptions() {
  tk::KernelOptions base = copyOptions();
  base.constants.erase("BLOCK");
  return base;
}

TEST(PublicApiFake, TheAutotunerSpecialisesToo) {
  REQUIRE_FAKE();
  tk::KernelOptions base = tunedCopyOptions();
  tk::AutotuneOptions tuning = quickTuning();
  tk::Autotuner t = tk::Autotuner::fromSource(
      kCopy, base, {tk::Config({{"BLOCK", 512}}), tk::Config({{"BLOCK", 1024}})}, tuning,
      "copy.tk");
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x20000));
  auto grid = [](const tk::Config &) { return tk::Grid(1); };
  std::vector<tk::Arg> facts{x, y, 4096, 1}, strided{x, y, 4096, 3};
  tk::Kernel fast = t.bestKernel(grid, facts);
  tk::Kernel slow = t.bestKernel(grid, strided);
  EXPECT_TRUE(hasVectorLoad(fast.ptx()));
  EXPECT_FALSE(hasVectorLoad(slow.ptx()));
  EXPECT_TRUE(t.tryLaunch(grid, strided).ok());
}

// The image tkc --aot would write for `compiled`, loaded from its PTX.
tk::Kernel imageOf(const tk::Kernel &compiled) {
  tk::Kernel::Image im;
  im.name = compiled.name();
  im.ptx = compiled.ptx().c_str();
  im.params = compiled.parameterKinds();
  im.paramNames = compiled.parameterNames();
  return tk::Kernel::fromImage(im);
}

TEST(PublicApiFake, ImagesTakeEveryKindAndConvert) {
  REQUIRE_FAKE();
  tk::Kernel compiled = tk::Kernel::fromSource(kScalars, scalarOptions(), "scalars.tk");
  tk::Kernel k = imageOf(compiled);
  const int sizes[] = {8, 1, 1, 2, 4, 4, 8, 2, 2, 4, 8};
  fake().setParamSizes(sizes, 11);
  float *out = reinterpret_cast<float *>(uintptr_t(0x1000));
  k.launch(tk::Grid(1), tk::Stream(), out, true, -5, 1000, 3, 4, int64_t(-9), 0.5f, 3.0, 0.75,
           2.5f);
  EXPECT_EQ(fake().lastParam(1), 1u);
  EXPECT_EQ(fake().lastParam(2), uint64_t(uint8_t(-5)));
  EXPECT_EQ(fake().lastParam(3), 1000u);
  EXPECT_EQ(fake().lastParam(6), uint64_t(int64_t(-9)));
  EXPECT_EQ(fake().lastParam(7), 0x3800u); // fp16 0.5
  EXPECT_EQ(fake().lastParam(8), 0x4040u); // bf16 3
  EXPECT_EQ(fake().lastParam(9), bitsOf(0.75f));
  EXPECT_EQ(fake().lastParam(10), bitsOf(2.5));
  std::vector<tk::Arg> bad{out, true, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 1};
  EXPECT_EQ(k.tryLaunch(tk::Grid(1), bad).message,
            "kernel 'scalars': argument 10 ('d') is fp64 in the signature but the argument "
            "passed is i32");
}

//
// Module lifetime: a compiled kernel's CUmodule is unloaded when the last
// handle that uses it goes, with the primary context current.
//

// Each test compiles kCopy under its own file name (part of the compile
// key), so that no other test's kernel is live.
tk::KernelOptions plainCopyOptions() {
  tk::KernelOptions o = copyOptions();
  o.specialize = false;
  return o;
}

struct ModuleCounts {
  int loaded, loads, unloads, outside;
  // The counts at the start of a test, which launches kCopy (the stand-in
  // reads its four parameters' bytes).
  static ModuleCounts atStart() {
    const int sizes[] = {8, 8, 4, 4};
    fake().setParamSizes(sizes, 4);
    return {fake().loadedModules(), fake().moduleLoads(), fake().moduleUnloads(),
            fake().unloadsOutsidePrimary()};
  }
};

TEST(PublicApiFake, TheLastHandleUnloadsTheModule) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  tk::KernelOptions opts = plainCopyOptions();
  tk::Kernel k = tk::Kernel::fromSource(kCopy, opts, "last-handle.tk");
  EXPECT_EQ(fake().moduleLoads(), base.loads + 1);
  EXPECT_EQ(fake().loadedModules(), base.loaded + 1);
  // Copies share the module; compiling the same thing while one lives gives
  // the same kernel, without a load.
  tk::Kernel copy = k;
  tk::Kernel again = tk::Kernel::fromSource(kCopy, opts, "last-handle.tk");
  EXPECT_EQ(again.function(), k.function());
  EXPECT_EQ(fake().moduleLoads(), base.loads + 1);
  k = tk::Kernel();
  again = tk::Kernel();
  EXPECT_EQ(fake().moduleUnloads(), base.unloads) << "a copy still holds the kernel";
  std::vector<tk::Arg> args{reinterpret_cast<float *>(uintptr_t(0x10000)),
                            reinterpret_cast<float *>(uintptr_t(0x20000)), 100, 1};
  EXPECT_TRUE(copy.tryLaunch(tk::Grid(1), args).ok());
  // The last handle goes on a thread whose current context is not the
  // primary one: the unload switches for the call and switches back.
  ASSERT_EQ(fake().ctxSetCurrent(nullptr), 0);
  copy = tk::Kernel();
  EXPECT_EQ(fake().moduleUnloads(), base.unloads + 1);
  EXPECT_EQ(fake().loadedModules(), base.loaded);
  EXPECT_EQ(fake().unloadsOutsidePrimary(), base.outside);
  void *current = reinterpret_cast<void *>(1);
  ASSERT_EQ(fake().ctxGetCurrent(&current), 0);
  EXPECT_EQ(current, nullptr) << "the thread's own context is restored";
  // Compiled again: loaded again (from the compile cache), and unloaded on a
  // thread that never made any context current.
  k = tk::Kernel::fromSource(kCopy, opts, "last-handle.tk");
  EXPECT_EQ(fake().moduleLoads(), base.loads + 2);
  std::thread([k = std::move(k)]() mutable { k = tk::Kernel(); }).join();
  EXPECT_EQ(fake().moduleUnloads(), base.unloads + 2);
  EXPECT_EQ(fake().loadedModules(), base.loaded);
  EXPECT_EQ(fake().unloadsOutsidePrimary(), base.outside);
  std::string error;
  ASSERT_TRUE(tk::CudaDriver::get(error)->makeCurrent(error)) << error;
}

TEST(PublicApiFake, VariantsImagesAndAutotunersReleaseTheirModules) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x20000));
  std::vector<tk::Arg> facts{x, y, 4096, 1}, strided{x, y, 4096, 3}, ragged{x, y, 4095, 3};
  tk::Kernel fast;
  {
    // The kernel and three variants: four modules.
    tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "release.tk");
    for (const auto &args : {facts, strided, ragged, facts})
      ASSERT_TRUE(k.tryLaunch(tk::Grid(1), args).ok());
    EXPECT_EQ(fake().loadedModules(), base.loaded + 4);
    // A variant taken out lives on after the kernel that made it.
    fast = k.specialized(facts);
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded + 1);
  EXPECT_TRUE(fast.tryLaunch(tk::Grid(1), facts).ok());
  fast = tk::Kernel();
  EXPECT_EQ(fake().loadedModules(), base.loaded);

  // An image kernel owns the module it loaded.
  {
    tk::KernelOptions opts = plainCopyOptions();
    tk::Kernel compiled = tk::Kernel::fromSource(kCopy, opts, "release-image.tk");
    tk::Kernel image = imageOf(compiled);
    EXPECT_EQ(fake().loadedModules(), base.loaded + 2);
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded);

  // An autotuner holds each config's kernel it loaded until it goes.
  {
    tk::KernelOptions opts = tunedCopyOptions();
    tk::AutotuneOptions tuning = quickTuning();
    tk::Autotuner t = tk::Autotuner::fromSource(
        kCopy, opts, {tk::Config({{"BLOCK", 64}}), tk::Config({{"BLOCK", 128}})}, tuning,
        "release-tuned.tk");
    auto grid = [](const tk::Config &) { return tk::Grid(1); };
    ASSERT_TRUE(t.tryLaunch(grid, facts).ok());
    ASSERT_TRUE(t.tryLaunch(grid, facts).ok());
    EXPECT_EQ(fake().loadedModules(), base.loaded + 2);
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded);
  EXPECT_EQ(fake().moduleLoads() - base.loads, fake().moduleUnloads() - base.unloads);
}

TEST(PublicApiFake, AKernelThatFailsItsResourceCheckUnloadsItsModule) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  // The device says a program may have 64 threads; 4 warps are 128.
  setenv("FAKE_CUDA_MAX_THREADS", "64", 1);
  tk::Kernel k;
  tk::Status s = tk::Kernel::tryFromSource(kCopy, copyOptions(), "resources.tk", k);
  unsetenv("FAKE_CUDA_MAX_THREADS");
  EXPECT_NE(s.message.find("out of resources: threads"), std::string::npos) << s.message;
  EXPECT_EQ(fake().moduleLoads(), base.loads + 1);
  EXPECT_EQ(fake().loadedModules(), base.loaded);
}

TEST(PublicApiFake, PinnedDriverKernelsStayLoaded) {
  REQUIRE_FAKE();
  tk::GpuCompileOptions opts = tk::detail::toGpuOptions(copyOptions());
  std::string error;
  std::shared_ptr<const tk::GpuKernel> shared =
      tk::GpuKernel::compileShared(kCopy, "pinned.tk", opts, error);
  ASSERT_TRUE(shared) << error;
  // compile() pins the live kernel: the same object, loaded until exit.
  tk::GpuKernel *pinned = tk::GpuKernel::compile(kCopy, "pinned.tk", opts, error);
  EXPECT_EQ(pinned, shared.get());
  int unloads = fake().moduleUnloads();
  shared.reset();
  EXPECT_EQ(fake().moduleUnloads(), unloads);
  EXPECT_EQ(tk::GpuKernel::compile(kCopy, "pinned.tk", opts, error), pinned);
  EXPECT_EQ(tk::GpuKernel::compileShared(kCopy, "pinned.tk", opts, error).get(), pinned);
}

// Many kernels made and dropped: the table of live kernels does not keep
// them (every module is unloaded) and answers for the live ones.
TEST(PublicApiFake, KernelsMadeAtRunTimeDoNotAccumulate) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  tk::KernelOptions opts = plainCopyOptions();
  tk::Kernel kept = tk::Kernel::fromSource(kCopy, opts, "kept.tk");
  for (int i = 0; i < 150; ++i) {
    tk::Kernel k = tk::Kernel::fromSource(kCopy, opts, "made-" + std::to_string(i) + ".tk");
    ASSERT_EQ(fake().loadedModules(), base.loaded + 2) << i;
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded + 1);
  EXPECT_EQ(tk::Kernel::fromSource(kCopy, opts, "kept.tk").function(), kept.function());
  EXPECT_EQ(fake().moduleLoads(), base.loads + 151);
}

//
// Concurrency: launches from many threads while keys are first seen (and
// tuned or compiled), and the last handle going while another thread
// launches.
//

TEST(PublicApiFake, AutotunerLaunchesFromManyThreads) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  {
    tk::KernelOptions opts = tunedCopyOptions();
    tk::AutotuneOptions tuning = quickTuning();
    std::atomic<int> tunings{0};
    tuning.progress = [&](const tk::AutotuneProgress &p) {
      if (p.finished && !p.fromCache)
        ++tunings;
    };
    tk::Autotuner t = tk::Autotuner::fromSource(
        kCopy, opts, {tk::Config({{"BLOCK", 256}}), tk::Config({{"BLOCK", 512}}, 8)}, tuning,
        "threads-tuned.tk");
    // The grid depends on the config, so a launch reads the winner's.
    auto grid = [](const tk::Config &c) { return tk::Grid(unsigned(c.intValue("BLOCK"))); };
    const int kThreads = 4, kLaunches = 500;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
    for (int id = 0; id < kThreads; ++id)
      threads.emplace_back([&, id] {
        for (int i = 0; i < kLaunches; ++i) {
          // Four key values (two facts each way), in a different order per
          // thread; every other launch misaligns y (a second variant).
          int n = 16 * (1 + (i + id) % 4);
          float *y = reinterpret_cast<float *>(uintptr_t(0x20000 + 4 * (i % 2)));
          std::vector<tk::Arg> args{x, y, n, 1};
          if (!t.tryLaunch(grid, args).ok())
            ++failures;
        }
      });
    for (std::thread &th : threads)
      th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(tunings.load(), 4) << "each key tuned once";
    // Each launch found what a single-threaded caller would.
    for (int n : {16, 32, 48, 64}) {
      std::vector<tk::Arg> args{x, x, n, 1};
      EXPECT_EQ(t.keyOf(args).rfind("n=" + std::to_string(n), 0), 0u);
      const tk::Config &best = t.best(grid, args);
      EXPECT_TRUE(best.intValue("BLOCK") == 256 || best.intValue("BLOCK") == 512);
    }
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded);
}

TEST(PublicApiFake, VariantsCompileOnceWhenThreadsRaceForThem) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  {
    tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "threads-variants.tk");
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int id = 0; id < 4; ++id)
      threads.emplace_back([&, id] {
        for (int i = 0; i < 300; ++i) {
          // Three sets of facts: stride 1, stride 3 with n % 16 == 0, neither.
          int which = (i + id) % 3;
          std::vector<tk::Arg> args{reinterpret_cast<float *>(uintptr_t(0x10000)),
                                    reinterpret_cast<float *>(uintptr_t(0x20000)),
                                    which == 2 ? 17 : 64, which == 0 ? 1 : 3};
          if (!k.tryLaunch(tk::Grid(1), args).ok())
            ++failures;
        }
      });
    for (std::thread &th : threads)
      th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(fake().loadedModules(), base.loaded + 4) << "the kernel and three variants";
  }
  EXPECT_EQ(fake().loadedModules(), base.loaded);
}

TEST(PublicApiFake, TheLastHandleMayGoWhileAnotherThreadLaunches) {
  REQUIRE_FAKE();
  ModuleCounts base = ModuleCounts::atStart();
  tk::KernelOptions opts = plainCopyOptions();
  tk::Kernel k = tk::Kernel::fromSource(kCopy, opts, "launching.tk");
  std::atomic<int> launched{0};
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  // The launcher launches through its own copy until told to stop.
  std::thread launcher([&, mine = k] {
    std::vector<tk::Arg> args{reinterpret_cast<float *>(uintptr_t(0x10000)),
                              reinterpret_cast<float *>(uintptr_t(0x20000)), 64, 1};
    while (!stop) {
      if (!mine.tryLaunch(tk::Grid(1), args).ok())
        ++failures;
      ++launched;
    }
  });
  while (launched < 100)
    std::this_thread::yield();
  k = tk::Kernel(); // the launcher's copy keeps the module
  int before = launched;
  while (launched < before + 100)
    std::this_thread::yield();
  EXPECT_EQ(fake().loadedModules(), base.loaded + 1);
  stop = true;
  launcher.join(); // its copy goes with the lambda
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(fake().loadedModules(), base.loaded);
}

//
// CUDA graphs (tk::Graph): the stand-in records a capturing stream's
// launches instead of running them, and cuGraphLaunch counts them as run.
//

// A copy kernel compiled and launched once (its variant for these facts
// compiled), as a program warms up before capturing.
struct GraphFixture {
  tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "graph-copy.tk");
  float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x20000));
  tk::Stream stream = tk::Stream::create();
  GraphFixture() {
    const int sizes[] = {8, 8, 4, 4};
    fake().setParamSizes(sizes, 4);
    k.launch(tk::Grid(3), stream, x, y, 777, 1);
    fake().graphCallsReset();
  }
  void step() const {
    k.launch(tk::Grid(3), stream, x, y, 777, 1);
    k.launch(tk::Grid(5), stream, y, x, 777, 1);
  }
};

// Sets an environment knob of the stand-in for one scope.
struct Knob {
  const char *name;
  explicit Knob(const char *name) : name(name) { setenv(name, "1", 1); }
  ~Knob() { unsetenv(name); }
};

TEST(PublicApiFake, AGraphCapturesLaunchesAndReplaysThem) {
  REQUIRE_FAKE();
  GraphFixture f;
  const int graphs = fake().liveGraphs();
  const int before = fake().launchCount();
  {
    tk::Graph g = tk::Graph::capture(f.stream, [&] { f.step(); });
    EXPECT_TRUE(g.valid());
    EXPECT_NE(g.executable(), nullptr);
    EXPECT_EQ(fake().launchCount(), before) << "captured launches do not run";
    EXPECT_STREQ(fake().graphCalls(), "begin record record end instantiate");
    EXPECT_EQ(fake().liveGraphs(), graphs + 2);
    g.launch(f.stream);
    g.launch(f.stream);
    g.launch(f.stream);
    EXPECT_EQ(fake().launchCount(), before + 6);
    // Moved: the new owner replays and destroys; the old one is empty.
    tk::Graph h = std::move(g);
    EXPECT_FALSE(g.valid());
    EXPECT_EQ(g.tryLaunch(f.stream).message,
              "tk::Graph::launch: the graph is empty (default-constructed or moved from)");
    EXPECT_TRUE(h.tryLaunch(f.stream).ok());
    EXPECT_EQ(fake().launchCount(), before + 8);
    EXPECT_EQ(fake().liveGraphs(), graphs + 2);
  }
  EXPECT_STREQ(fake().graphCalls(), "begin record record end instantiate launch launch launch "
                                    "launch destroy-exec destroy");
  EXPECT_EQ(fake().liveGraphs(), graphs);
  // beginCapture / endCapture by hand, the same.
  fake().graphCallsReset();
  tk::Graph::beginCapture(f.stream);
  f.step();
  tk::Graph g = tk::Graph::endCapture(f.stream);
  g.launch(f.stream);
  EXPECT_STREQ(fake().graphCalls(), "begin record record end instantiate launch");
  EXPECT_EQ(fake().launchCount(), before + 10);
}

TEST(PublicApiFake, GraphErrorsCarryTheDriversErrorAndLeaveNothingBehind) {
  REQUIRE_FAKE();
  GraphFixture f;
  const int graphs = fake().liveGraphs();
  // The legacy default stream cannot be captured.
  try {
    tk::Graph::beginCapture(tk::Stream());
    ADD_FAILURE() << "captured the legacy default stream";
  } catch (const tk::Error &e) {
    EXPECT_NE(std::string(e.what()).find("legacy default stream"), std::string::npos) << e.what();
  }
  // A launch that throws during capture: the capture is ended, the error
  // propagates with its CUDA name.
  {
    Knob fail("FAKE_CUDA_LAUNCH_ERROR");
    try {
      tk::Graph::capture(f.stream, [&] { f.step(); });
      ADD_FAILURE() << "a failed launch was captured";
    } catch (const tk::Error &e) {
      EXPECT_EQ(e.cudaError(), "CUDA_ERROR_ILLEGAL_ADDRESS") << e.what();
    }
    EXPECT_STREQ(fake().graphCalls(), "begin end");
    // A failure reported as a Status invalidates the capture: endCapture says so.
    fake().graphCallsReset();
    tk::Graph::beginCapture(f.stream);
    std::vector<tk::Arg> args{f.x, f.y, 777, 1};
    EXPECT_FALSE(f.k.tryLaunch(tk::Grid(3), args, f.stream).ok());
    try {
      tk::Graph::endCapture(f.stream);
      ADD_FAILURE() << "an invalidated capture ended well";
    } catch (const tk::Error &e) {
      EXPECT_EQ(e.cudaError(), "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED") << e.what();
      EXPECT_NE(std::string(e.what()).find("cuStreamEndCapture failed"), std::string::npos);
    }
  }
  // Instantiation fails: the captured graph is destroyed.
  {
    Knob fail("FAKE_CUDA_GRAPH_ERROR");
    fake().graphCallsReset();
    try {
      tk::Graph::capture(f.stream, [&] { f.step(); });
      ADD_FAILURE() << "instantiation did not fail";
    } catch (const tk::Error &e) {
      EXPECT_EQ(e.cudaError(), "CUDA_ERROR_INVALID_VALUE") << e.what();
      EXPECT_NE(std::string(e.what()).find("cuGraphInstantiateWithFlags failed"),
                std::string::npos);
    }
    EXPECT_STREQ(fake().graphCalls(), "begin record record end instantiate destroy");
  }
  EXPECT_EQ(fake().liveGraphs(), graphs);
  // The stream captures again after all that.
  tk::Graph g = tk::Graph::capture(f.stream, [&] { f.step(); });
  EXPECT_TRUE(g.tryLaunch(f.stream).ok());
}

} // namespace
