// ParserImpl.h: the parser's class, shared by its two halves (private to parser/).
//
// Parser.cpp holds the statement rules and the entry point, ParseExpr.cpp the
// expression rules; both are one recursive-descent parser over the token
// vector the lexer produced, with the grammar (docs/grammar.md) as comments.
#pragma once

#include "parser/Lexer.h"
#include "parser/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace tk::parser_impl {

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

inline std::string describe(const Token &t) {
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

inline std::optional<BinaryOp> augAssignOp(TokenKind k) {
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
inline std::optional<BinaryOp> binaryOpAt(int level, TokenKind k) {
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

} // namespace tk::parser_impl
