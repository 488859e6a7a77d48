// Token: what the lexer hands the parser.
//
// A token records its kind, the location of its first character, its text (a
// view into the SourceManager's buffer, so tokens stay valid as long as the
// SourceManager does) and, for literals, the decoded value. For
//
//   x = 0x10 + r'a\n'
//
// the lexer produces Identifier "x", Equal, Int "0x10" (intValue 16), Plus,
// String "r'a\n'" (stringValue `a\n`, three characters, isRaw), then Newline.
//
// Layout tokens follow Python: Newline ends a logical line, Indent and Dedent
// open and close blocks, EndOfFile is always the last token.
#pragma once

#include "lang/SourceManager.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tk {

enum class TokenKind : uint8_t {
#define TK_TOKEN(NAME, DESC) NAME,
#define TK_KEYWORD(NAME, SPELLING) Kw##NAME,
#define TK_PUNCT(NAME, SPELLING) NAME,
#include "parser/TokenKinds.def"
};

/// The name a token dump uses: "NEWLINE", "identifier", "int", "keyword",
/// "punct", ...
const char *tokenKindCategory(TokenKind k);
/// The spelling of a keyword or punctuator ("def", "**="); the description of
/// the other kinds ("identifier", "NEWLINE").
const char *tokenKindSpelling(TokenKind k);

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  SourceLoc loc;
  std::string_view text; // the source spelling; empty for layout tokens

  uint64_t intValue = 0;   // Int
  double floatValue = 0.0; // Float
  std::string stringValue; // String, escapes decoded (not for raw strings)
  bool isRaw = false;      // String with an r prefix
  bool isBytes = false;    // String with a b prefix (rejected by the parser)
  bool isFString = false;  // String with an f prefix (rejected by the parser)

  bool is(TokenKind k) const { return kind == k; }
};

} // namespace tk
