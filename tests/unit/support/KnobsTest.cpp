// The knob table (support/Knobs.def): its parsing rules, that README.md lists
// it row for row, and that no other code reads a TK_ environment variable.
#include "support/Knobs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace tk;

namespace {

std::string readText(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sets a variable for one scope and restores it after.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char *value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str()))
      old = v;
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

} // namespace

TEST(Knobs, EveryDefaultParses) {
  for (const KnobInfo &k : allKnobs()) {
    EXPECT_TRUE(k.name.starts_with("TK_")) << k.name;
    EXPECT_EQ(findKnob(k.name), &k);
    EXPECT_EQ(&knobInfo(k.id), &k);
    switch (k.type) {
    case KnobType::Bool:
      EXPECT_TRUE(parseBoolKnob(k, "").ok()) << k.name;
      break;
    case KnobType::Int:
      EXPECT_TRUE(parseIntKnob(k, "").ok()) << k.name;
      break;
    case KnobType::Choice:
      EXPECT_FALSE(k.choices.empty()) << k.name;
      EXPECT_TRUE(parseChoiceKnob(k, "").ok()) << k.name;
      break;
    case KnobType::String:
    case KnobType::Path:
      break;
    }
  }
  EXPECT_EQ(findKnob("TK_NO_SUCH_KNOB"), nullptr);
}

TEST(Knobs, OneTruthRule) {
  const KnobInfo &k = knobInfo(Knob::AlwaysCompile);
  for (const char *yes : {"1", "true", "TRUE", "Yes", "on", " 1 "})
    EXPECT_TRUE(parseBoolKnob(k, yes).value) << yes;
  for (const char *no : {"0", "false", "No", "OFF"})
    EXPECT_FALSE(parseBoolKnob(k, no).value) << no;
  EXPECT_FALSE(parseBoolKnob(k, "").value); // the default
  EXPECT_TRUE(parseBoolKnob(knobInfo(Knob::WgmmaNative), "").value);
  KnobValue<bool> bad = parseBoolKnob(k, "maybe");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.value);
  EXPECT_EQ(bad.error, "TK_ALWAYS_COMPILE=\"maybe\" is not a boolean (use 1, true, yes, on or 0, "
                       "false, no, off)");
}

TEST(Knobs, IntegersAreWholeAndBounded) {
  const KnobInfo &k = knobInfo(Knob::InterpretMaxSteps);
  EXPECT_EQ(parseIntKnob(k, "").value, 100000000);
  EXPECT_EQ(parseIntKnob(k, "0").value, 0);
  EXPECT_EQ(parseIntKnob(k, "250").value, 250);
  for (const char *bad : {"-5", "lots", "1.5", "1e9", "99999999999999999999"}) {
    KnobValue<int64_t> v = parseIntKnob(k, bad);
    EXPECT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.error.find("TK_INTERPRET_MAX_STEPS="), std::string::npos) << v.error;
    EXPECT_EQ(v.value, 100000000) << bad;
  }
}

TEST(Knobs, ChoicesAndHostileText) {
  const KnobInfo &k = knobInfo(Knob::LLVMOpt);
  EXPECT_EQ(parseChoiceKnob(k, "O2").value, "O2");
  EXPECT_EQ(parseChoiceKnob(k, "").value, "");
  KnobValue<std::string> bad = parseChoiceKnob(k, "lean");
  EXPECT_EQ(bad.error, "TK_LLVM_OPT=\"lean\" is not one of O0,O1,O2,O3");
  // Control bytes are escaped and a long value is cut, so the message stays
  // one readable line.
  std::string hostile = std::string("O\x01\n") + std::string(100, 'x');
  KnobValue<std::string> v = parseChoiceKnob(k, hostile);
  EXPECT_EQ(v.error.find('\n'), std::string::npos);
  EXPECT_NE(v.error.find("\\x01\\n"), std::string::npos);
  EXPECT_LT(v.error.size(), 120u);
}

TEST(Knobs, ReadsTheEnvironment) {
  {
    ScopedEnv e("TK_WGMMA_NATIVE", "off");
    EXPECT_FALSE(readBool(Knob::WgmmaNative).value);
  }
  {
    ScopedEnv e("TK_WGMMA_NATIVE", nullptr);
    EXPECT_TRUE(readBool(Knob::WgmmaNative).value);
    EXPECT_FALSE(readRaw(Knob::WgmmaNative).has_value());
  }
  ScopedEnv dir("TK_CACHE_DIR", "");
  ASSERT_TRUE(readRaw(Knob::CacheDir).has_value()); // set but empty is not unset
  EXPECT_EQ(*readRaw(Knob::CacheDir), "");
}

// README.md's table of environment variables is the knob table: the same
// names, in the same order, each row giving the knob's default and whether it
// changes generated code.
TEST(Knobs, ReadmeListsEveryKnob) {
  std::string readme = readText(std::filesystem::path(TK_SOURCE_DIR) / "README.md");
  ASSERT_FALSE(readme.empty());
  std::vector<std::string> listed;
  std::regex row(R"(\n\| `(TK_[A-Z0-9_]+)` \| ([^|]*) \| ([^|]*) \| ([^|]*) \|)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row);
       it != std::sregex_iterator(); ++it) {
    const std::smatch &m = *it;
    listed.push_back(m[1]);
    const KnobInfo *k = findKnob(m[1].str());
    if (!k) {
      ADD_FAILURE() << "README.md lists " << m[1] << ", which support/Knobs.def does not declare";
      continue;
    }
    std::string effect = m[3];
    const char *expected = k->effect == KnobEffect::Code    ? "code"
                           : k->effect == KnobEffect::Cubin ? "cubin"
                                                            : "no";
    EXPECT_EQ(effect, expected) << k->name << ": the README's 'changes' column";
    std::string values = m[2];
    if (!k->defaultValue.empty()) {
      EXPECT_NE(values.find(std::string(k->defaultValue)), std::string::npos)
          << k->name << ": the README's values column should give the default";
    }
  }
  std::vector<std::string> declared;
  for (const KnobInfo &k : allKnobs())
    declared.emplace_back(k.name);
  EXPECT_EQ(listed, declared) << "README.md's environment table and support/Knobs.def differ";
}

// Knobs are parsed one way: no code outside support/Knobs.cpp reads a TK_
// variable itself (C++ getenv, Python os.environ / os.getenv).
TEST(Knobs, NothingElseReadsTheEnvironment) {
  namespace fs = std::filesystem;
  std::regex read(
      R"((getenv\s*\(\s*"TK_)|(environ(\.get)?\s*[\[(]\s*["']TK_)|(os\.getenv\s*\(\s*["']TK_))");
  std::vector<std::string> offenders;
  for (const char *dir : {"support", "lang", "parser", "ir", "analysis", "lowering", "compiler",
                          "driver", "runtime", "interpreter", "python", "tools", "include"}) {
    fs::path root = fs::path(TK_SOURCE_DIR) / dir;
    if (!fs::exists(root))
      continue;
    for (const fs::directory_entry &e : fs::recursive_directory_iterator(root)) {
      std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".py"))
        continue;
      if (e.path().filename() == "Knobs.cpp")
        continue;
      std::string text = readText(e.path());
      if (std::regex_search(text, read))
        offenders.push_back(fs::relative(e.path(), TK_SOURCE_DIR).string());
    }
  }
  EXPECT_TRUE(offenders.empty()) << "read TK_ variables through support/Knobs.h: "
                                 << ::testing::PrintToString(offenders);
}
