// tkc: tk's command-line compiler. `.tk` files in; tokens, the checked AST or
// a per-kernel summary out (later: block IR, LLVM IR, PTX, cubin).
//
//   tkc tutorials/01-vector-add.tk                  # summary of each kernel
//   tkc k.tk --emit=ast --kernel softmax -o k.ast   # one kernel's AST to a file
//   tkc --verify-diagnostics tests/filecheck/sema/undefined-name.tk
//
// Exit status: 0 success, 1 an input has errors (diagnostics on stderr) or
// cannot be read, 2 bad usage. Usage is documented in docs/tkc.md; this file
// is the only place in tk that prints.
#include "compiler/Compiler.h"
#include "driver/Lld.h"
#include "driver/Ptxas.h"
#include "ir/ASTToIR.h"
#include "ir/IRPrinter.h"
#include "lang/ASTPrinter.h"
#include "lang/DiagnosticVerifier.h"
#include "lowering/LLVMTarget.h"
#include "parser/Lexer.h"
#include "support/FileIO.h"
#include "support/Quote.h"
#include "tk/Version.h"
#include "tools/tkc/AotCommand.h"
#include "tools/tkc/KernelSummary.h"
#include "tools/tkc/OptionArgs.h"
#include "tools/tkc/RunCommand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tk::tkc {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

enum class ColorMode { Auto, Always, Never };

struct Options;

// One input on its way through the pipeline (compiler/Compiler.h). Each
// --emit kind runs the stages it needs on it and appends its text to `out`;
// it returns false when the input has errors (already reported to the
// compilation's diagnostics).
struct Input {
  const Options &options;
  Compilation &comp;
  BufferId buffer;
  const char *stage = "front end"; // where it stopped, for the summary of a failure
};

using EmitFn = bool (*)(Input &c, std::string &out);

bool emitTokens(Input &c, std::string &out);
bool emitAST(Input &c, std::string &out);
bool emitSummary(Input &c, std::string &out);
bool emitIR(Input &c, std::string &out);
bool emitIROpt(Input &c, std::string &out);
bool emitIRGPU(Input &c, std::string &out);
bool emitLLVM(Input &c, std::string &out);
bool emitPTXText(Input &c, std::string &out);
bool emitCubin(Input &c, std::string &out);
bool emitHsaco(Input &c, std::string &out);

struct EmitKind {
  std::string_view name;
  EmitFn run;
  std::string_view help;
};

// Every value of --emit, in pipeline order. A later stage adds its output
// here with one line (and its function above).
constexpr EmitKind kEmitKinds[] = {
    {"tokens", emitTokens, "the lexer's tokens, one per line"},
    {"ast", emitAST, "the AST after the semantic checks"},
    {"summary", emitSummary, "per kernel: parameters, decorators, stage reached (default)"},
    {"ir", emitIR, "block IR after AST lowering (verified)"},
    {"ir-opt", emitIROpt, "block IR after the optimisation pipeline"},
    {"ir-gpu", emitIRGPU, "block IR after the GPU passes (with layouts)"},
    {"llvm", emitLLVM, "LLVM IR for the GPU after tk's LLVM passes (--arch, --num-warps)"},
    {"ptx", emitPTXText, "PTX from LLVM's NVPTX back end (--arch, --num-warps)"},
    {"cubin", emitCubin, "a cubin from the PTX by ptxas (--arch; binary: needs -o)"},
    {"amdgcn", emitPTXText, "AMDGPU assembly from LLVM's AMDGPU back end (--target=amdgcn)"},
    {"hsaco", emitHsaco,
     "an AMDGPU code object linked by ld.lld (--target=amdgcn; binary: needs -o)"},
};

// The --emit kinds of one target only.
bool isNVPTXOnly(const EmitKind *k) { return k->name == "ptx" || k->name == "cubin"; }
bool isAMDGPUOnly(const EmitKind *k) { return k->name == "amdgcn" || k->name == "hsaco"; }

constexpr const EmitKind *findEmitKind(std::string_view name) {
  for (const EmitKind &k : kEmitKinds)
    if (k.name == name)
      return &k;
  return nullptr;
}

