// LayoutRemat: which values can be had in another layout without moving data
// between threads, shared by the passes that change layouts
// (--propagate-dot-layouts, --remove-layout-conversions).
//
// A constant, splat or make_range is simply made again in the new layout;
// a short chain of elementwise ops, broadcasts and expand_dims over such
// leaves (an index or mask tile) is cloned op by op in it. Anything else
// (a load, a reduction, a dot) needs a convert_layout, which moves the data
// through shared memory unless every thread already holds its new elements
// (analysis/DataMovement.h, convertIsLocal).
//
//   %r = make_range ...; %m = cmpi %r, %n          (blocked)
//   recomputable(%m, mma<...>, budget = 16) == true: 2 ops cloned in the mma
//   layout (make_range again, cmpi on it).
#pragma once

#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "ir/Module.h"

namespace tk {

/// The layout of a tensor value (null for scalars and unlaid tensors).
const LayoutAttr *valueLayout(const Value *v);

/// Ops without tensor operands that are made again in any layout at no cost:
/// constant, splat, make_range.
bool isRematerializable(const Operation *op);

/// Ops that can be cloned in another layout given their operands in the
/// layout that follows from the result's: pure one-result elementwise ops
/// whose operands are all tensors, broadcast, expand_dims, and a reshape
/// that only inserts dimensions of size 1 (`x.reshape(1, 1, n)`: expand_dims
/// in one op).
bool isRecomputable(const Operation *op);

/// The layout the operands of `op` (elementwise, broadcast, expand_dims, a
/// reshape inserting unit dimensions) need for its result to be in `l`.
const LayoutAttr *operandLayoutFor(IRContext &ctx, const Operation &op, const LayoutAttr *l);

/// `v` itself, or the operand of the convert_layout that made it, when it is
/// in layout `l`; else null.
Value *alreadyIn(Value *v, const LayoutAttr *l);

/// Whether `v` can be had in layout `l` without data movement: already there,
/// rematerialisable, computed by recomputable ops over such values (with at
/// most `budget` ops to clone, decremented), or converted from such a value
/// (the conversion is then not needed).
bool recomputable(IRContext &ctx, Value *v, const LayoutAttr *l, int &budget);

/// Whether `l` is an mma layout (or AMD's mfma / wmma) or a slice of one.
bool isMmaDerived(const LayoutAttr *l);

/// Whether a store of `v`, a value in mma layout `acc` (or computed from one
/// by elementwise ops), goes from those registers rather than from `coalesced`,
/// the layout --coalesce gave the store. It does when a loop carries the
/// accumulator (a result or argument of a for/while is among the mma values
/// `v` is computed from: the matmul's K loop, attention's output), where the
/// conversion through shared memory measured slower than the stores it
/// widens (d295e4c), and when `coalesced` gives a thread no longer run of
/// consecutive elements along its fastest dimension than `acc` does. A dot
/// outside any loop (one per program, a chain of them) is converted and
/// stored 16 bytes a thread, as is an AMD matrix-core accumulator (mfma,
/// wmma: one element per thread along N) in or out of a loop.
bool storesFromAccumulator(const Value *v, const LayoutAttr *acc, const LayoutAttr *coalesced);

} // namespace tk
