// The autotuner without a GPU: configs, keys, pruning, failure scoring, the
// disk cache and its recovery from damaged files, with a fake benchmark; and
// the public API's parts that need no GPU (statuses, configs, arguments,
// errors reported before any driver call).
#include "runtime/Autotuner.h"
#include "lowering/LLVMTarget.h"
#include "runtime/GpuKernel.h"
#include "runtime/LaunchTable.h"
#include "tk/tk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

// tk::Config (public) and tk::tune::Config both exist: the tuner's tests
// name the tune:: one, the public API's tests spell tk:: out.
using namespace tk::tune;
using tk::cacheDirectory;
using tk::CacheKey;
using tk::CacheKeyBuilder;
using tk::CacheKind;
using tk::ConstValue;
using tk::writeCacheEntry;

namespace {

std::vector<Config> blockConfigs(std::vector<int64_t> blocks) {
  std::vector<Config> out;
  for (size_t i = 0; i < blocks.size(); ++i)
    out.push_back({{{"BLOCK", ConstValue::ofInt(blocks[i])}}, int(1 << (i % 4)), 3});
  return out;
}

// A fresh cache directory per test, removed afterwards.
class AutotunerTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("tk-autotune-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    options.kernelName = "softmax";
    options.identity = hashText("source text");
    options.deviceName = "Fake GPU";
    options.cacheDir = dir.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string readFile(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void writeFile(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::trunc) << text;
  }

  std::filesystem::path dir;
  Options options;
};

} // namespace

TEST(AutotunerConfig, StrListsMetaThenLaunchOptions) {
  Config c{{{"BLOCK_M", ConstValue::ofInt(128)}, {"EVEN", ConstValue::ofBool(true)}}, 8, 4};
  EXPECT_EQ(c.str(), "BLOCK_M=128, EVEN=True, num_warps=8, num_stages=4");
  EXPECT_EQ(Config{}.str(), "num_warps=4, num_stages=3");
}

TEST(AutotunerKey, ValuesThenDtypesOnOneLine) {
  EXPECT_EQ(makeKey({{"n_cols", "4096"}, {"n_rows", "17"}}, {{"x", "fp32"}, {"y", "fp16"}}),
            "n_cols=4096, n_rows=17; x:fp32, y:fp16");
  EXPECT_EQ(makeKey({}, {}), ";");
  EXPECT_EQ(makeKey({{"s", "a\nb"}}, {}), "s=a b;");
  // A different dtype or value is a different key.
  EXPECT_NE(makeKey({{"n", "1"}}, {{"x", "fp32"}}), makeKey({{"n", "1"}}, {{"x", "fp16"}}));
  EXPECT_NE(makeKey({{"n", "1"}}, {}), makeKey({{"n", "2"}}, {}));
}

TEST(AutotunerLimits, NamesTheResourceAndTheNumbers) {
  Limits l; // 1024 threads, 48 KiB, 64 Ki registers
  EXPECT_EQ(exceedsLimits({128, 1024, 32}, l), "");
  EXPECT_EQ(exceedsLimits({2048, -1, -1}, l),
            "needs 2048 threads per program; the device allows 1024");
  EXPECT_EQ(exceedsLimits({256, 65536, -1}, l),
            "needs 65536 bytes of shared memory per program; the device has 49152");
  EXPECT_EQ(exceedsLimits({1024, 0, 128}, l),
            "needs 128 registers per thread x 1024 threads = 131072 per program; the device has "
            "65536");
}

TEST(AutotunerLimits, SharedBytesFromPTX) {
  std::string ptx = ".visible .entry k(\n"
                    ".shared .align 16 .b8 smem[4096];\n"
                    "  .shared .align 4 .b32 red[32];\n"
                    ".extern .shared .align 16 .b8 dyn[];\n"
                    "}\n";
  EXPECT_EQ(sharedBytesInPTX(ptx), 4096 + 128);
  EXPECT_EQ(sharedBytesInPTX("ld.shared.f32 %f1, [%r1];\n"), 0);
}

