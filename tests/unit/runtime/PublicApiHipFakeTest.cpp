// The public C++ API on the amdgcn target, without an AMD GPU: the stand-in
// libamdhip64 of tests/unit/driver/HipDriverFake.c is loaded first (dlopen
// with RTLD_GLOBAL, so tk's dlopen("libamdhip64.so") finds it by its
// soname), and its hipModuleLaunchKernel writes the kernarg segment as HIP
// would from the code object's metadata. The kernels are really compiled,
// to AMDGPU code objects (LLVM's AMDGPU back end and ld.lld); only the
// device is pretend.
//
// What is checked: an AMD arch in KernelOptions compiles for amdgcn and
// launches through HIP with the same tk::Kernel; every scalar kind reaches
// the kernarg segment at its metadata offset with its bits; the workgroup
// is the code object's; HIP's errors (a module that does not load, a
// refused launch, a device too small) come back named; the module goes with
// the last handle; without a CUDA driver, Device.h's memory and streams are
// HIP's; tk::Autotuner times an amdgcn kernel with HIP's events and launches
// each config on its code object's workgroup.
#include "runtime/PublicApiImpl.h"
#include "tests/unit/driver/DriverTestUtil.h"
#include "tests/unit/runtime/CopyKernel.h"
#include "tk/tk.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Fake = tk::test::HipFake;

