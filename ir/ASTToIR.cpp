// AST -> IR: the entry point, statements, structured control flow and the
// inlining of @tk.jit helpers. Expressions are in ASTToIRExpr.cpp, builtin
// calls in ASTToIRCalls.cpp and ASTToIRBuiltins*.cpp.
//
// Lowering stops at the first error of a kernel: later statements would
// mostly report consequences of it (a variable left undefined, a type that
// was never computed).
#include "ir/ASTToIR.h"

#include "ir/ASTToIRArgs.h"
#include "ir/Verifier.h"

#include <fmt/format.h>

#include <set>

namespace tk {
namespace astir {

using namespace ast;

namespace {

// Inlining depth at which we give up; the checks reject recursion, so only
// an absurdly deep chain of helpers reaches it.
constexpr unsigned kMaxInlineDepth = 64;
// Iterations of one tk.static_range past which unrolling is refused.
constexpr int64_t kMaxUnroll = 4096;

void collectTargets(const Expr *t, std::set<std::string> &out) {
  if (auto *n = dyn_cast<Name>(t))
    out.insert(n->id);
  else if (auto *tu = dyn_cast<Tuple>(t))
    for (const Expr *e : tu->elts)
      collectTargets(e, out);
  else if (auto *l = dyn_cast<List>(t))
    for (const Expr *e : l->elts)
      collectTargets(e, out);
}

void collectAssigned(const ast::Block &block, std::set<std::string> &out) {
  for (const Stmt *s : block) {
    if (auto *a = dyn_cast<Assign>(s))
      for (const Expr *t : a->targets)
        collectTargets(t, out);
    else if (auto *a = dyn_cast<AugAssign>(s))
      collectTargets(a->target, out);
    else if (auto *a = dyn_cast<AnnAssign>(s))
      collectTargets(a->target, out);
    else if (auto *i = dyn_cast<If>(s)) {
      collectAssigned(i->then, out);
      collectAssigned(i->orelse, out);
    } else if (auto *f = dyn_cast<For>(s)) {
      collectTargets(f->target, out);
      collectAssigned(f->body, out);
    } else if (auto *w = dyn_cast<While>(s))
      collectAssigned(w->body, out);
  }
}

// Whether two lowered values are the same (so a branch or loop left it alone).
bool sameVal(const Val &a, const Val &b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == Val::Kind::Dyn)
    return a.v == b.v;
  if (a.i != b.i || a.s != b.s || a.type != b.type || a.fn != b.fn ||
      a.elts.size() != b.elts.size() || a.dims != b.dims)
    return false;
  if (a.kind == Val::Kind::Float && !(a.f == b.f || (a.f != a.f && b.f != b.f)))
    return false;
  for (size_t i = 0; i < a.elts.size(); ++i)
    if (!sameVal(a.elts[i], b.elts[i]))
      return false;
  return true;
}

// The leaves of a variable that a loop or a dynamic `if` carries as IR
// values, in a fixed order that depends only on `init` (the value before the
// loop, or after the `if` branch): a tensor or a number is one leaf; a
// tuple's leaves are its elements', recursively; a block pointer or tensor
// descriptor carries its dynamic parts and its offsets, keeping the
// compile-time integers of its shape and strides (a stride of 1 stays a
// constant, which the axis analysis needs for contiguity). Every other part
// is kept and must be the same in `now` (the value at the end of the body or
// of the other branch). With `now`, `out` gets now's leaves at init's
// positions; false when the two do not match.
bool carriedLeaves(const Val &init, const Val *now, std::vector<const Val *> &out,
                   bool constsCarried = true) {
  if (init.isDyn() || (constsCarried && init.isScalarConst())) {
    if (now && !now->isDyn() && !now->isScalarConst())
      return false;
    out.push_back(now ? now : &init);
    return true;
  }
  bool aggregate = init.kind == Val::Kind::Tuple || init.kind == Val::Kind::Desc;
  if (!aggregate)
    return !now || sameVal(init, *now);
  if (now &&
      (now->kind != init.kind || now->elts.size() != init.elts.size() || now->dims != init.dims ||
       now->i != init.i || now->s != init.s || now->type != init.type))
    return false;
  // A descriptor's base, shape and strides come first; its offsets after.
  size_t fixed = init.kind == Val::Kind::Desc ? 1 + 2 * init.dims.size() : 0;
  for (size_t k = 0; k < init.elts.size(); ++k)
    if (!carriedLeaves(init.elts[k], now ? &now->elts[k] : nullptr, out,
                       init.kind == Val::Kind::Tuple ? constsCarried : k >= fixed))
      return false;
  return true;
}

// `init` with its carried leaves (carriedLeaves' order) replaced by `values`
// from `next` on.
Val withLeaves(const Val &init, const std::vector<Value *> &values, size_t &next,
               bool constsCarried = true) {
  if (init.isDyn() || (constsCarried && init.isScalarConst()))
    return Val::dyn(values[next++]);
  if (init.kind != Val::Kind::Tuple && init.kind != Val::Kind::Desc)
    return init;
  Val r = init;
  size_t fixed = init.kind == Val::Kind::Desc ? 1 + 2 * init.dims.size() : 0;
  for (size_t k = 0; k < init.elts.size(); ++k)
    r.elts[k] = withLeaves(init.elts[k], values, next,
                           init.kind == Val::Kind::Tuple ? constsCarried : k >= fixed);
  return r;
}

// Whether a variable holding `v` can be carried through a loop at all.
bool carriable(const Val &v) {
  return v.isDyn() || v.isScalarConst() || v.kind == Val::Kind::Tuple || v.kind == Val::Kind::Desc;
}

Val fromConst(const ConstValue &c, IRContext &ctx, const ast::Module &m) {
  switch (c.kind) {
  case ConstValue::Kind::None:
    return Val::none();
  case ConstValue::Kind::Bool:
    return Val::ofBool(c.boolValue);
  case ConstValue::Kind::Int:
    return Val::ofInt(c.intValue);
  case ConstValue::Kind::Float:
    return Val::ofFloat(c.floatValue);
  case ConstValue::Kind::String:
    return Val::ofStr(c.stringValue);
  case ConstValue::Kind::DType:
    return Val::ofType(ctx.scalar(c.dtype));
  case ConstValue::Kind::Function: {
    // A @tk.jit function passed as a constexpr; the Python side compiles its
    // source with the kernel's, so it is found by name (the front end
    // checked every source).
    Val f;
    f.kind = Val::Kind::Func;
    f.fn = m.findFunction(c.stringValue);
    return f.fn ? f : Val::none();
  }
  case ConstValue::Kind::Builtin: {
    // A tk builtin passed as a constexpr; Python's side sends only names of
    // the table (an unknown one is None, as for a function).
    std::optional<BuiltinId> id = lookupTkBuiltin(c.stringValue);
    if (!id)
      return Val::none();
    Val f;
    f.kind = Val::Kind::Builtin;
    f.builtin = &builtinInfo(*id);
    return f;
  }
  case ConstValue::Kind::Tuple: {
    std::vector<Val> elts;
    for (const ConstValue &e : c.elements)
      elts.push_back(fromConst(e, ctx, m));
    return Val::tuple(std::move(elts));
  }
  }
  return Val::none();
}

bool isConstexprAnnotation(const Expr *e) {
  if (auto *a = dyn_cast<ast::Attribute>(e))
    return a->attr == "constexpr";
  if (auto *n = dyn_cast<Name>(e))
    return n->id == "constexpr";
  return false;
}

} // namespace

std::vector<std::string> assignedNames(const ast::Block &block) {
  std::set<std::string> names;
  collectAssigned(block, names);
  return {names.begin(), names.end()};
}

//===----------------------------------------------------------------------===//
// Globals and the entry point
//===----------------------------------------------------------------------===//

Val Lowerer::global(const std::string &name, SourceLoc loc) {
  if (auto it = spec_.constants.find(name); it != spec_.constants.end())
    return fromConst(it->second, ctx_, astModule_);
  if (auto it = globals_.find(name); it != globals_.end())
    return it->second;
  for (const std::string &g : globalsInProgress_)
    if (g == name)
      return fail(loc, fmt::format("global '{}' is defined in terms of itself", name));
  for (const Stmt *s : astModule_.body) {
    const Expr *target = nullptr, *value = nullptr;
    if (auto *a = dyn_cast<Assign>(s); a && a->targets.size() == 1) {
      target = a->targets[0];
      value = a->value;
    } else if (auto *a = dyn_cast<AnnAssign>(s)) {
      target = a->target;
      value = a->value;
    }
    auto *n = target ? dyn_cast<Name>(target) : nullptr;
    if (!n || n->id != name || !value)
      continue;
    // A global is folded once, with no locals in scope, and must be constant.
    Env empty;
    Env *saved = env;
    env = &empty;
    globalsInProgress_.push_back(name);
    Val v = expr(value);
    globalsInProgress_.pop_back();
    env = saved;
    if (!v.ok())
      return v;
    if (v.hasDyn())
      return fail(value->loc, fmt::format("global '{}' must be a compile-time constant", name));
    globals_[name] = v;
    return v;
  }
  return fail(loc,
              fmt::format("the value of global '{}' is not known here: pass it with -D {}=VALUE",
                          name, name));
}

Function *Lowerer::run() {
  const FunctionDef *kernel = astModule_.findFunction(spec_.kernel);
  if (!kernel) {
    fail({}, fmt::format("no function named '{}' to lower", spec_.kernel));
    return nullptr;
  }
  std::vector<ParamBinding> params;
  if (!specializeParams(*kernel, spec_, diag_, params))
    return nullptr;

  std::vector<Type *> argTypes;
  for (const ParamBinding &p : params)
    if (p.isArgument)
      argTypes.push_back(p.isPointer
                             ? ctx_.pointer(ctx_.scalar(p.dtype), PointerType::kGlobal, p.isConst)
                             : ctx_.scalar(p.dtype));
  Function *fn = b_.createFunction(module_, kernel->name, argTypes, {}, kernel->loc);

  Env kernelEnv;
  unsigned arg = 0;
  for (const ParamBinding &p : params) {
    if (p.descriptorPart >= 0) {
      // A tensor descriptor argument: the same aggregate tk.make_tensor_descriptor
      // makes, from its IR arguments in order (Specialize.h), the last stride 1.
      if (p.divisibility > 1)
        fn->argAttrs(arg).set("divisibility", p.divisibility);
      // The CUtensorMap of a `tma` descriptor: elts[2R + 1], after the last
      // stride's constant 1 (descriptorAccess loads through it).
      if (size_t(p.descriptorPart) == 2 * p.blockShape.size())
        fn->argAttrs(arg).set("tensormap", tk::Attribute(true));
      Val &d = kernelEnv[p.descriptorParam];
      if (p.descriptorPart == 0) {
        d = Val();
        d.kind = Val::Kind::Desc;
        d.i = 1;
        d.dims = p.blockShape;
        d.s = p.padding;
        d.type = ctx_.scalar(p.descriptorDType);
      }
      d.elts.push_back(Val::dyn(fn->argument(arg++)));
      if (size_t(p.descriptorPart) + 1 == 2 * p.blockShape.size())
        d.elts.push_back(Val::ofInt(1));
      continue;
    }
    if (p.isArgument) {
      if (p.divisibility > 1)
        fn->argAttrs(arg).set("divisibility", p.divisibility);
      if (p.isConstant)
        fn->argAttrs(arg).set("constant", p.value.intValue);
      kernelEnv[p.name] =
          p.isConstant ? fromConst(p.value, ctx_, astModule_) : Val::dyn(fn->argument(arg));
      ++arg;
    } else {
      kernelEnv[p.name] = fromConst(p.value, ctx_, astModule_);
    }
  }

  ReturnState rs;
  env = &kernelEnv;
  ret = &rs;
  unsigned errorsBefore = diag_.numErrors();
  bool ok = lowerBlock(withEarlyExits(kernel->body));
  if (ok && rs.returned && rs.value.kind != Val::Kind::None)
    ok = fail(kernel->nameLoc, fmt::format("kernel '{}' returns {}; kernels return nothing (store "
                                           "results through a pointer)",
                                           kernel->name, describe(rs.value)))
             .ok();
  if (ok) {
    b_.setInsertionPointToEnd(&fn->body());
    b_.ret(kernel->loc, {});
  }
  if (!ok || diag_.numErrors() != errorsBefore) {
    module_.eraseFunction(fn);
    return nullptr;
  }

  // Lowering builds only valid IR; anything the verifier finds is our bug.
  DiagnosticEngine verifyDiag(diag_.sourceManager());
  if (!verifyModule(module_, verifyDiag)) {
    for (const Diagnostic &d : verifyDiag.diagnostics())
      if (d.severity == Severity::Error)
        diag_.error(d.loc.isValid() ? d.loc : kernel->loc,
                    fmt::format("internal compiler error: the IR lowered for '{}' does not "
                                "verify: {}",
                                kernel->name, d.message));
    module_.eraseFunction(fn);
    return nullptr;
  }
  return fn;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

namespace {

// Whether `block` has a `return`, in it or in its ifs (not in loops).
bool hasReturn(const ast::Block &block) {
  for (const Stmt *s : block) {
    if (isa<Return>(s))
      return true;
    if (auto *f = dyn_cast<If>(s); f && (hasReturn(f->then) || hasReturn(f->orelse)))
      return true;
  }
  return false;
}

// The name under which lowerIf joins the values its branches return, as it
// joins a variable (no Python name has a space).
constexpr const char *kReturnSlot = "return value";

} // namespace

ast::Block Lowerer::withEarlyExits(ast::Block stmts) {
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (auto *r = dyn_cast<Return>(stmts[i])) {
      stmts.resize(r->value ? i + 1 : i); // the rest is unreachable
      return stmts;
    }
    auto *f = dyn_cast<If>(stmts[i]);
    if (!f || !(hasReturn(f->then) || hasReturn(f->orelse)))
      continue;
    // What follows runs only where the branch taken did not return: it goes
    // into both branches, whose returns then drop it.
    ast::Block after(stmts.begin() + long(i) + 1, stmts.end());
    If &exit = rewrittenIfs_.emplace_back(f->loc, f->cond);
    ast::Block thenPart = f->then, elsePart = f->orelse;
    thenPart.insert(thenPart.end(), after.begin(), after.end());
    elsePart.insert(elsePart.end(), after.begin(), after.end());
    exit.then = withEarlyExits(std::move(thenPart));
    exit.orelse = withEarlyExits(std::move(elsePart));
    exitIfs_.insert(&exit);
    stmts.resize(i);
    stmts.push_back(&exit);
    return stmts;
  }
  return stmts;
}

bool Lowerer::lowerBlock(const ast::Block &block) {
  for (size_t i = 0; i < block.size(); ++i) {
    if (ret->returned)
      break; // the rest of the block is unreachable
    if (!lowerStmt(block[i]))
      return false;
  }
  return true;
}

bool Lowerer::assign(const Expr *target, Val value, SourceLoc loc) {
  if (!value.ok())
    return false;
  if (auto *n = dyn_cast<Name>(target)) {
    (*env)[n->id] = std::move(value);
    return true;
  }
  const std::vector<Expr *> *elts = nullptr;
  if (auto *t = dyn_cast<Tuple>(target))
    elts = &t->elts;
  else if (auto *l = dyn_cast<List>(target))
    elts = &l->elts;
  if (!elts)
    return fail(target->loc, "not supported in tk kernels: assigning to this target").ok();
  if (value.kind != Val::Kind::Tuple)
    return fail(loc, fmt::format("cannot unpack {} into {} names", describe(value), elts->size()))
        .ok();
  if (value.elts.size() != elts->size())
    return fail(loc, fmt::format("cannot unpack a tuple of {} into {} names", value.elts.size(),
                                 elts->size()))
        .ok();
  for (size_t i = 0; i < elts->size(); ++i)
    if (!assign((*elts)[i], value.elts[i], loc))
      return false;
  return true;
}

bool Lowerer::withinBudget(SourceLoc loc) {
  IRLimits &limits = ctx_.limits();
  ++statements_;
  if (limits.interruptRequested()) {
    fail(loc, fmt::format("the compile of '{}' was interrupted", spec_.kernel));
    return false;
  }
  int64_t made = b_.numCreated() + statements_;
  if (limits.maxOps <= 0 || made <= limits.maxOps)
    return true;
  Diagnostic &d = diag_.error(
      loc, fmt::format("kernel '{}' is over the compile's budget of {} operations (TK_MAX_OPS): "
                       "unrolling its tk.static_range loops and inlining its helpers made {} "
                       "operations and statements by here; use tk.range for a loop that need not "
                       "be unrolled, unroll fewer iterations, or call helpers in fewer places",
                       spec_.kernel, limits.maxOps, made));
  // Innermost first: the two innermost expansions and the two outermost,
  // the kernel's own loop or call that a change would start from.
  for (size_t i = expanding.size(); i-- > 0;) {
    if (i + 2 < expanding.size() && i >= 2)
      continue;
    const Expansion &e = expanding[i];
    d.notes.push_back({e.loc, e.helper.empty()
                                  ? fmt::format("in iteration {} of {} of this tk.static_range",
                                                e.iteration + 1, e.count)
                                  : fmt::format("in this call of '{}'", e.helper)});
  }
  return false;
}

bool Lowerer::lowerStmt(const Stmt *s) {
  if (!withinBudget(s->loc))
    return false;
  switch (s->kind) {
  case NodeKind::ExprStmt:
    return expr(cast<ExprStmt>(s)->value).ok();
  case NodeKind::Assign: {
    auto *a = cast<Assign>(s);
    Val v = expr(a->value);
    v.lifted = v.isScalarConst();
    for (const Expr *t : a->targets)
      if (!assign(t, v, a->loc))
        return false;
    return v.ok();
  }
  case NodeKind::AugAssign: {
    auto *a = cast<AugAssign>(s);
    Val cur = expr(a->target);
    if (!cur.ok())
      return false;
    Val rhs = expr(a->value);
    return assign(a->target, binary(a->op, cur, rhs, a->opLoc), a->loc);
  }
  case NodeKind::AnnAssign: {
    auto *a = cast<AnnAssign>(s);
    if (!a->value)
      return true;
    Val v = expr(a->value);
    v.lifted = !isConstexprAnnotation(a->annotation) && v.isScalarConst();
    return assign(a->target, v, a->loc);
  }
  case NodeKind::If:
    return lowerIf(cast<If>(s));
  case NodeKind::For:
    return lowerFor(cast<For>(s));
  case NodeKind::While:
    return lowerWhile(cast<While>(s));
  case NodeKind::Return: {
    auto *r = cast<Return>(s);
    if (ret->dynamicDepth > 0)
      return fail(s->loc, "not supported yet: 'return' inside a dynamic for or while loop; "
                          "assign the value and return after the loop")
          .ok();
    Val v = r->value ? expr(r->value) : Val::none();
    if (!v.ok())
      return false;
    ret->returned = true;
    ret->value = v;
    ret->loc = s->loc;
    return true;
  }
  case NodeKind::Pass:
    return true;
  case NodeKind::Assert: {
    auto *a = cast<Assert>(s);
    Val cond = expr(a->test);
    if (!cond.ok())
      return false;
    std::string msg;
    if (a->msg) {
      Val m = expr(a->msg);
      if (!m.ok())
        return false;
      msg = m.kind == Val::Kind::Str ? m.s : describe(m);
    }
    if (std::optional<bool> t = constTruth(cond))
      return *t || fail(a->loc,
                        fmt::format("assertion is always false{}{}", msg.empty() ? "" : ": ", msg))
                       .ok();
    b_.assertOp(a->loc, castTo(cond.v, ctx_.i1(), a->loc), msg);
    return true;
  }
  case NodeKind::Break:
  case NodeKind::Continue:
    return fail(s->loc, fmt::format("not supported yet: '{}' in a kernel loop",
                                    isa<Break>(s) ? "break" : "continue"))
        .ok();
  default:
    return fail(s->loc,
                fmt::format("not supported in a kernel body: {} statement", nodeKindName(s->kind)))
        .ok();
  }
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

bool Lowerer::lowerIf(const If *s) {
  Val cond = expr(s->cond);
  if (!cond.ok())
    return false;
  // A compile-time condition picks its branch; the other is never lowered,
  // so it may even be ill-typed for this specialisation.
  if (std::optional<bool> t = constTruth(cond))
    return lowerBlock(*t ? s->then : s->orelse);
  // A one-element tensor is its element, as Triton unsplats it (test_unsplat).
  if (cond.isDyn() && cond.v->type()->isTensor() && cond.v->type()->numElements() == 1) {
    cond = item(cond, s->cond->loc);
    if (!cond.ok())
      return false;
  }
  if (!cond.isDyn() || cond.v->type()->isTensor())
    return fail(s->cond->loc,
                fmt::format("the condition of 'if' must be a scalar, got {}", describe(cond)))
        .ok();
  Value *c = castTo(cond.v, ctx_.i1(), s->cond->loc);

  // Lower both branches into a result-less if first: which variables it must
  // yield (and their types) is known only afterwards.
  Operation *draft = b_.createIf(s->loc, c, {});
  Env before = *env;
  Env branchEnv[2];
  // A branch that returns ends there; what it returns joins the other
  // branch's value under kReturnSlot, as a variable would. withEarlyExits
  // made an if with a return the last statement of its function, so a
  // branch that does not return falls off the end: it returns None.
  bool returned[2] = {false, false};
  SourceLoc returnLoc;
  for (unsigned r = 0; r < 2; ++r) {
    *env = before;
    ret->returned = false;
    b_.setInsertionPointToEnd(&draft->body(r));
    if (!lowerBlock(r == 0 ? s->then : s->orelse))
      return false;
    returned[r] = ret->returned;
    if (returned[r]) {
      (*env)[kReturnSlot] = ret->value;
      returnLoc = ret->loc;
    }
    branchEnv[r] = *env;
  }
  ret->returned = false;
  if (returned[0] != returned[1]) {
    // Not one of withEarlyExits' ifs (it never looks into loops): what
    // follows the if would have to run only on the other branch.
    if (!exitIfs_.count(s))
      return fail(returnLoc, "not supported yet: 'return' inside a dynamic if within a loop "
                             "(tk.static_range); assign the value and return after the loop")
          .ok();
    branchEnv[returned[0] ? 1 : 0][kReturnSlot] = Val::none();
  }
  // Values of a variable (or the returned values) that cannot be joined.
  auto mismatch = [&](const std::string &name, const std::string &a, const std::string &b,
                      bool supportedLater) {
    if (name == kReturnSlot)
      return fail(returnLoc, fmt::format("Return type mismatch: the 'if' branch returns {} but the "
                                         "'else' branch returns "
                                         "{}; every path of a function must return values of one "
                                         "type",
                                         a, b))
          .ok();
    // Triton's wording first ("Mismatched type for x"), then where the
    // types come from.
    return fail(s->loc, fmt::format("{}variable '{}' is {} after the 'if' branch {} {} after the "
                                    "'else' branch",
                                    supportedLater ? "not supported yet: "
                                                   : fmt::format("Mismatched type for {}: ", name),
                                    name, a, supportedLater ? "and" : "but", b))
        .ok();
  };

  // Yield the variables both branches define and at least one changed, each
  // as its leaves (carriedLeaves).
  std::vector<std::string> names;
  std::vector<Val> shapes; // the 'if' branch's value of each
  std::vector<Value *> yields[2];
  std::vector<Type *> types;
  for (const auto &[name, thenVal] : branchEnv[0]) {
    auto other = branchEnv[1].find(name);
    if (other == branchEnv[1].end() || sameVal(thenVal, other->second))
      continue;
    std::vector<const Val *> leaves[2];
    carriedLeaves(thenVal, nullptr, leaves[0]);
    if (!carriable(thenVal) || !carriedLeaves(thenVal, &other->second, leaves[1]))
      return mismatch(name, describe(thenVal), describe(other->second), true);
    for (size_t k = 0; k < leaves[0].size(); ++k) {
      const Val *vals[2] = {leaves[0][k], leaves[1][k]};
      Value *v[2] = {nullptr, nullptr};
      for (unsigned r = 0; r < 2; ++r) {
        b_.setInsertionPointToEnd(&draft->body(r));
        Type *like = vals[1 - r]->isDyn() ? vals[1 - r]->v->type() : nullptr;
        v[r] = materialize(*vals[r], s->loc, like);
      }
      if (!v[0] || !v[1])
        return false;
      if (v[0]->type() != v[1]->type())
        return mismatch(name, typeStr(v[0]), typeStr(v[1]), false);
      yields[0].push_back(v[0]);
      yields[1].push_back(v[1]);
      types.push_back(v[0]->type());
    }
    names.push_back(name);
    shapes.push_back(thenVal);
  }

  // The real if, with the results; the drafted ops move into it.
  b_.setInsertionPoint(draft);
  Operation *op = b_.createIf(s->loc, c, types);
  for (unsigned r = 0; r < 2; ++r) {
    for (Operation *inner : draft->body(r).opsVector())
      op->body(r).insert(nullptr, draft->body(r).remove(inner));
    b_.setInsertionPointToEnd(&op->body(r));
    b_.yield(s->loc, yields[r]);
  }
  draft->erase();
  b_.setInsertionPointAfter(op);

  *env = before;
  for (const auto &[name, thenVal] : branchEnv[0]) {
    auto other = branchEnv[1].find(name);
    if (other != branchEnv[1].end() && sameVal(thenVal, other->second))
      (*env)[name] = thenVal;
  }
  size_t next = 0;
  for (size_t i = 0; i < names.size(); ++i)
    (*env)[names[i]] = withLeaves(shapes[i], op->results(), next);
  if (auto r = env->find(kReturnSlot); r != env->end()) {
    ret->returned = true;
    ret->value = r->second;
    ret->loc = returnLoc;
    env->erase(r);
  }
  return true;
}

// range(arg1, arg2=None, step=None), tk.range and tk.static_range as Python
// reads them: one bound is the end, two are start and end; each may be
// given by keyword (`tk.static_range(0, N, step=7)`). `bounds` gets (start,
// end, step) with the missing ones 0 and 1.
bool Lowerer::rangeBounds(const Call *iter, const BuiltinInfo &info, Args &args,
                          std::vector<Val> &bounds) {
  if (!bindArgs(*this, info.signature, iter, nullptr, args))
    return false;
  Val arg1 = args.get("arg1"), arg2 = args.get("arg2"), step = args.get("step");
  if (!args.has("arg1"))
    return fail(iter->loc, fmt::format("{}() needs its end (arg1)", qualifiedName(info))).ok();
  bounds = args.has("arg2") ? std::vector<Val>{arg1, arg2} : std::vector<Val>{Val::ofInt(0), arg1};
  bounds.push_back(args.has("step") ? step : Val::ofInt(1));
  return true;
}

bool Lowerer::lowerFor(const For *s) {
  auto *iter = dyn_cast<Call>(s->iter);
  const BuiltinInfo *info = iter ? namedBuiltin(iter->callee) : nullptr;
  if (!info || (info->id != BuiltinId::Range && info->id != BuiltinId::PyRange &&
                info->id != BuiltinId::StaticRange))
    return fail(s->iter->loc, "not supported yet: a 'for' loop over anything but range(), "
                              "tk.range() or tk.static_range()")
        .ok();
  if (info->id == BuiltinId::StaticRange)
    return lowerStaticRange(s, iter);
  auto *target = dyn_cast<Name>(s->target);
  if (!target)
    return fail(s->target->loc, "the loop variable must be a single name").ok();

  // range(end), range(start, end), range(start, end, step), each bound
  // positional or by its keyword (arg1, arg2, step); of tk.range's scheduling
  // hints, num_stages goes on the loop (the software pipeliner uses it
  // instead of the kernel's num_stages); the others are accepted and not
  // used yet.
  Args args;
  std::vector<Val> bounds;
  if (!rangeBounds(iter, *info, args, bounds))
    return false;
  std::optional<int64_t> loopStages;
  if (info->id == BuiltinId::Range && args.has("num_stages")) {
    Val v = args.get("num_stages");
    if (v.kind != Val::Kind::Int)
      return fail(args.loc("num_stages"), fmt::format("tk.range's num_stages must be a "
                                                      "compile-time integer (a literal or a "
                                                      "tk.constexpr), got {}",
                                                      describe(v)))
          .ok();
    if (v.i < 1)
      return fail(args.loc("num_stages"),
                  fmt::format("tk.range's num_stages must be at least 1, got {}", v.i))
          .ok();
    loopStages = v.i;
  }
  if (bounds[2].kind == Val::Kind::Int && bounds[2].i == 0)
    return fail(iter->loc, "range() step must not be zero").ok();

  // The induction variable's type: the widest dynamic bound, i32 otherwise.
  Type *ivType = ctx_.i32();
  for (const Val &bv : bounds) {
    if (bv.isDyn() &&
        (!bv.v->type()->isScalar() || !bv.v->type()->isIntLike() || bv.v->type() == ctx_.i1()))
      return fail(iter->loc,
                  fmt::format("range() bounds must be integer scalars, got {}", describe(bv)))
          .ok();
    if (!bv.isDyn() && bv.kind != Val::Kind::Int)
      return fail(iter->loc, fmt::format("range() bounds must be integers, got {}", describe(bv)))
          .ok();
    if (bv.isDyn())
      ivType = promote(ivType, bv.v->type(), iter->loc, "range");
    else if (bv.i > INT32_MAX || bv.i < INT32_MIN)
      ivType = promote(ivType, ctx_.i64(), iter->loc, "range");
  }
  // A negative constant step (`range(K, 0, -BLOCK_K)`) counts down; the IR's
  // `for` counts up (iv < upper), which the GPU lowering and the pipeliner
  // rely on. So, as Triton does, the loop runs t over range(end, start,
  // -step) and the body sees start + end - t: the same values, in the same
  // order (range(10, 1, -3): t = 1, 4, 7, the body 10, 7, 4).
  bool countsDown = bounds[2].kind == Val::Kind::Int && bounds[2].i < 0;
  if (countsDown) {
    std::swap(bounds[0], bounds[1]);
    bounds[2] = Val::ofInt(-bounds[2].i);
  }
  Value *lu[3];
  for (int i = 0; i < 3; ++i)
    lu[i] = castTo(materialize(bounds[i], iter->loc, ivType), ivType, iter->loc);

  // Loop-carried: variables defined before the loop that the body assigns,
  // each as its leaves (carriedLeaves).
  std::vector<std::string> carried;
  std::vector<Val> carriedInit;
  std::vector<Value *> inits;
  for (const std::string &name : assignedNames(s->body)) {
    auto it = env->find(name);
    if (name == target->id || it == env->end())
      continue;
    if (!carriable(it->second))
      return fail(s->loc, fmt::format("not supported yet: variable '{}' ({}) is assigned in the "
                                      "loop; only tensors and numbers can be loop-carried",
                                      name, describe(it->second)))
          .ok();
    std::vector<const Val *> leaves;
    carriedLeaves(it->second, nullptr, leaves);
    for (const Val *leaf : leaves)
      if (!inits.emplace_back(materialize(*leaf, s->loc)))
        return false;
    carried.push_back(name);
    carriedInit.push_back(it->second);
  }

  Operation *loop = b_.createFor(s->loc, lu[0], lu[1], lu[2], inits);
  if (loopStages)
    loop->attrs().set("num_stages", tk::Attribute(*loopStages));
  Env before = *env;
  b_.setInsertionPointToEnd(&loop->body());
  Value *iv = loop->body().argument(0);
  if (countsDown) // lu[0] and lu[1] hold the original end and start
    iv = b_.sub(s->target->loc, b_.add(s->target->loc, lu[0], lu[1]), iv);
  (*env)[target->id] = Val::dyn(iv);
  std::vector<Value *> bodyArgs = loop->body().arguments();
  bodyArgs.erase(bodyArgs.begin()); // the induction variable
  size_t next = 0;
  for (size_t i = 0; i < carried.size(); ++i)
    (*env)[carried[i]] = withLeaves(carriedInit[i], bodyArgs, next);
  ++ret->dynamicDepth;
  bool ok = lowerBlock(s->body);
  --ret->dynamicDepth;
  if (!ok)
    return false;
  std::vector<Value *> yielded;
  if (!carriedValues(carried, carriedInit, inits, s->loc, yielded))
    return false;
  b_.yield(s->loc, yielded);
  b_.setInsertionPointAfter(loop);
  *env = before;
  std::vector<Value *> results = loop->results();
  next = 0;
  for (size_t i = 0; i < carried.size(); ++i)
    (*env)[carried[i]] = withLeaves(carriedInit[i], results, next);
  return true;
}

bool Lowerer::carriedValues(const std::vector<std::string> &carried,
                            const std::vector<Val> &carriedInit, const std::vector<Value *> &inits,
                            SourceLoc loc, std::vector<Value *> &out) {
  for (size_t i = 0; i < carried.size(); ++i) {
    const Val &now = (*env)[carried[i]];
    std::vector<const Val *> leaves;
    if (!now.ok())
      return false;
    if (!carriedLeaves(carriedInit[i], &now, leaves))
      return fail(loc, fmt::format("loop-carried variable '{}' changes in the loop from {} to {}; "
                                   "only its tensors and numbers may change",
                                   carried[i], describe(carriedInit[i]), describe(now)))
          .ok();
    for (const Val *leaf : leaves) {
      Type *want = inits[out.size()]->type();
      Value *v = materialize(*leaf, loc, want);
      if (!v)
        return false;
      if (v->type() != want)
        return fail(loc, fmt::format("loop-carried variable '{}' changes type in the loop: {} "
                                     "before it, {} at the end of the body",
                                     carried[i], want->str(), typeStr(v)))
            .ok();
      out.push_back(v);
    }
  }
  return true;
}

bool Lowerer::lowerStaticRange(const For *s, const Call *iter) {
  Args args;
  std::vector<Val> bounds;
  if (!rangeBounds(iter, builtinInfo(BuiltinId::StaticRange), args, bounds))
    return false;
  // Where bound i came from: (start, end) are (arg1, arg2), or end is arg1.
  const char *params[] = {"arg1", args.has("arg2") ? "arg2" : "arg1", "step"};
  for (int i = 0; i < 3; ++i)
    if (bounds[i].kind != Val::Kind::Int && bounds[i].kind != Val::Kind::Bool)
      return fail(args.loc(params[i]),
                  fmt::format("tk.static_range bounds must be compile-time integers, got {}",
                              describe(bounds[i])))
          .ok();
  int64_t lo = bounds[0].i, hi = bounds[1].i, step = bounds[2].i;
  if (step == 0)
    return fail(iter->loc, "tk.static_range step must not be zero").ok();
  int64_t count = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0)
                           : (lo > hi ? (lo - hi - step - 1) / -step : 0);
  if (count > kMaxUnroll)
    return fail(iter->loc, fmt::format("tk.static_range would unroll {} iterations (at most {}); "
                                       "use tk.range",
                                       count, kMaxUnroll))
        .ok();
  expanding.push_back({iter->loc, "", 0, count});
  for (int64_t k = 0; k < count; ++k) {
    expanding.back().iteration = k;
    if (!assign(s->target, Val::ofInt(lo + k * step), s->loc) || !lowerBlock(s->body)) {
      expanding.pop_back();
      return false;
    }
    if (ret->returned)
      break;
  }
  expanding.pop_back();
  return true;
}

bool Lowerer::lowerWhile(const While *s) {
  std::vector<std::string> carried;
  std::vector<Val> carriedInit;
  std::vector<Value *> inits;
  std::vector<Type *> types;
  for (const std::string &name : assignedNames(s->body)) {
    auto it = env->find(name);
    if (it == env->end())
      continue;
    if (!carriable(it->second))
      return fail(s->loc, fmt::format("not supported yet: variable '{}' ({}) is assigned in the "
                                      "loop; only tensors and numbers can be loop-carried",
                                      name, describe(it->second)))
          .ok();
    std::vector<const Val *> leaves;
    carriedLeaves(it->second, nullptr, leaves);
    for (const Val *leaf : leaves) {
      if (!inits.emplace_back(materialize(*leaf, s->loc)))
        return false;
      types.push_back(inits.back()->type());
    }
    carried.push_back(name);
    carriedInit.push_back(it->second);
  }
  Operation *loop = b_.createWhile(s->loc, inits, types);
  Env before = *env;
  ++ret->dynamicDepth;

  // before: the condition over the carried values.
  b_.setInsertionPointToEnd(&loop->body(0));
  size_t next = 0;
  for (size_t i = 0; i < carried.size(); ++i)
    (*env)[carried[i]] = withLeaves(carriedInit[i], loop->body(0).arguments(), next);
  Val cond = expr(s->cond);
  if (!cond.ok()) {
    --ret->dynamicDepth;
    return false;
  }
  Value *c = materialize(cond, s->cond->loc);
  if (!c || c->type()->isTensor()) {
    --ret->dynamicDepth;
    return fail(s->cond->loc,
                fmt::format("the condition of 'while' must be a scalar, got {}", describe(cond)))
        .ok();
  }
  b_.condition(s->cond->loc, castTo(c, ctx_.i1(), s->cond->loc), loop->body(0).arguments());

  // after: the body, yielding the carried values back to `before`.
  *env = before;
  b_.setInsertionPointToEnd(&loop->body(1));
  next = 0;
  for (size_t i = 0; i < carried.size(); ++i)
    (*env)[carried[i]] = withLeaves(carriedInit[i], loop->body(1).arguments(), next);
  bool ok = lowerBlock(s->body);
  --ret->dynamicDepth;
  if (!ok)
    return false;
  std::vector<Value *> yielded;
  if (!carriedValues(carried, carriedInit, inits, s->loc, yielded))
    return false;
  b_.yield(s->loc, yielded);
  b_.setInsertionPointAfter(loop);
  *env = before;
  next = 0;
  for (size_t i = 0; i < carried.size(); ++i)
    (*env)[carried[i]] = withLeaves(carriedInit[i], loop->results(), next);
  return true;
}

//===----------------------------------------------------------------------===//
// Inlining
//===----------------------------------------------------------------------===//

Val Lowerer::inlineCall(const FunctionDef *fn, std::vector<Val> args,
                        std::vector<std::pair<std::string, Val>> kwargs, SourceLoc callLoc) {
  if (inlineDepth >= kMaxInlineDepth)
    return fail(callLoc, fmt::format("helpers nest more than {} deep at the call of '{}'",
                                     kMaxInlineDepth, fn->name));
  if (args.size() > fn->params.size())
    return fail(callLoc, fmt::format("'{}' takes {} arguments, {} given", fn->name,
                                     fn->params.size(), args.size()));
  Env callee;
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const Param &p = fn->params[i];
    std::optional<Val> v;
    if (i < args.size())
      v = args[i];
    for (auto &[name, kv] : kwargs)
      if (name == p.name) {
        if (v)
          return fail(callLoc,
                      fmt::format("'{}' got two values for argument '{}'", fn->name, p.name));
        v = kv;
      }
    if (!v && p.defaultValue) {
      // Defaults are constants of the helper's module, not of the caller.
      Env empty;
      Env *saved = env;
      env = &empty;
      v = expr(p.defaultValue);
      env = saved;
    }
    if (!v)
      return fail(callLoc,
                  fmt::format("missing argument '{}' in the call of '{}'", p.name, fn->name));
    if (!v->ok())
      return Val::error();
    // A helper's tk.constexpr annotation does not make its argument one: as
    // in Triton, whose calls specialise on the arguments that are constants,
    // a run-time value passed there stays a run-time value (upstream tutorial
    // 06 passes offs_m, a tensor, to `offs_m: tl.constexpr`).
    callee[p.name] = *v;
  }
  for (auto &[name, kv] : kwargs) {
    bool known = false;
    for (const Param &p : fn->params)
      known = known || p.name == name;
    if (!known)
      return fail(callLoc, fmt::format("'{}' has no parameter named '{}'", fn->name, name));
  }