TEST_F(AutotunerTest, PicksTheFastestAndBenchmarksOncePerKey) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(0.5, 9.0);
  std::vector<double> times(6);
  for (double &t : times)
    t = dist(rng);
  size_t fastest = size_t(std::min_element(times.begin(), times.end()) - times.begin());
  Tuner tuner(blockConfigs({16, 32, 64, 128, 256, 512}), options);
  int calls = 0;
  auto bench = [&](size_t i) {
    ++calls;
    return Trial::time(times[i]);
  };
  std::string error;
  const Result *r = tuner.tune("n=100;", bench, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, fastest);
  EXPECT_EQ(calls, 6);
  EXPECT_DOUBLE_EQ(r->trials[fastest].ms, times[fastest]);
  EXPECT_EQ(tuner.tune("n=100;", bench, error), r); // memoized
  EXPECT_EQ(calls, 6);
  ASSERT_TRUE(tuner.tune("n=200;", bench, error)); // a new key tunes again
  EXPECT_EQ(calls, 12);
}

TEST_F(AutotunerTest, FailingConfigsAreUnusableWithTheirReason) {
  Tuner tuner(blockConfigs({16, 32, 64}), options);
  auto bench = [&](size_t i) -> Trial {
    if (i == 0)
      return Trial::failure("cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    if (i == 1)
      throw std::runtime_error("compile error: BLOCK too large");
    return Trial::time(3.0);
  };
  std::string error;
  const Result *r = tuner.tune("k;", bench, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, 2u);
  EXPECT_FALSE(r->trials[0].usable);
  EXPECT_EQ(r->trials[0].reason, "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(r->trials[1].reason, "compile error: BLOCK too large");
}

TEST_F(AutotunerTest, NoUsableConfigListsEveryReason) {
  Tuner tuner(blockConfigs({16, 32}), options);
  std::string error;
  EXPECT_FALSE(tuner.tune(
      "k;", [](size_t i) { return Trial::failure("bad " + std::to_string(i)); }, error));
  EXPECT_EQ(error, "autotuning 'softmax' for key 'k;': no usable config\n"
                   "  [0] BLOCK=16, num_warps=1, num_stages=3: bad 0\n"
                   "  [1] BLOCK=32, num_warps=2, num_stages=3: bad 1");
  // A NaN or negative time is a failure too, not a winner.
  Tuner nan(blockConfigs({16}), options);
  EXPECT_FALSE(nan.tune(
      "k;", [](size_t) { return Trial::time(-1); }, error));
  EXPECT_NE(error.find("the benchmark returned -1 ms"), std::string::npos) << error;
}

TEST_F(AutotunerTest, UserPruneAndResourcePrune) {
  Tuner tuner(blockConfigs({16, 32, 64, 128}), options);
  // The user keeps configs with BLOCK >= 32 (and names one index twice and
  // one out of range: both ignored).
  tuner.setPrune([](const std::vector<Config> &configs, const std::string &key) {
    EXPECT_EQ(key, "n=5;");
    std::vector<size_t> keep = {99};
    for (size_t i = 0; i < configs.size(); ++i)
      if (configs[i].meta[0].second.intValue >= 32)
        keep.push_back(i);
    keep.push_back(keep.back());
    return keep;
  });
  // Shared memory = BLOCK * 512 bytes: BLOCK=128 needs 64 KiB > 48 KiB.
  std::vector<size_t> estimated;
  tuner.setResourceCheck(
      [&](size_t i, Resources &need, std::string &) {
        estimated.push_back(i);
        need.threads = tuner.configs()[i].numWarps * 32;
        need.sharedBytes = int(tuner.configs()[i].meta[0].second.intValue * 512);
        return true;
      },
      Limits{});
  std::vector<size_t> benched;
  std::string error;
  const Result *r = tuner.tune(
      "n=5;",
      [&](size_t i) {
        benched.push_back(i);
        return Trial::time(10.0 - double(i));
      },
      error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(estimated, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(benched, (std::vector<size_t>{1, 2})); // 3 pruned before compiling
  EXPECT_EQ(r->best, 2u);
  EXPECT_TRUE(r->trials[0].pruned);
  EXPECT_EQ(r->trials[0].reason, "pruned by prune_configs_by");
  EXPECT_TRUE(r->trials[3].pruned);
  EXPECT_EQ(r->trials[3].reason,
            "needs 65536 bytes of shared memory per program; the device has 49152");

  Tuner none(blockConfigs({16}), options);
  none.setPrune(
      [](const std::vector<Config> &, const std::string &) { return std::vector<size_t>{}; });
  EXPECT_FALSE(none.tune(
      "k;", [](size_t) { return Trial::time(1); }, error));
  EXPECT_EQ(error, "autotuning 'softmax' for key 'k;': the prune kept none of the 1 configs");
}

TEST_F(AutotunerTest, ProgressReportsEachConfigAndTheEnd) {
  Tuner tuner(blockConfigs({16, 32, 64}), options);
  std::vector<Progress> seen;
  tuner.setProgress([&](const Progress &p) { seen.push_back(p); });
  const double times[] = {5, 2, 7};
  std::string error;
  ASSERT_TRUE(tuner.tune(
      "k;", [&](size_t i) { return Trial::time(times[i]); }, error));
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].done, 1u);
  EXPECT_EQ(seen[0].total, 3u);
  EXPECT_EQ(seen[0].best, 0);
  EXPECT_EQ(seen[2].best, 1);
  EXPECT_DOUBLE_EQ(seen[2].bestMs, 2);
  EXPECT_FALSE(seen[2].finished);
  EXPECT_TRUE(seen[3].finished);
  EXPECT_FALSE(seen[3].fromCache);
  EXPECT_EQ(seen[3].bestConfig, "BLOCK=32, num_warps=2, num_stages=3");
  ASSERT_TRUE(tuner.tune(
      "k;", [&](size_t i) { return Trial::time(times[i]); }, error));
  EXPECT_TRUE(seen.back().fromCache);
}

TEST_F(AutotunerTest, SecondTunerReadsTheDiskCacheWithoutBenchmarking) {
  const double times[] = {4.25, 1.5, 3};
  auto configs = blockConfigs({16, 32, 64});
  std::string error, path;
  {
    Tuner first(configs, options);
    ASSERT_TRUE(first.tune(
        "n=4096;", [&](size_t i) { return Trial::time(times[i]); }, error));
    path = first.cachePath("n=4096;");
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(std::filesystem::path(path).parent_path(), dir / "autotune");
  Tuner second(configs, options);
  const Result *r = second.tune(
      "n=4096;", [&](size_t) -> Trial { throw std::runtime_error("must not benchmark"); }, error);
  ASSERT_TRUE(r) << error;
  EXPECT_TRUE(r->fromDisk);
  EXPECT_EQ(r->best, 1u);
  EXPECT_DOUBLE_EQ(r->trials[0].ms, 4.25);
  // No temporary file is left behind.
  size_t files = 0;
  for (auto &e : std::filesystem::directory_iterator(dir / "autotune")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".autotune") << e.path();
  }
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(std::filesystem::path(path).extension(), ".autotune");
}

TEST_F(AutotunerTest, TheCacheIdentityCoversConfigsDeviceAndSource) {
  auto configs = blockConfigs({16, 32});
  std::string error;
  Tuner first(configs, options);
  ASSERT_TRUE(first.tune(
      "k;", [](size_t i) { return Trial::time(double(i) + 1); }, error));
  int calls = 0;
  auto count = [&](size_t) {
    ++calls;
    return Trial::time(1);
  };
  Tuner moreConfigs(blockConfigs({16, 32, 64}), options);
  ASSERT_TRUE(moreConfigs.tune("k;", count, error));
  Options otherDevice = options;
  otherDevice.deviceName = "Other GPU";
  ASSERT_TRUE(Tuner(configs, otherDevice).tune("k;", count, error));
  Options otherSource = options;
  otherSource.identity = hashText("edited source");
  ASSERT_TRUE(Tuner(configs, otherSource).tune("k;", count, error));
  EXPECT_EQ(calls, 3 + 2 + 2);
  EXPECT_NE(first.cachePath("k;"), moreConfigs.cachePath("k;"));
}

TEST_F(AutotunerTest, DamagedCacheFilesAreIgnoredAndRewritten) {
  auto configs = blockConfigs({16, 32, 64});
  std::string error;
  Tuner first(configs, options);
  ASSERT_TRUE(first.tune(
      "k;", [](size_t i) { return Trial::time(double(3 - i)); }, error));
  std::string path = first.cachePath("k;");
  std::string good = readFile(path);
  ASSERT_NE(good.find("best 2\n"), std::string::npos) << good;

  std::string bestFlipped = good;
  bestFlipped.replace(bestFlipped.find("best 2"), 6, "best 0");
  std::string truncated = good.substr(0, good.size() / 2);
  std::string flippedByte = good;
  flippedByte[flippedByte.size() - 20] ^= 1;
  // A well-formed entry (right key, right checksum) whose payload is wrong:
  // the best index is past the configs, or another key's identity.
  std::string payload = good.substr(good.find("tk-autotune 2"));
  std::string outOfRange = payload, foreign = payload;
  outOfRange.replace(outOfRange.find("best 2"), 6, "best 9");
  foreign.replace(foreign.find("key k;"), 6, "key j;");
  CacheKey key = CacheKeyBuilder().add(payload.substr(0, payload.find("best "))).key();
  std::vector<std::string> damagedFiles = {bestFlipped, truncated, flippedByte, std::string(),
                                           std::string("\0\1", 2)};
  for (const std::string &p : {outOfRange, foreign}) {
    ASSERT_TRUE(writeCacheEntry(path, key, CacheKind::Autotune, p, error)) << error;
    damagedFiles.push_back(readFile(path));
  }
  for (const std::string &damaged : damagedFiles) {
    writeFile(path, damaged);
    Tuner again(configs, options);
    int calls = 0;
    const Result *r = again.tune(
        "k;",
        [&](size_t i) {
          ++calls;
          return Trial::time(double(3 - i));
        },
        error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(calls, 3) << "a damaged file was trusted:\n" << damaged;
    EXPECT_FALSE(r->fromDisk);
    EXPECT_EQ(r->best, 2u);
    EXPECT_EQ(readFile(path), good); // rewritten whole
  }
}

TEST_F(AutotunerTest, UnusableTrialsRoundTripThroughTheCache) {
  auto configs = blockConfigs({16, 32, 64});
  std::string error;
  Tuner first(configs, options);
  first.setPrune([](const std::vector<Config> &, const std::string &) {
    return std::vector<size_t>{1, 2};
  });
  ASSERT_TRUE(first.tune(
      "k;", [](size_t i) { return i == 1 ? Trial::failure("ptxas\nerror") : Trial::time(0.125); },
      error));
  Tuner second(configs, options);
  const Result *r = second.lookup("k;");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->trials[0].pruned);
  EXPECT_FALSE(r->trials[1].usable);
  EXPECT_EQ(r->trials[1].reason, "ptxas error");
  EXPECT_DOUBLE_EQ(r->trials[2].ms, 0.125);
}

// The output check: each usable config's output (here a number per config,
// one of them wrong) compared with the first usable config's; the faster
// wrong config is rejected, with its difference, and reported at the end.
TEST_F(AutotunerTest, AConfigWhoseOutputDiffersIsRejected) {
  Tuner tuner(blockConfigs({16, 32, 64, 128}), options);
  // Config 0 fails, so config 1 is the reference; config 2 is the fastest
  // but computes another result.
  const std::vector<double> times = {1.0, 4.0, 0.5, 3.0};
  const std::vector<int> results = {0, 42, 41, 42};
  std::vector<std::pair<size_t, size_t>> asked;
  tuner.setCheck([&](size_t i, size_t reference, std::string &difference) {
    asked.emplace_back(i, reference);
    if (results[i] == results[reference])
      return true;
    difference = "element 3 of 'out' is " + std::to_string(results[i]) + ", config [" +
                 std::to_string(reference) + "]'s is " + std::to_string(results[reference]);
    return false;
  });
  std::vector<std::string> reports;
  tuner.setProgress([&](const Progress &p) {
    if (p.finished)
      reports = p.reports;
  });
  auto bench = [&](size_t i) {
    return i == 0 ? Trial::failure("launch failed") : Trial::time(times[i]);
  };
  std::string error;
  const Result *r = tuner.tune("k;", bench, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, 3u) << "the fastest right config";
  EXPECT_EQ(asked, (std::vector<std::pair<size_t, size_t>>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_TRUE(r->trials[2].rejected);
  EXPECT_FALSE(r->trials[2].usable);
  EXPECT_EQ(r->trials[2].reason,
            "computes another result than config [1] (BLOCK=32, num_warps=2, num_stages=3): "
            "element 3 of 'out' is 41, config [1]'s is 42");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].rfind("[2] BLOCK=64, num_warps=4, num_stages=3: rejected: computes", 0), 0u)
      << reports[0];
  // The rejection survives the disk cache.
  Tuner second(blockConfigs({16, 32, 64, 128}), options);
  const Result *cached = second.lookup("k;");
  ASSERT_TRUE(cached);
  EXPECT_TRUE(cached->trials[2].rejected);
  EXPECT_EQ(cached->trials[2].reason, r->trials[2].reason);
  EXPECT_EQ(cached->best, 3u);
}

// Spills: reported by default, rejected with rejectSpills; the note of a
// usable spilling config survives the disk cache.
TEST_F(AutotunerTest, SpillingConfigsAreReportedOrRejected) {
  auto bench = [](size_t i) {
    Trial t = Trial::time(i == 1 ? 1.0 : 2.0);
    t.spillBytes = i == 1 ? 96 : 0;
    return t;
  };
  std::string error;
  {
    Tuner tuner(blockConfigs({16, 32}), options);
    std::vector<std::string> reports;
    tuner.setProgress([&](const Progress &p) {
      if (p.finished)
        reports = p.reports;
    });
    const Result *r = tuner.tune("k;", bench, error);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ(r->best, 1u) << "reported, still usable";
    EXPECT_EQ(r->trials[1].note, "spills registers: 96 bytes of local memory per thread");
    EXPECT_EQ(reports, (std::vector<std::string>{
                           "[1] BLOCK=32, num_warps=2, num_stages=3: spills registers: 96 bytes "
                           "of local memory per thread"}));
    Tuner second(blockConfigs({16, 32}), options);
    ASSERT_TRUE(second.lookup("k;"));
    EXPECT_EQ(second.lookup("k;")->trials[1].note, r->trials[1].note);
  }
  options.rejectSpills = true;
  options.diskCache = false;
  Tuner tuner(blockConfigs({16, 32}), options);
  const Result *r = tuner.tune("k;", bench, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, 0u);
  EXPECT_TRUE(r->trials[1].rejected);
  EXPECT_EQ(r->trials[1].reason, "spills registers: 96 bytes of local memory per thread "
                                 "(spilling configs are rejected)");
}

TEST_F(AutotunerTest, DiskCacheCanBeTurnedOff) {
  options.diskCache = false;
  Tuner t(blockConfigs({16}), options);
  EXPECT_EQ(t.cachePath("k;"), "");
  std::string error;
  ASSERT_TRUE(t.tune(
      "k;", [](size_t) { return Trial::time(1); }, error));
  EXPECT_FALSE(std::filesystem::exists(dir));

  options.diskCache = true;
  ::setenv("TK_AUTOTUNE_CACHE", "0", 1);
  EXPECT_EQ(Tuner(blockConfigs({16}), options).cachePath("k;"), "");
  ::unsetenv("TK_AUTOTUNE_CACHE");
  options.cacheDir = "";
  // The default directory is CompileCache's.
  std::string expected = cacheDirectory();
  if (!expected.empty()) {
    EXPECT_EQ(Tuner(blockConfigs({16}), options).cachePath("k;").rfind(expected + "/autotune/", 0),
              0u);
  }
}

TEST_F(AutotunerTest, UnwritableCacheIsNotAnError) {
  options.cacheDir = "/proc/definitely/not/writable";
  Tuner t(blockConfigs({16, 32}), options);
  std::string error;
  const Result *r = t.tune(
      "k;", [](size_t i) { return Trial::time(double(i)); }, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, 0u);
}

//
// The public API's parts that need no GPU (include/tk/).
//

//
// Parallel compilation.
//

TEST(AutotunerParallel, ParallelForRunsEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 3u, 8u, 20u}) {
    std::vector<std::atomic<int>> hits(37);
    parallelFor(hits.size(), threads, [&](size_t i) { ++hits[i]; });
    for (size_t i = 0; i < hits.size(); ++i)
      EXPECT_EQ(hits[i].load(), 1) << "index " << i << " with " << threads << " threads";
  }
  parallelFor(0, 4, [](size_t) { ADD_FAILURE() << "called with n = 0"; });
}

