// `tkc run`: compiles one kernel and runs it in the CPU interpreter on
// generated inputs, printing a summary of what it wrote (docs/tkc.md,
// docs/interpreter.md).
//
//   tkc run tutorials/01-vector-add.tk --kernel add_kernel --grid 4
//       --signature "*fp32, *fp32, *fp32, i32" -D BLOCK_SIZE=256
//       --size 1000 --arg n_elements=1000 --out output_ptr      (one line)
#pragma once

namespace tk::tkc {

/// Runs `tkc run ARGS...` (argv[0] is "run"); returns tkc's exit status:
/// 0 success, 1 the kernel or its run has errors, 2 bad usage.
int runCommand(int argc, char **argv);

} // namespace tk::tkc
