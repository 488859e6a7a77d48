// Files: whole-file writes that readers never see half done, and bounded
// whole-file reads, each returning a reason instead of printing. Ptxas.cpp
// hands PTX to ptxas and reads its cubin back through them; the runtime's
// compile cache (runtime/CompileCache.h) writes and reads its entries with
// them, so that any number of threads and processes may write one entry at
// once.
//
//   std::string error;
//   if (!createDirectories("/tmp/tk/a/b", error))       // every missing parent too
//     ... "cannot create '/tmp/tk/a': Permission denied"
//   writeFileAtomic("/tmp/tk/a/b/x.ptx", ptx, error);    // x.ptx.tmp.<pid>.<thread>.<n>, renamed
//   std::string bytes;
//   readWholeFile("/tmp/tk/a/b/x.ptx", bytes, error);    // false for a directory, a short
//                                                       // read, a file past maxBytes
//                                                       // or a FIFO (never waits on one)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tk {

/// Creates `dir` and its parents (mode 0755 less umask). False with a reason.
bool createDirectories(const std::string &dir, std::string &error);
/// Writes `bytes` to `path` through a unique temporary file in the same
/// directory and rename(2); the directory must exist. False with a reason
/// (and no temporary file left behind).
bool writeFileAtomic(const std::string &path, std::string_view bytes, std::string &error);
/// Reads a whole regular file of at most `maxBytes`. False with a reason,
/// without blocking, for anything else at `path` (a FIFO, a device, a
/// socket, a directory).
bool readWholeFile(const std::string &path, std::string &bytes, std::string &error,
                   size_t maxBytes = size_t(1) << 30);

} // namespace tk
