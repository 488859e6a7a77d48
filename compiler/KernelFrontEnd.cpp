// KernelFrontEnd: see KernelFrontEnd.h.
#include "compiler/KernelFrontEnd.h"

#include <fmt/format.h>

#include <span>

namespace tk {

bool KernelFrontEnd::run(const std::string &source, const std::string &fileName,
                         const KernelSpec &spec, std::string &error) {
  SourceText text{fileName, source, 1};
  if (!comp.parse(std::span(&text, 1))) {
    error = comp.diag().renderAll();
    return false;
  }
  def = comp.ast()->findFunction(spec.kernel);
  if (!def) {
    error = fmt::format("{}: error: no kernel named '{}'", fileName, spec.kernel);
    return false;
  }
  if (!comp.bindParams(spec, bindings)) {
    error = comp.diag().renderAll();
    return false;
  }
  return true;
}

} // namespace tk
