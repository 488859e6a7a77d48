#include "tools/tkc/KernelSummary.h"
#include "ir/ASTToIR.h"
#include "support/Quote.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tk::tkc {
namespace {

using namespace ast;

std::string joined(const std::vector<Expr *> &elts) {
  std::string out;
  for (size_t i = 0; i < elts.size(); ++i)
    out += (i ? ", " : "") + expressionText(elts[i]);
  return out;
}

// Counts statements and collects the functions of the module a function
// names: called (`helper(x)`) or passed on (`tk.reduce(x, 0, combine)`), the
// references that make the other function a helper (kernelEntryPoints).
struct BodyWalker {
  unsigned numStmts = 0;
  std::set<std::string> namedFunctions;

  void block(const ast::Block &b) {
    for (const Stmt *s : b)
      stmt(s);
  }

  void exprs(const std::vector<Expr *> &es) {
    for (const Expr *e : es)
      expr(e);
  }

  void expr(const Expr *e) {
    if (!e)
      return;
    switch (e->kind) {
    case NodeKind::Name:
      if (cast<Name>(e)->binding == NameBinding::Function)
        namedFunctions.insert(cast<Name>(e)->id);
      return;
    case NodeKind::IntLit:
    case NodeKind::FloatLit:
    case NodeKind::BoolLit:
    case NodeKind::NoneLit:
    case NodeKind::StringLit:
      return;
    case NodeKind::Attribute:
      return expr(cast<ast::Attribute>(e)->value);
    case NodeKind::Call: {
      const auto *c = cast<Call>(e);
      expr(c->callee);
      exprs(c->args);
      for (const Keyword &k : c->keywords)
        expr(k.value);
      return;
    }
    case NodeKind::Subscript:
      expr(cast<Subscript>(e)->value);
      return exprs(cast<Subscript>(e)->indices);
    case NodeKind::Slice: {
      const auto *s = cast<Slice>(e);
      expr(s->lower);
      expr(s->upper);
      return expr(s->step);
    }
    case NodeKind::Tuple:
      return exprs(cast<Tuple>(e)->elts);
    case NodeKind::List:
      return exprs(cast<List>(e)->elts);
    case NodeKind::Dict:
      exprs(cast<Dict>(e)->keys);
      return exprs(cast<Dict>(e)->values);
    case NodeKind::Binary:
      expr(cast<Binary>(e)->lhs);
      return expr(cast<Binary>(e)->rhs);
    case NodeKind::Unary:
      return expr(cast<Unary>(e)->operand);
    case NodeKind::Compare:
      expr(cast<Compare>(e)->lhs);
      return exprs(cast<Compare>(e)->comparators);
    case NodeKind::BoolOp:
      return exprs(cast<BoolOp>(e)->values);
    case NodeKind::IfExp: {
      const auto *i = cast<IfExp>(e);
      expr(i->cond);
      expr(i->then);
      return expr(i->orelse);
    }
    default:
      return; // statements are not expressions
    }
  }

  void stmt(const Stmt *s) {
    ++numStmts;
    switch (s->kind) {
    case NodeKind::ExprStmt:
      return expr(cast<ExprStmt>(s)->value);
    case NodeKind::Assign:
      exprs(cast<Assign>(s)->targets);
      return expr(cast<Assign>(s)->value);
    case NodeKind::AugAssign:
      expr(cast<AugAssign>(s)->target);
      return expr(cast<AugAssign>(s)->value);
    case NodeKind::AnnAssign:
      expr(cast<AnnAssign>(s)->target);
      return expr(cast<AnnAssign>(s)->value);
    case NodeKind::If:
      expr(cast<If>(s)->cond);
      block(cast<If>(s)->then);
      return block(cast<If>(s)->orelse);
    case NodeKind::For:
      expr(cast<For>(s)->iter);
      block(cast<For>(s)->body);
      return block(cast<For>(s)->orelse);
    case NodeKind::While:
      expr(cast<While>(s)->cond);
      block(cast<While>(s)->body);
      return block(cast<While>(s)->orelse);
    case NodeKind::Return:
      return expr(cast<Return>(s)->value);
    case NodeKind::Assert:
      expr(cast<Assert>(s)->test);
      return expr(cast<Assert>(s)->msg);
    case NodeKind::FunctionDef:
      return block(cast<FunctionDef>(s)->body);
    default:
      return; // break, continue, pass, imports: nothing inside
    }
  }
};

std::string paramText(const Param &p) {
  std::string out = p.name;
  if (p.annotation)
    out += ": " + expressionText(p.annotation);
  if (p.defaultValue)
    out += (p.annotation ? " = " : "=") + expressionText(p.defaultValue);
  return out;
}

} // namespace

