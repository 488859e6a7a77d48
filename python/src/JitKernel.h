// JitKernel: one @tk.jit kernel compiled for one specialisation, as the
// Python extension tk._C holds it; plain C++ with no Python in it, so the
// bindings (TkModule.cpp) only convert values.
//
// The Python side sends the sources of the kernel and of every @tk.jit helper
// it reaches (each with its file name and first line, so diagnostics point
// into the user's .py files), the signature it derived from the argument
// values, and the compile-time values of constexpr parameters and of the
// globals the functions read:
//
//   JitRequest req;
//   req.sources = {{"/home/me/add.py", "@tk.jit\ndef add(x, y, n, B: tk.constexpr):\n...", 12},
//                  {"/home/me/util.py", "@tk.jit\ndef twice(v):\n    return v * 2\n", 3}};
//   req.kernel = "add";
//   req.signature = "*fp32:16, *fp32:16, i32";
//   req.constants["B"] = ConstValue::ofInt(1024);
//   req.moduleAliases = {"tk"};
//   std::string errors;
//   std::unique_ptr<JitKernel> k = JitKernel::compile(req, errors);  // null: errors rendered
//   k->ir();        // block IR as lowered;  k->irOpt(): after compiler/Pipeline.h
//   InterpretOptions run;                       // grid, threads, step and memory budgets
//   run.grid = {4, 1, 1};
//   k->run(args, run, printed, errors);
//
// With `req.gpu = true` (and numWarps, arch) the module goes on through the
// GPU pipeline to PTX: k->ptx(), k->layout() (each runtime argument's slot
// and offset in the parameter space, compiler/LaunchArgs.h); GpuLauncher.h
// loads and launches it. For an AMD GPU arch (gfx90a, gfx942, gfx1100)
// ptx() is the AMDGPU assembly and codeObject() the code object, loaded and
// launched through the HIP runtime (driver/HipDriver.h); layout() is then
// the code object's own kernarg layout (amdgpuLaunchInfo) and block() its
// workgroup size. GPU
// compiles go through the compile cache of runtime/CompileCache.h (memory and
// $TK_CACHE_DIR): the PTX and what a launch needs under a key of every input
// (compiler version, each source with its file and line, the signature,
// constants, options), and the driver-JIT cubin under that key plus the
// driver version and device, so another process skips both the compiler and
// the JIT. A kernel read from the cache has no module: llvmIR() compiles it
// again.
//
// Each source is parsed as its own buffer; the function definitions are then
// checked and lowered as one module, so a helper defined in another Python
// module inlines exactly like one defined next to the kernel.
#pragma once

#include "compiler/Compiler.h"
#include "compiler/LaunchArgs.h"
#include "driver/CudaDriver.h"
#include "driver/HipDriver.h"
#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/IRContext.h"
#include "ir/Module.h"
#include "ir/Specialize.h"
#include "lang/AST.h"
#include "lang/SourceManager.h"
#include "runtime/CompileCache.h"
#include "runtime/GpuKernel.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tk {

struct JitSource {
  std::string fileName;
  std::string text;
  uint32_t firstLine = 1;
};

struct JitRequest {
  std::vector<JitSource> sources; // sources[0] holds the kernel
  std::string kernel;
  std::string signature;
  std::map<std::string, ConstValue> constants; // constexpr parameters and globals
  std::vector<std::string> externalGlobals;    // names of the globals in `constants`
  std::vector<std::string> moduleAliases;      // globals bound to the tk module
  // Globals bound to other Python modules: attribute -> @tk.jit function
  // (CheckOptions::externalUserModules).
  std::map<std::string, std::map<std::string, std::string>> userModules;
  std::vector<std::string> doNotSpecialize;
  // For the GPU (`gpu` true): the GPU pipeline and PTX follow the common
  // pipeline, and the kernel can no longer run on the interpreter.
  bool gpu = false;
  int numWarps = 4;
  int numStages = 0;          // the cp.async ring's depth (--pipeline); 0: its default (3)
  std::string arch = "sm_90"; // sm_90a lets tk.dot use wgmma; gfx90a/gfx942/gfx1100: amdgcn
  /// The libdevice bitcode to link (Triton's extern_libs={'libdevice': path});
  /// "" leaves TK_LIBDEVICE_PATH's choice (CompileOptions::libdevicePath).
  std::string libdevicePath;
  /// Floating-point contraction (Triton's enable_fp_fusion;
  /// CompileOptions::fpFusion).
  bool fpFusion = true;
  /// Flush-to-zero in libdevice and exp2 (Triton's enable_reflect_ftz;
  /// CompileOptions::reflectFtz).
  bool reflectFtz = true;
  /// CompileHooks::interrupted: Ctrl-C reaching the compile.
  std::function<bool()> interrupted;
  // Record remarks (docs/remarks.md): the compile runs (no cached PTX, which
  // has none) and the kernel keeps them; the code is the same.
  bool remarks = false;
};

