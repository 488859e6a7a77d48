// The state shared by the parts of AST -> IR lowering (internal to
// ir/ASTToIR*.cpp; the entry point is ir/ASTToIR.h):
//
//   ASTToIR.cpp          statements, control flow, inlining, the entry point
//   ASTToIRExpr.cpp      expressions, constant folding, promotion, broadcasting
//   ASTToIRCalls.cpp     calls of tk.* builtins and tensor members: arguments
//                        bound to the builtin's signature
//   ASTToIRBuiltins*.cpp the builtins, one function per family
//                        (ASTToIRBuiltins.h lists them)
//
// A lowered expression is a Val: an IR value, or a compile-time constant. For
// `offs = pid * BLOCK + tk.arange(0, BLOCK)` with BLOCK = 128, `pid` is
// Val::dyn(%0 : i32), `BLOCK` is Val::ofInt(128), `pid * BLOCK` materialises
// 128 as an i32 constant (a Python int takes the type of its integer partner)
// and multiplies, and the `+` splats that scalar to the arange's [128].
#pragma once

#include "ir/ASTToIR.h"
#include "ir/Builder.h"
#include "lang/Builtins.h"

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tk::astir {

struct Val {
  enum class Kind : uint8_t {
    Error, // lowering failed here; already reported
    Dyn,   // an IR value
    None,
    Bool,
    Int,
    Float,
    Str,
    DType, // a dtype: `type` is a scalar or pointer IR type
    Tuple,
    Func,    // a @tk.jit function
    Module,  // the tk module itself
    Builtin, // a tk builtin named by getattr: a function, enum or namespace
    // A block pointer (tk.make_block_ptr, i == 0) or a tensor descriptor
    // (tk.make_tensor_descriptor or a TensorDescriptor argument, i == 1): a
    // front-end aggregate, lowered to pointer arithmetic and masks where it
    // is loaded or stored (ASTToIRBuiltinsDescriptor.cpp). `elts` are its
    // run-time parts [base, shape..., strides..., offsets... (block
    // pointers only)], each a scalar IR value or an Int; `dims` the block
    // shape; `s` the padding ("", "zero" or "nan"); `type` the element dtype.
    Desc,
    // Triton's constexpr_type(value): the `.type` of a compile-time value,
    // `elts[0]` the value.
    ConstexprType,
  };
  Kind kind = Kind::Error;
  Value *v = nullptr;
  int64_t i = 0; // Int, and Bool (0/1)
  double f = 0;
  std::string s;
  Type *type = nullptr;
  std::vector<Val> elts;
  const ast::FunctionDef *fn = nullptr;
  const BuiltinInfo *builtin = nullptr; // Builtin
  std::vector<int64_t> dims;            // Desc: the block shape
  // A compile-time number assigned to a plain (not tk.constexpr) variable:
  // Triton makes that a tensor, so its `.type` is the number's dtype rather
  // than constexpr_type (the value itself stays a constant here).
  bool lifted = false;

  static Val error() { return {}; }
  static Val dyn(Value *value) {
    Val r;
    r.kind = Kind::Dyn;
    r.v = value;
    return r;
  }
  static Val none() {
    Val r;
    r.kind = Kind::None;
    return r;
  }
  static Val ofBool(bool b) {
    Val r;
    r.kind = Kind::Bool;
    r.i = b;
    return r;
  }
  static Val ofInt(int64_t i) {
    Val r;
    r.kind = Kind::Int;
    r.i = i;
    return r;
  }
  static Val ofFloat(double f) {
    Val r;
    r.kind = Kind::Float;
    r.f = f;
    return r;
  }
  static Val ofStr(std::string s) {
    Val r;
    r.kind = Kind::Str;
    r.s = std::move(s);
    return r;
  }
  static Val ofType(Type *t) {
    Val r;
    r.kind = Kind::DType;
    r.type = t;
    return r;
  }
  static Val tuple(std::vector<Val> elts) {
    Val r;
    r.kind = Kind::Tuple;
    r.elts = std::move(elts);
    return r;
  }

  bool ok() const { return kind != Kind::Error; }
  bool isDyn() const { return kind == Kind::Dyn; }
  /// A number or bool known at compile time (what a tensor op can materialise).
  bool isScalarConst() const {
    return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float;
  }
  bool isConst() const { return kind != Kind::Error && kind != Kind::Dyn && !hasDyn(); }
  bool hasDyn() const;
};

/// Describes a value for messages: "tensor<128xfp32>", "constexpr int 3", "tuple".
std::string describe(const Val &v);

/// The local variables of one function being lowered (a helper inlined at a
/// call gets its own).
using Env = std::map<std::string, Val>;

struct Args; // ASTToIRArgs.h

class Lowerer {
public:
  Lowerer(const ast::Module &m, const KernelSpec &spec, IRContext &ctx, Module &out,
          DiagnosticEngine &diag)
      : astModule_(m), spec_(spec), ctx_(ctx), module_(out), diag_(diag), b_(ctx) {}

  Function *run();

  // --- shared by the three files ---------------------------------------

  IRContext &ctx() { return ctx_; }
  Builder &builder() { return b_; }
  DiagnosticEngine &diag() { return diag_; }
  /// The compile's num_warps (KernelSpec::numWarps).
  int numWarps() const { return spec_.numWarps; }
  /// Reports an error and returns Val::error().
  Val fail(SourceLoc loc, std::string message);

  // Statements (ASTToIR.cpp).
  bool lowerBlock(const ast::Block &block);
  bool lowerStmt(const ast::Stmt *s);
  /// Inlines `fn` called with `args` (positional) and `kwargs`; the value its
  /// `return` gives (None without one).
  Val inlineCall(const ast::FunctionDef *fn, std::vector<Val> args,
                 std::vector<std::pair<std::string, Val>> kwargs, SourceLoc callLoc);
  /// Inlines a combine function into the current block with `args` bound; the
  /// values it returns, flattened.
  bool inlineCombiner(const ast::FunctionDef *fn, const std::vector<Val> &args, SourceLoc loc,
                      std::vector<Value *> &results);

  // Expressions (ASTToIRExpr.cpp).
  Val expr(const ast::Expr *e);
  /// `x if c else y` for a run-time scalar condition `c` (i1).
  Val dynamicIfExp(const ast::IfExp *ie, Value *c);
  Val binary(ast::BinaryOp op, Val a, Val b, SourceLoc loc);
  Val compare(ast::CmpOp op, Val a, Val b, SourceLoc loc);
  Val unary(ast::UnaryOp op, Val a, SourceLoc loc);
  /// Python truthiness of a constant (nullopt for a dynamic value).
  std::optional<bool> constTruth(const Val &v);
  /// An IR value for `v`: a dynamic value as is, a constant materialised in
  /// its default type (int: i32, or i64 when it does not fit; float: fp32;
  /// bool: i1), or in the element type `like` when given (Python scalars take
  /// the type of a tensor of the same kind).
  Value *materialize(const Val &v, SourceLoc loc, Type *like = nullptr);
  /// The dtype Triton's to_tensor gives a compile-time number: a bool i1; an
  /// int the first of i32, u32, i64 that holds it; a float fp32 when it is 0,
  /// inf, nan or within fp32's normal range, else fp64. Null for other values.
  Type *constantDType(const Val &v);
  /// Converts `v` to element type `elem` (keeping its shape).
  Value *castTo(Value *v, Type *elem, SourceLoc loc, bool bitcast = false);
  /// Triton's promotion of two element types for arithmetic; null (after
  /// reporting) when there is none.
  Type *promote(Type *a, Type *b, SourceLoc loc, const char *what);
  /// NumPy broadcasting of two shapes; nullopt (after reporting) when they
  /// do not broadcast.
  std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                      const std::vector<int64_t> &b, SourceLoc loc);
  /// `v` (scalar or tensor) stretched to `shape` (splat, expand, broadcast).
  Value *broadcastTo(Value *v, const std::vector<int64_t> &shape, SourceLoc loc);
  /// Materialises and broadcasts two operands of an elementwise op to one
  /// shape and (when `elem` is given) to one element type.
  bool unify(Val a, Val b, SourceLoc loc, Value *&x, Value *&y, const char *what,
             bool promoteTypes = true);
  /// Whether the compile-time int `c` may take the integer type of
  /// `partner` in `what` (in range; not negative beside an unsigned type);
  /// reports it when not. True for anything else.
  bool constantFits(const Val &c, Value *partner, SourceLoc loc, const char *what);

  // Builtins (ASTToIRCalls.cpp).
  Val callBuiltin(const BuiltinInfo &info, const ast::Call *call);
  Val callMethod(const Val &self, const ast::Attribute *callee, const ast::Call *call);
  /// `self.attr` for a property of a tensor, dtype or number.
  Val member(const Val &self, const std::string &attr, SourceLoc attrLoc, SourceLoc loc);
  /// getattr(object, name[, default]) with a compile-time string name.
  /// `e` as a value, where a name of tk, a namespace, an enum or a type
  /// marker (which elsewhere can only be called) is a builtin reference:
  /// getattr's object, hasattr's and isinstance's arguments.
  Val exprOrBuiltin(const ast::Expr *e);
  Val getattrCall(const ast::Call *call);
  /// hasattr(obj, name) and isinstance(obj, classes), answered at compile time.
  Val introspectionCall(const BuiltinInfo &info, const ast::Call *call);
  Val builtinValue(const BuiltinInfo &info, SourceLoc loc);
  Val subscript(const ast::Subscript *s);
  bool sliceBounds(const ast::Slice *sl, Val (&out)[3]);
  /// x.item(): the element of a one-element tensor as a scalar.
  Val item(const Val &self, SourceLoc loc);
  /// x.logical_and(other) / x.logical_or(other) on booleans.
  Val logicalMethod(const Val &self, bool isAnd, const ast::Attribute *callee,
                    const ast::Call *call);
  /// A method of a block pointer or tensor descriptor (desc.load(...)).
  Val descriptorMethod(const Val &self, const ast::Attribute *callee, const ast::Call *call);

  // --- state ------------------------------------------------------------

  /// The variables of the function being lowered.
  Env *env = nullptr;
  /// Set by `return` in the function being inlined.
  struct ReturnState {
    bool returned = false;
    Val value = Val::none();
    SourceLoc loc;             // of the `return` that set `returned`
    unsigned dynamicDepth = 0; // inside a dynamic for/while of this function
  };
  ReturnState *ret = nullptr;
  unsigned inlineDepth = 0;

  /// A function body with its `return`s in ifs made structured: an `if`
  /// with one in either branch (at any depth of ifs, not in loops) takes
  /// what follows it into both branches, and a return drops what follows
  /// it (a bare return goes too; `return v` stays, the last statement of
  /// its branch). `if pid >= n: return` at the top becomes `if pid >= n:
  /// ... else: <the rest>`; nested in dynamic ifs the same. So an if that
  /// holds a return is the last statement of its function, and lowerIf
  /// joins the values its branches return like a variable both assign. The
  /// ifs it makes live in rewrittenIfs_ (exitIfs_ to look them up).
  ast::Block withEarlyExits(ast::Block stmts);
  std::deque<ast::If> rewrittenIfs_;
  std::set<const ast::If *> exitIfs_;

  /// The compile's budget (IRContext::limits): true while this kernel's
  /// lowering has made no more operations and statements than maxOps allows
  /// and no interruption was asked for; else false after an error at `loc`
  /// that names the limit and what to change, with a note at each
  /// tk.static_range iteration and helper call being expanded.
  bool withinBudget(SourceLoc loc);
  /// A tk.static_range iteration or a helper call being expanded, for the
  /// budget's notes (innermost last).
  struct Expansion {
    SourceLoc loc;
    std::string helper;    // the helper called, or "" for a tk.static_range
    int64_t iteration = 0; // of a tk.static_range: which, of `count`
    int64_t count = 0;
  };
  std::vector<Expansion> expanding;

  /// A module-level name: -D, then a module constant (folded on first use).
  Val global(const std::string &name, SourceLoc loc);

private:
  const ast::Module &astModule_;
  const KernelSpec &spec_;
  IRContext &ctx_;
  Module &module_;
  DiagnosticEngine &diag_;
  Builder b_;
  std::map<std::string, Val> globals_;
  int64_t statements_ = 0; // lowered, for the budget
  std::vector<std::string> globalsInProgress_;

  bool lowerIf(const ast::If *s);
  bool lowerFor(const ast::For *s);
  bool lowerStaticRange(const ast::For *s, const ast::Call *iter);
  bool rangeBounds(const ast::Call *iter, const BuiltinInfo &info, Args &args,
                   std::vector<Val> &bounds);
  bool lowerWhile(const ast::While *s);
  /// The IR values a loop body yields for its carried variables: each
  /// variable's leaves now (carriedLeaves in ASTToIR.cpp), in the types of
  /// `inits`; false after reporting a variable whose shape or type changed.
  bool carriedValues(const std::vector<std::string> &carried, const std::vector<Val> &carriedInit,
                     const std::vector<Value *> &inits, SourceLoc loc, std::vector<Value *> &out);
  bool assign(const ast::Expr *target, Val value, SourceLoc loc);
};

/// The builtin `e` names (`tk.range`, `range`, `load` after `from tk import
/// load`), or null.
const BuiltinInfo *namedBuiltin(const ast::Expr *e);

/// Names assigned anywhere in `block` (nested statements included), sorted.
std::vector<std::string> assignedNames(const ast::Block &block);

/// "tensor<128xfp32>" or "i32" for an IR value.
inline std::string typeStr(Value *v) { return v->type()->str(); }

} // namespace tk::astir
