// Knobs: see Knobs.h. The only getenv of a TK_ variable in tk.
#include "support/Knobs.h"

#include "support/Quote.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

namespace tk {
namespace {

constexpr KnobInfo kKnobs[] = {
#define TK_KNOB(ID, NAME, TYPE, DEFAULT, CHOICES, EFFECT, MEANING)                                 \
  {Knob::ID, NAME, KnobType::TYPE, DEFAULT, CHOICES, KnobEffect::EFFECT, MEANING},
#include "support/Knobs.def"
};

std::string lowered(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

// The value as the error shows it: quoted, escaped, and cut at 40
// characters (a variable can hold anything).
std::string shown(std::string_view text) {
  if (text.size() <= 40)
    return quoteString(text);
  return quoteString(text.substr(0, 40)) + "...";
}

} // namespace

std::span<const KnobInfo> allKnobs() { return kKnobs; }

const KnobInfo &knobInfo(Knob knob) { return kKnobs[static_cast<size_t>(knob)]; }

const KnobInfo *findKnob(std::string_view name) {
  for (const KnobInfo &info : kKnobs)
    if (info.name == name)
      return &info;
  return nullptr;
}

std::optional<std::string> readRaw(Knob knob) {
  const char *value = std::getenv(std::string(knobInfo(knob).name).c_str());
  if (!value)
    return std::nullopt;
  return std::string(value);
}

KnobValue<bool> parseBoolKnob(const KnobInfo &info, std::string_view text) {
  KnobValue<bool> out;
  std::string word = lowered(trimmed(text.empty() ? info.defaultValue : text));
  if (word == "1" || word == "true" || word == "yes" || word == "on") {
    out.value = true;
  } else if (word == "0" || word == "false" || word == "no" || word == "off") {
    out.value = false;
  } else {
    out.value = parseBoolKnob(info, info.defaultValue).value;
    out.error = fmt::format("{}={} is not a boolean (use 1, true, yes, on or 0, false, no, off)",
                            info.name, shown(text));
  }
  return out;
}

KnobValue<int64_t> parseIntKnob(const KnobInfo &info, std::string_view text) {
  KnobValue<int64_t> out;
  std::string_view digits = trimmed(text.empty() ? info.defaultValue : text);
  bool valid =
      !digits.empty() && digits.size() <= 18 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (valid) {
    out.value = std::stoll(std::string(digits));
    return out;
  }
  out.value = parseIntKnob(info, info.defaultValue).value;
  out.error = fmt::format("{}={} is not a whole number from 0 to 999999999999999999", info.name,
                          shown(text));
  return out;
}

KnobValue<std::string> parseChoiceKnob(const KnobInfo &info, std::string_view text) {
  KnobValue<std::string> out;
  std::string_view word = trimmed(text);
  if (info.type != KnobType::Choice) {
    out.value = std::string(text);
    return out;
  }
  if (word.empty()) {
    out.value = std::string(info.defaultValue);
    return out;
  }
  std::string_view rest = info.choices;
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view choice = rest.substr(0, bar);
    if (choice == word) {
      out.value = std::string(word);
      return out;
    }
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  out.value = std::string(info.defaultValue);
  std::string choices(info.choices);
  std::replace(choices.begin(), choices.end(), '|', ',');
  out.error = fmt::format("{}={} is not one of {}", info.name, shown(text), choices);
  return out;
}

KnobValue<bool> readBool(Knob knob) {
  return parseBoolKnob(knobInfo(knob), readRaw(knob).value_or(""));
}

KnobValue<int64_t> readInt(Knob knob) {
  return parseIntKnob(knobInfo(knob), readRaw(knob).value_or(""));
}

KnobValue<std::string> readString(Knob knob) {
  return parseChoiceKnob(knobInfo(knob), readRaw(knob).value_or(""));
}

} // namespace tk
