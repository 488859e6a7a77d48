// The registers remark's arithmetic (driver/Resources.h): ptxas -v's report
// read per kernel, and occupancy from registers, shared memory and threads
// against each arch's limits, with the limiting resource named.
#include "driver/Resources.h"

#include <gtest/gtest.h>

using namespace tk;

TEST(PtxasReport, ReadsEachKernel) {
  std::vector<PtxasUsage> k = parsePtxasReport(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'small' for 'sm_90'\n"
      "ptxas info    : Function properties for small\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 18 registers, used 0 barriers, 372 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'big' for 'sm_90'\n"
      "ptxas info    : Function properties for big\n"
      "    1208 bytes stack frame, 1356 bytes spill stores, 1200 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 1208 bytes cumulative stack size\n");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "small");
  EXPECT_EQ(k[0].registers, 18);
  EXPECT_EQ(k[0].spillStores, 0);
  EXPECT_EQ(k[1].name, "big");
  EXPECT_EQ(k[1].registers, 255);
  EXPECT_EQ(k[1].stackBytes, 1208);
  EXPECT_EQ(k[1].spillStores, 1356);
  EXPECT_EQ(k[1].spillLoads, 1200);
}

TEST(Occupancy, NamesTheLimitingResource) {
  // 128 threads at 32 registers: 16 blocks by registers and by threads; the
  // 32-block limit does not bind; threads come first among equals.
  Occupancy o = occupancy("sm_90", 32, 0, 128);
  EXPECT_EQ(o.blocksPerSm, 16);
  EXPECT_EQ(o.percent, 100);
  EXPECT_EQ(o.limit, "threads");
  // 128 registers per thread: 65536 / (128 x 32) = 16 warps = 4 blocks.
  o = occupancy("sm_90", 128, 0, 128);
  EXPECT_EQ(o.blocksPerSm, 4);
  EXPECT_EQ(o.limit, "registers");
  EXPECT_EQ(o.percent, 25);
  // 100 KiB of shared memory per block: two fit in 228 KiB (1 KiB reserved
  // per block).
  o = occupancy("sm_90", 32, 100 * 1024, 128);
  EXPECT_EQ(o.blocksPerSm, 2);
  EXPECT_EQ(o.limit, "shared memory");
  // sm_86: 1536 threads, 100 KiB per SM.
  o = occupancy("sm_86", 16, 0, 32);
  EXPECT_EQ(o.blocksPerSm, 16);
  EXPECT_EQ(o.limit, "blocks");
  EXPECT_EQ(o.maxWarpsPerSm, 48);
  // Registers are allocated per warp in units of 256: 33 registers take 40.
  o = occupancy("sm_90", 33, 0, 256);
  EXPECT_EQ(o.byRegisters, 65536 / (40 * 32) / 8);
}
