// Lexer tests: layout tokens (NEWLINE, INDENT, DEDENT), line joining, each
// literal form, each operator, and the lexical errors with their locations.
#include "parser/Lexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tk;

namespace {

struct Lexed {
  SourceManager sm;
  DiagnosticEngine diag{sm};
  std::vector<Token> tokens;

  explicit Lexed(std::string text) {
    BufferId id = sm.addBuffer("t.tk", std::move(text));
    tokens = lex(sm, id, diag);
  }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token &t : tokens)
      out.push_back(t.kind);
    return out;
  }
  // The messages of all errors, "line:col: message" each.
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diag.diagnostics())
      out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                    d.message);
    return out;
  }
};

using K = TokenKind;

TEST(Lexer, EmptyFileIsJustEof) {
  Lexed l("");
  EXPECT_EQ(l.kinds(), std::vector<K>{K::EndOfFile});
  Lexed blank("\n\n   \n# only a comment\n");
  EXPECT_EQ(blank.kinds(), std::vector<K>{K::EndOfFile});
  EXPECT_TRUE(blank.errors().empty());
}

TEST(Lexer, SimpleLineAndLocations) {
  Lexed l("x = y+1\n");
  ASSERT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::Equal, K::Identifier, K::Plus, K::Int,
                                       K::Newline, K::EndOfFile}));
  EXPECT_EQ(l.tokens[0].text, "x");
  EXPECT_EQ(l.tokens[2].loc.col, 5u);
  EXPECT_EQ(l.tokens[3].loc.col, 6u);
  EXPECT_EQ(l.tokens[4].intValue, 1u);
  EXPECT_EQ(l.tokens[5].loc.col, 8u); // the NEWLINE sits on the line break
}

TEST(Lexer, NoTrailingNewlineStillEndsTheLine) {
  Lexed l("def f():\n    return 1");
  EXPECT_EQ(l.kinds(),
            (std::vector<K>{K::KwDef, K::Identifier, K::LParen, K::RParen, K::Colon, K::Newline,
                            K::Indent, K::KwReturn, K::Int, K::Newline, K::Dedent, K::EndOfFile}));
  EXPECT_TRUE(l.errors().empty());
}

TEST(Lexer, NestedIndentationDedentsSeveralLevels) {
  Lexed l("if a:\n"
          "    if b:\n"
          "        if c:\n"
          "            x\n"
          "y\n");
  std::vector<K> expected = {K::KwIf,       K::Identifier, K::Colon,    K::Newline, K::Indent,
                             K::KwIf,       K::Identifier, K::Colon,    K::Newline, K::Indent,
                             K::KwIf,       K::Identifier, K::Colon,    K::Newline, K::Indent,
                             K::Identifier, K::Newline,    K::Dedent,   K::Dedent,  K::Dedent,
                             K::Identifier, K::Newline,    K::EndOfFile};
  EXPECT_EQ(l.kinds(), expected);
  // The three DEDENTs sit where `y` starts.
  EXPECT_EQ(l.tokens[17].loc.line, 5u);
  EXPECT_EQ(l.tokens[17].loc.col, 1u);
}

TEST(Lexer, DedentsAtEndOfFile) {
  Lexed l("if a:\n  if b:\n    x\n");
  std::vector<K> k = l.kinds();
  ASSERT_GE(k.size(), 3u);
  EXPECT_EQ(k[k.size() - 3], K::Dedent);
  EXPECT_EQ(k[k.size() - 2], K::Dedent);
  EXPECT_EQ(k.back(), K::EndOfFile);
}

TEST(Lexer, BlankAndCommentLinesDoNotAffectIndentation) {
  Lexed l("if a:\n\n    # comment at another depth\n  \n    x = 1  # trailing\n\ny\n");
  EXPECT_TRUE(l.errors().empty());
  int indents = 0, dedents = 0, newlines = 0;
  for (K k : l.kinds()) {
    indents += k == K::Indent;
    dedents += k == K::Dedent;
    newlines += k == K::Newline;
  }
  EXPECT_EQ(indents, 1);
  EXPECT_EQ(dedents, 1);
  EXPECT_EQ(newlines, 3); // `if a:`, `x = 1`, `y`
}

TEST(Lexer, TabsCountToTheNextMultipleOfEight) {
  // A tab and eight spaces are the same depth in both lines... but not when a
  // tab counts as one column, so Python calls that inconsistent.
  Lexed same("if a:\n\tx\n\ty\n");
  EXPECT_TRUE(same.errors().empty());
  Lexed mixed("if a:\n\tx\n        y\n");
  ASSERT_EQ(mixed.errors().size(), 1u);
  EXPECT_EQ(mixed.errors()[0], "3:9: inconsistent use of tabs and spaces in indentation");
}

