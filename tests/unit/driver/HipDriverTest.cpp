// The HIP runtime layer (driver/HipDriver.h) without ROCm or an AMD GPU:
// the process's runtime is absent (one clear error), and everything else is
// checked against the stand-in libamdhip64 of HipDriverFake.c, opened by
// path (HipDriver::open): a missing library, a runtime without an entry
// point, HIP's error names and strings, module loads that fail, and
// launches of a tutorial kernel compiled for gfx942 whose kernarg bytes,
// grid and workgroup are what its code object's metadata describes. The
// metadata reader (driver/CodeObject.h) is compared with llvm-readobj on
// tutorial kernels and fed malformed code objects; amdgpuLaunchInfo
// (runtime/GpuKernel.h) refuses metadata that does not match the kernel.
#include "driver/HipDriver.h"
#include "compiler/Compiler.h"
#include "driver/CodeObject.h"
#include "driver/Lld.h"
#include "runtime/GpuKernel.h"
#include "tests/unit/driver/DriverTestUtil.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace tk;

namespace {

using Fake = tk::test::HipFake;
using tk::test::ScopedEnv;

std::unique_ptr<HipDriver> openFake(Fake &fake, std::string &error) {
  std::unique_ptr<HipDriver> hip = HipDriver::open({TK_FAKE_HIP}, error);
  if (hip)
    fake.lib = dlopen(TK_FAKE_HIP, RTLD_NOW | RTLD_NOLOAD);
  return hip;
}

std::string tutorial(const std::string &name) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A tutorial kernel compiled for an AMD GPU: the assembly and the code
// object. False (the test skips) without LLVM or ld.lld.
bool compileForAmdgpu(const std::string &file, const std::string &kernel,
                      const std::string &signature, std::map<std::string, int64_t> constants,
                      const std::string &arch, CompiledKernel &out, std::string &error) {
  KernelSpec spec;
  spec.kernel = kernel;
  spec.signature = signature;
  for (const auto &[name, value] : constants)
    spec.constants[name] = ConstValue::ofInt(value);
  CompileOptions options;
  options.arch = arch;
  return compileKernel({file, tutorial(file), 1}, spec, options, {}, out, error);
}

CompiledKernel vectorAdd(std::string &error, bool &ok) {
  CompiledKernel k;
  ok = compileForAmdgpu("01-vector-add.tk", "add_kernel", "*fp32:16, *fp32:16, *fp32:16, i32",
                        {{"BLOCK_SIZE", 1024}}, "gfx942", k, error);
  return k;
}

#define REQUIRE_CODE_OBJECT(k)                                                                     \
  std::string compileError;                                                                        \
  bool compiled = false;                                                                           \
  CompiledKernel k = vectorAdd(compileError, compiled);                                            \
  if (!compiled)                                                                                   \
  GTEST_SKIP() << "no code object (built without LLVM, or no ld.lld): " << compileError

template <class T> void put(std::string &bytes, uint32_t offset, T value) {
  if (bytes.size() < offset + sizeof(T))
    bytes.resize(offset + sizeof(T), '\0');
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

} // namespace

//
// Loading the runtime
//

TEST(HipDriverTest, NoRuntimeIsOneClearError) {
  std::string error;
  HipDriver *hip = HipDriver::get(error);
  if (hip)
    GTEST_SKIP() << "a HIP runtime is present (" << hip->deviceName() << ")";
  EXPECT_TRUE(error.rfind("no HIP runtime: libamdhip64.so not found (libamdhip64.so: ", 0) == 0 ||
              error.rfind("no HIP device", 0) == 0 || error.find("hipInit failed") == 0)
      << error;
  if (error.rfind("no HIP runtime", 0) == 0) {
    EXPECT_NE(error.find("; nor libamdhip64.so.6 or libamdhip64.so.5)"), std::string::npos)
        << error;
  }
  // Asking again gives the same answer without trying again.
  std::string again;
  EXPECT_EQ(HipDriver::get(again), nullptr);
  EXPECT_EQ(again, error);
}

TEST(HipDriverTest, AMissingLibraryIsNamedWithDlopensReason) {
  std::string error;
  EXPECT_EQ(HipDriver::open({"/nonexistent/rocm/libamdhip64.so"}, error), nullptr);
  EXPECT_EQ(error, "no HIP runtime: /nonexistent/rocm/libamdhip64.so not found "
                   "(/nonexistent/rocm/libamdhip64.so: cannot open shared object file: No such "
                   "file or directory)");
  // The first that loads is used.
  std::unique_ptr<HipDriver> hip =
      HipDriver::open({"/nonexistent/libamdhip64.so", TK_FAKE_HIP}, error);
  ASSERT_NE(hip, nullptr) << error;
}

TEST(HipDriverTest, ARuntimeWithoutAnEntryPointIsTooOld) {
  std::string error;
  EXPECT_EQ(HipDriver::open({TK_FAKE_HIP_OLD}, error), nullptr);
  EXPECT_EQ(error,
            fmt::format("HIP runtime too old: {} has no 'hipModuleLaunchKernel'", TK_FAKE_HIP_OLD));
}

TEST(HipDriverTest, InitialisationFailuresCarryHipsNames) {
  std::string error;
  {
    ScopedEnv env("FAKE_HIP_INIT_ERROR", "100");
    EXPECT_EQ(HipDriver::open({TK_FAKE_HIP}, error), nullptr);
    EXPECT_EQ(error, "hipInit failed: hipErrorNoDevice (no ROCm-capable device is detected)");
  }
  {
    ScopedEnv env("FAKE_HIP_INIT_ERROR", "12345");
    EXPECT_EQ(HipDriver::open({TK_FAKE_HIP}, error), nullptr);
    EXPECT_EQ(error, "hipInit failed: hipErrorUnknown (unknown error)");
  }
  {
    ScopedEnv env("FAKE_HIP_DEVICES", "0");
    EXPECT_EQ(HipDriver::open({TK_FAKE_HIP}, error), nullptr);
    EXPECT_EQ(error,
              "hipGetDeviceCount failed: hipErrorNoDevice (no ROCm-capable device is detected)");
  }
}

TEST(HipDriverTest, DescribesTheDevice) {
  Fake fake;
  std::string error;
  std::unique_ptr<HipDriver> hip = openFake(fake, error);
  ASSERT_NE(hip, nullptr) << error;
  EXPECT_EQ(hip->deviceName(), "Fake AMD Instinct MI300X");
  EXPECT_EQ(hip->computeUnits(), 304);
  EXPECT_EQ(hip->warpSize(), 64);
  EXPECT_EQ(hip->runtimeVersion(), 60241134);
  EXPECT_EQ(hip->limits().maxThreadsPerBlock, 1024);
  EXPECT_EQ(hip->limits().maxSharedPerBlock, 65536);
  EXPECT_EQ(hip->limits().maxSharedPerBlockOptin, 65536);
  EXPECT_EQ(hip->limits().maxRegistersPerBlock, 0);
  EXPECT_EQ(hip->errorText(2), "hipErrorOutOfMemory (out of memory)");
  EXPECT_TRUE(hip->check(0, "hipNothing", error));
  EXPECT_FALSE(hip->check(719, "hipSomething", error));
  EXPECT_EQ(error, "hipSomething failed: hipErrorLaunchFailure (unspecified launch failure)");
}

//
// Modules and launches
//

TEST(HipDriverTest, ModuleLoadFailuresNameTheCall) {
  Fake fake;
  std::string error;
  std::unique_ptr<HipDriver> hip = openFake(fake, error);
  ASSERT_NE(hip, nullptr) << error;
  hipModule_t module = nullptr;
  EXPECT_FALSE(hip->loadModule("not a code object", module, error));
  EXPECT_EQ(error, "hipModuleLoadData failed: hipErrorInvalidImage (device kernel image is "
                   "invalid)");
  REQUIRE_CODE_OBJECT(k);
  ScopedEnv env("FAKE_HIP_LOAD_ERROR", "2");
  EXPECT_FALSE(hip->loadModule(k.codeObject, module, error));
  EXPECT_EQ(error, "hipModuleLoadData failed: hipErrorOutOfMemory (out of memory)");
}

TEST(HipDriverTest, LaunchesPassTheCodeObjectsKernargLayout) {
  Fake fake;
  std::string error;
  std::unique_ptr<HipDriver> hip = openFake(fake, error);
  ASSERT_NE(hip, nullptr) << error;
  REQUIRE_CODE_OBJECT(k);
  ASSERT_EQ(k.codeObject.compare(0, 4,
                                 "\x7f"
                                 "ELF"),
            0);
  EXPECT_NE(k.ptx.find("s_endpgm"), std::string::npos);

  // What the metadata says (llvm-readobj --notes shows the same): three
  // pointers and an i32, then the hidden arguments HIP fills.
  CodeObjectInfo info;
  ASSERT_TRUE(readCodeObject(k.codeObject, info, error)) << error;
  EXPECT_EQ(info.target, "amdgcn-amd-amdhsa--gfx942");
  const CodeObjectKernel *meta = info.find("add_kernel");
  ASSERT_NE(meta, nullptr);
  ASSERT_EQ(meta->explicitArgs(), 4u);
  std::vector<unsigned> offsets, sizes;
  for (size_t i = 0; i < 4; ++i) {
    offsets.push_back(meta->args[i].offset);
    sizes.push_back(meta->args[i].size);
  }
  EXPECT_EQ(offsets, (std::vector<unsigned>{0, 8, 16, 24}));
  EXPECT_EQ(sizes, (std::vector<unsigned>{8, 8, 8, 4}));
  EXPECT_EQ(meta->args[0].valueKind, "global_buffer");
  EXPECT_EQ(meta->args[3].valueKind, "by_value");
  EXPECT_EQ(meta->args[4].valueKind, "hidden_block_count_x");
  EXPECT_EQ(meta->explicitBytes(), 28u);
  EXPECT_GE(meta->kernargSegmentSize, 28u);
  const uint32_t threads = meta->workgroupSize();
  EXPECT_EQ(threads % 64, 0u) << "whole wavefronts";
  EXPECT_EQ(meta->reqdWorkgroupSize[0], threads);

  hipModule_t module = nullptr;
  ASSERT_TRUE(hip->loadModule(k.codeObject, module, error)) << error;
  hipFunction_t function = nullptr;
  EXPECT_FALSE(hip->getFunction(module, "sub_kernel", function, error));
  EXPECT_EQ(error, "hipModuleGetFunction('sub_kernel') failed: hipErrorNotFound (named symbol not "
                   "found)");
  ASSERT_TRUE(hip->getFunction(module, "add_kernel", function, error)) << error;
  KernelResources res;
  ASSERT_TRUE(hip->queryResources(function, res, error)) << error;
  EXPECT_EQ(res.registers, 34);
  EXPECT_EQ(res.maxThreadsPerBlock, 1024);

  // kernelParams: one pointer per explicit argument; HIP copies each
  // argument's .size bytes to its .offset (the stand-in does the same).
  uint64_t x = 0x7f0000001000, y = 0x7f0000002000, out = 0x7f0000003000;
  int32_t n = 98765;
  void *args[] = {&x, &y, &out, &n};
  std::string want;
  put(want, 0, x);
  put(want, 8, y);
  put(want, 16, out);
  put(want, 24, n);
  fake.setLayout(offsets, sizes);
  int before = fake.count("fake_hip_launch_count");
  ASSERT_TRUE(hip->launch(function, {7, 2, 1}, {threads, 1, 1}, 0, nullptr, args, error)) << error;
  EXPECT_EQ(fake.count("fake_hip_launch_count"), before + 1);
  EXPECT_EQ(fake.kernarg(), want);
  EXPECT_EQ(fake.count("fake_hip_last_used_extra"), 0);
  EXPECT_EQ(fake.grid(0), 7u);
  EXPECT_EQ(fake.grid(1), 2u);
  EXPECT_EQ(fake.block(0), threads);

  // Packed: one buffer at the same offsets through `extra`, whose markers
  // must be HIP's (the stand-in refuses CUDA's END of 0, as HIP does).
  std::string buffer = want;
  ASSERT_TRUE(hip->launchPacked(function, {3, 1, 1}, {threads, 1, 1}, 0, nullptr, buffer.data(),
                                buffer.size(), error))
      << error;
  EXPECT_EQ(fake.kernarg(), want);
  EXPECT_EQ(fake.count("fake_hip_last_used_extra"), 1);
  EXPECT_EQ(fake.grid(0), 3u);

  // HIP's refusal of a launch is the call's error, named.
  EXPECT_FALSE(hip->launch(function, {1, 1, 1}, {2048, 1, 1}, 0, nullptr, args, error));
  EXPECT_EQ(error, "hipModuleLaunchKernel failed: hipErrorInvalidValue (invalid argument)");
  {
    ScopedEnv env("FAKE_HIP_LAUNCH_ERROR", "719");
    EXPECT_FALSE(hip->launch(function, {1, 1, 1}, {threads, 1, 1}, 0, nullptr, args, error));
    EXPECT_EQ(error,
              "hipModuleLaunchKernel failed: hipErrorLaunchFailure (unspecified launch failure)");
  }
  int unloads = fake.count("fake_hip_module_unloads");
  ASSERT_TRUE(hip->unloadModule(module, error)) << error;
  EXPECT_EQ(fake.count("fake_hip_module_unloads"), unloads + 1);
}

TEST(HipDriverTest, UnloadingSelectsDeviceZeroAndRestoresTheThreads) {
  Fake fake;
  std::string error;
  std::unique_ptr<HipDriver> hip = openFake(fake, error);
  ASSERT_NE(hip, nullptr) << error;
  REQUIRE_CODE_OBJECT(k);
  hipModule_t module = nullptr;
  ASSERT_TRUE(hip->loadModule(k.codeObject, module, error)) << error;
  int off = fake.count("fake_hip_unloads_off_device");
  int syncs = fake.count("fake_hip_synchronizes");
  // The last handle may go on a thread that selected another device.
  ScopedEnv devices("FAKE_HIP_DEVICES", "4");
  std::thread([&] {
    fake.fn<void (*)(int)>("fake_hip_set_thread_device")(3);
    EXPECT_TRUE(hip->unloadModule(module, error)) << error;
    int device = -1;
    hip->api().hipGetDevice(&device);
    EXPECT_EQ(device, 3) << "the thread's own device is restored";
  }).join();
  EXPECT_EQ(fake.count("fake_hip_unloads_off_device"), off);
  EXPECT_EQ(fake.count("fake_hip_synchronizes"), syncs + 1) << "the device is idle first";
}

TEST(HipDriverTest, MemoryStreamsAndEvents) {
  Fake fake;
  std::string error;
  std::unique_ptr<HipDriver> hip = openFake(fake, error);
  ASSERT_NE(hip, nullptr) << error;
  int live = fake.count("fake_hip_live_allocations");
  uint64_t p = 0;
  ASSERT_TRUE(hip->allocate(64, p, error)) << error;
  EXPECT_EQ(fake.count("fake_hip_live_allocations"), live + 1);
  const char text[] = "sixteen bytes..";
  ASSERT_TRUE(hip->copyToDevice(p, text, 16, error)) << error;
  char back[16] = {};
  ASSERT_TRUE(hip->copyToHost(back, p, 16, error)) << error;
  EXPECT_STREQ(back, text);
  ASSERT_TRUE(hip->fill(p, 0x2a, 16, error)) << error;
  ASSERT_TRUE(hip->copyToHost(back, p, 16, error)) << error;
  EXPECT_EQ(back[0], 0x2a);
  EXPECT_EQ(back[15], 0x2a);
  ASSERT_TRUE(hip->free(p, error)) << error;
  EXPECT_EQ(fake.count("fake_hip_live_allocations"), live);
  EXPECT_FALSE(hip->allocate(size_t(1) << 40, p, error));
  EXPECT_EQ(error, "hipMalloc(1099511627776 bytes) failed: hipErrorOutOfMemory (out of memory)");
  EXPECT_FALSE(hip->copyToDevice(0, text, 16, error));
  EXPECT_EQ(error, "hipMemcpyHtoD failed: hipErrorInvalidValue (invalid argument)");

  hipStream_t stream = nullptr;
  ASSERT_TRUE(hip->createStream(stream, error)) << error;
  EXPECT_NE(stream, nullptr);
  hipEvent_t start = nullptr, stop = nullptr;
  ASSERT_TRUE(hip->createEvent(start, error) && hip->createEvent(stop, error)) << error;
  float ms = -1;
  EXPECT_FALSE(hip->elapsedMs(start, stop, ms, error));
  EXPECT_EQ(error, "hipEventElapsedTime failed: hipErrorInvalidHandle (invalid resource handle)");
  ASSERT_TRUE(hip->recordEvent(start, stream, error)) << error;
  ASSERT_TRUE(hip->recordEvent(stop, stream, error)) << error;
  ASSERT_TRUE(hip->elapsedMs(start, stop, ms, error)) << error;
  EXPECT_GE(ms, 0.0f);
  ASSERT_TRUE(hip->synchronizeStream(stream, error)) << error;
  ASSERT_TRUE(hip->destroyEvent(start, error) && hip->destroyEvent(stop, error)) << error;
  ASSERT_TRUE(hip->destroyStream(stream, error)) << error;
  EXPECT_FALSE(hip->destroyStream(nullptr, error));
  EXPECT_EQ(error, "hipStreamDestroy failed: hipErrorInvalidHandle (invalid resource handle)");
  ASSERT_TRUE(hip->synchronize(error)) << error;
}

//
// The code object's metadata
//

namespace {

// llvm-readobj's YAML of the metadata note, the lines tk reads: per kernel
// its `.args` (offset, size, value_kind, in order) and a few numbers.
struct ReadobjKernel {
  std::vector<std::tuple<uint32_t, uint32_t, std::string>> args;
  std::map<std::string, uint32_t> numbers;
  std::vector<uint32_t> reqd;
};

bool readobj(const std::string &codeObject, std::map<std::string, ReadobjKernel> &out,
             std::string &why) {
  const char *tool = "/usr/lib/llvm-19/bin/llvm-readobj";
  if (access(tool, X_OK) != 0) {
    why = "no llvm-readobj (llvm-19)";
    return false;
  }
  char path[] = "/tmp/tk-hip-readobj-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, codeObject.data(), codeObject.size()) != ssize_t(codeObject.size())) {
    why = "cannot write a temporary file";
    return false;
  }
  close(fd);
  std::string command = fmt::format("{} --notes {}", tool, path);
  FILE *p = popen(command.c_str(), "r");
  std::string text;
  char chunk[4096];
  for (size_t n; p && (n = fread(chunk, 1, sizeof chunk, p)) > 0;)
    text.append(chunk, n);
  if (p)
    pclose(p);
  unlink(path);
  // The YAML by indentation: "  - " starts a kernel, its keys at 4; an
  // `.args` entry starts with "      - ", its keys at 8; the
  // reqd_workgroup_size items are "      - N".
  struct Arg {
    uint32_t offset = 0, size = 0;
    std::string kind;
  };
  std::istringstream in(text);
  bool inKernels = false, haveKernel = false;
  std::string section, name;
  ReadobjKernel current;
  std::vector<Arg> args;
  auto flush = [&] {
    for (const Arg &a : args)
      current.args.emplace_back(a.offset, a.size, a.kind);
    if (haveKernel)
      out[name] = current;
    current = {};
    args.clear();
    haveKernel = false;
  };
  for (std::string l; std::getline(in, l);) {
    size_t indent = l.find_first_not_of(' ');
    if (indent == std::string::npos)
      continue;
    std::string t = l.substr(indent);
    if (indent == 0) {
      flush();
      inKernels = t == "amdhsa.kernels:";
      continue;
    }
    if (!inKernels)
      continue;
    if (indent == 2 && t.rfind("- ", 0) == 0) {
      flush();
      haveKernel = true;
      t = t.substr(2), indent = 4;
    }
    if (indent == 6 && t.rfind("- ", 0) == 0) {
      if (section == ".reqd_workgroup_size") {
        current.reqd.push_back(uint32_t(std::stoul(t.substr(2))));
        continue;
      }
      args.emplace_back();
      t = t.substr(2), indent = 8;
    }
    size_t colon = t.find(':');
    if (colon == std::string::npos)
      continue;
    std::string key = t.substr(0, colon), value = t.substr(colon + 1);
    value = value.substr(std::min(value.size(), value.find_first_not_of(' ')));
    if (indent == 4) {
      section = key;
      if (key == ".name")
        name = value;
      for (const char *k :
           {".kernarg_segment_size", ".group_segment_fixed_size", ".private_segment_fixed_size",
            ".max_flat_workgroup_size", ".wavefront_size", ".vgpr_count", ".sgpr_count"})
        if (key == k)
          current.numbers[key] = uint32_t(std::stoul(value));
    } else if (indent == 8 && section == ".args" && !args.empty()) {
      if (key == ".offset")
        args.back().offset = uint32_t(std::stoul(value));
      else if (key == ".size")
        args.back().size = uint32_t(std::stoul(value));
      else if (key == ".value_kind")
        args.back().kind = value;
    }
  }
  flush();
  return !out.empty();
}

} // namespace

