// `tkc run`: the interpreter from the command line. The kernel comes from a
// .tk file (the compiler's parse, AST -> IR specialised by --signature and
// -D, and block passes: compiler/Compiler.h) or a
// .tkir file (already typed). Every pointer argument gets a buffer of
// --size elements of its pointee type, filled with seeded random numbers
// (never zero) unless it is named by --out, which leaves it unwritten so a
// read before the kernel's own store is reported. Scalars come from --arg.
// After the run, each buffer the kernel stored into is summarised: element
// count, how many were written, min/max/mean and the first elements.
#include "tools/tkc/RunCommand.h"

#include "tools/tkc/OptionArgs.h"

#include "compiler/Compiler.h"
#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/ASTToIR.h"
#include "ir/IRParser.h"
#include "ir/Verifier.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

namespace tk::tkc {
namespace {

// Set by tkc run's SIGINT handler while the interpreter runs.
volatile sig_atomic_t gInterrupted = 0;

constexpr std::string_view kRunHelp = R"(usage: tkc run FILE [options]

Compiles one kernel of FILE (.tk, or .tkir block IR) and runs it in the CPU
interpreter on generated inputs, with bounds checking; prints a summary of
every buffer the kernel stored into.

options:
  --kernel NAME          the kernel to run (needed when FILE has several)
  --grid X[,Y[,Z]]       programs along each axis (default: 1,1,1)
  --signature "SIG"      parameter types, e.g. "*fp32, *fp32, i32" (.tk only)
  -D NAME=VALUE          a constexpr parameter's value (.tk only)
  --arg NAME=VALUE       a scalar argument's value (every scalar needs one)
  --size N               elements per pointer argument (default: 4096)
  --size NAME=N          elements of one pointer argument
  --out NAME             leave this buffer unwritten before the run (an
                         output); reading it before writing is an error
  --seed N               seed of the random inputs (default: 1)
  --show N               first elements shown per buffer (default: 8)
  --threads N            run programs on N threads (default: 1, in order)
  --max-steps N          stop after N operations (default: 100000000; 0: no limit)
  --max-memory MIB       the run's blocks may hold at most MIB MiB at once, and
                         the buffers as much again (default: 1024; 0: no limit)
  --color=WHEN           colour diagnostics: auto, always, never

Inputs are uniform in [-1, 1] for floats and [1, 100] for integers, never
zero. Ctrl-C stops a run at the next operation. Exit status: 0 success, 1
compile or run errors, 2 bad usage, 130 interrupted.
)";

struct RunOptions {
  std::string file;
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::string signature;
  std::vector<std::pair<std::string, std::string>> defines;
  std::map<std::string, std::string> args;
  int64_t defaultSize = 4096;
  std::map<std::string, int64_t> sizes;
  std::vector<std::string> outs;
  uint64_t seed = 1;
  int64_t show = 8;
  unsigned threads = 1;
  uint64_t maxSteps = 100'000'000;
  uint64_t maxMemoryMiB = 1024;
  int color = -1; // -1 auto, 0 never, 1 always
};

int usage(std::string_view message) {
  std::string text = fmt::format("tkc: error: {}\nRun 'tkc run --help' for usage.\n", message);
  std::fwrite(text.data(), 1, text.size(), stderr);
  return 2;
}

std::optional<int64_t> parseInt(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  std::string str(s);
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(str.c_str(), &end, 10);
  if (errno || *end)
    return std::nullopt;
  return v;
}

bool splitNameValue(std::string_view s, std::string &name, std::string &value) {
  size_t eq = s.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == s.size())
    return false;
  name = s.substr(0, eq);
  value = s.substr(eq + 1);
  return true;
}