struct Options {
  std::vector<std::string> inputs;
  const EmitKind *emit = findEmitKind("summary");
  std::string kernel; // --kernel: empty = all
  std::string output; // -o: empty = stdout
  ColorMode color = ColorMode::Auto;
  bool verifyDiagnostics = false;
  std::string signature;                                    // --signature "..."
  std::vector<std::pair<std::string, std::string>> defines; // -D NAME=VALUE, in order
  std::string arch = "sm_90";                               // --arch
  std::string target = "nvptx";                             // --target
  bool archGiven = false;
  int numWarps = 4;       // --num-warps
  int numStages = 0;      // --num-stages (0: not given, the pass's default)
  bool remarks = false;   // --remarks (or TK_REMARKS=1)
  bool fpFusion = true;   // --no-fp-fusion
  bool reflectFtz = true; // --no-reflect-ftz
  RemarkFilter remarkFilter = RemarkFilter::All;
  bool emitGiven = false; // --emit was on the command line
};

constexpr std::string_view kHelp = R"(usage: tkc FILE.tk... [options]

Compiles tk kernels. With no --emit, prints a summary of each kernel.

options:
  --emit=KIND            what to print (see below; default: summary)
  --kernel NAME          only the function NAME of each file
  -o FILE                write the output to FILE (default: stdout); not
                         written when an input has errors
  --verify-diagnostics   check the diagnostics against the file's
                         `# expected-error {{...}}` annotations instead of
                         printing them; exit 0 when they match
  --signature "SIG"      parameter types for --emit=ir and later, Triton-style:
                         "*fp32:16, *fp32:16, i32, 1024" (":16" divisible by
                         16, ":1" equal to 1, a bare value a constexpr)
  -D NAME=VALUE          the value of the constexpr NAME (int, float,
                         True/False, a dtype such as fp16, or a string)
  --color=WHEN           colour diagnostics: auto (stderr is a terminal and
                         NO_COLOR is unset), always, never
  --help                 this text
  --version              tk's version, LLVM's version, NVPTX availability

code generation (--emit=ir-gpu, llvm, ptx):
  --target=T             nvptx (default: NVIDIA GPUs) or amdgcn (AMD GPUs, compile
                         only: --emit=llvm, amdgcn or hsaco)
  --arch=sm_NN           target GPU: sm_80, sm_86, sm_87, sm_89, sm_90 (default) or sm_90a
                         (Hopper's arch-specific target: tk.dot on wgmma); with
                         --target=amdgcn gfx90a, gfx942 (default) or gfx1100
  --num-warps=N          warps per program, a power of two 1..32 (default: 4)
  --num-stages=N         stages of the cp.async ring that pipelines the loads of a
                         loop feeding tk.dot (default: 3; 1 turns it off)
  --no-fp-fusion         every float add and multiply rounds on its own (add.rn,
                         mul.rn; Triton's enable_fp_fusion=False); by default a
                         multiply feeding an add may become one fma
  --no-reflect-ftz       libdevice's functions and tk.exp2 keep subnormal results
                         (Triton's enable_reflect_ftz=False); by default they
                         flush them to zero, as Triton's do
  --remarks[=WHICH]      print optimisation remarks to stderr, as diagnostics:
                         missed (what could be faster, and why), passed (what
                         was applied) or all (default; also the facts: layouts,
                         shared memory, registers and occupancy through ptxas -v).
                         Without --emit: compiles to PTX and prints only them
                         (docs/remarks.md; TK_REMARKS=1 is --remarks=all)

--emit kinds:
)";

constexpr std::string_view kHelpTail = R"(
A FILE of '-' reads standard input. Exit status: 0 success, 1 an input has
errors or cannot be read, 2 bad usage. See docs/tkc.md.
)";

//===----------------------------------------------------------------------===//
// Printing: tkc's own messages ("tkc: error: ...") and rendered diagnostics.
//===----------------------------------------------------------------------===//

bool useColor(ColorMode mode) {
  if (mode != ColorMode::Auto)
    return mode == ColorMode::Always;
  const char *term = std::getenv("TERM");
  return isatty(STDERR_FILENO) && !std::getenv("NO_COLOR") &&
         !(term && std::string_view(term) == "dumb");
}

void printErr(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stderr); }

void toolError(bool color, std::string_view message) {
  printErr(color ? fmt::format("tkc: \033[1;31merror:\033[0m {}\n", message)
                 : fmt::format("tkc: error: {}\n", message));
}

