// --allocate-shared: one shared-memory array per kernel, packed by liveness.
//
// Two kinds of users of shared memory get space in it:
//  - scratch of an op (a reduction whose axis spans warps, a layout
//    conversion; analysis/SharedMemory.h sizes them), live only while the op
//    runs;
//  - a local_alloc buffer, live from the alloc to its last use, to the end of
//    a loop that uses it, to the end of the function when it flows into
//    control flow; a cp.async ring to the `async_wait {pending = 0}` after
//    its loop, so an epilogue's scratch after the loop reuses its bytes
//    (analysis/Liveness.h).
// A live range is an interval of program-order numbers. In program order each
// item takes the lowest 16-byte aligned offset where it overlaps no placed
// item whose live range intersects its own (first fit).
//
// One exception trades bytes for barriers: small scratch (up to 1 KiB, a
// reduction's partials, 4 KiB in all) gets bytes of its own in a pool at the
// bottom, and the packing starts above the pool. Two reductions in a row then
// touch different bytes and --insert-barriers puts nothing between them (in a
// softmax loop: 2 barriers per row instead of 4).
//
//   %a = reduce %x {axis = 0, kind = "sum"}   : fp32   16 bytes (pool)        -> offset 0
//   %b = reduce %y {axis = 0, kind = "max"}   : fp32   16 bytes (pool)        -> offset 16
//   %buf = local_alloc %z : 4096 bytes, live [6, 9]                           -> offset 32
//   %c = convert_layout %w : 2048 bytes, live [7, 7], overlaps %buf           -> offset 4128
//   %d = convert_layout %v : 2048 bytes, live [11, 11], after %buf's last use -> offset 32
//   func attributes {shared_bytes = 6176}
//
// A layout conversion too large for what is left of the arch's limit
// (`max_shared_bytes`, else sm_90's) beside the buffers live across it goes
// in rounds: the pass records `rounds = K` on it and reserves one slice
// (analysis/SharedMemory.h, convertRounds).
//
// The pass records `scratch_offset` on each op and `shared_bytes` on the
// function; the size limit depends on the GPU and is checked by the codegen.
#pragma once

#include "ir/Module.h"

#include <cstdint>

namespace tk {

/// Gives offsets to `fn`'s scratch and buffers (`scratch_offset` on each op)
/// and sets `shared_bytes` on the function; returns the total.
/// With `remarks`, one shared remark per buffer and one for the total
/// (docs/remarks.md).
int64_t allocateShared(Function &fn, RemarkSink *remarks = nullptr);

} // namespace tk
