#include "lang/DiagnosticVerifier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace tk {
namespace {

// One buffer, the diagnostics a "compiler" produced for it, and the verifier's
// report: the shape every test below fills in.
struct Fixture {
  SourceManager sm;
  BufferId id;
  DiagnosticEngine produced{sm};
  DiagnosticEngine report{sm};
  DiagnosticVerifier verifier{sm, report};

  explicit Fixture(std::string text) : id(sm.addBuffer("t.tk", std::move(text))) {}

  bool run() {
    verifier.addExpectations(id);
    return verifier.verify(produced.diagnostics());
  }
  std::string reportText() const { return report.renderAll(); }
};

TEST(DiagnosticVerifier, SameLineAnnotationMatchesBySubstring) {
  Fixture f("x = y  # expected-error {{undefined name}}\n");
  f.produced.error({f.id, 1, 5}, "undefined name 'y'");
  EXPECT_TRUE(f.run()) << f.reportText();
  EXPECT_FALSE(f.report.hasErrors());
}

TEST(DiagnosticVerifier, RelativeLinesPointUpAndDown) {
  Fixture f("# expected-error@+2 {{below}}\n"
            "a = 1\n"
            "b = c\n"
            "# expected-warning@-3 {{above}}\n");
  f.produced.error({f.id, 3, 5}, "this is below");
  f.produced.warning({f.id, 1, 1}, "this is above");
  EXPECT_TRUE(f.run()) << f.reportText();
  ASSERT_EQ(f.verifier.expectations().size(), 2u);
  EXPECT_EQ(f.verifier.expectations()[0].line, 3u);
  EXPECT_EQ(f.verifier.expectations()[1].line, 1u);
}

TEST(DiagnosticVerifier, AbsoluteLine) {
  Fixture f("a = 1\nb = 2\n# expected-error@2 {{two}}\n");
  f.produced.error({f.id, 2, 1}, "line two");
  EXPECT_TRUE(f.run()) << f.reportText();
}

TEST(DiagnosticVerifier, SeveralExpectationsOnOneLine) {
  Fixture f("f(1, 2)  # expected-error {{too many}} {{got 2}}\n");
  f.produced.error({f.id, 1, 1}, "too many arguments");
  f.produced.error({f.id, 1, 1}, "expects 1, got 2");
  EXPECT_TRUE(f.run()) << f.reportText();
}

TEST(DiagnosticVerifier, EachAnnotationMatchesOneDiagnostic) {
  Fixture f("x  # expected-error {{bad}}\n");
  f.produced.error({f.id, 1, 1}, "bad thing");
  f.produced.error({f.id, 1, 1}, "bad thing");
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find("t.tk:1:1: error: unexpected error: bad thing"), std::string::npos)
      << f.reportText();
}

TEST(DiagnosticVerifier, LongerExpectationIsMatchedFirst) {
  // Greedy matching in annotation order would give "foo bar" to {{foo}} and
  // leave {{foo bar}} without a match.
  Fixture f("x  # expected-error {{foo}} {{foo bar}}\n");
  f.produced.error({f.id, 1, 1}, "foo bar");
  f.produced.error({f.id, 1, 1}, "foo");
  EXPECT_TRUE(f.run()) << f.reportText();
}

TEST(DiagnosticVerifier, ReportsMissingWithTheAnnotationLocation) {
  Fixture f("a = 1\n"
            "b = 2  # expected-error {{never happens}}\n");
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find(
                "t.tk:2:10: error: expected error on line 2 was not produced: {{never happens}}"),
            std::string::npos)
      << f.reportText();
}

TEST(DiagnosticVerifier, ReportsUnexpectedWithTheDiagnosticLocation) {
  Fixture f("a = 1  # expected-error {{one}}\n"
            "b = 2\n");
  f.produced.error({f.id, 1, 1}, "one");
  f.produced.error({f.id, 2, 5}, "two");
  EXPECT_FALSE(f.run());
  EXPECT_EQ(f.report.numErrors(), 1u);
  EXPECT_NE(f.reportText().find("t.tk:2:5: error: unexpected error: two"), std::string::npos);
}

TEST(DiagnosticVerifier, WrongLineIsBothMissingAndUnexpected) {
  Fixture f("a = 1  # expected-error {{oops}}\nb = 2\n");
  f.produced.error({f.id, 2, 1}, "oops");
  EXPECT_FALSE(f.run());
  EXPECT_EQ(f.report.numErrors(), 2u);
  std::string text = f.reportText();
  // Findings come in source order.
  EXPECT_LT(text.find("was not produced"), text.find("unexpected error: oops"));
}

TEST(DiagnosticVerifier, SeverityMustMatch) {
  Fixture f("x  # expected-error {{careful}}\n");
  f.produced.warning({f.id, 1, 1}, "careful");
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find("unexpected warning: careful"), std::string::npos);
}