int usageError(std::string_view message) {
  toolError(useColor(ColorMode::Auto), message);
  printErr("Run 'tkc --help' for usage.\n");
  return kExitUsage;
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

std::string emitKindNames() {
  std::string names;
  for (const EmitKind &k : kEmitKinds)
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  return true;
}

// An integer -D value past 64 bits (decimal or 0x hex, optionally
// negative) would read as a float (parseConstValue takes what is not an
// int64 as one) and fail far from the command line, if at all.
bool integerPast64Bits(std::string_view v) {
  std::string_view digits = v.substr(!v.empty() && v[0] == '-');
  bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (hex)
    digits.remove_prefix(2);
  else if (digits.size() > 1 && digits[0] == '0')
    return false; // 010: not an integer in Python either
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [hex](char c) {
        return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : c >= '0' && c <= '9';
      }))
    return false;
  return parseConstValue(v).kind != ConstValue::Kind::Int;
}

enum class ParseResult { Run, ExitOk, ExitUsage, ExitWriteError };

// --help and --version text to stdout; false (reported) when it cannot be
// written.
bool printed(std::string_view text) {
  std::string error;
  if (writeOutput("", text, error))
    return true;
  toolError(useColor(ColorMode::Auto), error);
  return false;
}

// Reads argv into `opts`. Long options take their value as `--opt=V` or
// `--opt V`; -o and -D also as `-oFILE`, `-DNAME=V`. `--` ends the options.
ParseResult parseArgs(int argc, char **argv, Options &opts) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  bool optionsDone = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (optionsDone || arg == "-" || arg.empty() || arg[0] != '-') {
      opts.inputs.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsDone = true;
      continue;
    }

    // Splits "--name=value" / "--name value"; returns nullopt (after
    // reporting) when the value is missing.
    OptionArg opt = splitOption(arg);
    std::string_view name = opt.name;
    auto value = [&]() -> std::optional<std::string_view> {
      std::optional<std::string_view> v = optionValue(opt, args, i);
      if (!v)
        usageError(fmt::format("option '{}' needs a value", name));
      return v;
    };

    if (name == "--help" || name == "-h") {
      std::string help(kHelp);
      for (const EmitKind &k : kEmitKinds)
        help += fmt::format("  {:<22} {}\n", k.name, k.help);
      help += kHelpTail;
      return printed(help) ? ParseResult::ExitOk : ParseResult::ExitWriteError;
    }
    if (name == "--version") {
      std::string llvm = llvmVersion();
      std::string text = fmt::format("tkc {}\n", TK_VERSION_STRING);
      text += llvm.empty() ? "LLVM: not linked (built with TK_WITH_LLVM=OFF)\n"
                           : fmt::format("LLVM {}, NVPTX target: {}\n", llvm,
                                         hasNVPTXTarget() ? "available" : "not available");
      return printed(text) ? ParseResult::ExitOk : ParseResult::ExitWriteError;
    }
    if (name == "--verify-diagnostics") {
      opts.verifyDiagnostics = true;
    } else if (name == "--no-fp-fusion") {
      opts.fpFusion = false;
    } else if (name == "--no-reflect-ftz") {
      opts.reflectFtz = false;
    } else if (name == "--remarks") {
      opts.remarks = true;
      std::string_view v = opt.inlineValue.value_or("all");
      if (!parseRemarkFilter(v, opts.remarkFilter)) {
        usageError(fmt::format("--remarks must be missed, passed or all, not '{}'", v));
        return ParseResult::ExitUsage;
      }
    } else if (name == "--emit") {
      opts.emitGiven = true;
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      opts.emit = findEmitKind(*v);
      if (!opts.emit) {
        usageError(fmt::format("unknown --emit kind '{}'; valid kinds: {}", *v, emitKindNames()));
        return ParseResult::ExitUsage;
      }
    } else if (name == "--kernel") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      opts.kernel = *v;
    } else if (name == "-o" || (arg.substr(0, 2) == "-o" && arg.size() > 2)) {
      std::optional<std::string_view> v = arg.size() > 2 ? arg.substr(2) : value();
      if (!v)
        return ParseResult::ExitUsage;
      opts.output = *v;
    } else if (name == "--color") {
      // A bare --color means always, as in ls and grep.
      std::string_view v = opt.inlineValue.value_or("always");
      if (v == "auto")
        opts.color = ColorMode::Auto;
      else if (v == "always")
        opts.color = ColorMode::Always;
      else if (v == "never")
        opts.color = ColorMode::Never;
      else {
        usageError(fmt::format("--color must be auto, always or never, not '{}'", v));
        return ParseResult::ExitUsage;
      }
    } else if (name == "--signature") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      opts.signature = *v;
    } else if (name == "-D" || (arg.substr(0, 2) == "-D" && arg.size() > 2)) {
      std::optional<std::string_view> v = arg.size() > 2 ? arg.substr(2) : value();
      if (!v)
        return ParseResult::ExitUsage;
      size_t eq = v->find('=');
      if (eq == std::string_view::npos || !isIdentifier(v->substr(0, eq)) || eq + 1 == v->size()) {
        usageError(fmt::format("-D expects NAME=VALUE with NAME an identifier, got '{}'", *v));
        return ParseResult::ExitUsage;
      }
      if (integerPast64Bits(v->substr(eq + 1))) {
        usageError(fmt::format("-D {}: the integer does not fit in 64 bits", *v));
        return ParseResult::ExitUsage;
      }
      opts.defines.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (name == "--arch") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      if (!isSupportedArch(*v) && !isAMDGPUArch(*v)) {
        usageError(fmt::format("--arch must be one of {} (--target=nvptx) or {} "
                               "(--target=amdgcn), not '{}'",
                               kSupportedArchList, kAMDGPUArchList, showText(*v)));
        return ParseResult::ExitUsage;
      }
      opts.arch = *v;
      opts.archGiven = true;
    } else if (name == "--target") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      if (*v != "nvptx" && *v != "amdgcn") {
        usageError(fmt::format("--target must be nvptx or amdgcn, not '{}'", showText(*v)));
        return ParseResult::ExitUsage;
      }
      opts.target = *v;
    } else if (name == "--num-warps") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      int n = 0;
      bool digits = !v->empty() && v->size() <= 2;
      for (char c : *v) {
        digits = digits && c >= '0' && c <= '9';
        n = n * 10 + (c - '0');
      }
      if (!digits || !isValidNumWarps(n)) {
        usageError(fmt::format("--num-warps must be a power of two from 1 to {}, not '{}'",
                               kMaxNumWarps, *v));
        return ParseResult::ExitUsage;
      }
      opts.numWarps = n;
    } else if (name == "--num-stages") {
      auto v = value();
      if (!v)
        return ParseResult::ExitUsage;
      int n = 0;
      const char *end = v->data() + v->size();
      auto [stop, ec] = std::from_chars(v->data(), end, n);
      if (ec != std::errc() || stop != end || !isValidNumStages(n)) {
        usageError(
            fmt::format("--num-stages must be a number from 1 to {}, not '{}'", kMaxNumStages, *v));
        return ParseResult::ExitUsage;
      }
      opts.numStages = n;
    } else {
      usageError(fmt::format("unknown option '{}'", arg));
      return ParseResult::ExitUsage;
    }
  }
  if (opts.inputs.empty()) {
    usageError("no input files");
    return ParseResult::ExitUsage;
  }
  // The arch names its target: the two must agree.
  bool amdgcn = opts.target == "amdgcn";
  if (amdgcn && !opts.archGiven)
    opts.arch = "gfx942";
  if (amdgcn != isAMDGPUArch(opts.arch)) {
    usageError(amdgcn ? fmt::format("--target=amdgcn needs --arch={}, not '{}'", kAMDGPUArchList,
                                    opts.arch)
                      : fmt::format("--arch={} is an AMD GPU: add --target=amdgcn", opts.arch));
    return ParseResult::ExitUsage;
  }
  if (amdgcn ? isNVPTXOnly(opts.emit) : isAMDGPUOnly(opts.emit)) {
    usageError(
        fmt::format("--emit={} is for --target={}", opts.emit->name, amdgcn ? "nvptx" : "amdgcn"));
    return ParseResult::ExitUsage;
  }
  return ParseResult::Run;
}

