// The AST of tk's Python subset.
//
// The parser builds it, the semantic checks annotate it (name resolution,
// builtin ids), and AST -> IR lowering reads it. Nodes live in an
// ast::Context arena and point at each other with plain pointers, so lowering
// can walk a helper's body many times (inlining) without copying it.
//
// The shapes follow Python's own `ast` module, cut down to what a kernel can
// say. For
//
//   @tk.jit
//   def add(x_ptr, y_ptr, n, BLOCK: tk.constexpr):
//       offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
//       tk.store(y_ptr + offs, tk.load(x_ptr + offs, mask=offs < n), mask=offs < n)
//
// the module holds one FunctionDef with one decorator (Attribute(Name "tk",
// "jit")), four Params (the last annotated with Attribute(Name "tk",
// "constexpr")), and a body of an Assign and an ExprStmt whose Call has two
// positional args and one Keyword "mask".
//
// Every node carries the location of its first character; binary and compare
// nodes carry the location of the operator in `opLoc` as well, which is where
// a type error in that operator points.
#pragma once

#include "lang/SourceManager.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tk::ast {

enum class NodeKind : uint8_t {
  // Expressions.
  Name,
  IntLit,
  FloatLit,
  BoolLit,
  NoneLit,
  StringLit,
  Attribute,
  Call,
  Subscript,
  Slice,
  Tuple,
  List,
  Dict,
  Binary,
  Unary,
  Compare,
  BoolOp,
  IfExp,
  // Statements.
  ExprStmt,
  Assign,
  AugAssign,
  AnnAssign,
  If,
  For,
  While,
  Break,
  Continue,
  Return,
  Pass,
  Assert,
  FunctionDef,
  Import,
  ImportFrom,
};

const char *nodeKindName(NodeKind k);

struct Node {
  NodeKind kind;
  SourceLoc loc;

protected:
  Node(NodeKind k, SourceLoc l) : kind(k), loc(l) {}

public:
  virtual ~Node() = default;
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
};

