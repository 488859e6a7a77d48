// Parser tests: tree shapes for precedence and associativity, every statement
// form, every rejected construct with its message at its line:col, error
// recovery, nesting limits, and the AST printer.
#include "parser/Parser.h"
#include "lang/ASTPrinter.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

using namespace tk;
using namespace tk::ast;

namespace {

struct Parsed {
  SourceManager sm;
  DiagnosticEngine diag{sm};
  Context ctx;
  Module *m;

  explicit Parsed(std::string text) {
    BufferId id = sm.addBuffer("t.tk", std::move(text));
    m = parseModule(sm, id, ctx, diag);
  }
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diag.diagnostics())
      out.push_back(fmt::format("{}:{}: {}", d.loc.line, d.loc.col, d.message));
    return out;
  }
  Stmt *stmt(size_t i) const { return m->body.at(i); }
};

// A compact S-expression of an expression tree, so that shapes read at a
// glance: `a + b * c` is "(+ a (* b c))".
std::string sx(const Expr *e) {
  if (!e)
    return "_";
  switch (e->kind) {
  case NodeKind::Name:
    return cast<Name>(e)->id;
  case NodeKind::IntLit:
    return std::to_string(cast<IntLit>(e)->value);
  case NodeKind::FloatLit:
    return fmt::format("{}f", cast<FloatLit>(e)->value);
  case NodeKind::BoolLit:
    return cast<BoolLit>(e)->value ? "True" : "False";
  case NodeKind::NoneLit:
    return "None";
  case NodeKind::StringLit:
    return "'" + cast<StringLit>(e)->value + "'";
  case NodeKind::Attribute:
    return sx(cast<Attribute>(e)->value) + "." + cast<Attribute>(e)->attr;
  case NodeKind::Binary: {
    auto *b = cast<Binary>(e);
    return fmt::format("({} {} {})", binaryOpSpelling(b->op), sx(b->lhs), sx(b->rhs));
  }
  case NodeKind::Unary: {
    auto *u = cast<Unary>(e);
    return fmt::format("({} {})", unaryOpSpelling(u->op), sx(u->operand));
  }
  case NodeKind::Compare: {
    auto *c = cast<Compare>(e);
    std::string s = "(cmp " + sx(c->lhs);
    for (size_t i = 0; i < c->ops.size(); ++i)
      s += fmt::format(" {} {}", cmpOpSpelling(c->ops[i]), sx(c->comparators[i]));
    return s + ")";
  }
  case NodeKind::BoolOp: {
    auto *b = cast<BoolOp>(e);
    std::string s = b->isAnd ? "(and" : "(or";
    for (const Expr *v : b->values)
      s += " " + sx(v);
    return s + ")";
  }
  case NodeKind::IfExp: {
    auto *i = cast<IfExp>(e);
    return fmt::format("(ifexp {} {} {})", sx(i->cond), sx(i->then), sx(i->orelse));
  }
  case NodeKind::Call: {
    auto *c = cast<Call>(e);
    std::string s = "(call " + sx(c->callee);
    for (const Expr *a : c->args)
      s += " " + sx(a);
    for (const Keyword &k : c->keywords)
      s += " " + k.name + "=" + sx(k.value);
    return s + ")";
  }
  case NodeKind::Subscript: {
    auto *s = cast<Subscript>(e);
    std::string out = "(index " + sx(s->value);
    for (const Expr *i : s->indices)
      out += " " + sx(i);
    return out + ")";
  }
  case NodeKind::Slice: {
    auto *s = cast<Slice>(e);
    return fmt::format("{}:{}:{}", sx(s->lower), sx(s->upper), sx(s->step));
  }
  case NodeKind::Tuple:
  case NodeKind::List: {
    const auto &elts = isa<Tuple>(e) ? cast<Tuple>(e)->elts : cast<List>(e)->elts;
    std::string s = isa<Tuple>(e) ? "(tuple" : "(list";
    for (const Expr *x : elts)
      s += " " + sx(x);
    return s + ")";
  }
  default:
    return nodeKindName(e->kind);
  }
}

// The S-expression of the value of `x = <expr>`, the single statement of `src`.
std::string exprOf(const std::string &src) {
  Parsed p("x = " + src + "\n");
  EXPECT_TRUE(p.errors().empty()) << src << ": " << p.errors()[0];
  if (p.m->body.size() != 1 || !isa<Assign>(p.stmt(0)))
    return "<not one assignment>";
  return sx(cast<Assign>(p.stmt(0))->value);
}

