// ArgSpecialization: the one rule by which the arguments of a launch
// specialise the compile of a kernel, as Triton 3.6 does it plus tk's ":8".
// Python's @tk.jit (python/tk/runtime/jit.py `_specialize`, through
// tk._C.specialize_arg), the Python launcher's key (python/src/GpuLauncher.cpp)
// and the C++ API's launch-time Specializer (runtime/PublicApiSpecialize.cpp)
// all call it; docs/semantics.md, "Specialisation at launch", states it.
//
// A runtime argument (one that is not a constexpr) gives a signature entry,
// in the notation ir/Specialize.h parses, and a fact for the launch's key:
//
//   argument                            entry      fact
//   pointer to fp16 at 0x7f3a00001000   *fp16:16   Divisible16 (16-byte aligned)
//   pointer to fp16 at 0x7f3a00001008   *fp16      None
//   integer 4096                        i32:16     Divisible16
//   integer 1000                        i32:8      Divisible8
//   integer 1                           i32:1      EqualsOne
//   integer 7                           i32        None
//   integer 2**31 + 16                  i64:16     Divisible16
//   integer 2**64 - 16                  u64:16     Divisible16
//   float 0.5                           fp32       None
//   bool True                           i1         None
//   numpy int8 16, float16 1.5          i8, fp16   None (a sized scalar keeps its width
//                                                  and gives no facts)
//
// An integer of no fixed width (a Python int) is i32 when it fits, else i64,
// else u64; a float of no fixed width is fp32, as in Triton. Only pointers
// and the integer types i32, u32, i64, u64 take facts: an integer equal to 1
// (":1": uses see the constant 1), else one divisible by 16 (":16", 0 and
// negatives included), else one divisible by 8 (":8", tk's addition: a row of
// 8 fp16/bf16 elements is 16 bytes, so a matrix with 1000 columns still
// copies its rows with 16-byte cp.async: docs/codegen/dot.md, "Odd shapes").
// A parameter that may not specialise (do_not_specialize) keeps its type and
// drops the fact.
//
//   ArgSpecialization s = specializeArg(RuntimeArg::integer(1000), /*allowFacts=*/true);
//   s.entry();                 // "i32:8"
//   s.fact == ArgFact::Divisible8
//
// The launch paths that key on facts call integerFact/pointerFact directly
// (inline, a few instructions) for parameters where takesFacts holds.
#pragma once

#include "lang/DType.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tk {

/// What an argument's value promises the compile. The numbers are stable:
/// keys store them (two bits per parameter in the C++ API's).
enum class ArgFact : uint8_t { None = 0, Divisible16 = 1, EqualsOne = 2, Divisible8 = 3 };

/// The fact an integer argument gives a parameter that takes facts.
constexpr ArgFact integerFact(int64_t value) {
  return value == 1        ? ArgFact::EqualsOne
         : value % 16 == 0 ? ArgFact::Divisible16
         : value % 8 == 0  ? ArgFact::Divisible8
                           : ArgFact::None;
}

/// The fact a pointer argument gives: 16-byte alignment.
constexpr ArgFact pointerFact(uint64_t address) {
  return address % 16 == 0 ? ArgFact::Divisible16 : ArgFact::None;
}

/// Whether a parameter of this type takes facts from its argument: pointers
/// and i32, u32, i64, u64 (what a Python int becomes, and their unsigned
/// forms). i1, i8, i16 and floats never do.
constexpr bool takesFacts(bool isPointer, DType dtype) {
  return isPointer || dtype == DType::I32 || dtype == DType::U32 || dtype == DType::I64 ||
         dtype == DType::U64;
}

/// The type of an integer of no fixed width: i32 when it fits, else i64;
/// `aboveInt64` (2**63 <= value < 2**64, `value` holding its bits) is u64.
constexpr DType integerType(int64_t value, bool aboveInt64) {
  if (aboveInt64)
    return DType::U64;
  return value >= INT32_MIN && value <= INT32_MAX ? DType::I32 : DType::I64;
}

/// ":16", ":8", ":1" or "": a fact as a signature entry writes it.
std::string_view factSuffix(ArgFact fact);
/// The divisibility a fact states (16, 8; 1 for None and EqualsOne).
int64_t factDivisibility(ArgFact fact);

/// A runtime argument, as specialisation sees it.
struct RuntimeArg {
  enum class Kind : uint8_t {
    Pointer, // `address`, to elements of `dtype`
    Int,     // an integer of no fixed width (a Python int): `intValue`, or its bits with
             // `aboveInt64`
    Float,   // a float of no fixed width (a Python float)
    Bool,
    Scalar, // a scalar of its own type `dtype` (a numpy int8 or float16; a C++ argument
            // for a parameter of that type): `intValue` for integer types
  };
  Kind kind = Kind::Int;
  DType dtype = DType::I32;
  uint64_t address = 0;
  int64_t intValue = 0;
  bool aboveInt64 = false;

  static RuntimeArg pointer(DType element, uint64_t address) {
    return {Kind::Pointer, element, address};
  }
  static RuntimeArg integer(int64_t value) { return {Kind::Int, DType::I32, 0, value}; }
  /// Any value below 2**64 (`aboveInt64` from 2**63 on).
  static RuntimeArg unsignedInteger(uint64_t value) {
    return {Kind::Int, DType::I32, 0, int64_t(value), value > uint64_t(INT64_MAX)};
  }
  static RuntimeArg real() { return {Kind::Float, DType::F32}; }
  static RuntimeArg boolean() { return {Kind::Bool, DType::I1}; }
  static RuntimeArg scalar(DType dtype, int64_t intValue = 0) {
    return {Kind::Scalar, dtype, 0, intValue};
  }
};

/// What one runtime argument specialises to.
struct ArgSpecialization {
  bool isPointer = false;
  DType dtype = DType::I32;
  ArgFact fact = ArgFact::None;

  /// The signature entry: "*fp16:16", "i32:8", "u64", "fp32".
  std::string entry() const;
};

/// The rule (see the header comment); `allowFacts` false is
/// do_not_specialize.
ArgSpecialization specializeArg(const RuntimeArg &arg, bool allowFacts);

} // namespace tk
