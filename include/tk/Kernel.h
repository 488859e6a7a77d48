// tk/Kernel.h: compile a tk kernel and launch it from C++.
//
//   tk::KernelOptions opts;
//   opts.kernel = "softmax_kernel";                       // the @tk.jit function
//   opts.signature = "*fp32:16, *fp32:16, i32, i32, i32, i32"; // runtime parameters
//   opts.constants["BLOCK_SIZE"] = 1024;                  // constexprs (int, float, bool, string)
//   opts.numWarps = 4;
//   tk::Kernel k = tk::Kernel::fromFile("02-fused-softmax.tk", opts);
//   k.launch(tk::Grid(n_rows), stream, out, in, n_cols, n_cols, n_rows, n_cols);
//
// Arguments are the kernel's runtime parameters (those not constexpr) in
// order: a tk::DeviceMemory or a device pointer (T*) for a pointer
// parameter; int / unsigned for i32 and u32, int64_t for i64 and u64, float
// (or double, narrowed) for fp32. A wrong count or kind throws, naming the
// parameter: "kernel 'add_kernel': argument 3 ('n_elements') is i32 in the
// signature (i32) but the argument passed is i64".
//
// Compiling is cached: in memory for the process (the same options give the
// same kernel at the cost of a lookup) and on disk under $TK_CACHE_DIR, so a
// second process skips the compiler. launch() adds one kind comparison per
// argument to cuLaunchKernel; it does not synchronize.
#pragma once

#include "tk/Device.h"
#include "tk/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tk {

/// A constexpr value.
struct Constant {
  enum class Kind : uint8_t { Int, Float, Bool, String };
  Kind kind = Kind::Int;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  std::string stringValue;

  Constant() = default;
  Constant(int v) : intValue(v) {}
  Constant(long v) : intValue(v) {}
  Constant(long long v) : intValue(v) {}
  Constant(unsigned v) : intValue(v) {}
  Constant(double v) : kind(Kind::Float), floatValue(v) {}
  Constant(bool v) : kind(Kind::Bool), boolValue(v) {}
  Constant(const char *v) : kind(Kind::String), stringValue(v) {}
  Constant(std::string v) : kind(Kind::String), stringValue(std::move(v)) {}
  /// Python's spelling: 128, 0.5, True, 'relu'.
  std::string str() const;
  bool operator==(const Constant &) const = default;
};

struct KernelOptions {
  std::string kernel;                        // the @tk.jit function to compile
  std::string signature;                     // Triton-style; empty: the source's annotations
  std::map<std::string, Constant> constants; // constexpr values by name
  int numWarps = 4;
  int numStages = 3;
  std::string arch = "sm_90";
};

/// Programs per axis.
struct Grid {
  unsigned x = 1, y = 1, z = 1;
  Grid(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

/// One launch argument; built implicitly from the values passed to launch().
struct Arg {
  enum class Kind : uint8_t { Pointer, I32, I64, F32 };
  union {
    uint64_t pointer;
    int32_t i32;
    int64_t i64;
    float f32;
  } value;
  Kind kind;
  /// A pointer's allocation size when known (DeviceMemory, Arg::pointer(p,
  /// n)); the autotuner needs it to reset or restore the argument.
  size_t bytes = 0;

  Arg(const DeviceMemory &m) : kind(Kind::Pointer), bytes(m.bytes()) {
    value.pointer = m.address();
  }
  template <class T> Arg(T *devicePointer) : kind(Kind::Pointer) {
    value.pointer = reinterpret_cast<uint64_t>(devicePointer);
  }
  Arg(int v) : kind(Kind::I32) { value.i32 = v; }
  Arg(unsigned v) : kind(Kind::I32) { value.i32 = int32_t(v); }
  Arg(long v) : kind(Kind::I64) { value.i64 = v; }
  Arg(long long v) : kind(Kind::I64) { value.i64 = v; }
  Arg(unsigned long v) : kind(Kind::I64) { value.i64 = int64_t(v); }
  Arg(float v) : kind(Kind::F32) { value.f32 = v; }
  Arg(double v) : kind(Kind::F32) { value.f32 = float(v); }
  /// A device address (CUdeviceptr) and, optionally, its allocation size.
  static Arg pointer(uint64_t address, size_t bytes = 0) {
    Arg a(0);
    a.kind = Kind::Pointer;
    a.value.pointer = address;
    a.bytes = bytes;
    return a;
  }
};

/// "pointer", "i32", "i64", "fp32".
const char *argKindName(Arg::Kind kind);

namespace detail {
struct KernelData;
}

/// A compiled, loaded kernel. Cheap to copy (a shared handle).
class Kernel {
public:
  Kernel() = default;

  /// Compiles `options.kernel` from a .tk file or from source text (named
  /// `fileName` in diagnostics). Throws tk::Error with the rendered
  /// diagnostics ("softmax.tk:12:5: error: ...", the line, a caret) or the
  /// driver's message.
  static Kernel fromFile(const std::string &path, const KernelOptions &options);
  static Kernel fromSource(const std::string &source, const KernelOptions &options,
                           const std::string &fileName = "<source>");
  static Status tryFromFile(const std::string &path, const KernelOptions &options,
                            Kernel &out) noexcept;
  static Status tryFromSource(const std::string &source, const KernelOptions &options,
                              const std::string &fileName, Kernel &out) noexcept;

  /// A kernel tkc compiled ahead of time: a cubin for this device, else the
  /// PTX (`ptx`, NUL-free text) is loaded; no compiler runs. `params` are
  /// the runtime parameters' kinds and names.
  struct Image {
    std::string name;
    const char *ptx = nullptr;
    const unsigned char *cubin = nullptr;
    size_t cubinBytes = 0;
    int cubinArch = 0; // 90 for sm_90; 0: no cubin
    std::vector<Arg::Kind> params;
    std::vector<std::string> paramNames;
    int numWarps = 4;
    int dynamicSharedBytes = 0;
  };
  static Kernel fromImage(const Image &image);

  /// Launches on `grid` programs on `stream` (see the header comment).
  template <class... Ts> void launch(Grid grid, const Stream &stream, const Ts &...args) const {
    const Arg list[] = {Arg(args)...};
    launch(grid, std::span<const Arg>(list, sizeof...(Ts)), stream);
  }
  void launch(Grid grid, std::span<const Arg> args, const Stream &stream = Stream()) const {
    Status s;
    if (!launchRaw(grid, args, stream.handle(), &s))
      throw Error(s);
  }
  Status tryLaunch(Grid grid, std::span<const Arg> args,
                   const Stream &stream = Stream()) const noexcept;

  bool valid() const { return data_ != nullptr; }
  const std::string &name() const;
  const std::string &ptx() const; // empty for a kernel loaded from a cubin
  /// The runtime parameters, in order: names and kinds.
  const std::vector<std::string> &parameterNames() const;
  const std::vector<Arg::Kind> &parameterKinds() const;
  int numWarps() const;
  int registers() const;   // per thread
  int sharedBytes() const; // static shared memory per program
  /// The driver's CUfunction, for callers that launch it themselves (CUDA
  /// graphs, a raw cuLaunchKernel); valid for the process's lifetime.
  void *function() const;

  /// The launch itself: false with `status` set on a mismatch or a CUDA
  /// error. Does not throw.
  bool launchRaw(Grid grid, std::span<const Arg> args, void *stream, Status *status) const noexcept;

private:
  explicit Kernel(std::shared_ptr<const detail::KernelData> data) : data_(std::move(data)) {}
  std::shared_ptr<const detail::KernelData> data_;
  friend struct detail::KernelData;
};

} // namespace tk
