// IRPrinter: the text form of the block IR (docs/ir.md has the grammar).
//
//   func @scale(%arg0: ptr<fp32> {divisibility = 16}, %arg1: fp32) {
//     %0 = program_id {axis = 0} : i32
//     %1 = load %arg0 : fp32
//     %2 = mul %1, %arg1 : fp32
//     store %arg0, %2
//     return
//   }
//
// Values are numbered %0, %1, ... per function in text order (function
// arguments are %arg0, %arg1, ...), so the same IR always prints the same
// text, and IRParser reads it back to IR that prints identically. With
// `locations` each op and function ends in `loc("file.tk":line:col)`.
#pragma once

#include "ir/Module.h"

#include <string>

namespace tk {

struct PrintOptions {
  /// Print `loc(...)` suffixes; needs the SourceManager the locations point
  /// into (printModule takes the module context's when this is null).
  bool locations = false;
  const SourceManager *sourceManager = nullptr;
};

std::string printModule(Module &module, const PrintOptions &options = {});
std::string printFunction(Function &fn, const PrintOptions &options = {});
/// One op (with its regions) numbered on its own: values defined outside it
/// print as %?N in order of appearance. For diagnostics and debugging.
std::string printOp(Operation *op, const PrintOptions &options = {});

} // namespace tk
