// TargetInfo: the small interface between the block-IR -> LLVM IR lowering
// and one GPU target. Everything the lowering emits that is not plain LLVM IR
// goes through it: thread and program ids, cross-lane shuffles, barriers,
// shared memory, predicated memory accesses and the kernel entry marking, and
// the dot lowering's matrix instructions and asynchronous copies.
// NVPTXTarget.cpp implements it for NVIDIA GPUs, AMDGPUTarget.cpp for AMD
// GPUs (compile only; docs/codegen.md, "AMDGPU").
//
//   std::unique_ptr<TargetInfo> target = createNVPTXTarget(options);
//   llvm::Value *tid = target->threadId(builder);
//   llvm::Value *x = target->shuffleXor(builder, v, 16);   // lane ^ 16's v
//
// Only the lowering's .cpp files include this header (LLVM types are
// forward-declared here; the implementations include LLVM).
#pragma once

#include "lang/DType.h"
#include "lowering/codegen/TargetOptions.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Function;
class IRBuilderBase;
class Module;
class Type;
class Value;
} // namespace llvm

namespace tk {

class Operation;
struct AMDMatrixInstr;

/// The fp32 approximations of the elementwise math (docs/codegen/math.md).
/// Exp2 keeps subnormal results; Exp2Reflect (tk.exp2 itself) flushes them
/// when the kernel is compiled with TargetOptions::reflectFtz, as Triton's
/// math.exp2 does under enable_reflect_ftz (one ex2.approx.ftz.f32).
enum class ApproxF32 { Exp2, Exp2Reflect, Log2, Sin, Cos, Rsqrt, Rcp };

class TargetInfo {
public:
  virtual ~TargetInfo() = default;

  /// "nvptx" or "amdgcn", for messages.
  virtual std::string_view name() const = 0;
  /// Why `op` cannot be lowered for this target yet ("" when it can): the
  /// features that exist only for one target, reported at the op.
  virtual std::string unsupportedOp(const Operation &op) const = 0;

  /// The LLVM target triple and data layout of generated modules.
  virtual std::string triple() const = 0;
  virtual std::string dataLayout() const = 0;
  /// Address spaces of global and shared memory.
  virtual unsigned globalAddressSpace() const = 0;
  virtual unsigned sharedAddressSpace() const = 0;
  /// Test only (TargetOptions::testMiscompile): float adds become subtracts.
  virtual bool testMiscompile() const = 0;
  /// Bytes of statically allocated shared memory a kernel may use.
  virtual int64_t maxStaticSharedBytes() const = 0;
  /// Bytes of shared memory one program may use in all (static or dynamic,
  /// once the kernel opts in), for the target's architecture.
  virtual int64_t maxSharedBytes() const = 0;

  /// Threads per warp: the lanes a shuffleXor spans, and what a function's
  /// layouts must have (its threads_per_warp, TargetOptions.h warpSizeFor):
  /// 32 on NVIDIA GPUs, the wavefront on AMD GPUs (64 on gfx9, 32 on gfx11).
  virtual int64_t warpSize() const { return 32; }

  /// The thread's index in its program (i32), and the program's index and
  /// the number of programs along `axis` (0..2).
  virtual llvm::Value *threadId(llvm::IRBuilderBase &b) const = 0;
  virtual llvm::Value *programId(llvm::IRBuilderBase &b, int axis) const = 0;
  virtual llvm::Value *numPrograms(llvm::IRBuilderBase &b, int axis) const = 0;

  /// The special register `name` of ir/Ops.def's special_register
  /// ("globaltimer": i64 nanoseconds, "smid": i32), read where it stands.
  virtual llvm::Value *specialRegister(llvm::IRBuilderBase &b, const std::string &name) const = 0;

  /// The value `v` (any scalar of 8 to 64 bits) of the lane `lane ^ laneMask`
  /// of the same warp (laneMask below warpSize(): up to 32 on wave64); every
  /// lane of the warp takes part.
  virtual llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v,
                                  unsigned laneMask) const = 0;
  /// `v` (an i32 the same in every lane of the warp, such as the warp id)
  /// in a form the assembler can prove warp-uniform, so that what is
  /// computed from it may live in uniform registers (NVPTX: lane 0's value
  /// through shfl.sync.idx); elsewhere `v` itself.
  virtual llvm::Value *warpUniform(llvm::IRBuilderBase &, llvm::Value *v) const { return v; }
  /// A barrier for all threads of the program, ordering shared memory.
  virtual void barrier(llvm::IRBuilderBase &b) const = 0;

