// ASTToIR: lowers one checked kernel (and the @tk.jit helpers it calls) to
// block IR, specialised for a signature and constexpr values.
//
//   SourceManager sm;  ast::Context actx;  DiagnosticEngine diag(sm);
//   ast::Module *m = parseAndCheck(sm, sm.addBuffer("add.tk", text), actx, diag);
//   IRContext ctx(sm);
//   Module module(ctx);
//   KernelSpec spec;
//   spec.kernel = "add_kernel";
//   spec.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
//   spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
//   Function *fn = lowerKernel(*m, spec, ctx, module, diag);   // null on errors
//
// gives
//
//   func @add_kernel(%arg0: ptr<fp32> {divisibility = 16}, ..., %arg3: i32) {
//     %0 = program_id {axis = 0} : i32
//     %1 = constant {value = 1024} : i32
//     %2 = mul %0, %1 : i32
//     %3 = make_range {end = 1024, start = 0} : tensor<1024xi32>
//     %4 = splat %2 : i32 -> tensor<1024xi32>
//     ...
//
// While lowering, a value is either an IR value or a compile-time constant
// (int, float, bool, None, string, dtype, tuple, a @tk.jit function).
// Constant expressions fold with Python's semantics; `if` on a constant lowers
// only the branch taken; `tk.static_range` unrolls; `range`/`tk.range` become
// `for` ops carrying the variables the body assigns; `while` becomes `while`;
// a dynamic `if` yields the variables its branches assign; helpers are inlined
// (constant arguments stay constant inside them). Operands of tensor
// operations are broadcast (NumPy rules) and promoted (Triton's rules,
// docs/semantics.md); every shape or type error is a diagnostic at the
// offending expression that names the shapes or types. The function verifies
// (a verifier failure is reported as an internal error).
#pragma once

#include "ir/IRContext.h"
#include "ir/Module.h"
#include "ir/Specialize.h"
#include "lang/AST.h"
#include "lang/Diagnostics.h"

#include <vector>

namespace tk {

/// Lowers `spec.kernel` of `m` into `out`; returns the new function, or null
/// after reporting diagnostics (`out` is then left without it).
Function *lowerKernel(const ast::Module &m, const KernelSpec &spec, IRContext &ctx, Module &out,
                      DiagnosticEngine &diag);

/// The functions of `m` that no other function of `m` calls or names: the
/// kernels (the rest are helpers, lowered by inlining), in source order.
std::vector<const ast::FunctionDef *> kernelEntryPoints(const ast::Module &m);

} // namespace tk
