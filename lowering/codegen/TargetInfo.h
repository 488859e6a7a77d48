// TargetInfo: the small interface between the block-IR -> LLVM IR lowering
// and one GPU target. Everything the lowering emits that is not plain LLVM IR
// goes through it: thread and program ids, cross-lane shuffles, barriers,
// shared memory, predicated memory accesses and the kernel entry marking.
// NVPTXTarget.cpp implements it for NVIDIA GPUs; an AMDGPU target would be a
// second implementation (ds_swizzle / DPP for shuffles, s_barrier, LDS).
//
//   std::unique_ptr<TargetInfo> target = createNVPTXTarget(options);
//   llvm::Value *tid = target->threadId(builder);
//   llvm::Value *x = target->shuffleXor(builder, v, 16);   // lane ^ 16's v
//
// Only the lowering's .cpp files include this header (LLVM types are
// forward-declared here; the implementations include LLVM).
#pragma once

#include "lowering/codegen/TargetOptions.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class IRBuilderBase;
class Module;
class Type;
class Value;
} // namespace llvm

namespace tk {

class TargetInfo {
public:
  virtual ~TargetInfo() = default;

  /// The LLVM target triple and data layout of generated modules.
  virtual std::string triple() const = 0;
  virtual std::string dataLayout() const = 0;
  /// Address spaces of global and shared memory.
  virtual unsigned globalAddressSpace() const = 0;
  virtual unsigned sharedAddressSpace() const = 0;
  /// Bytes of statically allocated shared memory a kernel may use.
  virtual int64_t maxStaticSharedBytes() const = 0;
  /// Bytes of shared memory one program may use in all (static or dynamic,
  /// once the kernel opts in), for the target's architecture.
  virtual int64_t maxSharedBytes() const = 0;

  /// The thread's index in its program (i32), and the program's index and
  /// the number of programs along `axis` (0..2).
  virtual llvm::Value *threadId(llvm::IRBuilderBase &b) const = 0;
  virtual llvm::Value *programId(llvm::IRBuilderBase &b, int axis) const = 0;
  virtual llvm::Value *numPrograms(llvm::IRBuilderBase &b, int axis) const = 0;

  /// The value `v` (any scalar of 8 to 64 bits) of the lane `lane ^ laneMask`
  /// of the same warp; every lane of the warp takes part.
  virtual llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v,
                                  unsigned laneMask) const = 0;
  /// A barrier for all threads of the program, ordering shared memory.
  virtual void barrier(llvm::IRBuilderBase &b) const = 0;

  /// Loads `words` (1, 2 or 4) registers of `wordType` from `addr` when
  /// `pred` (i1) is true; otherwise the registers take `others` (one value of
  /// wordType each). One vector instruction, no branch.
  virtual std::vector<llvm::Value *> predicatedLoad(llvm::IRBuilderBase &b, llvm::Value *addr,
                                                    llvm::Value *pred, llvm::Type *wordType,
                                                    const std::vector<llvm::Value *> &others,
                                                    bool isVolatile) const = 0;
  /// Stores `words` to `addr` when `pred` is true.
  virtual void predicatedStore(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *pred,
                               const std::vector<llvm::Value *> &words) const = 0;

  /// Marks `fn` as a kernel entry run by `numThreads` threads per program.
  virtual void markKernel(llvm::Function *fn, int64_t numThreads) const = 0;
};

/// The NVIDIA target (PTX through LLVM's NVPTX back end).
std::unique_ptr<TargetInfo> createNVPTXTarget(const TargetOptions &options);

} // namespace tk
