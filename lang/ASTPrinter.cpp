#include "lang/ASTPrinter.h"
#include "support/Quote.h"

#include <fmt/format.h>

#include <cmath>

namespace tk {
namespace {

using namespace ast;

// Python's repr of a float: shortest round-trip digits, always with a '.' or
// an exponent so it reads as a float (`1.0`, not `1`).
std::string floatText(double v) {
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  if (std::isnan(v))
    return "nan";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

const char *bindingName(NameBinding b) {
  switch (b) {
  case NameBinding::Unresolved:
    return "";
  case NameBinding::Param:
    return "param";
  case NameBinding::Local:
    return "local";
  case NameBinding::Global:
    return "global";
  case NameBinding::Function:
    return "function";
  case NameBinding::Module:
    return "module";
  case NameBinding::Builtin:
    return "builtin";
  case NameBinding::UserModule:
    return "user-module";
  }
  return "";
}

class Printer {
public:
  Printer(std::string &out, const SourceManager &sm) : out_(out), sm_(sm) {}

  void module(const Module &m) {
    line(0, "Module");
    block(1, m.body);
  }

private:
  void line(int indent, std::string_view text) {
    out_.append(2 * indent, ' ');
    out_ += text;
    out_ += '\n';
  }
  void node(int indent, std::string_view text, SourceLoc loc) {
    line(indent, fmt::format("{} @{}:{}", text, sm_.displayLine(loc), loc.col));
  }
  // A labelled optional child: nothing at all when it is absent.
  void field(int indent, std::string_view label, const Expr *e) {
    if (!e)
      return;
    line(indent, fmt::format("{}:", label));
    expr(indent + 1, e);
  }
  void exprList(int indent, std::string_view label, const std::vector<Expr *> &es) {
    if (es.empty())
      return;
    line(indent, fmt::format("{}:", label));
    for (const Expr *e : es)
      expr(indent + 1, e);
  }
  void blockField(int indent, std::string_view label, const Block &b) {
    if (b.empty())
      return;
    line(indent, fmt::format("{}:", label));
    block(indent + 1, b);
  }
  void block(int indent, const Block &b) {
    for (const Stmt *s : b)
      stmt(indent, s);
  }

  void expr(int d, const Expr *e);
  void stmt(int d, const Stmt *s);

  std::string &out_;
  const SourceManager &sm_;
};

void Printer::expr(int d, const Expr *e) {
  switch (e->kind) {
  case NodeKind::Name: {
    auto *n = cast<Name>(e);
    std::string text = "Name " + n->id;
    if (n->binding != NameBinding::Unresolved)
      text += fmt::format(" {}", bindingName(n->binding));
    node(d, text, e->loc);
    return;
  }
  case NodeKind::IntLit:
    node(d, fmt::format("IntLit {}", cast<IntLit>(e)->value), e->loc);
    return;
  case NodeKind::FloatLit:
    node(d, "FloatLit " + floatText(cast<FloatLit>(e)->value), e->loc);
    return;
  case NodeKind::BoolLit:
    node(d, cast<BoolLit>(e)->value ? "BoolLit True" : "BoolLit False", e->loc);
    return;
  case NodeKind::NoneLit:
    node(d, "NoneLit", e->loc);
    return;
  case NodeKind::StringLit:
    node(d, "StringLit " + quoteString(cast<StringLit>(e)->value), e->loc);
    return;
  case NodeKind::Attribute: {
    auto *a = cast<Attribute>(e);
    node(d, "Attribute ." + a->attr, e->loc);
    expr(d + 1, a->value);
    return;
  }
  case NodeKind::Call: {
    auto *c = cast<Call>(e);
    node(d, "Call", e->loc);
    expr(d + 1, c->callee);
    exprList(d + 1, "args", c->args);
    if (!c->keywords.empty()) {
      line(d + 1, "keywords:");
      for (const Keyword &k : c->keywords) {
        node(d + 2, "Keyword " + k.name, k.loc);
        expr(d + 3, k.value);
      }
    }
    return;
  }
  case NodeKind::Subscript: {
    auto *s = cast<Subscript>(e);
    node(d, "Subscript", e->loc);
    expr(d + 1, s->value);
    exprList(d + 1, "indices", s->indices);
    return;
  }
  case NodeKind::Slice: {
    auto *s = cast<Slice>(e);
    node(d, "Slice", e->loc);
    field(d + 1, "lower", s->lower);
    field(d + 1, "upper", s->upper);
    field(d + 1, "step", s->step);
    return;
  }
  case NodeKind::Tuple:
    node(d, fmt::format("Tuple ({} elements)", cast<Tuple>(e)->elts.size()), e->loc);
    for (const Expr *x : cast<Tuple>(e)->elts)
      expr(d + 1, x);
    return;
  case NodeKind::List:
    node(d, fmt::format("List ({} elements)", cast<List>(e)->elts.size()), e->loc);
    for (const Expr *x : cast<List>(e)->elts)
      expr(d + 1, x);
    return;
  case NodeKind::Dict: {
    auto *dict = cast<Dict>(e);
    node(d, fmt::format("Dict ({} entries)", dict->keys.size()), e->loc);
    for (size_t i = 0; i < dict->keys.size(); ++i) {
      line(d + 1, "entry:");
      expr(d + 2, dict->keys[i]);
      expr(d + 2, dict->values[i]);
    }
    return;
  }
  case NodeKind::Binary: {
    auto *b = cast<Binary>(e);
    node(d, fmt::format("Binary {}", binaryOpSpelling(b->op)), e->loc);
    expr(d + 1, b->lhs);
    expr(d + 1, b->rhs);
    return;
  }
  case NodeKind::Unary: {
    auto *u = cast<Unary>(e);
    node(d, fmt::format("Unary {}", unaryOpSpelling(u->op)), e->loc);
    expr(d + 1, u->operand);
    return;
  }
  case NodeKind::Compare: {
    auto *c = cast<Compare>(e);
    std::string text = "Compare";
    for (CmpOp op : c->ops)
      text += fmt::format(" {}", cmpOpSpelling(op));
    node(d, text, e->loc);
    expr(d + 1, c->lhs);
    for (const Expr *x : c->comparators)
      expr(d + 1, x);
    return;
  }
  case NodeKind::BoolOp: {
    auto *b = cast<BoolOp>(e);
    node(d, b->isAnd ? "BoolOp and" : "BoolOp or", e->loc);
    for (const Expr *x : b->values)
      expr(d + 1, x);
    return;
  }
  case NodeKind::IfExp: {
    auto *i = cast<IfExp>(e);
    node(d, "IfExp", e->loc);
    field(d + 1, "cond", i->cond);
    field(d + 1, "then", i->then);
    field(d + 1, "else", i->orelse);
    return;
  }
  default:
    break;
  }
  node(d, nodeKindName(e->kind), e->loc);
}

void Printer::stmt(int d, const Stmt *s) {
  switch (s->kind) {
  case NodeKind::ExprStmt:
    node(d, "ExprStmt", s->loc);
    expr(d + 1, cast<ExprStmt>(s)->value);
    return;
  case NodeKind::Assign: {
    auto *a = cast<Assign>(s);
    node(d, "Assign", s->loc);
    exprList(d + 1, "targets", a->targets);
    field(d + 1, "value", a->value);
    return;
  }
  case NodeKind::AugAssign: {
    auto *a = cast<AugAssign>(s);
    node(d, fmt::format("AugAssign {}=", binaryOpSpelling(a->op)), s->loc);
    expr(d + 1, a->target);
    expr(d + 1, a->value);
    return;
  }
  case NodeKind::AnnAssign: {
    auto *a = cast<AnnAssign>(s);
    node(d, "AnnAssign", s->loc);
    expr(d + 1, a->target);
    field(d + 1, "annotation", a->annotation);
    field(d + 1, "value", a->value);
    return;
  }
  case NodeKind::If: {
    auto *i = cast<If>(s);
    node(d, i->isElif ? "If elif" : "If", s->loc);
    expr(d + 1, i->cond);
    blockField(d + 1, "then", i->then);
    blockField(d + 1, "orelse", i->orelse);
    return;
  }
  case NodeKind::For: {
    auto *f = cast<For>(s);
    node(d, "For", s->loc);
    field(d + 1, "target", f->target);
    field(d + 1, "iter", f->iter);
    blockField(d + 1, "body", f->body);
    blockField(d + 1, "orelse", f->orelse);
    return;
  }
  case NodeKind::While: {
    auto *w = cast<While>(s);
    node(d, "While", s->loc);
    expr(d + 1, w->cond);
    blockField(d + 1, "body", w->body);
    blockField(d + 1, "orelse", w->orelse);
    return;
  }
  case NodeKind::Return:
    node(d, "Return", s->loc);
    if (const Expr *v = cast<Return>(s)->value)
      expr(d + 1, v);
    return;
  case NodeKind::Assert: {
    auto *a = cast<Assert>(s);
    node(d, "Assert", s->loc);
    expr(d + 1, a->test);
    field(d + 1, "msg", a->msg);
    return;
  }
  case NodeKind::FunctionDef: {
    auto *f = cast<FunctionDef>(s);
    node(d, "FunctionDef " + f->name, s->loc);
    exprList(d + 1, "decorators", f->decorators);
    if (!f->params.empty()) {
      line(d + 1, "params:");
      for (const Param &p : f->params) {
        node(d + 2, "Param " + p.name, p.loc);
        field(d + 3, "annotation", p.annotation);
        field(d + 3, "default", p.defaultValue);
      }
    }
    field(d + 1, "returns", f->returns);
    blockField(d + 1, "body", f->body);
    return;
  }
  case NodeKind::Import:
  case NodeKind::ImportFrom: {
    const std::vector<ImportAlias> *names;
    if (auto *i = dyn_cast<Import>(s)) {
      node(d, "Import", s->loc);
      names = &i->names;
    } else {
      auto *f = cast<ImportFrom>(s);
      node(d, "ImportFrom " + f->module, s->loc);
      names = &f->names;
    }
    for (const ImportAlias &a : *names)
      node(d + 1, a.asname.empty() ? "Alias " + a.name : "Alias " + a.name + " as " + a.asname,
           a.loc);
    return;
  }
  default: // Break, Continue, Pass: the kind says everything
    node(d, nodeKindName(s->kind), s->loc);
    return;
  }
}

} // namespace

std::string printAST(const ast::Module &m, const SourceManager &sm) {
  std::string out;
  Printer(out, sm).module(m);
  return out;
}

} // namespace tk
