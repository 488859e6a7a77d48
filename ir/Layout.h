// Layouts: how the elements of a block tensor are spread over the threads of
// a program. A layout is an attribute of a tensor type (ir/Types.h), assigned
// by the coalescing pass and read by every GPU lowering.
//
// A *blocked* layout tiles the tensor: each thread owns a contiguous
// `size` sub-tile, the threads of a warp (32; 64 on AMD's wave64 GPUs, see
// kWarpSize) are arranged `threads`, the warps
// of the program `warps`, and `order` lists the dimensions fastest first (the
// one along which a thread's elements, lanes and warps are consecutive). The
// tile covers size * threads * warps elements per dimension and repeats over
// the tensor; a dimension smaller than the tile wraps, so several threads then
// hold copies of one element.
//
//   tensor<1024xfp32, blocked<size = [4], threads = [32], warps = [4], order = [0]>>
//
//   tile = 4 * 32 * 4 = 512, repeated twice. Thread t = lane + 32 * warp owns
//   elements 4t..4t+3 and 512+4t..512+4t+3: 8 registers, two 16-byte vectors.
//
//   tensor<64x128xfp16, blocked<size = [1, 8], threads = [2, 16], warps = [4, 1],
//                               order = [1, 0]>>
//
//   a warp covers 2 rows x 128 columns (each lane 8 fp16 = 16 bytes), the 4
//   warps 8 rows; the tile repeats 8 times down the rows.
//
// A *slice* layout is the layout of a tensor with one dimension of a parent
// layout removed: the result of a reduction along `dim`, and the operand that
// expand_dims turns back into the parent. Its elements are distributed as the
// parent's with that dimension dropped; threads that differ only along it hold
// the same elements.
//
//   tensor<64xfp32, slice<dim = 1, parent = blocked<size = [1, 8], ...>>>
//
// ThreadMap answers "which elements does each thread hold, in which
// registers" for a (layout, shape) pair; the lowering uses its per-dimension
// formulas with the thread id as a runtime value. The scheme leaves room for
// the tensor-core layouts (mma accumulators, dot operands) and the shared
// memory layout with a swizzle: each is one more LayoutAttr kind with its own
// text form `name<key = value, ...>` and a ThreadMap (or address) rule.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tk {

class Function;
class IRContext;

/// Threads per warp on every NVIDIA GPU tk targets, and a function's warp
/// size unless its `threads_per_warp` attribute says otherwise: on AMD's
/// wave64 GPUs (gfx90a, gfx942) a warp is the 64-lane wavefront
/// (compiler/Pipeline.cpp sets the attribute from the arch). A layout's own
/// warp size is layoutWarpSize: the product of a blocked layout's
/// `threads`, 32 for the NVIDIA tensor-core layouts, the wavefront for
/// AMD's (mfma: 64, wmma: 32).
constexpr int64_t kWarpSize = 32;
/// The warp sizes a layout may have.
constexpr bool isWarpSize(int64_t n) { return n == 32 || n == 64; }
/// Threads per warp of `fn`'s layouts: its `threads_per_warp` attribute,
/// else kWarpSize.
int64_t functionWarpSize(Function &fn);

class BlockedLayout : public LayoutAttr {
public:
  /// The uniqued layout; the arguments must be valid (see validateBlocked).
  static const BlockedLayout *get(IRContext &ctx, std::vector<int64_t> sizePerThread,
                                  std::vector<int64_t> threadsPerWarp,
                                  std::vector<int64_t> warpsPerCTA, std::vector<int64_t> order);

  unsigned rank() const { return static_cast<unsigned>(sizePerThread_.size()); }
  const std::vector<int64_t> &sizePerThread() const { return sizePerThread_; }
  const std::vector<int64_t> &threadsPerWarp() const { return threadsPerWarp_; }
  const std::vector<int64_t> &warpsPerCTA() const { return warpsPerCTA_; }
  const std::vector<int64_t> &order() const { return order_; }

  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::Blocked; }

private:
  BlockedLayout(std::vector<int64_t> spt, std::vector<int64_t> tpw, std::vector<int64_t> wpc,
                std::vector<int64_t> order)
      : LayoutAttr(Kind::Blocked), sizePerThread_(std::move(spt)), threadsPerWarp_(std::move(tpw)),
        warpsPerCTA_(std::move(wpc)), order_(std::move(order)) {}
  std::vector<int64_t> sizePerThread_, threadsPerWarp_, warpsPerCTA_, order_;
};

