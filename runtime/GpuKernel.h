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
//     ... "kernel 'add_kernel': argument 3 ('n_elements') is i32 in the
//         signature but the argument passed is i64"
//
// Arguments are the kernel's runtime parameters (those that are not
// constexpr) in parameter order: device pointers for pointer parameters, a
// scalar of the parameter's type for the others (u8/u16/u32/u64 take the
// signed kind of their width; fp16/bf16 pass their bit patterns). A
// parameter specialised to 1 ("i32:1") still takes its argument.
//
// Ownership: a GpuKernel owns its CUmodule and unloads it when it is
// destroyed (CudaDriver::unloadModule: primary context, after a context
// synchronize). compileShared() hands out shared ownership: the module stays
// loaded while any std::shared_ptr to the kernel lives (tk::Kernel and
// tk::Autotuner hold theirs; a launch runs through a handle its caller
// holds, so no launch can race the unload) and is unloaded with the last
// one. compile() is the older raw-pointer form: it pins the kernel for the
// process's life (the module stays loaded until exit, never unloaded), so
// its pointer stays valid as it always did.
//
//   std::shared_ptr<const GpuKernel> k = GpuKernel::compileShared(src, "add.tk", opts, error);
//   ... launches ...
//   k.reset(); // the last handle: the module is unloaded
//
// Compiled kernels are found again through an in-memory table keyed by a
// SHA-256 of the compiler version, the source text, file name and every
// option, so compiling the same thing twice while a handle lives costs one
// map lookup and gives the same kernel. The table holds weak references
// (and the pinned ones): a kernel whose handles are all gone is recompiled
// from the compile cache on the next request, which skips the compiler and
// the JIT. The PTX and metadata, and the cubin the driver's JIT made from
// them, also go to the disk cache (runtime/CompileCache.h), so another
// process skips the compile and the JIT.
//
// launch() is the fast path: it checks each argument's kind against a table
// built at compile time and points the driver's parameter array at the
// arguments themselves, with no allocation and no lookup. Any thread may
// launch, as long as the primary context is current there
// (CudaDriver::makeCurrent).
//
// The target: an AMD GPU arch in `opts.arch` (gfx90a, gfx942, gfx1100;
// isAMDGPUArch) compiles for amdgcn, to the AMDGPU assembly (ptx()) and a
// code object (codeObject()), which is loaded and launched through the HIP
// runtime (driver/HipDriver.h) instead of CUDA: the same GpuKernel, the same
// arguments, the same errors with HIP's names. A launch passes the
// arguments as the code object's metadata lays them out (amdgpuLaunchInfo,
// checked at load) on the workgroup size the code object was compiled for.
// Without a HIP runtime the compile fails with "no HIP runtime: ...".
#pragma once

#include "compiler/Compiler.h"
#include "compiler/LaunchArgs.h"
#include "driver/CudaDriver.h"
#include "driver/HipDriver.h"
#include "ir/Specialize.h"
#include "runtime/CompileCache.h"
#include "tk/Device.h"
#include "tk/Kernel.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// One launch argument.
struct GpuArg {
  // The public API's kinds: Pointer, I1, I8, I16, I32, I64, F16, BF16,
  // F32, F64.
  using Kind = Arg::Kind;
  // The value comes first: launch() hands the driver its address, and the
  // driver copies as many bytes as the parameter has (1 for i1/i8, 2 for
  // i16/fp16/bf16, ...) from the start of the union (little-endian). The
  // public tk::Arg (include/tk/Kernel.h) has the same union.
  Arg::Value value;
  Kind kind;

