// What the public API's implementation files (PublicApi.cpp,
// PublicAutotuner.cpp) share: the data behind a tk::Kernel and conversions
// from the public types to the driver's. Not installed.
#pragma once

#include "driver/CudaDriver.h"
#include "driver/GpuKernel.h"
#include "tk/Kernel.h"

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tk::detail {

/// The front end alone (no IR, no LLVM): how every parameter of
/// `opts.kernel` binds under `opts` (signature, constants). False with the
/// rendered diagnostics in `error`.
bool frontEndBindings(const std::string &source, const std::string &fileName,
                      const GpuCompileOptions &opts, std::vector<ParamBinding> &out,
                      std::string &error);

/// Launch-time specialisation (include/tk/Kernel.h): which facts the
/// arguments of a launch give (an integer equal to 1 or divisible by 16, a
/// pointer aligned to 16 bytes), packed in a key, and the compile options
/// that state them. The rule is Python's (docs/python.md).
///
///   add(x_ptr, y_ptr, n, BLOCK: tk.constexpr), signature "*fp32, *fp32, i32":
///   a launch with x at 0x...100, y at 0x...108, n = 4096 has the key
///   {x: aligned, n: divisible} and compiles "*fp32:16, *fp32, i32:16, 0"
///   with BLOCK's value among the constants.
class Specializer {
public:
  using Key = std::array<uint64_t, 2>; // 2 bits per runtime parameter (64 at most)

  /// Reads the parameters of `base.kernel` (front end only); `noSpecialize`
  /// names runtime parameters that never specialise.
  bool init(const std::string &source, const std::string &fileName, const GpuCompileOptions &base,
            const std::vector<std::string> &noSpecialize, std::string &error);
  /// Whether any parameter can specialise (else every key is the same).
  bool active() const { return active_; }
  /// The facts of `args` (one per runtime parameter, count already checked).
  Key keyOf(std::span<const Arg> args) const noexcept;
  /// `config` (base's kernel, with its own constants and launch options)
  /// with a signature stating the facts of `key` and of the base signature.
  GpuCompileOptions optionsFor(const GpuCompileOptions &config, const Key &key) const;
  /// "x_ptr:16, n:16" (the facts of `key`), for messages and tests.
  std::string describe(const Key &key) const;

private:
  struct Param {
    std::string name;
    std::string entry;     // the signature entry without facts: "*fp32", "i32", "0"
    bool argument = false; // a runtime parameter (else a constant)
    bool pointer = false;
    bool canSpecialize = false;
    int64_t baseDivisibility = 1; // stated by the base signature
    bool baseEqualsOne = false;
    ConstValue value;         // a constant's value
    bool valueInBase = false; // the constant came from base.constants
  };
  std::vector<Param> params_;   // every parameter of the kernel, in order
  std::vector<size_t> runtime_; // params_ index of each runtime parameter
  bool active_ = false;
};

/// A kernel compiled from source whose launches specialise: the compiled
/// variants by key, compiled on first use. A launch with the key of the
/// previous one finds its variant without a lock (`last`); others scan the
/// variants under the lock.
struct SpecializedVariants {
  struct Variant {
    Specializer::Key key;
    const GpuKernel *kernel;
  };
  std::string source, fileName;
  GpuCompileOptions base;
  Specializer specializer;
  std::mutex mutex;
  std::deque<Variant> compiled; // addresses stay valid as variants are added
  std::atomic<const Variant *> last{nullptr};

  /// The variant for `args`; null with `error` when its compile fails.
  const GpuKernel *kernelFor(std::span<const Arg> args, std::string &error);
};

/// Converts a launch argument to its parameter's kind (include/tk/Kernel.h:
/// integers that fit, floats rounded); false when the kinds do not mix or
/// the integer does not fit.
bool convertArg(const Arg &a, Arg::Kind want, GpuArg &out) noexcept;
/// Why convertArg failed, for argument `index` named `name`.
std::string conversionError(const std::string &kernel, size_t index, const std::string &name,
                            Arg::Kind want, const Arg &a);
/// An integer argument's value (i1 .. i64 kinds).
int64_t intArgValue(const Arg &a) noexcept;
/// A float argument's value (fp16 .. fp64 kinds).
double floatArgValue(const Arg &a) noexcept;
inline bool isIntKind(Arg::Kind k) { return k >= Arg::Kind::I1 && k <= Arg::Kind::I64; }
inline bool isFloatKind(Arg::Kind k) { return k >= Arg::Kind::F16; }

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
  // Compiled kernels that specialise at launch (null: launch `gpu` as is).
  std::shared_ptr<SpecializedVariants> variants;

  static std::shared_ptr<const KernelData> fromGpu(const GpuKernel &gpu);
  static Kernel wrap(std::shared_ptr<const KernelData> data);
};

/// The process's driver, or a thrown tk::Error saying why there is none.
CudaDriver &driverOrThrow();
ConstValue toConstValue(const Constant &c);
GpuCompileOptions toGpuOptions(const KernelOptions &options);
bool readFile(const std::string &path, std::string &text, std::string &error);

} // namespace tk::detail
