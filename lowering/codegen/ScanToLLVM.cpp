// scan (cumsum, cumprod, or a combiner region; forward or reverse) -> the
// interpreter's sequential order, exactly.
//
// The interpreter, the reference of the differential tests, scans each line
// left to right (right to left when reversed) with the running value as the
// combiner's left operand, rounding fp16/bf16 at every step. A tree-shaped
// parallel scan would round differently and would reorder a combiner that
// does not associate, so both paths here keep that order:
//
//  1. When each thread holds whole lines (the axis is not split over lanes or
//     warps — the usual case when the axis is not the fastest dimension, or
//     is short), the scan is a chain over the thread's registers: no
//     communication at all.
//       scan %x {axis = 1, kind = "cumsum"} : tensor<64x8xi32, blocked<size = [1, 8], ...>>
//       -> per row, 7 adds on the thread's 8 registers.
//  2. Otherwise the operands go to shared memory at their row-major slots, a
//     barrier, thread t scans lines t, t + T, ... in place (T threads), a
//     barrier, every thread reads its result elements back. The barrier
//     before the scratch is reused is --insert-barriers' job.
// Multi-operand combiner scans keep one scratch array per operand, one after
// another at 16-byte aligned offsets (DataMovement.h).
#include "lowering/DataMovement.h"
#include "lowering/codegen/FunctionLowering.h"

#include <map>