  static GpuArg ptr(CUdeviceptr p) {
    GpuArg a(Kind::Pointer);
    a.value.pointer = p;
    return a;
  }
  static GpuArg ofI1(bool x) {
    GpuArg a(Kind::I1);
    a.value.i1 = x ? 1 : 0;
    return a;
  }
  static GpuArg ofI8(int8_t x) {
    GpuArg a(Kind::I8);
    a.value.i8 = x;
    return a;
  }
  static GpuArg ofI16(int16_t x) {
    GpuArg a(Kind::I16);
    a.value.i16 = x;
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
  /// fp16 / bf16 from their 16-bit patterns (lang/Float16.h converts).
  static GpuArg ofF16Bits(uint16_t bits) {
    GpuArg a(Kind::F16);
    a.value.bits16 = bits;
    return a;
  }
  static GpuArg ofBF16Bits(uint16_t bits) {
    GpuArg a(Kind::BF16);
    a.value.bits16 = bits;
    return a;
  }
  static GpuArg ofF32(float x) {
    GpuArg a(Kind::F32);
    a.value.f32 = x;
    return a;
  }
  static GpuArg ofF64(double x) {
    GpuArg a(Kind::F64);
    a.value.f64 = x;
    return a;
  }

private:
  explicit GpuArg(Kind k) : kind(k) { value.i64 = 0; }
};

/// "pointer", "i1", "i8", "i16", "i32", "i64", "fp16", "bf16", "fp32", "fp64".
const char *gpuArgKindName(GpuArg::Kind kind);

// GpuArg's (and the public tk::Arg's) kinds are the slot kinds of
// compiler/LaunchArgs.h, in the same order, and their value is ArgValue's
// union: one conversion and one error wording serve every launch path.
#define TK_SAME_KIND(K) static_assert(uint8_t(Arg::Kind::K) == uint8_t(SlotKind::K));
TK_SAME_KIND(Pointer)
TK_SAME_KIND(I1)
TK_SAME_KIND(I8)
TK_SAME_KIND(I16)
TK_SAME_KIND(I32)
TK_SAME_KIND(I64)
TK_SAME_KIND(F16)
TK_SAME_KIND(BF16)
TK_SAME_KIND(F32)
TK_SAME_KIND(F64)
#undef TK_SAME_KIND
static_assert(sizeof(Arg::Value) == sizeof(ArgValue::Value));

/// An argument of `kind` with `value` as LaunchArgs' typed value.
inline ArgValue toArgValue(Arg::Kind kind, const Arg::Value &value) noexcept {
  ArgValue v;
  std::memcpy(&v.value, &value, sizeof v.value);
  v.kind = SlotKind(kind);
  return v;
}

struct GpuCompileOptions {
  std::string kernel;                          // the @tk.jit function to compile
  std::string signature;                       // Triton-style; empty: the annotations
  std::map<std::string, ConstValue> constants; // constexpr values by name (tkc's -D)
  int numWarps = 4;
  /// sm_80 .. sm_90a (NVIDIA, CUDA), or gfx90a, gfx942, gfx1100 (AMD, HIP).
  std::string arch = "sm_90";
  // Part of the cache key; the pipeline does not use them yet.
  int numStages = 3;
  /// Floating-point contraction (Triton's enable_fp_fusion): false keeps
  /// every float add and multiply rounded on its own (CompileOptions).
  bool fpFusion = true;
  /// Flush-to-zero in libdevice and tk.exp2 (Triton's enable_reflect_ftz;
  /// CompileOptions).
  bool reflectFtz = true;
  bool debug = false;
  /// Whatever else the caller's front end read to produce `source` (the
  /// sources of @jit helpers it calls, values of globals): only hashed into
  /// the cache key, so that a change there recompiles.
  std::vector<std::string> keyExtras;
  /// The driver JIT's optimisation level (CU_JIT_OPTIMIZATION_LEVEL 0-4);
  /// -1: the driver's default.
  int jitOptimizationLevel = -1;
  /// Record the compile's optimisation remarks (GpuKernel::remarks(),
  /// docs/remarks.md): the kernel is compiled for them, never read from the
  /// compile cache; its code is the same as without.
  bool remarks = false;
};

/// Where a kernel came from.
enum class GpuKernelOrigin : uint8_t {
  Compiled, // front end, passes, LLVM, then the driver's JIT
  Cache,    // PTX and metadata from the compile cache (memory or $TK_CACHE_DIR)
};

/// What a loaded kernel uses and what it cost to get it, for users
/// (Python's .n_regs, .shared, .n_spills) and benchmarks.
struct GpuKernelInfo {
  int registers = 0;          // per thread
  int localBytes = 0;         // per thread: spills and local arrays
  int staticSharedBytes = 0;  // per program, declared in the PTX
  int dynamicSharedBytes = 0; // per program, passed at launch
  int maxThreadsPerBlock = 0; // what the function can be launched with
  int numWarps = 4;
  /// Threads one program runs on: num_warps x 32 on NVIDIA, the workgroup
  /// size of the code object on AMD (0: num_warps x 32).
  int threadsPerProgram = 0;
  GpuKernelOrigin origin = GpuKernelOrigin::Compiled;
  bool fromCubin = false;  // loaded from a cached cubin rather than PTX
  double compileMs = 0;    // source -> PTX (0 when the PTX came from the cache)
  double jitMs = 0;        // PTX -> cubin (0 with a cached cubin)
  double loadMs = 0;       // cuModuleLoadData of the cubin, function lookup, attributes
  std::string ptxCompiler; // what made the cubin: "nvjitlink", "ptxas", "driver" ("" if cached)
  std::string ptxCompilerFallback; // why the ones tried before it failed ("" if none did)
};

/// Fills in what a load learns of a kernel: its function's `resources`,
/// the warps, the threads one program runs on (num_warps x 32, or the code
/// object's workgroup) and the dynamic shared memory a launch passes.
void setLoadedInfo(GpuKernelInfo &info, const KernelResources &resources, int numWarps,
                   int threadsPerProgram, int dynamicSharedBytes);

/// Why compile() failed, for callers that raise typed errors (Python's
/// tk.CompilationError / tk.OutOfResources).
struct GpuFailure {
  enum class Kind : uint8_t { None, Compile, Driver, OutOfResources } kind = Kind::None;
  std::string resource; // OutOfResources: "shared memory", "registers", "threads"
  int64_t needed = 0;
  int64_t limit = 0;
};

/// Checks a loaded kernel's use against the device's per-program limits;
/// false with `error` ("kernel 'k' is out of resources: shared memory: needs
/// 262144 bytes per program, the device allows 232448") and `failure` set.
bool checkKernelResources(const std::string &kernel, const GpuKernelInfo &info,
                          const DeviceLimits &limits, std::string &error, GpuFailure &failure);

/// One runtime parameter of a compiled kernel.
struct GpuParam {
  std::string name;
  GpuArg::Kind kind = GpuArg::Kind::I32;
  bool supported = true; // false for a type launch() cannot pass (none today)
  std::string typeName;  // "ptr<fp32>", "i32", ...
};

class GpuKernel {
public:
  /// Compiles and loads `opts.kernel` from `source` (named `fileName` in
  /// diagnostics), or returns the live kernel compiled from the same
  /// inputs. Null after setting `error`; `failure`, when given, says which
  /// kind of error it was. The module is unloaded with the last handle.
  static std::shared_ptr<const GpuKernel>
  compileShared(const std::string &source, const std::string &fileName,
                const GpuCompileOptions &opts, std::string &error, GpuFailure *failure = nullptr);
  /// The same, pinned for the process's life: the pointer stays valid until
  /// exit and the module is never unloaded (tests, benches, tools).
  static GpuKernel *compile(const std::string &source, const std::string &fileName,
                            const GpuCompileOptions &opts, std::string &error,
                            GpuFailure *failure = nullptr);
  /// compile() from a file.
  static GpuKernel *compileFile(const std::string &path, const GpuCompileOptions &opts,
                                std::string &error, GpuFailure *failure = nullptr);

