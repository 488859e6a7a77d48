// What the public API's implementation files (PublicApi.cpp,
// PublicAutotuner.cpp) share: the data behind a tk::Kernel and conversions
// from the public types to the driver's. Not installed.
#pragma once

#include "driver/CudaDriver.h"
#include "driver/GpuKernel.h"
#include "tk/Kernel.h"

#include <memory>
#include <string>
#include <vector>

namespace tk::detail {

/// A loaded kernel: one compiled through GpuKernel (launched by it), or one
/// loaded from an ahead-of-time image (launched here).
struct KernelData {
  std::string name;
  std::string ptx;
  std::vector<std::string> paramNames;
  std::vector<Arg::Kind> kinds;
  int numWarps = 4;
  int registers = 0;
  int sharedBytes = 0;
  const GpuKernel *gpu = nullptr; // compiled kernels
  // Image kernels.
  CUmodule module = nullptr; // never unloaded, like GpuKernel's
  CUfunction function = nullptr;
  unsigned dynamicShared = 0;
  const CudaFunctions *api = nullptr;

  static std::shared_ptr<const KernelData> fromGpu(const GpuKernel &gpu);
  static Kernel wrap(std::shared_ptr<const KernelData> data);
};

/// The process's driver, or a thrown tk::Error saying why there is none.
CudaDriver &driverOrThrow();
ConstValue toConstValue(const Constant &c);
GpuCompileOptions toGpuOptions(const KernelOptions &options);
bool readFile(const std::string &path, std::string &text, std::string &error);

} // namespace tk::detail