TEST(AutotunerParallel, CompileThreadsHonoursRequestEnvironmentAndBounds) {
  const char *saved = std::getenv("TK_COMPILE_THREADS");
  std::string old = saved ? saved : "";
  ::unsetenv("TK_COMPILE_THREADS");
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(compileThreads(8), std::min(8u, hw));
  EXPECT_EQ(compileThreads(1), 1u);
  EXPECT_EQ(compileThreads(0), 1u);
  EXPECT_EQ(compileThreads(8, 3), 3u);
  EXPECT_EQ(compileThreads(2, 5), 2u); // never more threads than configs
  ::setenv("TK_COMPILE_THREADS", "5", 1);
  EXPECT_EQ(compileThreads(8), 5u);
  EXPECT_EQ(compileThreads(8, 2), 2u); // an explicit request wins
  EXPECT_EQ(compileThreads(3), 3u);
  for (const char *bad : {"0", "-2", "four", "3x"}) {
    ::setenv("TK_COMPILE_THREADS", bad, 1);
    EXPECT_EQ(compileThreads(8), std::min(8u, hw)) << bad;
  }
  if (saved)
    ::setenv("TK_COMPILE_THREADS", old.c_str(), 1);
  else
    ::unsetenv("TK_COMPILE_THREADS");
}

