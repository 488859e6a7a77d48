// Frontend: the one entry every front end (tkc, the Python extension, host
// C++, the fuzzer) uses to turn source text into a checked AST.
//
//   SourceManager sm;
//   BufferId id = sm.addBuffer("add.tk", text);
//   ast::Context ctx;
//   DiagnosticEngine diag(sm);
//   ast::Module *m = parseAndCheck(sm, id, ctx, diag);
//   if (diag.hasErrors())
//     return diag.renderAll();   // syntax errors, or the semantic checks' errors
//   // m is resolved (Name::binding, builtin ids) and ready for lowering.
//
// The semantic checks run only when parsing reported no error: a module with
// syntax errors is partial (the parser skipped statements), and checking it
// would only add noise such as undefined names whose definition was skipped.
#pragma once

#include "lang/AST.h"
#include "lang/Diagnostics.h"
#include "parser/Sema.h"

namespace tk {

/// Lexes, parses and checks one buffer. Never null; diag.hasErrors() says whether it is usable.
ast::Module *parseAndCheck(const SourceManager &sm, BufferId buffer, ast::Context &ctx,
                           DiagnosticEngine &diag, const CheckOptions &options = {});

} // namespace tk
