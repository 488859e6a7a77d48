// Pass: one transformation or analysis of a block-IR Module.
//
// A pass is named by its row in lowering/Passes.def, which gives its flag
// (what tkc-opt and TK_DUMP_IR call it), a one-line summary and the function
// that creates it. Writing a pass is a file with the class in an anonymous
// namespace and that one function:
//
//   namespace {
//   class FooPass : public Pass {
//   public:
//     FooPass() : Pass(PassId::Foo) {}
//     bool run(Module &m, DiagnosticEngine &diag) override { ...; return changed; }
//   };
//   } // namespace
//   std::unique_ptr<Pass> createFooPass() { return std::make_unique<FooPass>(); }
//
// `run` returns whether it changed the IR (the PassManager dumps the IR only
// then) and reports user-facing problems to `diag`; it must leave the IR valid.
#pragma once

#include "ir/Module.h"
#include "lang/Diagnostics.h"

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tk {

enum class PassId {
#define TK_PASS(ID, FLAG, CREATE, SUMMARY) ID,
#include "lowering/Passes.def"
};

class Pass {
public:
  explicit Pass(PassId id) : id_(id) {}
  virtual ~Pass() = default;

  PassId id() const { return id_; }
  std::string_view flag() const;
  std::string_view summary() const;

  /// Runs on the whole module; returns whether the IR changed.
  virtual bool run(Module &module, DiagnosticEngine &diag) = 0;

  /// Where a pass that reports text (the --test-print-* analyses) writes it;
  /// the PassManager hands each pass its sink before running it.
  using Output = std::function<void(std::string_view)>;
  void setOutput(Output output) { output_ = std::move(output); }

protected:
  void emit(std::string_view text) const {
    if (output_)
      output_(text);
  }

private:
  PassId id_;
  Output output_;
};

#define TK_PASS(ID, FLAG, CREATE, SUMMARY) std::unique_ptr<Pass> CREATE();
#include "lowering/Passes.def"

struct PassInfo {
  PassId id;
  std::string_view flag;
  std::string_view summary;
  std::unique_ptr<Pass> (*create)();
};

/// Every registered pass, in the order of Passes.def.
const std::vector<PassInfo> &registeredPasses();
/// The pass with that flag, or null.
const PassInfo *lookupPass(std::string_view flag);

} // namespace tk
