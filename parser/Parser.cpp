#include "parser/Parser.h"

#include "parser/Lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace tk {
namespace {

using namespace ast;

// Past these depths the parser reports an error instead of recursing further.
// Expression depth counts brackets, unary operators, conditional expressions
// and chained binary operators, attribute/call/subscript suffixes: it bounds
// the depth of the resulting tree too, so every later recursive walk over the
// AST is bounded as well.
constexpr unsigned kMaxExprDepth = 150;
constexpr unsigned kMaxBlockDepth = 100;

// Thrown after an error has been reported; caught where a statement starts,
// which then skips to the next statement. It never leaves this file.
struct SyntaxError {};

std::string describe(const Token &t) {
  switch (t.kind) {
  case TokenKind::EndOfFile:
    return "end of file";
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Indent:
    return "an indented block";
  case TokenKind::Dedent:
    return "the end of the block";
  case TokenKind::Identifier:
    return fmt::format("name '{}'", t.text);
  case TokenKind::Int:
  case TokenKind::Float:
    return fmt::format("number {}", t.text);
  case TokenKind::String:
    return "a string literal";
  default:
    return fmt::format("'{}'", t.text);
  }
}

std::optional<BinaryOp> augAssignOp(TokenKind k) {
  switch (k) {
  case TokenKind::PlusEqual:
    return BinaryOp::Add;
  case TokenKind::MinusEqual:
    return BinaryOp::Sub;
  case TokenKind::StarEqual:
    return BinaryOp::Mul;
  case TokenKind::SlashEqual:
    return BinaryOp::Div;
  case TokenKind::SlashSlashEqual:
    return BinaryOp::FloorDiv;
  case TokenKind::PercentEqual:
    return BinaryOp::Mod;
  case TokenKind::StarStarEqual:
    return BinaryOp::Pow;
  case TokenKind::AtEqual:
    return BinaryOp::MatMul;
  case TokenKind::LessLessEqual:
    return BinaryOp::LShift;
  case TokenKind::GreaterGreaterEqual:
    return BinaryOp::RShift;
  case TokenKind::AmpEqual:
    return BinaryOp::BitAnd;
  case TokenKind::PipeEqual:
    return BinaryOp::BitOr;
  case TokenKind::CaretEqual:
    return BinaryOp::BitXor;
  default:
    return std::nullopt;
  }
}

// The six left-associative binary levels, loosest first (bitor .. term).
constexpr int kNumBinaryLevels = 6;
std::optional<BinaryOp> binaryOpAt(int level, TokenKind k) {
  switch (level) {
  case 0:
    if (k == TokenKind::Pipe)
      return BinaryOp::BitOr;
    break;
  case 1:
    if (k == TokenKind::Caret)
      return BinaryOp::BitXor;
    break;
  case 2:
    if (k == TokenKind::Amp)
      return BinaryOp::BitAnd;
    break;
  case 3:
    if (k == TokenKind::LessLess)
      return BinaryOp::LShift;
    if (k == TokenKind::GreaterGreater)
      return BinaryOp::RShift;
    break;
  case 4:
    if (k == TokenKind::Plus)
      return BinaryOp::Add;
    if (k == TokenKind::Minus)
      return BinaryOp::Sub;
    break;
  case 5:
    if (k == TokenKind::Star)
      return BinaryOp::Mul;
    if (k == TokenKind::Slash)
      return BinaryOp::Div;
    if (k == TokenKind::SlashSlash)
      return BinaryOp::FloorDiv;
    if (k == TokenKind::Percent)
      return BinaryOp::Mod;
    if (k == TokenKind::At)
      return BinaryOp::MatMul;
    break;
  }
  return std::nullopt;
}

// Sets a flag for the lifetime of the scope, also when a SyntaxError unwinds.
class ScopedFlag {
public:
  explicit ScopedFlag(bool &flag) : flag_(flag), saved_(flag) { flag = true; }
  ~ScopedFlag() { flag_ = saved_; }

private:
  bool &flag_;
  bool saved_;
};

class Parser {
public:
  Parser(const SourceManager &sm, Context &ctx, DiagnosticEngine &diag, std::vector<Token> tokens,
         std::set<uint32_t> lexErrorLines)
      : sm_(sm), ctx_(ctx), diag_(diag), toks_(std::move(tokens)),
        lexErrorLines_(std::move(lexErrorLines)) {}

  void parseFile(Module &m);

private:
  // Depth accounting: a scope restores the depth it started with, also when
  // a SyntaxError unwinds through it.
  class DepthScope {
  public:
    DepthScope(Parser &p, unsigned &counter) : p_(p), counter_(counter), saved_(counter) {}
    ~DepthScope() { counter_ = saved_; }
    void deeper(SourceLoc loc, bool block = false) {
      unsigned limit = block ? kMaxBlockDepth : kMaxExprDepth;
      if (++counter_ > limit)
        p_.fail(loc,
                block ? fmt::format("blocks nested too deeply: tk allows at most {} levels", limit)
                      : fmt::format("expression nested too deeply: tk allows at most {} "
                                    "levels of brackets and operators",
                                    limit));
    }

  private:
    Parser &p_;
    unsigned &counter_;
    unsigned saved_;
  };

