// Ptxas: PTX -> cubin with the CUDA toolkit's `ptxas`, for ahead-of-time
// builds (`tkc --emit=cubin`) on machines that have the toolkit but maybe
// no GPU, and one of GpuKernel's PTX compilers at run time
// (TK_PTX_COMPILER=ptxas; docs/driver.md).
//
//   std::string cubin, error;
//   if (!assembleWithPtxas(ptx, "sm_90", cubin, error))
//     ... "ptxas not found: set TK_PTXAS_PATH to it, or CUDA_HOME, or put it on
//          PATH (looked at: ...)", or "/usr/local/cuda/bin/ptxas -arch=sm_90
//          failed (exit status 255):" and ptxas's own messages
//
// ptxas is found through TK_PTXAS_PATH (the program itself), then
// $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH. A TK_PTXAS_PATH that is
// not an executable is an error (no fallback).
#pragma once

#include <string>

namespace tk {

/// The ptxas to run, or "" with `searched` listing the places looked at.
std::string findPtxas(std::string &searched);

/// Runs `ptxas -arch=<arch> [-O<optLevel>]` on `ptx` in a private temporary
/// directory; the cubin (an ELF image) on success, ptxas's own messages on
/// failure. optLevel -1: ptxas's default (-O3). With `verbose`, ptxas runs
/// with -v and its report (registers, spills, stack per kernel) goes there.
bool assembleWithPtxas(const std::string &ptx, const std::string &arch, std::string &cubin,
                       std::string &error, int optLevel = -1, std::string *verbose = nullptr);

} // namespace tk
