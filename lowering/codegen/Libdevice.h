// Libdevice: fp64 math and the libdevice.NAME functions (extern_elementwise,
// lang/Libdevice.def) through the CUDA toolkit's libdevice bitcode, linked
// into a generated module only when a kernel calls one of its functions.
//
//   llvm::Value *y = callLibdevice(builder, "__nv_exp", {x}, x->getType());  // @__nv_exp(double)
//   ...
//   if (!linkLibdevice(*llmod, options.libdevicePath, options.reflectFtz, diag)) ...
//
// The file is the explicit path when one is given (TargetOptions::
// libdevicePath, from TK_LIBDEVICE_PATH; only that), else the
// first of $CUDA_HOME/nvvm/libdevice/libdevice.10.bc and
// /usr/local/cuda/nvvm/libdevice/libdevice.10.bc that exists; when none
// does, the error names every path tried. Only the functions the
// module uses (and what they call) are linked, and they are internalised so
// O3 inlines them and drops the rest. The module flag nvvm-reflect-ftz
// (1 with `ftz`, Triton's enable_reflect_ftz and tk's default; else 0) makes
// libdevice's __nvvm_reflect("__CUDA_FTZ") pick the flushing or the IEEE
// paths; LLVM's NVVMReflect pass, which the NVPTX target puts at the start
// of O3, resolves those calls. The six round-toward-zero
// integer-to-float functions (__nv_int2float_rz, ...) reach PTX as inline
// cvt.rz instructions, since LLVM 19's InstCombine would fold their nvvm
// intrinsics to round-to-nearest conversions. Private to lowering.
#pragma once

#include "ir/Opcode.h"
#include "lang/Diagnostics.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class IRBuilderBase;
class Module;
class Type;
class Value;
} // namespace llvm

namespace tk {

/// A call of libdevice's `name` on `args`, returning `result` (the function
/// of an extern_elementwise op: "__nv_ldexpf" of a float and an i32),
/// declaring the function, pure, in the insertion block's module. (Also how
/// amdgcn calls ROCm's ocml and ockl functions: ROCmDeviceLibs.h.)
llvm::Value *callLibdevice(llvm::IRBuilderBase &b, std::string_view name,
                           const std::vector<llvm::Value *> &args, llvm::Type *result);

/// The libdevice function of an fp64 math op (exp, exp2, log, log2, sin,
/// cos, rsqrt, erf: "__nv_exp", ...); null for other ops.
const char *libdeviceMathName(Opcode opcode);

/// The paths tried for libdevice, in order: `explicitPath` alone when it is
/// not empty.
std::vector<std::string> libdeviceCandidates(const std::string &explicitPath);

/// Links into `m` the functions it declares that `provides` names, from the
/// bitcode file `path` (`what` names it in errors: "libdevice"), with what
/// they call, internalised; each must be defined there with the type `m`
/// calls it with. True on success, false after reporting an error. (Also
/// ROCm's ocml and ockl: ROCmDeviceLibs.h.)
bool linkBitcodeLibrary(llvm::Module &m, const std::string &path, std::string_view what,
                        const std::function<bool(std::string_view)> &provides,
                        DiagnosticEngine &diag);

/// Links the libdevice functions `m` declares; true when there were none or
/// the link succeeded, false after reporting an error.
bool linkLibdevice(llvm::Module &m, const std::string &explicitPath, bool ftz,
                   DiagnosticEngine &diag);

} // namespace tk
