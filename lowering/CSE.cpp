// CSE: replaces a pure op by an identical one that dominates it.
//
// Two ops are identical when opcode, operands, attributes and result types
// agree (commutative ops match with their operands in either order). The walk
// keeps one table per open region: a region sees the ops of the regions
// around it, written before it, but not those of sibling regions, which is
// exactly what dominance means in structured SSA. Ops with regions, and ops
// with effects (loads included: a store may come between), are never merged.
#include "lowering/Pass.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tk {
namespace {

struct OpKey {
  Opcode opcode;
  std::vector<Value *> operands;
  std::vector<Type *> resultTypes;
  const AttrDict *attrs;

  bool operator<(const OpKey &o) const {
    // Pointer order only decides where a key sits in the table, never which
    // op survives (always the first in text order), so the output does not
    // depend on addresses.
    if (std::tie(opcode, operands, resultTypes) != std::tie(o.opcode, o.operands, o.resultTypes))
      return std::tie(opcode, operands, resultTypes) <
             std::tie(o.opcode, o.operands, o.resultTypes);
    return *attrs < *o.attrs;
  }
};

class CSEPass : public Pass {
public:
  CSEPass() : Pass(PassId::CSE) {}

  bool run(Module &module, DiagnosticEngine &) override {
    changed_ = false;
    for (auto &fn : module.functions())
      processBlock(fn->body());
    return changed_;
  }

private:
  void processBlock(Block &block) {
    scopes_.emplace_back();
    for (Operation *op : block.opsVector()) {
      if (op->numRegions()) {
        for (unsigned r = 0; r < op->numRegions(); ++r)
          for (unsigned b = 0; b < op->region(r).numBlocks(); ++b)
            processBlock(op->region(r).block(b));
        continue;
      }
      if (!op->hasTrait(OpTrait::Pure) || op->numResults() == 0)
        continue;
      OpKey key{op->opcode(), op->operands(), {}, &op->attrs()};
      for (Value *r : op->results())
        key.resultTypes.push_back(r->type());
      if (op->hasTrait(OpTrait::Commutative))
        std::sort(key.operands.begin(), key.operands.end());
      if (Operation *existing = find(key)) {
        for (unsigned i = 0; i < op->numResults(); ++i)
          op->result(i)->replaceAllUsesWith(existing->result(i));
        op->erase();
        changed_ = true;
        continue;
      }
      scopes_.back().emplace(std::move(key), op);
    }
    scopes_.pop_back();
  }

  Operation *find(const OpKey &key) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(key);
      if (found != it->end())
        return found->second;
    }
    return nullptr;
  }

  std::vector<std::map<OpKey, Operation *>> scopes_;
  bool changed_ = false;
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

} // namespace tk