class SliceLayout : public LayoutAttr {
public:
  /// `parent` has rank >= 2 and `dim` < its rank.
  static const SliceLayout *get(IRContext &ctx, unsigned dim, const LayoutAttr *parent);

  unsigned dim() const { return dim_; }
  const LayoutAttr *parent() const { return parent_; }

  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::Slice; }

private:
  SliceLayout(unsigned dim, const LayoutAttr *parent)
      : LayoutAttr(Kind::Slice), dim_(dim), parent_(parent) {}
  unsigned dim_;
  const LayoutAttr *parent_;
};

/// The layout of a tensor held in shared memory (a `local_alloc` buffer):
/// not distributed over threads but addressed, with a swizzle that spreads the
/// rows of a tile over the 32 banks. With `order` fastest first, the fastest
/// dimension is the row (`order[0]`), the next one the row index; element
/// (row, col) sits at
///
///   phase = (row / per_phase) % max_phase
///   col'  = ((col / vec) ^ phase) * vec + col % vec
///   offset = row * rowLength + col'
///
/// so groups of `vec` consecutive elements (one vector access) stay together
/// and rows `per_phase` apart move to other banks. `max_phase = 1` is the
/// plain row-major layout.
///
///   tensor<64x64xfp16, shared<vec = 8, per_phase = 1, max_phase = 8, order = [1, 0]>>
class SharedLayout : public LayoutAttr {
public:
  /// The uniqued layout; the arguments must be valid (see validateShared).
  static const SharedLayout *get(IRContext &ctx, int64_t vec, int64_t perPhase, int64_t maxPhase,
                                 std::vector<int64_t> order);

  unsigned rank() const { return static_cast<unsigned>(order_.size()); }
  int64_t vec() const { return vec_; }
  int64_t perPhase() const { return perPhase_; }
  int64_t maxPhase() const { return maxPhase_; }
  const std::vector<int64_t> &order() const { return order_; }

  /// The element offset of `coords` in a buffer of `shape` (the formula
  /// above; dimensions past the first two of the order are outer, row-major).
  int64_t offset(const std::vector<int64_t> &shape, const std::vector<int64_t> &coords) const;

  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::Shared; }

private:
  SharedLayout(int64_t vec, int64_t perPhase, int64_t maxPhase, std::vector<int64_t> order)
      : LayoutAttr(Kind::Shared), vec_(vec), perPhase_(perPhase), maxPhase_(maxPhase),
        order_(std::move(order)) {}
  int64_t vec_, perPhase_, maxPhase_;
  std::vector<int64_t> order_;
};

/// Empty when the shared parameters are consistent, else why not: vec,
/// per_phase and max_phase positive powers of two, order a permutation of
/// rank >= 1.
std::string validateShared(int64_t vec, int64_t perPhase, int64_t maxPhase,
                           const std::vector<int64_t> &order);

/// The accumulator layout of the tensor cores' mma.sync (ir/DotLayout.cpp):
/// the warps tile the [M, N] result `warps = [wm, wn]`, each warp computing
/// `instr = [16, 8]` pieces. Within a piece lane l holds rows l/4 and l/4 + 8
/// and columns 2 * (l % 4) + {0, 1}: as a ThreadMap this is the blocked
/// layout size [1, 2], threads [8, 4], warps [wm, wn], order [1, 0], whose
/// register pairs (k0 = 2i, 2i + 1) are the two row halves of one piece.
/// `version = 2` is Ampere's mma.sync. `version = 3` is Hopper's wgmma:
/// warps = [W, 1] (W / 4 warp groups along M), instr = [64, n] (one
/// wgmma.m64n<n>k16 per 64-row piece); its ThreadMap is mma version 2's with
/// warps [W, 1], so epilogues are the same (the lowering permutes A's rows
/// in shared memory to make it so, lowering/codegen/WgmmaDotToLLVM.cpp).
///
///   tensor<128x128xfp32, mma<version = 2, warps = [2, 2], instr = [16, 8]>>
///   tensor<128x256xfp32, mma<version = 3, warps = [8, 1], instr = [64, 256]>>
class MmaLayout : public LayoutAttr {
public:
  static const MmaLayout *get(IRContext &ctx, int64_t version, std::vector<int64_t> warps,
                              std::vector<int64_t> instr);
  int64_t version() const { return version_; }
  const std::vector<int64_t> &warps() const { return warps_; }
  const std::vector<int64_t> &instr() const { return instr_; }
  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::Mma; }