TEST(CodeObjectTest, ReadsWhatLlvmReadobjReads) {
  // Tutorial kernels of several shapes (pointers and i32s, an fp32 scalar,
  // LDS, a dot), for both wave64 archs.
  struct Case {
    const char *file, *kernel, *signature;
    std::map<std::string, int64_t> constants;
  } cases[] = {
      {"01-vector-add.tk",
       "add_kernel",
       "*fp32:16, *fp32:16, *fp32:16, i32:16",
       {{"BLOCK_SIZE", 1024}}},
      {"02-fused-softmax.tk",
       "softmax_kernel",
       "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16",
       {{"BLOCK_SIZE", 1024}}},
      {"03-layer-norm.tk",
       "layer_norm_fwd",
       "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32",
       {{"BLOCK_SIZE", 512}}},
  };
  int compared = 0;
  for (const char *arch : {"gfx942", "gfx90a"})
    for (const Case &c : cases) {
      CompiledKernel k;
      std::string error;
      if (!compileForAmdgpu(c.file, c.kernel, c.signature, c.constants, arch, k, error))
        GTEST_SKIP() << "no code object (built without LLVM, or no ld.lld): " << error;
      std::map<std::string, ReadobjKernel> want;
      std::string why;
      if (!readobj(k.codeObject, want, why))
        GTEST_SKIP() << why;
      CodeObjectInfo info;
      ASSERT_TRUE(readCodeObject(k.codeObject, info, error)) << error;
      EXPECT_EQ(info.target, fmt::format("amdgcn-amd-amdhsa--{}", arch));
      ASSERT_EQ(info.kernels.size(), want.size());
      const CodeObjectKernel *got = info.find(c.kernel);
      ASSERT_NE(got, nullptr) << c.kernel;
      const ReadobjKernel &w = want.at(c.kernel);
      ASSERT_EQ(got->args.size(), w.args.size()) << c.kernel << " " << arch;
      for (size_t i = 0; i < w.args.size(); ++i) {
        EXPECT_EQ(got->args[i].offset, std::get<0>(w.args[i])) << c.kernel << " arg " << i;
        EXPECT_EQ(got->args[i].size, std::get<1>(w.args[i])) << c.kernel << " arg " << i;
        EXPECT_EQ(got->args[i].valueKind, std::get<2>(w.args[i])) << c.kernel << " arg " << i;
      }
      EXPECT_EQ(got->kernargSegmentSize, w.numbers.at(".kernarg_segment_size"));
      EXPECT_EQ(got->groupSegmentFixedSize, w.numbers.at(".group_segment_fixed_size"));
      EXPECT_EQ(got->privateSegmentFixedSize, w.numbers.at(".private_segment_fixed_size"));
      EXPECT_EQ(got->maxFlatWorkgroupSize, w.numbers.at(".max_flat_workgroup_size"));
      EXPECT_EQ(got->wavefrontSize, w.numbers.at(".wavefront_size"));
      EXPECT_EQ(got->vgprCount, w.numbers.at(".vgpr_count"));
      EXPECT_EQ(got->sgprCount, w.numbers.at(".sgpr_count"));
      ASSERT_EQ(w.reqd.size(), 3u);
      EXPECT_EQ(got->reqdWorkgroupSize[0], w.reqd[0]);
      EXPECT_EQ(got->reqdWorkgroupSize[1], w.reqd[1]);
      EXPECT_EQ(got->reqdWorkgroupSize[2], w.reqd[2]);
      // What a launch passes: the explicit arguments, each at its offset,
      // on the workgroup the kernel was compiled for.
      std::vector<SlotKind> kinds;
      for (const KernelParam &p : k.params)
        kinds.push_back(*slotKindOf(p));
      AmdgpuLaunch launch;
      ASSERT_TRUE(amdgpuLaunchInfo(k.codeObject, c.kernel, kinds, launch, error)) << error;
      EXPECT_EQ(launch.layout.offsets, paramLayout(kinds).offsets) << "natural alignment";
      EXPECT_EQ(launch.block[0] * launch.block[1] * launch.block[2], got->workgroupSize());
      EXPECT_EQ(launch.hidden.size(), got->args.size() - kinds.size());
      ++compared;
    }
  EXPECT_EQ(compared, 6);
}

