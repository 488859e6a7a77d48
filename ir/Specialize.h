// Specialize: what one compile of a kernel is specialised on, and how each
// parameter of the kernel becomes an IR argument or a compile-time constant.
//
// A kernel is compiled for a signature, Triton's notation for the parameters'
// types and the facts a launch knows about their values:
//
//   "*fp32:16"   a pointer to fp32 whose address is divisible by 16
//   "*fp16"      a pointer with no alignment promise
//   "i32"        a 32-bit integer
//   "i32:16"     an integer divisible by 16
//   "i32:1"      an integer equal to 1 (it becomes the constant 1)
//   "1024", "0.5", "True", "fp16"
//                a constant (a constexpr parameter's value)
//   "tensordesc<fp16[64,64]>"
//                a host tensor descriptor (tk.tools.tensor_descriptor's
//                TensorDescriptor) of fp16 with that block shape (padding
//                "zero"; "tensordesc<fp16[64,64],nan>" pads with NaN;
//                "tensordesc<fp16[64,64]{16,1}>" also says the first size is
//                divisible by 16, as "i32:16" says of an integer;
//                "tensordesc<fp16[64,64],tma>" (after the padding, if any)
//                also passes the host's CUtensorMap and loads through TMA,
//                sm_90 and above: Python's launch adds it under TK_TMA=1)
//
// For
//
//   @tk.jit
//   def add(x_ptr, y_ptr, n, BLOCK: tk.constexpr = 256): ...
//
// and the signature "*fp32:16, *fp32, i32:16, 1024", x_ptr becomes
// `%arg0: ptr<fp32> {divisibility = 16}`, y_ptr `%arg1: ptr<fp32>`, n
// `%arg2: i32 {divisibility = 16}`, and BLOCK the constant 1024 (no argument).
// The signature may also leave the constexpr parameters out ("*fp32:16,
// *fp32, i32:16"); they then come from KernelSpec::constants (tkc's -D) or
// their defaults. A parameter's annotation ("*fp32:16", tk.constexpr) is used
// when the signature is empty. `@tk.jit(do_not_specialize=["n"])` (or
// KernelSpec::doNotSpecialize) keeps a parameter's type but drops its
// divisibility and equal-to-1 facts, so one compiled kernel serves all values.
//
// A tensor descriptor parameter of rank R becomes 2R IR arguments, in order:
// the base pointer, the R sizes (i32) and the first R - 1 strides (i64); the
// last stride is the constant 1. The host side checks what TMA would need
// (a 16-byte aligned base and 16-byte multiples for the other strides), so
// the base has divisibility 16 and each stride 16 bytes' worth of elements.
// The IR arguments are named "desc", "desc.shape[0]", ..., "desc.strides[0]",
// ... after the parameter "desc". A `tma` descriptor has one argument more,
// last: the 128-byte CUtensorMap the host encoded ("desc.tensormap", a
// `ptr<i8>` with the argument attribute `tensormap`, passed by value as
// `.param .align 64 .b8 [128]`, what `__grid_constant__ const CUtensorMap`
// compiles to).
#pragma once

#include "lang/AST.h"
#include "lang/DType.h"
#include "lang/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// A compile-time value given from outside: a -D value, a signature constant
/// or a Python constexpr argument. A Function is a @tk.jit function passed as
/// a constexpr (`kernel[grid](..., ACT=silu)`), by name: `stringValue` names a
/// function among the compiled sources, which calls through the parameter
/// inline (`ACT(x)` is `silu(x)`). A Builtin is a tk builtin passed the same
/// way (`func=tl.extra.cuda.globaltimer`), `stringValue` its name in
/// lang/Builtins.def ("cuda.globaltimer"). A Tuple holds its `elements` (a
/// constexpr `out_shape=(8, 8)`).
struct ConstValue {
  enum class Kind : uint8_t { None, Bool, Int, Float, String, DType, Function, Builtin, Tuple };
  Kind kind = Kind::None;
  bool boolValue = false;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;
  DType dtype = DType::I32;
  std::vector<ConstValue> elements; // Tuple

