// tkc-opt: reads block IR as text, verifies it, runs the passes named on the
// command line in that order, and prints the result.
//
//   tkc-opt k.tkir --canonicalize --cse --dce
//   tkc-opt k.tkir --block-pipeline --verify-each -o out.tkir
//   tkc-opt k.tkir --coalesce --accelerate-dot --pipeline   (--pipeline: software pipelining)
//   tkc-opt bad.tkir --split-input-file --verify-diagnostics
//
// Exit status (as tkc): 0 success, 1 the input has errors (diagnostics on
// stderr) or cannot be read or written, 2 bad usage. This file is the only
// place of tkc-opt that prints.
#include "compiler/Compiler.h"
#include "compiler/Pipeline.h"
#include "ir/IRContext.h"
#include "ir/IRParser.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"
#include "lang/DiagnosticVerifier.h"
#include "lowering/PassManager.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tk {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string input;
  std::string output;
  std::vector<const PassInfo *> passes; // null entry: the block passes (--block-pipeline)
  bool verifyEach = false;
  bool printLocations = false;
  bool verifyDiagnostics = false;
  bool splitInputFile = false;
};

std::string helpText() {
  std::string s = "usage: tkc-opt [options] FILE.tkir   (FILE may be - for stdin)\n\n"
                  "Reads block IR, verifies it, runs the given passes in order, prints it.\n\n"
                  "options:\n"
                  "  -o FILE               write the IR to FILE instead of stdout\n"
                  "  --block-pipeline      run tk's block passes (compiler/Pipeline.cpp)\n"
                  "  --verify-each         verify the IR after every pass\n"
                  "  --print-locations     print loc(\"file\":line:col) after each op\n"
                  "  --split-input-file    treat each `# -----` line as the end of one input\n"
                  "  --verify-diagnostics  check diagnostics against the file's\n"
                  "                        `# expected-error {{...}}` annotations\n"
                  "  --help                this text\n\n"
                  "passes (run in the order given):\n";
  for (const PassInfo &p : registeredPasses())
    s += fmt::format("  --{:<20} {}\n", p.flag, p.summary);
  s += "\nenvironment: TK_DUMP_IR=all|<pass>[,<pass>] prints the IR after a pass that\n"
       "changed it; TK_TIME_PASSES=1 prints a timing table (both to stderr).\n";
  return s;
}

int usageError(const std::string &msg) {
  std::fprintf(stderr, "tkc-opt: error: %s\n(run tkc-opt --help for usage)\n", msg.c_str());
  return kExitUsage;
}

// Returns -1 when the options are fine, else the exit status.
int parseArgs(int argc, char **argv, Options &opts) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::string error;
      if (writeOutput("", helpText(), error))
        return kExitOk;
      std::fprintf(stderr, "tkc-opt: error: %s\n", error.c_str());
      return kExitInputError;
    }
    if (arg == "-o") {
      if (i + 1 >= argc)
        return usageError("-o needs a file name");
      opts.output = argv[++i];
    } else if (arg == "--block-pipeline") {
      opts.passes.push_back(nullptr);
    } else if (arg == "--verify-each") {
      opts.verifyEach = true;
    } else if (arg == "--print-locations") {
      opts.printLocations = true;
    } else if (arg == "--verify-diagnostics") {
      opts.verifyDiagnostics = true;
    } else if (arg == "--split-input-file") {
      opts.splitInputFile = true;
    } else if (arg.starts_with("--")) {
      const PassInfo *p = lookupPass(std::string_view(arg).substr(2));
      if (!p)
        return usageError(fmt::format("unknown option '{}'", arg));
      opts.passes.push_back(p);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usageError(fmt::format("unknown option '{}'", arg));
    } else {
      if (!opts.input.empty())
        return usageError("more than one input file");
      opts.input = arg;
    }
  }
  if (opts.input.empty())
    return usageError("no input file");
  return -1;
}