private:
  MmaLayout(int64_t version, std::vector<int64_t> warps, std::vector<int64_t> instr)
      : LayoutAttr(Kind::Mma), version_(version), warps_(std::move(warps)),
        instr_(std::move(instr)) {}
  int64_t version_;
  std::vector<int64_t> warps_, instr_;
};

/// The layout of operand `op_idx` (0: A [M, K], 1: B [K, N]) of a dot whose
/// result has the mma layout `parent`: the registers ldmatrix gives mma.sync,
/// `k_width` consecutive K elements per 32-bit register (2 for 16-bit types,
/// 1 for tf32, 4 for int8). Warps along the other operand's dimension hold
/// copies.
///
///   tensor<128x32xfp16, dot_operand<op_idx = 0, parent = mma<...>, k_width = 2>>
class DotOperandLayout : public LayoutAttr {
public:
  static const DotOperandLayout *get(IRContext &ctx, unsigned opIdx, const MmaLayout *parent,
                                     int64_t kWidth);
  unsigned opIdx() const { return opIdx_; }
  const MmaLayout *parent() const { return parent_; }
  int64_t kWidth() const { return kWidth_; }
  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::DotOperand; }

private:
  DotOperandLayout(unsigned opIdx, const MmaLayout *parent, int64_t kWidth)
      : LayoutAttr(Kind::DotOperand), opIdx_(opIdx), parent_(parent), kWidth_(kWidth) {}
  unsigned opIdx_;
  const MmaLayout *parent_;
  int64_t kWidth_;
};

/// The accumulator layout of AMD's matrix cores (ir/DotLayout.cpp): MFMA on
/// CDNA (gfx90a, gfx942; 64-lane warps, `mfma<...>`) and WMMA on RDNA3
/// (gfx1100; 32-lane warps, `wmma<...>`). The warps tile the [M, N] result
/// `warps = [wm, wn]`, each warp computing `instr = [n, n]` pieces (mfma:
/// 32 x 32 or 16 x 16; wmma: 16 x 16). Within a piece lane l holds column
/// l % n and, in the instruction's register r, row
///
///   mfma: 4 G (r / 4) + 4 ((l / n) % G) + r % 4      G = 64 / n lane groups
///   wmma: 2 r + l / 16
///
/// (AMD's matrix instruction calculator: v_mfma_f32_32x32x8_f16's D[i][j]
/// is GPR 4 floor(i / 8) + i % 4 of lane 32 floor(i / 4) % 64 + j;
/// v_wmma_f32_16x16x16_f16's on wave32 GPR floor(i / 2) of lane 16 (i % 2)
/// + j). As a ThreadMap: rows size s (mfma 4, wmma 1), threads g = warp
/// size / n at lane stride n, warps wm; columns size 1, threads n, warps
/// wn; rows fastest, so one instruction's registers are consecutive. As in
/// mma version 2 the row blocks of s g rows interleave over the warps:
/// instruction row p of piece mi of warp row w is tile row
/// (R mi + p / (s g)) s g wm + s g w + p % (s g), R = n / (s g)
/// (amdMmaOperandCoord gives the A operand's lane p that row).
///
///   tensor<128x128xfp32, mfma<warps = [2, 2], instr = [32, 32]>>
///   tensor<64x64xfp32, wmma<warps = [2, 2], instr = [16, 16]>>
class AMDMmaLayout : public LayoutAttr {
public:
  static const AMDMmaLayout *get(IRContext &ctx, bool wmma, std::vector<int64_t> warps,
                                 std::vector<int64_t> instr);
  bool isWmma() const { return wmma_; }
  const std::vector<int64_t> &warps() const { return warps_; }
  const std::vector<int64_t> &instr() const { return instr_; }
  /// The piece's side.
  int64_t n() const { return instr_[0]; }
  int64_t warpSize() const { return wmma_ ? 32 : 64; }
  /// Accumulator registers of one instruction per lane: n x n / warpSize.
  int64_t regsPerInstr() const { return n() * n() / warpSize(); }
  /// Consecutive rows per register run (s) and lane groups along the rows
  /// (g): the ThreadMap's row size and threads.
  int64_t rowRun() const { return wmma_ ? 1 : 4; }
  int64_t laneGroups() const { return warpSize() / n(); }
  std::string str() const override;
  static bool classof(const LayoutAttr *l) { return l->layoutKind() == Kind::AMDMma; }

private:
  AMDMmaLayout(bool wmma, std::vector<int64_t> warps, std::vector<int64_t> instr)
      : LayoutAttr(Kind::AMDMma), wmma_(wmma), warps_(std::move(warps)), instr_(std::move(instr)) {}
  bool wmma_;
  std::vector<int64_t> warps_, instr_;
};

