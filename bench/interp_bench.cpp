// interp_bench: how fast the CPU interpreter runs the tutorial kernels.
//
//   build/bin/interp_bench [--json FILE] [--repeat N]
//
// Times (best of --repeat runs, one thread) the fused softmax tutorial on a
// 4096 x 1024 fp32 matrix (target: at least 50 M elements per second on one
// core) and the matmul tutorial at 512 x 512 x 512 in fp16 (fp32
// accumulation), and writes the figures as JSON (bench/results/interp.json
// is the current run). Inputs are random and never zero; each run's output
// is checked loosely against a double reference so a fast wrong interpreter
// cannot post a number. Not a test: nothing here runs under ctest.
#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/ASTToIR.h"
#include "parser/Frontend.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <time.h>

using namespace tk;

namespace {

struct Compiled {
  SourceManager sm;
  ast::Context actx;
  IRContext ctx{sm};
  DiagnosticEngine diag{sm};
  std::unique_ptr<Module> module;
  Function *fn = nullptr;
};

bool compile(Compiled &c, const std::string &path, const KernelSpec &spec) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) {
    std::fprintf(stderr, "interp_bench: cannot read %s\n", path.c_str());
    return false;
  }
  ast::Module *m = parseAndCheck(c.sm, c.sm.addBuffer(path, ss.str()), c.actx, c.diag);
  if (m) {
    c.module = std::make_unique<Module>(c.ctx);
    c.fn = lowerKernel(*m, spec, c.ctx, *c.module, c.diag);
  }
  if (!c.fn)
    std::fprintf(stderr, "%s", c.diag.renderAll().c_str());
  return c.fn != nullptr;
}

void fillRandom(HostBuffer &b, std::mt19937 &rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  for (int64_t i = 0; i < b.numElements(); ++i) {
    double v;
    do
      v = d(rng);
    while (v == 0);
    b.set(i, v);
  }
}

double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Best of `repeat` runs, in seconds of this thread's CPU time (the dev box
// is shared, so wall time measures the neighbours; the figure is "on one
// core"); the wall time of that run too. Negative after an error.
struct Timing {
  double cpu = 1e30, wall = 1e30;
};

Timing timeRuns(Compiled &c, const std::vector<InterpArg> &args, const InterpretOptions &opts,
                int repeat) {
  Timing best;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = threadCpuSeconds();
    c.diag.clear();
    if (!interpret(*c.module, *c.fn, args, opts, c.diag)) {
      std::fprintf(stderr, "%s", c.diag.renderAll().c_str());
      return {-1, -1};
    }
    double cpu = threadCpuSeconds() - c0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (cpu < best.cpu)
      best = {cpu, wall};
  }
  return best;
}

