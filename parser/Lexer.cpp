#include "parser/Lexer.h"
#include "support/Quote.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace tk {

const char *tokenKindCategory(TokenKind k) {
  switch (k) {
#define TK_TOKEN(NAME, DESC)                                                                       \
  case TokenKind::NAME:                                                                            \
    return DESC;
#define TK_KEYWORD(NAME, SPELLING)                                                                 \
  case TokenKind::Kw##NAME:                                                                        \
    return "keyword";
#define TK_PUNCT(NAME, SPELLING)                                                                   \
  case TokenKind::NAME:                                                                            \
    return "punct";
#include "parser/TokenKinds.def"
  }
  return "?";
}

const char *tokenKindSpelling(TokenKind k) {
  switch (k) {
#define TK_TOKEN(NAME, DESC)                                                                       \
  case TokenKind::NAME:                                                                            \
    return DESC;
#define TK_KEYWORD(NAME, SPELLING)                                                                 \
  case TokenKind::Kw##NAME:                                                                        \
    return SPELLING;
#define TK_PUNCT(NAME, SPELLING)                                                                   \
  case TokenKind::NAME:                                                                            \
    return SPELLING;
#include "parser/TokenKinds.def"
  }
  return "?";
}

namespace {

struct Spelled {
  std::string_view spelling;
  TokenKind kind;
};

constexpr Spelled kKeywords[] = {
#define TK_KEYWORD(NAME, SPELLING) {SPELLING, TokenKind::Kw##NAME},
#include "parser/TokenKinds.def"
};

// Longest first within a shared prefix (TokenKinds.def keeps that order), so
// the first match is the longest one.
constexpr Spelled kPuncts[] = {
#define TK_PUNCT(NAME, SPELLING) {SPELLING, TokenKind::NAME},
#include "parser/TokenKinds.def"
};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
char closerOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }
TokenKind closerKind(char close) {
  return close == ')' ? TokenKind::RParen : close == ']' ? TokenKind::RSquare : TokenKind::RBrace;
}
bool isNonAscii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

