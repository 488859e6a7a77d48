// ASTPrinter: the text form of an AST, for `tkc --emit=ast` and for tests.
//
// One node per line, `Kind details @line:col`, children indented two spaces
// under their parent. Lists (decorators, params, args, keywords, body, orelse,
// ...) and optional fields get a label line so the reader knows which child is
// which. For
//
//   @tk.jit
//   def add(x, BLOCK: tk.constexpr):
//       y = x + 1
//
// the output is
//
//   Module
//     FunctionDef add @2:1
//       decorators:
//         Attribute .jit @1:2
//           Name tk @1:2
//       params:
//         Param x @2:9
//         Param BLOCK @2:12
//           annotation:
//             Attribute .constexpr @2:19
//               Name tk @2:19
//       body:
//         Assign @3:5
//           targets:
//             Name y @3:5
//           value:
//             Binary + @3:9
//               Name x @3:9
//               IntLit 1 @3:13
//
// The output is deterministic and stable, so FileCheck tests can match it
// line by line (`CHECK: Binary +`). Lines are the ones the user sees
// (SourceManager::displayLine), as in diagnostics. Names resolved by the checks show their binding
// (`Name x @3:9 param`).
#pragma once

#include "lang/AST.h"
#include "lang/SourceManager.h"

#include <string>

namespace tk {

std::string printAST(const ast::Module &m, const SourceManager &sm);

} // namespace tk