TEST(DiagnosticVerifier, NotesAreMatchedAgainstNoteAnnotations) {
  Fixture f("x = 1  # expected-note {{defined here}}\n"
            "x = x + y  # expected-error {{undefined}}\n");
  f.produced.error({f.id, 2, 9}, "undefined name 'y'")
      .notes.push_back({{f.id, 1, 1}, "x defined here"});
  EXPECT_TRUE(f.run()) << f.reportText();
}

TEST(DiagnosticVerifier, UnexpectedNoteFails) {
  Fixture f("x = y  # expected-error {{undefined}}\n");
  f.produced.error({f.id, 1, 5}, "undefined name 'y'").notes.push_back({{f.id, 1, 1}, "hint"});
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find("unexpected note: hint"), std::string::npos);
}

TEST(DiagnosticVerifier, NoteWithoutLocationBelongsToItsDiagnosticLine) {
  Fixture f("x = y  # expected-error {{undefined}} expected-note {{did you mean}}\n");
  f.produced.error({f.id, 1, 5}, "undefined name 'y'").notes.push_back({{}, "did you mean 'x'?"});
  EXPECT_TRUE(f.run()) << f.reportText();
}

TEST(DiagnosticVerifier, NothingExpectedAndNothingProducedFails) {
  Fixture f("a = 1\n");
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find("no expected-* annotations"), std::string::npos);
}

TEST(DiagnosticVerifier, DiagnosticWithoutLocationIsUnexpected) {
  Fixture f("a  # expected-error {{a}}\n");
  f.produced.error({f.id, 1, 1}, "a");
  f.produced.error({}, "too many errors (limit 100)");
  EXPECT_FALSE(f.run());
  EXPECT_NE(f.reportText().find("error: unexpected error: too many errors"), std::string::npos);
}

TEST(DiagnosticVerifier, HashInsideStringIsNotAComment) {
  Fixture f("s = \"# expected-error {{not an annotation}}\"\n"
            "t = 1  # expected-error {{real}}\n");
  f.produced.error({f.id, 2, 1}, "real");
  EXPECT_TRUE(f.run()) << f.reportText();
  EXPECT_EQ(f.verifier.expectations().size(), 1u);
}

TEST(DiagnosticVerifier, MalformedAnnotationsAreReported) {
  struct Case {
    const char *text;
    const char *message;
  };
  const Case cases[] = {
      {"a  # expected-eror {{x}}\n", "unknown annotation 'expected-eror'"},
      {"a  # expected-error\n", "expected '{{text}}' after 'expected-error'"},
      {"a  # expected-error {{x\n", "missing '}}'"},
      {"a  # expected-error {{ }}\n", "empty '{{}}'"},
      {"a  # expected-error@ {{x}}\n", "expected a line number"},
      {"a  # expected-error@+5 {{x}}\n", "refers to line 6, but the file has lines 1 to 1"},
      {"a  # expected-error@-1 {{x}}\n", "refers to line 0"},
      {"a  # expected-error@+99999999999999 {{x}}\n", "expected a line number"},
  };
  for (const Case &c : cases) {
    Fixture f(c.text);
    EXPECT_FALSE(f.verifier.addExpectations(f.id)) << c.text;
    f.produced.error({f.id, 1, 1}, "x");
    EXPECT_FALSE(f.verifier.verify(f.produced.diagnostics())) << c.text;
    EXPECT_NE(f.reportText().find(c.message), std::string::npos) << c.text << "\n"
                                                                 << f.reportText();
    EXPECT_NE(f.reportText().find("t.tk:1:6: error:"), std::string::npos) << f.reportText();
  }
}

TEST(DiagnosticVerifier, RandomDiagnosticsRoundTrip) {
  // Annotate random lines with random messages, produce exactly those
  // diagnostics in a shuffled order, and expect a match; then drop one and
  // expect exactly one "not produced".
  std::mt19937 rng(1234);
  for (int round = 0; round < 50; ++round) {
    unsigned numLines = 1 + rng() % 20;
    std::string text;
    std::vector<std::pair<uint32_t, std::string>> diags;
    for (unsigned line = 1; line <= numLines; ++line) {
      text += fmt::format("x = {}", line);
      unsigned n = rng() % 3;
      if (n)
        text += "  # expected-error";
      for (unsigned k = 0; k < n; ++k) {
        std::string msg = fmt::format("m{}_{}", rng() % 1000, k);
        text += fmt::format(" {{{{{}}}}}", msg);
        diags.push_back({line, fmt::format("error: {} here", msg)});
      }
      text += "\n";
    }
    if (diags.empty())
      continue;
    std::shuffle(diags.begin(), diags.end(), rng);
    {
      Fixture f(text);
      for (auto &[line, msg] : diags)
        f.produced.error({f.id, line, 1}, msg);
      EXPECT_TRUE(f.run()) << text << f.reportText();
    }
    {
      Fixture f(text);
      for (size_t i = 1; i < diags.size(); ++i)
        f.produced.error({f.id, diags[i].first, 1}, diags[i].second);
      EXPECT_FALSE(f.run());
      EXPECT_EQ(f.report.numErrors(), 1u) << text << f.reportText();
    }
  }
}

} // namespace
} // namespace tk