namespace tk {
bool FunctionLowering::lowerScan(Operation &op) {
  std::optional<std::string> kind = op.attrs().getString("kind");
  if (kind && *kind != "cumsum" && *kind != "cumprod")
    return unsupported(op, "of kind \"" + *kind + "\"");
  if (!kind && op.numRegions() != 1)
    return unsupported(op, "without a kind or a combiner region");
  bool reverse = op.attrs().getBool("reverse").value_or(false);
  unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
  unsigned n = op.numOperands();
  if (op.numResults() != n)
    return unsupported(op, "whose results do not match its operands");
  for (unsigned i = 0; i < n; ++i)
    if (!op.operand(i)->type()->isTensor() || layoutOf(op.operand(i)) != layoutOf(op.operand(0)) ||
        layoutOf(op.result(i)) != layoutOf(op.operand(0)))
      return unsupported(op, "whose operands and results are not in one layout");

  // The combiner: the running values (left) with the next element (right).
  auto step = [&](std::vector<llvm::Value *> acc,
                  const std::vector<llvm::Value *> &cur) -> std::vector<llvm::Value *> {
    if (kind) {
      Type *t = op.operand(0)->type()->elementType();
      return {scalarOp(*kind == "cumsum" ? Opcode::Add : Opcode::Mul, AttrDict(), t, t,
                       {acc[0], cur[0]})};
    }
    Block &body = op.body(0);
    for (unsigned i = 0; i < n; ++i) {
      set(body.argument(i), {acc[i]});
      set(body.argument(n + i), {cur[i]});
    }
    if (!lowerBlock(body))
      return {};
    std::vector<llvm::Value *> out;
    for (Value *y : body.terminator()->operands())
      out.push_back(get(y)[0]);
    return out;
  };

  Value *first = op.operand(0);
  ThreadMap map = threadMap(first);
  const ThreadMap::Dim &d = map.dim(axis);

  if (scanIsInThread(op)) {
    // 1. Whole lines in each thread: register k along the axis is element k
    //    (registers past the extent are copies of element k mod extent).
    std::map<std::vector<int64_t>, std::vector<int64_t>> lines;
    for (int64_t r = 0; r < map.numRegisters(); ++r) {
      std::vector<int64_t> k = map.registerIndex(r);
      int64_t along = k[axis];
      k.erase(k.begin() + axis);
      std::vector<int64_t> &line = lines[k];
      if (line.size() <= static_cast<size_t>(along))
        line.resize(static_cast<size_t>(along) + 1, -1);
      line[static_cast<size_t>(along)] = r;
    }
    std::vector<Regs> outs(n, Regs(static_cast<size_t>(map.numRegisters()), nullptr));
    for (auto &[key, line] : lines) {
      std::vector<llvm::Value *> acc;
      for (int64_t s = 0; s < d.extent; ++s) {
        int64_t j = reverse ? d.extent - 1 - s : s;
        std::vector<llvm::Value *> cur;
        for (unsigned i = 0; i < n; ++i)
          cur.push_back(get(op.operand(i))[static_cast<size_t>(line[static_cast<size_t>(j)])]);
        acc = s == 0 ? cur : step(acc, cur);
        if (acc.size() != n)
          return false;
        for (unsigned i = 0; i < n; ++i)
          outs[i][static_cast<size_t>(line[static_cast<size_t>(j)])] = acc[i];
      }
      for (size_t j = static_cast<size_t>(d.extent); j < line.size(); ++j)
        for (unsigned i = 0; i < n; ++i)
          outs[i][static_cast<size_t>(line[j])] =
              outs[i][static_cast<size_t>(line[j % static_cast<size_t>(d.extent)])];
    }
    for (unsigned i = 0; i < n; ++i)
      set(op.result(i), std::move(outs[i]));
    return true;
  }

  // 2. Through shared memory, one thread per line.
  const std::vector<int64_t> &shape = first->type()->shape();
  int64_t len = shape[axis], inner = 1, numel = first->type()->numElements();
  for (unsigned dd = axis + 1; dd < shape.size(); ++dd)
    inner *= shape[dd];
  int64_t numLines = numel / len;
  std::vector<llvm::Type *> storage;
  std::vector<llvm::Value *> bases;
  for (unsigned i = 0; i < n; ++i) {
    llvm::Type *t = elementType(op.operand(i)->type());
    storage.push_back(t->isIntegerTy(1) ? b_.getInt8Ty() : t);
    bases.push_back(b_.CreateGEP(b_.getInt8Ty(), smem_,
                                 b_.getInt32(static_cast<uint32_t>(scanScratchPart(op, i)))));
  }
  auto slot = [&](unsigned i, llvm::Value *idx) { return b_.CreateGEP(storage[i], bases[i], idx); };
  auto toStorage = [&](unsigned i, llvm::Value *v) {
    return v->getType()->isIntegerTy(1) ? b_.CreateZExt(v, storage[i]) : v;
  };
  auto fromStorage = [&](unsigned i, llvm::Value *v) {
    return elementType(op.operand(i)->type())->isIntegerTy(1) ? b_.CreateTrunc(v, b_.getInt1Ty())
                                                              : v;
  };
  std::vector<llvm::Value *> inIdx = linearIndices(first);
  for (unsigned i = 0; i < n; ++i) {
    const Regs &src = get(op.operand(i));
    for (size_t r = 0; r < src.size(); ++r)
      b_.CreateStore(toStorage(i, src[r]), slot(i, inIdx[r]));
  }
  target_.barrier(b_);

  // for (line = tid; line < numLines; line += T)
  //   for (s = 1; s < len; ++s) slot[at(s)] = combine(slot[at(s - 1)], slot[at(s)])
  llvm::LLVMContext &ctx = b_.getContext();
  llvm::Function *fn = b_.GetInsertBlock()->getParent();
  llvm::Type *i32 = b_.getInt32Ty();
  llvm::Value *tid = b_.CreateAdd(b_.CreateMul(warp_, b_.getInt32(kWarpSize)), lane_);
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *lineHead = llvm::BasicBlock::Create(ctx, "scan.line", fn);
  auto *lineBody = llvm::BasicBlock::Create(ctx, "scan.first", fn);
  auto *stepBody = llvm::BasicBlock::Create(ctx, "scan.step", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, "scan.done", fn);
  b_.CreateBr(lineHead);
  b_.SetInsertPoint(lineHead);
  llvm::PHINode *line = b_.CreatePHI(i32, 2, "line");
  line->addIncoming(tid, pre);
  b_.CreateCondBr(b_.CreateICmpULT(line, b_.getInt32(static_cast<uint32_t>(numLines))), lineBody,
                  exit);
  b_.SetInsertPoint(lineBody);
  llvm::Value *innerV = b_.getInt32(static_cast<uint32_t>(inner));
  llvm::Value *base = b_.CreateAdd(
      b_.CreateMul(b_.CreateUDiv(line, innerV), b_.getInt32(static_cast<uint32_t>(len * inner))),
      b_.CreateURem(line, innerV));
  auto at = [&](llvm::Value *s) {
    llvm::Value *j = reverse ? b_.CreateSub(b_.getInt32(static_cast<uint32_t>(len - 1)), s) : s;
    return b_.CreateAdd(base, b_.CreateMul(j, innerV));
  };
  std::vector<llvm::Value *> acc0;
  for (unsigned i = 0; i < n; ++i)
    acc0.push_back(b_.CreateLoad(storage[i], slot(i, at(b_.getInt32(0)))));
  b_.CreateBr(stepBody);
  b_.SetInsertPoint(stepBody);
  llvm::PHINode *s = b_.CreatePHI(i32, 2, "s");
  s->addIncoming(b_.getInt32(1), lineBody);
  std::vector<llvm::PHINode *> accPhi;
  std::vector<llvm::Value *> acc, cur;
  for (unsigned i = 0; i < n; ++i) {
    accPhi.push_back(b_.CreatePHI(storage[i], 2));
    accPhi[i]->addIncoming(acc0[i], lineBody);
    acc.push_back(fromStorage(i, accPhi[i]));
  }
  llvm::Value *pos = at(s);
  for (unsigned i = 0; i < n; ++i)
    cur.push_back(fromStorage(i, b_.CreateLoad(storage[i], slot(i, pos))));
  std::vector<llvm::Value *> next = step(acc, cur);
  if (next.size() != n)
    return false;
  // The combiner may have opened blocks (an if in the region).
  llvm::BasicBlock *stepEnd = b_.GetInsertBlock();
  for (unsigned i = 0; i < n; ++i) {
    llvm::Value *v = toStorage(i, next[i]);
    b_.CreateStore(v, slot(i, pos));
    accPhi[i]->addIncoming(v, stepEnd);
  }
  llvm::Value *sNext = b_.CreateAdd(s, b_.getInt32(1));
  s->addIncoming(sNext, stepEnd);
  llvm::Value *lineNext = b_.CreateAdd(line, b_.getInt32(static_cast<uint32_t>(map.numThreads())));
  auto *lineLatch = llvm::BasicBlock::Create(ctx, "scan.next", fn, exit);
  b_.CreateCondBr(b_.CreateICmpULT(sNext, b_.getInt32(static_cast<uint32_t>(len))), stepBody,
                  lineLatch);
  b_.SetInsertPoint(lineLatch);
  b_.CreateBr(lineHead);
  line->addIncoming(lineNext, lineLatch);
  b_.SetInsertPoint(exit);
  target_.barrier(b_);
  std::vector<llvm::Value *> outIdx = linearIndices(op.result(0));
  for (unsigned i = 0; i < n; ++i) {
    Regs out;
    for (llvm::Value *idx : outIdx)
      out.push_back(fromStorage(i, b_.CreateLoad(storage[i], slot(i, idx))));
    set(op.result(i), std::move(out));
  }
  return true;
}

} // namespace tk
