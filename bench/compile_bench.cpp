// compile_bench: how long tk takes to compile a kernel, stage by stage, and
// (--load, on a GPU machine) from source to a loaded module.
//
//   build/bin/compile_bench [--json FILE] [--repeat N]
//   build/bin/compile_bench --load [--jit-level N] [--json FILE] [--repeat N]
//
// For each tutorial kernel, in one warm process, times N compiles from the
// source text: the front end (lex, parse, checks), AST -> IR with
// specialisation, the IR pipeline (lowering/Pipeline.h), and, when tk is
// built with LLVM, the GPU passes plus LLVM -> PTX. Reports the median and the
// minimum of each stage in milliseconds. Issue 3's target: front end + IR
// pipeline for the softmax tutorial at most 2 ms on the development machine;
// issue 5's: source to loaded module at most 50 ms (--load).
//
// --load: the softmax tutorial at BLOCK 1024/4096/16384 through
// GpuKernel::compile, source to loaded module. CUDA_CACHE_DISABLE=1 is set
// before the driver loads (otherwise the driver's own JIT cache makes the JIT
// look free). Each measurement runs in a forked child that never shares the
// parent's state: "cold" = a warm process (driver initialised, one other
// kernel compiled first) with tk's disk cache off, every repetition a new
// cache key, once with the default PTX compiler and once with each forced
// (TK_PTX_COMPILER=driver|nvjitlink|ptxas); "warm_disk" = a fresh process
// per repetition whose $TK_CACHE_DIR already holds the entries (time of
// GpuKernel::compile only; cuInit is not counted). It also compares the PTX
// compilers on one PTX (the driver's JIT at its default level and level 1,
// nvJitLink, ptxas): compile time (7 rounds, interleaved), registers,
// spills, the kernel's time on 4096 rows (median of 20 launches, CUDA
// events) and its output against the driver's. --jit-level N compiles the
// cold and warm-disk runs at that level (default: the compiler's). Medians;
// JSON with --json. Without a GPU it says so and exits 0.
//
// Not a test: nothing here runs under ctest.
#include "driver/CompileCache.h"
#include "driver/GpuKernel.h"
#include "driver/NvJitLink.h"
#include "ir/ASTToIR.h"
#include "lowering/PassManager.h"
#include "lowering/Pipeline.h"
#include "parser/Frontend.h"
#ifdef TK_BENCH_WITH_LLVM
#include "lowering/PTXEmitter.h"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tk;

namespace {

struct Case {
  const char *name;
  const char *file;
  const char *signature;
  std::vector<std::pair<const char *, int64_t>> constants;
  int numWarps;
};

const Case kCases[] = {
    {"vector-add",
     "tutorials/01-vector-add.tk",
     "*fp32:16, *fp32:16, *fp32:16, i32:16",
     {{"BLOCK_SIZE", 1024}},
     4},
    {"softmax-1024",
     "tutorials/02-fused-softmax.tk",
     "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16",
     {{"BLOCK_SIZE", 1024}},
     4},
    {"softmax-4096",
     "tutorials/02-fused-softmax.tk",
     "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16",
     {{"BLOCK_SIZE", 4096}},
     8},
    {"layer-norm-1024",
     "tutorials/03-layer-norm.tk",
     "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32",
     {{"BLOCK_SIZE", 1024}},
     4},
};

enum Stage { FrontEnd, ToIR, Pipeline, ToPTX, NumStages };
const char *kStageNames[NumStages] = {"front_end", "ast_to_ir", "ir_pipeline", "gpu_and_ptx"};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One compile of `c` from `source`; fills the per-stage times. Returns false
// (with the diagnostics printed) if any stage fails.
bool compileOnce(const Case &c, const std::string &source, double times[NumStages]) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  ast::Context actx;
  IRContext ctx(sm);
  Module module(ctx);
  KernelSpec spec;
  spec.signature = c.signature;
  for (auto &[k, v] : c.constants)
    spec.constants[k] = ConstValue::ofInt(v);

