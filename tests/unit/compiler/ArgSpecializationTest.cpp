// The specialisation rule (compiler/ArgSpecialization.h), row by row from
// arg-specialization.txt, the table tests/python/test_specialization.py runs
// through Python's _specialize too; and the entries it makes parse back
// (ir/Specialize.h) to the facts they state.
#include "compiler/ArgSpecialization.h"

#include "ir/Specialize.h"
#include "lang/SourceManager.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tk;

namespace {

struct Row {
  int line = 0;
  std::string kind, value, entry, fact;
  bool specialize = true;
};

std::vector<Row> readTable() {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tests/unit/compiler/arg-specialization.txt");
  std::vector<Row> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty() || text[0] == '#')
      continue;
    std::istringstream fields(text);
    Row r;
    int spec = -1;
    r.line = line;
    fields >> r.kind >> r.value >> spec >> r.entry >> r.fact;
    EXPECT_TRUE(fields && (spec == 0 || spec == 1)) << "line " << line << ": " << text;
    r.specialize = spec == 1;
    rows.push_back(r);
  }
  return rows;
}

const char *factName(ArgFact f) {
  switch (f) {
  case ArgFact::None:
    return "None";
  case ArgFact::Divisible16:
    return "Divisible16";
  case ArgFact::Divisible8:
    return "Divisible8";
  case ArgFact::EqualsOne:
    return "EqualsOne";
  }
  return "?";
}

// The row's argument as C++ sees it.
RuntimeArg argOf(const Row &r) {
  if (r.kind == "int") {
    errno = 0;
    if (r.value[0] == '-')
      return RuntimeArg::integer(std::strtoll(r.value.c_str(), nullptr, 10));
    uint64_t v = std::strtoull(r.value.c_str(), nullptr, 10);
    EXPECT_EQ(errno, 0) << "line " << r.line;
    return v > uint64_t(INT64_MAX) ? RuntimeArg::unsignedInteger(v)
                                   : RuntimeArg::integer(int64_t(v));
  }
  if (r.kind == "float")
    return RuntimeArg::real();
  if (r.kind == "bool")
    return RuntimeArg::boolean();
  if (r.kind[0] == '*') {
    std::optional<DType> d = parseDTypeName(r.kind.substr(1));
    EXPECT_TRUE(d) << "line " << r.line;
    return RuntimeArg::pointer(d.value_or(DType::U8), std::strtoull(r.value.c_str(), nullptr, 16));
  }
  std::optional<DType> d = parseDTypeName(r.kind);
  EXPECT_TRUE(d) << "line " << r.line << ": kind " << r.kind;
  return RuntimeArg::scalar(d.value_or(DType::I32),
                            isFloat(d.value_or(DType::I32)) ? 0 : std::stoll(r.value));
}

TEST(ArgSpecialization, EveryRowOfTheTable) {
  std::vector<Row> rows = readTable();
  ASSERT_GE(rows.size(), 40u) << "the table did not load";
  for (const Row &r : rows) {
    ArgSpecialization s = specializeArg(argOf(r), r.specialize);
    EXPECT_EQ(s.entry(), r.entry) << "line " << r.line << ": " << r.kind << " " << r.value;
    EXPECT_STREQ(factName(s.fact), r.fact.c_str()) << "line " << r.line;
  }
}

// Each entry states its fact to the compiler: parsed back, ":16" and ":8" are
// divisibilities and ":1" the constant 1.
TEST(ArgSpecialization, EntriesParseBackToTheirFacts) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  for (const Row &r : readTable()) {
    ArgSpecialization s = specializeArg(argOf(r), r.specialize);
    auto parsed = parseSignature(s.entry(), {}, diag);
    ASSERT_TRUE(parsed && parsed->size() == 1) << s.entry() << ": " << diag.renderAll();
    const SignatureEntry &e = parsed->front();
    EXPECT_EQ(e.kind == SignatureEntry::Kind::Pointer, s.isPointer) << s.entry();
    EXPECT_EQ(e.dtype, s.dtype) << s.entry();
    EXPECT_EQ(e.divisibility, factDivisibility(s.fact)) << s.entry();
    EXPECT_EQ(e.equalsOne, s.fact == ArgFact::EqualsOne) << s.entry();
  }
}

// The pieces the launch paths call on their own agree with the whole rule.
TEST(ArgSpecialization, TheInlinePiecesAreTheRule) {
  for (int64_t v = -100; v <= 100; ++v) {
    EXPECT_EQ(specializeArg(RuntimeArg::integer(v), true).fact, integerFact(v)) << v;
    EXPECT_EQ(specializeArg(RuntimeArg::scalar(DType::I64, v), true).fact, integerFact(v)) << v;
    EXPECT_EQ(specializeArg(RuntimeArg::pointer(DType::F16, 0x1000 + uint64_t(v + 100)), true).fact,
              pointerFact(0x1000 + uint64_t(v + 100)));
  }
  // Narrow integers, i1 and floats give no facts whatever their value.
  for (DType d : {DType::I1, DType::I8, DType::I16, DType::U8, DType::U16, DType::F16, DType::BF16,
                  DType::F32, DType::F64}) {
    EXPECT_FALSE(takesFacts(false, d)) << dtypeName(d);
    EXPECT_EQ(specializeArg(RuntimeArg::scalar(d, 16), true).fact, ArgFact::None);
  }
  for (DType d : {DType::I32, DType::U32, DType::I64, DType::U64}) {
    EXPECT_TRUE(takesFacts(false, d)) << dtypeName(d);
    EXPECT_EQ(specializeArg(RuntimeArg::scalar(d, 8), true).entry(),
              std::string(dtypeName(d)) + ":8");
  }
  EXPECT_EQ(integerType(INT32_MAX, false), DType::I32);
  EXPECT_EQ(integerType(int64_t(INT32_MAX) + 1, false), DType::I64);
  EXPECT_EQ(integerType(INT32_MIN, false), DType::I32);
  EXPECT_EQ(integerType(int64_t(INT32_MIN) - 1, false), DType::I64);
  EXPECT_EQ(integerType(-1, true), DType::U64);
}

} // namespace