TEST(Lexer, UnindentToUnknownLevelIsAnError) {
  Lexed l("if a:\n    x\n  y\n");
  ASSERT_EQ(l.errors().size(), 1u);
  EXPECT_EQ(l.errors()[0], "3:3: unindent does not match any outer indentation level");
  // Still ends with balanced layout tokens.
  int depth = 0;
  for (K k : l.kinds())
    depth += (k == K::Indent) - (k == K::Dedent);
  EXPECT_EQ(depth, 0);
}

TEST(Lexer, ImplicitLineJoiningInsideBrackets) {
  Lexed l("x = f(a,\n      b,  # comment\n\n   c)[\n0]\ny\n");
  EXPECT_TRUE(l.errors().empty());
  int newlines = 0;
  for (K k : l.kinds()) {
    newlines += k == K::Newline;
    EXPECT_NE(k, K::Indent);
  }
  EXPECT_EQ(newlines, 2);
}

TEST(Lexer, BackslashContinuation) {
  Lexed l("x = 1 + \\\n        2\ny\n");
  EXPECT_TRUE(l.errors().empty());
  EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::Equal, K::Int, K::Plus, K::Int, K::Newline,
                                       K::Identifier, K::Newline, K::EndOfFile}));
  EXPECT_EQ(l.tokens[4].loc.line, 2u);
  Lexed bad("x = 1 \\ 2\n");
  ASSERT_EQ(bad.errors().size(), 1u);
  EXPECT_EQ(bad.errors()[0], "1:7: unexpected character after line continuation character '\\'");
}

TEST(Lexer, CrlfLineEnds) {
  Lexed l("if a:\r\n    x = 1\r\ny\r\n");
  EXPECT_TRUE(l.errors().empty());
  EXPECT_EQ(l.kinds(), (std::vector<K>{K::KwIf, K::Identifier, K::Colon, K::Newline, K::Indent,
                                       K::Identifier, K::Equal, K::Int, K::Newline, K::Dedent,
                                       K::Identifier, K::Newline, K::EndOfFile}));
  EXPECT_EQ(l.tokens[10].loc.line, 3u);
}

TEST(Lexer, ByteOrderMarkIsSkipped) {
  Lexed l("\xEF\xBB\xBFx = 1\n");
  EXPECT_TRUE(l.errors().empty());
  EXPECT_EQ(l.tokens[0].kind, K::Identifier);
  EXPECT_EQ(l.tokens[0].text, "x");
}

TEST(Lexer, KeywordsAndIdentifiers) {
  Lexed l("def lambda await match _x9 None True False not_a_kw\n");
  EXPECT_EQ(l.kinds(), (std::vector<K>{K::KwDef, K::KwLambda, K::KwAwait, K::Identifier,
                                       K::Identifier, K::KwNone, K::KwTrue, K::KwFalse,
                                       K::Identifier, K::Newline, K::EndOfFile}));
}

TEST(Lexer, NonAsciiIdentifierIsAClearError) {
  Lexed l("caf\xC3\xA9 = 1\n");
  ASSERT_EQ(l.errors().size(), 1u);
  EXPECT_NE(l.errors()[0].find("1:1: non-ASCII character in identifier"), std::string::npos);
  // Non-ASCII text in strings and comments is fine.
  Lexed ok("s = '\xC3\xA9'  # \xC3\xA9\n");
  EXPECT_TRUE(ok.errors().empty());
  EXPECT_EQ(ok.tokens[2].stringValue, "\xC3\xA9");
}

TEST(Lexer, IntegerLiterals) {
  Lexed l("0 128 1_000_000 0x1F 0XfF_ff 0o17 0b1010_1010 18446744073709551615 00\n");
  EXPECT_TRUE(l.errors().empty()) << l.errors()[0];
  std::vector<uint64_t> want = {0, 128, 1000000, 0x1f, 0xffff, 017, 0xaa, UINT64_MAX, 0};
  // `00` is fine (`007` is not: see BadIntegerLiterals).
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(l.tokens[i].kind, K::Int) << i;
    EXPECT_EQ(l.tokens[i].intValue, want[i]) << i;
  }
}

TEST(Lexer, RandomIntegersRoundTripInEveryBase) {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 200; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    for (const char *fmt : {"%llu", "0x%llx", "0o%llo"}) {
      char buf[64];
      std::snprintf(buf, sizeof buf, fmt, static_cast<unsigned long long>(v));
      Lexed l(buf);
      ASSERT_TRUE(l.errors().empty()) << buf;
      EXPECT_EQ(l.tokens[0].intValue, v) << buf;
    }
  }
}

