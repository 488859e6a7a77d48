// for, if and while -> LLVM basic blocks with phis. A carried tensor is
// carried register by register: one phi per register its layout gives the
// thread. Loop bounds, conditions and carried scalars are uniform over the
// program, so every thread takes the same path (which barriers inside the
// bodies rely on).
#include "lowering/codegen/FunctionLowering.h"

namespace tk {
namespace {

// The registers of `values`, one after another.
Regs flatten(FunctionLowering &fl, const std::vector<Value *> &values) {
  Regs out;
  for (Value *v : values) {
    const Regs &r = fl.get(v);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

// Hands consecutive slices of `regs` to `values`, as flatten laid them out.
void unflatten(FunctionLowering &fl, const std::vector<Value *> &values, const Regs &regs,
               const std::vector<size_t> &sizes) {
  size_t at = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    fl.set(values[i], Regs(regs.begin() + at, regs.begin() + at + sizes[i]));
    at += sizes[i];
  }
}

std::vector<size_t> sizesOf(FunctionLowering &fl, const std::vector<Value *> &values) {
  std::vector<size_t> sizes;
  for (Value *v : values)
    sizes.push_back(fl.get(v).size());
  return sizes;
}

std::vector<llvm::PHINode *> makePhis(llvm::IRBuilderBase &b, const Regs &like,
                                      llvm::BasicBlock *from) {
  std::vector<llvm::PHINode *> phis;
  for (llvm::Value *v : like) {
    llvm::PHINode *phi = b.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, from);
    phis.push_back(phi);
  }
  return phis;
}

} // namespace

bool FunctionLowering::lowerFor(Operation &op) {
  llvm::LLVMContext &c = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  Block &body = op.body();
  llvm::Value *lower = get(op.operand(0))[0], *upper = get(op.operand(1))[0],
              *step = get(op.operand(2))[0];
  std::vector<Value *> inits(op.operands().begin() + 3, op.operands().end());
  Regs initRegs = flatten(*this, inits);
  std::vector<size_t> sizes = sizesOf(*this, inits);

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(c, "for.header", fn);
  auto *bodyBB = llvm::BasicBlock::Create(c, "for.body", fn);
  auto *exit = llvm::BasicBlock::Create(c, "for.exit", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(lower->getType(), 2, "iv");
  iv->addIncoming(lower, pre);
  std::vector<llvm::PHINode *> phis = makePhis(b_, initRegs, pre);
  // The loop runs while iv < upper, compared with the bounds' signedness;
  // for a signed step that is not a constant, while iv > upper when the step
  // is negative (Python's range, as the interpreter runs it). The front end
  // makes negative constant steps count up, so a constant step is positive.
  bool sign = isSigned(op.operand(0)->type()->dtype());
  llvm::Value *more = sign ? b_.CreateICmpSLT(iv, upper) : b_.CreateICmpULT(iv, upper);
  if (sign && !llvm::isa<llvm::ConstantInt>(step))
    more = b_.CreateSelect(b_.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0)), more,
                           b_.CreateICmpSGT(iv, upper));
  b_.CreateCondBr(more, bodyBB, exit);

  b_.SetInsertPoint(bodyBB);
  set(body.argument(0), {iv});
  std::vector<Value *> args;
  for (unsigned i = 1; i < body.numArguments(); ++i)
    args.push_back(body.argument(i));
  unflatten(*this, args, Regs(phis.begin(), phis.end()), sizes);
  if (!lowerBlock(body))
    return false;
  Regs next = flatten(*this, body.terminator()->operands());
  llvm::Value *ivNext = b_.CreateAdd(iv, step, "iv.next");
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  b_.CreateBr(header);
  iv->addIncoming(ivNext, latch);
  for (size_t i = 0; i < phis.size(); ++i)
    phis[i]->addIncoming(next[i], latch);

  b_.SetInsertPoint(exit);
  unflatten(*this, op.results(), Regs(phis.begin(), phis.end()), sizes);
  return true;
}

bool FunctionLowering::lowerIf(Operation &op) {
  llvm::LLVMContext &c = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  auto *thenBB = llvm::BasicBlock::Create(c, "if.then", fn);
  auto *elseBB = llvm::BasicBlock::Create(c, "if.else", fn);
  auto *merge = llvm::BasicBlock::Create(c, "if.end", fn);
  b_.CreateCondBr(get(op.operand(0))[0], thenBB, elseBB);

  Regs yielded[2];
  llvm::BasicBlock *ends[2];
  llvm::BasicBlock *starts[2] = {thenBB, elseBB};
  for (unsigned r = 0; r < 2; ++r) {
    b_.SetInsertPoint(starts[r]);
    if (!lowerBlock(op.body(r)))
      return false;
    yielded[r] = flatten(*this, op.body(r).terminator()->operands());
    ends[r] = b_.GetInsertBlock();
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  Regs results;
  for (size_t i = 0; i < yielded[0].size(); ++i) {
    llvm::PHINode *phi = b_.CreatePHI(yielded[0][i]->getType(), 2);
    phi->addIncoming(yielded[0][i], ends[0]);
    phi->addIncoming(yielded[1][i], ends[1]);
    results.push_back(phi);
  }
  unflatten(*this, op.results(), results, sizesOf(*this, op.body(0).terminator()->operands()));
  return true;
}

bool FunctionLowering::lowerWhile(Operation &op) {
  llvm::LLVMContext &c = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  Block &before = op.body(0), &after = op.body(1);
  Regs initRegs = flatten(*this, op.operands());
  std::vector<size_t> sizes = sizesOf(*this, op.operands());

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *beforeBB = llvm::BasicBlock::Create(c, "while.before", fn);
  auto *afterBB = llvm::BasicBlock::Create(c, "while.after", fn);
  auto *exit = llvm::BasicBlock::Create(c, "while.exit", fn);
  b_.CreateBr(beforeBB);
  b_.SetInsertPoint(beforeBB);
  std::vector<llvm::PHINode *> phis = makePhis(b_, initRegs, pre);
  unflatten(*this, before.arguments(), Regs(phis.begin(), phis.end()), sizes);
  if (!lowerBlock(before))
    return false;
  Operation *cond = before.terminator();
  std::vector<Value *> passed(cond->operands().begin() + 1, cond->operands().end());
  Regs passedRegs = flatten(*this, passed);
  std::vector<size_t> passedSizes = sizesOf(*this, passed);
  b_.CreateCondBr(get(cond->operand(0))[0], afterBB, exit);

  // The before region dominates both the after region and the exit, so its
  // values reach them without phis.
  b_.SetInsertPoint(afterBB);
  unflatten(*this, after.arguments(), passedRegs, passedSizes);
  if (!lowerBlock(after))
    return false;
  Regs next = flatten(*this, after.terminator()->operands());
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  b_.CreateBr(beforeBB);
  for (size_t i = 0; i < phis.size(); ++i)
    phis[i]->addIncoming(next[i], latch);

  b_.SetInsertPoint(exit);
  unflatten(*this, op.results(), passedRegs, passedSizes);
  return true;
}

} // namespace tk