//===----------------------------------------------------------------------===//
// The pipeline, one --emit kind at a time
//===----------------------------------------------------------------------===//

bool emitTokens(Input &c, std::string &out) {
  std::vector<Token> tokens = lex(c.comp.sources(), c.buffer, c.comp.diag());
  if (c.comp.diag().hasErrors())
    return false;
  out += dumpTokens(tokens, c.comp.sources());
  return true;
}

// The front end: parse and check. Every kind past tokens starts here.
bool runFrontEnd(Input &c) { return c.comp.parse(c.buffer); }

// The functions --kernel selects (all of them without it). An unknown name
// is an error about this input, listing the functions it does have.
bool selectFunctions(Input &c, std::vector<ast::FunctionDef *> &selected) {
  ast::Module &module = *c.comp.ast();
  std::vector<ast::FunctionDef *> all = module.functions();
  if (c.options.kernel.empty()) {
    selected = all;
    return true;
  }
  if (ast::FunctionDef *fn = module.findFunction(c.options.kernel)) {
    selected.push_back(fn);
    return true;
  }
  c.stage = "--kernel";
  std::string names;
  for (const ast::FunctionDef *fn : all)
    names += (names.empty() ? "" : ", ") + fn->name;
  c.comp.diag().error(
      {}, fmt::format("no kernel named '{}' in '{}'; {}", c.options.kernel,
                      c.comp.sources().fileName(c.buffer),
                      names.empty() ? "it defines no functions" : "it defines: " + names));
  return false;
}

