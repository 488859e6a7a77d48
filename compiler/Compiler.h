// Compiler: tk's compile, sequenced in one place. Every entry point (tkc, the
// runtime's GpuKernel and the public C++ API, the Python JIT, tkc run and the
// interpreter, compile_bench) goes through a Compilation, stage by stage:
//
//   parse        source text -> checked AST                  (parser/)
//   ast-to-ir    AST -> block IR, one function per kernel,   (ir/ASTToIR.h)
//                specialised for a signature and constexprs
//   block        the block passes: inline, canonicalize, cse, dce  (Pipeline.cpp)
//   gpu          the GPU passes: layouts, dots, software pipelining, shared
//                memory, barriers                             (Pipeline.cpp);
//                first, each kernel's parameters fit PTX's parameter space
//                (4,352 bytes, laid out as LaunchArgs.h packs them)
//   llvm         block IR -> LLVM IR (NVPTX), tk's LLVM passes (lowering/PTXEmitter.h)
//   ptx          NVPTX code generation
//   (cubin and loading belong to the runtime: driver JIT, nvJitLink or ptxas.)
//
//   CompileOptions options;              // arch, warps, stages, and the code knobs
//   options.arch = "sm_90a";
//   std::string error;
//   if (!options.readKnobs(error)) ...   // TK_LLVM_OPT, TK_WGMMA_*, TK_LIBDEVICE_PATH
//   Compilation c(options, CompileHooks::fromKnobs());   // TK_DUMP_IR, TK_TIME_PASSES
//   c.parse({{"add.tk", text}});
//   c.lowerToIR({spec});                 // KernelSpec: kernel, signature, constants
//   c.runBlockPasses();  c.runGpuPasses();
//   std::string ptx;  c.emitPTX(ptx);    // each step false after diagnostics
//
// Each step runs the ones before it that have not run, so `c.emitPTX(ptx)`
// right after lowerToIR does the rest. compileKernel() below is the whole
// compile of one kernel, for callers that only want its PTX.
//
// CompileOptions holds everything that changes the generated code; its
// keyText() is part of every compile cache key, so a knob that changes code
// (Effect `Code` in support/Knobs.def) can never return stale PTX from a
// cache. CompileHooks holds what only changes what is shown: dumps go to the
// hooks' sink, which the entry point chooses (library code does not print).
#pragma once

#include "ir/IRContext.h"
#include "ir/Module.h"
#include "ir/Specialize.h"
#include "lang/AST.h"
#include "lang/DType.h"
#include "lang/Diagnostics.h"
#include "lang/Remarks.h"
#include "lowering/codegen/TargetOptions.h"
#include "parser/Sema.h"
#include "tk/Remark.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// The one rule for the launch options that are compiled in, on every path
/// (tkc's --num-warps and --num-stages, the C++ API, Python's GPU and
/// interpreter launches): warps a power of two from 1 to 32, the cp.async
/// ring's stages from 1 to 16.
constexpr int kMaxNumWarps = 32;
constexpr int kMaxNumStages = 16;
inline bool isValidNumWarps(int64_t n) { return n >= 1 && n <= kMaxNumWarps && (n & (n - 1)) == 0; }
inline bool isValidNumStages(int64_t n) { return n >= 1 && n <= kMaxNumStages; }

/// The compile's budgets, so that a small source cannot make the compiler
/// run for minutes or exhaust memory: past one, the compile is an error at
/// the op (or kernel) that went over, naming the limit and what to change
/// (0: no limit). The defaults are support/Knobs.def's and README's; the
/// largest kernels of the project stay far below them (docs/compiler.md,
/// "Budgets").
///   maxOps                 ops and statements of one kernel once
///                          tk.static_range loops are unrolled and helpers
///                          inlined (front end, --inline): TK_MAX_OPS
///   maxElementsPerThread   elements one thread holds in one tensor, once
///                          layouts are given: TK_MAX_ELEMENTS_PER_THREAD
///   maxLLVMInstructions    a kernel's LLVM instructions while it is lowered
///                          and before NVPTX code generation:
///                          TK_MAX_LLVM_INSTRUCTIONS
struct CompileLimits {
  int64_t maxOps;
  int64_t maxElementsPerThread;
  int64_t maxLLVMInstructions;

  CompileLimits(); // the knob table's defaults
  /// From the environment; false with `error` naming the variable when one
  /// does not parse.
  bool readKnobs(std::string &error);
};

