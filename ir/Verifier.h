// Verifier: checks that block IR is well formed, with located diagnostics.
//
// It checks, for every op: the arity and attributes declared in Ops.def; the
// type rules of the op (operands of one type, shapes that agree, a load's
// result being the pointee type in the pointer's shape, a mask being i1 of
// the pointer's shape, make_range sizes being powers of two, dot shapes
// [M,K] x [K,N] -> [M,N], ...); region structure (one block, ending in the
// right terminator, whose operand types match the op's results or carried
// values); and that every operand is defined before its use, in the same
// block or an enclosing one.
//
//   %2 = add %0, %1 : tensor<128xfp32>      // %1 : tensor<64xfp32>
//   k.tkir:3:8: error: 'add' operands have different types: tensor<128xfp32>
//               and tensor<64xfp32>
//
// All problems found are reported (up to the DiagnosticEngine's limit).
#pragma once

#include "ir/Module.h"
#include "lang/Diagnostics.h"

namespace tk {

/// True when the module is well formed; otherwise errors were added to `diag`.
bool verifyModule(Module &module, DiagnosticEngine &diag);

} // namespace tk