TEST(CodeObjectTest, MalformedCodeObjectsAreErrorsNotCrashes) {
  CodeObjectInfo info;
  std::string error;
  EXPECT_FALSE(readCodeObject("", info, error));
  EXPECT_EQ(error, "not an AMDGPU code object: no ELF header");
  std::string elf(64, '\0');
  elf.replace(0, 6,
              "\x7f"
              "ELF\x02\x01");
  put<uint16_t>(elf, 18, 62); // x86-64
  EXPECT_FALSE(readCodeObject(elf, info, error));
  EXPECT_EQ(error, "not an AMDGPU code object: ELF machine 62 is not AMDGPU (224)");
  put<uint16_t>(elf, 18, 224);
  EXPECT_FALSE(readCodeObject(elf, info, error));
  EXPECT_EQ(error, "not an AMDGPU code object: no AMDGPU metadata note (NT_AMDGPU_METADATA)");
  // A section table past the end of the file.
  put<uint64_t>(elf, 40, 1 << 20);
  put<uint16_t>(elf, 58, 64);
  put<uint16_t>(elf, 60, 3);
  EXPECT_FALSE(readCodeObject(elf, info, error));
  EXPECT_EQ(error, "not an AMDGPU code object: a section header past the end of the file");

  REQUIRE_CODE_OBJECT(k);
  // Every prefix and a sweep of corrupted bytes: each reads or fails with a
  // message (the sanitizer build checks the bounds).
  ASSERT_TRUE(readCodeObject(k.codeObject, info, error)) << error;
  for (size_t n = 0; n < k.codeObject.size(); n += 7) {
    if (!readCodeObject(std::string_view(k.codeObject).substr(0, n), info, error)) {
      EXPECT_FALSE(error.empty());
    }
  }
  for (size_t at = 0; at < std::min<size_t>(k.codeObject.size(), 4096); ++at)
    for (unsigned char b : {0x00, 0xff, 0xdf, 0xdb, 0x7f}) {
      std::string bad = k.codeObject;
      bad[at] = char(b);
      if (!readCodeObject(bad, info, error)) {
        EXPECT_FALSE(error.empty());
      }
    }
}

