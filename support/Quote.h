// quoteString: a string as a double-quoted literal on one line, with Python's
// escapes, for every text format tk prints (token dumps, the AST printer,
// string attributes in text IR, tkc's summaries).
//
//   quoteString("a\"b\n") == "\"a\\\"b\\n\""      // "a\"b\n"
//   quoteString("\x01")   == "\"\\x01\""          // other controls as \xNN
//
// The IR parser reads back exactly these escapes: \\ \" \n \r \t \xNN.
#pragma once

#include <string>
#include <string_view>

namespace tk {

std::string quoteString(std::string_view s);

/// A character of the user's text as a message shows it ("invalid character
/// 'X'"): printable ASCII as itself, any other byte as \xNN, so the message
/// stays one readable line.
std::string showChar(char c);

/// Text of the user's (a name, a file name) inside a message or a
/// diagnostic's header: control bytes as \xNN, the rest as it is (UTF-8
/// stays readable).
std::string showText(std::string_view s);

} // namespace tk
