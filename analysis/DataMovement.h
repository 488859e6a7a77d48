// DataMovement: which convert_layout, reshape, trans, gather, scan and atomic
// ops exchange data between threads through shared memory, and how much
// scratch they take.
// --allocate-shared (SharedMemory.h scratchBytes) and the code generation
// (codegen/ShapeToLLVM.cpp, ScanToLLVM.cpp, AtomicToLLVM.cpp) both ask here,
// so they agree on which ops have scratch.
//
//   %t = trans %x {order = [1, 0]} : 32x32 in a blocked layout -> another
//   reshapeTransIsLocal(op) == false; movementScratchBytes(op) == (1024 + 1) * 4
//
// Scratch is one slot per element plus a spare slot (for threads that must
// not write), per value moved, each part 16-byte aligned.
#pragma once

#include "ir/Layout.h"
#include "ir/Module.h"

#include <cstdint>
#include <vector>

namespace tk {

/// reshape/trans whose result registers are operand registers of the same
/// thread (no data moves). `pick`, when given, receives per result register
/// the operand register it is.
bool reshapeTransIsLocal(const Operation &op, std::vector<int64_t> *pick = nullptr);

/// convert_layout between distributed layouts that give every thread the
/// elements it already holds (a renaming of its registers, no data moves):
/// two layouts with the same ThreadMap (wgmma accumulators of different N
/// read as [M, k] slices), an accumulator read as an mma A operand (its
/// columns are the operand's K, two per 32-bit register), a layout and one
/// with more copies. `pick`, when given, receives per result register the
/// operand register it is.
///
///   convert_layout %s : mma<version = 2, warps = [4, 1], instr = [16, 8]> (128x64 fp16)
///     -> dot_operand<op_idx = 0, parent = mma<...>, k_width = 2>: local, no code
bool convertIsLocal(const Operation &op, std::vector<int64_t> *pick = nullptr);
/// The same for a tensor of `shape` in layout `from` seen in layout `to`.
bool layoutsHoldSameElements(const LayoutAttr *from, const LayoutAttr *to,
                             const std::vector<int64_t> &shape,
                             std::vector<int64_t> *pick = nullptr);

/// A scan whose axis each thread holds whole (not split over lanes or
/// warps): it runs on registers.
bool scanIsInThread(const Operation &op);

/// A cumsum/cumprod (not i1) whose axis is split over lanes or warps without
/// copies along it (the layout's tile divides the axis): it runs as a
/// parallel scan (shuffles across lanes, one partial per warp and tile
/// repetition in shared memory when warps split the axis). Other scans that
/// are not in-thread run serially through shared memory, in the
/// interpreter's order.
bool scanIsParallel(const Operation &op);

/// An atomic whose old value must reach threads holding copies (a scalar
/// atomic, or a layout with copies) and is used.
bool atomicSharesResult(const Operation &op);

/// Scratch bytes of a reshape, trans, gather, scan or atomic (0 when it moves
/// no data through shared memory, and for other ops). A gather stages its
/// whole source.
int64_t movementScratchBytes(const Operation &op);

/// The partials a parallel scan exchanges through shared memory: one per
/// line, tile repetition and warp along the axis (0 when one warp covers it).
int64_t parallelScanSlots(const Operation &op);

/// The byte offset of part `i` (operand i's slots) inside a scan's scratch.
int64_t scanScratchPart(const Operation &op, unsigned i);

} // namespace tk