int digitValue(char c) {
  if (isDigit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 99;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Lexer {
public:
  Lexer(const SourceManager &sm, BufferId buffer, DiagnosticEngine &diag)
      : src_(sm.text(buffer)), buffer_(buffer), diag_(diag) {}

  std::vector<Token> run();

private:
  struct IndentLevel {
    unsigned width;    // a tab advances to the next multiple of 8
    unsigned altWidth; // a tab counts 1; must order lines the same way
  };
  struct OpenBracket {
    char ch;
    SourceLoc loc;
  };

  char peek(size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= src_.size(); }
  // A line break is "\n" or "\r\n"; a lone "\r" is treated as white space.
  size_t newlineLength() const {
    if (peek() == '\n')
      return 1;
    if (peek() == '\r' && peek(1) == '\n')
      return 2;
    return 0;
  }
  SourceLoc locAt(size_t offset) const {
    return SourceLoc{buffer_, line_, static_cast<uint32_t>(offset - lineStart_ + 1)};
  }
  SourceLoc here() const { return locAt(pos_); }
  void consumeNewline() {
    pos_ += newlineLength();
    ++line_;
    lineStart_ = pos_;
  }

  Token &emit(TokenKind kind, size_t start, SourceLoc loc) {
    Token t;
    t.kind = kind;
    t.loc = loc;
    t.text = src_.substr(start, pos_ - start);
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }
  void emitLayout(TokenKind kind, SourceLoc loc) {
    Token t;
    t.kind = kind;
    t.loc = loc;
    tokens_.push_back(std::move(t));
  }

  void handleIndentation();
  void lexIdentifierOrString();
  void lexNumber();
  void lexString(size_t start, SourceLoc loc, std::string_view prefix);
  void lexPunct();
  bool decodeEscape(std::string &out);

  std::string_view src_;
  BufferId buffer_;
  DiagnosticEngine &diag_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;
  std::vector<Token> tokens_;
  std::vector<IndentLevel> indents_{{0, 0}};
  std::vector<OpenBracket> brackets_;
};

std::vector<Token> Lexer::run() {
  // A UTF-8 byte order mark is not part of the program.
  if (src_.substr(0, 3) == "\xEF\xBB\xBF") {
    pos_ = 3;
    lineStart_ = 3;
  }
  bool atLineStart = true;
  while (true) {
    if (atLineStart && brackets_.empty()) {
      handleIndentation();
      atLineStart = false;
      if (atEnd())
        break;
      // handleIndentation leaves us at the first token of a non-blank line.
    }
    while (peek() == ' ' || peek() == '\t' || peek() == '\f' || (peek() == '\r' && peek(1) != '\n'))
      ++pos_;
    if (atEnd())
      break;
    char c = peek();
    if (c == '#') {
      while (!atEnd() && newlineLength() == 0)
        ++pos_;
      continue;
    }
    if (newlineLength() != 0) {
      if (brackets_.empty()) {
        // Blank lines never reach here (handleIndentation skips them), so this
        // line holds at least one token.
        emitLayout(TokenKind::Newline, here());
        atLineStart = true;
      }
      consumeNewline();
      continue;
    }
    if (c == '\\') {
      SourceLoc loc = here();
      ++pos_;
      if (newlineLength() != 0) {
        consumeNewline();
        continue;
      }
      if (atEnd()) {
        diag_.error(loc, "unexpected end of file after line continuation character '\\'");
        break;
      }
      diag_.error(loc, "unexpected character after line continuation character '\\'");
      continue;
    }
    if (isIdentStart(c) || isNonAscii(c)) {
      lexIdentifierOrString();
      continue;
    }
    if (isDigit(c) || (c == '.' && isDigit(peek(1)))) {
      lexNumber();
      continue;
    }
    if (c == '\'' || c == '"') {
      lexString(pos_, here(), "");
      continue;
    }
    lexPunct();
  }

  SourceLoc eof = here();
  if (!brackets_.empty()) {
    // The innermost unclosed bracket is the one the user most likely forgot.
    const OpenBracket &open = brackets_.back();
    diag_.error(eof, fmt::format("unexpected end of file: '{}' was never closed", open.ch))
        .notes.push_back({open.loc, fmt::format("'{}' opened here", open.ch)});
  }
  if (!tokens_.empty() && tokens_.back().kind != TokenKind::Newline &&
      tokens_.back().kind != TokenKind::Dedent && tokens_.back().kind != TokenKind::Indent)
    emitLayout(TokenKind::Newline, eof);
  for (size_t i = 1; i < indents_.size(); ++i)
    emitLayout(TokenKind::Dedent, eof);
  emitLayout(TokenKind::EndOfFile, eof);
  return std::move(tokens_);
}

// At the start of a logical line: skips blank and comment-only lines, then
// compares the indentation of the first real line with the stack and emits
// Indent or Dedent tokens.
void Lexer::handleIndentation() {
  unsigned width = 0, altWidth = 0;
  while (true) {
    char c = peek();
    if (c == ' ') {
      ++width;
      ++altWidth;
    } else if (c == '\t') {
      width = (width / 8 + 1) * 8;
      ++altWidth;
    } else if (c == '\f') {
      width = altWidth = 0; // Python resets the count at a form feed
    } else if (c == '\r' && peek(1) != '\n') {
      // a lone CR is white space
    } else if (c == '#' || newlineLength() != 0) {
      // Blank and comment-only lines do not count for indentation.
      while (!atEnd() && newlineLength() == 0)
        ++pos_;
      if (atEnd())
        return;
      consumeNewline();
      width = altWidth = 0;
      continue;
    } else {
      break;
    }
    ++pos_;
  }
  if (atEnd())
    return;

  SourceLoc loc = here();
  const IndentLevel &top = indents_.back();
  if (width == top.width) {
    if (altWidth != top.altWidth)
      diag_.error(loc, "inconsistent use of tabs and spaces in indentation");
    return;
  }
  if (width > top.width) {
    if (altWidth <= top.altWidth)
      diag_.error(loc, "inconsistent use of tabs and spaces in indentation");
    // Whether a block may open here (the previous line ended with ':') is
    // the parser's call: it knows whether that line already had an error.
    indents_.push_back({width, altWidth});
    emitLayout(TokenKind::Indent, loc);
    return;
  }
  while (indents_.size() > 1 && indents_.back().width > width) {
    const IndentLevel &below = indents_[indents_.size() - 2];
    if (below.width < width) {
      // The line falls between two levels. Python gives up here; we report it
      // and treat the line as continuing the inner block, re-measured, so
      // the lines after it do not cascade into more errors.
      diag_.error(loc, "unindent does not match any outer indentation level");
      indents_.back() = {width, altWidth};
      return;
    }
    indents_.pop_back();
    emitLayout(TokenKind::Dedent, loc);
  }
  if (indents_.back().altWidth != altWidth)
    diag_.error(loc, "inconsistent use of tabs and spaces in indentation");
}

void Lexer::lexIdentifierOrString() {
  size_t start = pos_;
  SourceLoc loc = here();
  bool nonAscii = false;
  while (isIdentChar(peek()) || isNonAscii(peek())) {
    nonAscii |= isNonAscii(peek());
    ++pos_;
  }
  std::string_view text = src_.substr(start, pos_ - start);
  if (nonAscii) {
    // Python allows Unicode identifiers; tk keeps names ASCII so they can be
    // used verbatim as PTX and C symbol names.
    diag_.error(loc, fmt::format("non-ASCII character in identifier '{}': tk identifiers must "
                                 "be ASCII letters, digits and '_'",
                                 text));
    emit(TokenKind::Identifier, start, loc);
    return;
  }
  if (peek() == '\'' || peek() == '"') {
    std::string lower;
    for (char c : text)
      lower += static_cast<char>(c | 0x20);
    if (lower == "r" || lower == "u" || lower == "b" || lower == "f" || lower == "br" ||
        lower == "rb" || lower == "fr" || lower == "rf") {
      lexString(start, loc, lower);
      return;
    }
  }
  for (const Spelled &kw : kKeywords) {
    if (kw.spelling == text) {
      emit(kw.kind, start, loc);
      return;
    }
  }
  emit(TokenKind::Identifier, start, loc);
}

// Numbers: the digits are scanned once with Python's '_' rule (an underscore
// only between two digits, or right after a base prefix), then the value is
// computed from the digits with the underscores removed.
void Lexer::lexNumber() {
  size_t start = pos_;
  SourceLoc loc = here();
  bool bad = false;
  auto scanDigits = [&](int base, std::string &digits) {
    while (true) {
      char c = peek();
      if (c == '_') {
        if (digitValue(peek(1)) >= base) {
          bad = true;
          ++pos_;
          continue;
        }
        ++pos_;
        continue;
      }
      if (digitValue(c) < base && (base == 16 || isDigit(c))) {
        digits += c;
        ++pos_;
        continue;
      }
      break;
    }
  };
  auto finishBadSuffix = [&](const char *what) {
    // `1abc`, `0x1g`, `12_`: report once and swallow the rest of the word so
    // the parser does not see a stray identifier.
    if (isIdentChar(peek()) || bad) {
      while (isIdentChar(peek()) || peek() == '.')
        ++pos_;
      diag_.error(loc,
                  fmt::format("invalid {} literal '{}'", what, src_.substr(start, pos_ - start)));
      return true;
    }
    return false;
  };

  char c1 = peek(1) | 0x20;
  if (peek() == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
    int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
    const char *what = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
    pos_ += 2;
    std::string digits;
    scanDigits(base, digits);
    if (digits.empty())
      bad = true;
    Token &tok = emit(TokenKind::Int, start, loc);
    if (finishBadSuffix(what)) {
      tok.text = src_.substr(start, pos_ - start);
      return;
    }
    uint64_t value = 0;
    for (char d : digits) {
      auto v = static_cast<uint64_t>(digitValue(d));
      if (value > (std::numeric_limits<uint64_t>::max() - v) / base) {
        diag_.error(
            loc, fmt::format("integer literal {} is too large (the largest is 2**64-1)", tok.text));
        return;
      }
      value = value * base + v;
    }
    tok.intValue = value;
    return;
  }

  std::string digits;
  scanDigits(10, digits);
  bool isFloat = false;
  std::string mantissa = digits;
  if (peek() == '.' && !(peek(1) == '.' && peek(2) == '.')) {
    isFloat = true;
    ++pos_;
    mantissa += '.';
    if (isDigit(peek()))
      scanDigits(10, mantissa);
  }
  if ((peek() | 0x20) == 'e' &&
      (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
    isFloat = true;
    mantissa += 'e';
    ++pos_;
    if (peek() == '+' || peek() == '-')
      mantissa += src_[pos_++];
    scanDigits(10, mantissa);
  }
  if ((peek() | 0x20) == 'j' && !isIdentChar(peek(1))) {
    ++pos_;
    emit(TokenKind::Float, start, loc);
    diag_.error(loc, "not supported in tk kernels: complex literals");
    return;
  }
  Token &tok = emit(isFloat ? TokenKind::Float : TokenKind::Int, start, loc);
  if (finishBadSuffix("decimal")) {
    tok.text = src_.substr(start, pos_ - start);
    return;
  }
  if (isFloat) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(mantissa.data(), mantissa.data() + mantissa.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Python rounds 1e400 to inf and 1e-400 to 0.0; so do we.
      bool negExp = mantissa.find("e-") != std::string::npos;
      value = negExp ? 0.0 : std::numeric_limits<double>::infinity();
    }
    (void)ptr;
    tok.floatValue = value;
    return;
  }
  if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos) {
    diag_.error(loc, "leading zeros in decimal integer literals are not permitted; use an 0o "
                     "prefix for octal integers");
    return;
  }
  uint64_t value = 0;
  for (char d : digits) {
    auto v = static_cast<uint64_t>(d - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - v) / 10) {
      diag_.error(
          loc, fmt::format("integer literal {} is too large (the largest is 2**64-1)", tok.text));
      return;
    }
    value = value * 10 + v;
  }
  tok.intValue = value;
}

