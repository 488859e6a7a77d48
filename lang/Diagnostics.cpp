#include "lang/Diagnostics.h"

#include <fmt/format.h>

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
  }
  return kRed;
}

// One "file:line:col: severity: message" header, then the source line and a
// caret under the column. Tabs in the source line are kept in the caret line
// so the caret stays aligned in a terminal.
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
  out += line;
  out += '\n';
  std::string caret;
  for (uint32_t i = 1; i < loc.col; ++i)
    caret += (i - 1 < line.size() && line[i - 1] == '\t') ? '\t' : ' ';
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

std::string DiagnosticEngine::render(const Diagnostic &d, bool color) const {
  std::string out;
  renderOne(out, *sm_, d.severity, d.loc, d.message, color);
  for (const DiagnosticNote &n : d.notes)
    renderOne(out, *sm_, Severity::Note, n.loc, n.message, color);
  return out;
}

std::string DiagnosticEngine::renderAll(bool color) const {
  std::string out;
  for (const Diagnostic &d : diags_)
    out += render(d, color);
  return out;
}

} // namespace tk
