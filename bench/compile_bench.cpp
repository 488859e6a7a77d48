// compile_bench: how long tk takes to compile a kernel, stage by stage, and
// (--load, on a GPU machine) from source to a loaded module.
//
//   build/bin/compile_bench [--ptxas] [--remarks] [--amdgcn[=ARCH]] [--json FILE] [--repeat N]
//   build/bin/compile_bench --load [--compilers] [--forced] [--jit-level N]
//                           [--baseline-ptx DIR] [--json FILE] [--repeat N]
//   build/bin/compile_bench --jit-files DIR [--jit-level N] [--json FILE]
//
// Stages (both modes; medians and minima in milliseconds, N compiles in one
// warm process): the front end (lex, parse, checks), AST -> IR with
// specialisation, the IR pipeline (compiler/Pipeline.h), the GPU passes
// (layouts, shared memory, barriers, the cp.async ring), and, when tk is
// built with LLVM, LLVM lowering, LLVM's optimisation pipeline and NVPTX code
// generation (PTXTimings). Kernels: the tutorials' vector add, softmax at
// BLOCK 1024/4096/16384 with the warps tutorial 2 picks (4/8/32; 16384 on
// 16 warps too, the previous pick, for comparison), layer norm, and the matmul at
// 128x128x32 fp16, 4 warps, 4 stages (fewer repetitions: N / 5, at least
// 5). --ptxas adds the toolkit's ptxas on each PTX at tk's JIT level (wall
// and CPU time of the process), the local proxy for the driver's JIT.
// --remarks compiles each case a second time, interleaved, with optimisation
// remarks on (docs/remarks.md): the total with them (their work inside the
// stages, and resolving and rendering the records), its overhead over the
// plain compile, and on its own the registers remark's `ptxas -v` run; the
// PTX must be the same.
// --amdgcn[=ARCH] (gfx942 by default; gfx90a, gfx1100) compiles each case a
// second time, interleaved, for that AMD GPU, from source to a code object
// (an NVIDIA arch of the case dropped): its LLVM lowering and optimisation,
// AMDGPU code generation to an object, `ld.lld -shared` and the total, beside
// the NVPTX compile's. Compile time only: no AMD GPU is attached here, so
// nothing measures how fast the code objects run (docs/codegen.md, "AMDGPU").
// Issue 3's target: front end + IR pipeline for softmax at most 2 ms; issue
// 5's: softmax source -> loaded module at most 50 ms; issue 8's: one matmul
// config at most 100 ms.
//
// --load: the softmax and matmul cases from source to a loaded module.
// CUDA_CACHE_DISABLE=1 is set before the driver loads (otherwise the
// driver's own JIT cache makes the JIT look free). Each case runs in a forked
// child that shares nothing with the parent; it warms the process (driver
// initialised, one other kernel compiled) with tk's disk cache off, then:
//   "cold"   N x GpuKernel::compile, every repetition a new cache key:
//            total, source -> PTX, JIT, load;
//   "stages" N x the same work split by stage: the stages above, the
//            driver's JIT (PTX -> cubin, --jit-level) and the module load;
//   "kernel" the loaded kernel's time (median of 20 launches, CUDA events)
//            on softmax 4096 x BLOCK fp32 or matmul 4096^3 fp16, and its error
//            against a double-precision reference on the host;
//   "baseline" with --baseline-ptx DIR holding <case>.ptx (another
//            compiler's PTX of the same kernel): both PTX JITted 7 times,
//            interleaved, and both kernels timed and compared, so a change to
//            the emitted PTX is measured within one run.
// Then "warm_disk": fresh processes whose $TK_CACHE_DIR holds the entries
// (the time of GpuKernel::compile; cuInit not counted). --compilers adds the
// PTX compiler comparison on this build's PTX (the driver at tk's default
// level 2, marked *, and at 4, 3, 1, nvJitLink, ptxas; 7 interleaved rounds:
// time, registers, spills, kernel time, output against the driver's);
// --forced the cold loop with each compiler forced (TK_PTX_COMPILER). JSON
// with --json. Without a GPU it says so and exits 0.
//
// Not a test: nothing here runs under ctest.
#include "compiler/Compiler.h"
#include "driver/NvJitLink.h"
#include "driver/Ptxas.h"
#include "lang/Float16.h"
#include "runtime/CompileCache.h"
#include "runtime/GpuKernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tk;

