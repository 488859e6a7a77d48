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

} // namespace tk