Fake &fake() {
  static Fake f = [] {
    Fake out;
    static std::string dir =
        (std::filesystem::temp_directory_path() / ("tk-public-api-hip-" + std::to_string(getpid())))
            .string();
    setenv("TK_CACHE_DIR", dir.c_str(), 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    out.lib = dlopen(TK_FAKE_HIP, RTLD_NOW | RTLD_GLOBAL);
    return out;
  }();
  return f;
}

// The stand-in, and a kernel compiled for gfx942 (LLVM and ld.lld).
#define REQUIRE_FAKE_HIP()                                                                         \
  std::string whyNot;                                                                              \
  if (!fake().lib || !tk::HipDriver::get(whyNot))                                                  \
    GTEST_SKIP() << "the stand-in HIP runtime " TK_FAKE_HIP " did not load: " << whyNot;           \
  if (!compilesForAmdgpu(whyNot))                                                                  \
  GTEST_SKIP() << "no code object (built without LLVM, or no ld.lld): " << whyNot

tk::KernelOptions copyOptions(const std::string &arch = "gfx942") {
  tk::KernelOptions o;
  o.kernel = "copy";
  o.signature = "*fp32, *fp32, i32, i32";
  o.constants["BLOCK"] = 256;
  o.arch = arch;
  return o;
}

bool compilesForAmdgpu(std::string &why) {
  tk::GpuCompileOptions o = tk::detail::toGpuOptions(copyOptions());
  tk::CompiledPTX c;
  return tk::compileToPTX(kCopy, "probe.tk", o, c, why) && !c.codeObject.empty();
}

template <class T> void put(std::string &bytes, uint32_t offset, T value) {
  if (bytes.size() < offset + sizeof(T))
    bytes.resize(offset + sizeof(T), '\0');
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

// The loaded kernel behind a tk::Kernel of `source` (the same compile:
// the table of live kernels hands back the same GpuKernel).
std::shared_ptr<const tk::GpuKernel> gpuKernel(const char *source, const tk::KernelOptions &o,
                                               const std::string &file) {
  std::string error;
  auto k = tk::GpuKernel::compileShared(source, file, tk::detail::toGpuOptions(o), error);
  EXPECT_TRUE(k) << error;
  return k;
}

} // namespace

TEST(PublicApiHipFake, AnAmdArchCompilesForAmdgcnAndLaunchesThroughHip) {
  REQUIRE_FAKE_HIP();
  tk::KernelOptions o = copyOptions();
  o.specialize = false;
  tk::Kernel k = tk::Kernel::fromSource(kCopy, o, "hip-copy.tk");
  // ptx() is the AMDGPU assembly: a kernel descriptor, an end of program.
  EXPECT_NE(k.ptx().find(".amdhsa_kernel copy"), std::string::npos) << k.ptx();
  EXPECT_NE(k.ptx().find("s_endpgm"), std::string::npos);
  EXPECT_EQ(k.ptx().find(".entry"), std::string::npos) << "not PTX";
  EXPECT_EQ(k.registers(), 34); // hipFuncGetAttribute(NUM_REGS), the stand-in's
  ASSERT_NE(k.function(), nullptr);
  std::shared_ptr<const tk::GpuKernel> gpu = gpuKernel(kCopy, o, "hip-copy.tk");
  ASSERT_TRUE(gpu->isAmdgpu());
  EXPECT_EQ(k.function(), gpu->nativeFunction());
  EXPECT_EQ(gpu->function(), nullptr) << "no CUDA function";
  ASSERT_EQ(gpu->codeObject().compare(0, 4,
                                      "\x7f"
                                      "ELF"),
            0);
  // The workgroup the code object was compiled for, whole wavefronts.
  tk::AmdgpuLaunch launch;
  std::string error;
  std::vector<tk::SlotKind> kinds = {tk::SlotKind::Pointer, tk::SlotKind::Pointer,
                                     tk::SlotKind::I32, tk::SlotKind::I32};
  ASSERT_TRUE(tk::amdgpuLaunchInfo(gpu->codeObject(), "copy", kinds, launch, error)) << error;
  EXPECT_EQ(gpu->block(), launch.block);
  EXPECT_EQ(launch.block[0] % 64, 0u);
  EXPECT_EQ(launch.layout.offsets, (std::vector<uint32_t>{0, 8, 16, 20}));

  fake().setLayout({0, 8, 16, 20}, {8, 8, 4, 4});
  int before = fake().count("fake_hip_launch_count");
  float *x = reinterpret_cast<float *>(uintptr_t(0x7f0000010000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x7f0000020000));
  k.launch(tk::Grid(9, 2), tk::Stream::wrap(reinterpret_cast<void *>(0x5000)), x, y, 1000, 3);
  EXPECT_EQ(fake().count("fake_hip_launch_count"), before + 1);
  std::string want;
  put(want, 0, uint64_t(uintptr_t(x)));
  put(want, 8, uint64_t(uintptr_t(y)));
  put(want, 16, int32_t(1000));
  put(want, 20, int32_t(3));
  EXPECT_EQ(fake().kernarg(), want);
  EXPECT_EQ(fake().count("fake_hip_last_used_extra"), 0) << "kernelParams, as cuLaunchKernel";
  EXPECT_EQ(fake().grid(0), 9u);
  EXPECT_EQ(fake().grid(1), 2u);
  EXPECT_EQ(fake().grid(2), 1u);
  EXPECT_EQ(fake().block(0), launch.block[0]);
  EXPECT_EQ(fake().block(1), launch.block[1]);
  EXPECT_EQ(fake().stream(), 0x5000u);
  // Arguments convert and are refused as on CUDA.
  std::vector<tk::Arg> bad{x, y, 1.5, 3};
  EXPECT_EQ(k.tryLaunch(tk::Grid(1), bad).message,
            "kernel 'copy': argument 2 ('n') is i32 in the signature but the argument passed is "
            "fp64");
}

TEST(PublicApiHipFake, EveryScalarKindReachesItsKernargOffset) {
  REQUIRE_FAKE_HIP();
  const char *source = "import tk\n"
                       "@tk.jit\n"
                       "def scalars(out_ptr, b, c, s, i, u, l, h, bh, f, d):\n"
                       "    tk.store(out_ptr, f)\n";
  tk::KernelOptions o;
  o.kernel = "scalars";
  o.signature = "*fp32, i1, i8, i16, i32, u32, i64, fp16, bf16, fp32, fp64";
  o.arch = "gfx90a";
  tk::Kernel k = tk::Kernel::fromSource(source, o, "hip-scalars.tk");
  // Natural alignment, as the metadata of this kernel says (llvm-readobj
  // --notes on `tkc --target=amdgcn --emit=hsaco` shows the same).
  const std::vector<unsigned> offsets = {0, 8, 9, 10, 12, 16, 24, 32, 34, 36, 40};
  const std::vector<unsigned> sizes = {8, 1, 1, 2, 4, 4, 8, 2, 2, 4, 8};
  std::shared_ptr<const tk::GpuKernel> gpu = gpuKernel(source, o, "hip-scalars.tk");
  std::vector<tk::SlotKind> kinds;
  for (tk::Arg::Kind kind : k.parameterKinds())
    kinds.push_back(tk::SlotKind(kind));
  tk::AmdgpuLaunch launch;
  std::string error;
  ASSERT_TRUE(tk::amdgpuLaunchInfo(gpu->codeObject(), "scalars", kinds, launch, error)) << error;
  EXPECT_EQ(launch.layout.offsets, std::vector<uint32_t>(offsets.begin(), offsets.end()));
  fake().setLayout(offsets, sizes);
  float *out = reinterpret_cast<float *>(uintptr_t(0x7f0000001230));
  k.launch(tk::Grid(1), tk::Stream(), out, true, int8_t(-5), int16_t(-1234), -7, 4000000000u,
           int64_t(-1) << 40, tk::Arg::fp16(1.5), tk::Arg::bf16(-2.0), 0.75f, 2.5);
  std::string want;
  put(want, 0, uint64_t(uintptr_t(out)));
  put(want, 8, uint8_t(1));
  put(want, 9, int8_t(-5));
  put(want, 10, int16_t(-1234));
  put(want, 12, int32_t(-7));
  put(want, 16, uint32_t(4000000000u));
  put(want, 24, int64_t(-1) << 40);
  put(want, 32, uint16_t(0x3E00)); // fp16 1.5
  put(want, 34, uint16_t(0xC000)); // bf16 -2
  put(want, 36, 0.75f);
  put(want, 40, 2.5);
  EXPECT_EQ(fake().kernarg(), want);
}

TEST(PublicApiHipFake, HipsFailuresComeBackNamed) {
  REQUIRE_FAKE_HIP();
  tk::KernelOptions o = copyOptions();
  o.specialize = false;
  {
    setenv("FAKE_HIP_LOAD_ERROR", "200", 1);
    tk::Kernel k;
    tk::Status s = tk::Kernel::tryFromSource(kCopy, o, "hip-load-error.tk", k);
    unsetenv("FAKE_HIP_LOAD_ERROR");
    EXPECT_EQ(s.message, "kernel 'copy': hipModuleLoadData failed: hipErrorInvalidImage (device "
                         "kernel image is invalid)");
    EXPECT_EQ(s.cudaError, "");
  }
  {
    // The device allows fewer threads per workgroup than the kernel has.
    setenv("FAKE_HIP_MAX_THREADS", "64", 1);
    tk::Kernel k;
    tk::Status s = tk::Kernel::tryFromSource(kCopy, o, "hip-threads.tk", k);
    unsetenv("FAKE_HIP_MAX_THREADS");
    EXPECT_NE(s.message.find("kernel 'copy' is out of resources: threads: needs"),
              std::string::npos)
        << s.message;
    EXPECT_NE(s.message.find("the device allows 64"), std::string::npos) << s.message;
  }
  tk::Kernel k = tk::Kernel::fromSource(kCopy, o, "hip-launch-error.tk");
  std::shared_ptr<const tk::GpuKernel> gpu = gpuKernel(kCopy, o, "hip-launch-error.tk");
  unsigned threads = gpu->block()[0] * gpu->block()[1] * gpu->block()[2];
  setenv("FAKE_HIP_LAUNCH_ERROR", "719", 1);
  std::vector<tk::Arg> args{reinterpret_cast<float *>(uintptr_t(0x10000)),
                            reinterpret_cast<float *>(uintptr_t(0x20000)), 100, 1};
  tk::Status s = k.tryLaunch(tk::Grid(4), args);
  unsetenv("FAKE_HIP_LAUNCH_ERROR");
  EXPECT_EQ(s.message,
            "launch of 'copy' on grid (4, 1, 1) with " + std::to_string(threads) +
                " threads per program failed: hipModuleLaunchKernel failed: hipErrorLaunchFailure "
                "(unspecified launch failure)");
}

TEST(PublicApiHipFake, TheLastHandleUnloadsTheModuleAndVariantsCompileForTheSameTarget) {
  REQUIRE_FAKE_HIP();
  int loaded = fake().count("fake_hip_loaded_modules");
  {
    tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "hip-release.tk");
    EXPECT_EQ(fake().count("fake_hip_loaded_modules"), loaded + 1);
    // A launch whose facts are new compiles a variant, for gfx942 too.
    float *x = reinterpret_cast<float *>(uintptr_t(0x10000));
    std::vector<tk::Arg> facts{x, x, 4096, 1}, strided{x, x, 4096, 3};
    fake().setLayout({0, 8, 16, 20}, {8, 8, 4, 4});
    ASSERT_TRUE(k.tryLaunch(tk::Grid(1), facts).ok());
    ASSERT_TRUE(k.tryLaunch(tk::Grid(1), strided).ok());
    tk::Kernel fast = k.specialized(facts);
    EXPECT_NE(fast.ptx(), k.ptx());
    EXPECT_NE(fast.ptx().find("s_endpgm"), std::string::npos);
    EXPECT_EQ(fake().count("fake_hip_loaded_modules"), loaded + 3);
  }
  EXPECT_EQ(fake().count("fake_hip_loaded_modules"), loaded);
}

