// KernelFrontEnd: the first steps of every compile of one kernel, shared by
// the compiler (compileToPTX) and by callers that only need to know the
// kernel's parameters (the public API's autotuner and launch-time
// specialisation): source text -> checked AST -> the kernel's definition ->
// how each parameter binds under a signature and constants.
//
//   KernelFrontEnd fe;
//   KernelSpec spec{"add_kernel", "*fp32:16, i32", {{"BLOCK", ConstValue::ofInt(256)}}};
//   if (!fe.run(source, "add.tk", spec, error))
//     ... error: the rendered diagnostics ("add.tk:3:5: error: ...", line, caret)
//   fe.bindings[0].isPointer, fe.bindings[1].dtype == DType::I32, ...
//
// The object owns the source manager, diagnostics and AST, so the compiler
// goes on from `module` and `def` to lower the kernel with the same
// diagnostics. Not copyable or movable (the diagnostics point at `sm`).
#pragma once

#include "ir/Specialize.h"
#include "lang/AST.h"
#include "lang/Diagnostics.h"

#include <string>
#include <vector>

namespace tk {

struct KernelFrontEnd {
  SourceManager sm;
  DiagnosticEngine diag{sm};
  ast::Context ast;
  ast::Module *module = nullptr;
  const ast::FunctionDef *def = nullptr;
  KernelSpec spec;
  std::vector<ParamBinding> bindings; // every parameter of the kernel, in order

  KernelFrontEnd() = default;
  KernelFrontEnd(const KernelFrontEnd &) = delete;
  KernelFrontEnd &operator=(const KernelFrontEnd &) = delete;

  /// Parses and checks `source` (named `fileName`), finds `spec.kernel` and
  /// binds its parameters. False with `error` set: the rendered diagnostics,
  /// or "add.tk: error: no kernel named 'k'".
  bool run(const std::string &source, const std::string &fileName, KernelSpec kernelSpec,
           std::string &error);
};

} // namespace tk
