#include "lowering/PassManager.h"

#include "ir/IRContext.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"

#include <chrono>
#include <fmt/format.h>

namespace tk {

std::string_view Pass::flag() const { return registeredPasses()[static_cast<size_t>(id_)].flag; }

std::string_view Pass::summary() const {
  return registeredPasses()[static_cast<size_t>(id_)].summary;
}

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> kPasses = {
#define TK_PASS(ID, FLAG, CREATE, SUMMARY) {PassId::ID, FLAG, SUMMARY, &CREATE},
#include "lowering/Passes.def"
  };
  return kPasses;
}

const PassInfo *lookupPass(std::string_view flag) {
  for (const PassInfo &p : registeredPasses())
    if (p.flag == flag)
      return &p;
  return nullptr;
}

bool PassManager::dumps(std::string_view flag) const {
  if (dumpFilter_.empty())
    return false;
  if (dumpFilter_ == "all" || dumpFilter_ == "1")
    return true;
  std::string_view rest = dumpFilter_;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (rest.substr(0, comma) == flag)
      return true;
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  }
  return false;
}

bool PassManager::run(Module &module) {
  using Clock = std::chrono::steady_clock;
  times_.clear();
  bool ok = true;
  for (auto &pass : passes_) {
    // Ctrl-C (IRLimits::interrupted) stops the run between passes.
    if (module.context().limits().interruptRequested()) {
      diag_.error({}, fmt::format("the compile was interrupted before pass '{}'", pass->flag()));
      ok = false;
      break;
    }
    unsigned errorsBefore = diag_.numErrors();
    pass->setOutput(sink_);
    Clock::time_point start = Clock::now();
    bool changed = pass->run(module, diag_);
    times_.emplace_back(pass->flag(),
                        std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (diag_.numErrors() != errorsBefore) {
      ok = false;
      break;
    }
    if (changed && dumps(pass->flag())) {
      PrintOptions opts;
      opts.locations = printLocations_;
      emit(fmt::format("// -----// IR after {} //----- //\n", pass->flag()));
      emit(printModule(module, opts));
    }
    if (verifyEach_ && !verifyModule(module, diag_)) {
      diag_.error({}, fmt::format("the IR does not verify after pass '{}'", pass->flag()));
      ok = false;
      break;
    }
  }
  if (timePasses_) {
    double total = 0;
    for (const auto &[flag, ms] : times_)
      total += ms;
    std::string table = "// pass timing (wall clock)\n";
    for (const auto &[flag, ms] : times_)
      table += fmt::format("//   {:>10.3f} ms  {:5.1f}%  {}\n", ms,
                           total > 0 ? 100 * ms / total : 0.0, flag);
    table += fmt::format("//   {:>10.3f} ms  100.0%  total\n", total);
    emit(table);
  }
  return ok;
}

} // namespace tk
