// Compiler: see Compiler.h. The stages run in the order of the Stage enum;
// each public step first runs the steps before it that have not run.
#include "compiler/Compiler.h"

#include "compiler/LaunchArgs.h"
#include "compiler/Pipeline.h"
#include "driver/Lld.h"
#include "driver/Resources.h"
#include "ir/ASTToIR.h"
#include "ir/IRPrinter.h"
#include "lowering/PTXEmitter.h"
#include "lowering/PassManager.h"
#include "parser/Parser.h"
#include "support/Knobs.h"

#include <fmt/format.h>

#include <cassert>
#include <chrono>

namespace tk {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Whether TK_DUMP_IR's filter names `name` ("all" names everything).
bool filterNames(std::string_view filter, std::string_view name) {
  if (filter == "all" || filter == "1")
    return true;
  while (!filter.empty()) {
    size_t comma = filter.find(',');
    if (filter.substr(0, comma) == name)
      return true;
    filter = comma == std::string_view::npos ? "" : filter.substr(comma + 1);
  }
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Options and hooks
//===----------------------------------------------------------------------===//

namespace {
int64_t knobDefault(Knob knob) { return parseIntKnob(knobInfo(knob), "").value; }
} // namespace

CompileLimits::CompileLimits()
    : maxOps(knobDefault(Knob::MaxOps)),
      maxElementsPerThread(knobDefault(Knob::MaxElementsPerThread)),
      maxLLVMInstructions(knobDefault(Knob::MaxLLVMInstructions)) {}

bool CompileLimits::readKnobs(std::string &error) {
  KnobValue<int64_t> ops = readInt(Knob::MaxOps);
  KnobValue<int64_t> elements = readInt(Knob::MaxElementsPerThread);
  KnobValue<int64_t> instructions = readInt(Knob::MaxLLVMInstructions);
  for (const std::string *e : {&ops.error, &elements.error, &instructions.error})
    if (!e->empty()) {
      error = *e;
      return false;
    }
  maxOps = ops.value;
  maxElementsPerThread = elements.value;
  maxLLVMInstructions = instructions.value;
  return true;
}

bool CompileOptions::readKnobs(std::string &error) {
  if (!limits.readKnobs(error))
    return false;
  KnobValue<bool> inflight = readBool(Knob::WgmmaInflight);
  KnobValue<bool> native = readBool(Knob::WgmmaNative);
  KnobValue<std::string> ring = readString(Knob::WgmmaRing);
  KnobValue<bool> fp8 = readBool(Knob::Fp8Wgmma);
  KnobValue<std::string> llvm = readString(Knob::LLVMOpt);
  KnobValue<bool> miscompile = readBool(Knob::TestMiscompile);
  KnobValue<bool> useTma = readBool(Knob::Tma);
  for (const std::string *e : {&inflight.error, &native.error, &ring.error, &fp8.error, &llvm.error,
                               &miscompile.error, &useTma.error})
    if (!e->empty()) {
      error = *e;
      return false;
    }
  wgmmaInflight = inflight.value;
  wgmmaNative = native.value;
  wgmmaRing = ring.value;
  fp8Wgmma = fp8.value;
  llvmOpt = llvm.value;
  testMiscompile = miscompile.value;
  tma = useTma.value;
  libdevicePath = readString(Knob::LibdevicePath).value;
  rocmDeviceLibs = readString(Knob::ROCmDeviceLibs).value;
  return true;
}

std::string CompileOptions::keyText() const {
  return fmt::format("arch={};warps={};stages={};debug={};wgmma_inflight={};wgmma_native={};"
                     "wgmma_ring={};llvm_opt={};libdevice={};rocm_device_libs={};"
                     "test_miscompile={};fp_fusion={};reflect_ftz={};tma={};fp8_wgmma={}",
                     arch, numWarps, numStages, int(debug), int(wgmmaInflight), int(wgmmaNative),
                     wgmmaRing, llvmOpt, libdevicePath, rocmDeviceLibs, int(testMiscompile),
                     int(fpFusion), int(reflectFtz), int(tma), int(fp8Wgmma));
}

std::string CompileOptions::check() const {
  if (!isValidNumWarps(numWarps))
    return fmt::format("num_warps must be a power of two from 1 to {}, not {}", kMaxNumWarps,
                       numWarps);
  if (numStages != 0 && !isValidNumStages(numStages))
    return fmt::format("num_stages must be from 1 to {}, not {}", kMaxNumStages, numStages);
  return "";
}

TargetOptions CompileOptions::target() const {
  TargetOptions t;
  t.arch = arch;
  t.numWarps = numWarps;
  t.llvmOpt = llvmOpt;
  t.libdevicePath = libdevicePath;
  t.rocmDeviceLibsPath = rocmDeviceLibs;
  t.testMiscompile = testMiscompile;
  t.fpFusion = fpFusion;
  t.reflectFtz = reflectFtz;
  t.maxElementsPerThread = limits.maxElementsPerThread;
  t.maxLLVMInstructions = limits.maxLLVMInstructions;
  return t;
}

CompileHooks CompileHooks::fromKnobs(Sink sink) {
  CompileHooks hooks;
  hooks.dumpIR = readString(Knob::DumpIR).value;
  // A malformed TK_TIME_PASSES only loses the table, and this is no place to
  // fail a compile for it: the default stands.
  hooks.timePasses = readBool(Knob::TimePasses).value;
  hooks.remarks = readBool(Knob::Remarks).value;
  hooks.sink = std::move(sink);
  return hooks;
}

std::string_view stageName(Stage stage) {
  switch (stage) {
  case Stage::None:
    return "none";
  case Stage::Parse:
    return "parse";
  case Stage::AstToIR:
    return "ast-to-ir";
  case Stage::Block:
    return "block";
  case Stage::Gpu:
    return "gpu";
  case Stage::LLVM:
    return "llvm";
  case Stage::PTX:
    return "ptx";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

Compilation::Compilation(CompileOptions options, CompileHooks hooks)
    : options_(std::move(options)), hooks_(std::move(hooks)),
      sm_(std::make_unique<SourceManager>()), diag_(std::make_unique<DiagnosticEngine>(*sm_)),
      astContext_(std::make_unique<ast::Context>()), ir_(std::make_unique<IRContext>(*sm_)),
      module_(std::make_unique<Module>(*ir_)) {
  ir_->limits().maxOps = options_.limits.maxOps;
  ir_->limits().interrupted = hooks_.interrupted;
  if (hooks_.remarks) {
    remarks_ = std::make_unique<RemarkSink>(*sm_);
    module_->setRemarks(remarks_.get());
  }
}

Compilation::~Compilation() = default;

void Compilation::dump(std::string_view stage, const std::string &text) {
  if (!hooks_.sink || hooks_.dumpIR.empty() || !filterNames(hooks_.dumpIR, stage))
    return;
  hooks_.sink(fmt::format("// -----// IR after {} //----- //\n", stage));
  hooks_.sink(text);
}

bool Compilation::parse(std::span<const SourceText> texts, const CheckOptions &check) {
  assert(reached_ == Stage::None && "parse runs once");
  auto t0 = Clock::now();
  // Each text is parsed on its own (its own file and first line), then the
  // functions are checked together as one module.
  ast::Module *merged = astContext_->makeModule();
  for (const SourceText &text : texts) {
    BufferId id = sm_->addBuffer(text.fileName, text.text, text.firstLine);
    if (merged->buffer == kNoBuffer)
      merged->buffer = id;
    ast::Module *m = parseModule(*sm_, id, *astContext_, *diag_);
    merged->body.insert(merged->body.end(), m->body.begin(), m->body.end());
  }
  // A module with syntax errors is partial: checking it would only add
  // noise such as undefined names whose definitions were skipped.
  if (!diag_->hasErrors())
    checkModule(*merged, *sm_, *diag_, check);
  ast_ = merged;
  times_.push_back({"parse", msSince(t0)});
  reached_ = Stage::Parse;
  return !diag_->hasErrors();
}

bool Compilation::parse(BufferId buffer, const CheckOptions &check) {
  assert(reached_ == Stage::None && "parse runs once");
  auto t0 = Clock::now();
  ast::Module *m = parseModule(*sm_, buffer, *astContext_, *diag_);
  if (!diag_->hasErrors())
    checkModule(*m, *sm_, *diag_, check);
  ast_ = m;
  times_.push_back({"parse", msSince(t0)});
  reached_ = Stage::Parse;
  return !diag_->hasErrors();
}

std::string Compilation::noKernel(const std::string &kernel) const {
  std::string names;
  for (const ast::FunctionDef *fn : ast_->functions())
    names += (names.empty() ? "" : ", ") + fn->name;
  return fmt::format("no kernel named '{}' in '{}'; {}", kernel, sm_->fileName(ast_->buffer),
                     names.empty() ? "it defines no functions" : "it defines: " + names);
}

bool Compilation::bindParams(const KernelSpec &spec, std::vector<ParamBinding> &out) {
  assert(ast_ && "parse first");
  const ast::FunctionDef *def = ast_->findFunction(spec.kernel);
  if (!def) {
    diag_->error({}, noKernel(spec.kernel));
    return false;
  }
  out.clear();
  return specializeParams(*def, spec, *diag_, out);
}

bool Compilation::lowerToIR(std::span<const KernelSpec> kernels) {
  assert(reached_ == Stage::Parse && "lowerToIR runs once, after parse");
  auto t0 = Clock::now();
  // The options every path passes (tkc, the C++ API, Python), checked by
  // the one rule before anything is specialised with them.
  if (std::string bad = options_.check(); !bad.empty()) {
    diag_->error({}, bad);
    return false;
  }
  bool ok = true;
  for (const KernelSpec &spec : kernels) {
    const ast::FunctionDef *def = ast_->findFunction(spec.kernel);
    if (!def) {
      diag_->error({}, noKernel(spec.kernel));
      ok = false;
      continue;
    }
    KernelSpec withWarps = spec;
    withWarps.numWarps = options_.numWarps;
    if (!lowerKernel(*ast_, withWarps, *ir_, *module_, *diag_)) {
      ok = false;
      continue;
    }
    // lowerKernel succeeded, so the parameters specialise without errors;
    // this second look only reads which of them became IR arguments.
    DiagnosticEngine quiet(*sm_);
    std::vector<ParamBinding> bindings;
    specializeParams(*def, spec, quiet, bindings);
    std::vector<std::string> names;
    for (const ParamBinding &b : bindings)
      if (b.isArgument)
        names.push_back(b.name);
    argumentNames_.emplace_back(spec.kernel, std::move(names));
    kernels_.push_back(spec);
  }
  times_.push_back({"ast-to-ir", msSince(t0)});
  reached_ = Stage::AstToIR;
  if (ok)
    dump("ast-to-ir", printModule(*module_));
  return ok;
}

// A kernel's runtime parameters all travel in PTX's .param space, laid out
// as every launch path packs them (LaunchArgs.h); ptxas refuses a kernel over
// the limit, so the compile says so first, at the kernel, with the numbers.
bool Compilation::checkParamSpace() {
  bool ok = true;
  for (const KernelSpec &spec : kernels_) {
    std::vector<KernelParam> params = kernelParams(spec.kernel);
    std::vector<SlotKind> kinds;
    for (const KernelParam &p : params)
      kinds.push_back(slotKindOf(p).value_or(SlotKind::Pointer));
    ParamLayout layout = paramLayout(kinds);
    if (layout.bytes <= kMaxParamBytes)
      continue;
    size_t first = 0; // the first parameter that ends past the limit
    while (layout.offsets[first] + slotBytes(kinds[first]) <= kMaxParamBytes)
      ++first;
    const ast::FunctionDef *def = ast_->findFunction(spec.kernel);
    diag_->error(def ? def->nameLoc : SourceLoc{},
                 fmt::format("kernel '{}': its {} runtime parameters take {} bytes of parameter "
                             "space, over PTX's limit of {} bytes (from parameter {}, '{}', at "
                             "offset {}); pass fewer (a pointer takes 8 bytes) or make some "
                             "constexpr",
                             spec.kernel, params.size(), layout.bytes, kMaxParamBytes, first,
                             params[first].name, layout.offsets[first]));
    ok = false;
  }
  return ok;
}

bool Compilation::runPasses(Stage stage) {
  if (stage == Stage::Gpu && !checkParamSpace())
    return false;
  PassManager pm(*diag_);
  pm.setDumpIR(hooks_.dumpIR);
  pm.setSink(hooks_.sink);
  if (stage == Stage::Block) {
    buildPipeline(pm);
  } else {
    // The options reach the GPU passes as attributes of every kernel.
    setKernelOptions(*module_, options_);
    buildGPUPipeline(pm);
  }
  auto t0 = Clock::now();
  bool ok = pm.run(*module_);
  times_.push_back({std::string(stageName(stage)), msSince(t0)});
  for (const auto &[flag, ms] : pm.lastTimes())
    times_.push_back({fmt::format("{}/{}", stageName(stage), flag), ms});
  reached_ = stage;
  return ok;
}

bool Compilation::runBlockPasses() {
  if (!upTo(Stage::AstToIR))
    return false;
  assert(reached_ == Stage::AstToIR && "the block passes run once");
  return runPasses(Stage::Block);
}

bool Compilation::runGpuPasses() {
  if (!upTo(Stage::Block))
    return false;
  assert(reached_ == Stage::Block && "the GPU passes run once");
  return runPasses(Stage::Gpu);
}

// Runs the steps before `stage` that have not run; false when one failed
// (or failed earlier: diagnostics stop the pipeline).
bool Compilation::upTo(Stage stage) {
  if (diag_->hasErrors())
    return false;
  if (reached_ < Stage::Parse)
    return false; // nothing to compile: parse was never called
  if (stage >= Stage::AstToIR && reached_ < Stage::AstToIR)
    return false; // lowerToIR needs the kernels: the caller's step
  if (stage >= Stage::Block && reached_ < Stage::Block && !runPasses(Stage::Block))
    return false;
  if (stage >= Stage::Gpu && reached_ < Stage::Gpu && !runPasses(Stage::Gpu))
    return false;
  return true;
}

bool Compilation::emitLLVM(std::string &out) {
  if (!upTo(Stage::Gpu))
    return false;
  auto t0 = Clock::now();
  bool ok = emitLLVMIR(*module_, options_.target(), out, *diag_);
  times_.push_back({"llvm", msSince(t0)});
  reached_ = Stage::LLVM;
  if (ok)
    dump("llvm", out);
  finishTimes();
  return ok;
}

bool Compilation::emitPTX(std::string &out) {
  if (!upTo(Stage::Gpu))
    return false;
  PTXTimings t;
  bool wantLLVM = !hooks_.dumpIR.empty() && filterNames(hooks_.dumpIR, "llvm");
  std::string llvmText;
  bool ok =
      tk::emitPTX(*module_, options_.target(), out, *diag_, &t, wantLLVM ? &llvmText : nullptr);
  times_.push_back({"llvm", t.lowerMs + t.optMs});
  times_.push_back({"llvm/lower", t.lowerMs});
  times_.push_back({"llvm/opt", t.optMs});
  times_.push_back({"ptx", t.codegenMs});
  reached_ = Stage::PTX;
  if (!llvmText.empty())
    dump("llvm", llvmText);
  if (ok)
    dump("ptx", out);
  // ptxas reports the registers; there is no such tool for amdgcn here.
  if (ok && remarks_ && !isAMDGPUArch(options_.arch)) {
    auto t0 = Clock::now();
    addResourceRemarks(out);
    times_.push_back({"remarks-ptxas", msSince(t0)});
  }
  finishTimes();
  return ok;
}

bool Compilation::emitObject(std::string &out) {
  if (!upTo(Stage::Gpu))
    return false;
  PTXTimings t;
  bool ok = tk::emitObject(*module_, options_.target(), out, *diag_, &t);
  times_.push_back({"llvm", t.lowerMs + t.optMs});
  times_.push_back({"llvm/lower", t.lowerMs});
  times_.push_back({"llvm/opt", t.optMs});
  times_.push_back({"object", t.codegenMs});
  reached_ = Stage::PTX;
  finishTimes();
  return ok;
}

bool Compilation::emitCodeObject(std::string &out) {
  std::string object, error;
  if (!emitObject(object))
    return false;
  auto t0 = Clock::now();
  bool ok = linkCodeObject(object, out, error);
  times_.push_back({"ld.lld", msSince(t0)});
  if (!ok)
    diag_->error({}, error);
  return ok;
}

// The registers remark: what ptxas allocated for each kernel and the
// occupancy that gives (driver/Resources.h), with the config compiled.
void Compilation::addResourceRemarks(const std::string &ptx) {
  std::vector<PtxasUsage> found;
  std::string error;
  bool assembled = ptxasResources(ptx, options_.arch, found, error, &remarksCubin_);
  for (const KernelSpec &spec : kernels_) {
    Function *fn = module_->lookup(spec.kernel);
    if (!fn)
      continue;
    SourceLoc loc = fn->loc();
    int64_t warps = fn->attrs().getInt("num_warps").value_or(options_.numWarps);
    int64_t shared = fn->attrs().getInt("shared_bytes").value_or(0);
    // (No num_stages attribute: the pipeliner's default, 3.)
    int64_t stages =
        fn->attrs().getInt("num_stages").value_or(options_.numStages > 0 ? options_.numStages : 3);
    std::string config = fmt::format("{}, {} warp{}, {} stages, {} bytes of shared memory",
                                     options_.arch, warps, warps == 1 ? "" : "s", stages, shared);
    if (!assembled) {
      remarks_->add(loc, "registers", RemarkStatus::Analysis, spec.kernel,
                    fmt::format("kernel '{}' ({}): registers and spills unknown: {}", spec.kernel,
                                config, error.substr(0, error.find('\n'))));
      continue;
    }
    const PtxasUsage *k = nullptr;
    for (const PtxasUsage &r : found)
      if (r.name == spec.kernel)
        k = &r;
    if (!k)
      continue;
    Occupancy o = occupancy(options_.arch, k->registers, shared, warps * 32);
    std::string occ = fmt::format("{} block{} per SM ({} of {} warps, {}%), limited by {}",
                                  o.blocksPerSm, o.blocksPerSm == 1 ? "" : "s", o.warpsPerSm,
                                  o.maxWarpsPerSm, o.percent, o.limit);
    bool spills = k->spillStores > 0 || k->spillLoads > 0;
    std::string message =
        spills ? fmt::format("kernel '{}' ({}): {} registers per thread and {} bytes spilled to "
                             "local memory ({} of stores, {} of loads; a {}-byte stack frame); "
                             "{}: use a smaller tile, fewer stages or more warps",
                             spec.kernel, config, k->registers, k->spillStores + k->spillLoads,
                             k->spillStores, k->spillLoads, k->stackBytes, occ)
               : fmt::format("kernel '{}' ({}): {} registers per thread, no spills, {} bytes of "
                             "stack; {}",
                             spec.kernel, config, k->registers, k->stackBytes, occ);
    remarks_
        ->add(loc, "registers", spills ? RemarkStatus::Missed : RemarkStatus::Analysis, spec.kernel,
              message)
        .with("registers", k->registers)
        .with("spill_stores", k->spillStores)
        .with("spill_loads", k->spillLoads)
        .with("stack_bytes", k->stackBytes)
        .with("shared_bytes", shared)
        .with("num_warps", warps)
        .with("num_stages", stages)
        .with("blocks_per_sm", o.blocksPerSm)
        .with("occupancy_percent", o.percent);
  }
}

void Compilation::finishTimes() {
  if (!hooks_.timePasses || !hooks_.sink)
    return;
  // Stages at the left margin, the passes and parts of each indented under it.
  double total = 0;
  for (const StageTime &t : times_)
    if (t.name.find('/') == std::string::npos)
      total += t.ms;
  std::string table = "// compile timing (wall clock)\n";
  for (const StageTime &t : times_) {
    size_t slash = t.name.find('/');
    std::string name = slash == std::string::npos ? t.name : "  " + t.name.substr(slash + 1);
    table += fmt::format("//   {:>10.3f} ms  {:5.1f}%  {}\n", t.ms,
                         total > 0 ? 100 * t.ms / total : 0.0, name);
  }
  table += fmt::format("//   {:>10.3f} ms  100.0%  total\n", total);
  hooks_.sink(table);
}

std::vector<KernelParam> Compilation::kernelParams(std::string_view kernel) const {
  std::vector<KernelParam> params;
  Function *fn = module_->lookup(std::string(kernel));
  if (!fn)
    return params;
  const std::vector<std::string> *names = nullptr;
  for (const auto &[k, n] : argumentNames_)
    if (k == kernel)
      names = &n;
  assert(names && names->size() == fn->numArguments() && "one IR argument per parameter");
  for (unsigned i = 0; i < fn->numArguments(); ++i) {
    Type *type = fn->argument(i)->type();
    KernelParam p;
    p.name = (*names)[i];
    p.typeName = type->str();
    p.isPointer = type->isPointer();
    // A pointer's element type (a pointer to pointers: its 64-bit address).
    Type *element = p.isPointer ? cast<PointerType>(type)->pointee() : type;
    p.dtype = element->isPointer() ? DType::U64 : element->dtype();
    if (fn->argAttrs(i).getBool("tensormap").value_or(false)) {
      p.isTensorMap = true;
      p.typeName = "tensormap";
    }
    params.push_back(std::move(p));
  }
  return params;
}

CompiledKernel Compilation::compiled(std::string_view kernel, std::string ptx) const {
  CompiledKernel out;
  Function *fn = module_->lookup(std::string(kernel));
  assert(fn && "the pipeline keeps the kernel");
  out.name = std::string(kernel);
  out.ptx = std::move(ptx);
  out.params = kernelParams(kernel);
  // The function's num_warps attribute (a pass may set it) is what the PTX
  // was generated for, so it is what the launch must use.
  out.numWarps = int(fn->attrs().getInt("num_warps").value_or(options_.numWarps));
  out.sharedBytes = fn->attrs().getInt("shared_bytes").value_or(0);
  // Shared memory the code generator declares `extern` is dynamic: its size
  // is the function's shared_bytes, passed at every launch.
  out.dynamicShared = out.sharedBytes > 0 && out.ptx.find(".extern .shared") != std::string::npos;
  out.times = times_;
  out.remarks = kernelRemarks(kernel);
  out.cubin = remarksCubin_;
  return out;
}

std::vector<KernelRemark> Compilation::kernelRemarks(std::string_view kernel) const {
  std::vector<KernelRemark> out;
  if (!remarks_)
    return out;
  for (const Remark &r : remarks_->remarks()) {
    if (r.function != kernel)
      continue;
    KernelRemark k;
    if (r.loc.isValid()) {
      k.file = sm_->fileName(r.loc.buffer);
      k.line = sm_->displayLine(r.loc);
      k.col = r.loc.col;
    }
    k.kind = r.kind;
    k.status = std::string(remarkStatusName(r.status));
    k.function = r.function;
    k.message = r.message;
    for (const RemarkNumber &n : r.numbers)
      k.numbers.emplace_back(n.name, n.value);
    k.rendered =
        renderDiagnostic(*sm_, {Severity::Remark, r.loc, r.message + " [" + r.kind + "]", {}});
    out.push_back(std::move(k));
  }
  return out;
}

bool compileKernel(const SourceText &source, const KernelSpec &spec, const CompileOptions &options,
                   const CompileHooks &hooks, CompiledKernel &out, std::string &error) {
  Compilation c(options, hooks);
  std::string ptx;
  // An AMD GPU kernel is lowered twice, once for its assembly and once for
  // the object the code object is linked from.
  std::string codeObject;
  if (!c.parse(std::span(&source, 1)) || !c.lowerToIR(std::span(&spec, 1)) || !c.emitPTX(ptx) ||
      (isAMDGPUArch(options.arch) && !c.emitCodeObject(codeObject))) {
    error = c.diag().renderAll();
    return false;
  }
  out = c.compiled(spec.kernel, std::move(ptx));
  out.codeObject = std::move(codeObject);
  return true;
}

} // namespace tk
