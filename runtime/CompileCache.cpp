#include "runtime/CompileCache.h"

#include "support/Knobs.h"
#include "tk/Version.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

#ifndef TK_GIT_COMMIT
#define TK_GIT_COMMIT "unknown"
#endif

namespace tk {

//===----------------------------------------------------------------------===//
// SHA-256
//===----------------------------------------------------------------------===//

namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

} // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 |
           uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3], e = state_[4], f = state_[5],
           g = state_[6], h = state_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 =
        h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::update(const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
  total_ += size;
  while (size > 0) {
    size_t n = std::min(size, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, n);
    buffered_ += n;
    p += n;
    size -= n;
    if (buffered_ == sizeof(buffer_)) {
      block(buffer_);
      buffered_ = 0;
    }
  }
}

std::array<uint8_t, 32> Sha256::finish() {
  // Padding: 0x80, zeros up to 56 mod 64, then the length in bits, big-endian.
  uint64_t bits = total_ * 8;
  uint8_t pad[72] = {0x80};
  size_t padLen = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i)
    pad[padLen + i] = uint8_t(bits >> (56 - 8 * i));
  update(pad, padLen + 8);
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = uint8_t(state_[i] >> (24 - 8 * j));
  return out;
}

std::string CacheKey::hex() const {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

CacheKeyBuilder &CacheKeyBuilder::add(std::string_view field) {
  uint64_t n = field.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = uint8_t(n >> (8 * i));
  hash_.update(len, sizeof len);
  hash_.update(field);
  return *this;
}

CacheKeyBuilder &CacheKeyBuilder::add(int64_t value) { return add(std::to_string(value)); }

CacheKey CacheKeyBuilder::key() {
  CacheKey k;
  k.bytes = hash_.finish();
  return k;
}

const char *cacheKindName(CacheKind kind) {
  switch (kind) {
  case CacheKind::Kernel:
    return "kernel";
  case CacheKind::Cubin:
    return "cubin";
  case CacheKind::Autotune:
    return "autotune";
  }
  return "entry";
}

//===----------------------------------------------------------------------===//
// Version, directory, knobs
//===----------------------------------------------------------------------===//

const std::string &compilerVersion() {
  static const std::string version = [] {
    std::string v = "tk " TK_VERSION_STRING " " TK_GIT_COMMIT;
    // The library file's size and mtime: a rebuild in a working tree keeps
    // the configure-time commit but changes these.
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void *>(&compilerVersion), &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0)
      v += fmt::format(" lib:{}:{}.{}", uint64_t(st.st_size), int64_t(st.st_mtim.tv_sec),
                       int64_t(st.st_mtim.tv_nsec));
    return v;
  }();
  return version;
}

std::string resolveCacheDirectory(const char *tkCacheDir, const char *xdgCacheHome,
                                  const char *home) {
  if (tkCacheDir)
    return tkCacheDir; // set but empty: memory only
  if (xdgCacheHome && *xdgCacheHome)
    return std::string(xdgCacheHome) + "/tk";
  if (home && *home)
    return std::string(home) + "/.cache/tk";
  return "";
}

std::string cacheDirectory() {
  std::optional<std::string> dir = readRaw(Knob::CacheDir);
  return resolveCacheDirectory(dir ? dir->c_str() : nullptr, std::getenv("XDG_CACHE_HOME"),
                               std::getenv("HOME"));
}

