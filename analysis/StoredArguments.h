// StoredArguments: which pointer arguments of a kernel it may write memory
// through, and the first op that may. The Python interpreter path refuses a
// read-only array for such an argument before the run (a TypeError naming
// it, nothing written), TK_CHECK copies and compares exactly these buffers
// after a GPU launch, and the autotuner compares them between configs.
//
//   func @k(%x: ptr<fp32>, %o: ptr<fp32>, %n: i32) {
//     %xp = splat %x ...; %q = addptr %xp, %offs      // from %x
//     %v = load %q ...
//     %op = splat %o ...; %oq = addptr %op, %offs     // from %o
//     store %oq, %v                                    // writes through %o
//   }
//   storedArguments(m, k) == {null, &store, null}
//
// A pointer is followed through every op that makes pointers from pointers
// (addptr, splat, broadcast, expand_dims, reshape, trans, select,
// convert_layout, ...), through the values loops and ifs carry and yield,
// and into helpers that are called rather than inlined. A pointer loaded
// from memory or made from an integer (inttoptr) is attributed to no
// argument: it could point anywhere, so the interpreter also refuses stores
// into read-only buffers as they happen.
#pragma once

#include "ir/Module.h"

#include <vector>

namespace tk {

/// For each argument of `fn` (a function of `module`, which holds the
/// helpers it calls): the first op, in program order, that may write
/// memory through it (a store, an atomic, a call of a helper that may), or
/// null when none may.
std::vector<Operation *> storedArguments(Module &module, Function &fn);

} // namespace tk
