#include "lang/Diagnostics.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

TEST(Diagnostics, RendersLocationLineAndCaret) {
  SourceManager sm;
  BufferId id = sm.addBuffer("k.tk", "def f(x):\n    y = x + 1\n");
  DiagnosticEngine diag(sm);
  diag.error({id, 2, 11}, "cannot add");
  EXPECT_TRUE(diag.hasErrors());
  EXPECT_EQ(diag.renderAll(), "k.tk:2:11: error: cannot add\n"
                              "    y = x + 1\n"
                              "          ^\n");
}

TEST(Diagnostics, FirstLineOffsetPointsIntoTheRealFile) {
  SourceManager sm;
  BufferId id = sm.addBuffer("model.py", "@tk.jit\ndef f():\n    pass\n", /*firstLine=*/40);
  EXPECT_EQ(sm.describe({id, 3, 5}), "model.py:42:5");
  EXPECT_EQ(sm.lineText({id, 3, 5}), "    pass");
}

TEST(Diagnostics, NotesFollowTheirError) {
  SourceManager sm;
  BufferId id = sm.addBuffer("k.tk", "a\nb\n");
  DiagnosticEngine diag(sm);
  diag.error({id, 2, 1}, "bad b").notes.push_back({{id, 1, 1}, "a is here"});
  std::string out = diag.renderAll();
  EXPECT_NE(out.find("k.tk:2:1: error: bad b"), std::string::npos);
  EXPECT_NE(out.find("k.tk:1:1: note: a is here"), std::string::npos);
  EXPECT_LT(out.find("error"), out.find("note"));
}

TEST(Diagnostics, ColorOnlyWhenAsked) {
  SourceManager sm;
  BufferId id = sm.addBuffer("k.tk", "x\n");
  DiagnosticEngine diag(sm);
  diag.error({id, 1, 1}, "m");
  EXPECT_EQ(diag.renderAll(false).find('\033'), std::string::npos);
  EXPECT_NE(diag.renderAll(true).find("\033[1;31merror"), std::string::npos);
}

TEST(Diagnostics, ErrorLimitBoundsOutput) {
  SourceManager sm;
  BufferId id = sm.addBuffer("k.tk", "x\n");
  DiagnosticEngine diag(sm);
  diag.setErrorLimit(3);
  for (int i = 0; i < 50; ++i)
    diag.error({id, 1, 1}, "e");
  EXPECT_EQ(diag.diagnostics().size(), 4u);
  EXPECT_NE(diag.diagnostics().back().message.find("too many errors"), std::string::npos);
}

TEST(Diagnostics, UnknownLocationHasNoCaret) {
  SourceManager sm;
  DiagnosticEngine diag(sm);
  diag.error({}, "no place");
  EXPECT_EQ(diag.renderAll(), "error: no place\n");
}

// A file with carriage returns alone for line ends is one line to the
// lexers; the diagnostic shows the part between the carriage returns.
TEST(Diagnostics, CarriageReturnsAloneEndTheShownLine) {
  SourceManager sm;
  BufferId id = sm.addBuffer("cr.tk", "import tk\r@tk.jit\rdef f(p):\r    pass\r");
  DiagnosticEngine diag(sm);
  diag.error({id, 1, 11}, "expected end of line");
  diag.error({id, 1, 24}, "in f");
  EXPECT_EQ(diag.renderAll(), "cr.tk:1:11: error: expected end of line\n"
                              "@tk.jit\n"
                              "^\n"
                              "cr.tk:1:24: error: in f\n"
                              "def f(p):\n"
                              "     ^\n");
}

// Control bytes would reach the terminal raw (a NUL ends a C string: the
// rest of the diagnostic was lost); each is shown as '?', keeping the caret
// aligned.
TEST(Diagnostics, ControlBytesInTheLineAreShownAsQuestionMarks) {
  SourceManager sm;
  BufferId id = sm.addBuffer("k.tkir", std::string("  %0 = add \x01 \0 \x7f\t%1\n", 20));
  DiagnosticEngine diag(sm);
  diag.error({id, 1, 18}, "bad");
  std::string out = diag.renderAll();
  EXPECT_EQ(out, "k.tkir:1:18: error: bad\n"
                 "  %0 = add ? ? ?\t%1\n"
                 "                \t^\n");
  EXPECT_EQ(out.find('\0'), std::string::npos);
}

// A line of a megabyte is shown as the kShownBytes (160) around the column.
TEST(Diagnostics, ALongLineIsCutAroundTheCaret) {
  std::string line(1200000, 'a');
  line[600000] = 'X';
  SourceManager sm;
  BufferId id = sm.addBuffer("long.tk", line + "\n");
  DiagnosticEngine diag(sm);
  diag.error({id, 1, 600001}, "here");
  diag.error({id, 1, 3}, "near the start");
  diag.error({id, 1, 1200000}, "at the end");
  std::string out = diag.renderAll();
  EXPECT_LT(out.size(), 1000u);
  std::string middle = "..." + std::string(80, 'a') + "X" + std::string(79, 'a') + "...";
  EXPECT_NE(out.find("error: here\n" + middle + "\n" + std::string(83, ' ') + "^\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("error: near the start\n" + std::string(160, 'a') + "...\n  ^\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("error: at the end\n..." + std::string(160, 'a') + "\n" +
                     std::string(162, ' ') + "^\n"),
            std::string::npos)
      << out;
}

} // namespace
} // namespace tk
