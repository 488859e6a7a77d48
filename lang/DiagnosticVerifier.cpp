#include "lang/DiagnosticVerifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>

namespace tk {
namespace {

constexpr std::string_view kPrefix = "expected-";

bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

// The byte offset of the `#` that starts the comment of `line`, or npos.
// Quotes are tracked so that a `#` inside a string literal does not start a
// comment. A string spanning lines (a triple-quoted docstring) is not tracked:
// an annotation-looking text inside one would be read as an annotation, which
// errs on the side of reporting rather than silently ignoring.
size_t commentStart(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '#') {
      return i;
    } else if (c == '"' || c == '\'') {
      quote = c;
    }
  }
  return std::string_view::npos;
}

// One finding of the verifier: reported in source order at the end.
struct Finding {
  SourceLoc loc;
  std::string message;
};

// A produced diagnostic or note, flattened so both are matched alike.
struct Actual {
  Severity severity;
  SourceLoc loc;
  const std::string *message;
  bool matched = false;
};

} // namespace

bool DiagnosticVerifier::addExpectations(BufferId buffer) {
  buffers_.push_back(buffer);
  std::string_view text = sm_->text(buffer);
  // Lines are counted the way SourceManager counts them, so that `@+N` can be
  // checked against the real extent of the file.
  uint32_t numLines = 1 + static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() == '\n')
    --numLines;
  bool ok = true;
  auto fail = [&](SourceLoc loc, std::string message) {
    report_->error(loc, std::move(message));
    ok = false;
  };

  uint32_t lineNo = 0;
  size_t lineBegin = 0;
  while (lineBegin < text.size()) {
    ++lineNo;
    size_t lineEnd = text.find('\n', lineBegin);
    if (lineEnd == std::string_view::npos)
      lineEnd = text.size();
    std::string_view line = text.substr(lineBegin, lineEnd - lineBegin);
    lineBegin = lineEnd + 1;

    size_t hash = commentStart(line);
    if (hash == std::string_view::npos)
      continue;
    size_t pos = hash;
    while ((pos = line.find(kPrefix, pos)) != std::string_view::npos) {
      SourceLoc loc{buffer, lineNo, static_cast<uint32_t>(pos + 1)};
      size_t p = pos + kPrefix.size();
      size_t wordEnd = p;
      while (wordEnd < line.size() && isLower(line[wordEnd]))
        ++wordEnd;
      std::string_view word = line.substr(p, wordEnd - p);
      Severity severity;
      if (word == "error") {
        severity = Severity::Error;
      } else if (word == "warning") {
        severity = Severity::Warning;
      } else if (word == "note") {
        severity = Severity::Note;
      } else {
        // A typo such as `expected-eror` would otherwise make the annotation
        // vanish and the test check less than its author thinks.
        fail(loc, fmt::format("unknown annotation 'expected-{}'; use expected-error, "
                              "expected-warning or expected-note",
                              word));
        pos = wordEnd;
        continue;
      }
      p = wordEnd;

      // Optional line: @+N, @-N (relative) or @N (absolute).
      int64_t target = lineNo;
      if (p < line.size() && line[p] == '@') {
        ++p;
        char sign = 0;
        if (p < line.size() && (line[p] == '+' || line[p] == '-'))
          sign = line[p++];
        size_t digitsBegin = p;
        int64_t n = 0;
        // Nine digits keep the arithmetic far from overflow; no file is that long.
        while (p < line.size() && isDigit(line[p]) && p - digitsBegin < 9)
          n = n * 10 + (line[p++] - '0');
        if (p == digitsBegin || (p < line.size() && isDigit(line[p]))) {
          fail(loc, fmt::format("expected a line number such as '@+1' after 'expected-{}@'", word));
          pos = p;
          continue;
        }
        target = sign == '+' ? lineNo + n : sign == '-' ? lineNo - n : n;
        if (target < 1 || target > numLines) {
          fail(loc, fmt::format("annotation refers to line {}, but the file has lines 1 to {}",
                                target, numLines));
          pos = p;
          continue;
        }
      }

      // One or more {{text}}.
      unsigned count = 0;
      bool unterminated = false;
      while (true) {
        size_t q = p;
        while (q < line.size() && isSpace(line[q]))
          ++q;
        if (line.substr(q, 2) != "{{")
          break;
        size_t close = line.find("}}", q + 2);
        if (close == std::string_view::npos) {
          fail(loc, "missing '}}' to close '{{' in annotation");
          p = line.size();
          unterminated = true;
          break;
        }
        std::string_view expectedText = trim(line.substr(q + 2, close - q - 2));
        if (expectedText.empty())
          fail(loc, "empty '{{}}' in annotation: it would match any message");
        else
          expected_.push_back(
              {severity, buffer, static_cast<uint32_t>(target), std::string(expectedText), loc});
        ++count;
        p = close + 2;
      }
      if (count == 0 && !unterminated)
        fail(loc, fmt::format("expected '{{{{text}}}}' after 'expected-{}'", word));
      pos = p;
    }
  }
  if (!ok)
    malformed_ = true;
  return ok;
}

bool DiagnosticVerifier::verify(const std::vector<Diagnostic> &produced) {
  std::vector<Actual> actuals;
  for (const Diagnostic &d : produced) {
    actuals.push_back({d.severity, d.loc, &d.message});
    // A note without a location belongs to the line of its diagnostic.
    for (const DiagnosticNote &n : d.notes)
      actuals.push_back({Severity::Note, n.loc.isValid() ? n.loc : d.loc, &n.message});
  }

  // The most specific (longest) expectation picks first, so that {{foo}} does
  // not take the diagnostic "foo bar" that {{foo bar}} on the same line needs.
  std::vector<size_t> order(expected_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return expected_[a].text.size() > expected_[b].text.size();
  });

  std::vector<bool> met(expected_.size(), false);
  for (size_t i : order) {
    const ExpectedDiagnostic &e = expected_[i];
    for (Actual &a : actuals) {
      if (a.matched || a.severity != e.severity || a.loc.buffer != e.buffer ||
          a.loc.line != e.line || a.message->find(e.text) == std::string::npos)
        continue;
      a.matched = true;
      met[i] = true;
      break;
    }
  }

  std::vector<Finding> findings;
  for (size_t i = 0; i < expected_.size(); ++i) {
    if (met[i])
      continue;
    const ExpectedDiagnostic &e = expected_[i];
    findings.push_back({e.loc, fmt::format("expected {} on line {} was not produced: {{{{{}}}}}",
                                           severityName(e.severity), e.line, e.text)});
  }
  for (const Actual &a : actuals)
    if (!a.matched)
      findings.push_back(
          {a.loc, fmt::format("unexpected {}: {}", severityName(a.severity), *a.message)});

  if (expected_.empty() && actuals.empty()) {
    SourceLoc where = buffers_.empty() ? SourceLoc{} : SourceLoc{buffers_.front(), 1, 1};
    findings.push_back({where, "no expected-* annotations and no diagnostics: nothing was "
                               "verified"});
  }

  // Source order reads best; findings without a location come first.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding &a, const Finding &b) {
    auto key = [](const SourceLoc &l) {
      return l.isValid() ? std::tuple<int, uint32_t, uint32_t, uint32_t>(1, l.buffer, l.line, l.col)
                         : std::tuple<int, uint32_t, uint32_t, uint32_t>(0, 0, 0, 0);
    };
    return key(a.loc) < key(b.loc);
  });
  for (Finding &f : findings)
    report_->error(f.loc, std::move(f.message));
  return findings.empty() && !malformed_;
}

} // namespace tk
