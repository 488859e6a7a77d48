// `tkc --aot`: ahead-of-time kernels for host C++ programs. Writes a header
// and a source file that embed the PTX (and, when ptxas is available, the
// cubin) of one kernel in one or several configs, a typed launch function per
// config and a dispatcher that autotunes by the key on first use and
// remembers the choice (docs/autotune.md, "Ahead of time").
//
//   tkc --aot tutorials/02-fused-softmax.tk --kernel softmax_kernel
//       --signature "*fp32:16, *fp32:16, i32, i32, i32, i32"
//       --config "BLOCK_SIZE=1024,num_warps=4" --config "BLOCK_SIZE=1024,num_warps=8"
//       --key n_cols -o build/softmax                     (one line)
//   -> build/softmax.h, build/softmax.cpp; link them with libtk.
#pragma once

namespace tk::tkc {

/// True when `--aot` is among the arguments.
bool wantsAot(int argc, char **argv);
/// Runs `tkc --aot ...`; tkc's exit status (0 ok, 1 compile errors, 2 usage).
int aotCommand(int argc, char **argv);

} // namespace tk::tkc
