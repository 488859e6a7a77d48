// GpuKernel: tk's C++ compile-and-launch API. A kernel is compiled from
// `.tk` source (a file or a string) for one specialisation — kernel name,
// signature, constexpr values, warps per program, target arch — to PTX,
// loaded into the GPU through CudaDriver, and launched with typed arguments.
//
//   GpuCompileOptions opts;
//   opts.kernel = "add_kernel";
//   opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
//   opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
//   std::string error;
//   GpuKernel *add = GpuKernel::compileFile("tutorials/01-vector-add.tk", opts, error);
//   if (!add)
//     ... error holds the rendered diagnostics ("01-vector-add.tk:17:5: error: ...",
//         source line, caret) or the driver's message and JIT log
//   GpuArg args[] = {GpuArg::ptr(x), GpuArg::ptr(y), GpuArg::ptr(out),
//                    GpuArg::ofI32(n)};
//   if (!add->launch({cdiv(n, 1024), 1, 1}, args, /*stream=*/nullptr, error))
//     ... "argument 3 ('n_elements') is i32 in the signature (i32) but
//         the argument passed is i64"
//
// Arguments are the kernel's runtime parameters (those that are not
// constexpr) in parameter order: device pointers for pointer parameters,
// i32/i64/fp32 scalars for the integer and float ones (u32/u64 take i32/i64).
// A parameter specialised to 1 ("i32:1") still takes its argument.
//
// Compiled kernels live in an in-memory cache for the whole process, keyed by
// the source text, file name and every option, so compiling the same thing
// twice costs one map lookup; the pointer stays valid until exit. (The
// on-disk cache of design.md is later work.)
//
// launch() is the fast path: it checks each argument's kind against a table
// built at compile time and points the driver's parameter array at the
// arguments themselves, with no allocation and no lookup. Any thread may
// launch, as long as the primary context is current there
// (CudaDriver::makeCurrent).
#pragma once

#include "driver/CudaDriver.h"
#include "ir/Specialize.h"

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tk {

/// One launch argument.
struct GpuArg {
  enum class Kind : uint8_t { Pointer, I32, I64, F32 };
  // The value comes first: launch() hands the driver its address.
  union {
    CUdeviceptr pointer;
    int32_t i32;
    int64_t i64;
    float f32;
  } value;
  Kind kind;

  static GpuArg ptr(CUdeviceptr p) {
    GpuArg a(Kind::Pointer);
    a.value.pointer = p;
    return a;
  }
  static GpuArg ofI32(int32_t x) {
    GpuArg a(Kind::I32);
    a.value.i32 = x;
    return a;
  }
  static GpuArg ofI64(int64_t x) {
    GpuArg a(Kind::I64);
    a.value.i64 = x;
    return a;
  }
  static GpuArg ofF32(float x) {
    GpuArg a(Kind::F32);
    a.value.f32 = x;
    return a;
  }

private:
  explicit GpuArg(Kind k) : kind(k) { value.i64 = 0; }
};

/// "pointer", "i32", "i64", "fp32".
const char *gpuArgKindName(GpuArg::Kind kind);

struct GpuCompileOptions {
  std::string kernel;                          // the @tk.jit function to compile
  std::string signature;                       // Triton-style; empty: the annotations
  std::map<std::string, ConstValue> constants; // constexpr values by name (tkc's -D)
  int numWarps = 4;
  std::string arch = "sm_90";
};

/// One runtime parameter of a compiled kernel.
struct GpuParam {
  std::string name;
  GpuArg::Kind kind = GpuArg::Kind::I32;
  bool supported = true; // false for scalar types launch() cannot pass (fp16, i1, ...)
  std::string typeName;  // "ptr<fp32>", "i32", ...
};

class GpuKernel {
public:
  /// Compiles and loads `opts.kernel` from `source` (named `fileName` in
  /// diagnostics), or returns the cached kernel. Null after setting `error`.
  static GpuKernel *compile(const std::string &source, const std::string &fileName,
                            const GpuCompileOptions &opts, std::string &error);
  /// The same from a file.
  static GpuKernel *compileFile(const std::string &path, const GpuCompileOptions &opts,
                                std::string &error);

  /// Launches on `grid` programs with `args` (see the header comment).
  /// Returns false with `error` naming the argument on a count or kind
  /// mismatch, or the CUDA error of cuLaunchKernel. Does not synchronize.
  bool launch(std::array<unsigned, 3> grid, std::span<const GpuArg> args, CUstream stream,
              std::string &error) const;

  const std::string &name() const { return name_; }
  const std::string &ptx() const { return ptx_; }
  const std::vector<GpuParam> &params() const { return params_; }
  int numWarps() const { return numWarps_; }
  CUfunction function() const { return function_; }
  const KernelResources &resources() const { return resources_; }

private:
  GpuKernel() = default;
  bool reportMismatch(std::span<const GpuArg> args, std::string &error) const;

  std::string name_;
  std::string ptx_;
  std::vector<GpuParam> params_;
  std::vector<GpuArg::Kind> kinds_; // params_[i].kind, packed for the launch check
  bool allSupported_ = true;
  int numWarps_ = 4;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  KernelResources resources_;
  const CudaFunctions *api_ = nullptr;
  CudaDriver *driver_ = nullptr;

  friend class GpuKernelCache;
};

/// Compiles `opts.kernel` of `source` to PTX without touching a GPU (tests,
/// tools): the PTX text and the runtime parameters. False with rendered
/// diagnostics in `error`.
bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, std::string &ptx, std::vector<GpuParam> &params,
                  int &numWarps, std::string &error);

/// A device allocation that frees itself; for tests, examples and benches.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  bool allocate(size_t bytes, std::string &error);
  bool upload(const void *src, size_t bytes, std::string &error);
  bool download(void *dst, size_t bytes, std::string &error) const;

  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  GpuArg arg() const { return GpuArg::ptr(ptr_); }

private:
  void release();
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

} // namespace tk