// The first error of `src`, as "line:col: message".
std::string firstError(const std::string &src) {
  Parsed p(src);
  return p.errors().empty() ? "<no error>" : p.errors()[0];
}

TEST(Parser, EmptyFileGivesEmptyModule) {
  Parsed p("");
  EXPECT_TRUE(p.m->body.empty());
  EXPECT_TRUE(p.errors().empty());
  Parsed q("\n# nothing\n\n");
  EXPECT_TRUE(q.m->body.empty());
}

TEST(Parser, ArithmeticPrecedence) {
  EXPECT_EQ(exprOf("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(exprOf("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(exprOf("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(exprOf("a / b // c % d @ e"), "(@ (% (// (/ a b) c) d) e)");
  EXPECT_EQ(exprOf("a << b + c"), "(<< a (+ b c))");
  EXPECT_EQ(exprOf("a & b << c"), "(& a (<< b c))");
  EXPECT_EQ(exprOf("a ^ b & c"), "(^ a (& b c))");
  EXPECT_EQ(exprOf("a | b ^ c"), "(| a (^ b c))");
  EXPECT_EQ(exprOf("(a + b) * c"), "(* (+ a b) c)");
}

TEST(Parser, PowerAndUnary) {
  EXPECT_EQ(exprOf("-x**2"), "(- (** x 2))");
  EXPECT_EQ(exprOf("2**-1"), "(** 2 (- 1))");
  EXPECT_EQ(exprOf("a**b**c"), "(** a (** b c))");
  EXPECT_EQ(exprOf("-a * b"), "(* (- a) b)");
  EXPECT_EQ(exprOf("~a + +b"), "(+ (~ a) (+ b))");
  EXPECT_EQ(exprOf("- - a"), "(- (- a))");
  EXPECT_EQ(exprOf("a.b**2"), "(** a.b 2)");
}

TEST(Parser, ComparisonsBooleansAndConditionals) {
  EXPECT_EQ(exprOf("a < b <= c"), "(cmp a < b <= c)");
  EXPECT_EQ(exprOf("a is not b"), "(cmp a is not b)");
  EXPECT_EQ(exprOf("a not in b"), "(cmp a not in b)");
  EXPECT_EQ(exprOf("a in b == c"), "(cmp a in b == c)");
  EXPECT_EQ(exprOf("a | b < c & d"), "(cmp (| a b) < (& c d))");
  EXPECT_EQ(exprOf("not a == b"), "(not (cmp a == b))");
  EXPECT_EQ(exprOf("a or b and not c"), "(or a (and b (not c)))");
  EXPECT_EQ(exprOf("a and b and c"), "(and a b c)");
  EXPECT_EQ(exprOf("a if c else b"), "(ifexp c a b)");
  EXPECT_EQ(exprOf("a if c else b if d else e"), "(ifexp c a (ifexp d b e))");
  EXPECT_EQ(exprOf("a or b if c or d else e"), "(ifexp (or c d) (or a b) e)");
}

TEST(Parser, PrimariesCallsAndSubscripts) {
  EXPECT_EQ(exprOf("tk.load(p + o, mask=m, other=0.0,)"), "(call tk.load (+ p o) mask=m other=0f)");
  EXPECT_EQ(exprOf("f()(1)[2].y"), "(index (call (call f) 1) 2).y");
  EXPECT_EQ(exprOf("x[:, None]"), "(index x _:_:_ None)");
  EXPECT_EQ(exprOf("x[None, :]"), "(index x None _:_:_)");
  EXPECT_EQ(exprOf("x[a:b]"), "(index x a:b:_)");
  EXPECT_EQ(exprOf("x[::2]"), "(index x _:_:2)");
  EXPECT_EQ(exprOf("x[1:-1:k, 3]"), "(index x 1:(- 1):k 3)");
  EXPECT_EQ(exprOf("x[i,]"), "(index x i)");
}

TEST(Parser, TuplesListsAndLiterals) {
  EXPECT_EQ(exprOf("()"), "(tuple)");
  EXPECT_EQ(exprOf("(a,)"), "(tuple a)");
  EXPECT_EQ(exprOf("(a)"), "a");
  EXPECT_EQ(exprOf("a, b"), "(tuple a b)");
  EXPECT_EQ(exprOf("[]"), "(list)");
  EXPECT_EQ(exprOf("[1, 2.5, 'n',]"), "(list 1 2.5f 'n')");
  EXPECT_EQ(exprOf("None"), "None");
  EXPECT_EQ(exprOf("True"), "True");
  EXPECT_EQ(exprOf("'a' \"b\" '''c'''"), "'abc'");
  EXPECT_EQ(exprOf("0x10"), "16");
}

TEST(Parser, RandomIntegerLiteralsKeepTheirValue) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 50; ++i) {
    uint64_t a = rng() >> 20, b = rng() >> 20;
    EXPECT_EQ(exprOf(fmt::format("{} * {:#x}", a, b)), fmt::format("(* {} {})", a, b));
  }
}

TEST(Parser, AssignmentForms) {
  Parsed p("a = b = c\n"
           "a, b = b, a\n"
           "[x, y] = t\n"
           "o.f = 1\n"
           "x[i] = 2\n"
           "x += 1\n"
           "x //= 2\n"
           "x **= 3\n"
           "x @= w\n"
           "x >>= 1\n"
           "X: tk.constexpr = 3\n"
           "Y: int\n");
  ASSERT_TRUE(p.errors().empty()) << p.errors()[0];
  ASSERT_EQ(p.m->body.size(), 12u);
  auto *chained = cast<Assign>(p.stmt(0));
  ASSERT_EQ(chained->targets.size(), 2u);
  EXPECT_EQ(sx(chained->targets[0]), "a");
  EXPECT_EQ(sx(chained->targets[1]), "b");
  EXPECT_EQ(sx(chained->value), "c");
  auto *swap = cast<Assign>(p.stmt(1));
  EXPECT_EQ(sx(swap->targets[0]), "(tuple a b)");
  EXPECT_EQ(sx(swap->value), "(tuple b a)");
  EXPECT_EQ(sx(cast<Assign>(p.stmt(2))->targets[0]), "(list x y)");
  EXPECT_EQ(cast<AugAssign>(p.stmt(5))->op, BinaryOp::Add);
  EXPECT_EQ(cast<AugAssign>(p.stmt(6))->op, BinaryOp::FloorDiv);
  EXPECT_EQ(cast<AugAssign>(p.stmt(7))->op, BinaryOp::Pow);
  EXPECT_EQ(cast<AugAssign>(p.stmt(8))->op, BinaryOp::MatMul);
  EXPECT_EQ(cast<AugAssign>(p.stmt(9))->op, BinaryOp::RShift);
  EXPECT_EQ(cast<AugAssign>(p.stmt(9))->opLoc.col, 3u);
  auto *ann = cast<AnnAssign>(p.stmt(10));
  EXPECT_EQ(sx(ann->target), "X");
  EXPECT_EQ(sx(ann->annotation), "tk.constexpr");
  EXPECT_EQ(sx(ann->value), "3");
  EXPECT_EQ(cast<AnnAssign>(p.stmt(11))->value, nullptr);
}

TEST(Parser, FunctionDefinitionWithDecorators) {
  Parsed p("import tk\n"
           "@tk.jit(do_not_specialize=[\"n\"])\n"
           "@tk.autotune(configs=[tk.Config({'BLOCK': 128}, num_warps=4)], key=['n'])\n"
           "def k(x_ptr: \"*fp32:16\", n, BLOCK: tk.constexpr = 64,) -> None:\n"
           "    pass\n");
  ASSERT_TRUE(p.errors().empty()) << p.errors()[0];
  FunctionDef *f = p.m->findFunction("k");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->loc.line, 4u); // the `def`, not the first decorator
  EXPECT_EQ(f->nameLoc.col, 5u);
  ASSERT_EQ(f->decorators.size(), 2u);
  EXPECT_EQ(sx(f->decorators[0]), "(call tk.jit do_not_specialize=(list 'n'))");
  auto *autotune = cast<Call>(f->decorators[1]);
  auto *config = cast<Call>(cast<List>(autotune->keywords[0].value)->elts[0]);
  auto *dict = dyn_cast<Dict>(config->args[0]);
  ASSERT_NE(dict, nullptr);
  EXPECT_EQ(sx(dict->keys[0]), "'BLOCK'");
  EXPECT_EQ(sx(dict->values[0]), "128");
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_EQ(sx(f->params[0].annotation), "'*fp32:16'");
  EXPECT_EQ(f->params[1].annotation, nullptr);
  EXPECT_EQ(sx(f->params[2].annotation), "tk.constexpr");
  EXPECT_EQ(sx(f->params[2].defaultValue), "64");
  EXPECT_EQ(f->params[2].loc.col, 29u);
  EXPECT_EQ(sx(f->returns), "None");
  ASSERT_EQ(f->body.size(), 1u);
  EXPECT_TRUE(isa<Pass>(f->body[0]));
}

TEST(Parser, ControlFlow) {
  Parsed p("def f(n):\n"
           "    if n > 0:\n"
           "        x = 1\n"
           "    elif n < 0:\n"
           "        x = 2\n"
           "    else:\n"
           "        x = 3\n"
           "    for i in range(0, n, 2):\n"
           "        if i: continue\n"
           "        break\n"
           "    else:\n"
           "        pass\n"
           "    while n:\n"
           "        n -= 1\n"
           "    else: n = 0\n"
           "    for a, b in t: pass\n"
           "    assert n == 0, 'msg'\n"
           "    return x, n\n");
  ASSERT_TRUE(p.errors().empty()) << p.errors()[0];
  Block &body = p.m->findFunction("f")->body;
  ASSERT_EQ(body.size(), 6u);
  auto *iff = cast<If>(body[0]);
  EXPECT_FALSE(iff->isElif);
  ASSERT_EQ(iff->orelse.size(), 1u);
  auto *elif = cast<If>(iff->orelse[0]);
  EXPECT_TRUE(elif->isElif);
  EXPECT_EQ(elif->loc.line, 4u);
  EXPECT_EQ(sx(elif->cond), "(cmp n < 0)");
  ASSERT_EQ(elif->orelse.size(), 1u);
  EXPECT_TRUE(isa<Assign>(elif->orelse[0]));
  auto *loop = cast<For>(body[1]);
  EXPECT_EQ(sx(loop->target), "i");
  EXPECT_EQ(sx(loop->iter), "(call range 0 n 2)");
  ASSERT_EQ(loop->body.size(), 2u);
  EXPECT_TRUE(isa<Continue>(cast<If>(loop->body[0])->then[0]));
  EXPECT_TRUE(isa<Break>(loop->body[1]));
  EXPECT_EQ(loop->orelse.size(), 1u);
  auto *wh = cast<While>(body[2]);
  EXPECT_EQ(wh->body.size(), 1u);
  EXPECT_EQ(wh->orelse.size(), 1u);
  EXPECT_EQ(sx(cast<For>(body[3])->target), "(tuple a b)");
  auto *as = cast<Assert>(body[4]);
  EXPECT_EQ(sx(as->msg), "'msg'");
  EXPECT_EQ(sx(cast<Return>(body[5])->value), "(tuple x n)");
}

TEST(Parser, SimpleStatementsOnOneLine) {
  Parsed p("a = 1; b = 2; pass;\nif a: b = 3; c = 4\n");
  ASSERT_TRUE(p.errors().empty()) << p.errors()[0];
  ASSERT_EQ(p.m->body.size(), 4u);
  EXPECT_EQ(cast<If>(p.stmt(3))->then.size(), 2u);
}

TEST(Parser, Imports) {
  Parsed p("import tk\nimport tk as tl, triton.language as tlang\n"
           "from tk import load, store as st\nfrom tk import (a,\n    b,)\n");
  ASSERT_TRUE(p.errors().empty()) << p.errors()[0];
  auto *i2 = cast<Import>(p.stmt(1));
  ASSERT_EQ(i2->names.size(), 2u);
  EXPECT_EQ(i2->names[0].asname, "tl");
  EXPECT_EQ(i2->names[1].name, "triton.language");
  EXPECT_EQ(i2->names[1].asname, "tlang");
  auto *f = cast<ImportFrom>(p.stmt(2));
  EXPECT_EQ(f->module, "tk");
  EXPECT_EQ(f->names[1].name, "store");
  EXPECT_EQ(f->names[1].asname, "st");
  EXPECT_EQ(cast<ImportFrom>(p.stmt(3))->names.size(), 2u);
}

TEST(Parser, SoftKeywordMatchIsAName) {
  Parsed p("match = 1\nmatch(x)\nmatch.y = 2\n");
  EXPECT_TRUE(p.errors().empty());
  EXPECT_EQ(p.m->body.size(), 3u);
}

TEST(Parser, CrlfAndNoTrailingNewline) {
  Parsed p("def f(x):\r\n    y = x\r\n    return y");
  ASSERT_TRUE(p.errors().empty());
  EXPECT_EQ(p.m->findFunction("f")->body.size(), 2u);
}

struct Rejected {
  const char *src;
  const char *error;
};

TEST(Parser, UnsupportedConstructsAreNamedAtTheirLocation) {
  const Rejected cases[] = {
      {"f = lambda x: x\n", "1:5: not supported in tk kernels: lambda expressions"},
      {"class A:\n    pass\n", "1:1: not supported in tk kernels: class definitions"},
      {"with a as b:\n    pass\n", "1:1: not supported in tk kernels: 'with' statements"},
      {"try:\n    x\nexcept E:\n    y\nfinally:\n    z\n",
       "1:1: not supported in tk kernels: 'try' statements"},
      {"raise E\n", "1:1: not supported in tk kernels: 'raise' statements"},
      {"def f():\n    global g\n", "2:5: not supported in tk kernels: 'global' declarations"},
      {"def f():\n    nonlocal g\n", "2:5: not supported in tk kernels: 'nonlocal' declarations"},
      {"del x\n", "1:1: not supported in tk kernels: 'del' statements"},
      {"y = [i for i in x]\n", "1:5: not supported in tk kernels: list comprehensions"},
      {"y = (i for i in x)\n", "1:5: not supported in tk kernels: generator expressions"},
      {"y = sum(i for i in x)\n", "1:9: not supported in tk kernels: generator expressions"},
      {"y = {'a': 1}\n", "1:5: not supported in tk kernels: dict displays"},
      {"y = {}\n", "1:5: not supported in tk kernels: dict displays"},
      {"y = {1, 2}\n", "1:5: not supported in tk kernels: set displays"},
      {"a, *b = x\n", "1:4: not supported in tk kernels: starred expressions"},
      {"f(*args)\n", "1:3: not supported in tk kernels: starred expressions"},
      {"def f(*args):\n    pass\n", "1:7: not supported in tk kernels: '*args' parameters"},
      {"def f(**kw):\n    pass\n", "1:7: not supported in tk kernels: '**kwargs' parameters"},
      {"def f(a, *, b):\n    pass\n",
       "1:10: not supported in tk kernels: keyword-only parameter marker '*'"},
      {"if (n := 3):\n    pass\n", "1:5: not supported in tk kernels: assignment expressions (:=)"},
      {"s = f\"{x}\"\n", "1:5: not supported in tk kernels: f-strings"},
      {"s = b'x'\n", "1:5: not supported in tk kernels: bytes literals"},
      {"async def f():\n    pass\n", "1:1: not supported in tk kernels: async functions"},
      {"def f():\n    yield 1\n", "2:5: not supported in tk kernels: 'yield'"},
      {"def f():\n    x = await g()\n", "2:9: not supported in tk kernels: 'await'"},
      {"match x:\n    case 1:\n        pass\n",
       "1:1: not supported in tk kernels: 'match' statements"},
      {"x = ...\n", "1:5: not supported in tk kernels: Ellipsis literals ('...')"},
      {"from . import x\n", "1:6: not supported in tk kernels: relative imports"},
  };
  for (const Rejected &c : cases) {
    Parsed p(c.src);
    ASSERT_FALSE(p.errors().empty()) << c.src;
    EXPECT_EQ(p.errors()[0], c.error) << c.src;
    EXPECT_EQ(p.errors().size(), 1u) << c.src << "\nsecond: " << p.errors().back();
  }
}

TEST(Parser, SyntaxErrorsSayWhatWasExpected) {
  const Rejected cases[] = {
      {"if x\n    pass\n", "1:5: expected ':', found end of line"},
      {"x = f(a, )\ny = )\n", "2:5: unmatched ')'"},
      {"x = (1 + )\n", "1:10: invalid syntax: expected an expression, found ')'"},
      {"def f():\n    x = 1\n    if x:\n    y = 2\n",
       "4:5: expected an indented block after 'if' statement on line 3"},
      {"def f():\nx = 1\n", "2:1: expected an indented block after function definition on line 1"},
      {"for i in range(3):\n\npass\n",
       "3:1: expected an indented block after 'for' statement on line 1"},
      {"f(a=1, b)\n", "1:8: positional argument follows keyword argument"},
      {"f(a=1, a=2)\n", "1:8: keyword argument repeated: a"},
      {"f() = 3\n", "1:1: cannot assign to function call"},
      {"1 = x\n", "1:1: cannot assign to literal"},
      {"a + b = c\n", "1:1: cannot assign to expression"},
      {"None = 1\n", "1:1: cannot assign to None"},
      {"for f() in x:\n    pass\n", "1:5: cannot assign to function call"},
      {"a, b += 1\n", "1:1: 'tuple' is an illegal expression for augmented assignment"},
      {"a, b: int = 1\n", "1:1: only single target (not tuple) can be annotated"},
      {"f(a.b=1)\n", "1:6: expression cannot contain assignment, perhaps you meant \"==\"?"},
      {"x = 1 2\n", "1:7: invalid syntax: expected end of line, found number 2"},
      {"f(a b)\n",
       "1:5: invalid syntax: expected ',' or ')' in the call arguments, found name 'b'"},
      {"def f(a, a):\n    pass\n", "1:10: duplicate parameter 'a' in function definition"},
      {"def f(a=1, b):\n    pass\n",
       "1:12: parameter 'b' without a default follows a parameter with a default"},
      {"x = 1\n    y = 2\n", "2:5: unexpected indent"},
      {"else:\n    pass\n",
       "1:1: invalid syntax: 'else' without a matching 'if', 'for' or 'while'"},
      {"x = a if b\n",
       "1:11: invalid syntax: expected 'else' in the conditional expression, found end of line"},
      {"@tk.jit\nx = 1\n",
       "2:1: invalid syntax: expected 'def' after the decorator, found name 'x'"},
      {"x = y[]\n", "1:7: invalid syntax: expected an index, found ']'"},
      {"x = a not b\n", "1:7: invalid syntax: expected end of line, found 'not'"},
  };
  for (const Rejected &c : cases)
    EXPECT_EQ(firstError(c.src), c.error) << c.src;
}

TEST(Parser, RecoversAndFindsEveryIndependentError) {
  Parsed p("import tk\n"
           "def f(x):\n"
           "    y = lambda: 1\n" // error 1
           "    z = x + 1\n"     // fine, kept
           "    with a:\n"       // error 2, its block skipped
           "        w = 1\n"
           "    return z\n"
           "def g(a b):\n" // error 3
           "    pass\n"
           "def h():\n"
           "    try:\n" // error 4, with its except clause
           "        pass\n"
           "    except E:\n"
           "        pass\n"
           "    return 1\n");
  std::vector<std::string> errs = p.errors();
  ASSERT_EQ(errs.size(), 4u) << fmt::format("{}", fmt::join(errs, "\n"));
  EXPECT_EQ(errs[0], "3:9: not supported in tk kernels: lambda expressions");
  EXPECT_EQ(errs[1], "5:5: not supported in tk kernels: 'with' statements");
  EXPECT_EQ(errs[2], "8:9: invalid syntax: expected ',' or ')' in the parameter list, found "
                     "name 'b'");
  EXPECT_EQ(errs[3], "11:5: not supported in tk kernels: 'try' statements");
  FunctionDef *f = p.m->findFunction("f");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->body.size(), 2u); // z = x + 1, return z
  EXPECT_TRUE(isa<Return>(f->body[1]));
  FunctionDef *h = p.m->findFunction("h");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->body.size(), 1u);
  EXPECT_TRUE(isa<Return>(h->body[0]));
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  for (const char *open : {"(", "[", "-", "not ", "f(", "x if c else "}) {
    std::string src = "x = ";
    for (int i = 0; i < 5000; ++i)
      src += open;
    src += "1\n";
    Parsed p(src);
    ASSERT_FALSE(p.errors().empty()) << open;
    bool tooDeep = false;
    for (const std::string &e : p.errors())
      tooDeep |= e.find("expression nested too deeply") != std::string::npos;
    EXPECT_TRUE(tooDeep) << open << ": " << p.errors()[0];
  }
  // Long flat chains build deep trees too; they are bounded the same way.
  std::string chain = "x = a";
  for (int i = 0; i < 100000; ++i)
    chain += " + a";
  EXPECT_NE(firstError(chain + "\n").find("expression nested too deeply"), std::string::npos);
  std::string attrs = "x = a";
  for (int i = 0; i < 100000; ++i)
    attrs += ".b";
  EXPECT_NE(firstError(attrs + "\n").find("expression nested too deeply"), std::string::npos);
  // 200 levels is past the limit; 100 is fine.
  EXPECT_NE(firstError("x = " + std::string(200, '(') + "1" + std::string(200, ')') + "\n")
                .find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(firstError("x = " + std::string(100, '(') + "1" + std::string(100, ')') + "\n"),
            "<no error>");
}

