// PassManager: runs a list of passes over a Module, with the debugging knobs
// users expect.
//
//   PassManager pm(diag);
//   pm.setDumpIR("all");                    // TK_DUMP_IR, as the compiler reads it
//   pm.setSink([&](std::string_view s) { std::cerr << s; });
//   buildPipeline(pm);                      // compiler/Pipeline.h
//   bool ok = pm.run(module);
//
// - verification: after every pass in debug builds, and whenever
//   setVerifyEach(true) (tests ask for it); a pass leaving invalid IR stops
//   the run with the verifier's errors plus a note naming the pass.
// - setDumpIR("all") or setDumpIR("<flag>[,<flag>...]"): the IR after each
//   (matching) pass, only when the pass changed it, as
//   "// -----// IR after canonicalize //----- //" and the module text.
// - setTimePasses(true): a table of wall time per pass after the run;
//   lastTimes() has the same figures either way.
// - between passes, the module's IRLimits::interrupted (Ctrl-C) is asked
//   whether to stop: an error, and the run ends there.
// The entry points fill these from TK_DUMP_IR and TK_TIME_PASSES
// (compiler/Compiler.h's CompileHooks); the PassManager reads no environment.
//
// Library code never prints: dumps and the table go to the sink the caller
// sets (nothing is written when there is none).
#pragma once

#include "lowering/Pass.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tk {

class PassManager {
public:
  using Sink = std::function<void(std::string_view)>;

  explicit PassManager(DiagnosticEngine &diag) : diag_(diag) {}

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  const std::vector<std::unique_ptr<Pass>> &passes() const { return passes_; }

  void setVerifyEach(bool on) { verifyEach_ = on; }
  /// "all", or a comma-separated list of pass flags; empty turns dumping off.
  void setDumpIR(std::string filter) { dumpFilter_ = std::move(filter); }
  void setTimePasses(bool on) { timePasses_ = on; }
  void setPrintLocations(bool on) { printLocations_ = on; }
  void setSink(Sink sink) { sink_ = std::move(sink); }
  /// The wall time of each pass of the last run, in order (flag, ms).
  const std::vector<std::pair<std::string_view, double>> &lastTimes() const { return times_; }

  /// Runs the passes in order; false when a pass reported an error or left
  /// IR that does not verify (the run stops there).
  bool run(Module &module);

private:
  bool dumps(std::string_view flag) const;
  void emit(std::string_view text) const {
    if (sink_)
      sink_(text);
  }

  DiagnosticEngine &diag_;
  std::vector<std::unique_ptr<Pass>> passes_;
#ifdef NDEBUG
  bool verifyEach_ = false;
#else
  bool verifyEach_ = true;
#endif
  std::string dumpFilter_;
  bool timePasses_ = false;
  bool printLocations_ = false;
  Sink sink_;
  std::vector<std::pair<std::string_view, double>> times_;
};

} // namespace tk
