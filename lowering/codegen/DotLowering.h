// DotLowering: what the files that lower `dot` share (private to
// lowering/codegen). DotToLLVM.cpp picks the family by the result's layout:
//
//   blocked            FmaDotToLLVM.cpp     FMA on the CUDA cores, any dtype
//   mma, version 2     MmaDotToLLVM.cpp     mma.sync on the tensor cores (sm_80+)
//   mma, version 3     WgmmaDotToLLVM.cpp   wgmma.mma_async (sm_90a)
//   mfma, wmma         AMDMmaDotToLLVM.cpp  AMD's matrix cores (MFMA, WMMA)
//
// and the three families read their operands from shared memory through
// DotOperands.cpp: a register operand is staged there by the dot itself
// (stageOperand), an operand that is a ring_view is a stage of the cp.async
// ring of --pipeline (lowering/SoftwarePipeline.cpp) that async_copy filled
// (ringStage, viewStage; async_copy and async_wait lower there too).
//
// Both kinds are an SmemTile: `rows` rows of `rowLen` elements, each row cut
// into 16-byte chunks, chunk c of row r stored at chunk
// c ^ ((r / perPhase) % maxPhase) with perPhase = max(1, 128 / row bytes) and
// maxPhase = min(8, row bytes / 16): the 8 rows one ldmatrix phase reads then
// fall in 8 different 16-byte bank groups, and for rows of 128, 64 or 32 bytes
// it is wgmma's 128/64/32-byte swizzle. For example
//
//   SmemTile t{base, 64, 32, 2};   // 64 rows of 32 fp16: 64-byte rows
//   t.swizzle();                   // perPhase 2, maxPhase 4
//   t.byteOffset(2, 0);            // chunk 0 ^ (2 / 2 % 4) = 1: 2 * 64 + 16 = 144
//   t.byteOffset(3, 8);            // chunk 1 ^ 1 = 0: 3 * 64 = 192
//
// wgmma's layout adds 128-byte column blocks (rows over 128 bytes are cut,
// each block a [rows][128 B] array) and, for A, 8-row blocks permuted so that
// the accumulator has mma version 2's ThreadMap (wgmmaSharedRowBlock); a tf32
// ring read one element per lane swizzles 32-byte units (scalarRingLayout in
// DotOperands.cpp).
#pragma once

#include "ir/Layout.h"
#include "lowering/codegen/FunctionLowering.h"

#include <algorithm>
#include <cstdint>

namespace tk {

constexpr int64_t kChunkBytes = 16;

// A 2-D buffer in the shared scratch or a ring stage (see above).
struct SmemTile {
  llvm::Value *base = nullptr; // i8 addrspace(3)*
  int64_t rows = 0, rowLen = 0, elemBytes = 0;
  int64_t perPhase = 1, maxPhase = 1;
  // wgmma's layout (see WgmmaDotToLLVM.cpp): rows longer than 128 bytes are
  // cut into 128-byte column blocks, each a [rows][128 B] array; and A's M
  // coordinate (the row when permDim is 0, else the column) is permuted in
  // 8-row blocks for `permWarps` warps (wgmmaSharedRowBlock).
  bool blocks = false;
  int64_t permWarps = 0;
  unsigned permDim = 0;
  // The bytes the swizzle moves as one unit: 16 (ldmatrix reads 16-byte
  // rows), or 32 for a tf32 ring read one element per lane
  // (scalarRingLayout).
  int64_t unitBytes = kChunkBytes;

  int64_t bytes() const { return rows * rowLen * elemBytes; }
  int64_t vec() const { return std::max<int64_t>(1, kChunkBytes / elemBytes); }
  /// Elements of one row of a column block (the whole row without blocks).
  int64_t blockLen() const { return blocks ? std::min(rowLen, 128 / elemBytes) : rowLen; }

  /// Elements of one swizzle unit.
  int64_t unit() const { return std::max<int64_t>(1, unitBytes / elemBytes); }

  void swizzle() {
    int64_t rowBytes = blockLen() * elemBytes;
    perPhase = std::max<int64_t>(1, 128 / rowBytes);
    maxPhase = std::clamp<int64_t>(rowBytes / unitBytes, 1, 8);
  }

  /// The byte address of element (row, col) (i32 values).
  llvm::Value *address(llvm::IRBuilderBase &b, llvm::Value *row, llvm::Value *col) const {
    llvm::Value *elem = elementOffset(IRArith{b}, row, col);
    return b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(elem, b.getInt32(elemBytes)));
  }
  /// The same address as a byte offset from `base`, computed here.
  int64_t byteOffset(int64_t row, int64_t col) const {
    return elementOffset(IntArith{}, row, col) * elemBytes;
  }

private:
  // The arithmetic of the layout, once for both: on i32 values (emitting
  // instructions) and on integers (evaluating them), so the two cannot
  // disagree.
  struct IRArith {
    llvm::IRBuilderBase &b;
    llvm::Value *c(int64_t k) const { return b.getInt32(static_cast<uint32_t>(k)); }
    llvm::Value *add(llvm::Value *x, llvm::Value *y) const { return b.CreateAdd(x, y); }
    llvm::Value *mul(llvm::Value *x, int64_t k) const { return b.CreateMul(x, c(k)); }
    llvm::Value *div(llvm::Value *x, int64_t k) const { return b.CreateUDiv(x, c(k)); }
    llvm::Value *rem(llvm::Value *x, int64_t k) const { return b.CreateURem(x, c(k)); }
    llvm::Value *mask(llvm::Value *x, int64_t k) const { return b.CreateAnd(x, k); }
    llvm::Value *exor(llvm::Value *x, llvm::Value *y) const { return b.CreateXor(x, y); }
  };
  struct IntArith {
    int64_t add(int64_t x, int64_t y) const { return x + y; }
    int64_t mul(int64_t x, int64_t k) const { return x * k; }
    int64_t div(int64_t x, int64_t k) const { return x / k; }
    int64_t rem(int64_t x, int64_t k) const { return x % k; }
    int64_t mask(int64_t x, int64_t k) const { return x & k; }
    int64_t exor(int64_t x, int64_t y) const { return x ^ y; }
  };

