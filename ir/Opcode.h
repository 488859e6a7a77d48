// Opcodes of the block IR and what the table in ir/Ops.def says about each:
// keyword, arity, traits and attributes.
//
//   Opcode op = *lookupOpcode("add");         // Opcode::Add
//   opInfo(op).minOperands == 2;
//   hasTrait(op, OpTrait::Commutative);       // true
//
// Adding an op is one row in Ops.def plus its verifier rule (ir/Verifier.cpp)
// and, if it folds, its folding rule (ir/ConstantFold.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tk {

enum class Opcode : uint16_t {
#define TK_OP(ENUM, KEYWORD, MINOPS, MAXOPS, NRES, NREG, TRAITS, ATTRS) ENUM,
#include "ir/Ops.def"
};

/// Bits of the traits column of Ops.def.
namespace OpTrait {
enum : uint32_t {
  /// No side effects: unused results mean the op can go, equal ops can merge.
  Pure = 1u << 0,
  Commutative = 1u << 1,
  /// Ends a block.
  Terminator = 1u << 2,
  /// All operands and the results have one type.
  SameOperandsAndResultType = 1u << 3,
  /// All operands have one type (the result differs, e.g. comparisons).
  SameOperandsType = 1u << 4,
  /// Acts element by element; operands and result share a shape.
  Elementwise = 1u << 5,
  /// Reads memory: not pure (a store may intervene), but unused ones can go.
  MemRead = 1u << 6,
  /// Writes memory or has another visible effect.
  MemWrite = 1u << 7,
  /// Has no effects of its own; as pure as the ops in its regions.
  RecursivePure = 1u << 8,
  /// Its result is a compile-time constant (`value` attribute).
  ConstantLike = 1u << 9,
};
} // namespace OpTrait

struct OpInfo {
  std::string_view keyword;
  int minOperands;
  int maxOperands; // -1: any number
  int numResults;  // -1: any number
  int numRegions;  // -1: checked by the verifier
  uint32_t traits;
  std::string_view attrSpec; // "name:kind,name:kind?"
};

const OpInfo &opInfo(Opcode op);
inline std::string_view opName(Opcode op) { return opInfo(op).keyword; }
inline bool hasTrait(Opcode op, uint32_t trait) { return (opInfo(op).traits & trait) != 0; }
std::optional<Opcode> lookupOpcode(std::string_view keyword);
unsigned numOpcodes();

} // namespace tk