TEST_F(AutotunerTest, CompilesSurvivorsInParallelThenBenchmarksOneByOne) {
  options.compileThreads = 4;
  std::vector<Config> configs = blockConfigs({16, 32, 64, 128, 256, 512, 1024, 2048});
  Tuner tuner(configs, options);
  // Config 2 needs too much shared memory (pruned before compiling), config
  // 5 fails to compile; the rest compile, each taking 30 ms.
  Limits limits;
  limits.sharedBytesPerBlock = 1000;
  tuner.setResourceCheck(
      [](size_t i, Resources &need, std::string &) {
        need.threads = 128;
        need.sharedBytes = i == 2 ? 4096 : 0;
        return true;
      },
      limits);
  std::atomic<int> active{0}, maxActive{0}, compiled{0};
  std::vector<std::atomic<int>> compiles(configs.size());
  tuner.setCompile([&](size_t i, std::string &error) {
    int now = ++active;
    for (int m = maxActive; now > m && !maxActive.compare_exchange_weak(m, now);)
      ;
    ++compiles[i];
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --active;
    if (i == 5) {
      error = "ptxas: out of registers";
      return false;
    }
    ++compiled;
    return true;
  });
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(0.1, 3.0);
  std::vector<double> times(configs.size());
  for (double &t : times)
    t = dist(rng);
  std::vector<size_t> benched;
  auto bench = [&](size_t i) {
    // Every surviving config is compiled before the first benchmark.
    EXPECT_EQ(compiled.load(), 6);
    EXPECT_EQ(active.load(), 0);
    benched.push_back(i);
    return Trial::time(times[i]);
  };
  std::string error;
  const Result *r = tuner.tune("n=1;", bench, error);
  ASSERT_TRUE(r) << error;
  EXPECT_GE(maxActive.load(), 2) << "the compiles never overlapped";
  EXPECT_LE(maxActive.load(), 4);
  for (size_t i = 0; i < configs.size(); ++i)
    EXPECT_EQ(compiles[i].load(), i == 2 ? 0 : 1) << "config " << i;
  EXPECT_EQ(benched, (std::vector<size_t>{0, 1, 3, 4, 6, 7})); // in config order
  EXPECT_TRUE(r->trials[2].pruned);
  EXPECT_NE(r->trials[2].reason.find("4096 bytes of shared memory"), std::string::npos);
  EXPECT_FALSE(r->trials[5].usable);
  EXPECT_EQ(r->trials[5].reason, "ptxas: out of registers");
  size_t best = 0;
  for (size_t i : benched)
    if (times[i] < times[best])
      best = i;
  EXPECT_EQ(r->best, best);
}

