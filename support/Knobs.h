// Knobs: the environment variables tk reads, declared once (Knobs.def) and
// parsed one way. Nothing else in tk calls getenv for a TK_ variable: an entry
// point (tkc, the runtime's compile, the Python module) reads the knobs it
// needs here and hands the values on as options; passes never see the
// environment.
//
//   KnobValue<bool> inflight = readBool(Knob::WgmmaInflight);
//   if (!inflight.ok())
//     ... inflight.error: "TK_WGMMA_INFLIGHT='maybe' is not a boolean (use 1, true, yes, on
//         or 0, false, no, off)"
//   options.wgmmaInflight = inflight.value;
//
//   KnobValue<int64_t> steps = readInt(Knob::InterpretMaxSteps);   // default 100000000
//   std::optional<std::string> dir = readRaw(Knob::CacheDir);      // nullopt when unset
//
// A value that does not parse is an error naming the variable and what it
// takes; its `value` is then the default, for callers with nowhere to report.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tk {

enum class Knob : uint8_t {
#define TK_KNOB(ID, NAME, TYPE, DEFAULT, CHOICES, EFFECT, MEANING) ID,
#include "support/Knobs.def"
};

enum class KnobType : uint8_t { Bool, Int, Choice, String, Path };
/// What a knob's value changes (Knobs.def's Effect column).
enum class KnobEffect : uint8_t { Nothing, Code, Cubin };

struct KnobInfo {
  Knob id;
  std::string_view name; // "TK_DUMP_IR"
  KnobType type;
  std::string_view defaultValue; // as the variable would spell it; "" for none
  std::string_view choices;      // Choice: "O0|O1|O2|O3"
  KnobEffect effect;
  std::string_view meaning; // one line, the README's
};

/// Every knob, in the order of Knobs.def.
std::span<const KnobInfo> allKnobs();
const KnobInfo &knobInfo(Knob knob);
/// The knob named `name`, or null.
const KnobInfo *findKnob(std::string_view name);

template <class T> struct KnobValue {
  T value{};
  std::string error; // empty when the value parsed (or the knob is unset)
  bool ok() const { return error.empty(); }
};

/// The variable's text, or nullopt when it is unset.
std::optional<std::string> readRaw(Knob knob);
/// A Bool knob: unset or empty gives the default.
KnobValue<bool> readBool(Knob knob);
/// An Int knob (decimal, >= 0): unset or empty gives the default.
KnobValue<int64_t> readInt(Knob knob);
/// A Choice knob: one of its choices, or its default ("" when it has none)
/// when unset or empty. String and Path knobs: the text ("" when unset).
KnobValue<std::string> readString(Knob knob);

/// The parsers behind the read functions, on a given text (for values that
/// do not come from the environment: tests, Python's tk.knobs).
KnobValue<bool> parseBoolKnob(const KnobInfo &info, std::string_view text);
KnobValue<int64_t> parseIntKnob(const KnobInfo &info, std::string_view text);
KnobValue<std::string> parseChoiceKnob(const KnobInfo &info, std::string_view text);

} // namespace tk
