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

} // namespace
} // namespace tk