/// Everything that changes the code a kernel compiles to, beyond its source,
/// signature and constexprs.
struct CompileOptions {
  std::string arch = "sm_90"; // sm_80, sm_86, sm_89, sm_90, sm_90a
  int numWarps = 4;           // kernels whose IR does not set num_warps
  int numStages = 3;          // the cp.async ring of loops feeding tk.dot; 0: not set
  bool debug = false;         // device asserts and prints stay in
  // The debug knobs that change code (support/Knobs.def).
  bool wgmmaInflight = true;      // TK_WGMMA_INFLIGHT
  bool wgmmaNative = true;        // TK_WGMMA_NATIVE
  std::string wgmmaRing = "auto"; // TK_WGMMA_RING: extra, late or auto
  bool fp8Wgmma = true;           // TK_FP8_WGMMA: fp8 dots on sm_90a's fp8 wgmma
  bool tma = false;               // TK_TMA: Python's launch passes CUtensorMaps (`,tma` entries)
  bool testMiscompile = false;    // TK_TEST_MISCOMPILE: float adds lowered as subtracts
  std::string llvmOpt;            // TK_LLVM_OPT: "" is tk's pipeline, else O0..O3
  std::string libdevicePath;      // TK_LIBDEVICE_PATH: "" is the toolkit's
  std::string rocmDeviceLibs;     // TK_ROCM_DEVICE_LIBS: "" is the installed ROCm device libraries
  bool fpFusion = true;           // a * b + c may become one fma (Triton's enable_fp_fusion)
  bool reflectFtz = true;         // libdevice and exp2 flush to zero (Triton's enable_reflect_ftz)
  // Not in keyText: a budget decides only whether the compile ends in an
  // error, never what code it makes, and errors are not cached.
  CompileLimits limits;

  /// Sets the knob fields (and the limits) from the environment; false with
  /// `error` naming the variable when one does not parse.
  bool readKnobs(std::string &error);
  /// Every field as text, for cache keys.
  std::string keyText() const;
  /// "" when numWarps and numStages follow the rule above (numStages 0: not
  /// set), else what is wrong; every compile checks it first.
  std::string check() const;
  TargetOptions target() const;
};

/// What a compile shows while it runs; never changes the code.
struct CompileHooks {
  using Sink = std::function<void(std::string_view)>;
  /// TK_DUMP_IR: "all", or comma-separated pass flags and stage names; the
  /// IR after each that changed it, to `sink`.
  std::string dumpIR;
  /// TK_TIME_PASSES: a table of every pass's and stage's time, to `sink`.
  bool timePasses = false;
  /// TK_REMARKS: the passes and code generation record remarks
  /// (lang/Remarks.h, docs/remarks.md) in the compile's sink, remarks();
  /// after PTX, `ptxas -v` gives the registers remark. Off: no remark work.
  bool remarks = false;
  Sink sink;
  /// Asked every few milliseconds while the compile runs (between
  /// statements, passes and ops, and LLVM's passes; not inside NVPTX code
  /// generation, which the budgets bound); true stops it with an error.
  /// How Ctrl-C reaches a compile: tkc's SIGINT handler, Python's signal
  /// check (the compile then raises KeyboardInterrupt).
  std::function<bool()> interrupted;

  /// TK_DUMP_IR, TK_TIME_PASSES and TK_REMARKS, with `sink` for the text of
  /// the first two (none: the text is dropped).
  static CompileHooks fromKnobs(Sink sink = {});
  /// Whether there is text for `sink` (remarks are data, not text).
  bool active() const { return !dumpIR.empty() || timePasses; }
};

/// One source text; Python hands each @jit function's text with the file
/// and line it starts on.
struct SourceText {
  std::string fileName;
  std::string text;
  uint32_t firstLine = 1;
};

enum class Stage : uint8_t { None, Parse, AstToIR, Block, Gpu, LLVM, PTX };
/// "parse", "ast-to-ir", "block", "gpu", "llvm", "ptx".
std::string_view stageName(Stage stage);

/// Wall time of one stage (or, within block and gpu, one pass).
struct StageTime {
  std::string name; // a stage name, or "gpu/coalesce"
  double ms = 0;
};

/// A runtime parameter of a compiled kernel: one IR argument.
struct KernelParam {
  std::string name;     // the parameter's
  std::string typeName; // its IR type: "ptr<fp32>", "i32", ...
  bool isPointer = false;
  DType dtype = DType::I32; // a pointer's element type (u64 for a pointer's), or the scalar's
  /// A `tma` descriptor's CUtensorMap: 128 bytes by value (LaunchArgs.h's
  /// TensorMap slot), typeName "tensormap".
  bool isTensorMap = false;
};

struct CompiledKernel;

class Compilation {
public:
  explicit Compilation(CompileOptions options, CompileHooks hooks = {});
  ~Compilation();
  Compilation(const Compilation &) = delete;
  Compilation &operator=(const Compilation &) = delete;

