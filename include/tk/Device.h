// tk/Device.h: the GPU, streams and device memory for host programs that
// launch tk kernels. tk reaches CUDA through the driver API loaded at run
// time (libcuda.so.1), so a program built against tk runs on machines
// without a GPU and can ask first:
//
//   std::string why;
//   if (!tk::deviceAvailable(&why)) { std::printf("skipped: %s\n", why.c_str()); return 0; }
//   tk::DeviceInfo gpu = tk::deviceInfo();            // "NVIDIA H200", 90, 132 SMs, ...
//   std::vector<float> host(n, 1.0f);
//   tk::DeviceMemory x = tk::DeviceMemory::fromHost(host); // allocated and copied
//   tk::DeviceMemory y(n * sizeof(float));                 // uninitialised
//   y.zero();
//   tk::Stream stream = tk::Stream::create();         // or tk::Stream() for the default
//   ... kernel.launch(grid, stream, x, y, n) ...
//   stream.synchronize();
//   std::vector<float> out = y.toHost<float>();
//
// Memory and streams free themselves (RAII, move-only). Device 0's primary
// context is used: the one the CUDA runtime, PyTorch and CuPy share, so their
// pointers and streams can be passed to tk (Stream::wrap, Arg from a pointer).
#pragma once

#include "tk/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tk {

struct DeviceInfo {
  std::string name;          // "NVIDIA H200"
  int computeCapability = 0; // 90 for sm_90
  int multiprocessors = 0;
  int maxThreadsPerBlock = 0;
  int sharedBytesPerBlock = 0; // static shared memory per program
  int registersPerBlock = 0;
};

/// Whether a CUDA driver and a GPU are usable; `why` says why not.
bool deviceAvailable(std::string *why = nullptr);
/// Device 0. Throws without a GPU.
DeviceInfo deviceInfo();
/// Waits for all work on the device (cuCtxSynchronize).
void synchronize();

/// A CUDA stream: the legacy default stream (Stream()), one tk creates and
/// destroys (create()), or someone else's (wrap(): a cudaStream_t, CUstream,
/// torch.cuda.Stream.cuda_stream; not destroyed by tk).
class Stream {
public:
  Stream() = default;
  static Stream create();
  static Stream wrap(void *handle);
  ~Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  void synchronize() const;
  void *handle() const { return handle_; }

private:
  void *handle_ = nullptr;
  bool owned_ = false;
};

/// A device allocation.
class DeviceMemory {
public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory &&other) noexcept;
  DeviceMemory &operator=(DeviceMemory &&other) noexcept;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  /// Allocates `values.size()` elements and copies them in.
  template <class T> static DeviceMemory fromHost(const std::vector<T> &values) {
    DeviceMemory m(values.size() * sizeof(T));
    m.upload(values.data(), values.size() * sizeof(T));
    return m;
  }

  /// Synchronous copies (the legacy default stream); `bytes` at most bytes().
  void upload(const void *src, size_t bytes);
  void download(void *dst, size_t bytes) const;
  template <class T> void upload(const std::vector<T> &values) {
    upload(values.data(), values.size() * sizeof(T));
  }
  /// The whole allocation as `T`s.
  template <class T> std::vector<T> toHost() const {
    std::vector<T> out(bytes_ / sizeof(T));
    download(out.data(), out.size() * sizeof(T));
    return out;
  }
  /// Sets every byte to zero.
  void zero();

  /// The device address (a CUdeviceptr).
  uint64_t address() const { return ptr_; }
  size_t bytes() const { return bytes_; }

private:
  void release() noexcept;
  uint64_t ptr_ = 0;
  size_t bytes_ = 0;
};

} // namespace tk
