#include "parser/ParserImpl.h"

namespace tk {
namespace parser_impl {

using namespace ast;

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

} // namespace parser_impl
} // namespace tk