  auto t0 = Clock::now();
  ast::Module *m = parseAndCheck(sm, sm.addBuffer(c.file, source), actx, diag);
  times[FrontEnd] = msSince(t0);
  bool ok = !diag.hasErrors();
  if (ok) {
    auto entries = kernelEntryPoints(*m);
    spec.kernel = entries.empty() ? "" : entries.front()->name;
    t0 = Clock::now();
    ok = lowerKernel(*m, spec, ctx, module, diag) != nullptr;
    times[ToIR] = msSince(t0);
  }
  if (ok) {
    t0 = Clock::now();
    PassManager pm(diag);
    buildPipeline(pm);
    ok = pm.run(module);
    times[Pipeline] = msSince(t0);
  }
  times[ToPTX] = 0;
#ifdef TK_BENCH_WITH_LLVM
  if (ok) {
    t0 = Clock::now();
    for (auto &fn : module.functions())
      fn->attrs().set("num_warps", int64_t(c.numWarps));
    PassManager pm(diag);
    buildGPUPipeline(pm);
    std::string ptx;
    TargetOptions target;
    target.numWarps = c.numWarps;
    ok = pm.run(module) && emitPTX(module, target, ptx, diag);
    times[ToPTX] = msSince(t0);
  }
#endif
  if (!ok)
    std::fprintf(stderr, "%s", diag.renderAll().c_str());
  return ok;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
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

//===----------------------------------------------------------------------===//
// --load
//===----------------------------------------------------------------------===//

struct LoadCase {
  const char *name;
  int block;
  int warps;
};
const LoadCase kLoadCases[] = {
    {"softmax-1024", 1024, 4}, {"softmax-4096", 4096, 8}, {"softmax-16384", 16384, 16}};
const char *kSoftmaxFile = "tutorials/02-fused-softmax.tk";
const char *kSoftmaxSignature = "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16";
int gJitLevel = -1; // --jit-level

GpuCompileOptions softmaxOptions(const LoadCase &c, const std::string &salt) {
  GpuCompileOptions o;
  o.kernel = "softmax_kernel";
  o.signature = kSoftmaxSignature;
  o.constants["BLOCK_SIZE"] = ConstValue::ofInt(c.block);
  o.numWarps = c.warps;
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

struct Stats {
  double median = 0, min = 0;
};
Stats statsOf(std::vector<double> v) {
  if (v.empty())
    return {};
  return {median(v), *std::min_element(v.begin(), v.end())};
}

// Softmax of `rows` x `cols` fp32 through `fn`; returns the median kernel
// time in microseconds over 20 launches, and the output in `out`.
bool timeSoftmax(CudaDriver &cuda, CUfunction fn, int warps, int rows, int cols,
                 const DeviceBuffer &in, DeviceBuffer &outBuf, double &us, std::vector<float> &out,
                 std::string &error) {
  const CudaFunctions &api = cuda.api();
  CUdeviceptr o = outBuf.ptr(), i = in.ptr();
  int32_t stride = cols, n = rows, ncols = cols;
  void *params[] = {&o, &i, &stride, &stride, &n, &ncols};
  CUevent start = nullptr, stop = nullptr;
  api.cuEventCreate(&start, 0);
  api.cuEventCreate(&stop, 0);
  std::vector<double> times;
  for (int r = 0; r < 21; ++r) {
    api.cuEventRecord(start, nullptr);
    CUresult res = api.cuLaunchKernel(fn, unsigned(rows), 1, 1, unsigned(warps) * 32, 1, 1, 0,
                                      nullptr, params, nullptr);
    api.cuEventRecord(stop, nullptr);
    if (!cuda.check(res, "cuLaunchKernel", error) ||
        !cuda.check(api.cuEventSynchronize(stop), "cuEventSynchronize", error))
      return false;
    float ms = 0;
    api.cuEventElapsedTime(&ms, start, stop);
    if (r > 0) // the first launch warms caches and clocks
      times.push_back(ms * 1000.0);
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  us = median(times);
  out.resize(size_t(rows) * size_t(cols));
  return outBuf.download(out.data(), out.size() * sizeof(float), error);
}

// The warm-process measurements of one case (run in a child), with
// `compiler` forced through TK_PTX_COMPILER ("" = the default order). With
// `compare`, also each PTX compiler on the same PTX: compile time (7 rounds,
// interleaved so that drift in clocks or load hits each alike), registers,
// spills, the kernel's time on 4096 rows and its output against the
// driver's.
std::string coldRun(const LoadCase &c, int repeat, const std::string &compiler, bool compare) {
  setenv("TK_CACHE_DIR", "", 1); // tk's disk cache off
  if (compiler.empty())
    unsetenv("TK_PTX_COMPILER");
  else
    setenv("TK_PTX_COMPILER", compiler.c_str(), 1);
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return errorJson(error);
  // The one-time cost of opening libnvJitLink (part of a process's first
  // compile when nvJitLink is used).
  auto t0 = Clock::now();
  std::string nvError;
  bool haveNvJitLink = nvJitLinkAvailable(nvError);
  double nvOpenMs = msSince(t0);
  std::string source = readSource(kSoftmaxFile);
  // Warm the process: LLVM's and the driver's one-time set-up.
  {
    GpuCompileOptions warm;
    warm.kernel = "add_kernel";
    warm.signature = "*fp32:16, *fp32:16, *fp32:16, i32:16";
    warm.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
    if (!GpuKernel::compile(readSource("tutorials/01-vector-add.tk"), "01-vector-add.tk", warm,
                            error))
      return errorJson(error);
  }
  std::vector<double> total, compile, jit, load;
  GpuKernel *k = nullptr;
  for (int r = 0; r < repeat; ++r) {
    auto t1 = Clock::now();
    k = GpuKernel::compile(source, kSoftmaxFile, softmaxOptions(c, fmt::format("cold {}", r)),
                           error);
    double ms = msSince(t1);
    if (!k)
      return errorJson(error);
    total.push_back(ms);
    compile.push_back(k->info().compileMs);
    jit.push_back(k->info().jitMs);
    load.push_back(k->info().loadMs);
  }
  const std::string &ptx = k->ptx();
  Stats t = statsOf(total);
  std::string head =
      fmt::format("{{\"ptx_compiler\": \"{}\", \"fallback\": {}, \"total_ms\": {:.3f}, "
                  "\"min_total_ms\": {:.3f}, \"compile_ms\": {:.3f}, \"jit_ms\": {:.3f}, "
                  "\"load_ms\": {:.3f}, \"ptx_bytes\": {}, \"cubin_bytes\": {}, \"registers\": {}, "
                  "\"nvjitlink_open_ms\": {:.3f}, \"nvjitlink\": {}",
                  k->info().ptxCompiler, jsonString(k->info().ptxCompilerFallback), t.median, t.min,
                  median(compile), median(jit), median(load), ptx.size(), k->cubin().size(),
                  k->info().registers, nvOpenMs, haveNvJitLink ? "true" : jsonString(nvError));
  if (!compare)
    return head + "}";

  const int rows = 4096, cols = c.block;
  std::vector<float> host(size_t(rows) * cols);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float &x : host)
    x = dist(rng);
  DeviceBuffer in, out;
  if (!in.allocate(host.size() * 4, error) || !out.allocate(host.size() * 4, error) ||
      !in.upload(host.data(), host.size() * 4, error))
    return errorJson(error);
  struct Variant {
    const char *compiler;
    int level;
  };
  // The driver first: the reference output. Level 1 is the driver's
  // fastest JIT level that keeps the kernel's speed (the 2026-11-30 run).
  const Variant kVariants[] = {{"driver", -1}, {"driver", 1}, {"nvjitlink", -1}, {"ptxas", -1}};
  constexpr int kNumVariants = 4;
  std::vector<double> times[kNumVariants];
  std::string cubins[kNumVariants], failures[kNumVariants];
  for (int r = 0; r < 7; ++r)
    for (int v = 0; v < kNumVariants; ++v) {
      if (!failures[v].empty())
        continue;
      JitOptions opts;
      opts.optimizationLevel = kVariants[v].level;
      auto t1 = Clock::now();
      if (!ptxToCubinWith(kVariants[v].compiler, *cuda, ptx, opts, cubins[v], failures[v]))
        continue;
      times[v].push_back(msSince(t1));
    }
  std::vector<float> reference;
  std::string variants;
  for (int v = 0; v < kNumVariants; ++v) {
    std::string entry = fmt::format("{{\"compiler\": \"{}\", \"level\": {}", kVariants[v].compiler,
                                    kVariants[v].level);
    CUmodule m = nullptr;
    CUfunction fn = nullptr;
    KernelResources res;
    double us = 0;
    std::vector<float> result;
    std::string why = failures[v];
    // On failure `why` holds the first error; the chain stops there.
    if (why.empty() && cuda->loadModule(cubins[v], m, why) &&
        cuda->getFunction(m, "softmax_kernel", fn, why) && cuda->queryResources(fn, res, why))
      timeSoftmax(*cuda, fn, c.warps, rows, cols, in, out, us, result, why);
    if (!why.empty()) {
      entry += ", \"error\": " + jsonString(why) + "}";
    } else {
      if (reference.empty())
        reference = result;
      double maxDiff = 0;
      for (size_t i = 0; i < result.size(); ++i)
        maxDiff = std::max(maxDiff, double(std::abs(result[i] - reference[i])));
      double gbs = 2.0 * rows * cols * 4 / (us * 1e3);
      entry += fmt::format(", \"ms\": {:.3f}, \"min_ms\": {:.3f}, \"registers\": {}, "
                           "\"spill_bytes\": {}, \"cubin_bytes\": {}, \"kernel_us\": {:.2f}, "
                           "\"gb_s\": {:.1f}, \"max_diff_vs_driver\": {:.3g}}}",
                           median(times[v]), statsOf(times[v]).min, res.registers, res.localBytes,
                           cubins[v].size(), us, gbs, maxDiff);
    }
    if (m)
      cuda->api().cuModuleUnload(m);
    variants += (variants.empty() ? "" : ", ") + entry;
  }
  return head + ", \"compilers\": [" + variants + "]}";
}

// One fresh process with a warm disk cache: the time of compile() alone.
std::string warmDiskRun(const LoadCase &c, const std::string &dir) {
  setenv("TK_CACHE_DIR", dir.c_str(), 1);
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  if (!cuda)
    return errorJson(error);
  std::string source = readSource(kSoftmaxFile);
  auto t0 = Clock::now();
  GpuKernel *k = GpuKernel::compile(source, kSoftmaxFile, softmaxOptions(c, "disk"), error);
  double ms = msSince(t0);
  if (!k)
    return errorJson(error);
  return fmt::format("{{\"ms\": {:.3f}, \"from_cache\": {}, \"from_cubin\": {}, "
                     "\"ptx_compiler\": \"{}\", \"compile_ms\": {:.3f}, \"jit_ms\": {:.3f}}}",
                     ms, k->info().origin == GpuKernelOrigin::Cache ? "true" : "false",
                     k->info().fromCubin ? "true" : "false", k->info().ptxCompiler,
                     k->info().compileMs, k->info().jitMs);
}

// Pulls "key": number out of a flat JSON object written above.
double field(const std::string &json, const std::string &key) {
  size_t at = json.find("\"" + key + "\": ");
  return at == std::string::npos ? -1 : std::atof(json.c_str() + at + key.size() + 4);
}

int loadBench(const std::string &jsonPath, int repeat) {
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
  std::printf("%s  CUDA_CACHE_DISABLE=1, tk disk cache in %s\n", probe.c_str(), dir.c_str());
  const char *kForced[] = {"driver", "nvjitlink", "ptxas"};
  std::printf("%-14s %-9s %9s %9s %9s %9s %10s %10s %10s %10s\n", "kernel", "default", "cold ms",
              "compile", "jit", "load", "warm disk", "driver", "nvjitlink", "ptxas");
  std::string rows;
  for (const LoadCase &c : kLoadCases) {
    std::string cold = inChild([&] { return coldRun(c, repeat, "", true); });
    // The same cold loop with each compiler forced.
    std::string forced;
    double forcedMs[3];
    for (int i = 0; i < 3; ++i) {
      std::string f = inChild([&] { return coldRun(c, repeat, kForced[i], false); });
      forcedMs[i] = field(f, "total_ms");
      forced += fmt::format("{}\"{}\": {}", forced.empty() ? "" : ", ", kForced[i], f);
    }
    // Populate the disk cache, then time fresh processes that find it.
    std::string populate = inChild([&] { return warmDiskRun(c, dir); });
    std::vector<double> warm;
    std::string warmRuns;
    for (int r = 0; r < std::min(repeat, 7); ++r) {
      std::string w = inChild([&] { return warmDiskRun(c, dir); });
      warm.push_back(field(w, "ms"));
      warmRuns += (warmRuns.empty() ? "" : ", ") + w;
    }
    Stats ws = statsOf(warm);
    size_t at = cold.find("\"ptx_compiler\": \"");
    std::string chosen =
        at == std::string::npos ? "?" : cold.substr(at + 17, cold.find('"', at + 17) - at - 17);
    std::printf("%-14s %-9s %9.2f %9.2f %9.2f %9.2f %10.2f %10.2f %10.2f %10.2f\n", c.name,
                chosen.c_str(), field(cold, "total_ms"), field(cold, "compile_ms"),
                field(cold, "jit_ms"), field(cold, "load_ms"), ws.median, forcedMs[0], forcedMs[1],
                forcedMs[2]);
    rows += fmt::format("{}    {{\"kernel\": \"{}\", \"block\": {}, \"num_warps\": {},\n"
                        "     \"cold\": {},\n     \"cold_forced\": {{{}}},\n"
                        "     \"populate\": {},\n"
                        "     \"warm_disk_ms\": {:.3f}, \"min_warm_disk_ms\": {:.3f},\n"
                        "     \"warm_disk_runs\": [{}]}}",
                        rows.empty() ? "" : ",\n", c.name, c.block, c.warps, cold, forced, populate,
                        ws.median, ws.min, warmRuns);
    if (cold.find("\"error\"") != std::string::npos)
      std::printf("  %s\n", cold.c_str());
  }
  // Leave no cache behind.
  std::string cleanup = "rm -rf " + dir;
  if (!dir.empty() && std::system(cleanup.c_str()) != 0)
    std::printf("could not remove %s\n", dir.c_str());
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << fmt::format(
        "{{\n  \"date\": \"{}\",\n  \"probe\": {},\n  \"repeat\": {},\n"
        "  \"cuda_cache_disable\": true,\n  \"jit_level\": {},\n  \"target_ms\": 50,\n"
        "  \"rows\": [\n{}\n  ]\n}}\n",
        utcNow(), probe, repeat, gJitLevel, rows);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string jsonPath;
  int repeat = 200;
  bool load = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--load")
      load = true;
    else if (a == "--jit-level" && i + 1 < argc)
      gJitLevel = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: compile_bench [--load [--jit-level N]] [--json FILE] [--repeat N]\n");
      return 2;
    }
  }
  if (load)
    return loadBench(jsonPath, repeat == 200 ? 9 : repeat);
  std::string rows;
  std::printf("%-16s %12s %12s %12s %12s %12s   (median ms over %d compiles)\n", "kernel",
              "front end", "AST->IR", "IR pipeline", "GPU+PTX", "total", repeat);
  for (const Case &c : kCases) {
    std::string source = readSource(c.file);
    std::vector<double> stage[NumStages], total;
    for (int r = 0; r < repeat; ++r) {
      double t[NumStages] = {};
      if (!compileOnce(c, source, t))
        return 1;
      double sum = 0;
      for (int s = 0; s < NumStages; ++s) {
        stage[s].push_back(t[s]);
        sum += t[s];
      }
      total.push_back(sum);
    }
    std::printf("%-16s", c.name);
    std::string fields;
    for (int s = 0; s < NumStages; ++s) {
      std::printf(" %12.3f", median(stage[s]));
      fields += fmt::format("\"{}_ms\": {:.4f}, ", kStageNames[s], median(stage[s]));
    }
    std::vector<double> upToPipeline;
    for (int r = 0; r < repeat; ++r)
      upToPipeline.push_back(stage[FrontEnd][r] + stage[ToIR][r] + stage[Pipeline][r]);
    std::printf(" %12.3f\n", median(total));
    rows += fmt::format("{}    {{\"kernel\": \"{}\", {}\"source_to_ir_opt_ms\": {:.4f}, "
                        "\"total_ms\": {:.4f}, \"min_total_ms\": {:.4f}}}",
                        rows.empty() ? "" : ",\n", c.name, fields, median(upToPipeline),
                        median(total), *std::min_element(total.begin(), total.end()));
  }
  if (!jsonPath.empty()) {
    std::string date = utcNow();
    std::ofstream out(jsonPath);
    out << fmt::format("{{\n  \"date\": \"{}\",\n  \"repeat\": {},\n  \"with_llvm\": {},\n"
                       "  \"rows\": [\n{}\n  ]\n}}\n",
                       date, repeat,
#ifdef TK_BENCH_WITH_LLVM
                       "true",
#else
                       "false",
#endif
                       rows);
  }
  return 0;
}
