// FunctionLowering: the state of lowering one block-IR function to LLVM IR,
// shared by the per-family files (ElementwiseToLLVM.cpp, LoadStoreToLLVM.cpp,
// ReduceToLLVM.cpp, ControlFlowToLLVM.cpp; FunctionToLLVM.cpp drives it).
// Private to lowering/codegen.
//
// A value lowers to its registers: one llvm::Value per element the thread
// holds, in the register order of its layout's ThreadMap; a scalar (or a
// pointer) is one register that every thread holds.
//
//   %x : tensor<1024xfp32, blocked<size = [4], threads = [32], warps = [4], order = [0]>>
//   -> 8 float registers: elements 4t..4t+3 and 512+4t..512+4t+3 of thread t
#pragma once

#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "ir/Module.h"
#include "lang/Diagnostics.h"
#include "lowering/codegen/TargetInfo.h"

#include <llvm/IR/IRBuilder.h>

#include <map>
#include <vector>

namespace tk {

class AxisInfoAnalysis;

using Regs = std::vector<llvm::Value *>;

/// The LLVM type of one element of `t` (a scalar or pointer, or a tensor's
/// element): half, bfloat, float, double, iN, ptr addrspace(N).
llvm::Type *llvmElementType(llvm::LLVMContext &c, Type *t);

/// The vector <elems.size() x T> whose element i is elems[i] (all of type T):
/// a vector store's value, a loaded word rebuilt, a pair carried as one.
llvm::Value *vectorOf(llvm::IRBuilderBase &b, const Regs &elems);

class FunctionLowering {
public:
  FunctionLowering(Function &fn, llvm::Function *llfn, const TargetInfo &target,
                   const AxisInfoAnalysis &axis, llvm::Constant *smem, int64_t numWarps,
                   DiagnosticEngine &diag);

  /// Lowers the body; false after reporting an error.
  bool run();
  /// What bounds the lowering (checked before each op): `limits`'s
  /// interruption, and `maxInstructions` LLVM instructions in the function
  /// (0: no limit), past which it is an error at the op that went over.
  void setBudget(IRLimits *limits, int64_t maxInstructions) {
    limits_ = limits;
    maxInstructions_ = maxInstructions;
  }

  // --- shared helpers (FunctionToLLVM.cpp)
  llvm::IRBuilder<> &builder() { return b_; }
  const TargetInfo &target() const { return target_; }
  const AxisInfoAnalysis &axis() const { return axis_; }
  DiagnosticEngine &diag() { return diag_; }
  int64_t numWarps() const { return numWarps_; }
  /// Threads per warp of the function's layouts (its threads_per_warp, the
  /// target's warpSize): lane = thread id % warpSize().
  int64_t warpSize() const { return warpSize_; }
  /// The compile's remarks (lang/Remarks.h), or null when it asked for none.
  RemarkSink *remarks() const { return remarks_; }
  void setRemarks(RemarkSink *sink) { remarks_ = sink; }

  /// The LLVM type of one element of `t` (a scalar or pointer, or a tensor's
  /// element).
  llvm::Type *elementType(Type *t);
  const Regs &get(Value *v) const;
  void set(Value *v, Regs regs);
  /// The layout of a tensor value (asserted present), and its ThreadMap.
  const LayoutAttr *layoutOf(Value *v) const;
  ThreadMap threadMap(Value *v) const;
  /// Per register of a tensor value, its coordinate along each dimension (i32
  /// values computed from the thread id in the entry block).
  std::vector<std::vector<llvm::Value *>> coordinates(Value *v);
  /// The thread-dependent offset along `dim` of `map` (ThreadMap::threadOffset)
  /// as an i32, computed once per layout in the entry block.
  llvm::Value *threadOffset(const LayoutAttr *layout, const ThreadMap &map, unsigned dim);
  llvm::Value *laneId() const { return lane_; }
  llvm::Value *warpId() const { return warp_; }
  /// The shared-memory scratch of the op being lowered (address space 3):
  /// the kernel's shared array at the op's `scratch_offset`
  /// (--allocate-shared). Valid while lowerOp runs for that op.
  llvm::Value *scratch() const { return smem_; }
  /// The shared array at byte `offset`.
  llvm::Constant *sharedAt(int64_t offset) const;

  /// Reports "'op' ... is not supported by the GPU back end yet".
  bool unsupported(Operation &op, std::string_view what);

  bool lowerBlock(Block &block);
  bool lowerOp(Operation &op);

