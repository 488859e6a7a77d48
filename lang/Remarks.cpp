#include "lang/Remarks.h"

#include "lang/Diagnostics.h"

namespace tk {

std::string_view remarkStatusName(RemarkStatus status) {
  switch (status) {
  case RemarkStatus::Passed:
    return "passed";
  case RemarkStatus::Missed:
    return "missed";
  case RemarkStatus::Analysis:
    return "analysis";
  }
  return "analysis";
}

int64_t Remark::number(std::string_view name, int64_t fallback) const {
  for (const RemarkNumber &n : numbers)
    if (n.name == name)
      return n.value;
  return fallback;
}

bool parseRemarkFilter(std::string_view text, RemarkFilter &out) {
  if (text == "missed")
    out = RemarkFilter::Missed;
  else if (text == "passed")
    out = RemarkFilter::Passed;
  else if (text == "all")
    out = RemarkFilter::All;
  else
    return false;
  return true;
}

bool remarkShown(RemarkFilter filter, RemarkStatus status) {
  switch (filter) {
  case RemarkFilter::Missed:
    return status == RemarkStatus::Missed;
  case RemarkFilter::Passed:
    return status == RemarkStatus::Passed;
  case RemarkFilter::All:
    return true;
  }
  return true;
}

Remark &RemarkSink::add(SourceLoc loc, std::string kind, RemarkStatus status, std::string function,
                        std::string message) {
  for (const Remark &r : remarks_)
    if (r.loc == loc && r.status == status && r.kind == kind && r.message == message &&
        r.function == function) {
      dropped_ = {};
      return dropped_;
    }
  remarks_.push_back({loc, std::move(kind), status, std::move(function), std::move(message), {}});
  return remarks_.back();
}

std::string RemarkSink::render(const SourceManager &sm, RemarkFilter filter, bool color) const {
  std::string out;
  for (const Remark &r : remarks_)
    if (remarkShown(filter, r.status))
      out += renderDiagnostic(sm, {Severity::Remark, r.loc, r.message + " [" + r.kind + "]", {}},
                              color);
  return out;
}

} // namespace tk