  Env *savedEnv = env;
  ReturnState *savedRet = ret;
  ReturnState rs;
  env = &callee;
  ret = &rs;
  ++inlineDepth;
  expanding.push_back({callLoc, fn->name});
  bool ok = lowerBlock(withEarlyExits(fn->body));
  expanding.pop_back();
  --inlineDepth;
  env = savedEnv;
  ret = savedRet;
  if (!ok)
    return Val::error();
  return rs.returned ? rs.value : Val::none();
}

bool Lowerer::inlineCombiner(const FunctionDef *fn, const std::vector<Val> &args, SourceLoc loc,
                             std::vector<Value *> &results) {
  Val r = inlineCall(fn, args, {}, loc);
  if (!r.ok())
    return false;
  std::vector<Val> flat = r.kind == Val::Kind::Tuple ? r.elts : std::vector<Val>{r};
  size_t n = args.size() / 2;
  if (flat.size() != n)
    return fail(loc, fmt::format("combine function '{}' must return {} value{}, returns {}",
                                 fn->name, n, n == 1 ? "" : "s", describe(r)))
        .ok();
  for (size_t i = 0; i < n; ++i) {
    Type *want = args[i].v->type();
    Value *v = materialize(flat[i], loc, want);
    if (!v)
      return false;
    if (v->type() != want)
      return fail(loc, fmt::format("combine function '{}' returns {} for an accumulator of type "
                                   "{}",
                                   fn->name, typeStr(v), want->str()))
          .ok();
    results.push_back(v);
  }
  return true;
}

} // namespace astir

