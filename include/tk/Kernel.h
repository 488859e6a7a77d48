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
// parameter; a C++ scalar for a scalar parameter, converted to the
// parameter's type when its value survives (see tk::Arg): int, int64_t,
// size_t for any integer type, float or double for fp16 / bf16 / fp32 /
// fp64, bool for i1. A wrong count or kind throws, naming the parameter:
// "kernel 'add_kernel': argument 3 ('n_elements') is i32 in the signature but
// the argument passed is fp64".
//
// Specialisation, by the rule of Python's @tk.jit (docs/semantics.md): an
// integer argument (of an i32/u32/i64/u64 parameter) equal to 1, else
// divisible by 16, else by 8, and a pointer aligned to 16 bytes, are facts
// the compiler uses (a unit stride becomes the constant 1, so the loads
// along it vectorise; divisibility removes masks). launch() computes these
// facts from the arguments and compiles a kernel for each new combination,
// once (cached like any compile); the kernel compiled by
// fromFile/fromSource (whose ptx() and registers() the accessors show) has
// only the facts the signature states. Facts the signature already states
// ("*fp16:16", "i32:1") stay;
// KernelOptions::doNotSpecialize names parameters that never specialise, and
// specialize = false turns it off (one compile serves every value).
//
// Compiling is cached: in memory for the process (the same options give the
// same kernel at the cost of a lookup) and on disk under $TK_CACHE_DIR, so a
// second process skips the compiler. launch() adds a conversion per argument
// and a lookup of the facts to cuLaunchKernel; it does not synchronize.
#pragma once

#include "tk/Device.h"
#include "tk/Error.h"
#include "tk/Remark.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

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
  bool operator==(const Constant &o) const {
    return kind == o.kind && intValue == o.intValue && floatValue == o.floatValue &&
           boolValue == o.boolValue && stringValue == o.stringValue;
  }
  bool operator!=(const Constant &o) const { return !(*this == o); }
};

struct KernelOptions {
  std::string kernel;                        // the @tk.jit function to compile
  std::string signature;                     // Triton-style; empty: the source's annotations
  std::map<std::string, Constant> constants; // constexpr values by name
  int numWarps = 4;
  int numStages = 3;
  std::string arch = "sm_90";
  /// Floating-point contraction (Triton's enable_fp_fusion): `a * b + c`
  /// may become one fma; false rounds every add and multiply on its own.
  bool fpFusion = true;
  /// Flush-to-zero in libdevice's functions and tk.exp2 (Triton's
  /// enable_reflect_ftz, on by default as there): false keeps their
  /// subnormal results.
  bool reflectFtz = true;
  /// Specialise on the arguments at launch (see the header comment).
  bool specialize = true;
  std::vector<std::string> doNotSpecialize; // runtime parameters by name
  /// Record the compile's optimisation remarks (Kernel::remarks()). The
  /// kernel is compiled for them, not read from the compile cache; the code
  /// is the same as without.
  bool remarks = false;
};