// Decodes one escape sequence; pos_ is on the character after the backslash.
// Returns false for a malformed \x, \u or \U escape (already reported).
bool Lexer::decodeEscape(std::string &out) {
  SourceLoc escLoc = locAt(pos_ - 1);
  char c = peek();
  ++pos_;
  switch (c) {
  case '\\':
    out += '\\';
    return true;
  case '\'':
    out += '\'';
    return true;
  case '"':
    out += '"';
    return true;
  case 'a':
    out += '\a';
    return true;
  case 'b':
    out += '\b';
    return true;
  case 'f':
    out += '\f';
    return true;
  case 'n':
    out += '\n';
    return true;
  case 'r':
    out += '\r';
    return true;
  case 't':
    out += '\t';
    return true;
  case 'v':
    out += '\v';
    return true;
  default:
    break;
  }
  if (c >= '0' && c <= '7') {
    unsigned v = c - '0';
    for (int i = 0; i < 2 && peek() >= '0' && peek() <= '7'; ++i)
      v = v * 8 + (src_[pos_++] - '0');
    appendUtf8(out, v);
    return true;
  }
  if (c == 'x' || c == 'u' || c == 'U') {
    int n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (digitValue(peek()) >= 16) {
        diag_.error(escLoc, fmt::format("invalid \\{} escape in string literal: expected {} hex "
                                        "digits",
                                        c, n));
        return false;
      }
      v = v * 16 + digitValue(src_[pos_++]);
    }
    if (v > 0x10ffff) {
      diag_.error(escLoc, "invalid \\U escape in string literal: not a Unicode code point");
      return false;
    }
    appendUtf8(out, v);
    return true;
  }
  // Python keeps unknown escapes such as "\d" as they are (with a warning);
  // so do we, since kernels only use strings for names and messages.
  --pos_;
  out += '\\';
  return true;
}

