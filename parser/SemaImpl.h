// SemaImpl.h: the checker's class, shared by its two halves (private to parser/).
//
// Sema.cpp holds the module-, function- and statement-level checks (names,
// decorators, parameters, recursion, definite assignment); SemaExpr.cpp the
// expression checks (name resolution, builtin and helper calls, compile-time
// expressions).
#pragma once

#include "parser/Sema.h"

#include "lang/Builtins.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace tk::sema_impl {

using namespace ast;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance, on lower-cased names so `block` finds `BLOCK`.
inline size_t editDistance(std::string_view a, std::string_view b) {
  std::string x = lower(a), y = lower(b);
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[y.size()];
}

// "; did you mean 'offs'?" for the closest candidate within a third of the
// name's length, or "". Ties go to the first candidate in the (sorted) list,
// so the suggestion is deterministic.
/// The short names a namespace builtin holds (null: the tk module's own), for
/// "did you mean": SemaExpr.cpp.
std::vector<std::string> namespaceNames(const BuiltinInfo *ns);

inline std::string didYouMean(std::string_view name, const std::vector<std::string> &candidates) {
  if (name.size() > 64)
    return "";
  size_t limit = std::max<size_t>(1, (name.size() + 2) / 3);
  const std::string *best = nullptr;
  size_t bestDist = limit + 1;
  for (const std::string &c : candidates) {
    if (c == name || c.size() > name.size() + limit || c.size() + limit < name.size())
      continue;
    size_t d = editDistance(name, c);
    if (d < bestDist) {
      best = &c;
      bestDist = d;
    }
  }
  return best ? fmt::format("; did you mean '{}'?", *best) : "";
}