/// Empty when the AMD matrix-core parameters are consistent (warps two
/// powers of two multiplying to at most 16; mfma instr [32, 32] or [16,
/// 16], wmma [16, 16]), else why not.
std::string validateAMDMma(bool wmma, const std::vector<int64_t> &warps,
                           const std::vector<int64_t> &instr);

/// Where one operand element of an AMD matrix-core instruction comes from
/// in the dot's tile, for the accumulator `acc`: element `e` (0 ..
/// kWidth - 1) of lane `lane` of operand `opIdx` (0: A [M, K], 1: B [K, N])
/// of the instruction of piece `piece` (mi for A, ni for B) and k step `kk`,
/// in the warp at `warp` along M (A) or N (B). The instruction reads K in
/// steps of `kInstr`, `kWidth` consecutive K elements per lane (A[i][k] is
/// in lane n (k / kWidth) + i: v_mfma_f32_32x32x8_f16 kWidth 4, kInstr 8;
/// wmma's lanes l and l + 16 hold the same 16). Returns (M or N, K). One
/// formula for the lowering (`Arith` on IR values, lowering/codegen/
/// AMDMmaDotToLLVM.cpp) and the tests (on integers, IntArith):
///
///   mn = A: (R piece + p / (s g)) s g wm + s g warp + p % (s g)   p = lane % n
///        B: (piece wn + warp) n + p
///   k  = kk kInstr + ((lane / n) % (kInstr / kWidth)) kWidth + e
template <class Arith, class V>
std::pair<V, V> amdMmaOperandCoord(const Arith &a, const AMDMmaLayout &acc, unsigned opIdx,
                                   int64_t piece, V warp, V lane, int64_t kk, int64_t e,
                                   int64_t kWidth, int64_t kInstr) {
  int64_t n = acc.n(), block = acc.rowRun() * acc.laneGroups();
  V p = a.rem(lane, n);
  V mn;
  if (opIdx == 0)
    mn = a.add(a.add(a.mul(a.add(a.c(n / block * piece), a.div(p, block)), block * acc.warps()[0]),
                     a.mul(warp, block)),
               a.rem(p, block));
  else
    mn = a.add(a.mul(a.add(a.c(piece * acc.warps()[1]), warp), n), p);
  V group = a.rem(a.div(lane, n), kInstr / kWidth);
  V k = a.add(a.c(kk * kInstr + e), a.mul(group, kWidth));
  return {mn, k};
}

/// Integer arithmetic for the formulas above (tests, compile-time offsets).
struct IntArith {
  int64_t c(int64_t k) const { return k; }
  int64_t add(int64_t x, int64_t y) const { return x + y; }
  int64_t mul(int64_t x, int64_t k) const { return x * k; }
  int64_t div(int64_t x, int64_t k) const { return x / k; }
  int64_t rem(int64_t x, int64_t k) const { return x % k; }
};

/// wgmma (mma version 3) with `numWarps` warps: the 8-row block of A's
/// shared tile that holds accumulator row block `block` (rows 8 block ..
/// 8 block + 7 of the result). Under the ThreadMap, warp w holds row blocks
/// (2 mi + h) W + w (piece mi, half h); wgmma gives warp w % 4 of group
/// w / 4 rows 16 (w % 4) + 8 h of its 64-row piece. So block (2 mi + h) W + w
/// goes to block 8 (mi G + w / 4) + 2 (w % 4) + h of the tile (G = W / 4
/// groups; piece mi of group g is the tile's 64-row piece mi G + g). A
/// permutation of [0, M / 8) for M a multiple of 16 W.
int64_t wgmmaSharedRowBlock(int64_t block, int64_t numWarps);