namespace {

enum class Workload { None, Softmax, Matmul };

struct Case {
  const char *name;
  const char *file;
  const char *kernel;
  const char *signature;
  std::vector<std::pair<const char *, ConstValue>> constants;
  int numWarps;
  int numStages; // 0: the compiler's default
  Workload workload;
  int block;                  // softmax: BLOCK_SIZE (the row length the kernel is timed on)
  const char *arch = "sm_90"; // sm_90a: the matmul on wgmma
};

const char *kSoftmaxFile = "tutorials/02-fused-softmax.tk";
const char *kSoftmaxSignature = "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16";
// As bench/gpu_bundle.sh's matmul part: fp16, M/N/K and row strides
// divisible by 16, unit column strides.
const char *kMatmulSignature = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, "
                               "i32:1, i32:16, i32:1, i32:16, i32:1";

Case softmaxCase(const char *name, int block, int warps) {
  return {name,
          kSoftmaxFile,
          "softmax_kernel",
          kSoftmaxSignature,
          {{"BLOCK_SIZE", ConstValue::ofInt(block)}},
          warps,
          0,
          Workload::Softmax,
          block};
}

// The matmul of tutorial 4 with one tile config (wgmma on sm_90a).
Case matmulCase(const char *name, int bm, int bn, int bk, int warps, int stages, const char *arch) {
  return {name,
          "tutorials/04-matmul.tk",
          "matmul_kernel",
          kMatmulSignature,
          {{"BLOCK_SIZE_M", ConstValue::ofInt(bm)},
           {"BLOCK_SIZE_N", ConstValue::ofInt(bn)},
           {"BLOCK_SIZE_K", ConstValue::ofInt(bk)},
           {"GROUP_SIZE_M", ConstValue::ofInt(8)},
           {"ACTIVATION", ConstValue::ofString("")}},
          warps,
          stages,
          Workload::Matmul,
          0,
          arch};
}

const std::vector<Case> &allCases() {
  static const std::vector<Case> cases = {
      {"vector-add",
       "tutorials/01-vector-add.tk",
       "add_kernel",
       "*fp32:16, *fp32:16, *fp32:16, i32:16",
       {{"BLOCK_SIZE", ConstValue::ofInt(1024)}},
       4,
       0,
       Workload::None,
       0},
      softmaxCase("softmax-1024", 1024, 4),
      softmaxCase("softmax-4096", 4096, 8),
      softmaxCase("softmax-16384", 16384, 32),
      softmaxCase("softmax-16384-w16", 16384, 16),
      {"layer-norm-1024",
       "tutorials/03-layer-norm.tk",
       "layer_norm_fwd",
       "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32",
       {{"BLOCK_SIZE", ConstValue::ofInt(1024)}},
       4,
       0,
       Workload::None,
       0},
      {"matmul-128x128x32",
       "tutorials/04-matmul.tk",
       "matmul_kernel",
       kMatmulSignature,
       {{"BLOCK_SIZE_M", ConstValue::ofInt(128)},
        {"BLOCK_SIZE_N", ConstValue::ofInt(128)},
        {"BLOCK_SIZE_K", ConstValue::ofInt(32)},
        {"GROUP_SIZE_M", ConstValue::ofInt(8)},
        {"ACTIVATION", ConstValue::ofString("")}},
       4,
       4,
       Workload::Matmul,
       0},
      matmulCase("matmul-128x128x64-wgmma", 128, 128, 64, 4, 4, "sm_90a"),
      matmulCase("matmul-128x256x64-wgmma", 128, 256, 64, 8, 4, "sm_90a"),
      matmulCase("matmul-128x256x32-wgmma", 128, 256, 32, 8, 4, "sm_90a"),
      matmulCase("matmul-128x128x64-w8-wgmma", 128, 128, 64, 8, 4, "sm_90a"),
      matmulCase("matmul-128x128x32-w8-wgmma", 128, 128, 32, 8, 4, "sm_90a"),
  };
  return cases;
}

// --only NAME[,NAME...]: the cases to run (all when empty).
std::string gOnly;

bool selected(const Case &c) {
  if (gOnly.empty())
    return true;
  std::string list = "," + gOnly + ",";
  return list.find("," + std::string(c.name) + ",") != std::string::npos;
}

enum Stage { FrontEnd, ToIR, IRPipeline, GPUPasses, LLVMLower, LLVMOpt, Codegen, NumStages };
const char *kStageNames[NumStages] = {"front_end",  "ast_to_ir", "ir_pipeline",  "gpu_passes",
                                      "llvm_lower", "llvm_opt",  "nvptx_codegen"};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One compile of `c` from `source` to PTX through the compiler's stages
// (compiler/Compiler.h, as GpuKernel compiles), with the time of each stage.
// False with the rendered diagnostics in `error`.
// With `remarks` (--remarks), the compile records its optimisation remarks
// and `remarks` gets what they add outside the stages: resolving and
// rendering the records a user gets and, on its own, the registers remark's
// `ptxas -v` run.
struct RemarkCost {
  double renderMs = 0, ptxasMs = 0;
  size_t count = 0;
};

// --amdgcn: the AMD GPU the cases are also compiled for ("" when not).
std::string gAmdgcnArch;

// The stages of an amdgcn compile that differ from NVPTX's (the front end
// and the IR and GPU passes are the same work).
enum AmdStage { AmdLLVMLower, AmdLLVMOpt, AmdObject, AmdLld, NumAmdStages };
const char *kAmdStageNames[NumAmdStages] = {"amdgcn_llvm_lower", "amdgcn_llvm_opt", "amdgcn_object",
                                            "amdgcn_lld"};

bool stagedCompile(const Case &c, const std::string &source, double times[NumStages],
                   std::string &ptx, std::string &error, RemarkCost *remarks = nullptr,
                   double amdTimes[NumAmdStages] = nullptr) {
  std::fill(times, times + NumStages, 0.0);
  if (amdTimes)
    std::fill(amdTimes, amdTimes + NumAmdStages, 0.0);
  CompileOptions options;
  // amdTimes: the case for gAmdgcnArch, to a code object (in `ptx`).
  options.arch = amdTimes ? gAmdgcnArch : c.arch;
  options.numWarps = c.numWarps;
  options.numStages = c.numStages;
  if (!options.readKnobs(error))
    return false;
  CompileHooks hooks;
  hooks.remarks = remarks != nullptr;
  Compilation comp(options, hooks);
  KernelSpec spec;
  spec.kernel = c.kernel;
  spec.signature = c.signature;
  for (const auto &[k, v] : c.constants)
    spec.constants[k] = v;
  SourceText text{c.file, source, 1};
  bool ok =
      comp.parse(std::span(&text, 1)) && comp.lowerToIR(std::span(&spec, 1)) && comp.runGpuPasses();
#ifdef TK_BENCH_WITH_LLVM
  ptx.clear();
  ok = ok && (amdTimes ? comp.emitCodeObject(ptx) : comp.emitPTX(ptx));
#endif
  const std::pair<const char *, int> stageOf[] = {
      {"parse", FrontEnd},       {"ast-to-ir", ToIR},   {"block", IRPipeline}, {"gpu", GPUPasses},
      {"llvm/lower", LLVMLower}, {"llvm/opt", LLVMOpt}, {"ptx", Codegen}};
  const std::pair<const char *, int> amdStageOf[] = {{"llvm/lower", AmdLLVMLower},
                                                     {"llvm/opt", AmdLLVMOpt},
                                                     {"object", AmdObject},
                                                     {"ld.lld", AmdLld}};
  for (const StageTime &t : comp.times()) {
    for (const auto &[name, stage] : stageOf)
      if (t.name == name && !(amdTimes && stage >= LLVMLower))
        times[stage] = t.ms;
    if (amdTimes)
      for (const auto &[name, stage] : amdStageOf)
        if (t.name == name)
          amdTimes[stage] = t.ms;
    if (remarks && t.name == "remarks-ptxas")
      remarks->ptxasMs = t.ms;
  }
  if (ok && remarks) {
    auto t0 = Clock::now();
    remarks->count = comp.kernelRemarks(c.kernel).size();
    remarks->renderMs = msSince(t0);
  }
  if (!ok)
    error = comp.diag().renderAll();
  return ok;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Stats {
  double median = 0, min = 0;
};
Stats statsOf(const std::vector<double> &v) {
  if (v.empty())
    return {};
  return {median(v), *std::min_element(v.begin(), v.end())};
}

// From the working directory when run from a checkout's root (the GPU
// machine's copy), else from the source tree this was built from.
std::string readSource(const char *file) {
  std::ifstream in(file);
  if (!in)
    in.open(std::string(TK_SOURCE_DIR) + "/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (uint8_t(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

std::string errorJson(const std::string &what) { return "{\"error\": " + jsonString(what) + "}"; }

// "name_ms": median, "min_name_ms": minimum.
std::string statsJson(const char *name, const std::vector<double> &v) {
  Stats st = statsOf(v);
  return fmt::format("\"{}_ms\": {:.3f}, \"min_{}_ms\": {:.3f}", name, st.median, name, st.min);
}

// Pulls "key": number out of a flat JSON object written here (the first
// occurrence).
double field(const std::string &json, const std::string &key) {
  size_t at = json.find("\"" + key + "\": ");
  return at == std::string::npos ? -1 : std::atof(json.c_str() + at + key.size() + 4);
}

//===----------------------------------------------------------------------===//
// --load
//===----------------------------------------------------------------------===//

int gJitLevel = -1; // --jit-level

GpuCompileOptions gpuOptions(const Case &c, const std::string &salt) {
  GpuCompileOptions o;
  o.kernel = c.kernel;
  o.signature = c.signature;
  for (const auto &[k, v] : c.constants)
    o.constants[k] = v;
  o.numWarps = c.numWarps;
  o.arch = c.arch;
  if (c.numStages > 0)
    o.numStages = c.numStages;
  o.jitOptimizationLevel = gJitLevel;
  // A salt in the key: every repetition is a real compile, not a lookup.
  o.keyExtras.push_back(salt);
  return o;
}

// Runs `body` in a forked child and returns the JSON text it produced (or
// an error). The parent never initialises CUDA, so forking is safe, and
// every child starts with its own driver state and caches.
template <class Body> std::string inChild(Body body) {
  int fds[2];
  if (pipe(fds) != 0)
    return "{\"error\": \"pipe failed\"}";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out = body();
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0)
        break;
      done += size_t(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (out.empty())
    return fmt::format("{{\"error\": \"child exited with status {}\"}}", status);
  return out;
}

// The inputs of one timed launch: softmax on 4096 rows x BLOCK fp32 in
// [-4, 4), or the matmul at 4096^3 fp16 in [-1, 1); the launch parameters
// point into this object, so it stays where it is.
struct Workbench {
  static constexpr int kRows = 4096, kSize = 4096;
  Workload kind = Workload::None;
  int cols = 0;
  std::vector<float> x;            // softmax input
  std::vector<uint16_t> a, b;      // matmul inputs (fp16 bits)
  DeviceBuffer in0, in1, out;      // softmax: in0, out; matmul: in0 = A, in1 = B, out = C
  CUdeviceptr ptrs[3] = {0, 0, 0}; // in parameter order
  int32_t ints[9] = {};
  void *params[12] = {};
  std::array<unsigned, 3> grid = {1, 1, 1};
  double flops = 0, bytes = 0; // per launch, for the rate

  bool prepare(const Case &c, std::string &error) {
    kind = c.workload;
    std::mt19937 rng(42);
    if (kind == Workload::Softmax) {
      cols = c.block;
      x.resize(size_t(kRows) * size_t(cols));
      std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
      for (float &v : x)
        v = dist(rng);
      size_t n = x.size() * sizeof(float);
      if (!in0.allocate(n, error) || !out.allocate(n, error) || !in0.upload(x.data(), n, error))
        return false;
      ptrs[0] = out.ptr();
      ptrs[1] = in0.ptr();
      ints[0] = ints[1] = cols; // row strides
      ints[2] = kRows;
      ints[3] = cols;
      void *p[] = {&ptrs[0], &ptrs[1], &ints[0], &ints[1], &ints[2], &ints[3]};
      std::copy(std::begin(p), std::end(p), params);
      grid = {unsigned(kRows), 1, 1};
      bytes = 2.0 * double(n);
      return true;
    }
    const int n = kSize;
    a.resize(size_t(n) * size_t(n));
    b.resize(a.size());
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (uint16_t &v : a)
      v = floatToHalf(dist(rng));
    for (uint16_t &v : b)
      v = floatToHalf(dist(rng));
    size_t bytesAB = a.size() * 2;
    if (!in0.allocate(bytesAB, error) || !in1.allocate(bytesAB, error) ||
        !out.allocate(bytesAB, error) || !in0.upload(a.data(), bytesAB, error) ||
        !in1.upload(b.data(), bytesAB, error))
      return false;
    ptrs[0] = in0.ptr();
    ptrs[1] = in1.ptr();
    ptrs[2] = out.ptr();
    // M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn
    int32_t v[] = {n, n, n, n, 1, n, 1, n, 1};
    std::copy(std::begin(v), std::end(v), ints);
    for (int i = 0; i < 3; ++i)
      params[i] = &ptrs[i];
    for (int i = 0; i < 9; ++i)
      params[3 + i] = &ints[i];
    int64_t bm = c.constants[0].second.intValue, bn = c.constants[1].second.intValue;
    grid = {unsigned(((n + bm - 1) / bm) * ((n + bn - 1) / bn)), 1, 1};
    flops = 2.0 * n * double(n) * n;
    return true;
  }

  // The output as floats.
  bool result(std::vector<float> &values, std::string &error) const {
    if (kind == Workload::Softmax) {
      values.resize(x.size());
      return out.download(values.data(), values.size() * sizeof(float), error);
    }
    std::vector<uint16_t> c(a.size());
    if (!out.download(c.data(), c.size() * 2, error))
      return false;
    values.resize(c.size());
    for (size_t i = 0; i < c.size(); ++i)
      values[i] = halfToFloat(c[i]);
    return true;
  }

  // The largest relative error against a double-precision reference: every
  // 64th row of the softmax (all of its columns), or 256 random entries of
  // the matmul (relative to 1 + |reference|, fp16 output).
  double maxRelativeError(const std::vector<float> &got) const {
    double worst = 0;
    if (kind == Workload::Softmax) {
      for (int r = 0; r < kRows; r += 64) {
        const float *row = &x[size_t(r) * size_t(cols)];
        double mx = *std::max_element(row, row + cols), sum = 0;
        for (int j = 0; j < cols; ++j)
          sum += std::exp(double(row[j]) - mx);
        for (int j = 0; j < cols; ++j) {
          double want = std::exp(double(row[j]) - mx) / sum;
          double have = got[size_t(r) * size_t(cols) + size_t(j)];
          worst = std::max(worst, std::abs(have - want) / want);
        }
      }
      return worst;
    }
    const int n = kSize;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> pick(0, n - 1);
    for (int t = 0; t < 256; ++t) {
      int i = pick(rng), j = pick(rng);
      double want = 0;
      for (int k = 0; k < n; ++k)
        want += double(halfToFloat(a[size_t(i) * n + size_t(k)])) *
                double(halfToFloat(b[size_t(k) * n + size_t(j)]));
      double have = got[size_t(i) * n + size_t(j)];
      worst = std::max(worst, std::abs(have - want) / (1.0 + std::abs(want)));
    }
    return worst;
  }
};

struct KernelTime {
  double us = 0;
  double rate = 0; // GB/s (softmax: one read and one write) or TFLOP/s (matmul)
  std::vector<float> output;
};

// Median of 20 launches (after one warm-up) of `fn` on `w`, CUDA events.
bool timeKernel(CudaDriver &cuda, CUfunction fn, int warps, int dynamicShared, Workbench &w,
                KernelTime &out, std::string &error) {
  const CudaFunctions &api = cuda.api();
  if (dynamicShared > 48 * 1024 && !cuda.setMaxDynamicShared(fn, dynamicShared, error))
    return false;
  CUevent start = nullptr, stop = nullptr;
  api.cuEventCreate(&start, 0);
  api.cuEventCreate(&stop, 0);
  std::vector<double> times;
  bool ok = true;
  for (int r = 0; r < 21 && ok; ++r) {
    api.cuEventRecord(start, nullptr);
    CUresult res = api.cuLaunchKernel(fn, w.grid[0], w.grid[1], w.grid[2], unsigned(warps) * 32, 1,
                                      1, unsigned(dynamicShared), nullptr, w.params, nullptr);
    api.cuEventRecord(stop, nullptr);
    ok = cuda.check(res, "cuLaunchKernel", error) &&
         cuda.check(api.cuEventSynchronize(stop), "cuEventSynchronize", error);
    float ms = 0;
    api.cuEventElapsedTime(&ms, start, stop);
    if (r > 0) // the first launch warms caches and clocks
      times.push_back(ms * 1000.0);
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  if (!ok)
    return false;
  out.us = median(times);
  out.rate = w.kind == Workload::Matmul ? w.flops / (out.us * 1e6) : w.bytes / (out.us * 1e3);
  return w.result(out.output, error);
}

std::string kernelJson(const KernelTime &t, const Workbench &w, const KernelResources &res) {
  return fmt::format("{{\"us\": {:.2f}, \"{}\": {:.1f}, \"max_rel_err\": {:.3g}, "
                     "\"registers\": {}, \"spill_bytes\": {}}}",
                     t.us, w.kind == Workload::Matmul ? "tflop_s" : "gb_s", t.rate,
                     w.maxRelativeError(t.output), res.registers, res.localBytes);
}

double maxDifference(const std::vector<float> &x, const std::vector<float> &y) {
  double d = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    d = std::max(d, double(std::abs(x[i] - y[i])));
  return d;
}

// Loads `cubin`, times its kernel on `w`; fills `res` and `t`. The module
// is unloaded before returning.
bool loadAndTime(CudaDriver &cuda, const std::string &cubin, const Case &c, int dynamicShared,
                 Workbench &w, KernelResources &res, KernelTime &t, std::string &error) {
  CUmodule m = nullptr;
  CUfunction fn = nullptr;
  bool ok = cuda.loadModule(cubin, m, error) && cuda.getFunction(m, c.kernel, fn, error) &&
            cuda.queryResources(fn, res, error) &&
            timeKernel(cuda, fn, c.numWarps, dynamicShared, w, t, error);
  if (m)
    cuda.api().cuModuleUnload(m);
  return ok;
}

// The PTX compilers on one PTX (--compilers): compile time (7 rounds,
// interleaved so that drift in clocks or load hits each alike), registers,
// spills, the kernel's time and its output against the driver's.
std::string compareCompilers(CudaDriver &cuda, const Case &c, const std::string &ptx,
                             int dynamicShared, Workbench &w) {
  struct Variant {
    const char *compiler;
    int level;
  };
  // -1: tk's default level (kDefaultJitLevel); 4 is the driver's own default.
  const Variant kVariants[] = {{"driver", -1}, {"driver", 4},     {"driver", 3},
                               {"driver", 1},  {"nvjitlink", -1}, {"ptxas", -1}};
  constexpr int kNum = 6;
  std::vector<double> times[kNum];
  std::string cubins[kNum], failures[kNum];
  for (int r = 0; r < 7; ++r)
    for (int v = 0; v < kNum; ++v) {
      if (!failures[v].empty())
        continue;
      JitOptions opts;
      opts.optimizationLevel = kVariants[v].level;
      auto t0 = Clock::now();
      if (ptxToCubinWith(kVariants[v].compiler, cuda, ptx, opts, cubins[v], failures[v]))
        times[v].push_back(msSince(t0));
    }
  std::vector<float> reference;
  std::string out;
  for (int v = 0; v < kNum; ++v) {
    JitOptions asked;
    asked.optimizationLevel = kVariants[v].level;
    std::string entry =
        fmt::format("{{\"compiler\": \"{}\", \"level\": {}, \"effective_level\": {}",
                    kVariants[v].compiler, kVariants[v].level, jitLevel(asked));
    KernelResources res;
    KernelTime t;
    std::string why = failures[v];
    if (why.empty() && loadAndTime(cuda, cubins[v], c, dynamicShared, w, res, t, why)) {
      if (reference.empty())
        reference = t.output;
      entry +=
          fmt::format(", {}, \"cubin_bytes\": {}, \"kernel\": {}, \"max_diff_vs_driver\": {:.3g}}}",
                      statsJson("jit", times[v]), cubins[v].size(), kernelJson(t, w, res),
                      maxDifference(t.output, reference));
    } else {
      entry += ", \"error\": " + jsonString(why) + "}";
    }
    out += (out.empty() ? "" : ", ") + entry;
  }
  return "[" + out + "]";
}

// The baseline PTX (--baseline-ptx) against this build's: both JITted 7
// times, interleaved, then both kernels timed on the same inputs.
std::string compareBaseline(CudaDriver &cuda, const Case &c, const std::string &ptx,
                            const std::string &baseline, int dynamicShared, Workbench &w) {
  const std::string *sources[2] = {&baseline, &ptx};
  std::vector<double> times[2];
  std::string cubins[2], error;
  JitOptions opts;
  opts.optimizationLevel = gJitLevel;
  for (int r = 0; r < 7; ++r)
    for (int v = 0; v < 2; ++v) {
      auto t0 = Clock::now();
      if (!ptxToCubinWith("driver", cuda, *sources[v], opts, cubins[v], error))
        return errorJson(error);
      times[v].push_back(msSince(t0));
    }
  std::string out = "{";
  std::vector<float> outputs[2];
  const char *names[2] = {"baseline", "this"};
  for (int v = 0; v < 2; ++v) {
    KernelResources res;
    KernelTime t;
    if (!loadAndTime(cuda, cubins[v], c, dynamicShared, w, res, t, error))
      return errorJson(error);
    out += fmt::format("\"{}\": {{\"ptx_bytes\": {}, {}, \"kernel\": {}}}, ", names[v],
                       sources[v]->size(), statsJson("jit", times[v]), kernelJson(t, w, res));
    outputs[v] = std::move(t.output);
  }
  return out + fmt::format("\"max_diff\": {:.3g}}}", maxDifference(outputs[0], outputs[1]));
}

// Opens the driver and compiles the tutorial's vector add: the one-time
// set-up of the driver and of LLVM, outside the timed loops.
CudaDriver *warmProcess(std::string &error) {
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return nullptr;
  GpuCompileOptions warm;
  warm.kernel = "add_kernel";
  warm.signature = "*fp32:16, *fp32:16, *fp32:16, i32:16";
  warm.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  if (!GpuKernel::compile(readSource("tutorials/01-vector-add.tk"), "01-vector-add.tk", warm,
                          error))
    return nullptr;
  return cuda;
}

// The cold loop (N compiles through GpuKernel::compile, tk's disk cache
// off), with `compiler` forced through TK_PTX_COMPILER ("" = the default).
// Returns the JSON fields and the last kernel.
std::string coldLoop(const Case &c, int repeat, const std::string &source, GpuKernel *&k,
                     std::string &error) {
  std::vector<double> total, compile, jit, load;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = Clock::now();
    k = GpuKernel::compile(source, c.file, gpuOptions(c, fmt::format("cold {}", r)), error);
    double ms = msSince(t0);
    if (!k)
      return "";
    total.push_back(ms);
    compile.push_back(k->info().compileMs);
    jit.push_back(k->info().jitMs);
    load.push_back(k->info().loadMs);
  }
  return fmt::format("{{\"ptx_compiler\": \"{}\", \"fallback\": {}, {}, {}, {}, {}, "
                     "\"ptx_bytes\": {}, \"cubin_bytes\": {}, \"registers\": {}}}",
                     k->info().ptxCompiler, jsonString(k->info().ptxCompilerFallback),
                     statsJson("total", total), statsJson("compile", compile),
                     statsJson("jit", jit), statsJson("load", load), k->ptx().size(),
                     k->cubin().size(), k->info().registers);
}

// One case in a warm process (a child): the cold loop, the staged loop, the
// kernel, and the baseline and compiler comparisons when asked for.
std::string loadRun(const Case &c, int repeat, const std::string &baseline, bool compilers) {
  setenv("TK_CACHE_DIR", "", 1); // tk's disk cache off
  unsetenv("TK_PTX_COMPILER");
  std::string error;
  CudaDriver *cuda = warmProcess(error);
  if (!cuda)
    return errorJson(error);
  std::string source = readSource(c.file);
  GpuKernel *k = nullptr;
  std::string cold = coldLoop(c, repeat, source, k, error);
  if (!k)
    return errorJson(error);

  std::vector<double> stage[NumStages], jit, load, total;
  JitOptions jitOptions;
  jitOptions.optimizationLevel = gJitLevel;
  for (int r = 0; r < repeat; ++r) {
    double t[NumStages];
    std::string ptx, cubin;
    auto t0 = Clock::now();
    if (!stagedCompile(c, source, t, ptx, error))
      return errorJson(error);
    auto t1 = Clock::now();
    if (!ptxToCubinWith("driver", *cuda, ptx, jitOptions, cubin, error))
      return errorJson(error);
    jit.push_back(msSince(t1));
    t1 = Clock::now();
    CUmodule m = nullptr;
    CUfunction fn = nullptr;
    bool ok = cuda->loadModule(cubin, m, error) && cuda->getFunction(m, c.kernel, fn, error);
    load.push_back(msSince(t1));
    total.push_back(msSince(t0));
    if (m)
      cuda->api().cuModuleUnload(m);
    if (!ok)
      return errorJson(error);
    for (int s = 0; s < NumStages; ++s)
      stage[s].push_back(t[s]);
  }
  std::string stages;
  for (int s = 0; s < NumStages; ++s)
    stages += statsJson(kStageNames[s], stage[s]) + ", ";
  stages +=
      statsJson("jit", jit) + ", " + statsJson("load", load) + ", " + statsJson("total", total);

  Workbench w;
  KernelTime kt;
  int dynamicShared = k->info().dynamicSharedBytes;
  if (!w.prepare(c, error) ||
      !timeKernel(*cuda, k->function(), c.numWarps, dynamicShared, w, kt, error))
    return errorJson(error);
  std::string out = fmt::format("{{\"cold\": {},\n     \"stages\": {{{}}},\n     \"kernel\": {}",
                                cold, stages, kernelJson(kt, w, k->resources()));
  if (!baseline.empty())
    out +=
        ",\n     \"baseline\": " + compareBaseline(*cuda, c, k->ptx(), baseline, dynamicShared, w);
  if (compilers)
    out += ",\n     \"compilers\": " + compareCompilers(*cuda, c, k->ptx(), dynamicShared, w);
  return out + "}";
}

// The cold loop alone with `compiler` forced (--forced).
std::string forcedRun(const Case &c, int repeat, const std::string &compiler) {
  setenv("TK_CACHE_DIR", "", 1);
  setenv("TK_PTX_COMPILER", compiler.c_str(), 1);
  std::string error;
  if (!warmProcess(error))
    return errorJson(error);
  GpuKernel *k = nullptr;
  std::string cold = coldLoop(c, repeat, readSource(c.file), k, error);
  return k ? cold : errorJson(error);
}

// One fresh process with a warm disk cache: the time of compile() alone.
std::string warmDiskRun(const Case &c, const std::string &dir) {
  setenv("TK_CACHE_DIR", dir.c_str(), 1);
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return errorJson(error);
  std::string source = readSource(c.file);
  auto t0 = Clock::now();
  GpuKernel *k = GpuKernel::compile(source, c.file, gpuOptions(c, "disk"), error);
  double ms = msSince(t0);
  if (!k)
    return errorJson(error);
  return fmt::format("{{\"ms\": {:.3f}, \"from_cache\": {}, \"from_cubin\": {}}}", ms,
                     k->info().origin == GpuKernelOrigin::Cache ? "true" : "false",
                     k->info().fromCubin ? "true" : "false");
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int loadBench(const std::string &jsonPath, int repeat, const std::string &baselineDir,
              bool compilers, bool forcedLoops) {
  // Before anything loads the driver: its own JIT cache off.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::string probe = inChild([] {
    std::string error;
    CudaDriver *cuda = CudaDriver::get(error);
    if (!cuda)
      return errorJson(error);
    return fmt::format("{{\"device\": {}, \"driver_version\": {}}}", jsonString(cuda->deviceName()),
                       cuda->driverVersion());
  });
  if (probe.find("\"error\"") != std::string::npos) {
    std::printf("compile_bench --load: no GPU, skipped: %s\n", probe.c_str());
    return 0;
  }
  char tmpl[] = "/tmp/tk-compile-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl) ? tmpl : "";
  std::printf("%s  CUDA_CACHE_DISABLE=1, tk disk cache in %s, %d repetitions\n", probe.c_str(),
              dir.c_str(), repeat);
  std::printf("%-18s %8s %8s %8s | %6s %6s %6s %6s %6s %6s %6s %7s %6s %7s | %8s %8s %9s | %8s\n",
              "kernel", "cold", "->PTX", "JIT", "front", "toIR", "irpipe", "gpu", "lower", "opt",
              "ptxgen", "JIT", "load", "sum", "kern us", "rate", "rel err", "warmdisk");
  std::string rows;
  for (const Case &c : allCases()) {
    if (!selected(c))
      continue;
    if (c.workload == Workload::None)
      continue;
    std::string baseline = baselineDir.empty() ? "" : readFile(baselineDir + "/" + c.name + ".ptx");
    std::string run = inChild([&] { return loadRun(c, repeat, baseline, compilers); });
    std::string forced;
    if (forcedLoops)
      for (const char *compiler : {"driver", "nvjitlink", "ptxas"}) {
        std::string f = inChild([&] { return forcedRun(c, repeat, compiler); });
        forced += fmt::format("{}\"{}\": {}", forced.empty() ? "" : ", ", compiler, f);
      }
    // Populate the disk cache, then time fresh processes that find it.
    std::string populate = inChild([&] { return warmDiskRun(c, dir); });
    std::vector<double> warm;
    std::string warmRuns;
    for (int r = 0; r < std::min(repeat, 5); ++r) {
      std::string wr = inChild([&] { return warmDiskRun(c, dir); });
      warm.push_back(field(wr, "ms"));
      warmRuns += (warmRuns.empty() ? "" : ", ") + wr;
    }
    Stats ws = statsOf(warm);
    auto stage = [&](const char *name) {
      size_t at = run.find("\"stages\"");
      return at == std::string::npos ? -1.0 : field(run.substr(at), std::string(name) + "_ms");
    };
    size_t kat = run.find("\"kernel\"");
    std::string kernel = kat == std::string::npos ? "" : run.substr(kat);
    double rate = kernel.empty()                   ? -1
                  : c.workload == Workload::Matmul ? field(kernel, "tflop_s")
                                                   : field(kernel, "gb_s");
    std::printf("%-18s %8.2f %8.2f %8.2f | %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.2f %6.2f "
                "%7.2f | %8.2f %8.1f %9.2g | %8.2f\n",
                c.name, field(run, "total_ms"), field(run, "compile_ms"), field(run, "jit_ms"),
                stage("front_end"), stage("ast_to_ir"), stage("ir_pipeline"), stage("gpu_passes"),
                stage("llvm_lower"), stage("llvm_opt"), stage("nvptx_codegen"), stage("jit"),
                stage("load"), stage("total"), kernel.empty() ? -1 : field(kernel, "us"), rate,
                kernel.empty() ? -1 : field(kernel, "max_rel_err"), ws.median);
    size_t bat = run.find("\"baseline\"");
    if (bat != std::string::npos) {
      std::string b = run.substr(bat);
      size_t tat = b.find("\"this\"");
      std::string t = tat == std::string::npos ? "" : b.substr(tat);
      std::printf("  baseline PTX: JIT %.2f ms, kernel %.2f us; this: JIT %.2f ms, kernel %.2f "
                  "us; max diff %.3g\n",
                  field(b, "jit_ms"), field(b, "us"), field(t, "jit_ms"), field(t, "us"),
                  field(b, "max_diff"));
    }
    for (size_t at = run.find("{\"compiler\": "); at != std::string::npos;
         at = run.find("{\"compiler\": ", at + 1)) {
      std::string v = run.substr(at, run.find("{\"compiler\": ", at + 1) - at);
      size_t name = v.find(": \"") + 3;
      std::printf("  %-9s level %d%s: JIT %7.2f ms, kernel %8.2f us, %3d registers, %3d spill "
                  "bytes, max diff %.3g\n",
                  v.substr(name, v.find('"', name) - name).c_str(),
                  int(field(v, "effective_level")), field(v, "level") < 0 ? "*" : " ",
                  field(v, "jit_ms"), field(v, "us"), int(field(v, "registers")),
                  int(field(v, "spill_bytes")), field(v, "max_diff_vs_driver"));
    }
    if (run.find("\"error\"") != std::string::npos)
      std::printf("  %s\n", run.c_str());
    rows += fmt::format("{}    {{\"kernel\": \"{}\", \"num_warps\": {}, \"num_stages\": {},\n"
                        "     \"run\": {},\n"
                        "     \"cold_forced\": {{{}}},\n     \"populate\": {},\n"
                        "     \"warm_disk_ms\": {:.3f}, \"min_warm_disk_ms\": {:.3f},\n"
                        "     \"warm_disk_runs\": [{}]}}",
                        rows.empty() ? "" : ",\n", c.name, c.numWarps, c.numStages, run, forced,
                        populate, ws.median, ws.min, warmRuns);
  }
  // Leave no cache behind.
  std::string cleanup = "rm -rf " + dir;
  if (!dir.empty() && std::system(cleanup.c_str()) != 0)
    std::printf("could not remove %s\n", dir.c_str());
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << fmt::format("{{\n  \"date\": \"{}\",\n  \"probe\": {},\n  \"repeat\": {},\n"
                       "  \"cuda_cache_disable\": true,\n  \"jit_level\": {},\n"
                       "  \"baseline_ptx\": {},\n  \"targets_ms\": {{\"softmax\": 50, "
                       "\"matmul\": 100}},\n  \"rows\": [\n{}\n  ]\n}}\n",
                       utcNow(), probe, repeat, gJitLevel, jsonString(baselineDir), rows);
  }
  return 0;
}

// The CPU time (user + system) of this process's finished children, ms.
double childCpuMs() {
  rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  return (double(u.ru_utime.tv_sec) + double(u.ru_stime.tv_sec)) * 1e3 +
         (double(u.ru_utime.tv_usec) + double(u.ru_stime.tv_usec)) * 1e-3;
}

// Stage times without a GPU, every case; with `ptxas`, also the toolkit's
// ptxas on each PTX (a process: wall and CPU time), the proxy for the
// driver's JIT when iterating on the PTX without a GPU.
int stageBench(const std::string &jsonPath, int repeat, bool ptxas, bool remarks) {
  std::string rows;
  bool amd = !gAmdgcnArch.empty();
  if (amd)
    std::printf("amdgcn: each case also compiled for %s to a code object (compile time only: "
                "no AMD GPU here, so no runtime speed is measured)\n",
                gAmdgcnArch.c_str());
  std::printf("%-18s", "kernel");
  for (const char *name : kStageNames)
    std::printf(" %13s", name);
  std::printf(
      " %9s%s%s%s  (median ms; %d compiles, matmul %d)\n", "total",
      ptxas ? "     ptxas  ptxas-cpu" : "", remarks ? "  +remarks  overhead  remarks-ptxas" : "",
      amd ? "  amd-llvm  amd-object   ld.lld  amdgcn-total" : "", repeat, std::max(5, repeat / 5));
  for (const Case &c : allCases()) {
    if (!selected(c))
      continue;
    std::string source = readSource(c.file);
    int n = c.workload == Workload::Matmul ? std::max(5, repeat / 5) : repeat;
    std::vector<double> stage[NumStages], total, upToPipeline, ptxasWall, ptxasCpu;
    std::vector<double> withRemarks, remarksPtxas;
    std::vector<double> amdStage[NumAmdStages], amdTotal;
    std::string amdError; // the amdgcn compile's first error line: a case it cannot take
    size_t remarkCount = 0;
    for (int r = 0; r < n; ++r) {
      double t[NumStages];
      std::string ptx, error;
      if (!stagedCompile(c, source, t, ptx, error)) {
        std::fprintf(stderr, "%s: %s", c.name, error.c_str());
        return 1;
      }
      if (remarks) {
        // Interleaved with the plain compile, so both see the same machine.
        double tr[NumStages];
        std::string ptxWith;
        RemarkCost cost;
        if (!stagedCompile(c, source, tr, ptxWith, error, &cost)) {
          std::fprintf(stderr, "%s (remarks): %s", c.name, error.c_str());
          return 1;
        }
        if (ptxWith != ptx) {
          std::fprintf(stderr, "%s: the PTX differs with remarks on\n", c.name);
          return 1;
        }
        double sum = cost.renderMs;
        for (double x : tr)
          sum += x;
        withRemarks.push_back(sum);
        remarksPtxas.push_back(cost.ptxasMs);
        remarkCount = cost.count;
      }
      if (amd && amdError.empty()) {
        // Interleaved too; the stages before LLVM are the NVPTX compile's work.
        double ta[NumStages], amdT[NumAmdStages];
        std::string codeObject, amdErr;
        if (stagedCompile(c, source, ta, codeObject, amdErr, nullptr, amdT)) {
          double sum = ta[FrontEnd] + ta[ToIR] + ta[IRPipeline] + ta[GPUPasses];
          for (int s = 0; s < NumAmdStages; ++s) {
            amdStage[s].push_back(amdT[s]);
            sum += amdT[s];
          }
          amdTotal.push_back(sum);
        } else {
          // A located error (more threads or LDS than an AMD workgroup has):
          // the row says so, and the other cases go on.
          amdError = amdErr.substr(0, amdErr.find('\n'));
        }
      }
      if (ptxas) {
        std::string cubin;
        double cpu0 = childCpuMs();
        auto t0 = Clock::now();
        if (!assembleWithPtxas(ptx, c.arch, cubin, error, kDefaultJitLevel)) {
          std::fprintf(stderr, "%s: %s\n", c.name, error.c_str());
          return 1;
        }
        ptxasWall.push_back(msSince(t0));
        ptxasCpu.push_back(childCpuMs() - cpu0);
      }
      double sum = 0;
      for (int s = 0; s < NumStages; ++s) {
        stage[s].push_back(t[s]);
        sum += t[s];
      }
      total.push_back(sum);
      upToPipeline.push_back(t[FrontEnd] + t[ToIR] + t[IRPipeline]);
    }
    std::printf("%-18s", c.name);
    std::string fields;
    for (int s = 0; s < NumStages; ++s) {
      std::printf(" %13.3f", median(stage[s]));
      fields += statsJson(kStageNames[s], stage[s]) + ", ";
    }
    std::printf(" %9.3f", median(total));
    if (ptxas) {
      std::printf(" %9.2f %10.2f", median(ptxasWall), median(ptxasCpu));
      fields += statsJson("ptxas", ptxasWall) + ", " + statsJson("ptxas_cpu", ptxasCpu) + ", ";
    }
    if (remarks) {
      double overhead = 100 * (median(withRemarks) / median(total) - 1);
      std::printf(" %9.3f %8.1f%% %14.2f", median(withRemarks), overhead, median(remarksPtxas));
      fields += statsJson("total_with_remarks", withRemarks) + ", " +
                statsJson("remarks_ptxas", remarksPtxas) +
                fmt::format(", \"remarks\": {}, \"remarks_overhead_percent\": {:.2f}, ",
                            remarkCount, overhead);
    }
    if (amd && !amdError.empty()) {
      std::printf("  amdgcn: %s", amdError.c_str());
      fields += "\"amdgcn_error\": " + jsonString(amdError) + ", ";
    } else if (amd) {
      std::printf(" %9.3f %11.3f %8.3f %13.3f",
                  median(amdStage[AmdLLVMLower]) + median(amdStage[AmdLLVMOpt]),
                  median(amdStage[AmdObject]), median(amdStage[AmdLld]), median(amdTotal));
      for (int s = 0; s < NumAmdStages; ++s)
        fields += statsJson(kAmdStageNames[s], amdStage[s]) + ", ";
      fields += statsJson("amdgcn_total", amdTotal) + ", ";
    }
    std::printf("\n");
    rows += fmt::format("{}    {{\"kernel\": \"{}\", \"compiles\": {}, {}\"source_to_ir_opt_ms\": "
                        "{:.4f}, {}}}",
                        rows.empty() ? "" : ",\n", c.name, n, fields, median(upToPipeline),
                        statsJson("total", total));
  }
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << fmt::format("{{\n  \"date\": \"{}\",\n  \"repeat\": {},\n  \"amdgcn_arch\": {},\n"
                       "  \"with_llvm\": {},\n  \"rows\": [\n{}\n  ]\n}}\n",
                       utcNow(), repeat, jsonString(gAmdgcnArch),
#ifdef TK_BENCH_WITH_LLVM
                       "true",
#else
                       "false",
#endif
                       rows);
  }
  return 0;
}

// --jit-files DIR: the driver's JIT (tk's default level) on every *.ptx file
// of DIR, 9 rounds interleaved in one warm child: what the JIT costs for a
// given PTX text, e.g. an empty kernel (the JIT's fixed cost) beside
// hand-edited variants of a kernel's PTX (which part of it costs the time).
// The cubin's size says whether a variant compiled to what it should.
int jitFilesBench(const std::string &dir, const std::string &jsonPath) {
  // As --load: without this the driver's own JIT cache answers every round
  // after the first (0.2-0.4 ms whatever the PTX).
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".ptx")
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string json = inChild([&] {
    std::string error;
    CudaDriver *cuda = warmProcess(error);
    if (!cuda)
      return errorJson(error);
    std::vector<std::string> ptx;
    for (const std::string &n : names)
      ptx.push_back(readFile(dir + "/" + n));
    std::vector<std::vector<double>> ms(names.size());
    std::vector<std::string> failure(names.size()), cubin(names.size());
    JitOptions opts;
    opts.optimizationLevel = gJitLevel;
    for (int r = 0; r < 9; ++r)
      for (size_t i = 0; i < names.size(); ++i) {
        if (!failure[i].empty())
          continue;
        auto t0 = Clock::now();
        if (ptxToCubinWith("driver", *cuda, ptx[i], opts, cubin[i], failure[i]))
          ms[i].push_back(msSince(t0));
      }
    std::string rows;
    for (size_t i = 0; i < names.size(); ++i) {
      Stats st = statsOf(ms[i]);
      rows += fmt::format("{}    {{\"file\": {}, \"ptx_bytes\": {}, \"jit_ms\": {:.2f}, "
                          "\"min_jit_ms\": {:.2f}, \"cubin_bytes\": {}, \"error\": {}}}",
                          rows.empty() ? "" : ",\n", jsonString(names[i]), ptx[i].size(), st.median,
                          st.min, cubin[i].size(), jsonString(failure[i]));
    }
    return fmt::format("[\n{}\n  ]", rows);
  });
  std::printf("%s\n", json.c_str());
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << fmt::format("{{\n  \"date\": \"{}\",\n  \"jit_level\": {},\n  \"files\": {}\n}}\n",
                       utcNow(), gJitLevel, json);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string jsonPath, baselineDir, jitFilesDir;
  int repeat = 0;
  bool load = false, compilers = false, forcedLoops = false, ptxas = false, remarks = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--load")
      load = true;
    else if (a == "--compilers")
      compilers = true;
    else if (a == "--forced")
      forcedLoops = true;
    else if (a == "--ptxas")
      ptxas = true;
    else if (a == "--remarks")
      remarks = true;
    else if (a == "--amdgcn" || a.starts_with("--amdgcn="))
      gAmdgcnArch = a == "--amdgcn" ? "gfx942" : a.substr(9);
    else if (a == "--jit-level" && i + 1 < argc)
      gJitLevel = std::atoi(argv[++i]);
    else if (a == "--baseline-ptx" && i + 1 < argc)
      baselineDir = argv[++i];
    else if (a == "--jit-files" && i + 1 < argc)
      jitFilesDir = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      gOnly = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: compile_bench [--ptxas] [--remarks] [--amdgcn[=ARCH]] | --load "
                   "[--compilers] [--forced] "
                   "[--jit-level N] "
                   "[--baseline-ptx DIR] | --jit-files DIR] [--only NAME,...] [--json FILE] "
                   "[--repeat N]\n");
      return 2;
    }
  }
  if (!gAmdgcnArch.empty() && !isAMDGPUArch(gAmdgcnArch)) {
    std::fprintf(stderr, "--amdgcn: '%s' is not one of %s\n", gAmdgcnArch.c_str(),
                 std::string(kAMDGPUArchList).c_str());
    return 2;
  }
  if (!gAmdgcnArch.empty() && (load || !jitFilesDir.empty())) {
    std::fprintf(stderr, "--amdgcn times compiles only (no AMD GPU here): not with --load or "
                         "--jit-files\n");
    return 2;
  }
  if (!jitFilesDir.empty())
    return jitFilesBench(jitFilesDir, jsonPath);
  if (load)
    return loadBench(jsonPath, repeat ? repeat : 9, baselineDir, compilers, forcedLoops);
  return stageBench(jsonPath, repeat ? repeat : 50, ptxas, remarks);
}