TEST(CodeObjectTest, ALaunchRefusesMetadataThatDoesNotMatchTheKernel) {
  REQUIRE_CODE_OBJECT(k);
  std::string error;
  AmdgpuLaunch launch;
  using K = SlotKind;
  using Kinds = std::vector<SlotKind>;
  const Kinds right = {K::Pointer, K::Pointer, K::Pointer, K::I32};
  ASSERT_TRUE(amdgpuLaunchInfo(k.codeObject, "add_kernel", right, launch, error)) << error;
  EXPECT_EQ(launch.layout.offsets, (std::vector<uint32_t>{0, 8, 16, 24}));
  EXPECT_EQ(launch.layout.bytes, 28u);
  EXPECT_EQ(launch.hidden.front(), "hidden_block_count_x");
  EXPECT_FALSE(amdgpuLaunchInfo(k.codeObject, "add_kernel",
                                Kinds{K::Pointer, K::Pointer, K::Pointer}, launch, error));
  EXPECT_EQ(error, "kernel 'add_kernel': the code object's metadata has 4 explicit arguments but "
                   "the kernel has 3 runtime parameters");
  EXPECT_FALSE(amdgpuLaunchInfo(k.codeObject, "add_kernel",
                                Kinds{K::Pointer, K::Pointer, K::Pointer, K::I64}, launch, error));
  EXPECT_EQ(error, "kernel 'add_kernel': argument 3 is i64 (8 bytes by value) but the code object "
                   "passes .args[3] as by_value, 4 bytes at offset 24");
  EXPECT_FALSE(amdgpuLaunchInfo(k.codeObject, "add_kernel",
                                Kinds{K::I64, K::Pointer, K::Pointer, K::I32}, launch, error));
  EXPECT_EQ(error, "kernel 'add_kernel': argument 0 is i64 (8 bytes by value) but the code object "
                   "passes .args[0] as global_buffer, 8 bytes at offset 0");
  EXPECT_FALSE(amdgpuLaunchInfo(k.codeObject, "mul_kernel", right, launch, error));
  EXPECT_EQ(error, "kernel 'mul_kernel': the code object has no kernel of that name");
  EXPECT_FALSE(amdgpuLaunchInfo(k.ptx, "add_kernel", right, launch, error));
  EXPECT_EQ(error, "kernel 'add_kernel': not an AMDGPU code object: no ELF header");
}