namespace {

// Collects the functions named anywhere under `n` (calls and combine_fn=).
void collectFunctionRefs(const ast::Node *n, std::set<std::string> &out, unsigned depth = 0) {
  using namespace ast;
  if (!n || depth > 512)
    return;
  auto sub = [&](const Node *c) { collectFunctionRefs(c, out, depth + 1); };
  auto block = [&](const ast::Block &b) {
    for (const Stmt *s : b)
      sub(s);
  };
  switch (n->kind) {
  case NodeKind::Name:
    if (cast<Name>(n)->binding == NameBinding::Function)
      out.insert(cast<Name>(n)->id);
    return;
  case NodeKind::Attribute:
    if (!cast<ast::Attribute>(n)->function.empty())
      out.insert(cast<ast::Attribute>(n)->function);
    return sub(cast<ast::Attribute>(n)->value);
  case NodeKind::Call: {
    auto *c = cast<Call>(n);
    sub(c->callee);
    for (const Expr *a : c->args)
      sub(a);
    for (const Keyword &k : c->keywords)
      sub(k.value);
    return;
  }
  case NodeKind::Subscript:
    sub(cast<Subscript>(n)->value);
    for (const Expr *i : cast<Subscript>(n)->indices)
      sub(i);
    return;
  case NodeKind::Tuple:
    for (const Expr *e : cast<Tuple>(n)->elts)
      sub(e);
    return;
  case NodeKind::List:
    for (const Expr *e : cast<List>(n)->elts)
      sub(e);
    return;
  case NodeKind::Binary:
    sub(cast<Binary>(n)->lhs);
    return sub(cast<Binary>(n)->rhs);
  case NodeKind::Unary:
    return sub(cast<Unary>(n)->operand);
  case NodeKind::Compare:
    sub(cast<Compare>(n)->lhs);
    for (const Expr *e : cast<Compare>(n)->comparators)
      sub(e);
    return;
  case NodeKind::BoolOp:
    for (const Expr *e : cast<BoolOp>(n)->values)
      sub(e);
    return;
  case NodeKind::IfExp:
    sub(cast<IfExp>(n)->cond);
    sub(cast<IfExp>(n)->then);
    return sub(cast<IfExp>(n)->orelse);
  case NodeKind::ExprStmt:
    return sub(cast<ExprStmt>(n)->value);
  case NodeKind::Assign:
    return sub(cast<Assign>(n)->value);
  case NodeKind::AugAssign:
    return sub(cast<AugAssign>(n)->value);
  case NodeKind::AnnAssign:
    return sub(cast<AnnAssign>(n)->value);
  case NodeKind::Return:
    return sub(cast<Return>(n)->value);
  case NodeKind::Assert:
    return sub(cast<Assert>(n)->test);
  case NodeKind::If:
    sub(cast<If>(n)->cond);
    block(cast<If>(n)->then);
    return block(cast<If>(n)->orelse);
  case NodeKind::For:
    sub(cast<For>(n)->iter);
    return block(cast<For>(n)->body);
  case NodeKind::While:
    sub(cast<While>(n)->cond);
    return block(cast<While>(n)->body);
  default:
    return;
  }
}

} // namespace

std::vector<const ast::FunctionDef *> kernelEntryPoints(const ast::Module &m) {
  std::set<std::string> referenced;
  for (const ast::FunctionDef *fn : m.functions())
    for (const ast::Stmt *s : fn->body)
      collectFunctionRefs(s, referenced);
  std::vector<const ast::FunctionDef *> kernels;
  for (const ast::FunctionDef *fn : m.functions())
    if (!referenced.count(fn->name))
      kernels.push_back(fn);
  return kernels;
}

Function *lowerKernel(const ast::Module &m, const KernelSpec &spec, IRContext &ctx, Module &out,
                      DiagnosticEngine &diag) {
  astir::Lowerer lowerer(m, spec, ctx, out, diag);
  return lowerer.run();
}

} // namespace tk
