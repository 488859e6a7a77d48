// IRParser: reads the text form of the block IR back into a Module.
//
//   SourceManager sm;
//   IRContext ctx(sm);
//   DiagnosticEngine diag(sm);
//   BufferId id = sm.addBuffer("k.tkir", text);
//   std::unique_ptr<Module> m = parseIR(ctx, id, diag);   // null after an error
//
// The grammar is in docs/ir.md; `#` starts a comment that runs to the end of
// the line (as in .tk files, so lit RUN lines and `# expected-error` annotations
// read the same). An op without a
// `loc(...)` suffix gets the location of its first token in the .tkir buffer,
// so verifier errors on parsed IR point into the .tkir file; with a suffix,
// `loc("file.tk":12:5)` points into a buffer named file.tk (found or created
// through IRContext::bufferForFile). Values must be defined before they are
// used and are visible in nested regions, not after them.
//
// The parser checks syntax and names only; types and arities are the
// verifier's job (ir/Verifier.h). It stops at the first error.
#pragma once

#include "ir/IRContext.h"
#include "ir/Module.h"
#include "lang/Diagnostics.h"

#include <memory>

namespace tk {

std::unique_ptr<Module> parseIR(IRContext &ctx, BufferId buffer, DiagnosticEngine &diag);

/// Parses a type such as "tensor<128xfp32>"; null (and an error at `loc`)
/// when the text is not exactly one type.
Type *parseType(IRContext &ctx, std::string_view text, SourceLoc loc, DiagnosticEngine &diag);

} // namespace tk