  static ConstValue none() { return {}; }
  static ConstValue ofBool(bool v);
  static ConstValue ofInt(int64_t v);
  static ConstValue ofFloat(double v);
  static ConstValue ofString(std::string v);
  static ConstValue ofDType(DType v);
  static ConstValue ofFunction(std::string name);
  static ConstValue ofBuiltin(std::string name);
  static ConstValue ofTuple(std::vector<ConstValue> elements);

  /// Python's spelling: 128, 0.5, True, None, 'leaky_relu', tk.float16.
  std::string str() const;
};

/// Parses a -D value: an integer (decimal or 0x hex, optionally negative), a
/// float (1.5, 1e-5, inf, nan), True/False, None, a dtype ("fp16",
/// "float16", "tk.float16"), a quoted string ('x' or "x"), or else the text
/// itself as a string (so `-D ACTIVATION=leaky_relu` works unquoted).
ConstValue parseConstValue(std::string_view text);

/// What a kernel compile is specialised on.
struct KernelSpec {
  std::string kernel;    // the @tk.jit function to compile
  std::string signature; // Triton-style; empty: from the parameters' annotations
  std::map<std::string, ConstValue> constants; // constexpr parameters and globals by name
  std::vector<std::string> doNotSpecialize;    // in addition to the decorator's list
  int numWarps = 4; // the compile's num_warps (tk.extra.cuda.num_threads is 32 x this)
};

/// How one kernel parameter is lowered.
struct ParamBinding {
  std::string name;
  SourceLoc loc;
  /// A constexpr, or an integer specialised to the constant 1: `value` holds
  /// it. A constexpr has no IR argument; a specialised integer keeps one.
  bool isConstant = false;
  ConstValue value;
  /// Has an IR argument (of `dtype`, a pointer to `dtype` when isPointer).
  bool isArgument = false;
  bool isPointer = false;
  /// A pointer annotated `tk.const`: read-only (ptr<dtype, const>).
  bool isConst = false;
  DType dtype = DType::I32;
  /// 16 for "*fp32:16" / "i32:16"; 1 when nothing is known.
  int64_t divisibility = 1;
  /// One IR argument of a tensor descriptor parameter (see the header): its
  /// index among the descriptor's 2R arguments (0 the base, 1..R the sizes,
  /// R+1..2R-1 the strides), else -1. Every part carries the descriptor's
  /// element type, block shape and padding.
  int descriptorPart = -1;
  std::string descriptorParam; // the parameter's name
  DType descriptorDType = DType::F32;
  std::vector<int64_t> blockShape;
  std::string padding; // "zero" or "nan"
  bool tma = false;    // the descriptor has a CUtensorMap (part 2R)
};

/// One entry of a signature string, parsed.
struct SignatureEntry {
  enum class Kind : uint8_t { Pointer, Scalar, Constant, Descriptor };
  Kind kind = Kind::Scalar;
  DType dtype = DType::I32;               // a Descriptor's element type
  std::vector<int64_t> blockShape;        // Descriptor
  std::vector<int64_t> shapeDivisibility; // Descriptor: per size; empty when not given
  std::string padding = "zero";           // Descriptor
  bool tma = false;                       // Descriptor: ",tma", a CUtensorMap is passed
  int64_t divisibility = 1;               // after ':'; 1 when absent
  bool equalsOne = false;                 // an integer written "i32:1": its value is 1
  ConstValue constant;                    // Kind::Constant
};

/// Parses "*fp32:16, i32, 1024" into entries; reports a malformed entry at
/// `loc` and returns nullopt.
std::optional<std::vector<SignatureEntry>> parseSignature(std::string_view text, SourceLoc loc,
                                                          DiagnosticEngine &diag);

/// The parameters `@tk.jit(do_not_specialize=[...])` on `fn` names (by name
/// or index).
std::set<std::string> decoratorDoNotSpecialize(const ast::FunctionDef &fn);

/// Decides every parameter of `fn` for `spec`. Reports (at the parameter)
/// a parameter with no type and no value, a signature of the wrong length,
/// a constexpr without a value; returns false after reporting.
bool specializeParams(const ast::FunctionDef &fn, const KernelSpec &spec, DiagnosticEngine &diag,
                      std::vector<ParamBinding> &out);

} // namespace tk