  SourceManager &sources() { return *sm_; }
  DiagnosticEngine &diag() { return *diag_; }
  const CompileOptions &options() const { return options_; }
  /// The remarks made so far; null unless the hooks asked for them.
  const RemarkSink *remarks() const { return remarks_.get(); }
  /// The remarks about `kernel`, with their locations resolved and rendered
  /// (the public API's and Python's records); empty when remarks are off.
  std::vector<KernelRemark> kernelRemarks(std::string_view kernel) const;
  /// The cubin the registers remark's `ptxas -v` made from the PTX (empty
  /// without remarks or without ptxas): a GPU loader loads it instead of
  /// assembling the PTX again, so the remark describes the loaded code.
  const std::string &remarksCubin() const { return remarksCubin_; }

  /// parse: the texts, parsed one by one and checked together as one module
  /// (names resolve across them, as Python globals do).
  bool parse(std::span<const SourceText> texts, const CheckOptions &check = {});
  /// parse: a buffer already in sources().
  bool parse(BufferId buffer, const CheckOptions &check = {});
  ast::Module *ast() const { return ast_; }

  /// ast-to-ir: each kernel into the module. A kernel that does not lower
  /// is reported and left out; false if any failed.
  bool lowerToIR(std::span<const KernelSpec> kernels);
  /// How each parameter of `spec.kernel` binds (the front end's view; no IR):
  /// for callers that only need the parameters.
  bool bindParams(const KernelSpec &spec, std::vector<ParamBinding> &out);

  bool runBlockPasses();
  bool runGpuPasses();
  /// llvm: the optimised LLVM IR of every kernel, as text.
  bool emitLLVM(std::string &out);
  /// ptx: the PTX of every kernel (for an AMD GPU arch, its AMDGPU assembly).
  bool emitPTX(std::string &out);
  /// The relocatable object of every kernel (AMD GPU arch: ld.lld links it
  /// into a code object, driver/Lld.h).
  bool emitObject(std::string &out);
  /// AMD GPU arch: emitObject's object linked by `ld.lld -shared` into the
  /// code object the HIP runtime loads (`tkc --emit=hsaco`); ld.lld's
  /// failure is a diagnostic.
  bool emitCodeObject(std::string &out);

  Module &module() { return *module_; }
  IRContext &irContext() { return *ir_; }
  Stage reached() const { return reached_; }
  const std::vector<StageTime> &times() const { return times_; }
  /// The IR arguments of `kernel` (after ast-to-ir), named after their
  /// parameters.
  std::vector<KernelParam> kernelParams(std::string_view kernel) const;
  /// compileKernel's result for `kernel`, after emitPTX (`ptx` is its text).
  CompiledKernel compiled(std::string_view kernel, std::string ptx) const;

private:
  bool upTo(Stage stage);
  std::string noKernel(const std::string &kernel) const;
  bool runPasses(Stage stage);
  bool checkParamSpace();
  void dump(std::string_view stage, const std::string &text);
  void finishTimes();
  void addResourceRemarks(const std::string &ptx);

  CompileOptions options_;
  CompileHooks hooks_;
  std::unique_ptr<SourceManager> sm_;
  std::unique_ptr<DiagnosticEngine> diag_;
  std::unique_ptr<ast::Context> astContext_;
  ast::Module *ast_ = nullptr;
  std::unique_ptr<IRContext> ir_;
  std::unique_ptr<Module> module_;
  std::unique_ptr<RemarkSink> remarks_;
  std::string remarksCubin_;
  std::vector<KernelSpec> kernels_;
  std::vector<std::pair<std::string, std::vector<std::string>>> argumentNames_;
  Stage reached_ = Stage::None;
  std::vector<StageTime> times_;
};

/// A compiled kernel: what a runtime needs to load and launch it.
struct CompiledKernel {
  std::string name;
  std::string ptx;
  std::vector<KernelParam> params; // the runtime parameters, in order
  int numWarps = 4;                // the function's num_warps (a pass may set it)
  int64_t sharedBytes = 0;         // shared memory per program
  bool dynamicShared = false;      // passed at launch (the PTX declares it extern)
  std::vector<StageTime> times;
  std::vector<KernelRemark> remarks; // this kernel's, when the hooks asked for them
  std::string cubin; // Compilation::remarksCubin(): ptxas's cubin of `ptx`, or empty
  /// For an AMD GPU arch (`ptx` is then the AMDGPU assembly): the code object
  /// (Compilation::emitCodeObject), which the HIP runtime loads.
  std::string codeObject;
};

/// The whole compile of `spec.kernel` from one source text to PTX (for an
/// AMD GPU arch: the AMDGPU assembly and the code object). False with
/// `error` holding the rendered diagnostics.
bool compileKernel(const SourceText &source, const KernelSpec &spec, const CompileOptions &options,
                   const CompileHooks &hooks, CompiledKernel &out, std::string &error);

} // namespace tk
