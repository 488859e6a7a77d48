// Parser: recursive descent over the tokens of one buffer, building the AST of
// lang/AST.h. Each parse function carries its rule from docs/grammar.md.
//
//   SourceManager sm;
//   BufferId id = sm.addBuffer("k.tk", "import tk\n@tk.jit\ndef f(x):\n    y = x + 1\n");
//   ast::Context ctx;
//   DiagnosticEngine diag(sm);
//   ast::Module *m = parseModule(sm, id, ctx, diag);
//   // m->body: Import, FunctionDef f (decorator Attribute .jit, one Param x,
//   //          body: Assign y = Binary + (Name x, IntLit 1))
//
// Syntax errors and unsupported Python constructs ("not supported in tk
// kernels: lambda expressions") are reported with their location; the parser
// then skips to the next statement (and the indented block under it, if any)
// and goes on, so one run finds every independent mistake. Nesting is bounded
// (100 levels of expressions or blocks) so no input can overflow the stack.
#pragma once

#include "lang/AST.h"
#include "lang/Diagnostics.h"
#include "lang/SourceManager.h"

namespace tk {

/// Never returns null; on errors it reports them, recovers at the next statement and goes on.
ast::Module *parseModule(const SourceManager &sm, BufferId buffer, ast::Context &ctx,
                         DiagnosticEngine &diag);

} // namespace tk
