// tma_load -> one bulk tensor copy (TMA) into the op's scratch, completed on
// an mbarrier there, then the box read into the result's layout; tma_store
// -> the block written to the scratch, fence.proxy.async, one bulk tensor
// copy out, waited for (docs/codegen/tma.md). The scratch (analysis/SharedMemory.h) holds the
// mbarrier in its first 8 bytes and the box, row-major and unswizzled, at
// the next 128-byte aligned shared address:
//
//   thread 0: mbarrier.init [bar], 1; fence.mbarrier_init; fence.proxy.async
//   bar.sync                                  (the barrier is initialised)
//   thread 0: mbarrier.arrive.expect_tx [bar], BOX_BYTES
//             cp.async.bulk.tensor.2d.shared::cluster.global.tile
//                 .mbarrier::complete_tx::bytes [box], [map, {c1, c0}], [bar]
//   every thread: mbarrier.try_wait.parity [bar], 0 until it holds
//   every thread: ld.shared of its elements (row-major index x element bytes)
//   bar.sync; thread 0: mbarrier.inval [bar]  (the scratch may be reused)
//
// The map is the kernel's `tensormap` argument (a `.param .align 64 .b8
// [128]`, whose generic address cvta.param gives); TMA takes coordinates
// innermost first, so the op's (outermost first) are reversed. Elements
// outside the tensor are the map's fill: zero, or NaN (the host encodes
// the descriptor's padding).
#include "lowering/codegen/FunctionLowering.h"

#include "analysis/SharedMemory.h"

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>