void Lexer::lexString(size_t start, SourceLoc loc, std::string_view prefix) {
  bool raw = prefix.find('r') != std::string_view::npos;
  char quote = peek();
  bool triple = peek(1) == quote && peek(2) == quote;
  pos_ += triple ? 3 : 1;
  std::string value;
  bool terminated = false;
  while (!atEnd()) {
    char c = peek();
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      pos_ += triple ? 3 : 1;
      terminated = true;
      break;
    }
    if (newlineLength() != 0) {
      if (!triple)
        break;
      value.append(src_.substr(pos_, newlineLength()));
      consumeNewline();
      continue;
    }
    if (c == '\\') {
      ++pos_;
      if (atEnd())
        break;
      if (newlineLength() != 0) {
        // Backslash-newline continues the string; raw strings keep both.
        if (raw) {
          value += '\\';
          value.append(src_.substr(pos_, newlineLength()));
        }
        consumeNewline();
        continue;
      }
      if (raw) {
        // In a raw string a backslash still protects the quote after it.
        value += '\\';
        value += src_[pos_++];
        continue;
      }
      decodeEscape(value);
      continue;
    }
    value += c;
    ++pos_;
  }
  Token &tok = emit(TokenKind::String, start, loc);
  tok.stringValue = std::move(value);
  tok.isRaw = raw;
  tok.isBytes = prefix.find('b') != std::string_view::npos;
  tok.isFString = prefix.find('f') != std::string_view::npos;
  if (!terminated)
    diag_.error(loc, triple ? "unterminated triple-quoted string literal"
                            : "unterminated string literal");
}

