// The compile cache (runtime/CompileCache.h): SHA-256 against the FIPS 180
// test vectors, keys, the directory knobs, the memory and disk round trip,
// every kind of damaged entry (and every kind of file that is not a regular
// one, read without blocking) read as a miss and repaired by the next store,
// and many threads and processes writing one key at once leaving one valid
// entry and no temporary files.
#include "runtime/CompileCache.h"
#include "lang/Float16.h"
#include "runtime/GpuKernel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <future>
#include <random>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tk;

namespace {

std::string hexOf(const std::array<uint8_t, 32> &d) {
  CacheKey k;
  k.bytes = d;
  return k.hex();
}

std::string sha(std::string_view s) {
  Sha256 h;
  h.update(s);
  return hexOf(h.finish());
}

// A fresh directory under /tmp, removed (with its files) at the end.
class TempDir {
public:
  TempDir() {
    char tmpl[] = "/tmp/tk-cache-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string &f : files())
      remove((path_ + "/" + f).c_str());
    rmdir(path_.c_str());
  }
  const std::string &path() const { return path_; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR *d = opendir(path_.c_str())) {
      while (dirent *e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
          out.push_back(e->d_name);
      closedir(d);
    }
    return out;
  }

private:
  std::string path_;
};

CacheKey keyOf(const std::string &s) { return CacheKeyBuilder().add(s).key(); }

// A payload of random bytes (every byte value, not just text).
std::string randomPayload(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char &c : s)
    c = char(rng() & 0xff);
  return s;
}

void writeRaw(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string readRaw(const std::string &path) {
  std::string bytes, error;
  EXPECT_TRUE(readWholeFile(path, bytes, error)) << error;
  return bytes;
}

} // namespace

