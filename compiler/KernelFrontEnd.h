// KernelFrontEnd: the compile's first stage for callers that only need to
// know a kernel's parameters (the public API's autotuner and launch-time
// specialisation): source text -> checked AST (Compilation::parse) -> the
// kernel's definition -> how each parameter binds under a signature and
// constants (Compilation::bindParams). No IR is made.
//
//   KernelFrontEnd fe;
//   KernelSpec spec{"add_kernel", "*fp32:16, i32", {{"BLOCK", ConstValue::ofInt(256)}}};
//   if (!fe.run(source, "add.tk", spec, error))
//     ... error: the rendered diagnostics ("add.tk:3:5: error: ...", line, caret)
//   fe.bindings[0].isPointer, fe.bindings[1].dtype == DType::I32, ...
//   fe.def->params ...      // the kernel's AST (alive as long as `fe`)
#pragma once

#include "compiler/Compiler.h"

#include <string>
#include <vector>

namespace tk {

struct KernelFrontEnd {
  Compilation comp{CompileOptions()};
  const ast::FunctionDef *def = nullptr;
  std::vector<ParamBinding> bindings; // every parameter of the kernel, in order

  /// Parses and checks `source` (named `fileName`), finds `spec.kernel` and
  /// binds its parameters. False with `error` set: the rendered diagnostics,
  /// or "add.tk: error: no kernel named 'k'".
  bool run(const std::string &source, const std::string &fileName, const KernelSpec &spec,
           std::string &error);
};

} // namespace tk