// LLVM-style casts on `kind`: isa<Call>(e), cast<Call>(e), dyn_cast<Call>(e).
template <class T> bool isa(const Node *n) { return n && T::classof(n); }
template <class T> T *cast(Node *n) { return static_cast<T *>(n); }
template <class T> const T *cast(const Node *n) { return static_cast<const T *>(n); }
template <class T> T *dyn_cast(Node *n) { return isa<T>(n) ? static_cast<T *>(n) : nullptr; }
template <class T> const T *dyn_cast(const Node *n) {
  return isa<T>(n) ? static_cast<const T *>(n) : nullptr;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Expr : Node {
  static bool classof(const Node *n) { return n->kind <= NodeKind::IfExp; }

protected:
  Expr(NodeKind k, SourceLoc l) : Node(k, l) {}
};

/// What a Name refers to; filled in by the semantic checks.
enum class NameBinding : uint8_t {
  Unresolved,
  Param,    // a parameter of the enclosing function
  Local,    // a variable assigned in the enclosing function
  Global,   // a module-level constant (constexpr global)
  Function, // a @tk.jit function of the same module
  Module,   // the `tk` module or an alias of it (`import tk as tl`)
  Builtin,  // a name imported from tk (`from tk import load`) or a Python builtin (`range`, `min`,
            // ...)
  UserModule, // a Python module other than tk's whose @tk.jit functions the kernel calls
              // (`triton_helpers.maximum`; CheckOptions::externalUserModules)
};

#define TK_AST_LEAF(NAME)                                                                          \
  static bool classof(const Node *n) { return n->kind == NodeKind::NAME; }

struct Name : Expr {
  TK_AST_LEAF(Name)
  std::string id;
  NameBinding binding = NameBinding::Unresolved;
  int builtin = -1; // index into the builtin table when binding == Builtin
  Name(SourceLoc l, std::string i) : Expr(NodeKind::Name, l), id(std::move(i)) {}
};

struct IntLit : Expr {
  TK_AST_LEAF(IntLit)
  uint64_t value; // literals are non-negative; `-1` is Unary(Neg, IntLit 1)
  IntLit(SourceLoc l, uint64_t v) : Expr(NodeKind::IntLit, l), value(v) {}
};

struct FloatLit : Expr {
  TK_AST_LEAF(FloatLit)
  double value;
  FloatLit(SourceLoc l, double v) : Expr(NodeKind::FloatLit, l), value(v) {}
};

struct BoolLit : Expr {
  TK_AST_LEAF(BoolLit)
  bool value;
  BoolLit(SourceLoc l, bool v) : Expr(NodeKind::BoolLit, l), value(v) {}
};

struct NoneLit : Expr {
  TK_AST_LEAF(NoneLit)
  explicit NoneLit(SourceLoc l) : Expr(NodeKind::NoneLit, l) {}
};

struct StringLit : Expr {
  TK_AST_LEAF(StringLit)
  std::string value; // escapes already decoded; adjacent literals concatenated
  StringLit(SourceLoc l, std::string v) : Expr(NodeKind::StringLit, l), value(std::move(v)) {}
};

/// `value.attr`, e.g. `tk.load` or `x.to`.
struct Attribute : Expr {
  TK_AST_LEAF(Attribute)
  Expr *value;
  std::string attr;
  SourceLoc attrLoc;
  int builtin = -1; // index into the builtin table when `value` is the tk module
  // The @tk.jit function this names when `value` is a user module
  // (NameBinding::UserModule); empty otherwise.
  std::string function;
  Attribute(SourceLoc l, Expr *v, std::string a, SourceLoc al)
      : Expr(NodeKind::Attribute, l), value(v), attr(std::move(a)), attrLoc(al) {}
};

struct Keyword {
  SourceLoc loc; // of the keyword name
  std::string name;
  Expr *value;
};

struct Call : Expr {
  TK_AST_LEAF(Call)
  Expr *callee;
  std::vector<Expr *> args;
  std::vector<Keyword> keywords;
  Call(SourceLoc l, Expr *c) : Expr(NodeKind::Call, l), callee(c) {}
};

/// `value[i, j]`: one entry per comma-separated index; an entry is an Expr,
/// a Slice, or a NoneLit (a new axis).
struct Subscript : Expr {
  TK_AST_LEAF(Subscript)
  Expr *value;
  std::vector<Expr *> indices;
  Subscript(SourceLoc l, Expr *v) : Expr(NodeKind::Subscript, l), value(v) {}
};

/// `lower:upper:step` inside a subscript; absent parts are null.
struct Slice : Expr {
  TK_AST_LEAF(Slice)
  Expr *lower = nullptr;
  Expr *upper = nullptr;
  Expr *step = nullptr;
  explicit Slice(SourceLoc l) : Expr(NodeKind::Slice, l) {}
};

struct Tuple : Expr {
  TK_AST_LEAF(Tuple)
  std::vector<Expr *> elts;
  explicit Tuple(SourceLoc l) : Expr(NodeKind::Tuple, l) {}
};

struct List : Expr {
  TK_AST_LEAF(List)
  std::vector<Expr *> elts;
  explicit List(SourceLoc l) : Expr(NodeKind::List, l) {}
};

/// `{"BLOCK": 128}`: accepted by the parser only inside decorators, for
/// `tk.Config({...}, num_warps=4)` in `@tk.autotune(configs=[...])`.
struct Dict : Expr {
  TK_AST_LEAF(Dict)
  std::vector<Expr *> keys;
  std::vector<Expr *> values;
  explicit Dict(SourceLoc l) : Expr(NodeKind::Dict, l) {}
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,      // /
  FloorDiv, // //
  Mod,
  Pow,
  MatMul, // @
  LShift,
  RShift,
  BitAnd,
  BitOr,
  BitXor,
};
/// "+", "//", "<<", ...
const char *binaryOpSpelling(BinaryOp op);

struct Binary : Expr {
  TK_AST_LEAF(Binary)
  BinaryOp op;
  Expr *lhs;
  Expr *rhs;
  SourceLoc opLoc;
  Binary(SourceLoc l, BinaryOp o, Expr *a, Expr *b, SourceLoc ol)
      : Expr(NodeKind::Binary, l), op(o), lhs(a), rhs(b), opLoc(ol) {}
};

enum class UnaryOp : uint8_t { Neg, Pos, Invert, Not };
const char *unaryOpSpelling(UnaryOp op); // "-", "+", "~", "not"

struct Unary : Expr {
  TK_AST_LEAF(Unary)
  UnaryOp op;
  Expr *operand;
  Unary(SourceLoc l, UnaryOp o, Expr *e) : Expr(NodeKind::Unary, l), op(o), operand(e) {}
};

enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Is, IsNot, In, NotIn };
const char *cmpOpSpelling(CmpOp op); // "==", "is not", ...

