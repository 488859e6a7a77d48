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

// Whether `lo` and `hi` are the two 16-bit halves of one 32-bit word of a
// vector: elements 2m and 2m + 1 of the same value (a load's registers are
// such elements of the words it loaded).
bool halvesOfOneWord(llvm::Value *lo, llvm::Value *hi) {
  auto *a = llvm::dyn_cast<llvm::ExtractElementInst>(lo);
  auto *b = llvm::dyn_cast<llvm::ExtractElementInst>(hi);
  if (!a || !b || a->getVectorOperand() != b->getVectorOperand() ||
      lo->getType()->getPrimitiveSizeInBits() != 16)
    return false;
  auto *i = llvm::dyn_cast<llvm::ConstantInt>(a->getIndexOperand());
  auto *j = llvm::dyn_cast<llvm::ConstantInt>(b->getIndexOperand());
  return i && j && i->getZExtValue() % 2 == 0 && j->getZExtValue() == i->getZExtValue() + 1;
}

// A loop that carries a loaded 16-bit tensor to its next iteration (the
// persistent LayerNorm's prefetched row) would carry it one 16-bit register
// per element: the back end then splits each loaded word into two registers
// in the loop (a PRMT each in SASS, 16 per iteration for a 1024-wide fp16
// row at 2 warps) to feed phis that the conversions read one by one. Pairs of
// phis whose next values are the two halves of one word, and whose initial
// values are too (or are constants), become one <2 x 16-bit> phi instead,
// unpacked after the phis: the word goes around the loop as it was loaded,
// and the conversions read its halves in place. Returns the registers that
// replace `phis` (the unpacked halves where a pair was packed).
Regs packCarriedWords(llvm::IRBuilderBase &b, const std::vector<llvm::PHINode *> &phis,
                      const Regs &init, const Regs &next, llvm::BasicBlock *pre,
                      llvm::BasicBlock *latch) {
  Regs out(phis.begin(), phis.end());
  for (size_t i = 0; i + 1 < phis.size(); ++i) {
    bool constInit = llvm::isa<llvm::Constant>(init[i]) && llvm::isa<llvm::Constant>(init[i + 1]);
    if (!halvesOfOneWord(next[i], next[i + 1]) ||
        !(constInit || halvesOfOneWord(init[i], init[i + 1])) ||
        init[i]->getType() != init[i + 1]->getType())
      continue;
    llvm::BasicBlock *header = phis[i]->getParent();
    b.SetInsertPoint(pre->getTerminator());
    llvm::Value *first = vectorOf(b, {init[i], init[i + 1]});
    b.SetInsertPoint(latch->getTerminator());
    llvm::Value *again = vectorOf(b, {next[i], next[i + 1]});
    b.SetInsertPoint(header, header->begin());
    llvm::PHINode *word = b.CreatePHI(first->getType(), 2);
    word->addIncoming(first, pre);
    word->addIncoming(again, latch);
    b.SetInsertPoint(header, header->getFirstInsertionPt());
    for (size_t k = 0; k < 2; ++k) {
      out[i + k] = b.CreateExtractElement(word, uint64_t(k));
      phis[i + k]->replaceAllUsesWith(out[i + k]);
      phis[i + k]->eraseFromParent();
    }
    ++i;
  }
  return out;
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
  Regs carried = packCarriedWords(b_, phis, initRegs, next, pre, latch);

  b_.SetInsertPoint(exit);
  unflatten(*this, op.results(), carried, sizes);
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