/// Programs per axis.
struct Grid {
  unsigned x = 1, y = 1, z = 1;
  Grid(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

/// One launch argument; built implicitly from the values passed to launch().
/// Its kind is the C++ type's: bool i1, int8_t i8, int16_t i16, int and
/// unsigned i32, long / long long and their unsigned forms i64, float fp32,
/// double fp64; fp16 and bf16 come from Arg::fp16(x) / Arg::bf16(x) (or
/// their bit patterns). At launch an argument converts to its parameter's
/// type when nothing is lost: an integer to any integer type its value fits
/// (u8..u64 take the signed kind of their width), a float to any float type
/// (rounded to nearest even, as a C++ conversion would); an integer for a
/// float, a float for an integer, or a pointer for a scalar is an error.
struct Arg {
  /// The scalar kinds of tk's types; the same order as the driver's.
  enum class Kind : uint8_t { Pointer, I1, I8, I16, I32, I64, F16, BF16, F32, F64 };
  // The value comes first: a launch hands the driver its address, and the
  // driver reads as many bytes as the parameter has (little-endian). The
  // driver layer's GpuArg keeps its value in the same union.
  union Value {
    uint64_t pointer;
    uint8_t i1;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t bits16; // fp16 and bf16 patterns
    float f32;
    double f64;
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
  /// A null pointer (not the bool it would otherwise convert to).
  Arg(std::nullptr_t) : kind(Kind::Pointer) { value.pointer = 0; }
  Arg(bool v) : kind(Kind::I1) { set(&value.i1, uint8_t(v ? 1 : 0)); }
  Arg(signed char v) : kind(Kind::I8) { set(&value.i8, int8_t(v)); }
  Arg(unsigned char v) : kind(Kind::I8) { set(&value.i8, int8_t(v)); }
  Arg(short v) : kind(Kind::I16) { set(&value.i16, int16_t(v)); }
  Arg(unsigned short v) : kind(Kind::I16) { set(&value.i16, int16_t(v)); }
  Arg(int v) : kind(Kind::I32) { set(&value.i32, int32_t(v)); }
  Arg(unsigned v) : kind(Kind::I32) { set(&value.i32, int32_t(v)); }
  Arg(long v) : kind(Kind::I64) { set(&value.i64, int64_t(v)); }
  Arg(long long v) : kind(Kind::I64) { set(&value.i64, int64_t(v)); }
  Arg(unsigned long v) : kind(Kind::I64) { set(&value.i64, int64_t(v)); }
  Arg(unsigned long long v) : kind(Kind::I64) { set(&value.i64, int64_t(v)); }
  Arg(float v) : kind(Kind::F32) { set(&value.f32, v); }
  Arg(double v) : kind(Kind::F64) { set(&value.f64, v); }
  /// A device address (CUdeviceptr) and, optionally, its allocation size.
  static Arg pointer(uint64_t address, size_t bytes = 0) {
    Arg a(Kind::Pointer);
    a.value.pointer = address;
    a.bytes = bytes;
    return a;
  }
  /// fp16 / bf16 scalars: rounded from `x` (to nearest even), or given as
  /// their 16-bit patterns.
  static Arg fp16(double x);
  static Arg bf16(double x);
  static Arg fp16Bits(uint16_t bits) { return bits16Arg(Kind::F16, bits); }
  static Arg bf16Bits(uint16_t bits) { return bits16Arg(Kind::BF16, bits); }

private:
  explicit Arg(Kind k) : kind(k) { value.pointer = 0; }
  // Zero the whole union first: narrow kinds leave the upper bytes defined.
  template <class T> void set(T *field, T v) {
    value.pointer = 0;
    *field = v;
  }
  static Arg bits16Arg(Kind k, uint16_t bits) {
    Arg a(k);
    a.value.bits16 = bits;
    return a;
  }
};

/// The arguments of one launch: a read-only view of contiguous Args (a
/// std::vector, a std::array, a C array, or a std::span in C++20). The public headers are C++17;
/// this is what they take where C++20 code would take a std::span<const Arg>.
class ArgList {
public:
  constexpr ArgList() noexcept = default;
  constexpr ArgList(const Arg *data, size_t size) noexcept : data_(data), size_(size) {}
  template <class C,
            class = std::enable_if_t<
                !std::is_same_v<std::decay_t<C>, ArgList> &&
                std::is_convertible_v<decltype(std::data(std::declval<const C &>())), const Arg *>>>
  ArgList(const C &contiguous) noexcept
      : data_(std::data(contiguous)), size_(std::size(contiguous)) {}
#if __cplusplus >= 202002L
  operator std::span<const Arg>() const noexcept { return {data_, size_}; }
#endif
  const Arg *data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const Arg *begin() const noexcept { return data_; }
  const Arg *end() const noexcept { return data_ + size_; }
  const Arg &operator[](size_t i) const noexcept { return data_[i]; }

private:
  const Arg *data_ = nullptr;
  size_t size_ = 0;
};

/// "pointer", "i1", "i8", "i16", "i32", "i64", "fp16", "bf16", "fp32", "fp64".
const char *argKindName(Arg::Kind kind);

namespace detail {
struct KernelData;
}

/// A compiled, loaded kernel. Cheap to copy: copies share one loaded
/// kernel, and its CUDA module is unloaded when the last copy goes (after
/// a context synchronize, so launches still queued finish first). Compiling
/// the same source with the same options while a copy lives gives the same
/// kernel; after the last copy has gone it loads again from the compile
/// cache (no compiler, no JIT). Launching through a handle keeps the module
/// loaded for the launch, from any thread; a CUfunction taken with
/// function() is valid only while a handle lives.
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
    launch(grid, ArgList(list, sizeof...(Ts)), stream);
  }
  void launch(Grid grid, ArgList args, const Stream &stream = Stream()) const {
    Status s;
    if (!launchRaw(grid, args, stream.handle(), &s))
      throw Error(s);
  }
  Status tryLaunch(Grid grid, ArgList args, const Stream &stream = Stream()) const noexcept;

  /// The kernel launch() runs for these arguments: the one compiled for
  /// their facts (compiling it if they are new), or this one when the kernel
  /// does not specialise. Its ptx() shows what the facts changed. Throws
  /// tk::Error on a count or kind mismatch or a failed compile.
  Kernel specialized(ArgList args) const;

  bool valid() const { return data_ != nullptr; }
  const std::string &name() const;
  const std::string &ptx() const; // empty for a kernel loaded from a cubin
  /// The runtime parameters, in order: names and kinds.
  const std::vector<std::string> &parameterNames() const;
  const std::vector<Arg::Kind> &parameterKinds() const;
  int numWarps() const;
  int registers() const;   // per thread
  int localBytes() const;  // local memory per thread: register spills
  int sharedBytes() const; // static shared memory per program
  /// The optimisation remarks of this kernel's compile, in the order they
  /// were made; empty unless KernelOptions::remarks asked for them.
  const std::vector<KernelRemark> &remarks() const;
  /// The driver's CUfunction, for callers that launch it themselves (CUDA
  /// graphs, a raw cuLaunchKernel); valid while a handle to this kernel
  /// lives (see the class comment).
  void *function() const;

  /// The launch itself: false with `status` set on a mismatch or a CUDA
  /// error. Does not throw.
  bool launchRaw(Grid grid, ArgList args, void *stream, Status *status) const noexcept;

private:
  explicit Kernel(std::shared_ptr<const detail::KernelData> data) : data_(std::move(data)) {}
  std::shared_ptr<const detail::KernelData> data_;
  friend struct detail::KernelData;
};

} // namespace tk