// Returns 0 to run, or an exit status (help printed, usage error).
int parseRunArgs(int argc, char **argv, RunOptions &o, bool &help) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    OptionArg opt = splitOption(arg);
    std::string_view name = opt.name;
    auto value = [&] { return optionValue(opt, args, i); };
    auto need = [&](std::optional<std::string_view> v) {
      if (!v)
        usage(fmt::format("option '{}' needs a value", name));
      return v.has_value();
    };
    if (name == "--help" || name == "-h") {
      help = true;
      return 0;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!o.file.empty())
        return usage(fmt::format("tkc run takes one file, got '{}' and '{}'", o.file, arg));
      o.file = arg;
      continue;
    }
    std::optional<std::string_view> v;
    if (name == "--kernel") {
      if (!need(v = value()))
        return 2;
      o.kernel = *v;
    } else if (name == "--grid") {
      if (!need(v = value()))
        return 2;
      std::string_view rest = *v;
      for (int axis = 0; axis < 3 && !rest.empty(); ++axis) {
        size_t comma = rest.find(',');
        std::optional<int64_t> n = parseInt(rest.substr(0, comma));
        if (!n || *n < 1 || *n > INT32_MAX)
          return usage(
              fmt::format("--grid expects X[,Y[,Z]] with positive integers, got '{}'", *v));
        o.grid[axis] = *n;
        rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
        if (comma != std::string_view::npos && rest.empty())
          return usage(fmt::format("--grid expects X[,Y[,Z]], got '{}'", *v));
      }
      if (!rest.empty())
        return usage(fmt::format("--grid takes at most three dimensions, got '{}'", *v));
    } else if (name == "--signature") {
      if (!need(v = value()))
        return 2;
      o.signature = *v;
    } else if (name == "-D" || (arg.substr(0, 2) == "-D" && arg.size() > 2)) {
      v = arg.size() > 2 ? std::optional(arg.substr(2)) : value();
      std::string n, val;
      if (!need(v))
        return 2;
      if (!splitNameValue(*v, n, val))
        return usage(fmt::format("-D expects NAME=VALUE, got '{}'", *v));
      o.defines.emplace_back(n, val);
    } else if (name == "--arg") {
      std::string n, val;
      if (!need(v = value()))
        return 2;
      if (!splitNameValue(*v, n, val))
        return usage(fmt::format("--arg expects NAME=VALUE, got '{}'", *v));
      o.args[n] = val;
    } else if (name == "--size") {
      if (!need(v = value()))
        return 2;
      std::string n, val;
      std::optional<int64_t> size;
      if (splitNameValue(*v, n, val)) {
        size = parseInt(val);
      } else {
        n.clear();
        size = parseInt(*v);
      }
      if (!size || *size < 1 || *size > (int64_t(1) << 32))
        return usage(fmt::format("--size expects N or NAME=N with N from 1 to 2^32, got '{}'", *v));
      if (n.empty())
        o.defaultSize = *size;
      else
        o.sizes[n] = *size;
    } else if (name == "--out") {
      if (!need(v = value()))
        return 2;
      o.outs.emplace_back(*v);
    } else if (name == "--seed" || name == "--show" || name == "--threads" ||
               name == "--max-steps" || name == "--max-memory") {
      if (!need(v = value()))
        return 2;
      std::optional<int64_t> n = parseInt(*v);
      if (name == "--threads" && (!n || *n < 1 || *n > 256))
        return usage(fmt::format("--threads expects an integer from 1 to 256, got '{}'", *v));
      if (!n || *n < 0)
        return usage(fmt::format("{} expects a non-negative integer, got '{}'", name, *v));
      if (name == "--seed")
        o.seed = uint64_t(*n);
      else if (name == "--show")
        o.show = *n;
      else if (name == "--threads")
        o.threads = unsigned(*n);
      else if (name == "--max-memory")
        o.maxMemoryMiB = uint64_t(*n);
      else
        o.maxSteps = uint64_t(*n);
    } else if (name == "--color") {
      std::string_view c = opt.inlineValue.value_or("always");
      if (c != "auto" && c != "always" && c != "never")
        return usage(fmt::format("--color must be auto, always or never, not '{}'", c));
      o.color = c == "auto" ? -1 : c == "always" ? 1 : 0;
    } else {
      return usage(fmt::format("unknown option '{}' for tkc run", arg));
    }
  }
  if (o.file.empty())
    return usage("tkc run needs a .tk or .tkir file");
  return 0;
}

