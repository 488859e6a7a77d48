// KernelSummary: the text of `tkc --emit=summary`, one block per function of
// a checked module: what it is, its signature as written, and how far the
// compiler took it. For tutorials/01-vector-add.tk:
//
//   kernel add_kernel (line 12)
//     params:     x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tk.constexpr
//     decorators: @tk.jit
//     statements: 7
//     front end:  ok
//
// A function that another function of the same file calls or passes on (a
// tk.reduce combiner) is a `helper` (with "called by ..."); the others are
// kernels, by the rule the compiler uses for entry points (kernelEntryPoints).
// Statements are counted through nested blocks. The stage lines come from the
// caller, so each later stage (IR, PTX, ...) adds its own line.
#pragma once

#include "lang/AST.h"

#include <string>
#include <utility>
#include <vector>

namespace tk::tkc {

/// "front end" -> "ok", and later stages after it, in pipeline order.
using StageResults = std::vector<std::pair<std::string, std::string>>;

/// Summaries of `functions` (all of them belonging to `module`).
std::string summarizeFunctions(const ast::Module &module,
                               const std::vector<const ast::FunctionDef *> &functions,
                               const StageResults &stages);

/// Source-like text of an annotation, decorator or default value:
/// `tk.constexpr`, `"*fp32:16"`, `tk.jit(do_not_specialize=["n"])`.
std::string expressionText(const ast::Expr *e);

} // namespace tk::tkc
