// compile_bench: how long tk takes to compile a kernel, stage by stage.
//
//   build/bin/compile_bench [--json FILE] [--repeat N]
//
// For each tutorial kernel, in one warm process, times N compiles from the
// source text: the front end (lex, parse, checks), AST -> IR with
// specialisation, the IR pipeline (lowering/Pipeline.h), and, when tk is
// built with LLVM, the GPU passes plus LLVM -> PTX. Reports the median and the
// minimum of each stage in milliseconds. Issue 3's target: front end + IR
// pipeline for the softmax tutorial at most 2 ms on the development machine;
// issue 5's: source to loaded module at most 50 ms (this measures up to PTX;
// loading needs the GPU machine). Not a test: nothing here runs under ctest.
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
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
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

} // namespace

int main(int argc, char **argv) {
  std::string jsonPath;
  int repeat = 200;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: compile_bench [--json FILE] [--repeat N]\n");
      return 2;
    }
  }
  std::string rows;
  std::printf("%-16s %12s %12s %12s %12s %12s   (median ms over %d compiles)\n", "kernel",
              "front end", "AST->IR", "IR pipeline", "GPU+PTX", "total", repeat);
  for (const Case &c : kCases) {
    std::ifstream in(std::string(TK_SOURCE_DIR) + "/" + c.file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<double> stage[NumStages], total;
    for (int r = 0; r < repeat; ++r) {
      double t[NumStages] = {};
      if (!compileOnce(c, ss.str(), t))
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
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
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