TEST(Lexer, BadIntegerLiterals) {
  EXPECT_EQ(Lexed("x = 18446744073709551616\n").errors(),
            std::vector<std::string>{
                "1:5: integer literal 18446744073709551616 is too large (the largest is 2**64-1)"});
  EXPECT_EQ(Lexed("x = 0x1_0000_0000_0000_0000\n").errors().size(), 1u);
  EXPECT_EQ(Lexed("x = 1__0\n").errors(),
            std::vector<std::string>{"1:5: invalid decimal literal '1__0'"});
  EXPECT_EQ(Lexed("x = 1_\n").errors(),
            std::vector<std::string>{"1:5: invalid decimal literal '1_'"});
  EXPECT_EQ(Lexed("x = 0o19\n").errors(),
            std::vector<std::string>{"1:5: invalid octal literal '0o19'"});
  EXPECT_EQ(Lexed("x = 0x\n").errors(),
            std::vector<std::string>{"1:5: invalid hexadecimal literal '0x'"});
  EXPECT_EQ(Lexed("x = 12abc\n").errors(),
            std::vector<std::string>{"1:5: invalid decimal literal '12abc'"});
  EXPECT_EQ(Lexed("x = 007\n").errors().size(), 1u);
  EXPECT_EQ(Lexed("x = 3j\n").errors(),
            std::vector<std::string>{"1:5: not supported in tk kernels: complex literals"});
}

TEST(Lexer, FloatLiterals) {
  Lexed l("1.0 1e-3 .5 1_000.0 2.5E+3 1. 0e0 1e400 007.5\n");
  EXPECT_TRUE(l.errors().empty());
  std::vector<double> want = {1.0, 1e-3, 0.5, 1000.0, 2500.0, 1.0, 0.0, INFINITY, 7.5};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(l.tokens[i].kind, K::Float) << i;
    EXPECT_EQ(l.tokens[i].floatValue, want[i]) << i;
  }
  // `inf` is a name, not a literal.
  EXPECT_EQ(Lexed("inf").tokens[0].kind, K::Identifier);
}

TEST(Lexer, RandomFloatsRoundTrip) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> mant(0.0, 10.0);
  std::uniform_int_distribution<int> exp(-30, 30);
  for (int i = 0; i < 200; ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17ge%d", mant(rng), exp(rng));
    Lexed l(buf);
    ASSERT_TRUE(l.errors().empty()) << buf;
    EXPECT_EQ(l.tokens[0].floatValue, std::strtod(buf, nullptr)) << buf;
  }
}

TEST(Lexer, StringLiterals) {
  Lexed l(R"(a = 'x\ty' "q\"uote" r'a\nb' '\x41\u00e9\101' b'bytes' f"fmt" 'unknown\d')"
          "\n");
  EXPECT_TRUE(l.errors().empty());
  EXPECT_EQ(l.tokens[2].stringValue, "x\ty");
  EXPECT_EQ(l.tokens[3].stringValue, "q\"uote");
  EXPECT_EQ(l.tokens[4].stringValue, "a\\nb");
  EXPECT_TRUE(l.tokens[4].isRaw);
  EXPECT_EQ(l.tokens[5].stringValue, "A\xC3\xA9"
                                     "A");
  EXPECT_TRUE(l.tokens[6].isBytes);
  EXPECT_TRUE(l.tokens[7].isFString);
  EXPECT_EQ(l.tokens[8].stringValue, "unknown\\d");
}

TEST(Lexer, TripleQuotedStringsSpanLines) {
  Lexed l("s = \"\"\"one\ntwo \"quoted\" ''\n\"\"\"\nx\n");
  EXPECT_TRUE(l.errors().empty());
  EXPECT_EQ(l.tokens[2].stringValue, "one\ntwo \"quoted\" ''\n");
  EXPECT_EQ(l.tokens[3].kind, K::Newline);
  EXPECT_EQ(l.tokens[4].loc.line, 4u); // line counting continued through the string
}

TEST(Lexer, UnterminatedStringsReportWhereTheyStart) {
  EXPECT_EQ(Lexed("x = 'abc\ny = 1\n").errors(),
            std::vector<std::string>{"1:5: unterminated string literal"});
  EXPECT_EQ(Lexed("x = 1\ns = '''abc\n\n").errors(),
            std::vector<std::string>{"2:5: unterminated triple-quoted string literal"});
}

