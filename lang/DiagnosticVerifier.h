// DiagnosticVerifier: checks that a source file produces exactly the
// diagnostics its comments say it should. It is what `tkc --verify-diagnostics`
// runs, and how every negative test of tk is written.
//
// Annotations live in `#` comments:
//
//   x = tk.load(ptr)   # expected-error {{undefined name 'ptr'}}
//   # expected-error@+1 {{expects 2 arguments}} {{got 3}}
//   y = tk.arange(0, 16, 2)
//   z = y + 1          # expected-note@-3 {{'x' defined here}}
//
// `expected-error`, `expected-warning` and `expected-note` name a severity;
// `@+N` / `@-N` move the expected line relative to the comment's line (`@N`
// names line N of the buffer); each `{{text}}` is one expected diagnostic
// whose message must contain `text`. A diagnostic matches an annotation of its
// severity on its own line; the notes attached to a diagnostic are matched
// against `expected-note` annotations the same way. Each annotation matches
// one diagnostic and each diagnostic one annotation.
//
// Usage:
//
//   DiagnosticEngine produced(sm), report(sm);
//   parseAndCheck(sm, id, ctx, produced);
//   DiagnosticVerifier verifier(sm, report);
//   verifier.addExpectations(id);
//   bool ok = verifier.verify(produced.diagnostics());
//   // report now holds one error per missing or unexpected diagnostic,
//   // and per malformed annotation, each with its location.
//
// A file that expects nothing and produces nothing fails verification: a
// negative test must not pass vacuously.
#pragma once

#include "lang/Diagnostics.h"

#include <string>
#include <vector>

namespace tk {

/// One `{{text}}` of an expected-* annotation.
struct ExpectedDiagnostic {
  Severity severity = Severity::Error;
  BufferId buffer = kNoBuffer;
  uint32_t line = 0; // the buffer line the diagnostic must be reported on
  std::string text;  // a substring of the diagnostic's message
  SourceLoc loc;     // of the annotation itself, for reporting
};

class DiagnosticVerifier {
public:
  /// Mismatches and malformed annotations are reported as errors to `report`.
  DiagnosticVerifier(const SourceManager &sm, DiagnosticEngine &report)
      : sm_(&sm), report_(&report) {}

  /// Reads the annotations in the comments of `buffer`. Returns false (and
  /// reports why) when an annotation is malformed.
  bool addExpectations(BufferId buffer);

  const std::vector<ExpectedDiagnostic> &expectations() const { return expected_; }

  /// Compares `produced` with the expectations of every added buffer. Returns
  /// true when each diagnostic and note was expected, each expectation was
  /// produced, and no annotation was malformed.
  bool verify(const std::vector<Diagnostic> &produced);

private:
  const SourceManager *sm_;
  DiagnosticEngine *report_;
  std::vector<BufferId> buffers_;
  std::vector<ExpectedDiagnostic> expected_;
  bool malformed_ = false;
};

} // namespace tk
