#include "parser/Frontend.h"

#include "parser/Parser.h"

namespace tk {

ast::Module *parseAndCheck(const SourceManager &sm, BufferId buffer, ast::Context &ctx,
                           DiagnosticEngine &diag, const CheckOptions &options) {
  // Count this buffer's errors only: the engine may already hold diagnostics
  // of other buffers.
  unsigned before = diag.numErrors();
  ast::Module *module = parseModule(sm, buffer, ctx, diag);
  if (diag.numErrors() == before)
    checkModule(*module, sm, diag, options);
  return module;
}

} // namespace tk
