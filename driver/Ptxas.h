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
#include <vector>

namespace tk {

/// What driver/Lld.cpp shares: `name` in each directory of PATH, in order;
/// the first of `candidates` that is an executable file, or "" with
/// `searched` listing them all.
std::vector<std::string> onPath(const char *name);
std::string firstExecutable(const std::vector<std::string> &candidates, std::string &searched);
/// Runs the program `args[0]` (a path) on a file: `input` is written to
/// `inName` in a private temporary directory, the arguments "{in}" and
/// "{out}" stand for that file and for `outName` beside it, and on exit
/// status 0 `output` is the file `outName`. `messages` is what the program
/// printed. False with a reason ("PROGRAM ARG1 failed (exit status N):" and
/// the messages) otherwise; the directory is removed either way.
bool runOnFile(std::vector<std::string> args, const std::string &input, const std::string &inName,
               const std::string &outName, std::string &output, std::string &messages,
               std::string &error);

/// The ptxas to run, or "" with `searched` listing the places looked at.
std::string findPtxas(std::string &searched);

/// Runs `ptxas -arch=<arch> [-O<optLevel>]` on `ptx` in a private temporary
/// directory; the cubin (an ELF image) on success, ptxas's own messages on
/// failure. optLevel -1: ptxas's default (-O3). With `verbose`, ptxas runs
/// with -v and its report (registers, spills, stack per kernel) goes there.
bool assembleWithPtxas(const std::string &ptx, const std::string &arch, std::string &cubin,
                       std::string &error, int optLevel = -1, std::string *verbose = nullptr);

} // namespace tk