TEST(CompileCacheTest, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's fed in uneven pieces: the block boundary handling.
  Sha256 h;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  EXPECT_EQ(hexOf(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CompileCacheTest, KeysSeparateFields) {
  CacheKey ab_c = CacheKeyBuilder().add("ab").add("c").key();
  CacheKey a_bc = CacheKeyBuilder().add("a").add("bc").key();
  EXPECT_NE(ab_c, a_bc);
  EXPECT_EQ(ab_c, CacheKeyBuilder().add("ab").add("c").key());
  EXPECT_NE(CacheKeyBuilder().add(int64_t(4)).key(), CacheKeyBuilder().add(int64_t(8)).key());
  EXPECT_EQ(ab_c.hex().size(), 64u);
  EXPECT_FALSE(compilerVersion().empty());
}

TEST(CompileCacheTest, DirectoryKnobs) {
  EXPECT_EQ(resolveCacheDirectory("/x/y", "/xdg", "/home/u"), "/x/y");
  EXPECT_EQ(resolveCacheDirectory("", "/xdg", "/home/u"), ""); // set but empty: memory only
  EXPECT_EQ(resolveCacheDirectory(nullptr, "/xdg", "/home/u"), "/xdg/tk");
  EXPECT_EQ(resolveCacheDirectory(nullptr, "", "/home/u"), "/home/u/.cache/tk");
  EXPECT_EQ(resolveCacheDirectory(nullptr, nullptr, nullptr), "");

  const char *saved = std::getenv("TK_CACHE_DIR");
  std::string old = saved ? saved : "";
  setenv("TK_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(cacheDirectory(), "/some/where");
  setenv("TK_ALWAYS_COMPILE", "1", 1);
  EXPECT_TRUE(alwaysCompile());
  setenv("TK_ALWAYS_COMPILE", "0", 1);
  EXPECT_FALSE(alwaysCompile());
  unsetenv("TK_ALWAYS_COMPILE");
  EXPECT_FALSE(alwaysCompile());
  if (saved)
    setenv("TK_CACHE_DIR", old.c_str(), 1);
  else
    unsetenv("TK_CACHE_DIR");
}

TEST(CompileCacheTest, RoundTripThroughMemoryAndDisk) {
  TempDir dir;
  std::string sub = dir.path() + "/nested/tk"; // created on the first store
  CacheKey key = keyOf("softmax");
  std::string payload = randomPayload(5000, 1);
  {
    CompileCache cache(sub);
    std::string got;
    EXPECT_FALSE(cache.lookup(key, CacheKind::Kernel, got));
    cache.store(key, CacheKind::Kernel, payload);
    EXPECT_TRUE(cache.lookup(key, CacheKind::Kernel, got));
    EXPECT_EQ(got, payload);
    EXPECT_EQ(cache.stats().memoryHits, 1u);
    EXPECT_EQ(cache.stats().writes, 1u) << cache.lastError();
    // The same key under another kind is another entry.
    EXPECT_FALSE(cache.lookup(key, CacheKind::Cubin, got));
  }
  // A second "process": a fresh cache on the same directory reads the disk.
  CompileCache again(sub);
  std::string got;
  ASSERT_TRUE(again.lookup(key, CacheKind::Kernel, got));
  EXPECT_EQ(got, payload);
  EXPECT_EQ(again.stats().diskHits, 1u);
  ASSERT_TRUE(again.lookup(key, CacheKind::Kernel, got));
  EXPECT_EQ(again.stats().memoryHits, 1u);
  EXPECT_EQ(again.entryPath(key, CacheKind::Kernel), sub + "/" + key.hex() + ".kernel");

  // Reads disabled (TK_ALWAYS_COMPILE): the entry is there but never read.
  CompileCache always(sub, /*readsEnabled=*/false);
  EXPECT_FALSE(always.lookup(key, CacheKind::Kernel, got));

  // Memory only: nothing touches the disk.
  CompileCache memoryOnly("");
  memoryOnly.store(keyOf("m"), CacheKind::Kernel, "x");
  EXPECT_TRUE(memoryOnly.lookup(keyOf("m"), CacheKind::Kernel, got));
  EXPECT_EQ(memoryOnly.entryPath(keyOf("m"), CacheKind::Kernel), "");
  remove(again.entryPath(key, CacheKind::Kernel).c_str());
  rmdir(sub.c_str());
  rmdir((dir.path() + "/nested").c_str());
}

// Each damage: applied to a valid entry file, then a fresh cache must miss,
// count it corrupt, and after a store a fresh cache must hit again.
TEST(CompileCacheTest, DamagedEntriesAreMissesAndGetRepaired) {
  TempDir dir;
  CacheKey key = keyOf("k"), other = keyOf("other");
  std::string payload = randomPayload(3000, 2);
  std::string path = CompileCache(dir.path()).entryPath(key, CacheKind::Kernel);
  std::string error;
  ASSERT_TRUE(writeCacheEntry(path, key, CacheKind::Kernel, payload, error)) << error;
  const std::string good = readRaw(path);
  ASSERT_EQ(good.size(), 88 + payload.size());
  std::string otherEntry = good;
  {
    std::string p2 = dir.path() + "/other";
    ASSERT_TRUE(writeCacheEntry(p2, other, CacheKind::Kernel, payload, error));
    otherEntry = readRaw(p2);
    remove(p2.c_str());
  }
  std::mt19937 rng(7);

  struct Damage {
    const char *name;
    std::function<void()> apply;
    const char *field; // in the reason; "" for any
  };
  std::vector<Damage> damages = {
      {"truncated payload", [&] { writeRaw(path, good.substr(0, good.size() - 17)); },
       "payload size"},
      {"truncated header", [&] { writeRaw(path, good.substr(0, 40)); }, "header"},
      {"zero length", [&] { writeRaw(path, ""); }, "header"},
      {"flipped payload byte",
       [&] {
         std::string b = good;
         b[88 + rng() % payload.size()] ^= char(1 << (rng() % 8));
         writeRaw(path, b);
       },
       "checksum"},
      {"flipped magic byte",
       [&] {
         std::string b = good;
         b[3] ^= 0x20;
         writeRaw(path, b);
       },
       "magic"},
      {"other version",
       [&] {
         std::string b = good;
         b[8] = 99;
         writeRaw(path, b);
       },
       "format version"},
      {"another key's entry", [&] { writeRaw(path, otherEntry); }, "key"},
      {"another key's entry with its key field rewritten",
       [&] {
         // Only a checksum over the key catches this one.
         std::string b = otherEntry;
         b.replace(16, 32, reinterpret_cast<const char *>(key.bytes.data()), 32);
         writeRaw(path, b);
       },
       "checksum"},
      {"another kind's entry under this kind's name",
       [&] {
         std::string b = good;
         b[12] = char(CacheKind::Cubin);
         writeRaw(path, b);
       },
       "kind"},
      {"garbage", [&] { writeRaw(path, randomPayload(4096, 3)); }, ""},
      // Not regular files: read as misses without blocking (a FIFO opened
      // for reading waits for a writer unless opened non-blocking).
      {"a FIFO", [&] { ASSERT_EQ(mkfifo(path.c_str(), 0644), 0); }, "FIFO"},
      {"a symlink to a device", [&] { ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0); },
       "device"},
      {"a socket",
       [&] {
         int fd = socket(AF_UNIX, SOCK_STREAM, 0);
         sockaddr_un addr{};
         addr.sun_family = AF_UNIX;
         ASSERT_LT(path.size(), sizeof(addr.sun_path));
         std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
         ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
         close(fd);
       },
       "open"},
      {"a file over the entry size limit",
       [&] {
         // Sparse: 300 MiB of nothing costs no disk.
         writeRaw(path, good);
         ASSERT_EQ(truncate(path.c_str(), off_t(300) << 20), 0);
       },
       "bytes"},
  };
  for (const Damage &d : damages) {
    SCOPED_TRACE(d.name);
    remove(path.c_str());
    d.apply();
    CompileCache cache(dir.path());
    std::string got = "unchanged";
    // A lookup that blocks would hang the test: it runs on a thread and has
    // 10 s; a FIFO is then opened for writing to let it go.
    auto pending =
        std::async(std::launch::async, [&] { return cache.lookup(key, CacheKind::Kernel, got); });
    if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << "the lookup blocked for 10 s";
      close(open(path.c_str(), O_WRONLY | O_NONBLOCK));
    }
    EXPECT_FALSE(pending.get());
    EXPECT_EQ(cache.stats().corrupt, 1u);
    EXPECT_NE(cache.lastError().find(d.field), std::string::npos) << cache.lastError();
    // Recompile and store: the entry is whole again.
    cache.store(key, CacheKind::Kernel, payload);
    CompileCache fresh(dir.path());
    ASSERT_TRUE(fresh.lookup(key, CacheKind::Kernel, got));
    EXPECT_EQ(got, payload);
    EXPECT_EQ(dir.files().size(), 1u);
  }

  // A directory where the entry should be: a miss, and the store fails
  // quietly (counted), keeping the payload in memory.
  remove(path.c_str());
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  CompileCache cache(dir.path());
  std::string got;
  EXPECT_FALSE(cache.lookup(key, CacheKind::Kernel, got));
  cache.store(key, CacheKind::Kernel, payload);
  EXPECT_EQ(cache.stats().writeFailures, 1u);
  EXPECT_TRUE(cache.lookup(key, CacheKind::Kernel, got));
  EXPECT_EQ(got, payload);
  rmdir(path.c_str());
  EXPECT_TRUE(dir.files().empty()) << "no temporary file left behind";
}

TEST(CompileCacheTest, UnusableDirectoryMeansMemoryOnly) {
  TempDir dir;
  std::string file = dir.path() + "/plain-file";
  writeRaw(file, "not a directory");
  CompileCache cache(file + "/tk"); // mkdir fails: ENOTDIR
  CacheKey key = keyOf("x");
  cache.store(key, CacheKind::Kernel, "payload");
  EXPECT_EQ(cache.stats().writeFailures, 1u);
  EXPECT_NE(cache.lastError().find("plain-file"), std::string::npos) << cache.lastError();
  std::string got;
  EXPECT_TRUE(cache.lookup(key, CacheKind::Kernel, got));
  EXPECT_EQ(got, "payload");
}

TEST(CompileCacheTest, ManyThreadsWritingOneKeyLeaveOneValidEntry) {
  TempDir dir;
  CacheKey key = keyOf("shared");
  std::string payload = randomPayload(20000, 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      // A cache per thread, so that every one of them writes the file.
      for (int i = 0; i < 20; ++i)
        CompileCache(dir.path()).store(key, CacheKind::Kernel, payload);
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(dir.files().size(), 1u);
  std::string got;
  CompileCache fresh(dir.path());
  ASSERT_TRUE(fresh.lookup(key, CacheKind::Kernel, got)) << fresh.lastError();
  EXPECT_EQ(got, payload);
}

TEST(CompileCacheTest, SeveralProcessesWritingOneKeyLeaveOneValidEntry) {
  TempDir dir;
  CacheKey key = keyOf("processes");
  std::string payload = randomPayload(50000, 5);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Readers and writers interleave: every read must be a whole entry
      // or none; a corrupt read makes the child fail.
      bool ok = true;
      for (int i = 0; i < 25; ++i) {
        CompileCache c(dir.path());
        std::string got;
        if (c.lookup(key, CacheKind::Kernel, got))
          ok = ok && got == payload;
        ok = ok && c.stats().corrupt == 0;
        c.store(key, CacheKind::Kernel, payload);
      }
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(dir.files().size(), 1u);
  std::string got;
  CompileCache fresh(dir.path());
  ASSERT_TRUE(fresh.lookup(key, CacheKind::Kernel, got));
  EXPECT_EQ(got, payload);
}

TEST(CompileCacheTest, ByteReaderRejectsShortInput) {
  ByteWriter w;
  w.u32(7);
  w.str("hello");
  w.u64(1ull << 40);
  std::string bytes = w.bytes();
  ByteReader r(bytes);
  EXPECT_EQ(r.u32(), 7u);
  EXPECT_EQ(r.str(), "hello");
  EXPECT_EQ(r.u64(), 1ull << 40);
  EXPECT_TRUE(r.done());
  // Every proper prefix fails somewhere, and a string length past the end
  // is refused rather than allocated.
  for (size_t n = 0; n < bytes.size(); ++n) {
    ByteReader s(std::string_view(bytes).substr(0, n));
    s.u32();
    s.str();
    s.u64();
    EXPECT_FALSE(s.done()) << n;
  }
  ByteWriter huge;
  huge.u64(~0ull);
  ByteReader h(huge.bytes());
  EXPECT_EQ(h.str(), "");
  EXPECT_FALSE(h.ok());
}

//===----------------------------------------------------------------------===//
// GpuKernel's use of the cache (no GPU needed)
//===----------------------------------------------------------------------===//

TEST(CompileCacheTest, GpuCompileKeyCoversEveryOption) {
  GpuCompileOptions base;
  base.kernel = "k";
  base.signature = "*fp32:16, i32";
  base.constants["BLOCK"] = ConstValue::ofInt(1024);
  CacheKey k0 = gpuCompileKey("src", "f.tk", base);
  EXPECT_EQ(k0, gpuCompileKey("src", "f.tk", base));
  std::vector<std::pair<const char *, std::function<void(GpuCompileOptions &)>>> changes = {
      {"kernel", [](GpuCompileOptions &o) { o.kernel = "k2"; }},
      {"signature", [](GpuCompileOptions &o) { o.signature = "*fp16:16, i32"; }},
      {"constant value",
       [](GpuCompileOptions &o) { o.constants["BLOCK"] = ConstValue::ofInt(2048); }},
      {"constant kind",
       [](GpuCompileOptions &o) { o.constants["BLOCK"] = ConstValue::ofFloat(1024); }},
      {"extra constant", [](GpuCompileOptions &o) { o.constants["X"] = ConstValue::ofInt(0); }},
      {"warps", [](GpuCompileOptions &o) { o.numWarps = 8; }},
      {"stages", [](GpuCompileOptions &o) { o.numStages = 2; }},
      {"debug", [](GpuCompileOptions &o) { o.debug = true; }},
      {"arch", [](GpuCompileOptions &o) { o.arch = "sm_80"; }},
      {"helper source", [](GpuCompileOptions &o) { o.keyExtras.push_back("def helper(): ..."); }},
  };
  for (auto &[name, change] : changes) {
    GpuCompileOptions o = base;
    change(o);
    EXPECT_NE(gpuCompileKey("src", "f.tk", o), k0) << name;
  }
  EXPECT_NE(gpuCompileKey("src ", "f.tk", base), k0);
  EXPECT_NE(gpuCompileKey("src", "g.tk", base), k0);
  // The JIT level keys only the cubin, not the PTX.
  GpuCompileOptions jit = base;
  jit.jitOptimizationLevel = 1;
  EXPECT_EQ(gpuCompileKey("src", "f.tk", jit), k0);
}

TEST(CompileCacheTest, CompiledPTXPayloadRoundTripsAndRejectsDamage) {
  CompiledPTX c;
  c.name = "softmax_kernel";
  c.ptx = randomPayload(2000, 6);
  c.numWarps = 8;
  c.sharedBytes = 70000;
  c.dynamicShared = true;
  const GpuArg::Kind kinds[] = {GpuArg::Kind::Pointer, GpuArg::Kind::F16, GpuArg::Kind::I1,
                                GpuArg::Kind::F64};
  for (int i = 0; i < 4; ++i)
    c.params.push_back({"p" + std::to_string(i), kinds[i], true, gpuArgKindName(kinds[i])});
  std::string bytes = serializeCompiledPTX(c);
  CompiledPTX back;
  ASSERT_TRUE(parseCompiledPTX(bytes, back));
  EXPECT_EQ(back.name, c.name);
  EXPECT_EQ(back.ptx, c.ptx);
  EXPECT_EQ(back.numWarps, 8);
  EXPECT_EQ(back.sharedBytes, 70000);
  EXPECT_TRUE(back.dynamicShared);
  ASSERT_EQ(back.params.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(back.params[i].kind, kinds[i]);
    EXPECT_EQ(back.params[i].typeName, gpuArgKindName(kinds[i]));
  }
  // Every truncation fails, and so does a trailing byte.
  for (size_t n = 0; n < bytes.size(); n += 97)
    EXPECT_FALSE(parseCompiledPTX(std::string_view(bytes).substr(0, n), back)) << n;
  EXPECT_FALSE(parseCompiledPTX(bytes + "x", back));
}

TEST(CompileCacheTest, ResourceLimitsNameTheResource) {
  DeviceLimits h200;
  h200.maxThreadsPerBlock = 1024;
  h200.maxRegistersPerBlock = 65536;
  h200.maxSharedPerBlock = 49152;
  h200.maxSharedPerBlockOptin = 232448;
  GpuKernelInfo info;
  info.registers = 40;
  info.numWarps = 8;
  info.maxThreadsPerBlock = 1024;
  info.staticSharedBytes = 1024;
  info.dynamicSharedBytes = 100000; // above 48 KiB, within the opt-in limit
  std::string error;
  GpuFailure failure;
  EXPECT_TRUE(checkKernelResources("k", info, h200, error, failure)) << error;

  GpuKernelInfo smem = info;
  smem.dynamicSharedBytes = 262144;
  EXPECT_FALSE(checkKernelResources("k", smem, h200, error, failure));
  EXPECT_EQ(failure.kind, GpuFailure::Kind::OutOfResources);
  EXPECT_EQ(failure.resource, "shared memory");
  EXPECT_EQ(failure.needed, 263168);
  EXPECT_EQ(failure.limit, 232448);
  EXPECT_EQ(error, "kernel 'k' is out of resources: shared memory: needs 263168 bytes per "
                   "program, the device allows 232448");

  GpuKernelInfo regs = info;
  regs.registers = 255;
  regs.numWarps = 16; // 512 threads x 255 registers
  failure = GpuFailure();
  EXPECT_FALSE(checkKernelResources("k", regs, h200, error, failure));
  EXPECT_EQ(failure.resource, "registers");
  EXPECT_EQ(failure.needed, 255 * 512);
  EXPECT_NE(error.find("255 registers per thread x 512 threads"), std::string::npos) << error;

  GpuKernelInfo threads = info;
  threads.numWarps = 64; // 2048 threads
  failure = GpuFailure();
  threads.registers = 16;
  EXPECT_FALSE(checkKernelResources("k", threads, h200, error, failure));
  EXPECT_EQ(failure.resource, "threads");
  EXPECT_EQ(failure.needed, 2048);
  EXPECT_EQ(failure.limit, 1024);
}

//===----------------------------------------------------------------------===//
// On a GPU (skipped, with the reason, elsewhere)
//===----------------------------------------------------------------------===//

namespace {

// Each scalar parameter type, widened to fp64 and stored: what arrives in
// the kernel is what launch() passed.
const char *kScalarsKernel = R"(import tk


@tk.jit
def scalars(out_ptr, a, b, c, d, e, f, g, h, i):
    tk.store(out_ptr + 0, a.to(tk.float64))
    tk.store(out_ptr + 1, b.to(tk.float64))
    tk.store(out_ptr + 2, c.to(tk.float64))
    tk.store(out_ptr + 3, d.to(tk.float64))
    tk.store(out_ptr + 4, e.to(tk.float64))
    tk.store(out_ptr + 5, f.to(tk.float64))
    tk.store(out_ptr + 6, g.to(tk.float64))
    tk.store(out_ptr + 7, h.to(tk.float64))
    tk.store(out_ptr + 8, i.to(tk.float64))
)";
const char *kScalarsSignature = "*fp64:16, i1, i8, i16, i32, i64, u32, fp16, bf16, fp64";

GpuCompileOptions scalarsOptions(int numWarps) {
  GpuCompileOptions opts;
  opts.kernel = "scalars";
  opts.signature = kScalarsSignature;
  opts.numWarps = numWarps;
  return opts;
}

// Skips the calling test, with the reason, where there is no GPU.
#define TK_REQUIRE_GPU()                                                                           \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!CudaDriver::get(why))                                                                     \
      GTEST_SKIP() << "no GPU: " << why;                                                           \
  } while (0)

} // namespace

