// SourceManager: owns the text of every source buffer tk reads and turns a
// SourceLoc back into "file:line:col" and the text of that line.
//
// A buffer is one `.tk` file, or the source of one `@tk.jit` Python function.
// In the second case the text starts at some line of a larger file, so a
// buffer carries a `firstLine` offset: the lexer counts lines from 1 inside the
// buffer, and rendering adds the offset, so diagnostics point into the user's
// real file.
//
//   SourceManager sm;
//   BufferId id = sm.addBuffer("kern.py", "def f(x):\n    return x\n", /*firstLine=*/41);
//   SourceLoc loc{id, 2, 5};           // "return" in the buffer
//   sm.displayLine(loc) == 42;         // line 42 of kern.py
//   sm.lineText(loc) == "    return x";
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

using BufferId = uint32_t;
inline constexpr BufferId kNoBuffer = ~0u;

/// A point in a source buffer; line and column count from 1, columns in bytes.
/// A default-constructed location is "unknown" and renders without a caret.
struct SourceLoc {
  BufferId buffer = kNoBuffer;
  uint32_t line = 0;
  uint32_t col = 0;

  bool isValid() const { return buffer != kNoBuffer && line != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

/// A half-open range [begin, end) on one line or across lines.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;
};

class SourceManager {
public:
  /// Adds a buffer; `firstLine` is the real line number of the buffer's line 1.
  BufferId addBuffer(std::string fileName, std::string text, uint32_t firstLine = 1);

  std::string_view text(BufferId id) const { return buffers_[id].text; }
  const std::string &fileName(BufferId id) const { return buffers_[id].fileName; }
  size_t numBuffers() const { return buffers_.size(); }

  /// The line number as the user sees it in their file.
  uint32_t displayLine(SourceLoc loc) const;
  /// The text of the line holding `loc`, without its newline; empty if unknown.
  std::string_view lineText(SourceLoc loc) const;
  /// "file:line:col", or "<unknown>" for an invalid location.
  std::string describe(SourceLoc loc) const;

private:
  struct Buffer {
    std::string fileName;
    std::string text;
    uint32_t firstLine;
    std::vector<uint32_t> lineStarts; // byte offset of each line's first char
  };
  std::vector<Buffer> buffers_;
};

} // namespace tk