TEST(Parser, DeepBlocksAreAnErrorNotACrash) {
  std::string src;
  for (int i = 0; i < 3000; ++i)
    src += std::string(i, ' ') + "if x:\n";
  src += std::string(3000, ' ') + "pass\n";
  EXPECT_NE(firstError(src).find("blocks nested too deeply"), std::string::npos);
  std::string elifs = "if a:\n    pass\n";
  for (int i = 0; i < 5000; ++i)
    elifs += "elif a:\n    pass\n";
  EXPECT_NE(firstError(elifs).find("blocks nested too deeply"), std::string::npos);
}

TEST(Parser, RandomTokenSoupTerminates) {
  const char *pieces[] = {"def ", "f",  "(", ")",    ":",    "\n",   "    ",    "x",
                          "=",    "1",  ",", "if ",  "else", "[",    "]",       "lambda",
                          "*",    "**", "@", "'s'",  "for ", " in ", "return ", ".",
                          "not ", "{",  "}", "\\\n", "\t",   ";"};
  std::mt19937 rng(2024);
  for (int i = 0; i < 400; ++i) {
    std::string src;
    int n = rng() % 60;
    for (int j = 0; j < n; ++j)
      src += pieces[rng() % std::size(pieces)];
    Parsed p(src);
    ASSERT_NE(p.m, nullptr);
    (void)printAST(*p.m, p.sm); // and the printer copes with whatever survived
  }
}