  /// How one load or store asks the caches to treat its lines: the op's
  /// `cache` (Triton's `cache_modifier` without its dot: loads "ca", "cg",
  /// "cv"; stores "wb", "cg", "cs", "wt") and `evict` ("evict_first",
  /// "evict_last"), "" for none; `l2Policy` the value of
  /// l2EvictionPolicy(evict), made once per op. The PTX each becomes:
  /// docs/codegen/loads-stores.md, "Cache modifiers and eviction policies".
  struct MemoryHints {
    std::string cache, evict;
    bool isVolatile = false;
    llvm::Value *l2Policy = nullptr;
    bool any() const { return !cache.empty() || !evict.empty(); }
  };
  /// The cache policy value that `eviction_policy` `evict` gives the accesses
  /// of one op (NVIDIA: createpolicy.fractional.L2::evict_*), or nullptr
  /// where the target has none.
  virtual llvm::Value *l2EvictionPolicy(llvm::IRBuilderBase &b, const std::string &evict) const = 0;

  /// Loads `words` (1, 2 or 4) registers of `wordType` from `addr` when
  /// `pred` (i1) is true; otherwise the registers take `others` (one value of
  /// wordType each). One vector instruction, no branch; no predicate where
  /// `pred` is the constant true.
  virtual std::vector<llvm::Value *> predicatedLoad(llvm::IRBuilderBase &b, llvm::Value *addr,
                                                    llvm::Value *pred, llvm::Type *wordType,
                                                    const std::vector<llvm::Value *> &others,
                                                    const MemoryHints &hints) const = 0;
  /// Stores `words` to `addr` when `pred` is true.
  virtual void predicatedStore(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *pred,
                               const std::vector<llvm::Value *> &words,
                               const MemoryHints &hints) const = 0;

  /// The LLVM sync scope of tk's atomic `scope` ("cta", "gpu", "sys") where
  /// the target lowers atomics as LLVM atomicrmw / cmpxchg instructions
  /// (AMDGPU: "workgroup", "agent", "" for the whole system); nullopt where
  /// it has atomic instructions of its own (NVPTX's atom, with PTX's
  /// qualifiers: lowering/codegen/AtomicToLLVM.cpp).
  virtual std::optional<std::string> llvmAtomicScope(const std::string &scope) const {
    (void)scope;
    return std::nullopt;
  }

  /// libdevice's function `symbol` ("__nv_exp", "__nv_powif": tk's fp64
  /// math and the libdevice.NAME builtins name them) applied to `args`, its
  /// result of type `result`. NVPTX calls it (linked from libdevice.10.bc,
  /// Libdevice.h); AMDGPU calls its equivalent in ROCm's device libraries
  /// (ROCmDeviceLibs.h), which unsupportedOp has made sure exists.
  virtual llvm::Value *callLibdevice(llvm::IRBuilderBase &b, std::string_view symbol,
                                     const std::vector<llvm::Value *> &args,
                                     llvm::Type *result) const = 0;
  /// What this machine lacks to lower `op` for the target, as the whole
  /// message ("" when nothing; asked after unsupportedOp, reported at the
  /// op): on amdgcn, the ROCm device-library bitcode that the op's math
  /// calls into.
  virtual std::string missingLibrary(const Operation &op) const {
    (void)op;
    return "";
  }

  /// Prints, from the calling thread, the C printf format at `format` (a
  /// generic pointer to `formatBytes` bytes, the NUL included; conversions
  /// %d, %lld, %llu, %.Ng, 0x%0Nllx) with `args` (i32, i64 or double, in
  /// order). (NVIDIA: vprintf with the arguments in a local buffer; AMD:
  /// ockl's hostcall printf, which the HIP runtime serves.)
  virtual void printf(llvm::IRBuilderBase &b, llvm::Value *format, uint64_t formatBytes,
                      const std::vector<llvm::Value *> &args) const = 0;
  /// A failed device assertion of `message` at `file`:`line` in `function`:
  /// reports it and stops the kernel. (NVIDIA: __assertfail; AMD: the
  /// message through ockl's printf, then a trap.)
  virtual void assertFail(llvm::IRBuilderBase &b, const std::string &message,
                          const std::string &file, unsigned line,
                          const std::string &function) const = 0;

