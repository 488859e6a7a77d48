// Helpers shared by the IR unit tests: parse text IR into a module held with
// its context, and collect diagnostics as text.
#pragma once

#include "ir/IRContext.h"
#include "ir/IRParser.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"
#include "lang/Diagnostics.h"

#include <memory>
#include <string>

namespace tk::test {

struct ParsedIR {
  SourceManager sm;
  IRContext ctx{sm};
  DiagnosticEngine diag{sm};
  std::unique_ptr<Module> module;

  /// Parses `text` (file name "t.tkir"); returns whether it parsed.
  bool parse(std::string text) {
    BufferId id = sm.addBuffer("t.tkir", std::move(text));
    module = parseIR(ctx, id, diag);
    return module != nullptr;
  }
  bool verify() { return module && verifyModule(*module, diag); }
  std::string errors() const { return diag.renderAll(); }
  std::string print() { return printModule(*module); }
};

} // namespace tk::test
