// What the public API's implementation files (PublicApi.cpp,
// PublicAutotuner.cpp) share: the data behind a tk::Kernel and conversions
// from the public types to the driver's. Not installed.
#pragma once

#include "compiler/LaunchArgs.h"
#include "driver/CudaDriver.h"
#include "driver/HipDriver.h"
#include "runtime/GpuKernel.h"
#include "runtime/LaunchTable.h"
#include "tk/Kernel.h"

#include <array>
#include <atomic>
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
/// arguments of a launch give (an integer equal to 1, divisible by 16 or by
/// 8, a pointer aligned to 16 bytes), packed in a key, and the compile
/// options that state them. The rule is Python's:
/// compiler/ArgSpecialization.h.
///
///   add(x_ptr, y_ptr, n, BLOCK: tk.constexpr), signature "*fp32, *fp32, i32":
///   a launch with x at 0x...100, y at 0x...108, n = 4096 has the key
///   {x: aligned, n: divisible} and compiles "*fp32:16, *fp32, i32:16, 0"
///   with BLOCK's value among the constants.
class Specializer {
public:
  using Key = std::array<uint64_t, 2>; // an ArgFact (2 bits) per runtime parameter, 64 at most

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
  /// "x_ptr:16, n:8" (the facts of `key`), for messages and tests.
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

/// The hash of a specialisation key (LaunchTable's), and equality spelled
/// out (std::array's operator== calls memcmp on the launch path).
inline uint64_t hashOf(const Specializer::Key &key) { return mixHash(mixHash(0, key[0]), key[1]); }
inline bool sameKey(const Specializer::Key &a, const Specializer::Key &b) {
  return a[0] == b[0] && a[1] == b[1];
}

/// A kernel compiled from source whose launches specialise: the compiled
/// variants by key, compiled on first use. A launch finds its variant in a
/// LaunchTable (no lock, no allocation, no reference count); a new key
/// compiles under no lock and is added under `mutex`. The variants hold
/// their kernels (and so their modules) as long as this object lives.
struct SpecializedVariants {
  struct Variant {
    uint64_t hash;
    Specializer::Key key;
    std::shared_ptr<const GpuKernel> kernel;
  };
  std::string source, fileName;
  GpuCompileOptions base;
  Specializer specializer;
  std::mutex mutex; // serialises inserts
  LaunchTable<Variant> compiled;

  /// The variant for `args`, valid while this object lives; null with
  /// `error` when its compile fails.
  const Variant *variantFor(std::span<const Arg> args, std::string &error);
};

/// A public argument as the launch path's typed value.
inline ArgValue argValue(const Arg &a) noexcept { return toArgValue(a.kind, a.value); }

/// Converts a launch argument to its parameter's kind (compiler/
/// LaunchArgs.h: integers that fit, floats rounded); false when the kinds
/// do not mix or the integer does not fit.
inline bool convertArg(const Arg &a, Arg::Kind want, GpuArg &out) noexcept {
  out = GpuArg::ofI64(0);
  out.kind = want;
  return convertArg(argValue(a), SlotKind(want), &out.value);
}
/// Why convertArg failed, for argument `index` named `name` (LaunchArgs'
/// one wording).
inline std::string conversionError(const std::string &kernel, size_t index, const std::string &name,
                                   Arg::Kind want, const Arg &a) {
  return argError(kernel, index, name, SlotKind(want), argValue(a));
}
/// An integer argument's value (i1 .. i64 kinds).
inline int64_t intArgValue(const Arg &a) noexcept { return integerValue(argValue(a)); }
/// A float argument's value (fp16 .. fp64 kinds).
inline double floatArgValue(const Arg &a) noexcept { return floatValue(argValue(a)); }
inline bool isIntKind(Arg::Kind k) { return isIntegerSlot(SlotKind(k)); }
inline bool isFloatKind(Arg::Kind k) { return isFloatSlot(SlotKind(k)); }

/// A loaded kernel: one compiled through GpuKernel (launched by it), or one
/// loaded from an ahead-of-time image (launched here). The tk::Kernel
/// handles share it; the last one to go releases the GpuKernel (whose
/// module is unloaded once no other handle holds it) or unloads the image's
/// module.
struct KernelData {
  KernelData() = default;
  KernelData(const KernelData &) = delete;
  KernelData &operator=(const KernelData &) = delete;
  ~KernelData();

  std::string name;
  std::string ptx;
  std::vector<std::string> paramNames;
  std::vector<Arg::Kind> kinds;
  int numWarps = 4;
  // Threads one program runs on: num_warps x 32 on NVIDIA, the code
  // object's workgroup size on AMD (a wavefront is 64 lanes on gfx90a and
  // gfx942).
  int threads = 128;
  int registers = 0;
  int localBytes = 0; // per thread: register spills
  int sharedBytes = 0;
  std::shared_ptr<const GpuKernel> gpu; // compiled kernels
  // Image kernels: the module is this object's.
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  unsigned dynamicShared = 0;
  const CudaFunctions *api = nullptr;
  CudaDriver *driver = nullptr;
  // Compiled kernels that specialise at launch (null: launch `gpu` as is).
  std::shared_ptr<SpecializedVariants> variants;

  static std::shared_ptr<const KernelData> fromGpu(std::shared_ptr<const GpuKernel> gpu);
  static Kernel wrap(std::shared_ptr<const KernelData> data);
  /// The data behind a valid handle.
  static const KernelData &of(const Kernel &k) { return *k.data_; }
};

/// The process's CUDA driver, or a thrown tk::Error saying why there is none.
CudaDriver &driverOrThrow();
/// The runtime Device.h's functions (memory, streams, synchronize, device
/// info) use: CUDA's when a CUDA driver and GPU are usable, else HIP's when
/// an AMD GPU is, else neither (the error then names both reasons). Kernels
/// launch on their own target's runtime (GpuKernel.h).
struct DeviceRuntime {
  CudaDriver *cuda = nullptr;
  HipDriver *hip = nullptr;
  explicit operator bool() const { return cuda || hip; }
};
DeviceRuntime deviceRuntime(std::string &error);
DeviceRuntime deviceRuntimeOrThrow();
ConstValue toConstValue(const Constant &c);
GpuCompileOptions toGpuOptions(const KernelOptions &options);
bool readFile(const std::string &path, std::string &text, std::string &error);

} // namespace tk::detail
