#include "lang/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

namespace tk {
namespace {

constexpr const char *kBold = "\033[1m";
constexpr const char *kRed = "\033[1;31m";
constexpr const char *kMagenta = "\033[1;35m";
constexpr const char *kCyan = "\033[1;36m";
constexpr const char *kGreen = "\033[1;32m";
constexpr const char *kReset = "\033[0m";

const char *severityColor(Severity s) {
  switch (s) {
  case Severity::Note:
    return kCyan;
  case Severity::Warning:
    return kMagenta;
  case Severity::Error:
    return kRed;
  case Severity::Remark:
    return kGreen;
  }
  return kRed;
}

// The longest source line a diagnostic shows whole; a longer one is cut to
// this many bytes around the caret.
constexpr size_t kShownBytes = 160;

// The source line as a diagnostic shows it, and the caret line under it.
// Three kinds of line would be unreadable as they are: a carriage return
// alone ends a line for a reader but not for the lexers (a CR-only file is
// one line to them), so the text between the carriage returns around the
// column is shown; a control byte (a NUL cuts a terminal's line and every C
// string) is shown as '?'; a line past kShownBytes (a megabyte of
// generated source) is cut around the column, with "..." where it was cut.
// Tabs are kept in the caret line so the caret stays aligned in a terminal.
std::pair<std::string, std::string> shownLine(std::string_view line, uint32_t col) {
  size_t at = col > 0 ? col - 1 : 0; // may be past the end: a caret at end of line
  size_t probe = std::min(at, line.size());
  size_t begin = line.substr(0, probe).rfind('\r');
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t end = std::min(line.find('\r', probe), line.size());
  size_t from = begin, to = end;
  if (to - from > kShownBytes) {
    from = std::max(
        begin, std::min(probe > kShownBytes / 2 ? probe - kShownBytes / 2 : 0, end - kShownBytes));
    to = from + kShownBytes;
    // Not in the middle of a UTF-8 sequence.
    auto continuation = [&](size_t i) {
      return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
    };
    while (from < probe && continuation(from))
      ++from;
    while (to > probe && to < end && continuation(to))
      --to;
  }
  std::string text = from > begin ? "..." : "";
  std::string caret(text.size(), ' ');
  for (size_t i = from; i < to; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    text += (c < 0x20 && c != '\t') || c == 0x7f ? '?' : char(c);
  }
  if (to < end)
    text += "...";
  for (size_t i = from; i < at; ++i)
    caret += i < line.size() && line[i] == '\t' ? '\t' : ' ';
  return {text, caret};
}

// One "file:line:col: severity: message" header, then the source line and a
// caret under the column (shownLine).
void renderOne(std::string &out, const SourceManager &sm, Severity sev, SourceLoc loc,
               const std::string &message, bool color) {
  if (color)
    out += kBold;
  if (loc.isValid())
    out += sm.describe(loc) + ": ";
  if (color)
    out += fmt::format("{}{}:{}{} ", severityColor(sev), severityName(sev), kReset, kBold);
  else
    out += fmt::format("{}: ", severityName(sev));
  out += message;
  if (color)
    out += kReset;
  out += '\n';
  std::string_view line = sm.lineText(loc);
  if (!loc.isValid() || (line.empty() && loc.col <= 1))
    return;
  auto [text, caret] = shownLine(line, loc.col);
  out += text;
  out += '\n';
  if (color)
    out += caret + kGreen + "^" + kReset + "\n";
  else
    out += caret + "^\n";
}

} // namespace

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

Diagnostic &DiagnosticEngine::report(Severity severity, SourceLoc loc, std::string message) {
  if (severity == Severity::Error) {
    if (numErrors_ == errorLimit_) {
      ++numErrors_;
      diags_.push_back(
          {Severity::Error, {}, fmt::format("too many errors (limit {})", errorLimit_), {}});
      dropped_ = {};
      return dropped_;
    }
    if (numErrors_ > errorLimit_) {
      dropped_ = {};
      return dropped_;
    }
    ++numErrors_;
  }
  diags_.push_back({severity, loc, std::move(message), {}});
  return diags_.back();
}

Diagnostic &DiagnosticEngine::error(SourceLoc loc, std::string message) {
  return report(Severity::Error, loc, std::move(message));
}

Diagnostic &DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  return report(Severity::Warning, loc, std::move(message));
}

std::string renderDiagnostic(const SourceManager &sm, const Diagnostic &d, bool color) {
  std::string out;
  renderOne(out, sm, d.severity, d.loc, d.message, color);
  for (const DiagnosticNote &n : d.notes)
    renderOne(out, sm, Severity::Note, n.loc, n.message, color);
  return out;
}

std::string DiagnosticEngine::render(const Diagnostic &d, bool color) const {
  return renderDiagnostic(*sm_, d, color);
}

std::string DiagnosticEngine::renderAll(bool color) const {
  std::string out;
  for (const Diagnostic &d : diags_)
    out += render(d, color);
  return out;
}

} // namespace tk