void Lexer::lexPunct() {
  size_t start = pos_;
  SourceLoc loc = here();
  std::string_view rest = src_.substr(pos_);
  for (const Spelled &p : kPuncts) {
    if (rest.substr(0, p.spelling.size()) != p.spelling)
      continue;
    pos_ += p.spelling.size();
    char c = p.spelling[0];
    if (p.spelling.size() == 1 && (c == '(' || c == '[' || c == '{')) {
      brackets_.push_back({c, loc});
    } else if (p.spelling.size() == 1 && (c == ')' || c == ']' || c == '}')) {
      if (brackets_.empty()) {
        // Dropping the token keeps the parser from reporting it a second time.
        diag_.error(loc, fmt::format("unmatched '{}'", c));
        return;
      }
      OpenBracket open = brackets_.back();
      if (c != closerOf(open.ch)) {
        diag_.error(loc, fmt::format("closing '{}' does not match opening '{}'", c, open.ch))
            .notes.push_back({open.loc, fmt::format("'{}' opened here", open.ch)});
        // Close what the user most likely meant: down to a matching opener if
        // there is one (`f(a[)` closes both), else just the innermost. The
        // parser then sees balanced brackets and reports nothing more.
        size_t depth = brackets_.size();
        while (depth > 0 && closerOf(brackets_[depth - 1].ch) != c)
          --depth;
        size_t keep = depth == 0 ? brackets_.size() - 1 : depth - 1;
        while (brackets_.size() > keep) {
          emit(closerKind(closerOf(brackets_.back().ch)), start, loc);
          brackets_.pop_back();
        }
        return;
      }
      brackets_.pop_back();
    }
    emit(p.kind, start, loc);
    return;
  }
  diag_.error(loc, fmt::format("invalid character '{}' in source", showChar(peek())));
  ++pos_;
}

} // namespace

std::vector<Token> lex(const SourceManager &sm, BufferId buffer, DiagnosticEngine &diag) {
  return Lexer(sm, buffer, diag).run();
}

std::string dumpTokens(const std::vector<Token> &tokens, const SourceManager &sm) {
  (void)sm; // locations print as line:col within the buffer
  std::string out;
  for (const Token &t : tokens) {
    out += fmt::format("{}:{} {}", t.loc.line, t.loc.col, tokenKindCategory(t.kind));
    switch (t.kind) {
    case TokenKind::EndOfFile:
    case TokenKind::Newline:
    case TokenKind::Indent:
    case TokenKind::Dedent:
      break;
    case TokenKind::Int:
      out += fmt::format(" {} {}", t.text, t.intValue);
      break;
    case TokenKind::Float:
      out += fmt::format(" {} {}", t.text, t.floatValue);
      break;
    case TokenKind::String:
      out += fmt::format(" {} {}", quoteString(t.text), quoteString(t.stringValue));
      break;
    default:
      out += fmt::format(" {}", t.text);
      break;
    }
    out += '\n';
  }
  return out;
}

} // namespace tk