std::string commandOutput(const char *cmd) {
  std::string out;
  if (std::FILE *p = popen(cmd, "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p))
      out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  size_t start = out.find_first_not_of(' ');
  return start == std::string::npos ? "" : out.substr(start);
}

} // namespace

int main(int argc, char **argv) {
  std::string json;
  int repeat = 3;
  bool softmaxOnly = false; // for profiling
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--softmax-only")
      softmaxOnly = true;
    else if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: interp_bench [--json FILE] [--repeat N] [--softmax-only]\n");
      return 2;
    }
  }
  std::string root = TK_SOURCE_DIR;
  std::mt19937 rng(2024);

  // Softmax, 4096 x 1024 fp32, one program per row.
  const int64_t rows = 4096, cols = 1024;
  Compiled sm;
  KernelSpec sspec;
  sspec.kernel = "softmax_kernel";
  sspec.signature = "*fp32, *fp32, i32, i32, i32, i32";
  sspec.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  if (!compile(sm, root + "/tutorials/02-fused-softmax.tk", sspec))
    return 1;
  HostBuffer in = HostBuffer::allocate("input", DType::F32, rows * cols);
  HostBuffer out = HostBuffer::allocate("output", DType::F32, rows * cols);
  fillRandom(in, rng, -5, 5);
  InterpretOptions sopts;
  sopts.grid = {rows, 1, 1};
  Timing ts =
      timeRuns(sm,
               {InterpArg::pointer(out), InterpArg::pointer(in), InterpArg::integer(cols),
                InterpArg::integer(cols), InterpArg::integer(rows), InterpArg::integer(cols)},
               sopts, repeat);
  if (ts.cpu < 0)
    return 1;
  for (int64_t r = 0; r < rows; r += 511) { // spot check against double
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max(mx, in.get(r * cols + c));
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(in.get(r * cols + c) - mx);
    double want = std::exp(in.get(r * cols) - mx) / sum;
    if (std::fabs(out.get(r * cols) - want) > 1e-5 * want) {
      std::fprintf(stderr, "interp_bench: softmax result is wrong at row %lld\n", (long long)r);
      return 1;
    }
  }
  double softmaxRate = double(rows * cols) / ts.cpu;
  if (softmaxOnly) {
    std::printf("softmax: %.4f s CPU (%.4f s wall), %.1f M elements/s\n", ts.cpu, ts.wall,
                softmaxRate / 1e6);
    return 0;
  }

  // Matmul 512^3 fp16, 64 x 64 x 32 blocks.
  const int64_t M = 512, N = 512, K = 512;
  Compiled mm;
  KernelSpec mspec;
  mspec.kernel = "matmul_kernel";
  mspec.signature = "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32";
  mspec.constants["BLOCK_SIZE_M"] = ConstValue::ofInt(64);
  mspec.constants["BLOCK_SIZE_N"] = ConstValue::ofInt(64);
  mspec.constants["BLOCK_SIZE_K"] = ConstValue::ofInt(32);
  mspec.constants["GROUP_SIZE_M"] = ConstValue::ofInt(8);
  mspec.constants["ACTIVATION"] = ConstValue::ofString("");
  if (!compile(mm, root + "/tutorials/04-matmul.tk", mspec))
    return 1;
  HostBuffer a = HostBuffer::allocate("a", DType::F16, M * K);
  HostBuffer b = HostBuffer::allocate("b", DType::F16, K * N);
  HostBuffer c = HostBuffer::allocate("c", DType::F16, M * N);
  fillRandom(a, rng, -1, 1);
  fillRandom(b, rng, -1, 1);
  InterpretOptions mopts;
  mopts.grid = {(M / 64) * (N / 64), 1, 1};
  Timing tm = timeRuns(mm,
                       {InterpArg::pointer(a), InterpArg::pointer(b), InterpArg::pointer(c),
                        InterpArg::integer(M), InterpArg::integer(N), InterpArg::integer(K),
                        InterpArg::integer(K), InterpArg::integer(1), InterpArg::integer(N),
                        InterpArg::integer(1), InterpArg::integer(N), InterpArg::integer(1)},
                       mopts, repeat);
  if (tm.cpu < 0)
    return 1;
  double want = 0;
  for (int64_t k = 0; k < K; ++k)
    want += a.get(k) * b.get(k * N);
  if (std::fabs(c.get(0) - want) > 0.01 * std::fabs(want) + 0.01) {
    std::fprintf(stderr, "interp_bench: matmul result is wrong\n");
    return 1;
  }

  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string commit = commandOutput(("git -C " + root + " rev-parse --short HEAD").c_str());
  std::string cpu = commandOutput("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2");
  std::string result = fmt::format(
      R"({{
  "date": "{}",
  "commit": "{}",
  "command": "interp_bench --repeat {}",
  "machine": "2-core development box (no GPU), {}; one thread",
  "softmax_4096x1024_fp32": {{
    "cpu_seconds": {:.4f},
    "wall_seconds": {:.4f},
    "elements_per_second": {:.0f},
    "target_elements_per_second": 50000000
  }},
  "matmul_512x512x512_fp16": {{
    "blocks": "64x64x32",
    "cpu_seconds": {:.4f},
    "wall_seconds": {:.4f},
    "gflops": {:.3f}
  }},
  "note": "best of the runs in CPU time of the interpreting thread, since the box is shared; wall time of that run alongside"
}}
)",
      date, commit, repeat, cpu, ts.cpu, ts.wall, softmaxRate, tm.cpu, tm.wall,
      2.0 * M * N * K / tm.cpu / 1e9);
  std::fwrite(result.data(), 1, result.size(), stdout);
  if (!json.empty()) {
    std::ofstream f(json);
    f << result;
  }
  return softmaxRate >= 50e6 ? 0 : 1;
}
