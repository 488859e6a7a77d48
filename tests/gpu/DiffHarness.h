// The differential test's machinery: run a CaseRun (DiffCase.h) in the
// interpreter or on the GPU, assemble its PTX with ptxas, and compare one
// output against another element by element.
//
//   CaseRun run = def.build(rng);
//   RunOutputs interp, gpu;
//   if (!runInterpreter(run, interp, error)) ...
//   GpuKernel *k = GpuKernel::compile(run.source, "case.tk", run.opts, error);
//   if (!runOnGpu(run, *k, gpu, error)) ...
//   std::string diff = compareOutput(run, 0, interp, gpu);   // "" when equal
//
// Unwritten elements: the interpreter's outputs start unwritten (reading one
// is an error there) and report what the kernel wrote; the GPU's start as
// 0xff bytes (NaN for floats). An element the reference leaves unwritten
// (a masked-off lane) must be unwritten on the other side too.
#pragma once

#include "DiffCase.h"

#include <optional>
#include <string>
#include <vector>

namespace tk::difftest {

/// The contents of a run's output buffers, in the order of CaseRun::buffers
/// restricted to outputs. `written` is empty when unknown (the GPU: an
/// element is unwritten when all its bytes are still 0xff).
struct RunOutputs {
  std::vector<std::vector<std::byte>> bytes;
  std::vector<std::vector<bool>> written;
};

/// Front end, AST -> IR for the specialisation, then the interpreter.
bool runInterpreter(const CaseRun &run, RunOutputs &out, std::string &error);

/// Uploads the inputs, presets outputs to 0xff bytes, launches and
/// downloads the outputs.
bool runOnGpu(const CaseRun &run, const GpuKernel &kernel, RunOutputs &out, std::string &error);

/// The host reference's outputs, as RunOutputs.
RunOutputs referenceOutputs(const CaseRun &run);

/// Compares output number `k` of `got` against `want`; "" when they agree,
/// else the number of differing elements and the first few, each with the
/// inputs of the same index.
std::string compareOutput(const CaseRun &run, size_t k, const RunOutputs &want,
                          const RunOutputs &got);

/// Whether a compile error is the back end's "... not supported ... yet".
bool isNotSupportedYet(const std::string &error);

/// ptxas: $TK_PTXAS_PATH, /usr/local/cuda/bin/ptxas, or the one on PATH;
/// nullopt when there is none.
std::optional<std::string> findPtxas();

/// Assembles `ptx` with `ptxas -arch=<arch>`; false with its log.
bool assemblePTX(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                 std::string &log);

} // namespace tk::difftest
