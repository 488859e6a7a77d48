// dot -> LLVM IR: C[M, N] = A[M, K] x B[K, N] + acc, by the result's layout
// (--accelerate-dot chooses it), and the ops of the cp.async ring that feeds
// it (--pipeline). This file only dispatches; DotLowering.h says which file
// lowers what:
//
//   dot, blocked result         FmaDotToLLVM.cpp    FMA on the CUDA cores
//   dot, mma version 2          MmaDotToLLVM.cpp    mma.sync
//   dot, mma version 3          WgmmaDotToLLVM.cpp  wgmma (sm_90a)
//   dot, mfma / wmma            AMDMmaDotToLLVM.cpp AMD's matrix cores
//   ring_view, async_copy,      DotOperands.cpp     the ring's stages, cp.async,
//   async_wait                                      cp.async.wait_group + bar.sync
//
// An async_wait after a loop of wgmma dots also drains the wgmma groups the
// loop left in flight (wgmma_drain) and, after a loop of wgmma_native dots,
// puts their accumulator rows in order (WgmmaDotToLLVM.cpp).
#include "lowering/codegen/DotLowering.h"

namespace tk {

bool FunctionLowering::lowerDot(Operation &op) {
  if (op.is(Opcode::AsyncCopy))
    return lowerAsyncCopy(*this, op);
  if (op.is(Opcode::AsyncWait)) {
    // The drained loop: --pipeline puts this wait right after it; should a
    // later pass put ops in between, the nearest `for` before it (without
    // one the wait still happens, the registers just not passed through).
    // The second wait after a loop of wgmma_native dots puts their rows in
    // order; it finds its loop the same way (the drain's wait sits between).
    bool drain = op.attrs().getBool("wgmma_drain").value_or(false);
    bool native = op.attrs().getInt("wgmma_native_bytes").value_or(0) > 0;
    Operation *loop = drain || native ? op.prevNode() : nullptr;
    while (loop && !loop->is(Opcode::For))
      loop = loop->prevNode();
    // The drain comes first: its wait and re-read accumulators precede the
    // barrier that lets others reuse the ring.
    if (drain)
      drainWgmma(*this, loop);
    asyncWait(*this, op.attrs().getInt("pending").value_or(0),
              op.attrs().getBool("fence_async").value_or(false));
    if (native && loop)
      wgmmaRowsInOrder(*this, *loop);
    return true;
  }
  if (op.is(Opcode::RingView)) {
    // No registers: the dot reads the stage from shared memory.
    llvm::Type *elem = elementType(op.result()->type());
    set(op.result(), Regs(static_cast<size_t>(threadMap(op.result()).numRegisters()),
                          llvm::PoisonValue::get(elem)));
    return true;
  }
  Value *a = op.operand(0), *res = op.result();
  if (a->type()->rank() != 2)
    return unsupported(op, "of rank other than 2");
  if (layoutOf(op.operand(2)) != layoutOf(res))
    return unsupported(op, "whose accumulator layout differs from its result's (run "
                           "--accelerate-dot)");
  if (auto *mma = dyn_cast<MmaLayout>(layoutOf(res)))
    return mma->version() == 3 ? lowerWgmmaDot(*this, op, mma) : lowerMmaDot(*this, op, mma);
  if (auto *amd = dyn_cast<AMDMmaLayout>(layoutOf(res)))
    return lowerAMDMmaDot(*this, op, amd);
  if (!isa<BlockedLayout>(layoutOf(res)))
    return unsupported(op, "with a result layout other than blocked, mma, mfma or wmma");
  return lowerFmaDot(*this, op);
}

} // namespace tk