TEST(PublicApiHipFake, WithoutCudaDeviceMemoryAndStreamsAreHips) {
  REQUIRE_FAKE_HIP();
  std::string why;
  if (tk::CudaDriver::get(why))
    GTEST_SKIP() << "a CUDA driver is present: Device.h uses it";
  ASSERT_TRUE(tk::deviceAvailable(&why)) << why;
  tk::DeviceInfo info = tk::deviceInfo();
  EXPECT_EQ(info.name, "Fake AMD Instinct MI300X");
  EXPECT_EQ(info.multiprocessors, 304);
  EXPECT_EQ(info.computeCapability, 0);
  EXPECT_EQ(info.sharedBytesPerBlock, 65536);
  int live = fake().count("fake_hip_live_allocations");
  {
    std::vector<float> host = {1, 2, 3, 4, 5};
    tk::DeviceMemory m = tk::DeviceMemory::fromHost(host);
    EXPECT_EQ(fake().count("fake_hip_live_allocations"), live + 1);
    EXPECT_EQ(m.toHost<float>(), host);
    m.zero();
    EXPECT_EQ(m.toHost<float>(), std::vector<float>(5, 0.0f));
    tk::Stream stream = tk::Stream::create();
    EXPECT_NE(stream.handle(), nullptr);
    EXPECT_EQ(fake().count("fake_hip_live_streams"), 1);
    // A kernel launched on it with the memory as an argument.
    tk::Kernel k = tk::Kernel::fromSource(kCopy, copyOptions(), "hip-memory.tk");
    fake().setLayout({0, 8, 16, 20}, {8, 8, 4, 4});
    k.launch(tk::Grid(1), stream, m, m, 5, 1);
    EXPECT_EQ(fake().stream(), uint64_t(uintptr_t(stream.handle())));
    std::string want;
    put(want, 0, m.address());
    put(want, 8, m.address());
    put(want, 16, int32_t(5));
    put(want, 20, int32_t(1));
    EXPECT_EQ(fake().kernarg(), want);
    int syncs = fake().count("fake_hip_stream_synchronizes");
    stream.synchronize();
    EXPECT_EQ(fake().count("fake_hip_stream_synchronizes"), syncs + 1);
    tk::synchronize();
  }
  EXPECT_EQ(fake().count("fake_hip_live_allocations"), live);
  EXPECT_EQ(fake().count("fake_hip_live_streams"), 0);
}

