// Lexer: turns one source buffer into tokens, following Python's lexical rules
// for the subset tk accepts (docs/grammar.md, "Tokens").
//
// It produces the layout tokens Python's grammar needs: Newline at the end of
// each logical line (never inside brackets, never for blank or comment-only
// lines), Indent/Dedent from a stack of indentation widths, and EndOfFile. For
//
//   def f(x):
//       return (x +
//               1)
//
// the tokens are: def f ( x ) : NEWLINE INDENT return ( x + 1 ) NEWLINE DEDENT
// EOF; the line break inside the parentheses is joined away.
//
// Errors (unterminated string, invalid character, bad indentation, unclosed or
// mismatched brackets, malformed numbers) go to the DiagnosticEngine with a
// location; the lexer then recovers and always returns a token list ending in
// EndOfFile, so the parser can still report its own errors.
#pragma once

#include "lang/Diagnostics.h"
#include "lang/SourceManager.h"
#include "parser/Token.h"

#include <string>
#include <vector>

namespace tk {

std::vector<Token> lex(const SourceManager &sm, BufferId buffer, DiagnosticEngine &diag);

/// One token a line, `line:col category text [value]`, for `tkc --emit=tokens`:
///   2:5 keyword return
///   2:12 int 0x10 16
///   2:19 string "'a\\n'" "a\n"
///   3:1 DEDENT
std::string dumpTokens(const std::vector<Token> &tokens, const SourceManager &sm);

} // namespace tk
