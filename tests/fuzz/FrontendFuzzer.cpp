// FrontendFuzzer: the libFuzzer entry point for tk's front end.
//
// One input is one `.tk` buffer. It goes through everything a user's file
// meets before IR: the lexer and its token dump, the parser and the semantic
// checks, the AST printer, diagnostic rendering (with colour, to reach every
// branch), and the diagnostic verifier reading the buffer's comments. Under
// ASan + UBSan any crash, leak, overflow or undefined behaviour is a finding;
// beyond that, two contracts are checked:
//   - a front end that returns no module has said why (at least one error);
//   - every located diagnostic points into the buffer it came from.
//
// Run it with tests/fuzz/run-fuzzer.sh (test.sh does, for 60 s).
#include "lang/ASTPrinter.h"
#include "lang/DiagnosticVerifier.h"
#include "parser/Frontend.h"
#include "parser/Lexer.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using namespace tk;

void checkLocations(const DiagnosticEngine &diag, BufferId id, size_t numLines) {
  auto inBuffer = [&](SourceLoc loc) {
    // A diagnostic at end of file may sit one line past the last newline.
    return !loc.isValid() || (loc.buffer == id && loc.line <= numLines + 1);
  };
  for (const Diagnostic &d : diag.diagnostics()) {
    if (!inBuffer(d.loc))
      std::abort();
    for (const DiagnosticNote &n : d.notes)
      if (!inBuffer(n.loc))
        std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t numLines = 1;
  for (char c : text)
    numLines += c == '\n';

  SourceManager sm;
  BufferId id = sm.addBuffer("fuzz.tk", std::move(text));
  {
    DiagnosticEngine diag(sm);
    std::vector<Token> tokens = lex(sm, id, diag);
    (void)dumpTokens(tokens, sm);
    checkLocations(diag, id, numLines);
  }

  ast::Context ctx;
  DiagnosticEngine diag(sm);
  ast::Module *module = parseAndCheck(sm, id, ctx, diag);
  if (!module && !diag.hasErrors())
    std::abort();
  if (module)
    (void)printAST(*module, sm);
  checkLocations(diag, id, numLines);
  (void)diag.renderAll(/*color=*/true);

  DiagnosticEngine report(sm);
  DiagnosticVerifier verifier(sm, report);
  verifier.addExpectations(id);
  verifier.verify(diag.diagnostics());
  (void)report.renderAll();
  return 0;
}