/// One kernel argument of a run, as the Python side describes it. A pointer
/// names the memory it may reach: `bytes` bytes at `base`, the argument
/// pointing `offset` bytes into them.
struct JitArg {
  enum class Kind : uint8_t { Pointer, Int, Float };
  Kind kind = Kind::Int;
  uint64_t base = 0;
  uint64_t bytes = 0;
  int64_t offset = 0;
  DType dtype = DType::U8;
  std::string name;
  bool readOnly = false; // pointers: memory the kernel may not write
  int64_t intValue = 0;
  double floatValue = 0;
};

/// How a run ended: Ok; Failed (what the interpreter reported); BadArgument
/// (an argument the run refused, before it started or at the store that
/// would have written it: a read-only array the kernel stores to), which
/// Python raises as TypeError; Mismatch (check(): the GPU stored something
/// else).
enum class RunResult : uint8_t { Ok, Failed, BadArgument, Mismatch };

class JitKernel {
public:
  /// Unloads the loaded module (the kernel's code and constants on the
  /// device), so a kernel made at run time and collected frees it.
  ~JitKernel();
  JitKernel(const JitKernel &) = delete;
  JitKernel &operator=(const JitKernel &) = delete;
  /// Compiles `req`; on failure returns null with the rendered diagnostics in
  /// `errors`.
  static std::unique_ptr<JitKernel> compile(const JitRequest &req, std::string &errors,
                                            bool useCache = true);

  const std::string &name() const { return name_; }
  const std::string &ir() const { return ir_; }
  const std::string &irOpt() const { return irOpt_; }
  /// What TK_DUMP_IR / TK_TIME_PASSES asked for while compiling; usually empty.
  const std::string &passLog() const { return passLog_; }
  /// Whether the compile recorded remarks, and the remarks of this kernel.
  bool hasRemarks() const { return hasRemarks_; }
  const std::vector<KernelRemark> &remarks() const { return remarks_; }
  /// The parameters that are IR arguments, in order: what run() expects.
  const std::vector<std::string> &argumentNames() const { return argumentNames_; }
  /// Per argument (argumentNames() order): whether the kernel may write
  /// memory through it (analysis/StoredArguments.h), the buffers TK_CHECK
  /// and the autotuner compare.
  const std::vector<bool> &storedArguments() const { return storedArguments_; }
  /// GPU compiles: the PTX, the parameter space (each runtime argument's
  /// slot and offset, in argumentNames() order) and each argument's IR type
  /// ("ptr<fp32>", "i32").
  const std::string &ptx() const { return ptx_; }
  /// amdgcn: the code object (an ELF; `tkc --emit=hsaco`), else empty.
  const std::string &codeObject() const { return codeObject_; }
  /// Compiled for amdgcn (loaded and launched through HIP).
  bool isAmdgpu() const { return gpu_ && isAMDGPUArch(arch_); }
  /// Threads per program: num_warps x 32 on NVIDIA, the code object's
  /// workgroup on AMD.
  std::array<unsigned, 3> block() const {
    return isAmdgpu() ? block_ : std::array<unsigned, 3>{unsigned(numWarps_) * 32, 1, 1};
  }
  const ParamLayout &layout() const { return layout_; }
  const std::vector<std::string> &argumentTypes() const { return argumentTypes_; }
  int numWarps() const { return numWarps_; }
  /// Dynamic shared memory per program (bytes) every launch passes.
  unsigned dynamicShared() const { return dynamicShared_; }
  bool isGpu() const { return gpu_; }
  /// The optimised LLVM IR of a GPU compile, generated on first request
  /// (it costs a second trip through the back end). False with `errors` set.
  bool llvmIR(std::string &out, std::string &errors);

  /// Loads the PTX into device 0's primary context, once (later calls return
  /// true at once). False with `errors`: no driver, or the driver's JIT
  /// failed (its log included).
  bool load(std::string &errors);
  bool loaded() const { return function_ != nullptr || hipFunction_ != nullptr; }
  /// Why the last load() failed (OutOfResources: resource, needed, limit).
  const GpuFailure &failure() const { return failure_; }
  /// True when the PTX came from the compile cache (memory or TK_CACHE_DIR)
  /// rather than from the compiler; the cubin too, after load().
  bool ptxFromCache() const { return ptxFromCache_; }
  bool cubinFromCache() const { return cubinFromCache_; }
  /// After a load() that compiled the PTX: which compiler made the cubin
  /// ("driver", "nvjitlink", "ptxas"; TK_PTX_COMPILER picks); "" when the
  /// cubin came from the cache.
  const std::string &ptxCompiler() const { return ptxCompiler_; }
  /// After load(): registers, spills, shared memory, threads per program.
  const KernelResources &resources() const { return resources_; }
  /// Launches with `slots[i]` pointing at runtime argument i's value (the
  /// driver reads its slot's size from it). False with `errors`.
  bool launch(const std::array<unsigned, 3> &grid, void **slots, CUstream stream,
              std::string &errors) const;
  /// The same launch with the values packed in one buffer (layout()'s
  /// offsets, layout().bytes in all), passed through cuLaunchKernel's
  /// `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER).
  bool launchPacked(const std::array<unsigned, 3> &grid, void *params, CUstream stream,
                    std::string &errors) const;
  /// Whether launches should pack (launchPacked) or pass the pointer array
  /// (launch): packed unless setPackedLaunches() said otherwise (benchmarks
  /// compare both in one process); see docs/python.md for the H200
  /// measurement behind the default.
  static bool packedLaunches() { return packedFlag(); }
  static void setPackedLaunches(bool packed) { packedFlag() = packed; }

