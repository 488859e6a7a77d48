// Diagnostics: errors are data with locations.
//
// Every stage of tk (lexer, parser, checks, IR building, passes, the driver)
// reports problems by adding a Diagnostic to a DiagnosticEngine; nothing in
// library code prints or exits. The front ends decide what to do with them:
// `tkc` renders them to stderr and exits 1, Python raises tk.CompilationError
// whose text is the same rendering.
//
// Rendering is one format everywhere:
//
//   softmax.tk:12:17: error: cannot broadcast [128] with [64]
//       y = x + tk.arange(0, 64)
//                   ^
//   softmax.tk:9:5: note: x defined here
//       x = tk.load(ptr + offs)
//       ^
//
// Colour (bold message, red "error", green caret) is on only when asked for.
#pragma once

#include "lang/SourceManager.h"

#include <string>
#include <vector>

namespace tk {

/// Remark is not a problem: what the compiler decided (lang/Remarks.h); it is
/// rendered like the others and never counts as an error.
enum class Severity { Note, Warning, Error, Remark };

/// "note", "warning", "error", "remark": the word diagnostics are rendered with.
const char *severityName(Severity s);

struct DiagnosticNote {
  SourceLoc loc;
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  std::vector<DiagnosticNote> notes;
};

/// Renders one diagnostic (with its notes) in the format above: the one
/// renderer of diagnostics and remarks.
std::string renderDiagnostic(const SourceManager &sm, const Diagnostic &d, bool color = false);

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sm) : sm_(&sm) {}

  /// Adds an error and returns it so the caller can attach notes:
  ///   diag.error(loc, "...").notes.push_back({defLoc, "defined here"});
  Diagnostic &error(SourceLoc loc, std::string message);
  Diagnostic &warning(SourceLoc loc, std::string message);
  Diagnostic &report(Severity severity, SourceLoc loc, std::string message);

  bool hasErrors() const { return numErrors_ != 0; }
  unsigned numErrors() const { return numErrors_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  const SourceManager &sourceManager() const { return *sm_; }

  /// Past this many errors further ones are dropped (a single "too many errors"
  /// error is kept), so a garbage input cannot produce unbounded output.
  void setErrorLimit(unsigned limit) { errorLimit_ = limit; }

  /// Renders one diagnostic (with its notes) in the format above.
  std::string render(const Diagnostic &d, bool color = false) const;
  /// Renders all diagnostics in the order they were reported.
  std::string renderAll(bool color = false) const;

  void clear() {
    diags_.clear();
    numErrors_ = 0;
  }

private:
  const SourceManager *sm_;
  std::vector<Diagnostic> diags_;
  unsigned numErrors_ = 0;
  unsigned errorLimit_ = 100;
  Diagnostic dropped_; // sink for diagnostics past the limit
};

} // namespace tk
