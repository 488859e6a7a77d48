// Resources: what a compiled kernel takes of an SM, and the occupancy that
// gives, for the `registers` remark (docs/remarks.md).
//
//   std::vector<PtxasUsage> found;
//   std::string error;
//   if (ptxasResources(ptx, "sm_90", found, error))   // runs `ptxas -v`
//     Occupancy o = occupancy("sm_90", found[0].registers, sharedBytes, 128);
//     // o.blocksPerSm = 16, o.limit = "registers" ...
//
// The occupancy is the CUDA occupancy calculator's arithmetic on the arch's
// published limits (registers allocated per warp in units of 256, 1 KiB of
// shared memory reserved per block, the SM's thread, block and shared
// memory limits); it is computed, not measured.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// One kernel of `ptxas -v`'s report.
struct PtxasUsage {
  std::string name;
  int64_t registers = 0;   // per thread
  int64_t spillStores = 0; // bytes
  int64_t spillLoads = 0;  // bytes
  int64_t stackBytes = 0;  // the local-memory stack frame per thread
};

/// Parses `ptxas -v`'s messages.
std::vector<PtxasUsage> parsePtxasReport(std::string_view report);

/// Assembles `ptx` for `arch` with `ptxas -v` (driver/Ptxas.h) and reads its
/// report; false with `error` when ptxas is not found or fails. `cubin`,
/// when given, gets what ptxas assembled.
bool ptxasResources(const std::string &ptx, const std::string &arch, std::vector<PtxasUsage> &out,
                    std::string &error, std::string *cubin = nullptr);

struct Occupancy {
  int64_t blocksPerSm = 0;
  int64_t warpsPerSm = 0;
  int64_t maxWarpsPerSm = 0;
  int64_t percent = 0; // warpsPerSm of maxWarpsPerSm
  std::string limit;   // "registers", "shared memory", "threads", "blocks"
  int64_t byRegisters = 0, bySharedMemory = 0, byThreads = 0, byBlocks = 0;
};

/// Blocks per SM of a kernel of `threads` threads per block, `registers`
/// per thread and `sharedBytes` per block on `arch` (sm_80 .. sm_90a).
Occupancy occupancy(std::string_view arch, int64_t registers, int64_t sharedBytes, int64_t threads);

} // namespace tk