TEST(CompileCacheTest, ScalarsOfEveryTypeCompileToPTX) {
  CompiledPTX c;
  std::string error;
  if (!compileToPTX(kScalarsKernel, "scalars.tk", scalarsOptions(1), c, error)) {
    if (error.find("code generation") != std::string::npos)
      GTEST_SKIP() << "no code generation in this tree: " << error;
    FAIL() << error;
  }
  const GpuArg::Kind expected[] = {GpuArg::Kind::Pointer, GpuArg::Kind::I1,  GpuArg::Kind::I8,
                                   GpuArg::Kind::I16,     GpuArg::Kind::I32, GpuArg::Kind::I64,
                                   GpuArg::Kind::I32,     GpuArg::Kind::F16, GpuArg::Kind::BF16,
                                   GpuArg::Kind::F64};
  ASSERT_EQ(c.params.size(), std::size(expected));
  for (size_t i = 0; i < c.params.size(); ++i) {
    EXPECT_EQ(c.params[i].kind, expected[i]) << i;
    EXPECT_TRUE(c.params[i].supported) << i;
  }
}

TEST(CompileCacheTest, GpuScalarsOfEveryTypeArriveIntact) {
  TK_REQUIRE_GPU();
  std::string error;
  GpuKernel *k = GpuKernel::compile(kScalarsKernel, "scalars.tk", scalarsOptions(1), error);
  ASSERT_TRUE(k) << error;
  std::mt19937 rng(11);
  for (int round = 0; round < 4; ++round) {
    // Random values that each type holds exactly (fp16/bf16 through their
    // bit patterns), never all zero.
    bool a = round % 2 == 0;
    int8_t b = int8_t(int(rng() % 255) - 127);
    int16_t c = int16_t(int(rng() % 60001) - 30000);
    int32_t d = int32_t(rng()) | 1;
    int64_t e = (int64_t(rng()) << 20) - 12345;
    uint32_t f = 0x80000000u + (rng() & 0xffff); // above INT32_MAX: read as unsigned
    uint16_t g = floatToHalf(float(int(rng() % 2000) - 1000) / 8.0f);
    uint16_t h = floatToBF16(float(int(rng() % 200) - 100) * 0.25f);
    double i = double(int64_t(rng())) / 3.0;
    GpuArg args[] = {
        GpuArg::ptr(0),        GpuArg::ofI1(a),  GpuArg::ofI8(b),           GpuArg::ofI16(c),
        GpuArg::ofI32(d),      GpuArg::ofI64(e), GpuArg::ofI32(int32_t(f)), GpuArg::ofF16Bits(g),
        GpuArg::ofBF16Bits(h), GpuArg::ofF64(i)};
    DeviceBuffer out;
    ASSERT_TRUE(out.allocate(16 * sizeof(double), error)) << error;
    args[0] = out.arg();
    ASSERT_TRUE(k->launch({1, 1, 1}, args, nullptr, error)) << error;
    double got[9] = {};
    ASSERT_TRUE(out.download(got, sizeof got, error)) << error;
    const double want[9] = {a ? 1.0 : 0.0, double(b),      double(c),      double(d), double(e),
                            double(f),     halfToFloat(g), bf16ToFloat(h), i};
    for (int j = 0; j < 9; ++j)
      EXPECT_EQ(got[j], want[j]) << "parameter " << j + 1 << " in round " << round;
  }
  // A wrong kind names the parameter and both kinds.
  GpuArg wrong[] = {GpuArg::ptr(0),   GpuArg::ofI1(true),  GpuArg::ofI8(1),
                    GpuArg::ofI16(1), GpuArg::ofI32(1),    GpuArg::ofI64(1),
                    GpuArg::ofI32(1), GpuArg::ofF32(1.0f), GpuArg::ofBF16Bits(0),
                    GpuArg::ofF64(1)};
  EXPECT_FALSE(k->launch({1, 1, 1}, wrong, nullptr, error));
  EXPECT_NE(error.find("argument 7 ('g') is fp16 in the signature but the argument passed is "
                       "fp32"),
            std::string::npos)
      << error;
}