// The kernel to run and the source-level name of each of its IR arguments.
struct Kernel {
  Module *module = nullptr;
  std::unique_ptr<Module> owned; // a .tkir file's module
  Function *fn = nullptr;
  std::vector<std::string> argNames;
};

// A .tk kernel through the compiler's front end, AST -> IR and block passes
// (compiler/Compiler.h), as Python's interpreter mode runs them.
bool compileTk(const RunOptions &o, Compilation &comp, BufferId id, Kernel &k) {
  SourceManager &sm = comp.sources();
  DiagnosticEngine &diag = comp.diag();
  if (!comp.parse(id))
    return false;
  ast::Module *m = comp.ast();
  std::string name = o.kernel;
  if (name.empty()) {
    std::vector<const ast::FunctionDef *> entries = kernelEntryPoints(*m);
    if (entries.size() != 1) {
      std::string names;
      for (const ast::FunctionDef *fn : entries)
        names += (names.empty() ? "" : ", ") + fn->name;
      diag.error({}, fmt::format("'{}' has {} kernels ({}); choose one with --kernel",
                                 sm.fileName(id), entries.size(), names));
      return false;
    }
    name = entries[0]->name;
  }
  if (!m->findFunction(name)) {
    diag.error({}, fmt::format("no kernel named '{}' in '{}'", name, sm.fileName(id)));
    return false;
  }
  KernelSpec spec;
  spec.kernel = name;
  spec.signature = o.signature;
  for (const auto &[n, v] : o.defines)
    spec.constants[n] = parseConstValue(v);
  if (!comp.lowerToIR(std::span(&spec, 1)) || !comp.runBlockPasses())
    return false;
  k.module = &comp.module();
  k.fn = k.module->lookup(name);
  for (const KernelParam &p : comp.kernelParams(name))
    k.argNames.push_back(p.name);
  return k.fn && k.fn->numArguments() == k.argNames.size();
}

bool compileTkir(const RunOptions &o, SourceManager &sm, BufferId id, IRContext &ctx,
                 DiagnosticEngine &diag, Kernel &k) {
  k.owned = parseIR(ctx, id, diag);
  k.module = k.owned.get();
  if (!k.module || !verifyModule(*k.module, diag))
    return false;
  const auto &fns = k.module->functions();
  if (o.kernel.empty() && fns.size() != 1) {
    diag.error({}, fmt::format("'{}' has {} functions; choose one with --kernel", sm.fileName(id),
                               fns.size()));
    return false;
  }
  k.fn = o.kernel.empty() ? fns[0].get() : k.module->lookup(o.kernel);
  if (!k.fn) {
    diag.error({}, fmt::format("no function named '@{}' in '{}'", o.kernel, sm.fileName(id)));
    return false;
  }
  for (unsigned i = 0; i < k.fn->numArguments(); ++i)
    k.argNames.push_back(fmt::format("arg{}", i));
  return true;
}

std::string formatNumber(double v) { return fmt::format("{:.6g}", v); }

// "output_ptr: fp32[1000], 1000 written by the kernel; min -1.5 max 2 mean 0.01"
std::string summarize(const HostBuffer &b, int64_t show) {
  int64_t n = b.numElements(), written = 0;
  size_t size = dtypeBytes(b.dtype());
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t nans = 0;
  std::string first;
  int64_t shown = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!b.isWritten(i * size, size)) {
      if (shown < show) {
        first += (shown ? ", " : "") + std::string("?");
        ++shown;
      }
      continue;
    }
    double v = b.get(i);
    ++written;
    if (std::isnan(v)) {
      ++nans;
    } else {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      sum += v;
    }
    if (shown < show) {
      first += (shown ? ", " : "") + formatNumber(v);
      ++shown;
    }
  }
  std::string out = fmt::format("{}: {}[{}]", b.name(), dtypeName(b.dtype()), n);
  if (b.isTracked() && written != n)
    out += fmt::format(", {} of {} elements written", written, n);
  if (written > nans)
    out += fmt::format("\n  min {}  max {}  mean {}", formatNumber(mn), formatNumber(mx),
                       formatNumber(sum / double(written - nans)));
  if (nans)
    out += fmt::format("  ({} NaN)", nans);
  if (show > 0)
    out += fmt::format("\n  first: {}{}", first, n > show ? ", ..." : "");
  return out + "\n";
}

} // namespace

