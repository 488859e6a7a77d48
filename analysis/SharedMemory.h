// SharedMemory: what the GPU passes and the lowering agree on about shared
// memory: how many bytes of it each op and buffer takes, and which bytes an
// op touches. --allocate-shared (lowering/AllocateShared.h) gives every op
// that needs scratch, and every local_alloc buffer, an offset into one
// per-kernel array; --insert-barriers (lowering/InsertBarriers.h) reads the
// offsets and the accesses described here to place `barrier` ops; the
// codegen reads the same offsets and sizes.
//
//   %s = reduce %x {axis = 0, kind = "sum", scratch_offset = 0} : ...   (4 warps: 4 floats)
//   %c = convert_layout %y {scratch_offset = 0} : ...                   (later, reuses 0)
//   func @k(...) attributes {num_warps = 4, shared_bytes = 4096}
//
// Scratch lives only while its op runs; a buffer from its local_alloc to its
// last use (to the end of a loop that uses it; Liveness.h). Offsets are
// 16-byte aligned.
#pragma once

#include "ir/Module.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tk {

/// Bytes of one element of `t` in shared memory (i1 takes a byte, a pointer 8).
int64_t sharedElementBytes(Type *t);

/// Warps that split the reduced axis of `reduce` (the operand's layout), so
/// meet in shared memory; 1 when the lanes of one warp cover the axis. 0 when
/// the operand has no distributed layout.
int64_t reduceWarpsAlongAxis(const Operation &reduce);

/// The byte offsets, inside a reduce's scratch, of the part each operand's
/// partials use (an argmax/argmin keeps the i32 index as a second part), and
/// in `total` the scratch size. Parts are 16-byte aligned; a part holds one
/// partial per (result element, warp along the axis), slot = element * warps +
/// warp.
std::vector<int64_t> reduceScratchParts(const Operation &reduce, int64_t &total);

/// A convert_layout whose tensor does not fit in shared memory goes through it
/// in rounds: --allocate-shared sets `rounds = K` on it, and the tensor is cut
/// into K equal slices along one dimension (convertRoundAxis), each written,
/// synchronised, read and synchronised again through one slice of scratch.
/// The slices follow the tiles of both layouts, so which round each register
/// of a thread takes part in is known at compile time:
///
///   convert_layout %x {rounds = 2} : tensor<65536xfp32, blocked<size = [8],
///       threads = [32], warps = [32]>> -> blocked<size = [4], ...>
///   (tiles of 8192 and 4096 elements; slices of 32768: 128 KiB of scratch
///    instead of 256 KiB, registers 0-31 of the first layout in round 0)
///
/// The op's rounds: its `rounds` attribute, 1 without it.
int64_t convertRounds(const Operation &op);

/// The dimension along which `op` can go in `rounds` rounds: the first whose
/// extent splits into `rounds` slices that are each a whole number of both
/// layouts' tiles along it; nullopt when none does (or `rounds` is 1).
std::optional<unsigned> convertRoundAxis(const Operation &op, int64_t rounds);

/// The fewest rounds (a power of two, at least 2) in which `op`'s scratch
/// takes at most `budget` bytes; 0 when no slicing fits.
int64_t convertRoundsWithin(const Operation &op, int64_t budget);

/// The shape of the part of `op`'s tensor one round stages: the tensor's
/// shape with the round axis divided by the rounds (the whole shape in one
/// round).
std::vector<int64_t> convertSliceShape(const Operation &op);

/// Elements of padding after each row (the last dimension) of a
/// convert_layout's scratch, which holds one slice (convertSliceShape)
/// row-major: one 4-byte word (one element for 8-byte types) when a row is an
/// even number of words, so that threads reading or writing down a column (a
/// transpose, lanes that step across rows) meet different banks; 0 for
/// rank-1 tensors and short or odd rows. 64 x 64 fp32: rows of 65 floats.
int64_t convertRowPadding(const Operation &op);

/// Bytes of scratch `op` needs while it runs: a reduction whose axis spans
/// warps, a layout conversion between different layouts (one round's slice),
/// the exchanges of reshape/trans/atomics, a scan, a dot staging its
/// operands, the async_wait that reorders a wgmma_native accumulator; 0 for
/// any other op. `numWarps` is the function's.
int64_t scratchBytes(const Operation &op, int64_t numWarps);

/// A TMA load's scratch: its mbarrier, then its box at the next multiple of
/// this many bytes (what cp.async.bulk.tensor needs of an unswizzled box).
constexpr int64_t kTmaBoxAlign = 128;

/// The scratch that puts a wgmma_native accumulator of type `acc` (M x N
/// fp32) in the mma layout's row order after its loop (--pipeline's second
/// async_wait, DotToLLVM): M rows of N + 8 words, so that the 8 rows of 8
/// words one warp's 8-byte stores or loads touch fill 2 x 32 banks.
int64_t wgmmaNativeRowWords(int64_t n);
int64_t wgmmaNativeScratchBytes(const Type *acc);

/// Bytes of the buffer a local_alloc creates.
int64_t bufferBytes(const Operation &alloc);

/// One access to shared memory: bytes [begin, end), written or read.
struct SharedAccess {
  int64_t begin = 0, end = 0;
  bool write = false;
};

/// The shared accesses of `op` (after --allocate-shared set the offsets), in
/// phases separated by the op's own barriers: a reduction across warps or a
/// conversion writes its scratch, synchronises, then reads it ({{write},
/// {read}}), as do the other exchanges; local_store (and local_alloc with an
/// initial value) writes and local_load reads the buffer ({{...}}).
/// Empty for ops that do not touch shared memory.
std::vector<std::vector<SharedAccess>> sharedAccesses(Operation &op, int64_t numWarps);

/// The warps per program of `fn` (its num_warps attribute, else 4).
int64_t functionNumWarps(Function &fn);

} // namespace tk
