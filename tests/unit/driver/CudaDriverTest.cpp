// The CUDA driver layer on a machine without a GPU (CI): loading libcuda
// fails with one clear message, and asking again gives the same answer
// without trying again. On a machine with a driver the check skips;
// tests/gpu covers that side, and tests/unit/runtime/GpuKernelTest.cpp what
// a compile does without a driver.
#include "driver/CudaDriver.h"

#include <gtest/gtest.h>

#include <string>

using namespace tk;

TEST(CudaDriverTest, NoDriverIsOneClearError) {
  std::string error;
  CudaDriver *driver = CudaDriver::get(error);
  if (driver)
    GTEST_SKIP() << "a CUDA driver is present (" << driver->deviceName() << ")";
  EXPECT_TRUE(error.rfind("no CUDA driver: libcuda.so.1 not found (", 0) == 0 ||
              error.rfind("no CUDA device", 0) == 0 || error.find("cuInit failed") == 0)
      << error;
  // Asking again gives the same answer without trying again.
  std::string again;
  EXPECT_EQ(CudaDriver::get(again), nullptr);
  EXPECT_EQ(again, error);
}