TEST_F(AutotunerTest, ACompileThatThrowsMakesOnlyItsConfigUnusable) {
  Tuner tuner(blockConfigs({16, 32, 64}), options);
  tuner.setCompile([](size_t i, std::string &) -> bool {
    if (i == 1)
      throw std::runtime_error("out of memory while compiling");
    return true;
  });
  std::string error;
  const Result *r = tuner.tune(
      "n=1;", [](size_t i) { return Trial::time(double(3 - i)); }, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->best, 2u);
  EXPECT_FALSE(r->trials[1].usable);
  EXPECT_EQ(r->trials[1].reason, "out of memory while compiling");
}

// The whole compile path (front end, IR passes, LLVM with its own context
// per compile, the NVPTX target's one-time registration) from several
// threads at once gives byte-identical PTX to a serial compile.
TEST(AutotunerParallel, ConcurrentCompilesMatchSerialOnes) {
  if (!tk::hasNVPTXTarget())
    GTEST_SKIP() << "built without LLVM's NVPTX target";
  const std::string source = R"(import tk


@tk.jit
def scale_sum(x_ptr, out_ptr, n, alpha, BLOCK: tk.constexpr):
    pid = tk.program_id(axis=0)
    offs = pid * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(x_ptr + offs, mask=mask, other=0.0)
    tk.store(out_ptr + offs, x * alpha + tk.sum(x, axis=0), mask=mask)
)";
  std::vector<tk::GpuCompileOptions> opts;
  for (int64_t block : {64, 128, 256, 512, 1024, 2048})
    for (int warps : {1, 4}) {
      tk::GpuCompileOptions o;
      o.kernel = "scale_sum";
      o.signature = "*fp32:16, *fp32:16, i32, fp32";
      o.constants["BLOCK"] = ConstValue::ofInt(block);
      o.numWarps = warps;
      o.arch = "sm_90";
      opts.push_back(o);
    }
  std::vector<std::string> serial(opts.size()), parallel(opts.size()), errors(opts.size());
  for (size_t i = 0; i < opts.size(); ++i) {
    tk::CompiledPTX c;
    ASSERT_TRUE(tk::compileToPTX(source, "scale_sum.tk", opts[i], c, errors[i])) << errors[i];
    serial[i] = c.ptx;
  }
  parallelFor(opts.size(), 6, [&](size_t i) {
    tk::CompiledPTX c;
    if (tk::compileToPTX(source, "scale_sum.tk", opts[i], c, errors[i]))
      parallel[i] = c.ptx;
  });
  for (size_t i = 0; i < opts.size(); ++i) {
    EXPECT_TRUE(errors[i].empty()) << errors[i];
    EXPECT_FALSE(serial[i].empty());
    EXPECT_EQ(parallel[i], serial[i]) << "config " << i;
  }
  // Different configs give different code (the comparison is not vacuous).
  EXPECT_NE(serial[0], serial[2]);
}

