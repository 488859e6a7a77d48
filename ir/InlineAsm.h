// InlineAsm: how an `inline_asm` op (tk.inline_asm_elementwise) maps its
// elements to the operands of one assembly invocation, shared by the front
// end (its located errors), the verifier and the GPU lowering.
//
// One invocation takes `pack` elements of every operand and gives `pack`
// elements of every result. A value whose elements are narrower than 32 bits
// travels packed: up to 32 / bits of them (at most `pack`) share one
// register. So with pack = 4, an int8 operand is one 32-bit register
// (4 x 8 bits), an fp16 operand two (2 x 16 bits), a float32 operand four.
// The constraints list the output registers first ($0, $1, ...: result by
// result, each result's registers in order), then the input registers
// (argument by argument); clobbers ("~{memory}") may follow.
//
//   inline_asm %a, %b {asm = "...", constraints = "=r,=r,r,r", pack = 1, pure = true}
//       : tensor<512xi32>, tensor<512xi32>
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tk {

class Operation;
class Type;

/// Elements of `elem` (a scalar or pointer type) one register holds with
/// `pack`: min(pack, 32 / bits) below 32 bits, else 1 (pointers: 64 bits).
int64_t inlineAsmElementsPerRegister(Type *elem, int64_t pack);

/// The constraint codes of an LLVM constraint string, split at commas
/// (blanks dropped: "=r, r" reads as "=r,r").
struct AsmConstraintCounts {
  int64_t outputs = 0;  // "=r"
  int64_t inputs = 0;   // "r", "l", "0" (tied), ...
  int64_t clobbers = 0; // "~{memory}"
  bool empty = false;   // an empty code between commas
};
AsmConstraintCounts countAsmConstraints(std::string_view constraints);
/// `constraints` without blanks (what LLVM is given).
std::string normalizeAsmConstraints(std::string_view constraints);

/// What is wrong with an inline_asm op's pack, types and constraints ("" when
/// nothing): the message the verifier gives (the front end checks the same
/// before building the op and words it for the call).
std::string inlineAsmProblem(const Operation &op);

} // namespace tk