/// A wgmma shared-memory matrix descriptor: start address >> 4 in bits
/// 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in
/// 32-45, base offset 0, swizzle in 62-63 (1: 128 B, 2: 64 B, 3: 32 B for
/// `swizzleBytes`). Offsets are multiples of 16 below 256 KiB.
uint64_t wgmmaDescriptor(uint64_t address, uint64_t leadingBytes, uint64_t strideBytes,
                         int64_t swizzleBytes);

/// Empty when the mma parameters are consistent (two powers of two warps
/// multiplying to at most 32; version 2: instr [16, 8]; version 3: warps
/// [4 x groups, 1], instr [64, n], n a multiple of 8 up to 256), else why
/// not.
std::string validateMma(int64_t version, const std::vector<int64_t> &warps,
                        const std::vector<int64_t> &instr);

/// LLVM-style casts on the layout kind.
template <typename T> bool isa(const LayoutAttr *l) { return l && T::classof(l); }
template <typename T> const T *cast(const LayoutAttr *l) { return static_cast<const T *>(l); }
template <typename T> const T *dyn_cast(const LayoutAttr *l) {
  return l && T::classof(l) ? static_cast<const T *>(l) : nullptr;
}

/// The mma layout of a tensor type `t` (version 2: mma.sync, 3: wgmma);
/// null for other layouts and non-tensor types.
inline const MmaLayout *mmaLayoutOf(Type *t) {
  auto *tensor = dyn_cast<TensorType>(t);
  return tensor ? dyn_cast<MmaLayout>(tensor->layout()) : nullptr;
}

/// Whether `t` is in wgmma's accumulator layout (mma version 3).
inline bool isWgmmaLayout(Type *t) {
  const MmaLayout *mma = mmaLayoutOf(t);
  return mma && mma->version() == 3;
}

/// The rank of the tensors a layout describes.
unsigned layoutRank(const LayoutAttr *layout);
/// Threads per warp of a distributed layout (see kWarpSize).
int64_t layoutWarpSize(const LayoutAttr *layout);
/// Warps of the program the layout spreads over (the product of `warps`; 1
/// for a shared layout, which is not distributed).
int64_t layoutNumWarps(const LayoutAttr *layout);

/// Empty when the blocked parameters are consistent, else why not: all four of
/// one rank >= 1, powers of two, threads multiplying to a warp size (32, or
/// 64 on wave64), order a permutation.
std::string validateBlocked(const std::vector<int64_t> &sizePerThread,
                            const std::vector<int64_t> &threadsPerWarp,
                            const std::vector<int64_t> &warpsPerCTA,
                            const std::vector<int64_t> &order);

/// The blocked layout the coalescing pass starts from for a tensor of `shape`:
/// `vec` consecutive elements per thread along order[0], then the `warpSize`
/// lanes and `numWarps` warps filled greedily along `order` (fastest first);
/// lanes or warps left over once the shape is covered go to order[0], where
/// they hold copies. `vec` and `numWarps` are powers of two.
const BlockedLayout *makeBlockedLayout(IRContext &ctx, const std::vector<int64_t> &shape,
                                       const std::vector<int64_t> &order, int64_t vec,
                                       int64_t numWarps, int64_t warpSize);
/// order = the dimensions from last to first (row-major), vec = 1.
const BlockedLayout *defaultBlockedLayout(IRContext &ctx, const std::vector<int64_t> &shape,
                                          int64_t numWarps, int64_t warpSize);
/// `layout` (rank r) as a layout of rank r + 1 with a new size-1 dimension at
/// `axis`: the parent when `layout` is slice(axis, parent), else a blocked
/// layout with one thread and one warp along the new dimension.
const LayoutAttr *expandLayout(IRContext &ctx, const LayoutAttr *layout, unsigned axis);

