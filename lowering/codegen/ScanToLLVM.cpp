// scan (cumsum, cumprod, or a combiner region; forward or reverse) -> one of
// three paths, chosen by DataMovement.h (the allocation asks the same):
//
//  1. When each thread holds whole lines (the axis is not split over lanes or
//     warps: the axis is not the fastest dimension, or is short), a chain
//     over the thread's registers in the interpreter's order, exactly: no
//     communication.
//       scan %x {axis = 1, kind = "cumsum"} : tensor<64x8xi32, blocked<size = [1, 8], ...>>
//       -> per row, 7 adds on the thread's 8 registers.
//  2. cumsum/cumprod along an axis split over lanes or warps without copies:
//     a parallel scan. Each thread scans its run of `size` consecutive
//     elements; a butterfly of shfl.sync.bfly over the axis' lane bits gives
//     every lane its block's total and the exclusive prefix of the lanes
//     before it; when warps split the axis, each warp's total per tile
//     repetition goes to shared memory, one barrier, and each thread
//     combines those before its own (repetition-major, then warp). The
//     result is carry + lane prefix + own run. Integers wrap, so the order
//     changes nothing; float sums and products round in another order than
//     the interpreter's left-to-right chain (as Triton's scans do): the
//     differential tests use inputs whose scans are exact.
//  3. Otherwise (combiner regions, which need not associate; a layout with
//     copies along the axis; i1) the operands go to shared memory at their
//     row-major slots, a barrier, thread t scans lines t, t + T, ... in place
//     in the interpreter's order (T threads), a barrier, every thread reads
//     its result elements back. Multi-operand combiner scans keep one scratch
//     array per operand, at 16-byte aligned offsets.
// The barrier before a scratch is reused is --insert-barriers' job.
#include "analysis/DataMovement.h"
#include "lowering/codegen/FunctionLowering.h"

#include <map>

