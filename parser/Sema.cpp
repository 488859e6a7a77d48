#include "parser/SemaImpl.h"

namespace tk {
namespace sema_impl {

//===----------------------------------------------------------------------===//
// Module level
//===----------------------------------------------------------------------===//

void Checker::run() {
  for (const std::string &name : opts_.externalGlobals)
    globals_[name] = {GlobalKind::External, {}};
  for (const std::string &name : opts_.externalModuleAliases)
    globals_[name] = {GlobalKind::ModuleAlias, {}};
  for (const auto &[name, members] : opts_.externalUserModules)
    globals_[name] = {GlobalKind::UserModule, {}, nullptr, {}, &members};

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
    bool isRoot = false;
    std::optional<BuiltinId> ns = lookupModulePath(a.name, isRoot);
    if (isRoot || ns) {
      // `import tk.language.extra.libdevice` binds `tk`, as Python does; with
      // `as NAME` it binds NAME to the module it names.
      if (a.asname.empty() || isRoot) {
        declareGlobal(a.asname.empty() ? "tk" : a.asname, {GlobalKind::ModuleAlias, a.loc});
      } else {
        GlobalSymbol sym{GlobalKind::ImportedBuiltin, a.loc};
        sym.builtin = *ns;
        declareGlobal(a.asname, sym);
      }
    } else if (a.name == "triton" || a.name.rfind("triton.", 0) == 0) {
      diag_.error(a.loc, fmt::format("tk kernels import tk, not triton: write 'import tk as {}'",
                                     a.asname.empty() ? "tl" : a.asname));
    } else if (a.name.rfind("tk.", 0) == 0) {
      diag_.error(a.loc, fmt::format("module 'tk' has no submodule '{}': kernels can import tk, "
                                     "tk.language, tk.language.math and tk.language.extra "
                                     "(.libdevice, .cuda, .cuda.libdevice)",
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
  bool isRoot = false;
  std::optional<BuiltinId> ns = lookupModulePath(imp->module, isRoot);
  if (!isRoot && !ns) {
    diag_.error(imp->loc, fmt::format("unknown module '{}': tk kernels can import only tk and its "
                                      "submodules (tk.language, tk.language.math, "
                                      "tk.language.extra.libdevice, ...)",
                                      imp->module));
    return;
  }
  std::string module = ns ? qualifiedName(builtinInfo(*ns)) : "tk";
  for (const ImportAlias &a : imp->names) {
    if (a.name == "*") {
      diag_.error(a.loc, fmt::format("not supported in tk kernels: 'from {} import *'; import the "
                                     "names you use, or write 'import {}'",
                                     imp->module, imp->module));
      continue;
    }
    std::optional<BuiltinId> id = ns ? lookupNamespaceMember(*ns, a.name) : lookupTkBuiltin(a.name);
    if (!id) {
      diag_.error(
          a.loc, fmt::format("module '{}' has no attribute '{}'{}", module, a.name,
                             didYouMean(a.name, namespaceNames(ns ? &builtinInfo(*ns) : nullptr))));
      continue;
    }
    const BuiltinInfo &info = builtinInfo(*id);
    if (info.kind == BuiltinKind::Unsupported) {
      diag_.error(a.loc, fmt::format("tk.{} is not supported yet{}{}", a.name,
                                     info.summary.empty() ? "" : ": ", info.summary));
      continue;
    }
    std::string bound = a.asname.empty() ? a.name : a.asname;
    if (info.id == BuiltinId::Language) {
      declareGlobal(bound, {GlobalKind::ModuleAlias, a.loc}); // tk.language is tk
      continue;
    }
    GlobalSymbol sym{GlobalKind::ImportedBuiltin, a.loc};
    sym.builtin = *id;
    declareGlobal(bound, sym);
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

} // namespace sema_impl

bool checkModule(ast::Module &module, const SourceManager &sm, DiagnosticEngine &diag,
                 const CheckOptions &options) {
  unsigned before = diag.numErrors();
  sema_impl::Checker(module, sm, diag, options).run();
  return diag.numErrors() == before;
}

} // namespace tk
