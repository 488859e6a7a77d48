#include "parser/Sema.h"

#include "lang/Builtins.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace tk {
namespace {

using namespace ast;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance, on lower-cased names so `block` finds `BLOCK`.
size_t editDistance(std::string_view a, std::string_view b) {
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
std::string didYouMean(std::string_view name, const std::vector<std::string> &candidates) {
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

void sortedUnique(std::vector<std::string> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// "tk.load", "x.dtype", ... for messages; "<expression>" for anything else.
std::string spell(const Expr *e) {
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

std::string countedArgs(unsigned n) {
  return fmt::format("{} positional argument{}", n, n == 1 ? "" : "s");
}

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Validates a Triton-style type string: [*]DTYPE[:N], DTYPE an IR dtype name
// ("i32", "fp16", ...), N a power of two stating divisibility. Returns the
// problem, or "" when the string is valid.
std::string typeStringProblem(std::string_view text) {
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
  if (!parseDTypeName(base)) {
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

enum class GlobalKind { Constant, Function, ModuleAlias, ImportedBuiltin, External };

struct GlobalSymbol {
  GlobalKind kind;
  SourceLoc loc;             // of the definition; invalid for externals
  FunctionDef *fn = nullptr; // kind Function
  BuiltinId builtin{};       // kind ImportedBuiltin
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

//===----------------------------------------------------------------------===//
// Module level
//===----------------------------------------------------------------------===//

void Checker::run() {
  for (const std::string &name : opts_.externalGlobals)
    globals_[name] = {GlobalKind::External, {}};
  for (const std::string &name : opts_.externalModuleAliases)
    globals_[name] = {GlobalKind::ModuleAlias, {}};

  // Functions are visible everywhere in the module (Python looks them up when
  // a kernel runs, after the whole file has executed); imports and constants
  // only after the statement that defines them.
  declareFunctions();
  for (Stmt *s : module_.body)
    checkModuleStmt(s);
  for (FunctionDef *fn : module_.functions())
    checkDecorators(fn);
  for (FunctionDef *fn : module_.functions())
    checkFunction(fn);
  checkRecursion();
}

bool Checker::declareGlobal(const std::string &name, GlobalSymbol sym) {
  auto it = globals_.find(name);
  if (it != globals_.end() && it->second.kind == sym.kind &&
      (sym.kind == GlobalKind::ModuleAlias ||
       (sym.kind == GlobalKind::ImportedBuiltin && it->second.builtin == sym.builtin)))
    return true; // `import tk` twice is harmless
  if (it != globals_.end() && it->second.loc.isValid()) {
    const char *what = sym.kind == GlobalKind::Function ? "function" : "name";
    diag_.error(sym.loc, fmt::format("redefinition of {} '{}'", what, name))
        .notes.push_back({it->second.loc, "previous definition is here"});
    return false;
  }
  globals_[name] = sym;
  return true;
}

void Checker::declareFunctions() {
  for (FunctionDef *fn : module_.functions()) {
    FunctionInfo &info = functions_[fn];
    for (const Param &p : fn->params)
      info.signature.params.push_back({p.name, p.defaultValue ? "..." : "", !!p.defaultValue});
    declareGlobal(fn->name, {GlobalKind::Function, fn->nameLoc, fn});
  }
}

void Checker::checkModuleStmt(Stmt *s) {
  const char *fileHolds = "a .tk file holds imports, constants and @tk.jit functions";
  switch (s->kind) {
  case NodeKind::FunctionDef:
  case NodeKind::Pass:
    return;
  case NodeKind::Import:
    return checkImport(cast<Import>(s));
  case NodeKind::ImportFrom:
    return checkImportFrom(cast<ImportFrom>(s));
  case NodeKind::Assign: {
    auto *a = cast<Assign>(s);
    if (a->targets.size() != 1) {
      diag_.error(s->loc, "not supported in tk kernels: chained assignment of module-level "
                          "constants; give each constant its own line");
      return;
    }
    return declareConstant(a->targets[0], nullptr, a->value, s->loc);
  }
  case NodeKind::AnnAssign: {
    auto *a = cast<AnnAssign>(s);
    return declareConstant(a->target, a->annotation, a->value, s->loc);
  }
  case NodeKind::ExprStmt:
    if (isa<StringLit>(cast<ExprStmt>(s)->value))
      return; // a docstring
    diag_.error(s->loc, fmt::format("not supported in tk kernels: a module-level expression; {}",
                                    fileHolds));
    return;
  case NodeKind::Return:
    diag_.error(s->loc, "'return' outside function");
    return;
  case NodeKind::Break:
    diag_.error(s->loc, "'break' outside loop");
    return;
  case NodeKind::Continue:
    diag_.error(s->loc, "'continue' outside loop");
    return;
  default:
    diag_.error(s->loc, fmt::format("not supported in tk kernels: '{}' at module level; {}",
                                    lower(nodeKindName(s->kind)), fileHolds));
    return;
  }
}

void Checker::checkImport(Import *imp) {
  for (const ImportAlias &a : imp->names) {
    std::string bound = a.asname.empty() ? a.name : a.asname;
    if (a.name == "tk") {
      declareGlobal(bound, {GlobalKind::ModuleAlias, a.loc});
    } else if (a.name == "triton" || a.name.rfind("triton.", 0) == 0) {
      diag_.error(a.loc, fmt::format("tk kernels import tk, not triton: write 'import tk as {}'",
                                     a.asname.empty() ? "tl" : a.asname));
    } else if (a.name.rfind("tk.", 0) == 0) {
      diag_.error(a.loc, fmt::format("module 'tk' has no submodule '{}': the language is tk "
                                     "itself; write 'import tk as tl'",
                                     a.name.substr(3)));
    } else {
      diag_.error(a.loc, fmt::format("unknown module '{}': tk kernels can import only tk", a.name));
    }
  }
}

void Checker::checkImportFrom(ImportFrom *imp) {
  if (imp->module == "__future__")
    return; // `from __future__ import annotations` changes nothing here
  if (imp->module == "triton" || imp->module.rfind("triton.", 0) == 0) {
    diag_.error(imp->loc, "tk kernels import tk, not triton: write 'import tk as tl' or "
                          "'from tk import ...'");
    return;
  }
  if (imp->module != "tk") {
    diag_.error(imp->loc,
                fmt::format("unknown module '{}': tk kernels can import only tk", imp->module));
    return;
  }
  for (const ImportAlias &a : imp->names) {
    if (a.name == "*") {
      diag_.error(a.loc, "not supported in tk kernels: 'from tk import *'; import the names "
                         "you use, or write 'import tk'");
      continue;
    }
    std::optional<BuiltinId> id = lookupTkBuiltin(a.name);
    if (!id) {
      std::vector<std::string> names;
      for (const BuiltinInfo &b : allBuiltins())
        if (b.scope == BuiltinScope::Tk && b.kind != BuiltinKind::Unsupported)
          names.push_back(std::string(b.name));
      diag_.error(a.loc, fmt::format("module 'tk' has no attribute '{}'{}", a.name,
                                     didYouMean(a.name, names)));
      continue;
    }
    const BuiltinInfo &info = builtinInfo(*id);
    if (info.kind == BuiltinKind::Unsupported) {
      diag_.error(a.loc, fmt::format("tk.{} is not supported yet{}{}", a.name,
                                     info.summary.empty() ? "" : ": ", info.summary));
      continue;
    }
    GlobalSymbol sym{GlobalKind::ImportedBuiltin, a.loc};
    sym.builtin = *id;
    declareGlobal(a.asname.empty() ? a.name : a.asname, sym);
  }
}

void Checker::declareConstant(Expr *target, Expr *annotation, Expr *value, SourceLoc loc) {
  auto *name = dyn_cast<Name>(target);
  if (!name) {
    diag_.error(target->loc, "not supported in tk kernels: a module-level assignment to "
                             "anything but a single name; give each constant its own line");
    return;
  }
  if (annotation)
    checkExpr(annotation);
  if (!value) {
    diag_.error(loc, fmt::format("module-level constant '{}' needs a value", name->id));
    return;
  }
  unsigned before = diag_.numErrors();
  checkExpr(value);
  if (diag_.numErrors() == before && !isCompileTime(value))
    diag_.error(value->loc,
                fmt::format("module-level constant '{}' must be a compile-time value (literals, "
                            "other constants, dtypes, tk.constexpr(...))",
                            name->id));
  name->binding = NameBinding::Global;
  declareGlobal(name->id, {GlobalKind::Constant, name->loc});
}

void Checker::checkDecorators(FunctionDef *fn) {
  FunctionInfo &info = functions_[fn];
  inDecorator_ = true;
  int jitIndex = -1, lastTuner = -1;
  bool failed = false;
  for (size_t i = 0; i < fn->decorators.size(); ++i) {
    Expr *d = fn->decorators[i];
    auto *call = dyn_cast<Call>(d);
    Expr *root = call ? call->callee : d;
    // The name the decorator starts with: `tk` in @tk.jit, `functools` in
    // @functools.cache. One tk does not know is an unsupported decorator
    // rather than an undefined name.
    const Expr *base = root;
    while (auto *a = dyn_cast<Attribute>(base))
      base = a->value;
    auto *baseName = dyn_cast<Name>(base);
    if (baseName && baseName->id == "triton") {
      diag_.error(d->loc,
                  fmt::format("tk kernels are decorated with @tk.jit, not @{}", spell(root)));
      failed = true;
      continue;
    }
    bool looksLikeTk = baseName && (baseName->id == "tk" || baseName->id == "tl");
    if (!baseName ||
        (!looksLikeTk && !globals_.count(baseName->id) && !lookupPythonBuiltin(baseName->id))) {
      diag_.error(d->loc, fmt::format("not supported in tk kernels: decorator '{}'; kernels and "
                                      "helpers are decorated with @tk.jit",
                                      spell(root)));
      failed = true;
      continue;
    }
    unsigned before = diag_.numErrors();
    const BuiltinInfo *builtin = nullptr;
    if (auto *a = dyn_cast<Attribute>(root)) {
      builtin = checkAttribute(a);
    } else if (auto *n = dyn_cast<Name>(root)) {
      resolveName(n);
      if (n->binding == NameBinding::Builtin)
        builtin = &builtinInfo(n->builtin);
    }
    if (diag_.numErrors() != before) {
      failed = true;
      continue;
    }
    if (isOpaque(root)) {
      // An external global: the embedding environment applied this decorator
      // itself; trust it, and take the innermost one to be the jit.
      if (i + 1 == fn->decorators.size())
        jitIndex = static_cast<int>(i);
      if (call)
        for (Expr *arg : call->args)
          checkExpr(arg);
      continue;
    }
    if (!builtin || builtin->kind != BuiltinKind::Decorator) {
      diag_.error(d->loc, fmt::format("not supported in tk kernels: decorator '{}'; kernels and "
                                      "helpers are decorated with @tk.jit",
                                      spell(root)));
      failed = true;
      continue;
    }
    if (call)
      checkArguments(qualifiedName(*builtin), builtin->signature, call);
    else if (builtin->signature.minPositional() > 0)
      diag_.error(d->loc, fmt::format("@{} needs arguments: @{}", qualifiedName(*builtin),
                                      formatSignature(*builtin)));
    if (builtin->id == BuiltinId::Jit)
      jitIndex = static_cast<int>(i);
    else
      lastTuner = static_cast<int>(i);
  }
  inDecorator_ = false;
  // A function whose decorators failed to check is treated as a kernel, so
  // that its calls are checked and the mistake is reported only once.
  info.isJit = jitIndex >= 0 || failed;
  if (jitIndex < 0 && !failed)
    diag_.error(fn->nameLoc,
                fmt::format("function '{}' is not decorated with @tk.jit; every function in a "
                            "tk module is a kernel or a helper and needs @tk.jit",
                            fn->name));
  else if (jitIndex >= 0 && lastTuner > jitIndex)
    diag_.error(fn->decorators[lastTuner]->loc,
                "@tk.jit must be the innermost decorator, directly above 'def'");
}

bool Checker::isConstexprAnnotation(Expr *annotation) {
  if (auto *a = dyn_cast<Attribute>(annotation))
    return a->builtin >= 0 && builtinInfo(a->builtin).id == BuiltinId::Constexpr;
  if (auto *n = dyn_cast<Name>(annotation))
    return n->binding == NameBinding::Builtin && builtinInfo(n->builtin).id == BuiltinId::Constexpr;
  return false;
}

void Checker::checkParams(FunctionDef *fn) {
  std::map<std::string, const Param *> seen;
  const Param *firstDefault = nullptr;
  for (const Param &p : fn->params) {
    if (auto [it, inserted] = seen.emplace(p.name, &p); !inserted)
      diag_.error(p.loc, fmt::format("duplicate parameter '{}' in function '{}'", p.name, fn->name))
          .notes.push_back({it->second->loc, "first declared here"});
    if (p.defaultValue) {
      firstDefault = firstDefault ? firstDefault : &p;
      unsigned before = diag_.numErrors();
      checkExpr(p.defaultValue);
      if (diag_.numErrors() == before && !isCompileTime(p.defaultValue))
        diag_.error(
            p.defaultValue->loc,
            fmt::format("the default of parameter '{}' must be a compile-time value", p.name));
    } else if (firstDefault) {
      diag_.error(p.loc, fmt::format("parameter '{}' without a default follows parameter '{}' "
                                     "with a default",
                                     p.name, firstDefault->name));
    }
    if (!p.annotation)
      continue;
    if (auto *s = dyn_cast<StringLit>(p.annotation)) {
      if (std::string problem = typeStringProblem(s->value); !problem.empty())
        diag_.error(s->loc, fmt::format("invalid type string \"{}\" for parameter '{}': {}",
                                        s->value, p.name, problem));
      continue;
    }
    unsigned before = diag_.numErrors();
    checkExpr(p.annotation);
    if (diag_.numErrors() != before)
      continue;
    if (isConstexprAnnotation(p.annotation)) {
      scope_->constexprParams.insert(p.name);
      continue;
    }
    // Other annotations (tk.tensor, a dtype, int) document and do not
    // specialise; but a call or a literal is surely a mistake.
    if (!isa<Name>(p.annotation) && !isa<Attribute>(p.annotation))
      diag_.error(p.annotation->loc,
                  fmt::format("invalid annotation for parameter '{}': use tk.constexpr or a type "
                              "string such as \"*fp32\" or \"i32\"",
                              p.name));
  }
}

void Checker::checkFunction(FunctionDef *fn) {
  Scope scope;
  scope.fn = fn;
  scope_ = &scope;
  current_ = &functions_[fn];
  // Annotations and defaults are checked while the scope is still empty: they
  // are evaluated where the function is defined, in the module scope.
  checkParams(fn);
  for (const Param &p : fn->params) {
    scope.params.emplace(p.name, &p);
    scope.flow.vars[p.name] = VarState{true, p.loc, ""};
  }
  collectLocals(fn->body, scope.locals);
  checkBlock(fn->body);
  scope_ = nullptr;
  current_ = nullptr;
}

void Checker::checkRecursion() {
  // Depth-first search over the call graph, iterative so that a long chain of
  // helpers cannot overflow the stack. Each back edge closes one cycle.
  std::map<FunctionDef *, int> state; // 0 unvisited, 1 on the stack, 2 done
  std::set<std::pair<FunctionDef *, FunctionDef *>> reported;
  for (FunctionDef *root : module_.functions()) {
    if (state[root] != 0)
      continue;
    std::vector<std::pair<FunctionDef *, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto &[fn, next] = stack.back();
      const auto &callees = functions_[fn].callees;
      if (next == callees.size()) {
        state[fn] = 2;
        stack.pop_back();
        continue;
      }
      auto [callee, loc] = callees[next++];
      if (state[callee] == 0) {
        state[callee] = 1;
        stack.push_back({callee, 0});
      } else if (state[callee] == 1 && reported.insert({fn, callee}).second) {
        std::string path;
        bool on = false;
        for (auto &frame : stack) {
          on = on || frame.first == callee;
          if (on)
            path += frame.first->name + " -> ";
        }
        diag_.error(loc, fmt::format("recursion is not supported: {}{}", path, callee->name));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

// Python decides at compile time which names of a function are local: every
// name it assigns anywhere. A module constant is never local (assigning it is
// an error, reported where it happens), so its uses keep resolving to it.
void Checker::collectTargets(Expr *target, SourceLoc loc, NameLocs &out) {
  if (auto *n = dyn_cast<Name>(target)) {
    auto g = globals_.find(n->id);
    if (g != globals_.end() && g->second.kind == GlobalKind::Constant)
      return;
    out.emplace(n->id, loc);
  } else if (auto *t = dyn_cast<Tuple>(target)) {
    for (Expr *e : t->elts)
      collectTargets(e, loc, out);
  } else if (auto *l = dyn_cast<List>(target)) {
    for (Expr *e : l->elts)
      collectTargets(e, loc, out);
  }
}

void Checker::collectLocals(const Block &block, NameLocs &out) {
  for (Stmt *s : block) {
    if (auto *a = dyn_cast<Assign>(s))
      for (Expr *t : a->targets)
        collectTargets(t, s->loc, out);
    else if (auto *a = dyn_cast<AugAssign>(s))
      collectTargets(a->target, s->loc, out);
    else if (auto *a = dyn_cast<AnnAssign>(s))
      collectTargets(a->target, s->loc, out);
    else if (auto *f = dyn_cast<For>(s)) {
      collectTargets(f->target, s->loc, out);
      collectLocals(f->body, out);
      collectLocals(f->orelse, out);
    } else if (auto *w = dyn_cast<While>(s)) {
      collectLocals(w->body, out);
      collectLocals(w->orelse, out);
    } else if (auto *i = dyn_cast<If>(s)) {
      collectLocals(i->then, out);
      collectLocals(i->orelse, out);
    }
  }
}

void Checker::checkBlock(const Block &block) {
  for (Stmt *s : block)
    checkStmt(s);
}

void Checker::checkStmt(Stmt *s) {
  switch (s->kind) {
  case NodeKind::ExprStmt:
    checkExpr(cast<ExprStmt>(s)->value);
    return;
  case NodeKind::Assign: {
    auto *a = cast<Assign>(s);
    checkExpr(a->value);
    for (Expr *t : a->targets)
      assignTarget(t);
    return;
  }
  case NodeKind::AugAssign: {
    auto *a = cast<AugAssign>(s);
    checkExpr(a->value);
    if (isa<Name>(a->target))
      checkExpr(a->target); // `x += 1` reads x first
    assignTarget(a->target);
    return;
  }
  case NodeKind::AnnAssign: {
    auto *a = cast<AnnAssign>(s);
    checkExpr(a->annotation);
    if (!a->value) {
      diag_.error(s->loc, "not supported in tk kernels: a declaration without a value; "
                          "assign the variable");
      return;
    }
    checkExpr(a->value);
    assignTarget(a->target, isConstexprAnnotation(a->annotation));
    return;
  }
  case NodeKind::If:
    return checkIf(cast<If>(s));
  case NodeKind::For:
    return checkFor(cast<For>(s));
  case NodeKind::While:
    return checkWhile(cast<While>(s));
  case NodeKind::Break:
  case NodeKind::Continue:
    if (scope_->loopDepth == 0)
      diag_.error(s->loc, fmt::format("'{}' outside loop",
                                      s->kind == NodeKind::Break ? "break" : "continue"));
    scope_->flow.reachable = false;
    return;
  case NodeKind::Return:
    if (Expr *v = cast<Return>(s)->value)
      checkExpr(v);
    scope_->flow.reachable = false;
    return;
  case NodeKind::Pass:
    return;
  case NodeKind::Assert: {
    auto *a = cast<Assert>(s);
    checkExpr(a->test);
    if (a->msg)
      checkExpr(a->msg);
    return;
  }
  case NodeKind::FunctionDef:
    diag_.error(s->loc, "not supported in tk kernels: a nested function definition; define "
                        "helpers at module level with @tk.jit");
    return;
  case NodeKind::Import:
  case NodeKind::ImportFrom:
    diag_.error(s->loc, "not supported in tk kernels: an import inside a function; import at "
                        "the top of the file");
    return;
  default:
    assert(false && "expression kind in a statement list");
    return;
  }
}

void Checker::assignName(Name *n, bool isConstexpr) {
  Scope &sc = *scope_;
  auto g = globals_.find(n->id);
  auto param = sc.params.find(n->id);
  if (sc.constexprParams.count(n->id)) {
    diag_.error(n->loc, fmt::format("cannot assign to constexpr '{}'", n->id))
        .notes.push_back(
            {param->second->loc, fmt::format("'{}' is declared tk.constexpr here", n->id)});
    n->binding = NameBinding::Param;
    return;
  }
  if (param == sc.params.end() && g != globals_.end() && g->second.kind == GlobalKind::Constant) {
    diag_
        .error(n->loc, fmt::format("cannot assign to constexpr '{}': it is a module-level "
                                   "constant",
                                   n->id))
        .notes.push_back({g->second.loc, fmt::format("'{}' is defined here", n->id)});
    n->binding = NameBinding::Global;
    return;
  }
  if (auto c = sc.constexprLocals.find(n->id); c != sc.constexprLocals.end()) {
    diag_.error(n->loc, fmt::format("cannot assign to constexpr '{}'", n->id))
        .notes.push_back({c->second, fmt::format("'{}' is declared tk.constexpr here", n->id)});
    n->binding = NameBinding::Local;
    return;
  }
  if (isConstexpr)
    sc.constexprLocals.emplace(n->id, n->loc);
  n->binding = param != sc.params.end() ? NameBinding::Param : NameBinding::Local;
  if (sc.flow.reachable)
    sc.flow.vars[n->id] = VarState{true, n->loc, ""};
}

void Checker::assignTarget(Expr *target, bool isConstexpr) {
  switch (target->kind) {
  case NodeKind::Name:
    return assignName(cast<Name>(target), isConstexpr);
  case NodeKind::Tuple:
    for (Expr *e : cast<Tuple>(target)->elts)
      assignTarget(e);
    return;
  case NodeKind::List:
    for (Expr *e : cast<List>(target)->elts)
      assignTarget(e);
    return;
  case NodeKind::Subscript:
    diag_.error(target->loc, "not supported in tk kernels: assignment to a subscript; tensors "
                             "are values: write memory with tk.store(ptr + offsets, value)");
    return;
  case NodeKind::Attribute:
    diag_.error(target->loc, "not supported in tk kernels: assignment to an attribute");
    return;
  default:
    diag_.error(target->loc, "cannot assign to this expression");
    return;
  }
}

// Joins the states at the end of two branches. A name assigned on one side
// only becomes "maybe assigned", with the reason the side's `onlyIn` gives.
// `compileTime` is set for an `if` whose condition is known at compile time:
// only one branch survives specialisation, so a name assigned in either
// counts as assigned (if the surviving branch lacks it, lowering reports the
// use). docs/language.md states the rule.
FlowState Checker::mergeBranches(const FlowState &a, const Reason &onlyInA, const FlowState &b,
                                 const Reason &onlyInB, bool compileTime) {
  if (!a.reachable)
    return b;
  if (!b.reachable)
    return a;
  FlowState out;
  auto onlyIn = [&](const VarState &v, const Reason &reason) {
    if (!v.definite || compileTime)
      return v;
    return VarState{false, v.assignedAt, reason(v)};
  };
  for (const auto &[name, va] : a.vars) {
    auto it = b.vars.find(name);
    if (it == b.vars.end())
      out.vars[name] = onlyIn(va, onlyInA);
    else
      out.vars[name] = !va.definite ? va : it->second;
  }
  for (const auto &[name, vb] : b.vars)
    if (!a.vars.count(name))
      out.vars[name] = onlyIn(vb, onlyInB);
  return out;
}

void Checker::checkIf(If *s) {
  checkExpr(s->cond);
  bool compileTime = isCompileTime(s->cond);
  FlowState before = scope_->flow;
  checkBlock(s->then);
  FlowState thenState = std::move(scope_->flow);
  scope_->flow = before;
  checkBlock(s->orelse);
  // The reason names the branch that lacks the assignment, which stays true
  // through elif chains; an `if` without `else` lacks it on the implicit path.
  const char *kw = s->isElif ? "elif" : "if";
  unsigned line = sm_.displayLine(s->loc);
  Reason onlyInThen;
  if (s->orelse.empty())
    onlyInThen = [this, kw](const VarState &v) {
      return fmt::format("it is assigned only in the '{}' branch at line {}", kw,
                         sm_.displayLine(v.assignedAt));
    };
  else if (isa<If>(s->orelse[0]) && cast<If>(s->orelse[0])->isElif)
    onlyInThen = [this, elif = s->orelse[0]](const VarState &) {
      return fmt::format("it is not assigned in the 'elif' branch at line {}",
                         sm_.displayLine(elif->loc));
    };
  else
    onlyInThen = [kw, line](const VarState &) {
      return fmt::format("it is not assigned in the 'else' branch of the '{}' at line {}", kw,
                         line);
    };
  Reason onlyInElse = [kw, line](const VarState &) {
    return fmt::format("it is not assigned in the '{}' branch at line {}", kw, line);
  };
  scope_->flow = mergeBranches(thenState, onlyInThen, scope_->flow, onlyInElse, compileTime);
}

// A loop body may run zero times, so a name it assigns (the loop variable
// included) is only maybe assigned after the loop, unless the loop is
// unrolled at compile time (static_range).
void Checker::checkLoopBody(Expr *target, const Block &body, SourceLoc loopLoc,
                            const char *loopName, bool unrolled) {
  FlowState before = scope_->flow;
  if (target)
    assignTarget(target);
  ++scope_->loopDepth;
  checkBlock(body);
  --scope_->loopDepth;
  FlowState end = std::move(scope_->flow);
  scope_->flow = before;
  if (!before.reachable)
    return;
  // Everything assigned somewhere in the body, including on paths that leave
  // through `break` or `continue`.
  NameLocs assigned;
  if (target)
    collectTargets(target, loopLoc, assigned);
  collectLocals(body, assigned);
  for (const auto &[name, loc] : assigned) {
    if (before.vars.count(name))
      continue; // assigned (or maybe assigned) before the loop already
    auto inEnd = end.vars.find(name);
    SourceLoc at = inEnd != end.vars.end() ? inEnd->second.assignedAt : loc;
    if (unrolled)
      scope_->flow.vars[name] = VarState{true, at, ""};
    else
      scope_->flow.vars[name] =
          VarState{false, at,
                   fmt::format("it is assigned only inside the '{}' loop at line {}, which may "
                               "run zero times",
                               loopName, sm_.displayLine(loopLoc))};
  }
}

void Checker::checkFor(For *s) {
  if (!s->orelse.empty())
    diag_.error(s->loc, "not supported in tk kernels: 'else' on a 'for' loop");
  // Resolve the callee of the iterable first: only range(), tk.range() and
  // tk.static_range() may be iterated over.
  unsigned before = diag_.numErrors();
  const BuiltinInfo *iterator = nullptr;
  auto *call = dyn_cast<Call>(s->iter);
  if (call) {
    if (auto *n = dyn_cast<Name>(call->callee)) {
      resolveName(n);
      if (n->binding == NameBinding::Builtin)
        iterator = &builtinInfo(n->builtin);
    } else if (auto *a = dyn_cast<Attribute>(call->callee)) {
      iterator = checkAttribute(a);
    }
  } else {
    checkExpr(s->iter);
  }
  bool unrolled = false;
  if (iterator && iterator->kind == BuiltinKind::Iterator) {
    checkCall(call, /*asIterable=*/true);
    unrolled = iterator->id == BuiltinId::StaticRange;
  } else if (diag_.numErrors() == before) {
    diag_.error(s->iter->loc, fmt::format("not supported in tk kernels: iterating over '{}'; "
                                          "loop over range(), tk.range() or tk.static_range()",
                                          spell(s->iter)));
  }
  Expr *target = s->target;
  if (!isa<Name>(target)) {
    diag_.error(target->loc, "not supported in tk kernels: a loop target other than a single "
                             "name");
    target = nullptr;
  }
  checkLoopBody(target, s->body, s->loc, "for", unrolled);
}

void Checker::checkWhile(While *s) {
  if (!s->orelse.empty())
    diag_.error(s->loc, "not supported in tk kernels: 'else' on a 'while' loop");
  checkExpr(s->cond);
  checkLoopBody(nullptr, s->body, s->loc, "while", /*unrolled=*/false);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

void Checker::checkExpr(Expr *e) {
  switch (e->kind) {
  case NodeKind::Name:
    return resolveName(cast<Name>(e));
  case NodeKind::IntLit:
  case NodeKind::FloatLit:
  case NodeKind::BoolLit:
  case NodeKind::NoneLit:
  case NodeKind::StringLit:
    return;
  case NodeKind::Attribute:
    checkAttribute(cast<Attribute>(e));
    return;
  case NodeKind::Call:
    return checkCall(cast<Call>(e));
  case NodeKind::Subscript: {
    auto *s = cast<Subscript>(e);
    checkExpr(s->value);
    for (Expr *i : s->indices)
      checkExpr(i);
    return;
  }
  case NodeKind::Slice: {
    auto *s = cast<Slice>(e);
    for (Expr *part : {s->lower, s->upper, s->step})
      if (part)
        checkExpr(part);
    return;
  }
  case NodeKind::Tuple:
    for (Expr *x : cast<Tuple>(e)->elts)
      checkExpr(x);
    return;
  case NodeKind::List:
    for (Expr *x : cast<List>(e)->elts)
      checkExpr(x);
    return;
  case NodeKind::Dict: {
    auto *d = cast<Dict>(e);
    for (Expr *x : d->keys)
      checkExpr(x);
    for (Expr *x : d->values)
      checkExpr(x);
    return;
  }
  case NodeKind::Binary: {
    auto *b = cast<Binary>(e);
    checkExpr(b->lhs);
    checkExpr(b->rhs);
    return;
  }
  case NodeKind::Unary:
    return checkExpr(cast<Unary>(e)->operand);
  case NodeKind::Compare:
    return checkCompare(cast<Compare>(e));
  case NodeKind::BoolOp:
    for (Expr *x : cast<BoolOp>(e)->values)
      checkExpr(x);
    return;
  case NodeKind::IfExp: {
    auto *i = cast<IfExp>(e);
    checkExpr(i->cond);
    checkExpr(i->then);
    checkExpr(i->orelse);
    return;
  }
  default:
    assert(false && "statement kind in an expression");
    return;
  }
}

std::vector<std::string> Checker::visibleNames() const {
  std::vector<std::string> names;
  if (scope_) {
    for (const auto &[n, p] : scope_->params)
      names.push_back(n);
    for (const auto &[n, loc] : scope_->locals)
      names.push_back(n);
  }
  for (const auto &[n, g] : globals_)
    names.push_back(n);
  for (const BuiltinInfo &b : allBuiltins())
    if (b.scope == BuiltinScope::Python && b.kind != BuiltinKind::Unsupported)
      names.push_back(std::string(b.name));
  sortedUnique(names);
  return names;
}

void Checker::reportUndefined(Name *n) {
  std::string hint;
  if (n->id == "triton")
    hint = ": tk kernels use tk, not triton (write 'import tk as tl' and '@tk.jit')";
  else if (n->id == "tk" || n->id == "tl")
    hint = n->id == "tk" ? "; did you forget 'import tk'?" : "; did you forget 'import tk as tl'?";
  else
    hint = didYouMean(n->id, visibleNames());
  diag_.error(n->loc, fmt::format("undefined name '{}'{}", n->id, hint));
}

void Checker::resolveName(Name *n) {
  if (scope_) {
    Scope &sc = *scope_;
    bool isParam = sc.params.count(n->id);
    if (isParam || sc.locals.count(n->id)) {
      n->binding = isParam ? NameBinding::Param : NameBinding::Local;
      if (!sc.flow.reachable)
        return;
      auto it = sc.flow.vars.find(n->id);
      if (it == sc.flow.vars.end()) {
        SourceLoc first = sc.locals[n->id];
        diag_.error(n->loc, fmt::format("'{}' is used before it is assigned (first assigned at "
                                        "line {})",
                                        n->id, sm_.displayLine(first)));
        sc.flow.vars[n->id] = VarState{true, first, ""};
      } else if (!it->second.definite) {
        diag_.error(n->loc, fmt::format("'{}' may be undefined here: {}", n->id, it->second.reason))
            .notes.push_back({it->second.assignedAt, fmt::format("'{}' is assigned here", n->id)});
        it->second.definite = true; // report each variable once
      }
      return;
    }
  }
  if (auto g = globals_.find(n->id); g != globals_.end()) {
    switch (g->second.kind) {
    case GlobalKind::Constant:
    case GlobalKind::External:
      n->binding = NameBinding::Global;
      break;
    case GlobalKind::Function:
      n->binding = NameBinding::Function;
      if (current_)
        current_->callees.push_back({g->second.fn, n->loc});
      break;
    case GlobalKind::ModuleAlias:
      n->binding = NameBinding::Module;
      break;
    case GlobalKind::ImportedBuiltin:
      n->binding = NameBinding::Builtin;
      n->builtin = static_cast<int>(g->second.builtin);
      break;
    }
    return;
  }
  if (auto id = lookupPythonBuiltin(n->id)) {
    const BuiltinInfo &info = builtinInfo(*id);
    if (info.kind == BuiltinKind::Unsupported) {
      diag_.error(n->loc, fmt::format("not supported in tk kernels: Python builtin '{}'; {}", n->id,
                                      info.summary));
      return;
    }
    n->binding = NameBinding::Builtin;
    n->builtin = static_cast<int>(*id);
    return;
  }
  reportUndefined(n);
}

// Whether `e` is (an attribute of) a Python object tk does not model: an
// external global the environment passed, or a @tk.jit function.
bool Checker::isOpaque(const Expr *e) const {
  while (auto *a = dyn_cast<Attribute>(e))
    e = a->value;
  if (auto *c = dyn_cast<Call>(e))
    return isOpaque(c->callee);
  auto *n = dyn_cast<Name>(e);
  if (!n || n->binding != NameBinding::Global)
    return n && n->binding == NameBinding::Function;
  auto g = globals_.find(n->id);
  return g != globals_.end() && g->second.kind == GlobalKind::External;
}

const BuiltinInfo *Checker::checkAttribute(Attribute *a) {
  unsigned before = diag_.numErrors();
  checkExpr(a->value);
  if (diag_.numErrors() != before)
    return nullptr;
  auto *base = dyn_cast<Name>(a->value);
  if (base && base->binding == NameBinding::Module) {
    std::optional<BuiltinId> id = lookupTkBuiltin(a->attr);
    if (!id) {
      std::vector<std::string> names;
      for (const BuiltinInfo &b : allBuiltins())
        if (b.scope == BuiltinScope::Tk && b.kind != BuiltinKind::Unsupported)
          names.push_back(std::string(b.name));
      diag_.error(a->attrLoc, fmt::format("module 'tk' has no attribute '{}'{}", a->attr,
                                          didYouMean(a->attr, names)));
      return nullptr;
    }
    const BuiltinInfo &info = builtinInfo(*id);
    if (info.kind == BuiltinKind::Unsupported) {
      diag_.error(a->attrLoc, fmt::format("tk.{} is not supported yet{}{}", a->attr,
                                          info.summary.empty() ? "" : ": ", info.summary));
      return nullptr;
    }
    a->builtin = static_cast<int>(*id);
    return &info;
  }
  if (isOpaque(a->value))
    return nullptr; // a Python object the environment passed; not ours to check
  if (!lookupTensorMember(a->attr)) {
    std::vector<std::string> names;
    for (const TensorMemberInfo &m : allTensorMembers())
      names.push_back(std::string(m.name));
    sortedUnique(names);
    diag_.error(a->attrLoc, fmt::format("'{}' is not an attribute of tensors or dtypes{}", a->attr,
                                        didYouMean(a->attr, names)));
  }
  return nullptr;
}

void Checker::checkArguments(const std::string &callee, const Signature &sig, Call *c) {
  unsigned given = static_cast<unsigned>(c->args.size());
  unsigned maxPos = sig.maxPositional(), minPos = sig.minPositional();
  std::set<std::string> bound;
  for (unsigned i = 0; i < std::min(given, maxPos); ++i)
    bound.insert(sig.params[i].name);
  if (given > maxPos && !sig.isVariadic()) {
    std::string takes = minPos == maxPos
                            ? countedArgs(maxPos)
                            : fmt::format("from {} to {}", minPos, countedArgs(maxPos));
    diag_.error(c->args[maxPos]->loc, fmt::format("{}() takes {} but {} {} given", callee, takes,
                                                  given, given == 1 ? "was" : "were"));
  }
  std::set<std::string> seen;
  for (const Keyword &k : c->keywords) {
    if (!seen.insert(k.name).second) {
      diag_.error(k.loc, fmt::format("keyword argument repeated: '{}'", k.name));
      continue;
    }
    const ParamSpec *p = sig.findKeyword(k.name);
    if (!p) {
      std::vector<std::string> names;
      for (const ParamSpec &q : sig.params)
        if (!q.variadic)
          names.push_back(q.name);
      sortedUnique(names);
      diag_.error(k.loc, fmt::format("{}() got an unexpected keyword argument '{}'{}", callee,
                                     k.name, didYouMean(k.name, names)));
      continue;
    }
    if (!bound.insert(k.name).second)
      diag_.error(k.loc, fmt::format("{}() got multiple values for argument '{}'", callee, k.name));
  }
  std::vector<std::string> missing;
  for (const ParamSpec &p : sig.params)
    if (!p.hasDefault && !p.variadic && !bound.count(p.name))
      missing.push_back("'" + p.name + "'");
  if (!missing.empty()) {
    std::string list = missing[0];
    for (size_t i = 1; i < missing.size(); ++i)
      list += (i + 1 == missing.size() ? " and " : ", ") + missing[i];
    diag_.error(c->loc, fmt::format("{}() missing required argument{} {}", callee,
                                    missing.size() == 1 ? "" : "s", list));
  }
}

void Checker::checkBuiltinCall(const BuiltinInfo &info, Call *c, bool asIterable) {
  std::string name = qualifiedName(info);
  switch (info.kind) {
  case BuiltinKind::DType:
    diag_.error(c->loc,
                fmt::format("{} is a dtype, not a function; convert with x.to({})", name, name));
    return;
  case BuiltinKind::TypeMarker:
    if (!info.isCallable()) {
      diag_.error(c->loc, fmt::format("{} is a type, not a function", name));
      return;
    }
    break;
  case BuiltinKind::Decorator:
    if (!inDecorator_) {
      diag_.error(c->loc, fmt::format("{} can only be used as a decorator", name));
      return;
    }
    break;
  case BuiltinKind::HostHelper:
    if (info.id == BuiltinId::Config && !inDecorator_) {
      diag_.error(c->loc, "tk.Config describes an autotuning configuration; use it only in "
                          "@tk.autotune(configs=[...])");
      return;
    }
    break;
  case BuiltinKind::Iterator:
    if (!asIterable) {
      diag_.error(c->loc,
                  fmt::format("{}() can only be used as the iterable of a 'for' loop", name));
      return;
    }
    break;
  case BuiltinKind::Function:
  case BuiltinKind::Unsupported:
    break;
  }
  checkArguments(name, info.signature, c);
}

void Checker::checkCall(Call *c, bool asIterable) {
  for (Expr *a : c->args)
    checkExpr(a);
  for (Keyword &k : c->keywords)
    checkExpr(k.value);

  unsigned before = diag_.numErrors();
  if (auto *n = dyn_cast<Name>(c->callee)) {
    resolveName(n);
    if (diag_.numErrors() != before)
      return;
    switch (n->binding) {
    case NameBinding::Builtin:
      return checkBuiltinCall(builtinInfo(n->builtin), c, asIterable);
    case NameBinding::Function: {
      FunctionDef *fn = globals_[n->id].fn;
      FunctionInfo &info = functions_[fn];
      if (!info.isJit) {
        diag_.error(n->loc, fmt::format("cannot call '{}': it is not a @tk.jit function", n->id))
            .notes.push_back({fn->nameLoc, fmt::format("'{}' is defined here", n->id)});
        return;
      }
      return checkArguments(n->id, info.signature, c);
    }
    case NameBinding::Global:
      if (globals_[n->id].kind == GlobalKind::Constant)
        diag_.error(n->loc, fmt::format("'{}' is a constant, not a function", n->id));
      return; // an external global: the environment knows what it is
    case NameBinding::Module:
      diag_.error(n->loc, "module 'tk' is not callable");
      return;
    case NameBinding::Param:
      if (scope_ && scope_->constexprParams.count(n->id))
        return; // a @tk.jit function passed as a constexpr argument
      [[fallthrough]];
    case NameBinding::Local:
      diag_.error(n->loc, fmt::format("'{}' is not callable: only tk builtins and @tk.jit "
                                      "functions can be called",
                                      n->id));
      return;
    case NameBinding::Unresolved:
      return;
    }
    return;
  }
  if (auto *a = dyn_cast<Attribute>(c->callee)) {
    const BuiltinInfo *info = checkAttribute(a);
    if (diag_.numErrors() != before)
      return;
    if (info)
      return checkBuiltinCall(*info, c, asIterable);
    if (isOpaque(a->value))
      return;
    if (auto id = lookupTensorMember(a->attr)) {
      const TensorMemberInfo &m = tensorMemberInfo(*id);
      if (m.kind == MemberKind::Property) {
        diag_.error(a->attrLoc,
                    fmt::format("'{}' is a property, not a method: write {}", m.name, spell(a)));
        return;
      }
      std::string receiver = isa<Name>(a->value) ? spell(a->value) : "x";
      checkArguments(receiver + "." + std::string(m.name), m.signature, c);
    }
    return;
  }
  checkExpr(c->callee);
  diag_.error(c->callee->loc, "not supported in tk kernels: calling the result of an "
                              "expression; call tk builtins and @tk.jit functions by name");
}

void Checker::checkCompare(Compare *c) {
  checkExpr(c->lhs);
  for (Expr *x : c->comparators)
    checkExpr(x);
  if (c->ops.size() > 1) {
    diag_.error(c->opLocs[1], "not supported in tk kernels: a chained comparison; write "
                              "(a < b) & (b < c)");
    return;
  }
  CmpOp op = c->ops[0];
  if (op == CmpOp::In || op == CmpOp::NotIn) {
    diag_.error(c->opLocs[0],
                fmt::format("not supported in tk kernels: the '{}' operator", cmpOpSpelling(op)));
  } else if ((op == CmpOp::Is || op == CmpOp::IsNot) && !isa<NoneLit>(c->lhs) &&
             !isa<NoneLit>(c->comparators[0])) {
    diag_.error(c->opLocs[0],
                fmt::format("not supported in tk kernels: '{}' other than against None; use '{}'",
                            cmpOpSpelling(op), op == CmpOp::Is ? "==" : "!="));
  }
}

// Whether `e` is known when the kernel is specialised: literals, constexpr
// parameters and locals, module constants and external globals, dtypes, the
// dtype/shape of a tensor, `x is None`, and operators over those.
bool Checker::isCompileTime(const Expr *e) const {
  switch (e->kind) {
  case NodeKind::IntLit:
  case NodeKind::FloatLit:
  case NodeKind::BoolLit:
  case NodeKind::NoneLit:
  case NodeKind::StringLit:
    return true;
  case NodeKind::Name: {
    auto *n = cast<Name>(e);
    switch (n->binding) {
    case NameBinding::Param:
      return scope_ && scope_->constexprParams.count(n->id);
    case NameBinding::Local:
      return scope_ && scope_->constexprLocals.count(n->id);
    case NameBinding::Unresolved:
      return false;
    default:
      return true;
    }
  }
  case NodeKind::Attribute: {
    auto *a = cast<Attribute>(e);
    if (a->builtin >= 0)
      return true;
    static const std::set<std::string_view> kStatic = {
        "dtype", "shape", "type", "numel", "value", "element_ty", "primitive_bitwidth"};
    return kStatic.count(a->attr) || isOpaque(a);
  }
  case NodeKind::Call: {
    auto *c = cast<Call>(e);
    if (auto *a = dyn_cast<Attribute>(c->callee); a && a->attr.rfind("is_", 0) == 0)
      return isCompileTime(a->value);
    const BuiltinInfo *info = nullptr;
    if (auto *n = dyn_cast<Name>(c->callee); n && n->binding == NameBinding::Builtin)
      info = &builtinInfo(n->builtin);
    if (auto *a = dyn_cast<Attribute>(c->callee); a && a->builtin >= 0)
      info = &builtinInfo(a->builtin);
    if (!info || !(info->scope == BuiltinScope::Python || info->id == BuiltinId::Constexpr ||
                   info->id == BuiltinId::NextPowerOf2 || info->id == BuiltinId::Cdiv))
      return false;
    for (const Expr *x : c->args)
      if (!isCompileTime(x))
        return false;
    for (const Keyword &k : c->keywords)
      if (!isCompileTime(k.value))
        return false;
    return true;
  }
  case NodeKind::Subscript: {
    auto *s = cast<Subscript>(e);
    return isCompileTime(s->value) && std::all_of(s->indices.begin(), s->indices.end(),
                                                  [&](const Expr *x) { return isCompileTime(x); });
  }
  case NodeKind::Tuple: {
    auto &v = cast<Tuple>(e)->elts;
    return std::all_of(v.begin(), v.end(), [&](const Expr *x) { return isCompileTime(x); });
  }
  case NodeKind::List: {
    auto &v = cast<List>(e)->elts;
    return std::all_of(v.begin(), v.end(), [&](const Expr *x) { return isCompileTime(x); });
  }
  case NodeKind::Binary:
    return isCompileTime(cast<Binary>(e)->lhs) && isCompileTime(cast<Binary>(e)->rhs);
  case NodeKind::Unary:
    return isCompileTime(cast<Unary>(e)->operand);
  case NodeKind::Compare: {
    auto *c = cast<Compare>(e);
    // Whether an argument is None is part of the specialisation.
    if (c->ops.size() == 1 && (c->ops[0] == CmpOp::Is || c->ops[0] == CmpOp::IsNot))
      return true;
    return isCompileTime(c->lhs) && std::all_of(c->comparators.begin(), c->comparators.end(),
                                                [&](const Expr *x) { return isCompileTime(x); });
  }
  case NodeKind::BoolOp: {
    auto &v = cast<BoolOp>(e)->values;
    return std::all_of(v.begin(), v.end(), [&](const Expr *x) { return isCompileTime(x); });
  }
  case NodeKind::IfExp: {
    auto *i = cast<IfExp>(e);
    return isCompileTime(i->cond) && isCompileTime(i->then) && isCompileTime(i->orelse);
  }
  default:
    return false;
  }
}

} // namespace

bool checkModule(ast::Module &module, const SourceManager &sm, DiagnosticEngine &diag,
                 const CheckOptions &options) {
  unsigned before = diag.numErrors();
  Checker(module, sm, diag, options).run();
  return diag.numErrors() == before;
}

} // namespace tk