  /// Unloads the module (see the header comment).
  ~GpuKernel();
  GpuKernel(const GpuKernel &) = delete;
  GpuKernel &operator=(const GpuKernel &) = delete;

  /// Launches on `grid` programs with `args` (see the header comment).
  /// Returns false with `error` naming the argument on a count or kind
  /// mismatch, or the CUDA error of cuLaunchKernel (HIP's of
  /// hipModuleLaunchKernel for amdgcn). Does not synchronize. `stream` is a
  /// CUstream, or for amdgcn a hipStream_t.
  bool launch(std::array<unsigned, 3> grid, std::span<const GpuArg> args, CUstream stream,
              std::string &error) const;

  const std::string &name() const { return name_; }
  const std::string &ptx() const { return ptx_; }
  const std::vector<GpuParam> &params() const { return params_; }
  int numWarps() const { return numWarps_; }
  /// The CUfunction (null for amdgcn).
  CUfunction function() const { return function_; }
  /// Compiled for amdgcn: launched through HIP.
  bool isAmdgpu() const { return hip_ != nullptr; }
  /// The runtime's handle of the loaded function: the CUfunction, or for
  /// amdgcn the hipFunction_t.
  void *nativeFunction() const {
    return isAmdgpu() ? static_cast<void *>(hipFunction_) : static_cast<void *>(function_);
  }
  /// amdgcn: the code object the kernel was loaded from (else empty), and
  /// the threads of one workgroup.
  const std::string &codeObject() const { return codeObject_; }
  const std::array<unsigned, 3> &block() const { return block_; }
  const KernelResources &resources() const { return resources_; }
  const GpuKernelInfo &info() const { return info_; }
  /// The cubin the kernel was loaded from (empty if it was loaded from PTX).
  const std::string &cubin() const { return cubin_; }
  /// The compile's optimisation remarks; empty unless
  /// GpuCompileOptions::remarks asked for them.
  const std::vector<KernelRemark> &remarks() const { return remarks_; }

private:
  GpuKernel() = default;
  bool reportMismatch(std::span<const GpuArg> args, std::string &error) const;

