#include "support/Quote.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

TEST(Quote, EscapesWhatWouldBreakALine) {
  EXPECT_EQ(quoteString("plain"), "\"plain\"");
  EXPECT_EQ(quoteString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoteString("1\n2\r3\t4"), "\"1\\n2\\r3\\t4\"");
  EXPECT_EQ(quoteString(std::string_view("\x01\x7f", 2)), "\"\\x01\\x7f\"");
}

TEST(Quote, EveryByteStaysOnOneLine) {
  for (int c = 0; c < 256; ++c) {
    std::string one(1, static_cast<char>(c));
    std::string q = quoteString(one);
    EXPECT_EQ(q.find('\n'), std::string::npos) << c;
    EXPECT_EQ(q.front(), '"');
    EXPECT_EQ(q.back(), '"');
  }
}

} // namespace
} // namespace tk
