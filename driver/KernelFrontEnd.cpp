// KernelFrontEnd: see KernelFrontEnd.h.
#include "driver/KernelFrontEnd.h"

#include "parser/Frontend.h"

#include <fmt/format.h>

namespace tk {

bool KernelFrontEnd::run(const std::string &source, const std::string &fileName,
                         KernelSpec kernelSpec, std::string &error) {
  spec = std::move(kernelSpec);
  BufferId buffer = sm.addBuffer(fileName, source);
  module = parseAndCheck(sm, buffer, ast, diag);
  if (diag.hasErrors()) {
    error = diag.renderAll();
    return false;
  }
  def = module->findFunction(spec.kernel);
  if (!def) {
    error = fmt::format("{}: error: no kernel named '{}'", fileName, spec.kernel);
    return false;
  }
  bindings.clear();
  if (!specializeParams(*def, spec, diag, bindings)) {
    error = diag.renderAll();
    return false;
  }
  return true;
}

} // namespace tk