TEST(Lexer, EveryOperatorAndDelimiter) {
  std::string all = "+ - * / // % ** @ << >> & | ^ ~ < > <= >= == != ( ) [ ] { } , : . ; = -> "
                    ":= ... += -= *= /= //= %= **= @= <<= >>= &= |= ^=";
  Lexed l(all);
  EXPECT_TRUE(l.errors().empty());
  std::vector<K> want = {K::Plus,
                         K::Minus,
                         K::Star,
                         K::Slash,
                         K::SlashSlash,
                         K::Percent,
                         K::StarStar,
                         K::At,
                         K::LessLess,
                         K::GreaterGreater,
                         K::Amp,
                         K::Pipe,
                         K::Caret,
                         K::Tilde,
                         K::Less,
                         K::Greater,
                         K::LessEqual,
                         K::GreaterEqual,
                         K::EqualEqual,
                         K::NotEqual,
                         K::LParen,
                         K::RParen,
                         K::LSquare,
                         K::RSquare,
                         K::LBrace,
                         K::RBrace,
                         K::Comma,
                         K::Colon,
                         K::Dot,
                         K::Semi,
                         K::Equal,
                         K::Arrow,
                         K::ColonEqual,
                         K::Ellipsis,
                         K::PlusEqual,
                         K::MinusEqual,
                         K::StarEqual,
                         K::SlashEqual,
                         K::SlashSlashEqual,
                         K::PercentEqual,
                         K::StarStarEqual,
                         K::AtEqual,
                         K::LessLessEqual,
                         K::GreaterGreaterEqual,
                         K::AmpEqual,
                         K::PipeEqual,
                         K::CaretEqual,
                         K::Newline,
                         K::EndOfFile};
  EXPECT_EQ(l.kinds(), want);
  // Longest match without spaces: `a**=b//c` is a **= b // c.
  EXPECT_EQ(Lexed("a**=b//c").kinds(),
            (std::vector<K>{K::Identifier, K::StarStarEqual, K::Identifier, K::SlashSlash,
                            K::Identifier, K::Newline, K::EndOfFile}));
}

TEST(Lexer, InvalidCharacterIsNamed) {
  Lexed l("x = a $ b\n");
  ASSERT_EQ(l.errors().size(), 1u);
  EXPECT_EQ(l.errors()[0], "1:7: invalid character '$' in source");
  EXPECT_EQ(Lexed("x = a ? b\n").errors()[0], "1:7: invalid character '?' in source");
  EXPECT_EQ(Lexed("x ! y\n").errors()[0], "1:3: invalid character '!' in source");
}

TEST(Lexer, UnclosedBracketNotesWhereItOpened) {
  Lexed l("x = f(a,\n  [1, 2\n");
  ASSERT_EQ(l.diag.diagnostics().size(), 1u);
  const Diagnostic &d = l.diag.diagnostics()[0];
  EXPECT_EQ(d.message, "unexpected end of file: '[' was never closed");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].loc.line, 2u);
  EXPECT_EQ(d.notes[0].loc.col, 3u);
  EXPECT_EQ(l.tokens.back().kind, K::EndOfFile);
}

TEST(Lexer, MismatchedAndUnmatchedClosingBrackets) {
  Lexed l("x = f(a]\n");
  ASSERT_EQ(l.diag.diagnostics().size(), 1u);
  EXPECT_EQ(l.diag.diagnostics()[0].message, "closing ']' does not match opening '('");
  EXPECT_EQ(l.diag.diagnostics()[0].notes[0].loc.col, 6u);
  // The lexer closes what was meant, so the parser sees balanced brackets.
  EXPECT_EQ(l.tokens[5].kind, K::RParen);
  Lexed u("x = 1)\n");
  EXPECT_EQ(u.errors(), std::vector<std::string>{"1:6: unmatched ')'"});
}

TEST(Lexer, DumpIsOneTokenPerLine) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  BufferId id = sm.addBuffer("t.tk", "if x:\n    y = 0x10 + 'a'\n");
  std::string dump = dumpTokens(lex(sm, id, diag), sm);
  EXPECT_EQ(dump, "1:1 keyword if\n"
                  "1:4 identifier x\n"
                  "1:5 punct :\n"
                  "1:6 NEWLINE\n"
                  "2:5 INDENT\n"
                  "2:5 identifier y\n"
                  "2:7 punct =\n"
                  "2:9 int 0x10 16\n"
                  "2:14 punct +\n"
                  "2:16 string \"'a'\" \"a\"\n"
                  "2:19 NEWLINE\n"
                  "3:1 DEDENT\n"
                  "3:1 EOF\n");
}

TEST(Lexer, RandomBytesNeverCrashAndEndWithEof) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab1_ ()[]{}:\n\t\\'\"#.=+-*/<>!$@\r\x80\xff;,eE0x";
  for (int i = 0; i < 500; ++i) {
    std::string text;
    int n = rng() % 200;
    for (int j = 0; j < n; ++j)
      text += alphabet[rng() % alphabet.size()];
    Lexed l(text);
    ASSERT_FALSE(l.tokens.empty());
    EXPECT_EQ(l.tokens.back().kind, K::EndOfFile);
    int depth = 0;
    for (K k : l.kinds()) {
      depth += (k == K::Indent) - (k == K::Dedent);
      ASSERT_GE(depth, 0);
    }
    EXPECT_EQ(depth, 0);
  }
}

} // namespace