// One piece of the input with the line (from 1) it starts on.
struct Chunk {
  std::string text;
  uint32_t firstLine;
};

std::vector<Chunk> splitInput(const std::string &text, bool split) {
  if (!split)
    return {{text, 1}};
  std::vector<Chunk> chunks = {{"", 1}};
  uint32_t line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string_view l(text.data() + pos, end - pos);
    ++line;
    if (l.starts_with("# -----"))
      chunks.push_back({"", line});
    else
      chunks.back().text += l;
    pos = end;
  }
  return chunks;
}

// Parses, verifies and transforms one chunk; appends its IR to `out`.
// Diagnostics go to `diag`; returns false when there were errors.
bool processChunk(const Options &opts, IRContext &ctx, BufferId id, DiagnosticEngine &diag,
                  std::string &out) {
  std::unique_ptr<Module> module = parseIR(ctx, id, diag);
  if (!module || !verifyModule(*module, diag))
    return false;
  PassManager pm(diag);
  // TK_DUMP_IR and TK_TIME_PASSES, read as every entry point reads them.
  CompileHooks hooks = CompileHooks::fromKnobs();
  pm.setDumpIR(hooks.dumpIR);
  pm.setTimePasses(hooks.timePasses);
  pm.setSink([](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stderr); });
  pm.setVerifyEach(opts.verifyEach);
  pm.setPrintLocations(opts.printLocations);
  for (const PassInfo *p : opts.passes) {
    if (p)
      pm.add(p->create());
    else
      buildPipeline(pm);
  }
  if (!pm.run(*module))
    return false;
  PrintOptions popts;
  popts.locations = opts.printLocations;
  out += printModule(*module, popts);
  return true;
}

int run(int argc, char **argv) {
  Options opts;
  if (int status = parseArgs(argc, argv, opts); status >= 0)
    return status;
  std::string text, ioError;
  if (!readInputFile(opts.input, text, ioError)) {
    std::fprintf(stderr, "tkc-opt: error: %s\n", ioError.c_str());
    return kExitInputError;
  }
  std::string fileName = opts.input == "-" ? "<stdin>" : opts.input;

  SourceManager sm;
  IRContext ctx(sm);
  // The compile's budget of ops (TK_MAX_OPS), which --inline keeps to.
  CompileLimits limits;
  if (!limits.readKnobs(ioError)) {
    std::fprintf(stderr, "tkc-opt: error: %s\n", ioError.c_str());
    return kExitInputError;
  }
  ctx.limits().maxOps = limits.maxOps;
  DiagnosticEngine diag(sm);
  std::string out;
  bool ok = true;
  std::vector<BufferId> buffers;
  std::vector<Chunk> chunks = splitInput(text, opts.splitInputFile);
  for (size_t i = 0; i < chunks.size(); ++i) {
    BufferId id = sm.addBuffer(fileName, std::move(chunks[i].text), chunks[i].firstLine);
    buffers.push_back(id);
    std::string chunkOut;
    bool chunkOk = processChunk(opts, ctx, id, diag, chunkOut);
    ok &= chunkOk;
    if (i)
      out += "# -----\n";
    out += chunkOut;
  }

  if (opts.verifyDiagnostics) {
    DiagnosticEngine report(sm);
    DiagnosticVerifier verifier(sm, report);
    for (BufferId id : buffers)
      verifier.addExpectations(id);
    if (!verifier.verify(diag.diagnostics())) {
      std::fputs(report.renderAll().c_str(), stderr);
      return kExitInputError;
    }
    return kExitOk;
  }
  if (diag.diagnostics().size())
    std::fputs(diag.renderAll().c_str(), stderr);
  if (!ok)
    return kExitInputError;
  if (!writeOutput(opts.output, out, ioError)) {
    std::fprintf(stderr, "tkc-opt: error: %s\n", ioError.c_str());
    return kExitInputError;
  }
  return kExitOk;
}

} // namespace
} // namespace tk

int main(int argc, char **argv) { return tk::run(argc, argv); }
