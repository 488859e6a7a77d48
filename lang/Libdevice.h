// Libdevice: the table of CUDA libdevice functions kernels call by Triton's
// names, `libdevice.NAME` (tk.language.extra.libdevice and
// tk.language.extra.cuda.libdevice), from lang/Libdevice.def.
//
// A function has overloads, each one libdevice symbol for one list of
// argument dtypes:
//
//   const LibdeviceFunction &pow = libdeviceFunction(BuiltinId::LibdevicePow);
//   pow.name == "pow"; pow.arity == 2;
//   pow.overloads[0].symbol == "__nv_powif";     // (fp32, int32) -> fp32
//   pow.overloads[0].args == {DType::F32, DType::I32};
//   findLibdeviceOverload("__nv_powf")->result == DType::F32;
//
// The front end picks an overload (ir/ASTToIRBuiltinsLibdevice.cpp), the IR
// names its symbol (`extern_elementwise {symbol = "__nv_powf"}`), which the
// verifier checks against this table, the interpreter computes
// (interpreter/InterpreterLibdevice.cpp) and the GPU code calls.
#pragma once

#include "lang/Builtins.h"
#include "lang/DType.h"

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tk {

struct LibdeviceOverload {
  std::string_view symbol; // "__nv_asinf"
  DType result;
  std::vector<DType> args;
};

struct LibdeviceFunction {
  BuiltinId id;          // BuiltinId::Libdevice<Enum>
  std::string_view name; // "asin", without "libdevice."
  unsigned arity;
  std::vector<const LibdeviceOverload *> overloads; // in table order
};

/// Every function, in table order.
std::span<const LibdeviceFunction> allLibdeviceFunctions();
/// The function of a `libdevice.NAME` builtin, or null for other builtins.
const LibdeviceFunction *libdeviceFunction(BuiltinId id);
/// The overload whose symbol is `symbol`, or null.
const LibdeviceOverload *findLibdeviceOverload(std::string_view symbol);

} // namespace tk