TEST(ASTPrinter, OneNodePerLineWithLocations) {
  Parsed p("import tk\n"
           "@tk.jit\n"
           "def add(x, BLOCK: tk.constexpr):\n"
           "    y = x[:, None] + 1.0\n"
           "    tk.store(x, y, mask=y < 2)\n");
  ASSERT_TRUE(p.errors().empty());
  EXPECT_EQ(printAST(*p.m, p.sm), "Module\n"
                                  "  Import @1:1\n"
                                  "    Alias tk @1:8\n"
                                  "  FunctionDef add @3:1\n"
                                  "    decorators:\n"
                                  "      Attribute .jit @2:2\n"
                                  "        Name tk @2:2\n"
                                  "    params:\n"
                                  "      Param x @3:9\n"
                                  "      Param BLOCK @3:12\n"
                                  "        annotation:\n"
                                  "          Attribute .constexpr @3:19\n"
                                  "            Name tk @3:19\n"
                                  "    body:\n"
                                  "      Assign @4:5\n"
                                  "        targets:\n"
                                  "          Name y @4:5\n"
                                  "        value:\n"
                                  "          Binary + @4:9\n"
                                  "            Subscript @4:9\n"
                                  "              Name x @4:9\n"
                                  "              indices:\n"
                                  "                Slice @4:11\n"
                                  "                NoneLit @4:14\n"
                                  "            FloatLit 1.0 @4:22\n"
                                  "      ExprStmt @5:5\n"
                                  "        Call @5:5\n"
                                  "          Attribute .store @5:5\n"
                                  "            Name tk @5:5\n"
                                  "          args:\n"
                                  "            Name x @5:14\n"
                                  "            Name y @5:17\n"
                                  "          keywords:\n"
                                  "            Keyword mask @5:20\n"
                                  "              Compare < @5:25\n"
                                  "                Name y @5:25\n"
                                  "                IntLit 2 @5:29\n");
}

TEST(ASTPrinter, LinesFollowTheBufferFirstLine) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  Context ctx;
  BufferId id = sm.addBuffer("kern.py", "def f(x):\n    return x\n", /*firstLine=*/41);
  Module *m = parseModule(sm, id, ctx, diag);
  std::string out = printAST(*m, sm);
  EXPECT_NE(out.find("FunctionDef f @41:1"), std::string::npos) << out;
  EXPECT_NE(out.find("Return @42:5"), std::string::npos) << out;
}

} // namespace
