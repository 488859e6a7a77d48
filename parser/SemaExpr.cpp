#include "parser/SemaImpl.h"

namespace tk {
namespace sema_impl {

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
    case GlobalKind::UserModule:
      n->binding = NameBinding::UserModule;
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

namespace {

// The builtin of kind `kind` that `e` names (tk.PropagateNan, tk.extra.libdevice,
// or such a builtin imported by name: `libdevice` after `from
// tk.language.extra import libdevice`), or null.
const BuiltinInfo *builtinOfKind(const Expr *e, BuiltinKind kind) {
  int index = -1;
  if (auto *a = dyn_cast<Attribute>(e))
    index = a->builtin;
  else if (auto *n = dyn_cast<Name>(e); n && n->binding == NameBinding::Builtin)
    index = n->builtin;
  if (index < 0 || builtinInfo(index).kind != kind)
    return nullptr;
  return &builtinInfo(index);
}

const BuiltinInfo *namespaceNamed(const Expr *e) {
  return builtinOfKind(e, BuiltinKind::Namespace);
}
const BuiltinInfo *enumNamed(const Expr *e) { return builtinOfKind(e, BuiltinKind::Enum); }

// "tk.PropagateNan.NONE or tk.PropagateNan.ALL".
std::string enumMemberList(const BuiltinInfo &info) {
  std::string out;
  std::vector<const EnumMemberInfo *> members = enumMembers(info.id);
  for (size_t i = 0; i < members.size(); ++i)
    out += (i == 0 ? "" : i + 1 == members.size() ? " or " : ", ") + qualifiedName(*members[i]);
  return out;
}

} // namespace

std::vector<std::string> namespaceNames(const BuiltinInfo *ns) {
  std::vector<std::string> names;
  for (const BuiltinInfo &b : allBuiltins()) {
    if (b.scope != BuiltinScope::Tk || b.kind == BuiltinKind::Unsupported)
      continue;
    std::string_view name = b.name;
    if (size_t dot = name.rfind('.'); dot != std::string_view::npos)
      name = name.substr(dot + 1);
    if (!ns ? b.name.find('.') == std::string_view::npos
            : lookupNamespaceMember(ns->id, name) == b.id)
      names.push_back(std::string(name));
  }
  return names;
}

const BuiltinInfo *Checker::checkAttribute(Attribute *a) {
  unsigned before = diag_.numErrors();
  checkExpr(a->value);
  if (diag_.numErrors() != before)
    return nullptr;
  auto *base = dyn_cast<Name>(a->value);
  const BuiltinInfo *ns = namespaceNamed(a->value);
  if (ns || (base && base->binding == NameBinding::Module)) {
    std::optional<BuiltinId> id =
        ns ? lookupNamespaceMember(ns->id, a->attr) : lookupTkBuiltin(a->attr);
    std::string module = ns ? qualifiedName(*ns) : "tk";
    if (!id) {
      diag_.error(a->attrLoc, fmt::format("module '{}' has no attribute '{}'{}", module, a->attr,
                                          didYouMean(a->attr, namespaceNames(ns))));
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
  if (base && base->binding == NameBinding::UserModule) {
    checkUserModuleMember(base, a);
    return nullptr;
  }
  if (isOpaque(a->value))
    return nullptr; // a Python object the environment passed; not ours to check
  if (const BuiltinInfo *owner = enumNamed(a->value)) {
    if (!lookupEnumMember(owner->id, a->attr)) {
      std::vector<std::string> names;
      for (const EnumMemberInfo *m : enumMembers(owner->id))
        names.push_back(std::string(m->name));
      diag_.error(a->attrLoc, fmt::format("{} has no member '{}'{}", qualifiedName(*owner), a->attr,
                                          didYouMean(a->attr, names)));
    }
    return nullptr;
  }
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

// `m.f` for a user module `m`: f must be one of its @tk.jit functions the
// environment passed; the attribute then names that function.
void Checker::checkUserModuleMember(const Name *base, Attribute *a) {
  const GlobalSymbol &module = globals_[base->id];
  auto it = module.members->find(a->attr);
  if (it == module.members->end()) {
    std::vector<std::string> names;
    for (const auto &[attr, fn] : *module.members)
      names.push_back(attr);
    diag_.error(a->attrLoc,
                fmt::format("'{}.{}' is not a @tk.jit function: a kernel can call the @tk.jit "
                            "functions of a module it reads, nothing else of it",
                            base->id, a->attr));
    return;
  }
  auto g = globals_.find(it->second);
  if (g == globals_.end() || g->second.kind != GlobalKind::Function) {
    diag_.error(a->attrLoc, fmt::format("'{}.{}' names the function '{}', which is not among the "
                                        "sources given",
                                        base->id, a->attr, it->second));
    return;
  }
  a->function = it->second;
  if (current_)
    current_->callees.push_back({g->second.fn, a->attrLoc});
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
  case BuiltinKind::Namespace:
    diag_.error(c->loc, fmt::format("module '{}' is not callable", name));
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
  case BuiltinKind::Enum:
    diag_.error(c->loc, fmt::format("{} is an enum, not a function; use its members ({})", name,
                                    enumMemberList(info)));
    return;
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
    case NameBinding::UserModule:
      diag_.error(n->loc, fmt::format("module '{}' is not callable", n->id));
      return;
    case NameBinding::Param:
      // A parameter may carry a @tk.jit function: a kernel's constexpr
      // argument, or any argument of a helper (`apply(x, combine_op)` calling
      // `combine_op(x, x)`). What it holds is known when the call is lowered,
      // which reports a non-function there.
      return;
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
    if (!a->function.empty()) {
      FunctionDef *fn = globals_[a->function].fn;
      if (!functions_[fn].isJit) {
        diag_
            .error(a->attrLoc,
                   fmt::format("cannot call '{}': it is not a @tk.jit function", spell(a)))
            .notes.push_back({fn->nameLoc, fmt::format("'{}' is defined here", fn->name)});
        return;
      }
      return checkArguments(spell(a), functions_[fn].signature, c);
    }
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
  // getattr(tl, NAME)(...): what it names is known when the kernel is
  // lowered, which checks the arguments.
  if (auto *inner = dyn_cast<Call>(c->callee)) {
    auto *n = dyn_cast<Name>(inner->callee);
    if (n && n->binding == NameBinding::Builtin &&
        builtinInfo(n->builtin).id == BuiltinId::PyGetattr)
      return;
  }
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
             !isa<NoneLit>(c->comparators[0]) &&
             !(isCompileTime(c->lhs) && isCompileTime(c->comparators[0]))) {
    // Identity of compile-time values (`x.dtype is tl.float32`, Inductor's
    // form) folds when the kernel is specialised; of run-time values it
    // means nothing in a kernel.
    diag_.error(c->opLocs[0],
                fmt::format("not supported in tk kernels: '{}' other than against None or "
                            "between compile-time values; use '{}'",
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
    if (a->builtin >= 0 || enumNamed(a->value))
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

} // namespace sema_impl
} // namespace tk
