#include "support/Quote.h"

#include <fmt/format.h>

namespace tk {

std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '\\':
      out += "\\\\";
      break;
    case '"':
      out += "\\\"";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

std::string showChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f)
    return std::string(1, c);
  return fmt::format("\\x{:02x}", u);
}

std::string showText(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? showChar(c) : std::string(1, c);
  }
  return out;
}

} // namespace tk
