// --test-print-axis-info: runs AxisInfoAnalysis (analysis/AxisInfo.h) on every
// function and writes, for each integer or pointer value, one line to the
// pass manager's output (tkc-opt: stderr):
//
//   axis-info @add_kernel
//   %arg0: ptr<fp32>  // contiguity = [1], divisibility = [16], constancy = [1]
//   %3 = make_range {end = 1024, start = 0} : tensor<1024xi32>  // contiguity = [1024], ...
//   %4 = add %2, %3 : tensor<1024xi32>  // contiguity = [1024], divisibility = [1024], ...
//   %6 = for %c0, %n, %c1, %4 : ...     // result 0: ...
//   %7: i32 (argument 0 of for %6)  // ...
//
// Values are numbered as the IR printer numbers them, so the lines match the
// printed module. The IR is not changed.
#include "analysis/AxisInfo.h"
#include "lowering/Pass.h"

#include <fmt/format.h>
#include <map>

namespace tk {
namespace {

bool tracked(Type *t) { return t->isIntLike() || t->isPointerLike(); }

class Printer {
public:
  Printer(Function &fn, const AxisInfoAnalysis &axis) : fn_(fn), axis_(axis) {}

  std::string print() {
    out_ = fmt::format("axis-info @{}\n", fn_.name());
    for (unsigned i = 0; i < fn_.numArguments(); ++i) {
      Value *arg = fn_.argument(i);
      names_[arg] = fmt::format("%arg{}", i);
      line(arg, fmt::format("{}: {}", names_[arg], arg->type()->str()));
    }
    for (Operation &op : fn_.body())
      printOp(op);
    return std::move(out_);
  }

private:
  // The printer names results before the op's regions and block arguments
  // when their block starts; this follows the same order.
  void printOp(Operation &op) {
    std::string header;
    // Appended piece by piece: `(i ? ", " : "") + str` trips GCC 12's
    // -Wrestrict false positive.
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (i)
        header += ", ";
      header += define(op.result(i));
    }
    if (op.numResults())
      header += " = ";
    header += op.name();
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      header += i ? ", " : " ";
      header += use(op.operand(i));
    }
    if (!op.attrs().empty()) {
      header += " ";
      header += op.attrs().str();
    }
    if (op.numResults() == 1) {
      header += " : ";
      header += op.result()->type()->str();
      line(op.result(), header);
    } else {
      for (unsigned i = 0; i < op.numResults(); ++i)
        line(op.result(i),
             fmt::format("{}  (result {}: {})", header, i, op.result(i)->type()->str()));
    }
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (unsigned b = 0; b < op.region(r).numBlocks(); ++b) {
        Block &block = op.region(r).block(b);
        for (unsigned i = 0; i < block.numArguments(); ++i) {
          Value *arg = block.argument(i);
          std::string name = define(arg);
          line(arg,
               fmt::format("{}: {} (argument {} of {})", name, arg->type()->str(), i, op.name()));
        }
        for (Operation &inner : block)
          printOp(inner);
      }
  }

  void line(Value *v, const std::string &text) {
    if (tracked(v->type()))
      out_ += fmt::format("{}  // {}\n", text, axis_.get(v).str());
  }

  std::string define(Value *v) { return names_[v] = fmt::format("%{}", next_++); }
  std::string use(Value *v) {
    auto it = names_.find(v);
    return it == names_.end() ? "%?" : it->second;
  }

  Function &fn_;
  const AxisInfoAnalysis &axis_;
  std::string out_;
  // Looked up only; the output order comes from the IR.
  std::map<Value *, std::string> names_;
  unsigned next_ = 0;
};

class TestPrintAxisInfoPass : public Pass {
public:
  TestPrintAxisInfoPass() : Pass(PassId::TestPrintAxisInfo) {}

  bool run(Module &module, DiagnosticEngine &) override {
    for (auto &fn : module.functions()) {
      AxisInfoAnalysis axis(*fn);
      emit(Printer(*fn, axis).print());
    }
    return false;
  }
};

} // namespace

std::unique_ptr<Pass> createTestPrintAxisInfoPass() {
  return std::make_unique<TestPrintAxisInfoPass>();
}

} // namespace tk