std::string expressionText(const Expr *e) {
  if (!e)
    return "";
  switch (e->kind) {
  case NodeKind::Name:
    return cast<Name>(e)->id;
  case NodeKind::IntLit:
    return fmt::format("{}", cast<IntLit>(e)->value);
  case NodeKind::FloatLit:
    return fmt::format("{}", cast<FloatLit>(e)->value);
  case NodeKind::BoolLit:
    return cast<BoolLit>(e)->value ? "True" : "False";
  case NodeKind::NoneLit:
    return "None";
  case NodeKind::StringLit:
    return quoteString(cast<StringLit>(e)->value);
  case NodeKind::Attribute:
    return expressionText(cast<ast::Attribute>(e)->value) + "." + cast<ast::Attribute>(e)->attr;
  case NodeKind::Call: {
    const auto *c = cast<Call>(e);
    std::string out = expressionText(c->callee) + "(" + joined(c->args);
    for (size_t i = 0; i < c->keywords.size(); ++i)
      out += (i || !c->args.empty() ? ", " : "") + c->keywords[i].name + "=" +
             expressionText(c->keywords[i].value);
    return out + ")";
  }
  case NodeKind::List:
    return fmt::format("[{}]", joined(cast<List>(e)->elts));
  case NodeKind::Tuple:
    return fmt::format("({}{})", joined(cast<Tuple>(e)->elts),
                       cast<Tuple>(e)->elts.size() == 1 ? "," : "");
  case NodeKind::Dict: {
    const auto *d = cast<Dict>(e);
    std::string out = "{";
    for (size_t i = 0; i < d->keys.size() && i < d->values.size(); ++i)
      out += (i ? ", " : "") + expressionText(d->keys[i]) + ": " + expressionText(d->values[i]);
    return out + "}";
  }
  case NodeKind::Unary: {
    const auto *u = cast<Unary>(e);
    std::string op = unaryOpSpelling(u->op);
    return op + (u->op == UnaryOp::Not ? " " : "") + expressionText(u->operand);
  }
  case NodeKind::Binary: {
    const auto *b = cast<Binary>(e);
    return fmt::format("({} {} {})", expressionText(b->lhs), binaryOpSpelling(b->op),
                       expressionText(b->rhs));
  }
  default:
    // Annotations, decorators and defaults are names, calls and literals;
    // anything else is shown by kind rather than re-printed in full.
    return fmt::format("<{}>", nodeKindName(e->kind));
  }
}

std::string summarizeFunctions(const ast::Module &module,
                               const std::vector<const FunctionDef *> &functions,
                               const StageResults &stages) {
  // Kernels are what the compiler takes as entry points (the one rule, also
  // behind tkc's other stages); who names each helper is collected over every
  // function of the module (not only the selected ones), so a helper is
  // labelled as such even under --kernel.
  std::vector<const FunctionDef *> entries = kernelEntryPoints(module);
  std::set<const FunctionDef *> kernels(entries.begin(), entries.end());
  std::map<std::string, std::vector<std::string>> callers;
  std::map<const FunctionDef *, unsigned> numStmts;
  for (const FunctionDef *fn : module.functions()) {
    BodyWalker walker;
    walker.block(fn->body);
    numStmts[fn] = walker.numStmts;
    for (const std::string &callee : walker.namedFunctions)
      if (callee != fn->name)
        callers[callee].push_back(fn->name);
  }

  std::string out;
  for (const FunctionDef *fn : functions) {
    bool isHelper = !kernels.count(fn);
    out += fmt::format("  {} {} (line {}", isHelper ? "helper" : "kernel", fn->name, fn->loc.line);
    if (auto it = callers.find(fn->name); isHelper && it != callers.end()) {
      out += "; called by ";
      for (size_t i = 0; i < it->second.size(); ++i)
        out += (i ? ", " : "") + it->second[i];
    }
    out += ")\n";

    std::string params;
    for (size_t i = 0; i < fn->params.size(); ++i)
      params += (i ? ", " : "") + paramText(fn->params[i]);
    std::string decorators;
    for (size_t i = 0; i < fn->decorators.size(); ++i)
      decorators += fmt::format("{}@{}", i ? " " : "", expressionText(fn->decorators[i]));
    out += fmt::format("    {:<12}{}\n", "params:", params.empty() ? "(none)" : params);
    out += fmt::format("    {:<12}{}\n", "decorators:", decorators.empty() ? "(none)" : decorators);
    out += fmt::format("    {:<12}{}\n", "statements:", numStmts[fn]);
    for (const auto &[stage, result] : stages)
      out += fmt::format("    {:<12}{}\n", stage + ":", result);
  }
  return out;
}

} // namespace tk::tkc
