// Splitting one command-line option, shared by `tkc` and `tkc run`: long
// options take their value as `--opt=V` or as the next argument `--opt V`.
//
//   OptionArg a = splitOption("--grid=4,1,1");   // name "--grid", inline "4,1,1"
//   std::optional<std::string_view> v = optionValue(a, args, i);  // "4,1,1"
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tk {

struct OptionArg {
  std::string_view name;                       // "--grid", "-o", "input.tk"
  std::optional<std::string_view> inlineValue; // the part after '=' of a long option
};

inline OptionArg splitOption(std::string_view arg) {
  if (size_t eq = arg.find('='); arg.substr(0, 2) == "--" && eq != std::string_view::npos)
    return {arg.substr(0, eq), arg.substr(eq + 1)};
  return {arg, std::nullopt};
}

/// The option's value: its inline value, else args[i + 1] (advancing `i`
/// past it); nullopt when there is none.
inline std::optional<std::string_view>
optionValue(const OptionArg &opt, const std::vector<std::string_view> &args, size_t &i) {
  if (opt.inlineValue)
    return opt.inlineValue;
  if (i + 1 < args.size())
    return args[++i];
  return std::nullopt;
}

} // namespace tk