TEST(PublicApi, StatusCarriesTheCudaErrorName) {
  tk::Status s = tk::Status::failure("cuMemAlloc(64 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out "
                                     "of memory)");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.cudaError, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(tk::Status::failure("no kernel named 'k'").cudaError, "");
  EXPECT_TRUE(tk::Status().ok());
  try {
    tk::check(s);
    FAIL() << "check() of a failure throws";
  } catch (const tk::Error &e) {
    EXPECT_EQ(e.cudaError(), "CUDA_ERROR_OUT_OF_MEMORY");
    EXPECT_NE(std::string(e.what()).find("cuMemAlloc"), std::string::npos);
  }
}

TEST(PublicApi, ConfigsAndConstants) {
  tk::Config c({{"BLOCK_M", 128}, {"EVEN", true}, {"ACT", "relu"}, {"EPS", 0.5}}, 8, 2);
  EXPECT_EQ(c.str(), "ACT='relu', BLOCK_M=128, EPS=0.5, EVEN=True, num_warps=8, num_stages=2");
  EXPECT_EQ(c.intValue("BLOCK_M"), 128);
  EXPECT_THROW(c.intValue("EVEN"), tk::Error);
  EXPECT_THROW(c.intValue("MISSING"), tk::Error);
  tk::Arg a(int64_t(5)), b(7), f(1.5f), d(1.5), h(true), s(int16_t(2));
  EXPECT_EQ(a.kind, tk::Arg::Kind::I64);
  EXPECT_EQ(b.kind, tk::Arg::Kind::I32);
  EXPECT_EQ(f.kind, tk::Arg::Kind::F32);
  EXPECT_EQ(d.kind, tk::Arg::Kind::F64);
  EXPECT_EQ(h.kind, tk::Arg::Kind::I1);
  EXPECT_EQ(s.kind, tk::Arg::Kind::I16);
  EXPECT_EQ(tk::Arg::fp16(1.0).value.bits16, 0x3C00u);
  EXPECT_EQ(tk::Arg::bf16(1.0).value.bits16, 0x3F80u);
  EXPECT_STREQ(tk::argKindName(tk::Arg::Kind::BF16), "bf16");
  tk::Arg null(nullptr), ch('c');
  EXPECT_EQ(null.kind, tk::Arg::Kind::Pointer);
  EXPECT_EQ(null.value.pointer, 0u);
  EXPECT_EQ(ch.kind, tk::Arg::Kind::I32); // a char promotes to int
  float *device = reinterpret_cast<float *>(uintptr_t(0x1000));
  EXPECT_EQ(tk::Arg(device).value.pointer, 0x1000u);
  EXPECT_EQ(tk::Arg::pointer(0x2000, 64).bytes, 64u);
}

