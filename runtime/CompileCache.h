// CompileCache: tk's compile cache, in memory for the process and on disk
// under $TK_CACHE_DIR, plus the pieces it is built from (a SHA-256 key, the
// cache directory's resolution, verified entries written atomically through
// driver/Files.h), which the autotuner's persistence reuses.
//
//   CacheKeyBuilder b;                 // every input of a compile, in order
//   b.add(compilerVersion());
//   b.add(source); b.add(kernelName); b.add(signature); b.add(int64_t(numWarps));
//   CacheKey key = b.key();            // SHA-256 of the length-prefixed fields
//
//   CompileCache &cache = CompileCache::process();
//   std::string payload;
//   if (!cache.lookup(key, CacheKind::Kernel, payload)) {
//     payload = ...compile...;
//     cache.store(key, CacheKind::Kernel, payload);  // memory, then disk
//   }
//
// On disk an entry is one file, `<dir>/<64 hex digits of the key>.<kind>`:
// an 88-byte header (magic "tkcache\0", format version, payload kind, the
// key, payload size, SHA-256 of kind, key and payload; integers
// little-endian) and the payload. It is written to a unique temporary file in
// the same directory and then renamed over the entry, so a reader sees
// either no entry or a whole one, and any number of threads and processes
// may write the same key at once. Every read checks magic, version, kind,
// key, size and checksum; any mismatch (a truncated file, a flipped byte,
// another key's entry, even with its key field rewritten, garbage, a file
// over 256 MiB) is a miss, and the caller recompiles and rewrites. Only a
// regular file is read, and without blocking: a directory, FIFO, device or
// socket in the way is a miss too.
//
// Knobs: TK_CACHE_DIR names the directory (set but empty: memory only);
// unset, it is $XDG_CACHE_HOME/tk or ~/.cache/tk. A directory that cannot be
// created or written leaves the cache in memory, silently: the cache is an
// optimisation and never an error for the user. TK_ALWAYS_COMPILE=1 makes
// every lookup miss (writes still happen).
#pragma once

#include "driver/Files.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace tk {

/// SHA-256 (FIPS 180-4), incremental.
class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> finish();

private:
  void block(const uint8_t *p);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

/// A cache key: the SHA-256 of every input of whatever is cached.
struct CacheKey {
  std::array<uint8_t, 32> bytes{};
  std::string hex() const;
  bool operator==(const CacheKey &) const = default;
  auto operator<=>(const CacheKey &) const = default;
};

/// Builds a key from fields. Each field is hashed with its length in front,
/// so ("ab", "c") and ("a", "bc") give different keys.
class CacheKeyBuilder {
public:
  CacheKeyBuilder &add(std::string_view field);
  CacheKeyBuilder &add(int64_t value);
  CacheKey key();

private:
  Sha256 hash_;
};

/// What a cache entry holds; part of the entry's header and file name.
enum class CacheKind : uint32_t {
  Kernel = 1,   // GpuKernel: metadata and PTX
  Cubin = 2,    // GpuKernel: the cubin for one driver version and device
  Autotune = 3, // the autotuner's chosen configuration
};

/// "kernel", "cubin", "autotune": the entry file's extension.
const char *cacheKindName(CacheKind kind);

/// The compiler's identity for cache keys: tk's version and git commit at
/// configure time, plus the size and modification time of the library file
/// this code was loaded from, so that a rebuilt compiler never reads entries
/// of the previous build.
const std::string &compilerVersion();

/// The disk cache directory from the environment (see the header comment);
/// empty for "memory only". The pure form takes the variables' values (null:
/// unset).
std::string cacheDirectory();
std::string resolveCacheDirectory(const char *tkCacheDir, const char *xdgCacheHome,
                                  const char *home);
/// TK_ALWAYS_COMPILE is set to something other than "" or "0".
bool alwaysCompile();

/// The outcome of reading an entry.
enum class CacheRead { Hit, Missing, Corrupt };

/// Writes a verified entry (header + payload) atomically to `path`.
bool writeCacheEntry(const std::string &path, const CacheKey &key, CacheKind kind,
                     std::string_view payload, std::string &error);
/// Reads and verifies the entry at `path`; the payload on Hit, otherwise
/// `why` says what was wrong (Corrupt) or that there is no file (Missing).
CacheRead readCacheEntry(const std::string &path, const CacheKey &key, CacheKind kind,
                         std::string &payload, std::string &why);

/// Length-prefixed fields for cache payloads. The reader never reads past
/// its input: a short or malformed payload makes ok() false.
class ByteWriter {
public:
  void u32(uint32_t v);
  void u64(uint64_t v);
  void str(std::string_view s);
  std::string &bytes() { return out_; }

private:
  std::string out_;
};

class ByteReader {
public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  uint32_t u32();
  uint64_t u64();
  std::string str();
  /// Every read succeeded and the whole input was consumed.
  bool done() const { return ok_ && pos_ == in_.size(); }
  bool ok() const { return ok_; }

private:
  bool take(size_t n);
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

/// The two-level cache. Thread-safe.
class CompileCache {
public:
  /// `dir` empty: memory only. `readsEnabled` false: lookups always miss
  /// (TK_ALWAYS_COMPILE).
  explicit CompileCache(std::string dir, bool readsEnabled = true);

  /// The process's cache, configured from the environment at first use.
  static CompileCache &process();

  /// Memory first, then disk (a disk hit is kept in memory). A corrupt disk
  /// entry counts as a miss and is replaced by the next store().
  bool lookup(const CacheKey &key, CacheKind kind, std::string &payload);
  /// Keeps `payload` in memory and writes it to disk when there is a usable
  /// directory. A failed disk write is counted, remembered in lastError(),
  /// and otherwise ignored.
  void store(const CacheKey &key, CacheKind kind, std::string_view payload);

  /// The file an entry lives in; empty when memory only.
  std::string entryPath(const CacheKey &key, CacheKind kind) const;
  const std::string &directory() const { return dir_; }

  struct Stats {
    unsigned memoryHits = 0, diskHits = 0, misses = 0, corrupt = 0, writes = 0, writeFailures = 0;
  };
  Stats stats() const;
  std::string lastError() const;

private:
  std::string dir_;
  bool readsEnabled_;
  bool dirReady_ = false; // created once, lazily, on the first store
  mutable std::mutex mutex_;
  std::map<std::pair<CacheKey, CacheKind>, std::string> memory_;
  Stats stats_;
  std::string lastError_;
};

} // namespace tk
