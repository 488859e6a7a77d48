// TargetOptions: what the GPU back end is compiling for. Plain data, free of
// LLVM headers, so tkc and the driver can fill it in.
//
//   TargetOptions opts;
//   opts.arch = "sm_90a";     // sm_80, sm_86, sm_89, sm_90, sm_90a
//   opts.numWarps = 8;        // used where a kernel has no num_warps attribute
#pragma once

#include <string>

namespace tk {

struct TargetOptions {
  /// The GPU architecture, `sm_NN` with an optional `a` suffix (sm_80+).
  std::string arch = "sm_90";
  /// Warps per program for kernels whose IR does not say (a function's
  /// `num_warps` attribute, set by --coalesce, wins).
  int numWarps = 4;
};

} // namespace tk
