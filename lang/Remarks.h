// Remarks: what the compiler decided about a kernel and why, at the user's
// source line (docs/remarks.md).
//
// A pass that knows a fact about the code it makes (the vector width of a
// load, the instruction a dot runs on, the loads the pipeliner put on its
// ring, the shared memory a buffer takes, the registers ptxas allocated)
// adds a Remark to the compile's one RemarkSink. Remarks are off by default:
// the sink exists only when the entry point asks for them (tkc --remarks,
// TK_REMARKS=1, remarks= in Python, CompileHooks::remarks in C++), every
// emitter first checks for it, so a compile without remarks does no work for
// them, and remarks never change the generated code.
//
//   if (RemarkSink *rs = module.remarks())
//     rs->add(load.loc(), "vectorize", RemarkStatus::Missed, fn.name(),
//             "load of fp32: 4-byte accesses; ...")
//         .with("vector_bytes", 4).with("contiguity", 1);
//
// rendered as a diagnostic is (lang/Diagnostics.h), with the kind in brackets:
//
//   add.tk:7:9: remark: load of fp32: 4-byte accesses; ... [vectorize]
//       x = tk.load(x_ptr + offs * stride)
//           ^
//
// Status: `passed` (an optimisation was applied), `missed` (one was not, and
// the message says why and what to change), `analysis` (a fact: a size, a
// count, the resources of the compiled code).
#pragma once

#include "lang/SourceManager.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

enum class RemarkStatus : uint8_t { Passed, Missed, Analysis };

/// "passed", "missed", "analysis".
std::string_view remarkStatusName(RemarkStatus status);

/// A number behind a remark, by name ("vector_bytes", "registers", ...).
struct RemarkNumber {
  std::string name;
  int64_t value = 0;
};

struct Remark {
  SourceLoc loc;
  std::string kind; // one of docs/remarks.md's kinds: "vectorize", "dot", ...
  RemarkStatus status = RemarkStatus::Analysis;
  std::string function; // the kernel it is about
  std::string message;
  std::vector<RemarkNumber> numbers;

  Remark &with(std::string name, int64_t value) {
    numbers.push_back({std::move(name), value});
    return *this;
  }
  /// The number of that name, or `fallback`.
  int64_t number(std::string_view name, int64_t fallback = 0) const;
};

/// Which remarks an entry point shows: `missed` (what could be faster),
/// `passed` (what was applied) or `all` (those and the analysis facts).
enum class RemarkFilter : uint8_t { Missed, Passed, All };

/// "missed", "passed" or "all"; false for anything else.
bool parseRemarkFilter(std::string_view text, RemarkFilter &out);
bool remarkShown(RemarkFilter filter, RemarkStatus status);

/// The remarks of one compile, in the order they were made. A remark that
/// repeats one already made (same place, kind, status and text: a load the
/// pipeliner copied into the prologue) is dropped.
class RemarkSink {
public:
  explicit RemarkSink(const SourceManager &sm) : sm_(&sm) {}
  /// The line of `loc` as the user's file numbers it (a Python function's
  /// source starts at its own line): what messages that name lines use.
  uint32_t line(SourceLoc loc) const { return sm_->displayLine(loc); }

  Remark &add(SourceLoc loc, std::string kind, RemarkStatus status, std::string function,
              std::string message);
  const std::vector<Remark> &remarks() const { return remarks_; }
  /// The remarks `filter` shows, rendered one after another as
  /// diagnostics (file:line:col: remark: message [kind], the line, a caret).
  std::string render(const SourceManager &sm, RemarkFilter filter, bool color = false) const;

private:
  const SourceManager *sm_;
  std::vector<Remark> remarks_;
  Remark dropped_; // what add() returns for a repeat
};

} // namespace tk