  std::string name_;
  std::string ptx_;
  std::string cubin_;
  std::vector<KernelRemark> remarks_;
  std::vector<GpuParam> params_;
  std::vector<GpuArg::Kind> kinds_; // params_[i].kind, packed for the launch check
  bool allSupported_ = true;
  int numWarps_ = 4;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  KernelResources resources_;
  GpuKernelInfo info_;
  unsigned dynamicShared_ = 0;
  const CudaFunctions *api_ = nullptr;
  CudaDriver *driver_ = nullptr;
  // amdgcn kernels: the code object and its HIP module.
  std::string codeObject_;
  HipDriver *hip_ = nullptr;
  hipModule_t hipModule_ = nullptr;
  hipFunction_t hipFunction_ = nullptr;
  std::array<unsigned, 3> block_{};

  friend class GpuKernelCache;
};

/// Compiles `opts.kernel` of `source` to PTX without touching a GPU (tests,
/// tools): the PTX text and the runtime parameters. False with rendered
/// diagnostics in `error`.
bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, std::string &ptx, std::vector<GpuParam> &params,
                  int &numWarps, std::string &error);

/// Everything a compile produces before the driver sees it; what the disk
/// cache stores for a kernel.
struct CompiledPTX {
  std::string name;
  std::string ptx;
  std::vector<GpuParam> params;
  int numWarps = 4;
  int sharedBytes = 0;        // the function's shared_bytes attribute (0 if absent)
  bool dynamicShared = false; // the PTX declares `.extern .shared`: pass sharedBytes at launch
  std::vector<KernelRemark> remarks; // GpuCompileOptions::remarks; never cached
  std::string cubin;      // the registers remark's ptxas cubin of `ptx` (CompiledKernel::cubin)
  std::string codeObject; // amdgcn: the code object (CompiledKernel::codeObject)
};
bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, CompiledPTX &out, std::string &error);
/// The same with the compiler's options already made (toCompileOptions, the
/// knobs read): what GpuKernel compiles with.
bool compileToPTX(const std::string &source, const std::string &fileName,
                  const GpuCompileOptions &opts, const CompileOptions &options, CompiledPTX &out,
                  std::string &error);
/// The compiler's options for `opts` (arch, warps, stages, debug), before
/// the knobs are read (CompileOptions::readKnobs).
CompileOptions toCompileOptions(const GpuCompileOptions &opts);

/// The cache key of a compile: compiler version and every input (options,
/// keyExtras, the code knobs as `options` has them) except
/// jitOptimizationLevel, which only keys the cubin.
CacheKey gpuCompileKey(const std::string &source, const std::string &fileName,
                       const GpuCompileOptions &opts, const CompileOptions &options);
/// The same with the knobs read from the environment now.
CacheKey gpuCompileKey(const std::string &source, const std::string &fileName,
                       const GpuCompileOptions &opts);