TEST(CompileCacheTest, GpuKernelInfoAndTheCachedPTX) {
  TK_REQUIRE_GPU();
  std::string error;
  GpuCompileOptions opts = scalarsOptions(2);
  opts.keyExtras = {"info test"};
  GpuKernel *k = GpuKernel::compile(kScalarsKernel, "scalars.tk", opts, error);
  ASSERT_TRUE(k) << error;
  const GpuKernelInfo &info = k->info();
  EXPECT_GT(info.registers, 0);
  EXPECT_GE(info.maxThreadsPerBlock, 64);
  EXPECT_EQ(info.numWarps, 2);
  EXPECT_EQ(info.localBytes, 0);
  // Either compiled here or found in the cache of an earlier run.
  if (info.origin == GpuKernelOrigin::Compiled) {
    EXPECT_GT(info.compileMs, 0.0);
  }
  ASSERT_GE(k->cubin().size(), 4u);
  EXPECT_EQ(k->cubin().substr(0, 4), "\x7f"
                                     "ELF");
  // Another JIT level: the same PTX from the compile cache, a new cubin.
  GpuCompileOptions o1 = opts;
  o1.jitOptimizationLevel = 1;
  GpuKernel *k1 = GpuKernel::compile(kScalarsKernel, "scalars.tk", o1, error);
  ASSERT_TRUE(k1) << error;
  EXPECT_NE(k1, k);
  EXPECT_EQ(k1->info().origin, GpuKernelOrigin::Cache);
  EXPECT_EQ(k1->info().compileMs, 0.0);
  EXPECT_EQ(k1->ptx(), k->ptx());
  EXPECT_EQ(GpuKernel::compile(kScalarsKernel, "scalars.tk", o1, error), k1);
}