bool emitAST(Input &c, std::string &out) {
  if (!runFrontEnd(c))
    return false;
  ast::Module &module = *c.comp.ast();
  if (c.options.kernel.empty()) {
    out += printAST(module, c.comp.sources());
    return true;
  }
  std::vector<ast::FunctionDef *> selected;
  if (!selectFunctions(c, selected))
    return false;
  // A module holding only the selected function, printed the same way.
  ast::Context one;
  ast::Module *m = one.makeModule();
  m->buffer = module.buffer;
  m->body.push_back(selected.front());
  out += printAST(*m, c.comp.sources());
  return true;
}

CompileOptions compileOptions(const Options &o) {
  CompileOptions options;
  options.arch = o.arch;
  options.numWarps = o.numWarps;
  options.numStages = o.numStages;
  options.fpFusion = o.fpFusion;
  options.reflectFtz = o.reflectFtz;
  return options;
}

// A -D whose name the source never spells (no parameter, no global, no
// use) can change nothing: a typo, which would otherwise be ignored. It is an
// error naming the kernels' parameters.
bool checkDefines(Input &c, const std::vector<const ast::FunctionDef *> &kernels) {
  if (c.options.defines.empty())
    return true;
  DiagnosticEngine quiet(c.comp.sources());
  std::set<std::string_view> spelled;
  std::vector<Token> tokens = lex(c.comp.sources(), c.buffer, quiet);
  for (const Token &t : tokens)
    if (t.kind == TokenKind::Identifier)
      spelled.insert(t.text);
  for (const auto &define : c.options.defines) {
    const std::string &name = define.first;
    if (spelled.count(name))
      continue;
    std::string params;
    for (const ast::FunctionDef *fn : kernels) {
      std::string names;
      for (const ast::Param &p : fn->params)
        names += (names.empty() ? "" : ", ") + p.name;
      params += fmt::format("{}'{}' ({})", params.empty() ? "" : ", ", fn->name,
                            names.empty() ? "no parameters" : names);
    }
    c.stage = "-D";
    c.comp.diag().error({}, fmt::format("-D {}: '{}' names nothing in '{}': no parameter, global "
                                        "or use is spelled so; the parameters are those of {}",
                                        name, name, c.comp.sources().fileName(c.buffer), params));
    return false;
  }
  return true;
}

// --emit=ir and later: lowers each kernel (the --kernel one, or every
// function no other function calls) for --signature and -D.
bool lowerToIR(Input &c) {
  if (!runFrontEnd(c))
    return false;
  std::vector<const ast::FunctionDef *> kernels;
  if (c.options.kernel.empty()) {
    kernels = kernelEntryPoints(*c.comp.ast());
  } else {
    std::vector<ast::FunctionDef *> selected;
    if (!selectFunctions(c, selected))
      return false;
    kernels.assign(selected.begin(), selected.end());
  }
  if (!checkDefines(c, kernels))
    return false;
  std::vector<KernelSpec> specs;
  for (const ast::FunctionDef *fn : kernels) {
    KernelSpec spec;
    spec.kernel = fn->name;
    spec.signature = c.options.signature;
    for (const auto &[name, value] : c.options.defines)
      spec.constants[name] = parseConstValue(value);
    specs.push_back(std::move(spec));
  }
  return c.comp.lowerToIR(specs);
}

