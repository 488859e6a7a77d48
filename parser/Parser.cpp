#include "parser/ParserImpl.h"

namespace tk {
namespace parser_impl {

using namespace ast;

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

} // namespace parser_impl

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
  parser_impl::Parser(sm, ctx, diag, std::move(tokens), std::move(lexErrorLines)).parseFile(*m);
  return m;
}

} // namespace tk