  /// Marks `fn` as a kernel entry run by `numThreads` threads per program.
  /// `tensorMaps`: the parameters that are by-value CUtensorMaps, read in
  /// place (NVPTX's grid_constant).
  virtual void markKernel(llvm::Function *fn, int64_t numThreads,
                          const std::vector<unsigned> &tensorMaps = {}) const = 0;

  /// fp32 `fn` of `x` (an fp32 value), approximate as docs/codegen/math.md says.
  virtual llvm::Value *approxF32(llvm::IRBuilderBase &b, ApproxF32 fn, llvm::Value *x) const = 0;
  /// fp32 x / y within 2 ulp of the correctly rounded quotient.
  virtual llvm::Value *divideF32(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y) const = 0;

  // --- fp8 conversions (fp8e4nv, fp8e5; NVIDIA: cvt, sm_89 and newer).

  /// Whether the target converts fp8e4nv and fp8e5 in hardware.
  virtual bool hasFp8Conversions() const = 0;
  /// The architecture, for messages: "sm_90".
  virtual std::string archName() const = 0;
  /// `v` (i8, an fp8e4nv or fp8e5 pattern) widened exactly to an fp16 value.
  virtual llvm::Value *fp8ToHalf(llvm::IRBuilderBase &b, llvm::Value *v, DType format) const = 0;
  /// `v` (fp32) rounded to nearest even into `format` (fp8e4nv or fp8e5),
  /// saturating to the largest finite value; NaN stays NaN. An i8 pattern.
  virtual llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *v, DType format) const = 0;

  // --- The dot lowering's instructions (lowering/codegen/*Dot*.cpp, DotOperands.cpp).

  /// `v` (fp32) rounded to tf32 (to nearest, ties away from zero: the
  /// interpreter's rounding), as an fp32 value.
  virtual llvm::Value *roundToTF32(llvm::IRBuilderBase &b, llvm::Value *v) const = 0;

  /// One warp reads 8x8 matrices of 16-bit elements from shared memory: four
  /// (`x4`) or two, lane L giving the address of row L % 8 of matrix L / 8;
  /// transposed with `trans`. One i32 register (two elements) per matrix.
  /// (NVIDIA: ldmatrix.)
  virtual std::vector<llvm::Value *> loadMatrices(llvm::IRBuilderBase &b, llvm::Value *addr,
                                                  bool x4, bool trans) const = 0;

  /// One warp's D = A x B + C on a 16 x 8 tile, K = 16 for 16-bit operands,
  /// 8 for fp32 (tf32), 32 for 8-bit integers: `a` 4 i32 registers, `bFrag` 2,
  /// `c` 4 of the accumulator type (fp32; i32 for integers); returns D's 4.
  /// (NVIDIA: mma.sync m16n8k*.)
  virtual std::vector<llvm::Value *> warpMma(llvm::IRBuilderBase &b, DType operands,
                                             const std::vector<llvm::Value *> &a,
                                             const std::vector<llvm::Value *> &bFrag,
                                             const std::vector<llvm::Value *> &c) const = 0;

  /// One warp group's (4 warps') D = A x B + D on a 64 x `n` tile, one k step
  /// of 16 per entry of `a` / `descB`, in order: A per step one i64
  /// descriptor of the operand in shared memory (fp8 operands: k steps of
  /// 32, both K-major, `operandsB` B's format), or the 4 i32 registers of
  /// the thread's fragment (mma.sync m16n8k16's A layout, warp w % 4 of the
  /// group holding rows 16 (w % 4) .. + 15 of the 64-row piece); B an i64
  /// descriptor; `d` the n / 2 fp32 registers of the thread (ignored with
  /// `zeroInit`: D = A x B); `mnMajorA` / `mnMajorB` whether an operand in
  /// shared memory has its rows along K. Returns D. (NVIDIA: wgmma.mma_async,
  /// sm_90a.)
  struct WarpGroupMma {
    DType operands;
    DType operandsB = DType::F16; // B's format where it may differ (fp8)
    int64_t n = 0;
    std::vector<std::vector<llvm::Value *>> a;
    std::vector<llvm::Value *> descB, d;
    bool mnMajorA = false, mnMajorB = false, zeroInit = false;
  };
  virtual std::vector<llvm::Value *> warpGroupMma(llvm::IRBuilderBase &b,
                                                  const WarpGroupMma &mma) const = 0;
  /// One warp's D = A x B + C on an n x n piece with the AMD matrix-core
  /// instruction `instr` (AMDMatrixCore.h): `a` and `bv` this lane's
  /// instr.kWidth consecutive K elements of its A row and B column (of the
  /// operands' element type), `c` its n x n / warpSize accumulator registers
  /// (fp32; i32 for int8), in the instruction's register order. Returns D's;
  /// empty where the target has no such instruction. (AMDGPU: MFMA, WMMA.)
  virtual std::vector<llvm::Value *> matrixCoreMma(llvm::IRBuilderBase &b,
                                                   const AMDMatrixInstr &instr,
                                                   const std::vector<llvm::Value *> &a,
                                                   const std::vector<llvm::Value *> &bv,
                                                   const std::vector<llvm::Value *> &c) const {
    (void)b, (void)instr, (void)a, (void)bv, (void)c;
    return {};
  }
  /// warpGroupFence orders earlier accesses to the registers and shared
  /// memory before the warpGroupMma that follow; warpGroupCommit makes the
  /// warpGroupMma issued since the last commit one group.
  virtual void warpGroupFence(llvm::IRBuilderBase &b) const = 0;
  virtual void warpGroupCommit(llvm::IRBuilderBase &b) const = 0;
  /// Waits until at most `pending` committed groups are in flight. The fp32
  /// registers of `acc` pass through the wait (replaced by the values after
  /// it), so nothing reads them early; with `acc` empty, the wait alone.
  virtual void warpGroupWait(llvm::IRBuilderBase &b, std::vector<llvm::Value *> &acc,
                             int64_t pending) const = 0;
  /// Makes this thread's ordinary writes to shared memory (stores, async
  /// copies) visible to the asynchronous reads of warpGroupMma.
  virtual void fenceAsyncProxy(llvm::IRBuilderBase &b) const = 0;
  /// An i1 that is always true and that LLVM cannot fold (a branch on it
  /// keeps a block boundary in place).
  virtual llvm::Value *opaqueTrue(llvm::IRBuilderBase &b) const = 0;

  /// An asynchronous copy of `bytes` (4, 8 or 16) from global `src` to shared
  /// `dst`, zeros where `on` (i1) is false; asyncCopyCommit closes the group
  /// of copies issued since the last, asyncCopyWait waits until at most
  /// `pending` groups are in flight (this thread's copies; a barrier makes
  /// them everyone's).
  virtual void asyncCopy(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int64_t bytes,
                         llvm::Value *on) const = 0;
  virtual void asyncCopyCommit(llvm::IRBuilderBase &b) const = 0;
  virtual void asyncCopyWait(llvm::IRBuilderBase &b, int64_t pending) const = 0;
  /// The 16 bits at global `src` where `on` (i1) is true, else 0 (an i16;
  /// for elements too small for asyncCopy).
  virtual llvm::Value *loadB16OrZero(llvm::IRBuilderBase &b, llvm::Value *src,
                                     llvm::Value *on) const = 0;
};

/// The NVIDIA target (PTX through LLVM's NVPTX back end).
std::unique_ptr<TargetInfo> createNVPTXTarget(const TargetOptions &options);
/// The AMD GPU target (AMDGPU assembly / code objects through LLVM's AMDGPU
/// back end), for an arch of kAMDGPUArchs.
std::unique_ptr<TargetInfo> createAMDGPUTarget(const TargetOptions &options);
/// The target of `options.arch`.
std::unique_ptr<TargetInfo> createTarget(const TargetOptions &options);

/// `text` (NUL-terminated) as a private constant global of the insertion
/// block's module, as a generic pointer: the strings of print and assert.
llvm::Value *genericString(llvm::IRBuilderBase &b, std::string_view text, const char *name);

} // namespace tk