/// The text form after `name<`: `key = value` pairs, each value an integer,
/// an integer array or a nested layout. The IR parser reads these and calls
/// buildLayout, so a new kind of layout needs no parser change.
struct LayoutParam {
  std::string key;
  std::variant<int64_t, std::vector<int64_t>, const LayoutAttr *> value;
};
/// The layout named `kind` with `params`, or null with `error` set.
const LayoutAttr *buildLayout(IRContext &ctx, std::string_view kind,
                              const std::vector<LayoutParam> &params, std::string &error);

/// Where the elements of a tensor of `shape` live under a distributed layout.
///
/// Per dimension d, with tile T = size * threads * warps: thread (lane, warp)
/// has lane coordinate l_d = (lane / laneStride_d) % threads_d and warp
/// coordinate w_d = (warp / warpStride_d) % warps_d; its k-th element along d
/// (k < size_d * max(1, S_d / T)) sits at
///
///   ((k / size_d) * T + (w_d * threads_d + l_d) * size_d + k % size_d) mod S_d.
///
/// Registers enumerate the per-dimension k's with order[0] fastest, so runs of
/// size[order[0]] registers are consecutive along that dimension.
class ThreadMap {
public:
  struct Dim {
    int64_t size = 1, threads = 1, warps = 1; // per thread, per warp, per program
    int64_t laneStride = 1, warpStride = 1;   // lane/warp id -> coordinate along d
    int64_t extent = 1;                       // the tensor's size along d
    int64_t perThread = 1;                    // elements per thread along d
    int64_t tile() const { return size * threads * warps; }
  };

  ThreadMap(const LayoutAttr *layout, const std::vector<int64_t> &shape);

  unsigned rank() const { return static_cast<unsigned>(dims_.size()); }
  const Dim &dim(unsigned d) const { return dims_[d]; }
  /// Dimensions fastest first.
  const std::vector<unsigned> &order() const { return order_; }
  int64_t numWarps() const { return numWarps_; }
  /// Threads per warp (layoutWarpSize): thread t is lane t % warpSize() of
  /// warp t / warpSize().
  int64_t warpSize() const { return warpSize_; }
  int64_t numThreads() const { return numWarps_ * warpSize_; }
  /// Elements (registers) each thread holds.
  int64_t numRegisters() const { return numRegisters_; }

  /// Register `reg`'s index k along each dimension.
  std::vector<int64_t> registerIndex(int64_t reg) const;
  /// The register with index `k` along each dimension (registerIndex's
  /// inverse).
  int64_t registerOf(const std::vector<int64_t> &k) const;
  /// The part of register `reg`'s coordinate along `d` that does not depend
  /// on the thread: (k / size) * T + k % size.
  int64_t registerOffset(int64_t reg, unsigned d) const;
  /// The part that does: (w_d * threads + l_d) * size.
  int64_t threadOffset(unsigned d, int64_t lane, int64_t warp) const;
  /// The element register `reg` of thread (lane, warp) holds.
  std::vector<int64_t> coords(int64_t reg, int64_t lane, int64_t warp) const;
  /// For each thread (lane + warpSize() * warp), the row-major linear indices of the
  /// elements it holds, in register order.
  std::vector<std::vector<int64_t>> elementsPerThread() const;

private:
  std::vector<Dim> dims_;
  std::vector<unsigned> order_;
  int64_t numWarps_ = 1;
  int64_t warpSize_ = kWarpSize;
  int64_t numRegisters_ = 1;
};

/// Per register of a tensor with ThreadMap `map`, the first register of the
/// thread that provably holds the same value, given the value's constancy
/// per dimension (axis info: constant on aligned blocks of constancy[d]
/// elements along d): registers whose elements lie in the same aligned
/// blocks along every dimension in every thread, checked over all threads.
/// Any layout: in a blocked one a thread's run of `size` consecutive
/// elements shares up to min(K, size) registers; in the mma accumulator
/// (column pairs 8 apart) with K = 16, pairs j = 2q and 2q + 1 share too.
/// Where nothing is known (constancy 1) every register is its own.
///
///   blocked<size = [8], threads = [32], warps = [4]> over [1024], constancy
///   [16]: registers 0..7 -> 0, 8..15 -> 8.
std::vector<int64_t> constancyLeaders(const ThreadMap &map, const std::vector<int64_t> &constancy);

} // namespace tk