int runCommand(int argc, char **argv) {
  RunOptions o;
  bool help = false;
  if (int status = parseRunArgs(argc, argv, o, help))
    return status;
  // Output that cannot be written (a full disk) is a failure, exit 1.
  auto print = [](std::string_view text) {
    std::string error;
    if (writeOutput("", text, error))
      return true;
    std::string msg = fmt::format("tkc: error: {}\n", error);
    std::fwrite(msg.data(), 1, msg.size(), stderr);
    return false;
  };
  if (help)
    return print(kRunHelp) ? 0 : 1;
  bool color = o.color == 1 || (o.color == -1 && isatty(STDERR_FILENO) && !std::getenv("NO_COLOR"));
  std::string text, error;
  if (!readInputFile(o.file, text, error)) {
    std::string msg = fmt::format("tkc: error: {}\n", error);
    std::fwrite(msg.data(), 1, msg.size(), stderr);
    return 1;
  }
  auto printErr = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stderr); };
  Compilation comp(CompileOptions(), CompileHooks::fromKnobs(printErr));
  SourceManager &sm = comp.sources();
  DiagnosticEngine &diag = comp.diag();
  BufferId id = sm.addBuffer(o.file, std::move(text));
  Kernel k;
  bool isIR = o.file.size() > 5 && o.file.substr(o.file.size() - 5) == ".tkir";
  if (isIR && (!o.signature.empty() || !o.defines.empty()))
    return usage("--signature and -D apply to .tk files; a .tkir kernel is already typed");
  bool ok = isIR ? compileTkir(o, sm, id, comp.irContext(), diag, k) : compileTk(o, comp, id, k);
  auto fail = [&]() {
    std::string r = diag.renderAll(color);
    std::fwrite(r.data(), 1, r.size(), stderr);
    return 1;
  };
  if (!ok || diag.hasErrors())
    return fail();

  // The buffers are bounded like the blocks: as much memory as
  // --max-memory again, checked before anything is allocated.
  uint64_t bufferBytes = 0;
  for (unsigned i = 0; i < k.fn->numArguments(); ++i)
    if (auto *p = dyn_cast<PointerType>(k.fn->argument(i)->type())) {
      const std::string &name = k.argNames[i];
      uint64_t n = uint64_t(o.sizes.count(name) ? o.sizes[name] : o.defaultSize);
      uint64_t each = p->pointee()->isPointer() ? 8 : dtypeBytes(p->pointee()->dtype());
      bufferBytes += n * each; // n <= 2^32, each <= 8
    }
  if (o.maxMemoryMiB && o.maxMemoryMiB <= (UINT64_MAX >> 20) &&
      bufferBytes > (o.maxMemoryMiB << 20)) {
    std::string msg =
        fmt::format("tkc: error: the kernel's buffers take {} MiB at --size {}, "
                    "more than --max-memory {} MiB; pass a smaller --size (or "
                    "--size NAME=N per buffer) or raise --max-memory\n",
                    (bufferBytes + (1 << 20) - 1) >> 20, o.defaultSize, o.maxMemoryMiB);
    std::fwrite(msg.data(), 1, msg.size(), stderr);
    return 1;
  }

  // Buffers and scalars, in argument order.
  std::mt19937_64 rng(o.seed);
  std::vector<std::unique_ptr<HostBuffer>> buffers;
  std::vector<InterpArg> args;
  std::map<std::string, bool> used;
  for (unsigned i = 0; i < k.fn->numArguments(); ++i) {
    const std::string &name = k.argNames[i];
    Type *t = k.fn->argument(i)->type();
    if (auto *p = dyn_cast<PointerType>(t)) {
      Type *pointee = p->pointee();
      DType d = pointee->isPointer() ? DType::U64 : pointee->dtype();
      int64_t n = o.sizes.count(name) ? o.sizes[name] : o.defaultSize;
      used[name] = true;
      auto b = std::make_unique<HostBuffer>(HostBuffer::allocate(name, d, n));
      bool isOut = std::find(o.outs.begin(), o.outs.end(), name) != o.outs.end();
      if (!isOut) {
        std::uniform_real_distribution<double> real(-1.0, 1.0);
        std::uniform_int_distribution<int> integer(1, d == DType::I1 ? 1 : 100);
        for (int64_t e = 0; e < n; ++e) {
          double v;
          if (isFloat(d)) {
            do
              v = real(rng);
            while (v == 0);
          } else {
            v = integer(rng);
          }
          b->set(e, v);
        }
      }
      args.push_back(InterpArg::pointer(*b));
      buffers.push_back(std::move(b));
      continue;
    }
    auto it = o.args.find(name);
    if (it == o.args.end()) {
      diag.error(k.fn->loc(), fmt::format("no value for scalar argument '{}' ({}); pass --arg "
                                          "{}=VALUE",
                                          name, t->str(), name));
      return fail();
    }
    used[name] = true;
    if (isFloat(t->dtype())) {
      char *end = nullptr;
      double v = std::strtod(it->second.c_str(), &end);
      if (*end)
        return usage(fmt::format("--arg {}: '{}' is not a number", name, it->second));
      args.push_back(InterpArg::real(v));
    } else {
      std::optional<int64_t> v = parseInt(it->second);
      if (!v)
        return usage(fmt::format("--arg {}: '{}' is not an integer", name, it->second));
      args.push_back(InterpArg::integer(*v));
    }
  }
  for (const auto &[name, v] : o.args)
    if (!used.count(name))
      return usage(fmt::format("--arg {}: the kernel has no scalar argument of that name", name));
  for (const std::string &name : o.outs)
    if (!used.count(name))
      return usage(fmt::format("--out {}: the kernel has no pointer argument of that name", name));

  InterpretOptions opts;
  opts.grid = o.grid;
  opts.numThreads = o.threads;
  opts.maxSteps = o.maxSteps;
  opts.maxMemoryBytes = o.maxMemoryMiB > (UINT64_MAX >> 20) ? 0 : o.maxMemoryMiB << 20;
  std::string printed;
  opts.printOutput = &printed;
  InterpretStats stats;
  // Ctrl-C stops the run at the next op (InterpretOptions::interrupted),
  // with the program and operation count it reached, exit status 130.
  gInterrupted = 0;
  struct sigaction onInt = {}, previous = {};
  onInt.sa_handler = [](int) { gInterrupted = 1; };
  sigemptyset(&onInt.sa_mask);
  sigaction(SIGINT, &onInt, &previous);
  opts.interrupted = [] { return gInterrupted != 0; };
  bool ran = interpret(*k.module, *k.fn, args, opts, diag, &stats);
  sigaction(SIGINT, &previous, nullptr);
  if (!print(printed))
    return 1;
  if (!ran && stats.interrupted) {
    fail();
    return 130;
  }
  if (!ran)
    return fail();
  std::string out =
      fmt::format("ran @{} on grid ({}, {}, {}): {} programs, {} operations\n", k.fn->name(),
                  o.grid[0], o.grid[1], o.grid[2], stats.programs, stats.steps);
  for (const auto &b : buffers)
    if (b->storedByKernel())
      out += summarize(*b, o.show);
  return print(out) ? 0 : 1;
}

} // namespace tk::tkc