inline void sortedUnique(std::vector<std::string> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// "tk.load", "x.dtype", ... for messages; "<expression>" for anything else.
inline std::string spell(const Expr *e) {
  if (auto *n = dyn_cast<Name>(e))
    return n->id;
  if (auto *a = dyn_cast<Attribute>(e))
    return spell(a->value) + "." + a->attr;
  if (auto *c = dyn_cast<Call>(e))
    return spell(c->callee) + "(...)";
  if (isa<List>(e))
    return "[...]";
  if (isa<Tuple>(e))
    return "(...)";
  return "<expression>";
}

inline std::string countedArgs(unsigned n) {
  return fmt::format("{} positional argument{}", n, n == 1 ? "" : "s");
}

inline bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Validates a Triton-style type string: [*]DTYPE[:N], DTYPE an IR dtype name
// ("i32", "fp16", ...; "bool" and "u1" for i1), N a power of two stating divisibility. Returns the
// problem, or "" when the string is valid.
inline std::string typeStringProblem(std::string_view text) {
  std::string_view s = text;
  unsigned stars = 0;
  while (!s.empty() && s.front() == '*') {
    ++stars;
    s.remove_prefix(1);
  }
  if (stars > 1)
    return "pointers to pointers are not supported";
  std::string_view base = s, divisibility;
  bool hasColon = false;
  if (size_t colon = s.find(':'); colon != std::string_view::npos) {
    base = s.substr(0, colon);
    divisibility = s.substr(colon + 1);
    hasColon = true;
  }
  if (base.empty())
    return "expected a dtype such as \"fp32\" or \"i32\"";
  if (!parseSignatureDTypeName(base)) {
    std::string hint;
    if (auto t = parseDTypePythonName(base))
      hint = fmt::format("; did you mean '{}'?", dtypeName(*t));
    else if (base.size() > 1 && base[0] == 'f' && std::isdigit(static_cast<unsigned char>(base[1])))
      hint = fmt::format("; did you mean 'fp{}'?", base.substr(1)); // f32 -> fp32
    else {
      std::vector<std::string> names;
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND) names.push_back(IRNAME);
#include "lang/DTypes.def"
      hint = didYouMean(base, names);
    }
    return fmt::format("unknown dtype '{}'{}", base, hint);
  }
  if (hasColon) {
    bool digits = !divisibility.empty() && divisibility.size() <= 9 &&
                  std::all_of(divisibility.begin(), divisibility.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || !isPowerOfTwo(std::stoull(std::string(divisibility))))
      return fmt::format("the divisibility after ':' must be a power of two such as 16, not '{}'",
                         divisibility);
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Definite assignment
//===----------------------------------------------------------------------===//

// What the checker knows about one local variable at a program point.
struct VarState {
  bool definite = true;
  SourceLoc assignedAt; // the assignment that (maybe) defined it
  std::string reason;   // when !definite: why, e.g. "it is assigned only in the 'if' branch"
};

// The variables assigned on the paths reaching a program point. A point after
// `return`, `break` or `continue` is unreachable and constrains nothing.
struct FlowState {
  bool reachable = true;
  std::map<std::string, VarState> vars;
};

//===----------------------------------------------------------------------===//
// The checker
//===----------------------------------------------------------------------===//

enum class GlobalKind { Constant, Function, ModuleAlias, ImportedBuiltin, External, UserModule };

struct GlobalSymbol {
  GlobalKind kind;
  SourceLoc loc;             // of the definition; invalid for externals
  FunctionDef *fn = nullptr; // kind Function
  BuiltinId builtin{};       // kind ImportedBuiltin
  // kind UserModule: attribute -> @tk.jit function name (CheckOptions).
  const std::map<std::string, std::string> *members = nullptr;
};

struct FunctionInfo {
  bool isJit = false;
  Signature signature;
  // Functions this one calls or names, first mention first.
  std::vector<std::pair<FunctionDef *, SourceLoc>> callees;
};

// Per-function state while its body is checked.
struct Scope {
  FunctionDef *fn = nullptr;
  std::map<std::string, const Param *> params;
  std::set<std::string> constexprParams;
  std::map<std::string, SourceLoc> locals;          // every name assigned in the body
  std::map<std::string, SourceLoc> constexprLocals; // `X: tk.constexpr = ...`
  FlowState flow;
  unsigned loopDepth = 0;
};

class Checker {
public:
  Checker(Module &m, const SourceManager &sm, DiagnosticEngine &diag, const CheckOptions &opts)
      : module_(m), sm_(sm), diag_(diag), opts_(opts) {}

  void run();

private:
  // Module level.
  void declareFunctions();
  void checkModuleStmt(Stmt *s);
  void checkImport(Import *imp);
  void checkImportFrom(ImportFrom *imp);
  void declareConstant(Expr *target, Expr *annotation, Expr *value, SourceLoc loc);
  bool declareGlobal(const std::string &name, GlobalSymbol sym);
  void checkDecorators(FunctionDef *fn);
  void checkParams(FunctionDef *fn);
  void checkFunction(FunctionDef *fn);
  void checkRecursion();

  // Statements inside a function.
  using NameLocs = std::map<std::string, SourceLoc>;
  void collectLocals(const Block &block, NameLocs &out);
  void collectTargets(Expr *target, SourceLoc loc, NameLocs &out);
  void checkBlock(const Block &block);
  void checkStmt(Stmt *s);
  void checkIf(If *s);
  void checkFor(For *s);
  void checkWhile(While *s);
  void checkLoopBody(Expr *target, const Block &body, SourceLoc loopLoc, const char *loopName,
                     bool unrolled);
  void assignTarget(Expr *target, bool isConstexpr = false);
  void assignName(Name *n, bool isConstexpr);
  using Reason = std::function<std::string(const VarState &)>;
  FlowState mergeBranches(const FlowState &a, const Reason &onlyInA, const FlowState &b,
                          const Reason &onlyInB, bool compileTime);

  // Expressions.
  void checkExpr(Expr *e);
  void resolveName(Name *n);
  const BuiltinInfo *checkAttribute(Attribute *a);
  void checkUserModuleMember(const Name *base, Attribute *a);
  void checkCall(Call *c, bool asIterable = false);
  void checkBuiltinCall(const BuiltinInfo &info, Call *c, bool asIterable);
  void checkArguments(const std::string &callee, const Signature &sig, Call *c);
  void checkCompare(Compare *c);
  bool isCompileTime(const Expr *e) const;
  bool isConstexprAnnotation(Expr *annotation);
  bool isOpaque(const Expr *e) const;

  void reportUndefined(Name *n);
  std::vector<std::string> visibleNames() const;

  Module &module_;
  const SourceManager &sm_;
  DiagnosticEngine &diag_;
  const CheckOptions &opts_;

  std::map<std::string, GlobalSymbol> globals_;
  std::map<FunctionDef *, FunctionInfo> functions_;
  Scope *scope_ = nullptr; // null at module level
  FunctionInfo *current_ = nullptr;
  bool inDecorator_ = false;
};

} // namespace tk::sema_impl
