// tk/Remark.h: an optimisation remark about a compiled kernel, as the C++
// API (tk::Kernel::remarks(), KernelOptions::remarks) and Python's
// kernel.remarks hand them out. docs/remarks.md lists the kinds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tk {

/// An optimisation remark (docs/remarks.md): what the compiler decided about
/// a kernel at one of its source lines, and why. Recorded when
/// KernelOptions::remarks asks for them.
struct KernelRemark {
  std::string file;           // the source's name
  uint32_t line = 0, col = 0; // 0: no location
  std::string kind;           // "vectorize", "coalesce", "dot", "pipeline", "shared", ...
  std::string status;         // "passed", "missed" or "analysis"
  std::string function;       // the kernel
  std::string message;        // for a missed one: what limited it and what to change
  std::vector<std::pair<std::string, int64_t>> numbers; // the figures behind it, by name
  std::string rendered; // file:line:col: remark: <message> [<kind>], the line, a caret
};

} // namespace tk