bool alwaysCompile() {
  // A value the knob does not take is reported by the compile that reads it
  // first (GpuKernel, Python); here it is the default.
  return readBool(Knob::AlwaysCompile).value;
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

namespace {

constexpr char kMagic[8] = {'t', 'k', 'c', 'a', 'c', 'h', 'e', '\0'};
// 2: the checksum covers the kind and the key as well as the payload.
constexpr uint32_t kFormatVersion = 2;
// magic, version, kind, key, payload size, checksum.
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 32 + 8 + 32;
// The largest entry read: far above any PTX or cubin tk makes (a few MB), so
// a huge file where an entry should be costs one bounded read, not memory
// without limit.
constexpr size_t kMaxEntryBytes = size_t(256) << 20;

std::string entryHeader(const CacheKey &key, CacheKind kind, std::string_view payload) {
  ByteWriter w;
  w.bytes().append(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  w.u32(uint32_t(kind));
  w.bytes().append(reinterpret_cast<const char *>(key.bytes.data()), key.bytes.size());
  w.u64(payload.size());
  // The checksum binds the payload to its kind and key: an entry copied under
  // another key's name with its key field rewritten still fails here.
  uint8_t kindBytes[4];
  for (int i = 0; i < 4; ++i)
    kindBytes[i] = uint8_t(uint32_t(kind) >> (8 * i));
  Sha256 sum;
  sum.update(kindBytes, sizeof kindBytes);
  sum.update(key.bytes.data(), key.bytes.size());
  sum.update(payload);
  auto digest = sum.finish();
  w.bytes().append(reinterpret_cast<const char *>(digest.data()), digest.size());
  return std::move(w.bytes());
}

} // namespace

bool writeCacheEntry(const std::string &path, const CacheKey &key, CacheKind kind,
                     std::string_view payload, std::string &error) {
  std::string bytes = entryHeader(key, kind, payload);
  bytes.append(payload);
  return writeFileAtomic(path, bytes, error);
}

CacheRead readCacheEntry(const std::string &path, const CacheKey &key, CacheKind kind,
                         std::string &payload, std::string &why) {
  if (access(path.c_str(), F_OK) != 0) {
    why = fmt::format("no entry '{}'", path);
    return CacheRead::Missing;
  }
  std::string bytes;
  if (!readWholeFile(path, bytes, why, kMaxEntryBytes))
    return CacheRead::Corrupt;
  if (bytes.size() < kHeaderBytes) {
    why = fmt::format("'{}': {} bytes, shorter than the {}-byte header", path, bytes.size(),
                      kHeaderBytes);
    return CacheRead::Corrupt;
  }
  std::string_view body(bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes);
  // The expected header for this key and payload: comparing whole headers
  // checks magic, version, kind, key, size and checksum at once; the
  // message names the first field that differs.
  std::string expected = entryHeader(key, kind, body);
  if (bytes.compare(0, kHeaderBytes, expected) == 0) {
    payload.assign(body);
    return CacheRead::Hit;
  }
  // The first differing byte names the field.
  static const std::pair<size_t, const char *> fields[] = {
      {8, "magic"}, {12, "format version"}, {16, "kind"},
      {48, "key"},  {56, "payload size"},   {kHeaderBytes, "checksum"}};
  size_t at = 0;
  while (at < kHeaderBytes && bytes[at] == expected[at])
    ++at;
  const char *field = "checksum";
  for (const auto &[end, name] : fields)
    if (at < end) {
      field = name;
      break;
    }
  why = fmt::format("'{}': {} does not match", path, field);
  return CacheRead::Corrupt;
}

//===----------------------------------------------------------------------===//
// Payload fields
//===----------------------------------------------------------------------===//

void ByteWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out_ += char(uint8_t(v >> (8 * i)));
}

void ByteWriter::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out_ += char(uint8_t(v >> (8 * i)));
}

void ByteWriter::str(std::string_view s) {
  u64(s.size());
  out_.append(s);
}

bool ByteReader::take(size_t n) {
  if (!ok_ || in_.size() - pos_ < n)
    ok_ = false;
  return ok_;
}

uint32_t ByteReader::u32() {
  if (!take(4))
    return 0;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(uint8_t(in_[pos_ + i])) << (8 * i);
  pos_ += 4;
  return v;
}

uint64_t ByteReader::u64() {
  if (!take(8))
    return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(uint8_t(in_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

std::string ByteReader::str() {
  uint64_t n = u64();
  if (!take(n))
    return "";
  std::string s(in_.substr(pos_, n));
  pos_ += n;
  return s;
}

//===----------------------------------------------------------------------===//
// CompileCache
//===----------------------------------------------------------------------===//

CompileCache::CompileCache(std::string dir, bool readsEnabled)
    : dir_(std::move(dir)), readsEnabled_(readsEnabled) {}

CompileCache &CompileCache::process() {
  static CompileCache cache(cacheDirectory(), !alwaysCompile());
  return cache;
}

std::string CompileCache::entryPath(const CacheKey &key, CacheKind kind) const {
  if (dir_.empty())
    return "";
  return fmt::format("{}/{}.{}", dir_, key.hex(), cacheKindName(kind));
}

bool CompileCache::lookup(const CacheKey &key, CacheKind kind, std::string &payload) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!readsEnabled_) {
    ++stats_.misses;
    return false;
  }
  if (auto it = memory_.find({key, kind}); it != memory_.end()) {
    ++stats_.memoryHits;
    payload = it->second;
    return true;
  }
  std::string path = entryPath(key, kind), why;
  if (!path.empty()) {
    switch (readCacheEntry(path, key, kind, payload, why)) {
    case CacheRead::Hit:
      ++stats_.diskHits;
      memory_.emplace(std::pair{key, kind}, payload);
      return true;
    case CacheRead::Corrupt:
      ++stats_.corrupt;
      lastError_ = why;
      break;
    case CacheRead::Missing:
      break;
    }
  }
  ++stats_.misses;
  return false;
}

void CompileCache::store(const CacheKey &key, CacheKind kind, std::string_view payload) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.insert_or_assign(std::pair{key, kind}, std::string(payload));
  if (dir_.empty())
    return;
  std::string error;
  if (!dirReady_)
    dirReady_ = createDirectories(dir_, error);
  if (dirReady_ && writeCacheEntry(entryPath(key, kind), key, kind, payload, error)) {
    ++stats_.writes;
    return;
  }
  ++stats_.writeFailures;
  lastError_ = error;
}

CompileCache::Stats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string CompileCache::lastError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastError_;
}

} // namespace tk
