// IRParserFuzzer: the libFuzzer entry point for tk's textual IR.
//
// One input is one `.tkir` buffer, as tkc-opt and `tkc run` read it: the IR
// parser, then (when it parses) the verifier, the printer and diagnostic
// rendering (with colour, to reach every branch). Under ASan + UBSan any
// crash, leak, overflow or undefined behaviour is a finding; beyond that,
// these contracts are checked:
//   - a parse that returns no module has said why (at least one error), and
//     so has a verifier that rejects one;
//   - every parser diagnostic is located, in the buffer and within its lines;
//     every verifier diagnostic is located in the buffer or in one that a
//     `loc("file":line:col)` suffix named;
//   - IR that parses and verifies prints to text that parses and verifies
//     again and prints identically, with and without `loc(...)` suffixes.
//
// Run it with tests/fuzz/run-fuzzer.sh (test.sh does, within its fuzz step).
#include "ir/IRParser.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using namespace tk;

size_t countLines(const std::string &text) {
  size_t n = 1;
  for (char c : text)
    n += c == '\n';
  return n;
}

// Whether every diagnostic is located: in `id` within its `numLines` lines
// (a diagnostic at end of file may sit one line past the last newline) or,
// with `otherBuffers`, in a buffer added after `id` (a loc(...) suffix's).
bool locatedIn(const DiagnosticEngine &diag, BufferId id, size_t numLines, bool otherBuffers) {
  auto ok = [&](SourceLoc loc) {
    if (!loc.isValid())
      return false;
    if (loc.buffer == id)
      return loc.line <= numLines + 1;
    return otherBuffers && loc.buffer > id;
  };
  for (const Diagnostic &d : diag.diagnostics()) {
    if (!ok(d.loc))
      return false;
    for (const DiagnosticNote &n : d.notes)
      if (n.loc.isValid() && !ok(n.loc))
        return false;
  }
  return true;
}

// Parses and verifies `text` as a new buffer; aborts unless it does both
// without a diagnostic (printed IR must read back).
std::unique_ptr<Module> reparse(IRContext &ctx, const std::string &text) {
  SourceManager &sm = ctx.sourceManager();
  BufferId id = sm.addBuffer("roundtrip.tkir", text);
  DiagnosticEngine diag(sm);
  std::unique_ptr<Module> m = parseIR(ctx, id, diag);
  if (!m || !verifyModule(*m, diag) || !diag.diagnostics().empty())
    std::abort();
  return m;
}

void checkRoundTrip(IRContext &ctx, Module &module, bool locations) {
  PrintOptions options;
  options.locations = locations;
  std::string first = printModule(module, options);
  std::unique_ptr<Module> again = reparse(ctx, first);
  if (printModule(*again, options) != first)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t numLines = countLines(text);

  SourceManager sm;
  IRContext ctx(sm);
  BufferId id = sm.addBuffer("fuzz.tkir", std::move(text));
  DiagnosticEngine diag(sm);
  std::unique_ptr<Module> module = parseIR(ctx, id, diag);
  if (!module) {
    if (!diag.hasErrors() || !locatedIn(diag, id, numLines, /*otherBuffers=*/false))
      std::abort();
    (void)diag.renderAll(/*color=*/true);
    return 0;
  }
  if (!locatedIn(diag, id, numLines, /*otherBuffers=*/false))
    std::abort();

  // The printer and printOp also meet IR that does not verify (a verifier
  // diagnostic, --print-ir-after-failure), so they run before it.
  (void)printModule(*module);
  bool verified = verifyModule(*module, diag);
  if (verified == diag.hasErrors() || !locatedIn(diag, id, numLines, /*otherBuffers=*/true))
    std::abort();
  (void)diag.renderAll(/*color=*/true);
  if (verified) {
    checkRoundTrip(ctx, *module, /*locations=*/false);
    checkRoundTrip(ctx, *module, /*locations=*/true);
  }
  return 0;
}