namespace tk {
namespace {

// PTX with operands `args` under `constraints`, kept in place.
llvm::Value *ptx(llvm::IRBuilderBase &b, llvm::Type *result, const std::string &text,
                 const std::string &constraints, const std::vector<llvm::Value *> &args) {
  std::vector<llvm::Type *> types;
  for (llvm::Value *a : args)
    types.push_back(a->getType());
  auto *fnTy = llvm::FunctionType::get(result, types, false);
  return b.CreateCall(llvm::InlineAsm::get(fnTy, text, constraints, true), args);
}

// What both TMA ops take from their scratch and operands: the barrier's
// shared address (the scratch's first 8 bytes), the box (its 128-byte
// aligned address and a pointer to it), the map's generic address, and the
// coordinates as the PTX operand list "{$k, ...}", innermost first.
struct TmaOperands {
  llvm::Value *bar, *boxAddr, *box, *mapAddr;
  std::vector<llvm::Value *> coords; // innermost first
  std::string coordText(size_t first) const {
    std::string t;
    for (size_t k = 0; k < coords.size(); ++k)
      t += fmt::format("{}${}", k ? ", " : "", first + k);
    return "{" + t + "}";
  }
};

} // namespace

bool FunctionLowering::lowerTmaLoad(Operation &op) { return lowerTma(op, /*store=*/false); }
bool FunctionLowering::lowerTmaStore(Operation &op) { return lowerTma(op, /*store=*/true); }

bool FunctionLowering::lowerTma(Operation &op, bool store) {
  if (!smem_)
    return unsupported(op, "without scratch (run --allocate-shared)");
  llvm::LLVMContext &c = b_.getContext();
  Value *block = store ? op.operand(1) : op.result();
  Type *type = block->type();
  llvm::Type *storage = elementType(type);
  if (storage->isIntegerTy(1))
    return unsupported(op, "of an i1 block (TMA moves bytes; bools go through pointers)");
  const llvm::DataLayout &dl = llfn_->getParent()->getDataLayout();
  int64_t boxBytes = type->numElements() * int64_t(dl.getTypeStoreSize(storage));
  size_t rank = type->rank();

  llvm::Type *i32 = b_.getInt32Ty();
  TmaOperands t;
  t.bar = b_.CreatePtrToInt(smem_, i32);
  // The box at the first 128-byte aligned shared address past the barrier.
  t.boxAddr = b_.CreateAnd(b_.CreateAdd(t.bar, b_.getInt32(8 + kTmaBoxAlign - 1)),
                           b_.getInt32(-kTmaBoxAlign));
  t.box = b_.CreateGEP(b_.getInt8Ty(), smem_, b_.CreateSub(t.boxAddr, t.bar));
  t.mapAddr = b_.CreatePtrToInt(get(op.operand(0))[0], b_.getInt64Ty());
  for (size_t k = 0; k < rank; ++k)
    t.coords.push_back(get(op.operand(unsigned(op.numOperands() - 1 - k)))[0]);

  llvm::Value *leader = b_.CreateICmpEQ(target_.threadId(b_), b_.getInt32(0));
  auto onLeader = [&](const char *name, auto emit) {
    auto *then = llvm::BasicBlock::Create(c, name, llfn_);
    auto *join = llvm::BasicBlock::Create(c, std::string(name) + ".join", llfn_);
    b_.CreateCondBr(leader, then, join);
    b_.SetInsertPoint(then);
    emit();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  };
  llvm::Type *voidTy = b_.getVoidTy();
  std::string coordConstraints;
  for (size_t k = 0; k < rank; ++k)
    coordConstraints += ",r";
  std::vector<llvm::Value *> indices = linearIndices(block);

  if (store) {
    // Every thread writes its elements (copies write the same value), makes
    // them visible to the async proxy, and after a barrier thread 0 copies
    // the box out and waits until the copy has read it, so that the scratch
    // may be reused after the closing barrier.
    const Regs &regs = get(block);
    for (size_t r = 0; r < regs.size(); ++r)
      b_.CreateStore(regs[r], b_.CreateGEP(storage, t.box, indices[r]));
    ptx(b_, voidTy, "fence.proxy.async.shared::cta;", "~{memory}", {});
    target_.barrier(b_);
    onLeader("tma.store", [&] {
      std::vector<llvm::Value *> args = {t.mapAddr};
      args.insert(args.end(), t.coords.begin(), t.coords.end());
      args.push_back(t.boxAddr);
      ptx(b_, voidTy,
          fmt::format("cp.async.bulk.tensor.{}d.global.shared::cta.bulk_group [$0, {}], [${}];",
                      rank, t.coordText(1), rank + 1),
          "l" + coordConstraints + ",r,~{memory}", args);
      ptx(b_, voidTy, "cp.async.bulk.commit_group;", "~{memory}", {});
      ptx(b_, voidTy, "cp.async.bulk.wait_group.read 0;", "~{memory}", {});
    });
    target_.barrier(b_);
    return true;
  }

  onLeader("tma.init", [&] {
    ptx(b_, voidTy, "mbarrier.init.shared::cta.b64 [$0], 1;", "r,~{memory}", {t.bar});
    ptx(b_, voidTy, "fence.mbarrier_init.release.cluster;", "~{memory}", {});
    ptx(b_, voidTy, "fence.proxy.async.shared::cta;", "~{memory}", {});
  });
  target_.barrier(b_);
  onLeader("tma.issue", [&] {
    ptx(b_, voidTy,
        fmt::format("{{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], {}; }}",
                    boxBytes),
        "r,~{memory}", {t.bar});
    std::vector<llvm::Value *> args = {t.boxAddr, t.mapAddr};
    args.insert(args.end(), t.coords.begin(), t.coords.end());
    args.push_back(t.bar);
    ptx(b_, voidTy,
        fmt::format("cp.async.bulk.tensor.{}d.shared::cluster.global.tile.mbarrier::complete_tx"
                    "::bytes [$0], [$1, {}], [${}];",
                    rank, t.coordText(2), rank + 2),
        "r,l" + coordConstraints + ",r,~{memory}", args);
  });
  // Every thread waits for phase 0 of the barrier.
  auto *wait = llvm::BasicBlock::Create(c, "tma.wait", llfn_);
  auto *done = llvm::BasicBlock::Create(c, "tma.done", llfn_);
  b_.CreateBr(wait);
  b_.SetInsertPoint(wait);
  llvm::Value *ready = ptx(b_, i32,
                           "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], 0; "
                           "selp.u32 $0, 1, 0, p; }",
                           "=r,r,~{memory}", {t.bar});
  b_.CreateCondBr(b_.CreateICmpNE(ready, b_.getInt32(0)), done, wait);
  b_.SetInsertPoint(done);

  Regs out;
  for (llvm::Value *index : indices)
    out.push_back(b_.CreateLoad(storage, b_.CreateGEP(storage, t.box, index)));
  set(op.result(), std::move(out));
  target_.barrier(b_);
  onLeader("tma.inval", [&] {
    ptx(b_, voidTy, "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", {t.bar});
  });
  return true;
}

} // namespace tk