  /// Runs the kernel in the interpreter as `options` say (grid, threads,
  /// the budgets, interruption, the store log; its printOutput is ignored).
  /// Anything but Ok comes with the rendered error in `errors` (out of
  /// bounds, a failed device_assert, a bad argument list, a budget, a
  /// read-only array stored to). `print` output is appended to `printed`.
  /// Before the run, an argument marked readOnly that the kernel may store
  /// through is refused (BadArgument) with the store's location.
  RunResult run(const std::vector<JitArg> &args, const InterpretOptions &options,
                std::string &printed, std::string &errors);

  /// TK_CHECK (python/src/LaunchCheck.h): runs a sample of the programs of
  /// a launch over `options.grid` (samplePrograms) on `args`, whose pointers
  /// point into host copies of the launch's buffers taken before the GPU
  /// launch, logging their stores, and compares every element they stored
  /// with the same byte offset of `gpuAfter[i]` (a host copy of argument i's
  /// buffer as the GPU left it; 0 for arguments not copied back). Ok with a
  /// one-line summary in `report`, Mismatch with the first differing element
  /// rendered at its store, or what run() returns.
  RunResult check(const std::vector<JitArg> &args, const std::vector<uint64_t> &gpuAfter,
                  const InterpretOptions &options, std::string &printed, std::string &report);

private:
  JitKernel() = default;
  /// The interpreter's buffers of a run and, per argument, its buffer.
  using BufferInspector =
      std::function<void(const std::vector<HostBuffer> &, const std::vector<size_t> &)>;
  /// run(), with `inspect` called on the buffers after a successful run.
  RunResult runOn(const std::vector<JitArg> &args, const InterpretOptions &options,
                  std::string &printed, std::string &errors, const BufferInspector &inspect);
  static bool &packedFlag();
  bool launchWith(const std::array<unsigned, 3> &grid, void **params, void **extra, CUstream stream,
                  std::string &errors) const;
  bool readPayload(const std::string &payload, const std::string &arch);
  /// layout_ (and for amdgcn block_) for the runtime arguments' `kinds`.
  bool setLayout(std::span<const SlotKind> kinds, std::string &errors);
  bool loadHip(std::string &errors);
  bool hipLaunchFailed(const std::array<unsigned, 3> &grid, std::string &errors) const;

  // A kernel read from the cache keeps its request, to compile again for
  // llvmIR().
  std::unique_ptr<JitRequest> request_;

  std::string name_;
  std::string ir_, irOpt_, passLog_;
  bool hasRemarks_ = false;
  std::vector<KernelRemark> remarks_;
  std::string remarksCubin_; // Compilation::remarksCubin(), loaded instead of assembling again;
                             // dropped once loaded
  std::vector<std::string> argumentNames_;
  std::vector<bool> storedArguments_;
  std::string ptx_, llvm_, arch_;
  ParamLayout layout_;
  std::vector<std::string> argumentTypes_;
  int numWarps_ = 4;
  unsigned dynamicShared_ = 0;
  bool gpu_ = false;
  CudaDriver *driver_ = nullptr;
  CUmodule cuModule_ = nullptr;
  CUfunction function_ = nullptr;
  // amdgcn: the code object, its workgroup and its HIP module.
  std::string codeObject_;
  std::array<unsigned, 3> block_{};
  HipDriver *hip_ = nullptr;
  hipModule_t hipModule_ = nullptr;
  hipFunction_t hipFunction_ = nullptr;
  KernelResources resources_;
  GpuFailure failure_;
  CacheKey cacheKey_;
  bool ptxFromCache_ = false, cubinFromCache_ = false;
  std::string ptxCompiler_;
  // The compile: sources, diagnostics and the module the interpreter runs
  // (and llvmIR() lowers), alive as long as the kernel.
  std::unique_ptr<Compilation> comp_;
  Function *fn_ = nullptr;
};

} // namespace tk
