// DType: the scalar element types of tk, shared by the front end, the IR and
// the drivers.
//
// Every dtype has three spellings, and this file is the one place that maps
// between them:
//   - the IR name:        i1 i8 i16 i32 i64 u8 u16 u32 u64 fp16 bf16 fp32 fp64
//                         fp8e4nv fp8e5 fp8e4b15
//   - the Python name:    tk.int1 tk.int8 ... tk.uint64 tk.float16 tk.bfloat16
//                         tk.float32 tk.float64 tk.float8e4nv tk.float8e5
//                         tk.float8e4b15 (aliases: tk.fp16, tk.fp32, ...)
//   - Triton's signature: "i1" "i8" ... "u64" "fp16" "bf16" "fp32" "fp64"
//                         (the same as the IR name; "*fp32:16" is a pointer)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tk {

enum class DType : uint8_t {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND) ENUM,
#include "lang/DTypes.def"
};

enum class DTypeKind : uint8_t { Bool, SignedInt, UnsignedInt, Float };

/// "fp32", "i32", ...: the IR and signature spelling.
std::string_view dtypeName(DType t);
/// "float32", "int32", ...: the name after `tk.`.
std::string_view dtypePythonName(DType t);
unsigned dtypeBits(DType t);
DTypeKind dtypeKind(DType t);

inline bool isFloat(DType t) { return dtypeKind(t) == DTypeKind::Float; }
/// fp8e4nv, fp8e5, fp8e4b15: storage-only floats (lang/Float16.h).
inline bool isFp8(DType t) { return t == DType::F8E4NV || t == DType::F8E5 || t == DType::F8E4B15; }
inline bool isInteger(DType t) { return !isFloat(t); } // i1 counts as an integer
inline bool isSigned(DType t) { return dtypeKind(t) == DTypeKind::SignedInt; }
inline bool isUnsigned(DType t) { return dtypeKind(t) == DTypeKind::UnsignedInt; }
inline unsigned dtypeBytes(DType t) { return dtypeBits(t) == 1 ? 1 : dtypeBits(t) / 8; }

/// Parses an IR/signature spelling ("fp16", "i32", ...).
std::optional<DType> parseDTypeName(std::string_view name);
/// Parses a dtype in a signature or a parameter's type string: the IR
/// spelling, or Triton's other spellings of a boolean ("bool", and "u1",
/// which Triton canonicalises every boolean to). All are i1.
std::optional<DType> parseSignatureDTypeName(std::string_view name);
/// Parses a name after `tk.`: "float16", "fp16", "int32", "bfloat16", ...
std::optional<DType> parseDTypePythonName(std::string_view name);

} // namespace tk
