// --insert-barriers: a `barrier` (bar.sync of the whole program) before each
// op whose shared-memory accesses conflict with accesses earlier ops made
// since the last barrier, and nowhere else.
//
// Runs after --allocate-shared, on the offsets it recorded. Each op describes
// its accesses (analysis/SharedMemory.h, sharedAccesses) in phases split by
// its own internal barriers: a reduction across warps writes its scratch,
// syncs inside its lowering, then reads it. The dataflow carries the set of
// accesses made since the last barrier ("pending") through the IR:
//  - before an op, if one of its first-phase accesses overlaps a pending one
//    and either is a write (RAW, WAR, WAW: another thread's access, so
//    ordering needs a barrier), a barrier goes there and pending empties;
//  - an op with internal barriers leaves only its last phase pending;
//  - `if` joins its branches (union); a `for`/`while` loop iterates its body
//    with the back edge joined into the header until pending stops growing,
//    so a read late in the body that the next iteration's write conflicts
//    with gets its barrier at the top of the body.
//
//   %a = reduce %x {scratch_offset = 0}      pending {read [0,16)}
//   %b = reduce %y {scratch_offset = 16}     disjoint: no barrier
//   barrier                                  inserted: the write of [0,16) ...
//   %c = reduce %z {scratch_offset = 0}      ... follows %a's read of it
#pragma once

#include "ir/Module.h"

#include <cstdint>

namespace tk {

/// Inserts `barrier` ops where shared accesses of different ops conflict;
/// returns how many.
/// With `remarks`, one barrier remark per barrier inserted, naming the
/// earlier access it orders against (docs/remarks.md).
int64_t insertBarriers(Function &fn, RemarkSink *remarks = nullptr);

} // namespace tk