namespace tk {

bool FunctionLowering::lowerParallelScan(Operation &op) {
  bool reverse = op.attrs().getBool("reverse").value_or(false);
  bool isSum = *op.attrs().getString("kind") == "cumsum";
  unsigned axis = static_cast<unsigned>(*op.attrs().getInt("axis"));
  Value *in = op.operand(0);
  Type *t = in->type()->elementType();
  llvm::Type *lt = elementType(in->type());
  auto comb = [&](llvm::Value *a, llvm::Value *b) {
    return scalarOp(isSum ? Opcode::Add : Opcode::Mul, AttrDict(), t, t, {a, b});
  };
  // -0.0 (not +0.0) leaves every float unchanged under addition, -0.0 too.
  llvm::Value *identity =
      lt->isFloatingPointTy()
          ? llvm::ConstantFP::get(lt, isSum ? -0.0 : 1.0)
          : static_cast<llvm::Value *>(llvm::ConstantInt::get(lt, isSum ? 0 : 1));
  ThreadMap map = threadMap(in);
  const ThreadMap::Dim &d = map.dim(axis);
  int64_t s = d.size, lanes = d.threads, warps = d.warps, reps = d.extent / d.tile();
  llvm::Value *la = b_.CreateURem(b_.CreateUDiv(lane_, b_.getInt32(d.laneStride)),
                                  b_.getInt32(static_cast<uint32_t>(lanes)));
  llvm::Value *wa = b_.CreateURem(b_.CreateUDiv(warp_, b_.getInt32(d.warpStride)),
                                  b_.getInt32(static_cast<uint32_t>(warps)));
  // The registers of each line this thread holds, [repetition][position].
  std::map<std::vector<int64_t>, std::vector<std::vector<int64_t>>> groups;
  for (int64_t r = 0; r < map.numRegisters(); ++r) {
    std::vector<int64_t> k = map.registerIndex(r);
    int64_t along = k[axis];
    k.erase(k.begin() + axis);
    auto &g = groups[k];
    if (g.empty())
      g.assign(static_cast<size_t>(reps), std::vector<int64_t>(static_cast<size_t>(s), -1));
    g[static_cast<size_t>(along / s)][static_cast<size_t>(along % s)] = r;
  }
  const Regs &src = get(in);
  Regs out(src.size(), nullptr);
  std::vector<std::vector<llvm::Value *>> coords;
  if (warps > 1)
    coords = coordinates(in);
  const std::vector<int64_t> &shape = in->type()->shape();
  // Per line held: the inclusive run within the thread, the exclusive
  // prefix over lanes and the lane total, per repetition.
  struct Line {
    const std::vector<std::vector<int64_t>> *regs;
    std::vector<std::vector<llvm::Value *>> incl;
    std::vector<llvm::Value *> excl, total;
    llvm::Value *index = nullptr; // row-major over the other dimensions
  };
  std::vector<Line> lines;
  for (auto &[key, g] : groups) {
    Line ln{&g, std::vector<std::vector<llvm::Value *>>(static_cast<size_t>(reps)),
            std::vector<llvm::Value *>(static_cast<size_t>(reps)),
            std::vector<llvm::Value *>(static_cast<size_t>(reps))};
    for (size_t r = 0; r < static_cast<size_t>(reps); ++r) {
      // 1. Within the thread: its run of `s` consecutive elements.
      ln.incl[r].resize(static_cast<size_t>(s));
      llvm::Value *acc = nullptr;
      for (int64_t q = 0; q < s; ++q) {
        size_t j = static_cast<size_t>(reverse ? s - 1 - q : q);
        llvm::Value *v = src[static_cast<size_t>(g[r][j])];
        acc = acc ? comb(acc, v) : v;
        ln.incl[r][j] = acc;
      }
      // 2. Across lanes: a butterfly that keeps, per lane, the total of its
      //    aligned block of lanes and the exclusive prefix within it.
      llvm::Value *total = acc, *excl = identity;
      for (int64_t m = 1; m < lanes; m *= 2) {
        llvm::Value *other = target_.shuffleXor(b_, total, static_cast<unsigned>(m * d.laneStride));
        llvm::Value *upper = b_.CreateICmpNE(
            b_.CreateAnd(la, b_.getInt32(static_cast<uint32_t>(m))), b_.getInt32(0));
        // The partner's block comes first in scan order.
        llvm::Value *partnerFirst = reverse ? b_.CreateNot(upper) : upper;
        excl = b_.CreateSelect(partnerFirst, comb(other, excl), excl);
        total = b_.CreateSelect(partnerFirst, comb(other, total), comb(total, other));
      }
      ln.excl[r] = excl;
      ln.total[r] = total;
    }
    if (warps > 1) {
      const std::vector<llvm::Value *> &c = coords[static_cast<size_t>(g[0][0])];
      ln.index = b_.getInt32(0);
      for (unsigned dd = 0; dd < shape.size(); ++dd)
        if (dd != axis)
          ln.index = b_.CreateAdd(
              b_.CreateMul(ln.index, b_.getInt32(static_cast<uint32_t>(shape[dd]))), c[dd]);
    }
    lines.push_back(std::move(ln));
  }
  // Slot (line * reps + r) * warps + warp of the shared scratch.
  auto slot = [&](const Line &ln, int64_t r, llvm::Value *w) {
    llvm::Value *base =
        b_.CreateMul(b_.CreateAdd(b_.CreateMul(ln.index, b_.getInt32(static_cast<uint32_t>(reps))),
                                  b_.getInt32(static_cast<uint32_t>(r))),
                     b_.getInt32(static_cast<uint32_t>(warps)));
    return b_.CreateGEP(lt, smem_, b_.CreateAdd(base, w));
  };
  if (warps > 1) {
    // Every lane writes its warp's totals (the same values), one barrier.
    for (const Line &ln : lines)
      for (int64_t r = 0; r < reps; ++r)
        b_.CreateStore(ln.total[static_cast<size_t>(r)], slot(ln, r, wa));
    target_.barrier(b_);
  }
  for (const Line &ln : lines) {
    // 3. Across warps and tile repetitions: what comes before this warp's
    //    part of repetition r.
    std::vector<llvm::Value *> carry(static_cast<size_t>(reps));
    llvm::Value *running = identity;
    for (int64_t q = 0; q < reps; ++q) {
      int64_t r = reverse ? reps - 1 - q : q;
      if (warps == 1) {
        carry[static_cast<size_t>(r)] = running;
        running = comb(running, ln.total[static_cast<size_t>(r)]);
        continue;
      }
      llvm::Value *part = running;
      for (int64_t p = 0; p < warps; ++p) {
        int64_t w = reverse ? warps - 1 - p : p;
        llvm::Value *wv = b_.getInt32(static_cast<uint32_t>(w));
        llvm::Value *tv = b_.CreateLoad(lt, slot(ln, r, wv));
        llvm::Value *before = reverse ? b_.CreateICmpUGT(wv, wa) : b_.CreateICmpULT(wv, wa);
        part = b_.CreateSelect(before, comb(part, tv), part);
        running = comb(running, tv);
      }
      carry[static_cast<size_t>(r)] = part;
    }
    // 4. Each element: what precedes its warp's part, its lanes' runs, its
    //    own run up to it.
    for (size_t r = 0; r < static_cast<size_t>(reps); ++r) {
      llvm::Value *prefix = comb(carry[r], ln.excl[r]);
      for (size_t j = 0; j < static_cast<size_t>(s); ++j)
        out[static_cast<size_t>((*ln.regs)[r][j])] = comb(prefix, ln.incl[r][j]);
    }
  }
  set(op.result(), std::move(out));
  return true;
}

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

  if (scanIsParallel(op))
    return lowerParallelScan(op);

  // 3. Through shared memory, one thread per line.
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
  llvm::Value *tid = b_.CreateAdd(b_.CreateMul(warp_, b_.getInt32(warpSize_)), lane_);
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