TEST(PublicApiHipFake, TheAutotunerTimesAnAmdgcnKernelThroughHip) {
  REQUIRE_FAKE_HIP();
  // Two configs of a gfx942 kernel: 2 and 4 wavefronts of 64 lanes, so
  // workgroups of 128 and 256 threads (num_warps x 32 would be 64 and 128).
  std::vector<tk::Config> configs = {tk::Config({{"BLOCK", 128}}, 2),
                                     tk::Config({{"BLOCK", 256}}, 4)};
  tk::AutotuneOptions tuning;
  tuning.key = {"n"};
  tuning.diskCache = false;
  tuning.progress = nullptr;
  tuning.warmupMs = 1e-6; // one warm-up and one timed launch per config
  tuning.repMs = 1e-6;
  tk::Autotuner tuner =
      tk::Autotuner::fromSource(kCopy, copyOptions(), configs, tuning, "hip-autotune.tk");
  fake().setLayout({0, 8, 16, 20}, {8, 8, 4, 4});
  auto count = [](const char *name) { return fake().count(name); };
  auto withThreads = [](unsigned threads) {
    return fake().fn<int (*)(unsigned)>("fake_hip_launches_with_threads")(threads);
  };
  int records = count("fake_hip_event_records");
  int elapsed = count("fake_hip_event_elapsed_times");
  int events = count("fake_hip_live_events");
  int syncs = count("fake_hip_stream_synchronizes");
  int on64 = withThreads(64), on128 = withThreads(128), on256 = withThreads(256);
  float *x = reinterpret_cast<float *>(uintptr_t(0x7f0000010000));
  float *y = reinterpret_cast<float *>(uintptr_t(0x7f0000020000));
  tk::Stream stream = tk::Stream::wrap(reinterpret_cast<void *>(0x6000));
  auto grid = [](const tk::Config &c) { return tk::Grid(unsigned(4096 / c.intValue("BLOCK"))); };
  tuner.launch(grid, stream, x, y, 4096, 1);
  // Each config: start and stop around the estimate, then a pair per timed
  // launch, each pair read back; every event destroyed again.
  EXPECT_GE(count("fake_hip_event_records") - records, 8);
  EXPECT_GE(count("fake_hip_event_elapsed_times") - elapsed, 4);
  EXPECT_EQ(count("fake_hip_live_events"), events);
  EXPECT_GE(count("fake_hip_stream_synchronizes") - syncs, 4);
  // Both configs ran, each on its own workgroup; none on 32-lane warps.
  EXPECT_GT(withThreads(128) - on128, 2);
  EXPECT_GT(withThreads(256) - on256, 2);
  EXPECT_EQ(withThreads(64), on64);
  EXPECT_EQ(fake().stream(), 0x6000u);
  // The winner is one of the two, and a second launch does not tune again.
  std::vector<tk::Arg> args{x, y, 4096, 1};
  const tk::Config &best = tuner.best(grid, args, stream);
  EXPECT_TRUE(best.numWarps == 2 || best.numWarps == 4) << best.str();
  int recorded = count("fake_hip_event_records");
  tuner.launch(grid, stream, x, y, 4096, 1);
  EXPECT_EQ(count("fake_hip_event_records"), recorded);
  EXPECT_EQ(fake().block(0), best.numWarps * 64u);
  EXPECT_EQ(fake().grid(0), 4096u / unsigned(best.intValue("BLOCK")));
}
