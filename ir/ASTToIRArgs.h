// Arguments of a builtin call bound to its signature, shared by the call
// dispatch (ASTToIRCalls.cpp) and the builtin families (ASTToIRBuiltins.h).
// Private to ir/.
#pragma once

#include "ir/ASTToIRLowerer.h"

#include <optional>
#include <string_view>
#include <vector>

namespace tk::astir {

// Arguments bound to a signature's parameters; unpassed ones are absent.
struct Args {
  const Signature *sig = nullptr;
  std::vector<std::optional<Val>> vals;
  std::vector<SourceLoc> locs;
  std::vector<Val> rest; // a variadic parameter's values
  SourceLoc callLoc;

  int index(std::string_view name) const {
    for (size_t i = 0; i < sig->params.size(); ++i)
      if (sig->params[i].name == name)
        return int(i);
    return -1;
  }
  bool has(std::string_view name) const {
    int i = index(name);
    return i >= 0 && vals[i] && vals[i]->kind != Val::Kind::None;
  }
  Val get(std::string_view name) const {
    int i = index(name);
    return i >= 0 && vals[i] ? *vals[i] : Val::none();
  }
  SourceLoc loc(std::string_view name) const {
    int i = index(name);
    return i >= 0 && locs[i].isValid() ? locs[i] : callLoc;
  }
};

/// Binds `call`'s arguments (after `self`, for methods) to `sig`; reports and
/// returns false when they do not fit.
bool bindArgs(Lowerer &L, const Signature &sig, const ast::Call *call, const Val *self, Args &out);

/// Lowers one tk.* or Python builtin whose arguments are bound.
Val lowerBuiltin(Lowerer &L, const BuiltinInfo &info, Args &args, SourceLoc loc);

} // namespace tk::astir