bool emitSummary(Input &c, std::string &out) {
  if (!runFrontEnd(c))
    return false;
  std::vector<ast::FunctionDef *> selected;
  if (!selectFunctions(c, selected))
    return false;
  // With --signature the kernels also go through the GPU passes, and each
  // kernel's summary gives the shared memory it needs (shared_bytes). That
  // compilation keeps its diagnostics to itself: a kernel the GPU passes
  // cannot take yet (a constexpr without -D) still gets its summary.
  std::map<std::string, int64_t> sharedBytes;
  if (!c.options.signature.empty()) {
    Compilation gpu(compileOptions(c.options));
    SourceText text{c.comp.sources().fileName(c.buffer),
                    std::string(c.comp.sources().text(c.buffer)), 1};
    Input quiet{c.options, gpu, gpu.sources().addBuffer(text.fileName, text.text)};
    if (lowerToIR(quiet) && gpu.runGpuPasses())
      for (auto &fn : gpu.module().functions())
        sharedBytes[fn->name()] = fn->attrs().getInt("shared_bytes").value_or(0);
  }
  out += c.comp.sources().fileName(c.buffer) + "\n";
  if (selected.empty())
    out += "  (no kernels)\n";
  for (const ast::FunctionDef *fn : selected) {
    StageResults stages = {{"front end", "ok"}};
    if (auto it = sharedBytes.find(fn->name); it != sharedBytes.end())
      stages.push_back({"shared", fmt::format("{} bytes", it->second)});
    out += summarizeFunctions(*c.comp.ast(), {fn}, stages);
  }
  return true;
}

bool emitIR(Input &c, std::string &out) {
  if (!lowerToIR(c))
    return false;
  out += printModule(c.comp.module());
  return true;
}

bool emitIROpt(Input &c, std::string &out) {
  if (!lowerToIR(c) || !c.comp.runBlockPasses())
    return false;
  out += printModule(c.comp.module());
  return true;
}

bool emitIRGPU(Input &c, std::string &out) {
  if (!lowerToIR(c) || !c.comp.runGpuPasses())
    return false;
  out += printModule(c.comp.module());
  return true;
}

bool emitLLVM(Input &c, std::string &out) {
  if (!lowerToIR(c) || !c.comp.runGpuPasses())
    return false;
  c.stage = "code generation";
  return c.comp.emitLLVM(out);
}

bool emitPTXText(Input &c, std::string &out) {
  if (!lowerToIR(c) || !c.comp.runGpuPasses())
    return false;
  c.stage = "code generation";
  return c.comp.emitPTX(out);
}

// --remarks without --emit: the whole compile, for its remarks; no output.
bool emitRemarksOnly(Input &c, std::string &) {
  std::string ptx;
  return emitPTXText(c, ptx);
}

// --emit=cubin: the PTX assembled by the toolkit's ptxas (driver/Ptxas.h);
// with --remarks, the cubin the registers remark's ptxas run made (one
// assembly, and the remark describes the cubin written).
bool emitCubin(Input &c, std::string &out) {
  std::string ptx, error;
  if (!emitPTXText(c, ptx))
    return false;
  c.stage = "ptxas";
  if (!c.comp.remarksCubin().empty()) {
    out = c.comp.remarksCubin();
    return true;
  }
  if (assembleWithPtxas(ptx, c.options.arch, out, error))
    return true;
  c.comp.diag().error(SourceLoc(), error);
  return false;
}