  /// Element (row, col)'s offset in elements (see above).
  template <class Arith, class V> V elementOffset(const Arith &a, V row, V col) const {
    if (permWarps) {
      V &m = permDim == 0 ? row : col;
      V block = a.div(m, 8);
      int64_t w = permWarps;
      V warp = a.rem(block, w), t = a.div(block, w);
      V to = a.add(a.mul(a.add(a.mul(a.div(t, 2), w / 4), a.div(warp, 4)), 8),
                   a.add(a.mul(a.rem(warp, 4), 2), a.rem(t, 2)));
      m = a.add(a.mul(to, 8), a.rem(m, 8));
    }
    int64_t len = blockLen();
    V blockOffset{};
    if (len < rowLen) {
      blockOffset = a.mul(a.div(col, len), rows * len);
      col = a.rem(col, len);
    }
    V c = col;
    if (maxPhase > 1) {
      V phase = a.mask(a.div(row, perPhase), maxPhase - 1);
      V chunk = a.div(col, unit());
      c = a.add(a.mul(a.exor(chunk, phase), unit()), a.rem(col, unit()));
    }
    V elem = a.add(a.mul(row, len), c);
    if (len < rowLen)
      elem = a.add(elem, blockOffset);
    return elem;
  }
};

// --- Operands in shared memory and the cp.async ring (DotOperands.cpp)

/// Whether `v` is a stage of a cp.async ring (a ring_view).
bool isRingView(Value *v);

/// Whether the dot reads operand `v` from its registers (its layout is
/// dot_operand; analysis/SharedMemory.cpp then gives it no staging), and
/// whether the mma.sync and wgmma lowerings can: an A operand (op_idx 0) of
/// 16-bit elements, k_width 2, whose parent spreads the rows over the warps
/// as the dot's own `mma` does.
bool isRegisterOperand(Value *v);
bool registerOperandFits(Value *v, const MmaLayout *mma);

/// The 4 i32 registers of A's fragment for the 16-row piece `mi` of this
/// warp and k step `kk` (16 elements of K), from the registers of an A in
/// the dot_operand layout: mma.sync m16n8k16's a0..a3, and wgmma's A from
/// registers (the row pieces are the accumulator's).
Regs registerFragmentA(FunctionLowering &fl, Value *a, int64_t mi, int64_t kk);

/// The stage `idx` % S of `ring` (a local_alloc of shape [S, ...]) holding a
/// tile of the shape of `tile` whose registers run fastest along dimension
/// `fast`, in the layout its readers need (wgmma's, or 32-byte units).
SmemTile ringStage(FunctionLowering &fl, Value *ring, llvm::Value *idx, Type *tile, unsigned fast);

/// The stage a ring_view `view` reads: its ring's slot `idx` (by default the
/// view's own index), laid out the way the view's registers run.
SmemTile viewStage(FunctionLowering &fl, Value *view, llvm::Value *idx = nullptr);

/// Writes the registers of `v` (rank 2) into `tile`: buffer row = coordinate
/// `rowDim` of the element, buffer column = the other coordinate, rounded to
/// tf32 with `tf32`. Runs of registers consecutive along the column dimension
/// go out as one vector of at most 16 bytes and at most `baseAlign`, the
/// alignment of the tile's base.
void stageOperand(FunctionLowering &fl, Value *v, const SmemTile &tile, unsigned rowDim, bool tf32,
                  int64_t baseAlign);

/// Waits for the ring: the async copies committed before the last `pending`
/// groups have landed (with `fenceAsync` also for wgmma's reads), then a
/// barrier, so every thread sees them.
void asyncWait(FunctionLowering &fl, int64_t pending, bool fenceAsync = false);

/// async_copy ring, index, ptr [, mask]: fills a ring stage.
bool lowerAsyncCopy(FunctionLowering &fl, Operation &op);

// --- The families (for the dispatcher, DotToLLVM.cpp)

bool lowerFmaDot(FunctionLowering &fl, Operation &op);                         // FmaDotToLLVM.cpp
bool lowerMmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma);   // MmaDotToLLVM.cpp
bool lowerWgmmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma); // WgmmaDotToLLVM.cpp
bool lowerAMDMmaDot(FunctionLowering &fl, Operation &op,
                    const AMDMmaLayout *layout); // AMDMmaDotToLLVM.cpp

/// wgmma's end of a pipelined loop (WgmmaDotToLLVM.cpp): waits for the
/// groups the dots of `loop` left in flight (passing its wgmma accumulators
/// through the wait), and puts the accumulators of its wgmma_native dots in
/// the mma layout's row order.
void drainWgmma(FunctionLowering &fl, Operation *loop);
void wgmmaRowsInOrder(FunctionLowering &fl, Operation &loop);

} // namespace tk
