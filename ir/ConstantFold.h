// ConstantFold: evaluates ops on constant scalars with tk's exact semantics,
// for canonicalization and for constexpr folding in AST -> IR.
//
// Values are Attributes: integers as int64 normalised to their dtype (i8 200
// is -56, u8 -56 is 200, i1 is 0 or 1), floats as doubles rounded to their
// dtype (fp16 and bf16 round to nearest even, like fptrunc).
//
//   // %c = add %a, %b : i8   with a = 100, b = 100
//   foldOp(op, {Attribute(100), Attribute(100)})   == Attribute(-56)
//   roundToDType(0.1, DType::F16)                   == 0.0999755859375
//
// An op whose result is undefined or target dependent (integer division by
// zero, shifts by the width or more, float -> int out of range, exp/log/sin
// whose device result may differ in the last bit) does not fold.
#pragma once

#include "ir/Attribute.h"
#include "ir/Operation.h"

#include <optional>
#include <vector>

namespace tk {

/// `v` wrapped to the bit width of `d` and sign- or zero-extended back.
int64_t normalizeInt(int64_t v, DType d);
/// `v` rounded to the precision and range of `d` (round to nearest even).
double roundToDType(double v, DType d);

/// The value of `op` applied element by element to the constant scalars
/// `operands` (one per operand, in order), or nullopt when it does not fold.
/// Handles elementwise arithmetic, bitwise ops, shifts, comparisons, casts,
/// abs/floor/ceil/sqrt, max/min and select.
std::optional<Attribute> foldOp(Operation &op, const std::vector<Attribute> &operands);

} // namespace tk