  // --- Tokens -------------------------------------------------------------
  const Token &tok() const { return toks_[pos_]; }
  const Token &peekTok(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  bool at(TokenKind k) const { return tok().kind == k; }
  // Never moves past EndOfFile, so every loop that stops at it terminates.
  const Token &advance() {
    const Token &t = toks_[pos_];
    if (pos_ + 1 < toks_.size())
      ++pos_;
    return t;
  }
  bool accept(TokenKind k) {
    if (!at(k))
      return false;
    advance();
    return true;
  }
  bool startsExpression() const;

  // --- Errors -------------------------------------------------------------
  // One error per line, lexer first: a line the lexer already complained
  // about (or the end of a file with an unclosed bracket) gets no follow-up
  // parser error.
  void report(SourceLoc loc, std::string msg) {
    if (lexErrorLines_.count(loc.line) || (at(TokenKind::EndOfFile) && !lexErrorLines_.empty()))
      return;
    diag_.error(loc, std::move(msg));
  }
  [[noreturn]] void fail(SourceLoc loc, std::string msg) {
    report(loc, std::move(msg));
    throw SyntaxError{};
  }
  [[noreturn]] void failExpected(std::string_view what) {
    fail(tok().loc, fmt::format("invalid syntax: expected {}, found {}", what, describe(tok())));
  }
  [[noreturn]] void unsupported(SourceLoc loc, std::string_view construct) {
    fail(loc, fmt::format("not supported in tk kernels: {}", construct));
  }
  const Token &expect(TokenKind k) {
    if (!at(k))
      fail(tok().loc,
           fmt::format("expected '{}', found {}", tokenKindSpelling(k), describe(tok())));
    return advance();
  }
  const Token &expectClosing(TokenKind k, std::string_view context) {
    if (!at(k))
      fail(tok().loc, fmt::format("invalid syntax: expected ',' or '{}' {}, found {}",
                                  tokenKindSpelling(k), context, describe(tok())));
    return advance();
  }
  const Token &expectName(std::string_view what) {
    if (!at(TokenKind::Identifier))
      failExpected(what);
    return advance();
  }
  void checkTarget(Expr *e, bool augmented);

  // --- Statements ---------------------------------------------------------
  void parseStatements(Block &out, bool topLevel);
  void recover();
  void skipBlock();
  void parseStatement(Block &out);
  bool looksLikeMatchStatement() const;
  void parseBlock(Block &out, std::string_view owner, SourceLoc ownerLoc);
  void parseSimpleStmts(Block &out);
  Stmt *parseSimpleStmt();
  Stmt *parseExprOrAssign();
  Stmt *parseImport();
  Stmt *parseFromImport();
  std::string parseDottedName();
  Stmt *parseDecorated();
  FunctionDef *parseFunctionDef(std::vector<Expr *> decorators);
  void parseParameters(FunctionDef &fn);
  Stmt *parseIf();
  Stmt *parseFor();
  Stmt *parseWhile();
  Expr *parseTargetList();

  // --- Expressions --------------------------------------------------------
  Expr *parseExpressionList();
  Expr *parseStarrable();
  Expr *parseExpression();
  Expr *parseDisjunction();
  Expr *parseConjunction();
  Expr *parseInversion();
  Expr *parseComparison();
  Expr *parseBinary(int level);
  Expr *parseFactor();
  Expr *parsePower();
  Expr *parsePrimary();
  Expr *parseCall(Expr *callee);
  Expr *parseSubscript(Expr *value);
  Expr *parseSliceItem();
  Expr *parseAtom();
  Expr *parseStrings();
  Expr *parseParenthesized();
  Expr *parseList();
  Expr *parseBraces();

  template <class T, class... Args> T *make(Args &&...args) {
    return ctx_.make<T>(std::forward<Args>(args)...);
  }

  const SourceManager &sm_;
  Context &ctx_;
  DiagnosticEngine &diag_;
  std::vector<Token> toks_;
  std::set<uint32_t> lexErrorLines_;
  size_t pos_ = 0;
  unsigned exprDepth_ = 0;
  unsigned blockDepth_ = 0;
  bool lastStmtFailed_ = false;
  bool inDecorator_ = false;
};

bool Parser::startsExpression() const {
  switch (tok().kind) {
  case TokenKind::Identifier:
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::String:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
  case TokenKind::KwNone:
  case TokenKind::KwNot:
  case TokenKind::KwLambda:
  case TokenKind::KwAwait:
  case TokenKind::KwYield:
  case TokenKind::LParen:
  case TokenKind::LSquare:
  case TokenKind::LBrace:
  case TokenKind::Minus:
  case TokenKind::Plus:
  case TokenKind::Tilde:
  case TokenKind::Star:
  case TokenKind::Ellipsis:
    return true;
  default:
    return false;
  }
}

// Python's rules for what may stand left of `=` (and of `+=`), with Python's
// messages.
void Parser::checkTarget(Expr *e, bool augmented) {
  switch (e->kind) {
  case NodeKind::Name:
  case NodeKind::Attribute:
  case NodeKind::Subscript:
    return;
  case NodeKind::Tuple:
  case NodeKind::List:
    if (augmented)
      fail(e->loc, fmt::format("'{}' is an illegal expression for augmented assignment",
                               e->kind == NodeKind::Tuple ? "tuple" : "list"));
    for (Expr *elt : e->kind == NodeKind::Tuple ? cast<Tuple>(e)->elts : cast<List>(e)->elts)
      checkTarget(elt, false);
    return;
  case NodeKind::Call:
    fail(e->loc, "cannot assign to function call");
  case NodeKind::BoolLit:
    fail(e->loc, cast<BoolLit>(e)->value ? "cannot assign to True" : "cannot assign to False");
  case NodeKind::NoneLit:
    fail(e->loc, "cannot assign to None");
  case NodeKind::IntLit:
  case NodeKind::FloatLit:
  case NodeKind::StringLit:
    fail(e->loc, "cannot assign to literal");
  case NodeKind::Compare:
    fail(e->loc, "cannot assign to comparison");
  case NodeKind::IfExp:
    fail(e->loc, "cannot assign to conditional expression");
  case NodeKind::Dict:
    fail(e->loc, "cannot assign to dict literal");
  default:
    fail(e->loc, "cannot assign to expression");
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

// file = { statement } EOF ;
void Parser::parseFile(Module &m) { parseStatements(m.body, /*topLevel=*/true); }

// The statement loop of a file or a block: it is where errors are caught.
void Parser::parseStatements(Block &out, bool topLevel) {
  while (!at(TokenKind::EndOfFile)) {
    if (at(TokenKind::Dedent)) {
      if (!topLevel)
        return;
      advance(); // cannot happen with the lexer's balanced Dedents; be safe
      continue;
    }
    if (at(TokenKind::Newline)) {
      advance();
      continue;
    }
    if (at(TokenKind::Indent)) {
      // A block no statement opened (the bodies of failed statements are
      // skipped by recover()). Report it once and skip it whole.
      report(tok().loc, "unexpected indent");
      skipBlock();
      continue;
    }
    size_t before = pos_;
    try {
      parseStatement(out);
      lastStmtFailed_ = false;
    } catch (const SyntaxError &) {
      recover();
      lastStmtFailed_ = true;
      if (pos_ == before && !at(TokenKind::Dedent))
        advance();
    }
  }
}

// Skips the rest of the logical line and the block under it, if any.
void Parser::recover() {
  while (!at(TokenKind::Newline) && !at(TokenKind::EndOfFile) && !at(TokenKind::Dedent) &&
         !at(TokenKind::Indent))
    advance();
  accept(TokenKind::Newline);
  if (at(TokenKind::Indent))
    skipBlock();
}

void Parser::skipBlock() {
  unsigned level = 0;
  do {
    if (at(TokenKind::Indent))
      ++level;
    else if (at(TokenKind::Dedent))
      --level;
    advance();
  } while (level > 0 && !at(TokenKind::EndOfFile));
}

// statement     = compound_stmt | simple_stmts ;
// compound_stmt = function_def | if_stmt | for_stmt | while_stmt ;
void Parser::parseStatement(Block &out) {
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case TokenKind::At:
  case TokenKind::KwDef:
    out.push_back(parseDecorated());
    return;
  case TokenKind::KwIf:
    out.push_back(parseIf());
    return;
  case TokenKind::KwFor:
    out.push_back(parseFor());
    return;
  case TokenKind::KwWhile:
    out.push_back(parseWhile());
    return;
  case TokenKind::KwClass:
    unsupported(loc, "class definitions");
  case TokenKind::KwWith:
    unsupported(loc, "'with' statements");
  case TokenKind::KwTry:
    unsupported(loc, "'try' statements");
  case TokenKind::KwAsync:
    unsupported(loc, peekTok().is(TokenKind::KwDef) ? "async functions" : "'async' statements");
  case TokenKind::KwElif:
  case TokenKind::KwElse:
  case TokenKind::KwExcept:
  case TokenKind::KwFinally:
    // The clause of a statement that already failed (a rejected `try`, an
    // `if` with a broken condition) is skipped without a second error.
    if (lastStmtFailed_)
      throw SyntaxError{};
    fail(loc, fmt::format("invalid syntax: '{}' without a matching '{}'", tok().text,
                          at(TokenKind::KwElif)   ? "if"
                          : at(TokenKind::KwElse) ? "if', 'for' or 'while"
                                                  : "try"));
  case TokenKind::Identifier:
    if (looksLikeMatchStatement())
      unsupported(loc, "'match' statements");
    break;
  default:
    break;
  }
  parseSimpleStmts(out);
}

// `match` is a soft keyword: `match x:` starts a match statement, while
// `match = 3` or `match(x)` use a variable or function named match.
bool Parser::looksLikeMatchStatement() const {
  if (tok().text != "match")
    return false;
  switch (peekTok().kind) {
  case TokenKind::Identifier:
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::String:
  case TokenKind::LParen:
  case TokenKind::LSquare:
  case TokenKind::LBrace:
  case TokenKind::Minus:
  case TokenKind::KwNone:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    break;
  default:
    return false;
  }
  size_t i = pos_;
  while (i + 1 < toks_.size() && toks_[i + 1].kind != TokenKind::Newline)
    ++i;
  return toks_[i].kind == TokenKind::Colon;
}

// block = NEWLINE INDENT statement { statement } DEDENT | simple_stmts ;
void Parser::parseBlock(Block &out, std::string_view owner, SourceLoc ownerLoc) {
  if (!at(TokenKind::Newline)) {
    parseSimpleStmts(out);
    return;
  }
  advance();
  if (!at(TokenKind::Indent)) {
    // Not thrown: what follows is a statement of the outer block, parse it.
    report(tok().loc, fmt::format("expected an indented block after {} on line {}", owner,
                                  sm_.displayLine(ownerLoc)));
    return;
  }
  DepthScope depth(*this, blockDepth_);
  depth.deeper(tok().loc, /*block=*/true);
  advance();
  parseStatements(out, /*topLevel=*/false);
  accept(TokenKind::Dedent);
}

// simple_stmts = simple_stmt { ";" simple_stmt } [ ";" ] NEWLINE ;
void Parser::parseSimpleStmts(Block &out) {
  while (true) {
    out.push_back(parseSimpleStmt());
    if (!accept(TokenKind::Semi) || at(TokenKind::Newline))
      break;
  }
  if (!at(TokenKind::Newline))
    failExpected("end of line");
  advance();
}

// simple_stmt = expr_or_assign | return_stmt | assert_stmt | import_stmt | from_import
//             | "pass" | "break" | "continue" ;
// return_stmt = "return" [ expression_list ] ;
// assert_stmt = "assert" expression [ "," expression ] ;
Stmt *Parser::parseSimpleStmt() {
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case TokenKind::KwPass:
    advance();
    return make<Pass>(loc);
  case TokenKind::KwBreak:
    advance();
    return make<Break>(loc);
  case TokenKind::KwContinue:
    advance();
    return make<Continue>(loc);
  case TokenKind::KwReturn: {
    advance();
    Expr *value = startsExpression() ? parseExpressionList() : nullptr;
    return make<Return>(loc, value);
  }
  case TokenKind::KwAssert: {
    advance();
    Expr *test = parseExpression();
    Expr *msg = accept(TokenKind::Comma) ? parseExpression() : nullptr;
    return make<Assert>(loc, test, msg);
  }
  case TokenKind::KwImport:
    return parseImport();
  case TokenKind::KwFrom:
    return parseFromImport();
  case TokenKind::KwGlobal:
    unsupported(loc, "'global' declarations");
  case TokenKind::KwNonlocal:
    unsupported(loc, "'nonlocal' declarations");
  case TokenKind::KwDel:
    unsupported(loc, "'del' statements");
  case TokenKind::KwRaise:
    unsupported(loc, "'raise' statements");
  default:
    return parseExprOrAssign();
  }
}

// expr_or_assign = expression_list
//                  ( { "=" expression_list }
//                  | augassign expression_list
//                  | ":" expression [ "=" expression_list ] ) ;
Stmt *Parser::parseExprOrAssign() {
  SourceLoc loc = tok().loc;
  Expr *first = parseExpressionList();

  if (at(TokenKind::Equal)) {
    std::vector<Expr *> exprs{first};
    while (accept(TokenKind::Equal)) {
      if (at(TokenKind::KwYield))
        unsupported(tok().loc, "'yield'");
      exprs.push_back(parseExpressionList());
    }
    auto *assign = make<Assign>(loc, exprs.back());
    exprs.pop_back();
    for (Expr *target : exprs) {
      checkTarget(target, /*augmented=*/false);
      assign->targets.push_back(target);
    }
    return assign;
  }
  if (std::optional<BinaryOp> op = augAssignOp(tok().kind)) {
    SourceLoc opLoc = advance().loc;
    checkTarget(first, /*augmented=*/true);
    Expr *value = parseExpressionList();
    return make<AugAssign>(loc, first, *op, value, opLoc);
  }
  if (at(TokenKind::Colon)) {
    if (isa<Tuple>(first) || isa<List>(first))
      fail(first->loc, fmt::format("only single target (not {}) can be annotated",
                                   isa<Tuple>(first) ? "tuple" : "list"));
    checkTarget(first, /*augmented=*/false);
    advance();
    Expr *annotation = parseExpression();
    Expr *value = accept(TokenKind::Equal) ? parseExpressionList() : nullptr;
    return make<AnnAssign>(loc, first, annotation, value);
  }
  return make<ExprStmt>(loc, first);
}

// import_stmt    = "import" dotted_as_name { "," dotted_as_name } ;
// dotted_as_name = dotted_name [ "as" NAME ] ;
Stmt *Parser::parseImport() {
  auto *imp = make<Import>(advance().loc);
  do {
    ImportAlias alias;
    alias.loc = tok().loc;
    alias.name = parseDottedName();
    if (accept(TokenKind::KwAs))
      alias.asname = std::string(expectName("a name after 'as'").text);
    imp->names.push_back(std::move(alias));
  } while (accept(TokenKind::Comma));
  return imp;
}

// dotted_name = NAME { "." NAME } ;
std::string Parser::parseDottedName() {
  std::string name(expectName("a module name").text);
  while (accept(TokenKind::Dot)) {
    name += '.';
    name += expectName("a name after '.'").text;
  }
  return name;
}

// from_import    = "from" dotted_name "import"
//                  ( "(" import_as_name { "," import_as_name } [ "," ] ")"
//                  | import_as_name { "," import_as_name } ) ;
// import_as_name = NAME [ "as" NAME ] ;
Stmt *Parser::parseFromImport() {
  SourceLoc loc = advance().loc;
  if (at(TokenKind::Dot) || at(TokenKind::Ellipsis))
    unsupported(tok().loc, "relative imports");
  auto *imp = make<ImportFrom>(loc, parseDottedName());
  expect(TokenKind::KwImport);
  if (at(TokenKind::Star))
    unsupported(tok().loc, "wildcard imports ('from ... import *')");
  bool paren = accept(TokenKind::LParen);
  while (true) {
    ImportAlias alias;
    alias.loc = tok().loc;
    alias.name = std::string(expectName("a name to import").text);
    if (accept(TokenKind::KwAs))
      alias.asname = std::string(expectName("a name after 'as'").text);
    imp->names.push_back(std::move(alias));
    if (!at(TokenKind::Comma))
      break;
    SourceLoc commaLoc = advance().loc;
    if (paren && at(TokenKind::RParen))
      break;
    if (!paren && at(TokenKind::Newline))
      fail(commaLoc, "trailing comma not allowed without surrounding parentheses");
  }
  if (paren)
    expectClosing(TokenKind::RParen, "in the import list");
  return imp;
}

// function_def = { decorator } "def" NAME "(" [ parameters ] ")" [ "->" expression ] ":" block ;
// decorator    = "@" expression NEWLINE ;
Stmt *Parser::parseDecorated() {
  std::vector<Expr *> decorators;
  while (at(TokenKind::At)) {
    advance();
    // Dict displays are allowed here only: tk.Config({"BLOCK": 128}, ...).
    ScopedFlag inDecorator(inDecorator_);
    decorators.push_back(parseExpression());
    if (!at(TokenKind::Newline))
      failExpected("end of line after the decorator");
    advance();
  }
  if (at(TokenKind::Indent))
    fail(tok().loc, "unexpected indent");
  if (at(TokenKind::KwClass))
    unsupported(tok().loc, "class definitions");
  if (at(TokenKind::KwAsync))
    unsupported(tok().loc, "async functions");
  if (!at(TokenKind::KwDef))
    failExpected("'def' after the decorator");
  return parseFunctionDef(std::move(decorators));
}

FunctionDef *Parser::parseFunctionDef(std::vector<Expr *> decorators) {
  SourceLoc defLoc = expect(TokenKind::KwDef).loc;
  const Token &name = expectName("a function name after 'def'");
  auto *fn = make<FunctionDef>(defLoc, std::string(name.text), name.loc);
  fn->decorators = std::move(decorators);
  expect(TokenKind::LParen);
  parseParameters(*fn);
  expectClosing(TokenKind::RParen, "in the parameter list");
  if (accept(TokenKind::Arrow))
    fn->returns = parseExpression();
  expect(TokenKind::Colon);
  parseBlock(fn->body, "function definition", defLoc);
  return fn;
}

// parameters = parameter { "," parameter } [ "," ] ;
// parameter  = NAME [ ":" expression ] [ "=" expression ] ;
void Parser::parseParameters(FunctionDef &fn) {
  bool sawDefault = false;
  while (!at(TokenKind::RParen)) {
    SourceLoc loc = tok().loc;
    if (at(TokenKind::Star)) {
      TokenKind next = peekTok().kind;
      unsupported(loc, next == TokenKind::Comma || next == TokenKind::RParen
                           ? "keyword-only parameter marker '*'"
                           : "'*args' parameters");
    }
    if (at(TokenKind::StarStar))
      unsupported(loc, "'**kwargs' parameters");
    if (at(TokenKind::Slash))
      unsupported(loc, "positional-only parameter marker '/'");
    Param p;
    p.loc = loc;
    p.name = std::string(expectName("a parameter name").text);
    if (accept(TokenKind::Colon))
      p.annotation = parseExpression();
    if (accept(TokenKind::Equal))
      p.defaultValue = parseExpression();
    // Both mistakes leave a well-formed list, so they are reported without
    // abandoning the function.
    for (const Param &q : fn.params)
      if (q.name == p.name)
        diag_.error(loc, fmt::format("duplicate parameter '{}' in function definition", p.name))
            .notes.push_back({q.loc, "first declared here"});
    if (p.defaultValue)
      sawDefault = true;
    else if (sawDefault)
      diag_.error(loc, fmt::format("parameter '{}' without a default follows a parameter with "
                                   "a default",
                                   p.name));
    fn.params.push_back(std::move(p));
    if (!accept(TokenKind::Comma))
      break;
  }
}

// if_stmt = "if" expression ":" block { "elif" expression ":" block } [ "else" ":" block ] ;
Stmt *Parser::parseIf() {
  SourceLoc ifLoc = advance().loc;
  auto *top = make<If>(ifLoc, parseExpression());
  expect(TokenKind::Colon);
  parseBlock(top->then, "'if' statement", ifLoc);
  // An elif chain nests Ifs in orelse, so it counts towards the block depth.
  DepthScope depth(*this, blockDepth_);
  If *last = top;
  while (at(TokenKind::KwElif)) {
    SourceLoc elifLoc = advance().loc;
    depth.deeper(elifLoc, /*block=*/true);
    auto *elif = make<If>(elifLoc, parseExpression());
    elif->isElif = true;
    expect(TokenKind::Colon);
    parseBlock(elif->then, "'elif' statement", elifLoc);
    last->orelse.push_back(elif);
    last = elif;
  }
  if (at(TokenKind::KwElse)) {
    SourceLoc elseLoc = advance().loc;
    expect(TokenKind::Colon);
    parseBlock(last->orelse, "'else' statement", elseLoc);
  }
  return top;
}

// for_stmt = "for" target_list "in" expression_list ":" block [ "else" ":" block ] ;
Stmt *Parser::parseFor() {
  SourceLoc forLoc = advance().loc;
  Expr *target = parseTargetList();
  checkTarget(target, /*augmented=*/false);
  if (!at(TokenKind::KwIn))
    failExpected("'in' after the loop variable");
  advance();
  auto *loop = make<For>(forLoc, target, parseExpressionList());
  expect(TokenKind::Colon);
  parseBlock(loop->body, "'for' statement", forLoc);
  if (at(TokenKind::KwElse)) {
    SourceLoc elseLoc = advance().loc;
    expect(TokenKind::Colon);
    parseBlock(loop->orelse, "'else' statement", elseLoc);
  }
  return loop;
}

// target_list = bitor { "," bitor } [ "," ] ;
// (bitor, not expression: the `in` of the loop must not parse as a comparison.)
Expr *Parser::parseTargetList() {
  SourceLoc loc = tok().loc;
  if (at(TokenKind::Star))
    unsupported(loc, "starred expressions");
  Expr *first = parseBinary(0);
  if (!at(TokenKind::Comma))
    return first;
  auto *tuple = make<Tuple>(loc);
  tuple->elts.push_back(first);
  while (accept(TokenKind::Comma) && !at(TokenKind::KwIn)) {
    if (at(TokenKind::Star))
      unsupported(tok().loc, "starred expressions");
    tuple->elts.push_back(parseBinary(0));
  }
  return tuple;
}

// while_stmt = "while" expression ":" block [ "else" ":" block ] ;
Stmt *Parser::parseWhile() {
  SourceLoc whileLoc = advance().loc;
  auto *loop = make<While>(whileLoc, parseExpression());
  expect(TokenKind::Colon);
  parseBlock(loop->body, "'while' statement", whileLoc);
  if (at(TokenKind::KwElse)) {
    SourceLoc elseLoc = advance().loc;
    expect(TokenKind::Colon);
    parseBlock(loop->orelse, "'else' statement", elseLoc);
  }
  return loop;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

// expression_list = expression { "," expression } [ "," ] ;
Expr *Parser::parseExpressionList() {
  SourceLoc loc = tok().loc;
  Expr *first = parseStarrable();
  if (!at(TokenKind::Comma))
    return first;
  auto *tuple = make<Tuple>(loc);
  tuple->elts.push_back(first);
  while (accept(TokenKind::Comma) && startsExpression())
    tuple->elts.push_back(parseStarrable());
  return tuple;
}

// An element of a tuple, list or call: `*x` is recognised to be rejected.
Expr *Parser::parseStarrable() {
  if (at(TokenKind::Star))
    unsupported(tok().loc, "starred expressions");
  return parseExpression();
}

// expression = disjunction [ "if" disjunction "else" expression ] ;
Expr *Parser::parseExpression() {
  DepthScope depth(*this, exprDepth_);
  depth.deeper(tok().loc);
  if (at(TokenKind::KwLambda))
    unsupported(tok().loc, "lambda expressions");
  if (at(TokenKind::KwYield))
    unsupported(tok().loc, "'yield'");
  Expr *e = parseDisjunction();
  if (accept(TokenKind::KwIf)) {
    Expr *cond = parseDisjunction();
    if (!at(TokenKind::KwElse))
      failExpected("'else' in the conditional expression");
    advance();
    Expr *orelse = parseExpression();
    e = make<IfExp>(e->loc, cond, e, orelse);
  }
  if (at(TokenKind::ColonEqual))
    unsupported(e->loc, "assignment expressions (:=)");
  return e;
}

// disjunction = conjunction { "or" conjunction } ;
Expr *Parser::parseDisjunction() {
  Expr *first = parseConjunction();
  if (!at(TokenKind::KwOr))
    return first;
  auto *op = make<BoolOp>(first->loc, /*isAnd=*/false);
  op->values.push_back(first);
  while (accept(TokenKind::KwOr))
    op->values.push_back(parseConjunction());
  return op;
}

// conjunction = inversion { "and" inversion } ;
Expr *Parser::parseConjunction() {
  Expr *first = parseInversion();
  if (!at(TokenKind::KwAnd))
    return first;
  auto *op = make<BoolOp>(first->loc, /*isAnd=*/true);
  op->values.push_back(first);
  while (accept(TokenKind::KwAnd))
    op->values.push_back(parseInversion());
  return op;
}

// inversion = "not" inversion | comparison ;
Expr *Parser::parseInversion() {
  if (!at(TokenKind::KwNot))
    return parseComparison();
  DepthScope depth(*this, exprDepth_);
  SourceLoc loc = advance().loc;
  depth.deeper(loc);
  return make<Unary>(loc, UnaryOp::Not, parseInversion());
}

// comparison = bitor { comp_op bitor } ;
// comp_op    = "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in" | "is" [ "not" ] ;
Expr *Parser::parseComparison() {
  Expr *lhs = parseBinary(0);
  Compare *cmp = nullptr;
  while (true) {
    SourceLoc opLoc = tok().loc;
    CmpOp op;
    switch (tok().kind) {
    case TokenKind::EqualEqual:
      op = CmpOp::Eq;
      break;
    case TokenKind::NotEqual:
      op = CmpOp::Ne;
      break;
    case TokenKind::Less:
      op = CmpOp::Lt;
      break;
    case TokenKind::LessEqual:
      op = CmpOp::Le;
      break;
    case TokenKind::Greater:
      op = CmpOp::Gt;
      break;
    case TokenKind::GreaterEqual:
      op = CmpOp::Ge;
      break;
    case TokenKind::KwIn:
      op = CmpOp::In;
      break;
    case TokenKind::KwIs:
      op = peekTok().is(TokenKind::KwNot) ? CmpOp::IsNot : CmpOp::Is;
      break;
    case TokenKind::KwNot:
      if (!peekTok().is(TokenKind::KwIn))
        return cmp ? cmp : lhs;
      op = CmpOp::NotIn;
      break;
    default:
      return cmp ? cmp : lhs;
    }
    advance();
    if (op == CmpOp::IsNot || op == CmpOp::NotIn)
      advance();
    if (!cmp)
      cmp = make<Compare>(lhs->loc, lhs);
    cmp->ops.push_back(op);
    cmp->opLocs.push_back(opLoc);
    cmp->comparators.push_back(parseBinary(0));
  }
}

// bitor  = bitxor { "|" bitxor } ;
// bitxor = bitand { "^" bitand } ;
// bitand = shift { "&" shift } ;
// shift  = sum { ( "<<" | ">>" ) sum } ;
// sum    = term { ( "+" | "-" ) term } ;
// term   = factor { ( "*" | "/" | "//" | "%" | "@" ) factor } ;
// One function for the six levels: `level` indexes them loosest first.
Expr *Parser::parseBinary(int level) {
  if (level == kNumBinaryLevels)
    return parseFactor();
  DepthScope depth(*this, exprDepth_);
  Expr *lhs = parseBinary(level + 1);
  while (std::optional<BinaryOp> op = binaryOpAt(level, tok().kind)) {
    SourceLoc opLoc = advance().loc;
    // Each chained operator deepens the (left-leaning) tree by one.
    depth.deeper(opLoc);
    Expr *rhs = parseBinary(level + 1);
    lhs = make<Binary>(lhs->loc, *op, lhs, rhs, opLoc);
  }
  return lhs;
}

// factor = ( "+" | "-" | "~" ) factor | power ;
Expr *Parser::parseFactor() {
  UnaryOp op;
  switch (tok().kind) {
  case TokenKind::Minus:
    op = UnaryOp::Neg;
    break;
  case TokenKind::Plus:
    op = UnaryOp::Pos;
    break;
  case TokenKind::Tilde:
    op = UnaryOp::Invert;
    break;
  case TokenKind::KwAwait:
    unsupported(tok().loc, "'await'");
  default:
    return parsePower();
  }
  DepthScope depth(*this, exprDepth_);
  SourceLoc loc = advance().loc;
  depth.deeper(loc);
  return make<Unary>(loc, op, parseFactor());
}

// power = primary [ "**" factor ] ;
// The right operand is a factor, so `2**-1` parses and `**` is
// right-associative; `-x**2` is -(x**2) because factor handles the `-` first.
Expr *Parser::parsePower() {
  Expr *base = parsePrimary();
  if (!at(TokenKind::StarStar))
    return base;
  DepthScope depth(*this, exprDepth_);
  SourceLoc opLoc = advance().loc;
  depth.deeper(opLoc);
  Expr *exponent = parseFactor();
  return make<Binary>(base->loc, BinaryOp::Pow, base, exponent, opLoc);
}

// primary = atom { "." NAME | "(" [ arguments ] ")" | "[" subscripts "]" } ;
Expr *Parser::parsePrimary() {
  DepthScope depth(*this, exprDepth_);
  Expr *e = parseAtom();
  while (true) {
    if (at(TokenKind::Dot)) {
      depth.deeper(advance().loc);
      const Token &name = expectName("an attribute name after '.'");
      e = make<Attribute>(e->loc, e, std::string(name.text), name.loc);
    } else if (at(TokenKind::LParen)) {
      depth.deeper(tok().loc);
      e = parseCall(e);
    } else if (at(TokenKind::LSquare)) {
      depth.deeper(tok().loc);
      e = parseSubscript(e);
    } else {
      return e;
    }
  }
}

// arguments = argument { "," argument } [ "," ] ;
// argument  = NAME "=" expression | expression ;
Expr *Parser::parseCall(Expr *callee) {
  advance(); // (
  auto *call = make<Call>(callee->loc, callee);
  while (!at(TokenKind::RParen)) {
    SourceLoc loc = tok().loc;
    if (at(TokenKind::Star))
      unsupported(loc, "starred expressions");
    if (at(TokenKind::StarStar))
      unsupported(loc, "'**' unpacking");
    if (at(TokenKind::Identifier) && peekTok().is(TokenKind::Equal)) {
      std::string name(advance().text);
      advance(); // =
      Expr *value = parseExpression();
      for (const Keyword &k : call->keywords)
        if (k.name == name)
          diag_.error(loc, fmt::format("keyword argument repeated: {}", name))
              .notes.push_back({k.loc, "first given here"});
      call->keywords.push_back(Keyword{loc, std::move(name), value});
    } else {
      Expr *arg = parseExpression();
      if (at(TokenKind::KwFor))
        unsupported(arg->loc, "generator expressions");
      if (at(TokenKind::Equal))
        fail(tok().loc, "expression cannot contain assignment, perhaps you meant \"==\"?");
      if (!call->keywords.empty())
        diag_.error(arg->loc, "positional argument follows keyword argument");
      call->args.push_back(arg);
    }
    if (!accept(TokenKind::Comma))
      break;
  }
  expectClosing(TokenKind::RParen, "in the call arguments");
  return call;
}

// subscripts = subscript { "," subscript } [ "," ] ;
Expr *Parser::parseSubscript(Expr *value) {
  advance(); // [
  auto *sub = make<Subscript>(value->loc, value);
  if (at(TokenKind::RSquare))
    failExpected("an index");
  do {
    if (at(TokenKind::RSquare))
      break; // trailing comma
    sub->indices.push_back(parseSliceItem());
  } while (accept(TokenKind::Comma));
  expectClosing(TokenKind::RSquare, "in the subscript");
  return sub;
}

// subscript = expression | [ expression ] ":" [ expression ] [ ":" [ expression ] ] ;
Expr *Parser::parseSliceItem() {
  SourceLoc loc = tok().loc;
  if (at(TokenKind::Star))
    unsupported(loc, "starred expressions");
  Expr *lower = nullptr;
  if (!at(TokenKind::Colon)) {
    lower = parseExpression();
    if (!at(TokenKind::Colon))
      return lower;
  }
  auto *slice = make<Slice>(loc);
  slice->lower = lower;
  advance(); // :
  auto endsPart = [&] {
    return at(TokenKind::Colon) || at(TokenKind::Comma) || at(TokenKind::RSquare);
  };
  if (!endsPart())
    slice->upper = parseExpression();
  if (accept(TokenKind::Colon) && !endsPart())
    slice->step = parseExpression();
  return slice;
}

// atom = NAME | INT | FLOAT | STRING { STRING } | "True" | "False" | "None"
//      | "(" [ expression_list ] ")" | "[" [ expression { "," expression } [ "," ] ] "]"
//      | dict_display ;
Expr *Parser::parseAtom() {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::Identifier:
    advance();
    return make<Name>(t.loc, std::string(t.text));
  case TokenKind::Int:
    advance();
    return make<IntLit>(t.loc, t.intValue);
  case TokenKind::Float:
    advance();
    return make<FloatLit>(t.loc, t.floatValue);
  case TokenKind::String:
    return parseStrings();
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    advance();
    return make<BoolLit>(t.loc, t.kind == TokenKind::KwTrue);
  case TokenKind::KwNone:
    advance();
    return make<NoneLit>(t.loc);
  case TokenKind::LParen:
    return parseParenthesized();
  case TokenKind::LSquare:
    return parseList();
  case TokenKind::LBrace:
    return parseBraces();
  case TokenKind::Ellipsis:
    unsupported(t.loc, "Ellipsis literals ('...')");
  case TokenKind::Star:
    unsupported(t.loc, "starred expressions");
  case TokenKind::KwLambda:
    unsupported(t.loc, "lambda expressions");
  case TokenKind::KwYield:
    unsupported(t.loc, "'yield'");
  case TokenKind::KwAwait:
    unsupported(t.loc, "'await'");
  default:
    failExpected("an expression");
  }
}

// STRING { STRING }: adjacent literals concatenate, as in Python.
Expr *Parser::parseStrings() {
  SourceLoc loc = tok().loc;
  std::string value;
  while (at(TokenKind::String)) {
    const Token &t = advance();
    if (t.isFString)
      unsupported(t.loc, "f-strings");
    if (t.isBytes)
      unsupported(t.loc, "bytes literals");
    value += t.stringValue;
  }
  return make<StringLit>(loc, std::move(value));
}

// "(" [ expression_list ] ")": `()` and `(a,)` are tuples, `(a)` is just a.
Expr *Parser::parseParenthesized() {
  SourceLoc loc = advance().loc;
  if (accept(TokenKind::RParen))
    return make<Tuple>(loc);
  Expr *first = parseStarrable();
  if (at(TokenKind::KwFor))
    unsupported(loc, "generator expressions");
  if (accept(TokenKind::RParen))
    return first;
  auto *tuple = make<Tuple>(loc);
  tuple->elts.push_back(first);
  while (accept(TokenKind::Comma) && !at(TokenKind::RParen))
    tuple->elts.push_back(parseStarrable());
  expectClosing(TokenKind::RParen, "in the tuple");
  return tuple;
}

// "[" [ expression { "," expression } [ "," ] ] "]"
Expr *Parser::parseList() {
  SourceLoc loc = advance().loc;
  auto *list = make<List>(loc);
  if (accept(TokenKind::RSquare))
    return list;
  list->elts.push_back(parseStarrable());
  if (at(TokenKind::KwFor))
    unsupported(loc, "list comprehensions");
  while (accept(TokenKind::Comma) && !at(TokenKind::RSquare))
    list->elts.push_back(parseStarrable());
  expectClosing(TokenKind::RSquare, "in the list");
  return list;
}

// dict_display = "{" [ expression ":" expression { "," expression ":" expression } [ "," ] ] "}" ;
// Sets are never supported; dicts only inside decorators (tk.Config).
Expr *Parser::parseBraces() {
  SourceLoc loc = advance().loc;
  auto *dict = make<Dict>(loc);
  if (accept(TokenKind::RBrace)) {
    if (!inDecorator_)
      unsupported(loc, "dict displays");
    return dict;
  }
  if (at(TokenKind::StarStar))
    unsupported(tok().loc, "'**' unpacking");
  Expr *key = parseStarrable();
  if (!at(TokenKind::Colon))
    unsupported(loc, at(TokenKind::KwFor) ? "set comprehensions" : "set displays");
  if (!inDecorator_)
    unsupported(loc, "dict displays");
  while (true) {
    expect(TokenKind::Colon);
    Expr *value = parseExpression();
    if (at(TokenKind::KwFor))
      unsupported(loc, "dict comprehensions");
    dict->keys.push_back(key);
    dict->values.push_back(value);
    if (!accept(TokenKind::Comma) || at(TokenKind::RBrace))
      break;
    key = parseExpression();
  }
  expectClosing(TokenKind::RBrace, "in the dict");
  return dict;
}

} // namespace

ast::Module *parseModule(const SourceManager &sm, BufferId buffer, ast::Context &ctx,
                         DiagnosticEngine &diag) {
  size_t firstDiag = diag.diagnostics().size();
  std::vector<Token> tokens = lex(sm, buffer, diag);
  std::set<uint32_t> lexErrorLines;
  for (size_t i = firstDiag; i < diag.diagnostics().size(); ++i) {
    const Diagnostic &d = diag.diagnostics()[i];
    if (d.severity == Severity::Error && d.loc.buffer == buffer)
      lexErrorLines.insert(d.loc.line);
  }
  ast::Module *m = ctx.makeModule();
  m->buffer = buffer;
  Parser(sm, ctx, diag, std::move(tokens), std::move(lexErrorLines)).parseFile(*m);
  return m;
}

} // namespace tk
