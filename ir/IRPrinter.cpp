#include "ir/IRPrinter.h"
#include "support/Quote.h"

#include "ir/IRContext.h"

#include <fmt/format.h>
#include <map>

namespace tk {
namespace {

class Printer {
public:
  explicit Printer(const PrintOptions &opts) : sm_(opts.sourceManager), opts_(opts) {}

  void printFunction(Function &fn) {
    names_.clear();
    next_ = 0;
    out_ += fmt::format("func @{}(", fn.name());
    for (unsigned i = 0; i < fn.numArguments(); ++i) {
      Value *arg = fn.argument(i);
      names_[arg] = fmt::format("%arg{}", i);
      out_ += fmt::format("{}{}: {}", i ? ", " : "", names_[arg], arg->type()->str());
      // Appended in two steps: `" " + str()` trips GCC 12's -Wrestrict.
      if (!fn.argAttrs(i).empty()) {
        out_ += ' ';
        out_ += fn.argAttrs(i).str();
      }
    }
    out_ += ")";
    if (!fn.resultTypes().empty())
      out_ += " -> " + typeList(fn.resultTypes());
    if (!fn.attrs().empty()) {
      out_ += " attributes ";
      out_ += fn.attrs().str();
    }
    printLoc(fn.loc());
    out_ += " {\n";
    for (Operation &op : fn.body())
      printOp(op, 1);
    out_ += "}\n";
  }

  void printOp(Operation &op, int indent) {
    out_.append(2 * indent, ' ');
    for (unsigned i = 0; i < op.numResults(); ++i)
      out_ += (i ? ", " : "") + define(op.result(i));
    if (op.numResults())
      out_ += " = ";
    out_ += op.name();
    for (unsigned i = 0; i < op.numOperands(); ++i)
      out_ += (i ? ", " : " ") + use(op.operand(i));
    if (!op.attrs().empty())
      out_ += " " + op.attrs().str();
    if (op.numResults()) {
      std::vector<Type *> types;
      for (Value *r : op.results())
        types.push_back(r->type());
      out_ += " : " + typeList(types);
    }
    for (unsigned r = 0; r < op.numRegions(); ++r)
      printRegion(op.region(r), indent);
    printLoc(op.loc());
    out_ += "\n";
  }

  std::string take() { return std::move(out_); }

private:
  void printRegion(Region &region, int indent) {
    out_ += " {\n";
    for (unsigned b = 0; b < region.numBlocks(); ++b) {
      Block &block = region.block(b);
      out_.append(2 * indent, ' ');
      out_ += fmt::format("^bb{}", b);
      if (block.numArguments()) {
        out_ += "(";
        for (unsigned i = 0; i < block.numArguments(); ++i)
          out_ += fmt::format("{}{}: {}", i ? ", " : "", define(block.argument(i)),
                              block.argument(i)->type()->str());
        out_ += ")";
      }
      out_ += ":\n";
      for (Operation &op : block)
        printOp(op, indent + 1);
    }
    out_.append(2 * indent, ' ');
    out_ += "}";
  }

  std::string define(Value *v) {
    std::string name = fmt::format("%{}", next_++);
    names_[v] = name;
    return name;
  }

  // A value printed before its definition (invalid IR, or printOp on an op
  // whose operands live outside it) still gets a stable name.
  std::string use(Value *v) {
    if (!v)
      return "%<null>";
    auto it = names_.find(v);
    if (it != names_.end())
      return it->second;
    std::string name = fmt::format("%?{}", outside_++);
    names_[v] = name;
    return name;
  }

  std::string typeList(const std::vector<Type *> &types) {
    std::string s;
    for (size_t i = 0; i < types.size(); ++i)
      s += (i ? ", " : "") + types[i]->str();
    return s;
  }

  void printLoc(SourceLoc loc) {
    if (!opts_.locations || !sm_ || !loc.isValid() || loc.buffer >= sm_->numBuffers())
      return;
    // Quoted as the parser reads strings: a name with a newline or control
    // byte (from a loc(...) suffix's escapes) reads back as itself.
    out_ += fmt::format(" loc({}:{}:{})", quoteString(sm_->fileName(loc.buffer)),
                        sm_->displayLine(loc), loc.col);
  }

  const SourceManager *sm_;
  const PrintOptions &opts_;
  std::string out_;
  // Looked up only, never iterated: the numbering comes from text order.
  std::map<Value *, std::string> names_;
  unsigned next_ = 0;
  unsigned outside_ = 0;
};

} // namespace

std::string printModule(Module &module, const PrintOptions &options) {
  PrintOptions opts = options;
  if (!opts.sourceManager)
    opts.sourceManager = &module.context().sourceManager();
  Printer p(opts);
  std::string out;
  for (auto &fn : module.functions()) {
    if (!out.empty())
      out += "\n";
    p.printFunction(*fn);
    out += p.take();
  }
  return out;
}

std::string printFunction(Function &fn, const PrintOptions &options) {
  Printer p(options);
  p.printFunction(fn);
  return p.take();
}

std::string printOp(Operation *op, const PrintOptions &options) {
  Printer p(options);
  p.printOp(*op, 0);
  return p.take();
}

} // namespace tk