/// A module loaded through the cubin cache.
struct CubinLoad {
  CUmodule module = nullptr;
  std::string cubin;
  bool fromCache = false; // the cubin came from the cache (no JIT)
  double jitMs = 0;       // time in PTX -> cubin when it did not
  std::string compiler;   // which compiler made it ("" when cached)
  std::string fallback;   // the failures of the compilers tried before it
};
/// Fills in jit.optimizationLevel from TK_JIT_LEVEL when the caller asked
/// for none (-1); false, with `error`, for a value that is not a level.
bool requestJitLevel(JitOptions &jit, std::string &error);
/// The PTX compilers GpuKernel tries, in order: `jit.compiler` or else
/// TK_PTX_COMPILER ("driver", "nvjitlink", "ptxas") first, then the
/// driver's JIT; neither set: the driver's JIT alone (no faster compiler
/// was measured: docs/driver.md). An unknown name puts a note in `note`
/// and is skipped.
std::vector<std::string> ptxCompilerOrder(const JitOptions &jit, std::string &note);
/// PTX -> cubin for `driver`'s device with one named compiler (no
/// fallback). The arch is sm_<compute capability>, with the `a` suffix when
/// the PTX targets it.
bool ptxToCubinWith(const std::string &compiler, CudaDriver &driver, const std::string &ptx,
                    const JitOptions &jit, std::string &cubin, std::string &error);
/// PTX -> loaded module the way GpuKernel does it, for callers that compile
/// their own PTX (Python): the cubin cached under (ptxKey, driver version,
/// compute capability, JIT level) in `cache` is loaded; without one (or if
/// the driver rejects it) the PTX goes through the compilers of
/// ptxCompilerOrder until one yields a cubin the driver loads; that cubin
/// is stored. The cache key includes `jit.compiler` (or TK_PTX_COMPILER). `ptxKey` must identify
/// `ptx` (e.g. gpuCompileKey of what produced it). `assembled`, when not
/// empty, is a cubin of `ptx` the compile already made (the registers
/// remark's ptxas run): loaded first, so the remark describes the loaded code
/// and nothing is assembled twice; not cached.
bool loadThroughCubinCache(CudaDriver &driver, CompileCache &cache, const CacheKey &ptxKey,
                           const std::string &ptx, const JitOptions &jit, CubinLoad &out,
                           std::string &error, const std::string &assembled = {});

/// How a kernel compiled for amdgcn is launched, from its code object's
/// metadata (driver/CodeObject.h): the explicit arguments' offsets, which
/// are what hipModuleLaunchKernel reads (the hidden arguments after them,
/// hidden_block_count_* and the rest, HIP fills itself from the launch), and
/// the workgroup size the kernel was compiled for.
struct AmdgpuLaunch {
  ParamLayout layout;               // each runtime parameter at its `.args` offset
  std::array<unsigned, 3> block{};  // `.reqd_workgroup_size` (else the flat maximum)
  uint32_t ldsBytes = 0;            // `.group_segment_fixed_size`
  uint32_t scratchBytes = 0;        // `.private_segment_fixed_size`, per work-item
  uint32_t kernargSegmentBytes = 0; // `.kernarg_segment_size`: explicit and hidden
  std::vector<std::string> hidden;  // the hidden arguments' `.value_kind`s, in order
};
/// Reads `kernel`'s launch from `codeObject` and checks it against the
/// runtime parameters' slots: one `global_buffer` of 8 bytes per pointer,
/// one `by_value` of the slot's size per scalar, in order, each at an
/// offset aligned to its size, no hidden argument before them. False with
/// `error` naming the first argument that differs ("kernel 'k': argument 3
/// is i32 (4 bytes by value) but the code object passes .args[3] as
/// global_buffer, 8 bytes at offset 24").
bool amdgpuLaunchInfo(const std::string &codeObject, const std::string &kernel,
                      std::span<const SlotKind> kinds, AmdgpuLaunch &out, std::string &error);

/// CompiledPTX <-> cache payload; parse fails (false) on any malformed input.
std::string serializeCompiledPTX(const CompiledPTX &c);
bool parseCompiledPTX(std::string_view payload, CompiledPTX &c);

/// A device allocation that frees itself; for tests, examples and benches:
/// the public tk::DeviceMemory (include/tk/Device.h), which owns the memory,
/// with errors as strings instead of exceptions.
class DeviceBuffer {
public:
  bool allocate(size_t bytes, std::string &error);
  bool upload(const void *src, size_t bytes, std::string &error);
  bool download(void *dst, size_t bytes, std::string &error) const;

  CUdeviceptr ptr() const { return memory_.address(); }
  size_t bytes() const { return memory_.bytes(); }
  GpuArg arg() const { return GpuArg::ptr(ptr()); }

private:
  DeviceMemory memory_;
};

} // namespace tk