TEST(PublicApi, ErrorsBeforeAnyGpuWork) {
  tk::KernelOptions opts;
  opts.kernel = "add_kernel";
  tk::Kernel k;
  tk::Status s = tk::Kernel::tryFromFile("/no/such/file.tk", opts, k);
  EXPECT_EQ(s.message, "cannot read '/no/such/file.tk': No such file or directory");
  // A directory and an endless device are refused by name (support/FileIO.h).
  EXPECT_EQ(tk::Kernel::tryFromFile("/", opts, k).message, "'/' is a directory, not a source file");
  EXPECT_EQ(tk::Kernel::tryFromFile("/dev/zero", opts, k).message,
            "'/dev/zero' is larger than 16 MiB (the limit on an input file)");
  EXPECT_FALSE(k.valid());
  EXPECT_FALSE(k.tryLaunch(tk::Grid(1), {}).ok()); // an empty kernel, not a crash
  // A key that names no runtime parameter is reported from the front end's
  // view of the kernel, before the driver is needed.
  const char *source = "import tk\n"
                       "@tk.jit\n"
                       "def add_kernel(x_ptr, n, BLOCK: tk.constexpr):\n"
                       "    offs = tk.arange(0, BLOCK)\n"
                       "    tk.store(x_ptr + offs, 1.0, mask=offs < n)\n";
  opts.signature = "*fp32, i32";
  tk::AutotuneOptions tuning;
  tuning.key = {"m"};
  tk::Autotuner t =
      tk::Autotuner::fromSource(source, opts, {tk::Config({{"BLOCK", 64}})}, tuning, "add.tk");
  float *x = nullptr;
  tk::Status bad =
      t.tryLaunch([](const tk::Config &) { return tk::Grid(1); }, std::vector<tk::Arg>{x, 10});
  EXPECT_EQ(bad.message, "autotuner of 'add_kernel': the key names 'm', which is not a runtime "
                         "parameter (x_ptr, n)");
  tuning.key = {"x_ptr"};
  tk::Autotuner p =
      tk::Autotuner::fromSource(source, opts, {tk::Config({{"BLOCK", 64}})}, tuning, "add.tk");
  EXPECT_EQ(p.tryLaunch([](const tk::Config &) { return tk::Grid(1); }, std::vector<tk::Arg>{x, 10})
                .message,
            "autotuner of 'add_kernel': the key names 'x_ptr', which is a pointer");
}

