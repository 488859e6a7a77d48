// inline_asm (tk.inline_asm_elementwise; ir/InlineAsm.h) -> LLVM inline
// assembly calls, `pack` registers of the thread at a time.
//
//   %c, %d = inline_asm %a, %b {asm = "...", constraints = "=r,=r,r,r", pack = 1, pure = true}
//   -> per register i of the thread:
//        %s = call { i32, i32 } asm "...", "=r,=r,r,r"(i32 %a.i, i32 %b.i)
//        %c.i = extractvalue %s, 0;  %d.i = extractvalue %s, 1
//
// Coalesce gave every operand and result one layout, so register i of each
// is the same element. A call takes registers g*pack .. g*pack+pack-1: a
// value narrower than 32 bits travels as vectors <k x T> of k = min(pack,
// 32 / bits) elements (a 4 x i8 or 2 x fp16 vector is one 32-bit "r"
// register), wider ones one register per element. Where a thread holds a
// number of registers that is not a multiple of pack, the last call gets
// the group's first element again in the missing places and its extra
// results are dropped: which elements share a call is unspecified (Triton's
// rule), and a repeated element only repeats what a copy in a replicated
// layout does anyway (padding with poison could hand a side-effecting asm a
// garbage pointer). The asm has side effects (LLVM's sideeffect) unless the
// op is pure. The text is LLVM's: $N names operand N, $$ is a dollar.
//
// map_elementwise (tk.map_elementwise) is the same walk with the op's body
// in place of the asm: the body is lowered once per group of pack
// registers, its arguments bound to the group's registers of each operand
// and its yields giving the results' registers; control flow in the body
// becomes branches inside each copy.
#include "ir/InlineAsm.h"
#include "lowering/codegen/FunctionLowering.h"

#include <fmt/format.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/Support/Error.h>

