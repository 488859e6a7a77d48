// IRSyntax: the lexical rules of the textual IR that both its reader
// (IRParser) and its writers (IRPrinter, AttrDict::str) follow, so what is
// printed reads back as itself.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace tk {

/// Identifiers (op keywords, types, attribute names, the names after % @ ^):
/// [A-Za-z_][A-Za-z0-9_.$]*.
inline bool isIRIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
inline bool isIRIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}
/// Whether `s` prints bare; anything else prints as a quoted string.
inline bool isIRIdentifier(std::string_view s) {
  return !s.empty() && isIRIdentStart(s[0]) && std::all_of(s.begin(), s.end(), isIRIdentChar);
}

} // namespace tk