// The launch paths' lock-free table (runtime/LaunchTable.h): lookups while it
// grows, from other threads too.
namespace {
struct TableEntry {
  uint64_t hash;
  int key;
  int value;
};
} // namespace

TEST(LaunchTable, FindsEveryEntryAcrossGrowth) {
  tk::detail::LaunchTable<TableEntry> table;
  auto hashOf = [](int k) { return tk::detail::mixHash(0, uint64_t(k)); };
  auto find = [&](int k) {
    return table.find([&] { return hashOf(k); }, [&](const TableEntry &e) { return e.key == k; });
  };
  EXPECT_EQ(find(1), nullptr);
  // Random keys, some colliding in the low bits a small table indexes by.
  std::mt19937 rng(11);
  std::vector<int> keys;
  for (int i = 0; i < 300; ++i)
    keys.push_back(int(rng() % 100000) * 64);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    const TableEntry *e =
        table.insert(std::make_unique<TableEntry>(TableEntry{hashOf(keys[i]), keys[i], int(i)}));
    EXPECT_EQ(find(keys[i]), e); // the latest entry
    // Every earlier one is still found, through the grown tables.
    for (size_t j = 0; j <= i; j += 7)
      ASSERT_TRUE(find(keys[j]) && find(keys[j])->value == int(j)) << i << " " << j;
  }
  EXPECT_EQ(table.size(), keys.size());
  EXPECT_EQ(find(-64), nullptr);
  EXPECT_EQ(find(keys[0] + 1), nullptr);
}

TEST(LaunchTable, ReadersSeeWholeEntriesWhileOneThreadInserts) {
  tk::detail::LaunchTable<TableEntry> table;
  auto hashOf = [](int k) { return tk::detail::mixHash(7, uint64_t(k)); };
  constexpr int kEntries = 2000;
  std::atomic<int> inserted{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&, r] {
      while (inserted.load() < kEntries)
        for (int k = r; k < inserted.load(); k += 3) {
          // Published before `inserted` counted it: found, and whole.
          const TableEntry *e = table.find([&] { return hashOf(k); },
                                           [&](const TableEntry &x) { return x.key == k; });
          if (!e || e->value != 3 * k)
            ++wrong;
        }
    });
  for (int k = 0; k < kEntries; ++k) {
    table.insert(std::make_unique<TableEntry>(TableEntry{hashOf(k), k, 3 * k}));
    inserted.store(k + 1);
  }
  for (std::thread &t : readers)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
}
