// LaunchCheck: TK_CHECK's comparison of one GPU launch with the interpreter
// (docs/python.md, "Checking mode"). Plain C++, no Python and no GPU: the
// Python side (python/tk/check.py) copies the launch's buffers to the host
// before the launch and again after it, JitKernel::check runs a sample of the
// launch's programs on the interpreter on the first copies with a store log,
// and compareStores() compares every element those stores wrote with the
// same element of the second copies, within the tolerance of its dtype.
//
//   std::vector<int64_t> programs = samplePrograms(65536);  // 64 of them, 0 and 65535 among them
//   CheckReport r = compareStores(log, buffers, /*allPrograms=*/false);
//   if (r.mismatch) ... r.message: "'add' stored different values on the GPU and on the
//       interpreter in program (517, 0, 0): element 132352 of 'out' is 0.25 on the GPU and
//       1.75 on the interpreter (fp32: |difference| 1.5 > 0.000275, ...)", at r.loc (the store)
//
// Tolerance: runtime/ResultCheck.h's, with the interpreter's value as the
// expected one and the largest magnitude the interpreter stored into the
// buffer as the scale: for fp32, |gpu - interpreter| <= 1e-4 * |interpreter|
// + 1e-5 * scale; integers, bools and pointers exactly.
//
// Limits: the sampled programs' stores are compared; elements written by
// atomics are compared only when every program ran (their sum needs all of
// them); an element also written by a program outside the sample may hold
// that program's value on the GPU (TK_CHECK assumes each element is written
// by one program, as a deterministic kernel does).
#pragma once

#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "lang/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tk {

/// The programs TK_CHECK runs on the interpreter out of `numPrograms`: all
/// of them up to `limit`, else `limit` spread evenly over the grid in
/// linear order (x fastest), the first and the last among them (ragged
/// edges live there).
std::vector<int64_t> samplePrograms(int64_t numPrograms, size_t limit = 64);

/// One buffer of the check: the interpreter's copy after its run, and the
/// same bytes as the GPU left them.
struct CheckBuffer {
  const HostBuffer *interp = nullptr;
  const std::byte *gpu = nullptr; // null: not copied back (not stored to)
  std::string name;               // the argument's name
  int64_t pointerOffset = 0;      // where in the buffer the argument points
};

struct CheckReport {
  bool mismatch = false;
  SourceLoc loc; // the store that wrote the differing element last
  std::string message;
  std::vector<DiagnosticNote> notes;
  uint64_t compared = 0;       // elements compared
  uint64_t skippedAtomics = 0; // elements written by atomics, not compared
};

/// Compares every element of `log` (a run's store log over `buffers`' interp
/// copies) with the GPU's; the first differing element, in log order, is
/// the report. `allPrograms`: the run covered the whole grid (atomics are
/// compared too).
CheckReport compareStores(const std::vector<StoreRecord> &log,
                          const std::vector<CheckBuffer> &buffers, bool allPrograms,
                          const std::string &kernel);

} // namespace tk
