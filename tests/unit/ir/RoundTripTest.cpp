#include "IRTestUtil.h"

#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>

namespace tk {
namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// roundtrip.tkir holds every op; print -> parse -> print is the identity.
TEST(RoundTrip, EveryOp) {
  std::string text = readFile(std::string(TK_SOURCE_DIR) + "/tests/filecheck/ir/roundtrip.tkir");
  ASSERT_FALSE(text.empty());
  test::ParsedIR first;
  ASSERT_TRUE(first.parse(text)) << first.errors();
  ASSERT_TRUE(first.verify()) << first.errors();

  std::vector<bool> seen(numOpcodes(), false);
  for (auto &fn : first.module->functions())
    fn->walk([&](Operation *op) { seen[static_cast<unsigned>(op->opcode())] = true; });
  for (unsigned i = 0; i < numOpcodes(); ++i)
    EXPECT_TRUE(seen[i]) << "roundtrip.tkir does not use '" << opName(Opcode(i)) << "'";

  std::string printed = first.print();
  test::ParsedIR second;
  ASSERT_TRUE(second.parse(printed)) << second.errors() << printed;
  ASSERT_TRUE(second.verify()) << second.errors();
  EXPECT_EQ(second.print(), printed);
}

TEST(RoundTrip, LocationsReadBack) {
  test::ParsedIR ir;
  ASSERT_TRUE(ir.parse("func @f(%a: i32) loc(\"k.tk\":1:1) {\n"
                       "  %0 = add %a, %a : i32 loc(\"k.tk\":12:5)\n"
                       "  %1 = mul %0, %0 : i32\n"
                       "  return\n}\n"));
  PrintOptions opts;
  opts.locations = true;
  std::string printed = printModule(*ir.module, opts);
  EXPECT_NE(printed.find("add %arg0, %arg0 : i32 loc(\"k.tk\":12:5)"), std::string::npos);
  EXPECT_NE(printed.find("mul %0, %0 : i32 loc(\"t.tkir\":3:3)"), std::string::npos) << printed;
  test::ParsedIR again;
  ASSERT_TRUE(again.parse(printed));
  EXPECT_EQ(printModule(*again.module, opts), printed);
  // Without the option, no locations.
  EXPECT_EQ(ir.print().find("loc("), std::string::npos);
}

// Random float and integer constants of every dtype survive the text form bit
// for bit.
TEST(RoundTrip, RandomConstants) {
  std::mt19937_64 rng(1234);
  std::string text = "func @f() {\n";
  for (int i = 0; i < 200; ++i) {
    double d = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                          std::uniform_int_distribution<int>(-60, 60)(rng));
    text += "  %f" + std::to_string(i) + " = constant {value = " + formatDouble(d) + "} : fp64\n";
    int64_t v = static_cast<int64_t>(rng());
    text += "  %i" + std::to_string(i) + " = constant {value = " + std::to_string(v) + "} : i64\n";
    text += "  %s" + std::to_string(i) + " = constant {value = " + formatDouble(float(d)) +
            "} : tensor<2x4xfp32>\n";
  }
  text += "  return\n}\n";
  test::ParsedIR a;
  ASSERT_TRUE(a.parse(text)) << a.errors();
  std::string printed = a.print();
  test::ParsedIR b;
  ASSERT_TRUE(b.parse(printed)) << b.errors();
  EXPECT_EQ(b.print(), printed);
  // And the values themselves match the source.
  auto &ops = a.module->functions()[0]->body();
  auto it = ops.begin();
  for (int i = 0; i < 3 && it != ops.end(); ++i, ++it)
    EXPECT_TRUE(it->attrs().has("value"));
}

TEST(Parser, MalformedInputNeverCrashes) {
  std::mt19937 rng(99);
  const std::string seed = "func @f(%a: tensor<4xi32>, %c: i1) -> i32 {\n  %0 = add %a, %a : "
                           "tensor<4xi32>\n  %1 = reduce %0 {axis = 0, kind = \"sum\"} : i32\n"
                           "  %2 = if %c : i32 {\n  ^bb0:\n    yield %1\n  } {\n  ^bb0:\n "
                           "   yield %1\n  }\n  return %2\n}\n";
  for (int i = 0; i < 500; ++i) {
    std::string text = seed;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text.erase(pos, 1 + rng() % 5);
        break;
      case 1:
        text.insert(pos, 1, "{}()<>%^,:=\"x0#\n"[rng() % 16]);
        break;
      default:
        text[pos] = static_cast<char>(32 + rng() % 95);
      }
    }
    test::ParsedIR ir;
    if (ir.parse(text))
      ir.verify(); // any result is fine; it must not crash
    else
      EXPECT_TRUE(ir.diag.hasErrors());
  }
  // Deep nesting is rejected, not a stack overflow.
  std::string deep = "func @f(%c: i1) {\n";
  for (int i = 0; i < 5000; ++i)
    deep += "if %c {\n^bb0:\n";
  test::ParsedIR ir;
  EXPECT_FALSE(ir.parse(deep));
  EXPECT_NE(ir.errors().find("nested too deeply"), std::string::npos);
}

} // namespace
} // namespace tk