namespace {

// A transpose staged through 128 x 256 fp32 = 128 KiB of shared memory:
// above the 48 KiB of a static array, so the code generator makes it
// dynamic (.extern .shared) and the launch must pass and opt into it.
const char *kTransposeKernel = R"(import tk


@tk.jit
def transpose(x_ptr, y_ptr):
    r = tk.arange(0, 128)
    c = tk.arange(0, 256)
    x = tk.load(x_ptr + r[:, None] * 256 + c[None, :])
    tk.store(y_ptr + c[None, :] * 128 + r[:, None], x)
)";

GpuCompileOptions transposeOptions() {
  GpuCompileOptions opts;
  opts.kernel = "transpose";
  opts.signature = "*fp32:16, *fp32:16";
  return opts;
}

} // namespace

TEST(CompileCacheTest, DynamicSharedMemoryIsRecordedForTheLaunch) {
  CompiledPTX c;
  std::string error;
  if (!compileToPTX(kTransposeKernel, "transpose.tk", transposeOptions(), c, error)) {
    if (error.find("code generation") != std::string::npos)
      GTEST_SKIP() << "no code generation in this tree: " << error;
    FAIL() << error;
  }
  EXPECT_GE(c.sharedBytes, 128 * 256 * 4);
  EXPECT_TRUE(c.dynamicShared);
  // And it survives the cache payload.
  CompiledPTX back;
  ASSERT_TRUE(parseCompiledPTX(serializeCompiledPTX(c), back));
  EXPECT_EQ(back.sharedBytes, c.sharedBytes);
  EXPECT_TRUE(back.dynamicShared);
}

TEST(CompileCacheTest, GpuTransposeThroughDynamicSharedMemory) {
  TK_REQUIRE_GPU();
  std::string error;
  GpuKernel *k = GpuKernel::compile(kTransposeKernel, "transpose.tk", transposeOptions(), error);
  ASSERT_TRUE(k) << error;
  EXPECT_GE(k->info().dynamicSharedBytes, 128 * 256 * 4);
  std::vector<float> x(128 * 256), y(128 * 256, 0.0f);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (float &v : x)
    v = dist(rng);
  DeviceBuffer dx, dy;
  ASSERT_TRUE(dx.allocate(x.size() * 4, error) && dy.allocate(y.size() * 4, error)) << error;
  ASSERT_TRUE(dx.upload(x.data(), x.size() * 4, error)) << error;
  GpuArg args[] = {dx.arg(), dy.arg()};
  ASSERT_TRUE(k->launch({1, 1, 1}, args, nullptr, error)) << error;
  ASSERT_TRUE(dy.download(y.data(), y.size() * 4, error)) << error;
  int bad = 0;
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 256; ++c)
      bad += y[c * 128 + r] != x[r * 256 + c];
  EXPECT_EQ(bad, 0);
}