  // --- op families
  bool lowerElementwise(Operation &op); // ElementwiseToLLVM.cpp
  bool lowerShape(Operation &op);       // ElementwiseToLLVM.cpp
  bool lowerLoadStore(Operation &op);   // LoadStoreToLLVM.cpp
  /// The vectorize and coalesce remarks of a global load or store, or of a
  /// cp.async copy (async_copy), whose accesses are `vec` elements of
  /// `elemBytes` (AccessRemarks.cpp).
  void remarkAccess(Operation &op, const ThreadMap &map, int64_t vec, int64_t elemBytes);
  bool lowerReduce(Operation &op); // ReduceToLLVM.cpp
  bool lowerConvertLayout(Operation &op);
  bool lowerSharedBuffer(Operation &op);    // SharedToLLVM.cpp: local_alloc/load/store, barrier
  bool lowerTmaLoad(Operation &op);         // TmaToLLVM.cpp
  bool lowerTmaStore(Operation &op);        // TmaToLLVM.cpp
  bool lowerTma(Operation &op, bool store); // both
  bool lowerFor(Operation &op);             // ControlFlowToLLVM.cpp
  bool lowerIf(Operation &op);
  bool lowerWhile(Operation &op);
  bool lowerAtomic(Operation &op); // AtomicToLLVM.cpp
  llvm::Value *llvmAtomic(const std::string &kind, Type *elem, const std::string &sem,
                          const std::string &scope, llvm::Value *pred, llvm::Value *ptr,
                          llvm::Value *cmp, llvm::Value *val);
  bool lowerReshapeTrans(Operation &op); // ShapeToLLVM.cpp
  bool lowerGather(Operation &op);
  bool lowerScan(Operation &op); // ScanToLLVM.cpp
  bool lowerParallelScan(Operation &op);
  bool lowerDebug(Operation &op);          // DebugToLLVM.cpp
  bool lowerInlineAsm(Operation &op);      // InlineAsmToLLVM.cpp
  bool lowerMapElementwise(Operation &op); // InlineAsmToLLVM.cpp
  bool lowerDot(Operation &op);            // DotToLLVM.cpp (by family: DotLowering.h)

  // --- helpers of the families above (ShapeToLLVM.cpp)
  /// Per register of tensor `v`, an i1 that is true on the one thread (and
  /// register) that owns the element and false on those holding a copy (a
  /// dimension smaller than the layout's tile); null where there are no
  /// copies. For a scalar, one predicate: thread 0.
  std::vector<llvm::Value *> ownerPredicates(Value *v);
  /// Per register of tensor `v`, the row-major linear index of its element.
  std::vector<llvm::Value *> linearIndices(Value *v);
  /// Moves values between threads through the shared scratch: register i of
  /// `src` is written at slot `writeIdx[i]` when `writePred[i]` (null or
  /// missing: always) holds, else at the spare slot `numSlots`; a barrier;
  /// slot `readIdx[j]` is read for each j (--insert-barriers orders later
  /// reuse of the scratch). i1 travels as a byte.
  /// Needs numSlots + 1 slots of the element type (sharedSlotBytes).
  Regs exchangeThroughShared(const Regs &src, const std::vector<llvm::Value *> &writeIdx,
                             const std::vector<llvm::Value *> &writePred,
                             const std::vector<llvm::Value *> &readIdx, int64_t numSlots);

  /// One elementwise op on one register of each operand (also used by the
  /// reduction combiners).
  llvm::Value *scalarOp(Opcode opcode, const AttrDict &attrs, Type *operandType, Type *resultType,
                        const Regs &operands);
  /// sum/max/min of two registers of `type` (reduce kinds).
  llvm::Value *combine(std::string_view kind, Type *type, llvm::Value *a, llvm::Value *b);

private:
  Function &fn_;
  llvm::Function *llfn_;
  const TargetInfo &target_;
  const AxisInfoAnalysis &axis_;
  llvm::Constant *smemArray_; // the kernel's shared array (null: none)
  llvm::Value *smem_;         // the current op's scratch in it
  int64_t numWarps_, warpSize_;
  DiagnosticEngine &diag_;
  IRLimits *limits_ = nullptr;
  int64_t maxInstructions_ = 0;
  RemarkSink *remarks_ = nullptr;
  llvm::IRBuilder<> b_;
  llvm::BasicBlock *entry_ = nullptr;
  llvm::Value *lane_ = nullptr, *warp_ = nullptr;
  // Keyed by pointers, looked up only: the emitted code follows the IR order.
  std::map<Value *, Regs> values_;
  std::map<std::pair<const LayoutAttr *, unsigned>, llvm::Value *> offsets_;
};

} // namespace tk
