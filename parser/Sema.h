// Sema: the semantic checks of the front end, run on a parsed module before
// anything is lowered.
//
// It resolves every name and reports, each with its location, the mistakes a
// kernel author makes that are not syntax errors:
//
//   import tk as tl
//   BLOCK: tl.constexpr = 128
//
//   @tl.jit
//   def k(x_ptr, n):
//       offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
//       if n > 0:
//           y = tl.load(x_ptr + offz, msk=offs < n)   # undefined name 'offz'; did you
//                                                     #   mean 'offs'?  unexpected keyword
//                                                     #   argument 'msk'; did you mean 'mask'?
//       tl.store(x_ptr + offs, y)                     # 'y' may be undefined here: it is
//                                                     #   assigned only in the 'if' branch
//       BLOCK = 64                                    # cannot assign to constexpr 'BLOCK'
//
// What it annotates: ast::Name::binding (Param, Local, Global, Function,
// Module, Builtin) and ::builtin, and ast::Attribute::builtin for `tk.NAME`
// (indices into lang/Builtins.h). Lowering relies on these and on the module
// having passed the checks; it re-checks nothing here.
//
// The rules (scoping, what counts as a compile-time condition, what is not
// supported) are the ones docs/language.md states; the two are kept in sync.
#pragma once

#include "lang/AST.h"
#include "lang/Diagnostics.h"
#include "lang/SourceManager.h"

#include <map>
#include <string>
#include <vector>

namespace tk {

struct CheckOptions {
  /// Names the embedding environment defines (the Python side passes the
  /// globals a @tk.jit function reads); they resolve as NameBinding::Global
  /// and are treated as compile-time constants, as Triton treats globals.
  std::vector<std::string> externalGlobals;
  /// Globals the environment binds to the tk module itself ("tk", or "tl"
  /// after `import tk as tl` in the user's Python file); they resolve as
  /// NameBinding::Module, so `tl.load` is checked like in a .tk file.
  std::vector<std::string> externalModuleAliases;
  /// Globals the environment binds to Python modules other than tk's (an
  /// Inductor-style `triton_helpers`, a user's helper module): for each, the
  /// attributes the kernel reads and the @tk.jit function of the sources
  /// each one is (`maximum` -> "maximum"). They resolve as
  /// NameBinding::UserModule; `m.f(...)` calls the function.
  std::map<std::string, std::map<std::string, std::string>> externalUserModules;
};

/// Resolves names and checks the module; returns false if it reported errors.
bool checkModule(ast::Module &module, const SourceManager &sm, DiagnosticEngine &diag,
                 const CheckOptions &options = {});

} // namespace tk