namespace tk {
namespace {

// The registers the thread holds of every operand of `op`, and in `numRegs`
// how many it holds of `like` (Coalesce gave operands and results one
// layout); empty when an operand holds another count.
std::vector<const Regs *> operandRegisters(FunctionLowering &fl, Operation &op, Value *like,
                                           size_t &numRegs) {
  numRegs = like->type()->isTensor() ? size_t(fl.threadMap(like).numRegisters()) : 1;
  std::vector<const Regs *> ins;
  for (Value *v : op.operands()) {
    ins.push_back(&fl.get(v));
    if (ins.back()->size() != numRegs)
      return {};
  }
  return ins;
}

} // namespace

bool FunctionLowering::lowerInlineAsm(Operation &op) {
  if (std::string problem = inlineAsmProblem(op); !problem.empty()) {
    diag_.error(op.loc(), fmt::format("'inline_asm' {}", problem));
    return false;
  }
  llvm::IRBuilderBase &b = b_;
  int64_t pack = *op.attrs().getInt("pack");
  bool pure = op.attrs().getBool("pure").value_or(false);
  std::string text = op.attrs().getString("asm").value_or("");
  std::string constraints = op.attrs().getString("constraints").value_or("");

  size_t numRegs = 0;
  std::vector<const Regs *> ins = operandRegisters(*this, op, op.result(0), numRegs);
  if (ins.empty() && op.numOperands())
    return unsupported(op, "with operands in a layout other than the results'");

  // Per value: its LLVM element type, elements per register, and the type of
  // one register of it.
  struct Slot {
    llvm::Type *elem;
    int64_t perReg;
    llvm::Type *reg;
  };
  auto slotOf = [&](Value *v) {
    llvm::Type *e = elementType(v->type());
    int64_t k = inlineAsmElementsPerRegister(v->type()->elementType(), pack);
    return Slot{e, k, k == 1 ? e : llvm::FixedVectorType::get(e, unsigned(k))};
  };
  std::vector<Slot> inSlots, outSlots;
  std::vector<llvm::Type *> paramTypes, outTypes;
  for (Value *v : op.operands()) {
    inSlots.push_back(slotOf(v));
    for (int64_t j = 0; j < pack; j += inSlots.back().perReg)
      paramTypes.push_back(inSlots.back().reg);
  }
  for (Value *r : op.results()) {
    outSlots.push_back(slotOf(r));
    for (int64_t j = 0; j < pack; j += outSlots.back().perReg)
      outTypes.push_back(outSlots.back().reg);
  }
  llvm::Type *retType =
      outTypes.size() == 1 ? outTypes[0] : llvm::StructType::get(b.getContext(), outTypes);
  auto *fnType = llvm::FunctionType::get(retType, paramTypes, false);
  if (llvm::Error e = llvm::InlineAsm::verify(fnType, constraints)) {
    diag_.error(op.loc(), fmt::format("'inline_asm' constraints \"{}\" do not fit its operands "
                                      "and results: {}",
                                      constraints, llvm::toString(std::move(e))));
    return false;
  }
  llvm::InlineAsm *code = llvm::InlineAsm::get(fnType, text, constraints, /*hasSideEffects=*/!pure);

  std::vector<Regs> outs(op.numResults());
  for (size_t start = 0; start < numRegs; start += size_t(pack)) {
    // Element j of the group, or the group's first where the thread has no
    // register j.
    auto element = [&](const Regs &regs, int64_t j) {
      size_t i = start + size_t(j);
      return i < numRegs ? regs[i] : regs[start];
    };
    std::vector<llvm::Value *> args;
    for (size_t o = 0; o < ins.size(); ++o) {
      const Slot &s = inSlots[o];
      for (int64_t j = 0; j < pack; j += s.perReg) {
        if (s.perReg == 1) {
          args.push_back(element(*ins[o], j));
          continue;
        }
        llvm::Value *vec = llvm::PoisonValue::get(s.reg);
        for (int64_t k = 0; k < s.perReg; ++k)
          vec = b.CreateInsertElement(vec, element(*ins[o], j + k), b.getInt32(unsigned(k)));
        args.push_back(vec);
      }
    }
    llvm::Value *call = b.CreateCall(fnType, code, args);
    unsigned out = 0;
    for (size_t r = 0; r < outSlots.size(); ++r) {
      const Slot &s = outSlots[r];
      for (int64_t j = 0; j < pack; j += s.perReg, ++out) {
        llvm::Value *reg = outTypes.size() == 1 ? call : b.CreateExtractValue(call, out);
        for (int64_t k = 0; k < s.perReg; ++k) {
          if (start + size_t(j + k) >= numRegs)
            continue;
          outs[r].push_back(s.perReg == 1 ? reg
                                          : b.CreateExtractElement(reg, b.getInt32(unsigned(k))));
        }
      }
    }
  }
  for (unsigned r = 0; r < op.numResults(); ++r)
    set(op.result(r), std::move(outs[r]));
  return true;
}

bool FunctionLowering::lowerMapElementwise(Operation &op) {
  int64_t pack = *op.attrs().getInt("pack");
  size_t numRegs = 0;
  std::vector<const Regs *> ins = operandRegisters(*this, op, op.operand(0), numRegs);
  if (ins.empty())
    return unsupported(op, "with operands in different layouts");
  Block &body = op.body();
  std::vector<Regs> outs(op.numResults());
  for (size_t start = 0; start < numRegs; start += size_t(pack)) {
    unsigned arg = 0;
    for (const Regs *in : ins)
      for (int64_t j = 0; j < pack; ++j) {
        size_t i = start + size_t(j);
        set(body.argument(arg++), {(*in)[i < numRegs ? i : start]});
      }
    if (!lowerBlock(body))
      return false;
    Operation *yield = body.terminator();
    for (unsigned r = 0; r < op.numResults(); ++r)
      for (int64_t j = 0; j < pack; ++j)
        if (start + size_t(j) < numRegs)
          outs[r].push_back(get(yield->operand(r * unsigned(pack) + unsigned(j)))[0]);
  }
  for (unsigned r = 0; r < op.numResults(); ++r)
    set(op.result(r), std::move(outs[r]));
  return true;
}

} // namespace tk
