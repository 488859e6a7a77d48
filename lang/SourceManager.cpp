#include "lang/SourceManager.h"
#include "support/Quote.h"

#include <fmt/format.h>

namespace tk {

BufferId SourceManager::addBuffer(std::string fileName, std::string text, uint32_t firstLine) {
  Buffer buf{std::move(fileName), std::move(text), firstLine == 0 ? 1 : firstLine, {0}};
  for (uint32_t i = 0; i < buf.text.size(); ++i)
    if (buf.text[i] == '\n')
      buf.lineStarts.push_back(i + 1);
  buffers_.push_back(std::move(buf));
  return static_cast<BufferId>(buffers_.size() - 1);
}

uint32_t SourceManager::displayLine(SourceLoc loc) const {
  if (!loc.isValid() || loc.buffer >= buffers_.size())
    return 0;
  return buffers_[loc.buffer].firstLine + loc.line - 1;
}

std::string_view SourceManager::lineText(SourceLoc loc) const {
  if (!loc.isValid() || loc.buffer >= buffers_.size())
    return {};
  const Buffer &buf = buffers_[loc.buffer];
  if (loc.line > buf.lineStarts.size())
    return {};
  uint32_t start = buf.lineStarts[loc.line - 1];
  size_t end = buf.text.find('\n', start);
  if (end == std::string::npos)
    end = buf.text.size();
  std::string_view line(buf.text.data() + start, end - start);
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  return line;
}

std::string SourceManager::describe(SourceLoc loc) const {
  if (!loc.isValid() || loc.buffer >= buffers_.size())
    return "<unknown>";
  // A file name from a loc("...") suffix of textual IR may hold any byte.
  return fmt::format("{}:{}:{}", showText(buffers_[loc.buffer].fileName), displayLine(loc),
                     loc.col);
}

} // namespace tk