// --emit=hsaco: the AMDGPU object linked into a code object by ld.lld
// (driver/Lld.h).
bool emitHsaco(Input &c, std::string &out) {
  std::string object, error;
  if (!lowerToIR(c) || !c.comp.runGpuPasses())
    return false;
  c.stage = "code generation";
  if (!c.comp.emitObject(object))
    return false;
  c.stage = "ld.lld";
  if (linkCodeObject(object, out, error))
    return true;
  c.comp.diag().error(SourceLoc(), error);
  return false;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

int run(const Options &opts) {
  if ((opts.emit->run == emitCubin || opts.emit->run == emitHsaco) && opts.output.empty())
    return usageError(
        fmt::format("--emit={} writes a binary file: give it with -o FILE", opts.emit->name));
  bool color = useColor(opts.color);
  bool multiple = opts.inputs.size() > 1;
  std::string output;
  int status = kExitOk;

  for (const std::string &path : opts.inputs) {
    std::string displayName = path == "-" ? "<stdin>" : path;
    std::string text, readError;
    if (!readInputFile(path, text, readError)) {
      toolError(color, readError);
      status = kExitInputError;
      continue;
    }

    // The code knobs (TK_LLVM_OPT, TK_WGMMA_*, ...) and the debug ones
    // (TK_DUMP_IR, TK_TIME_PASSES, whose text goes to stderr).
    CompileOptions compile = compileOptions(opts);
    std::string knobError;
    if (!compile.readKnobs(knobError)) {
      toolError(color, knobError);
      return kExitUsage;
    }
    CompileHooks hooks = CompileHooks::fromKnobs(printErr);
    hooks.remarks |= opts.remarks;
    Compilation comp(compile, hooks);
    SourceManager &sm = comp.sources();
    DiagnosticEngine &diag = comp.diag();
    BufferId id = sm.addBuffer(displayName, std::move(text));
    Input c{opts, comp, id};
    std::string out;
    bool remarksOnly = hooks.remarks && !opts.emitGiven;
    bool ok = (remarksOnly ? emitRemarksOnly(c, out) : opts.emit->run(c, out)) && !diag.hasErrors();

    if (opts.verifyDiagnostics) {
      // The diagnostics are the output under test: compared, not printed.
      DiagnosticEngine report(sm);
      DiagnosticVerifier verifier(sm, report);
      verifier.addExpectations(id);
      if (!verifier.verify(diag.diagnostics())) {
        printErr(report.renderAll(color));
        status = kExitInputError;
      }
      continue;
    }

    printErr(diag.renderAll(color));
    if (const RemarkSink *remarks = comp.remarks())
      printErr(remarks->render(sm, opts.remarkFilter, color));
    if (!ok) {
      status = kExitInputError;
      // The summary names what failed, so a run over many files reads
      // as one table; other kinds print nothing for a failed input.
      if (opts.emit->run == emitSummary && !remarksOnly)
        output +=
            fmt::format("{}\n  {}: failed, {} error(s)\n", displayName, c.stage, diag.numErrors());
      continue;
    }
    if (multiple && opts.emit->run != emitSummary && !remarksOnly)
      output += fmt::format("==> {} <==\n", displayName);
    output += out;
  }

  if (opts.verifyDiagnostics)
    return status;
  // Like a C compiler, no output file for a failed compilation.
  if (!opts.output.empty() && status != kExitOk)
    return status;
  std::string writeError;
  if (!writeOutput(opts.output, output, writeError)) {
    toolError(color, writeError);
    return kExitInputError;
  }
  return status;
}

} // namespace
} // namespace tk::tkc

int main(int argc, char **argv) {
  // `tkc run ...` runs a kernel in the interpreter (tools/tkc/RunCommand.h).
  if (argc > 1 && std::string_view(argv[1]) == "run")
    return tk::tkc::runCommand(argc - 1, argv + 1);
  // `tkc --aot ...` writes C++ launchers (tools/tkc/AotCommand.h).
  if (tk::tkc::wantsAot(argc, argv))
    return tk::tkc::aotCommand(argc, argv);
  tk::tkc::Options opts;
  switch (tk::tkc::parseArgs(argc, argv, opts)) {
  case tk::tkc::ParseResult::ExitOk:
    return tk::tkc::kExitOk;
  case tk::tkc::ParseResult::ExitUsage:
    return tk::tkc::kExitUsage;
  case tk::tkc::ParseResult::ExitWriteError:
    return tk::tkc::kExitInputError;
  case tk::tkc::ParseResult::Run:
    break;
  }
  return tk::tkc::run(opts);
}