/// `a < b <= c` is one Compare with ops {Lt, Le} and comparators {b, c}.
struct Compare : Expr {
  TK_AST_LEAF(Compare)
  Expr *lhs;
  std::vector<CmpOp> ops;
  std::vector<Expr *> comparators;
  std::vector<SourceLoc> opLocs;
  Compare(SourceLoc l, Expr *a) : Expr(NodeKind::Compare, l), lhs(a) {}
};

/// `a and b and c` (isAnd) or `a or b`.
struct BoolOp : Expr {
  TK_AST_LEAF(BoolOp)
  bool isAnd;
  std::vector<Expr *> values;
  BoolOp(SourceLoc l, bool a) : Expr(NodeKind::BoolOp, l), isAnd(a) {}
};

/// `then if cond else orelse`
struct IfExp : Expr {
  TK_AST_LEAF(IfExp)
  Expr *cond;
  Expr *then;
  Expr *orelse;
  IfExp(SourceLoc l, Expr *c, Expr *t, Expr *e)
      : Expr(NodeKind::IfExp, l), cond(c), then(t), orelse(e) {}
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

struct Stmt : Node {
  static bool classof(const Node *n) { return n->kind >= NodeKind::ExprStmt; }

protected:
  Stmt(NodeKind k, SourceLoc l) : Node(k, l) {}
};

using Block = std::vector<Stmt *>;

struct ExprStmt : Stmt {
  TK_AST_LEAF(ExprStmt)
  Expr *value;
  ExprStmt(SourceLoc l, Expr *v) : Stmt(NodeKind::ExprStmt, l), value(v) {}
};

/// `a = b = value`; a target is a Name, a Tuple/List of targets, or (rejected
/// by the checks inside kernels) a Subscript or Attribute.
struct Assign : Stmt {
  TK_AST_LEAF(Assign)
  std::vector<Expr *> targets;
  Expr *value;
  Assign(SourceLoc l, Expr *v) : Stmt(NodeKind::Assign, l), value(v) {}
};

struct AugAssign : Stmt {
  TK_AST_LEAF(AugAssign)
  Expr *target;
  BinaryOp op;
  Expr *value;
  SourceLoc opLoc;
  AugAssign(SourceLoc l, Expr *t, BinaryOp o, Expr *v, SourceLoc ol)
      : Stmt(NodeKind::AugAssign, l), target(t), op(o), value(v), opLoc(ol) {}
};

/// `target: annotation = value` (value may be null), e.g. a module-level
/// `BLOCK: tk.constexpr = 128`.
struct AnnAssign : Stmt {
  TK_AST_LEAF(AnnAssign)
  Expr *target;
  Expr *annotation;
  Expr *value;
  AnnAssign(SourceLoc l, Expr *t, Expr *a, Expr *v)
      : Stmt(NodeKind::AnnAssign, l), target(t), annotation(a), value(v) {}
};

/// `if` / `elif` / `else`: an `elif` is an If alone in `orelse` with isElif set.
struct If : Stmt {
  TK_AST_LEAF(If)
  Expr *cond;
  Block then;
  Block orelse;
  bool isElif = false;
  If(SourceLoc l, Expr *c) : Stmt(NodeKind::If, l), cond(c) {}
};

/// `for target in iter:`; `iter` is a call of range / tk.range / tk.static_range.
struct For : Stmt {
  TK_AST_LEAF(For)
  Expr *target;
  Expr *iter;
  Block body;
  Block orelse; // `for ... else` parses; the checks reject it
  For(SourceLoc l, Expr *t, Expr *i) : Stmt(NodeKind::For, l), target(t), iter(i) {}
};

struct While : Stmt {
  TK_AST_LEAF(While)
  Expr *cond;
  Block body;
  Block orelse; // parses; the checks reject it
  While(SourceLoc l, Expr *c) : Stmt(NodeKind::While, l), cond(c) {}
};

struct Break : Stmt {
  TK_AST_LEAF(Break)
  explicit Break(SourceLoc l) : Stmt(NodeKind::Break, l) {}
};

struct Continue : Stmt {
  TK_AST_LEAF(Continue)
  explicit Continue(SourceLoc l) : Stmt(NodeKind::Continue, l) {}
};

struct Return : Stmt {
  TK_AST_LEAF(Return)
  Expr *value; // may be null
  Return(SourceLoc l, Expr *v) : Stmt(NodeKind::Return, l), value(v) {}
};

struct Pass : Stmt {
  TK_AST_LEAF(Pass)
  explicit Pass(SourceLoc l) : Stmt(NodeKind::Pass, l) {}
};

/// Python's `assert cond, msg`: a device assert, as in Triton.
struct Assert : Stmt {
  TK_AST_LEAF(Assert)
  Expr *test;
  Expr *msg; // may be null
  Assert(SourceLoc l, Expr *t, Expr *m) : Stmt(NodeKind::Assert, l), test(t), msg(m) {}
};

struct Param {
  SourceLoc loc;
  std::string name;
  Expr *annotation = nullptr; // `tk.constexpr`, a string like "*fp32:16", or null
  Expr *defaultValue = nullptr;
};

struct FunctionDef : Stmt {
  TK_AST_LEAF(FunctionDef)
  std::string name;
  SourceLoc nameLoc;
  std::vector<Expr *> decorators; // `tk.jit`, `tk.jit(do_not_specialize=[...])`, ...
  std::vector<Param> params;
  Expr *returns = nullptr; // `-> annotation`, parsed and ignored
  Block body;
  FunctionDef(SourceLoc l, std::string n, SourceLoc nl)
      : Stmt(NodeKind::FunctionDef, l), name(std::move(n)), nameLoc(nl) {}
};

struct ImportAlias {
  SourceLoc loc;
  std::string name;   // dotted: "tk", "tk.language", "load"
  std::string asname; // empty when there is no `as`
};

/// `import tk`, `import tk as tl`, `import triton.language as tl`
struct Import : Stmt {
  TK_AST_LEAF(Import)
  std::vector<ImportAlias> names;
  explicit Import(SourceLoc l) : Stmt(NodeKind::Import, l) {}
};

/// `from tk import load, store as st`
struct ImportFrom : Stmt {
  TK_AST_LEAF(ImportFrom)
  std::string module;
  std::vector<ImportAlias> names;
  ImportFrom(SourceLoc l, std::string m) : Stmt(NodeKind::ImportFrom, l), module(std::move(m)) {}
};

#undef TK_AST_LEAF

/// A parsed file (or the source of one @tk.jit function).
struct Module {
  BufferId buffer = kNoBuffer;
  Block body;

  /// The kernel or helper named `name`, or null.
  FunctionDef *findFunction(std::string_view name) const;
  std::vector<FunctionDef *> functions() const;
};

/// Owns every node. Nodes are never freed one by one.
class Context {
public:
  template <class T, class... Args> T *make(Args &&...args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }
  /// Modules are not nodes; the context owns them too (parseModule makes one).
  Module *makeModule() {
    modules_.push_back(std::make_unique<Module>());
    return modules_.back().get();
  }
  size_t numNodes() const { return nodes_.size(); }

private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Module>> modules_;
};

} // namespace tk::ast
