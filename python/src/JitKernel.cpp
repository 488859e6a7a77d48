#include "JitKernel.h"

#include "ir/ASTToIR.h"
#include "ir/IRPrinter.h"
#include "lang/Diagnostics.h"
#include "lowering/PassManager.h"
#include "lowering/Pipeline.h"
#include "parser/Parser.h"
#include "parser/Sema.h"

#include <fmt/format.h>

namespace tk {

std::unique_ptr<JitKernel> JitKernel::compile(const JitRequest &req, std::string &errors) {
  std::unique_ptr<JitKernel> k(new JitKernel);
  k->name_ = req.kernel;
  k->sm_ = std::make_unique<SourceManager>();
  k->astContext_ = std::make_unique<ast::Context>();
  SourceManager &sm = *k->sm_;
  DiagnosticEngine diag(sm);

  // Parse every source on its own (each has its own file and first line),
  // then check the functions together as one module: names resolve across
  // them as they do in Python, where a helper is just another global.
  ast::Module *merged = k->astContext_->makeModule();
  for (const JitSource &src : req.sources) {
    BufferId id = sm.addBuffer(src.fileName, src.text, src.firstLine);
    if (merged->buffer == kNoBuffer)
      merged->buffer = id;
    ast::Module *m = parseModule(sm, id, *k->astContext_, diag);
    merged->body.insert(merged->body.end(), m->body.begin(), m->body.end());
  }
  if (!diag.hasErrors()) {
    CheckOptions options;
    options.externalGlobals = req.externalGlobals;
    options.externalModuleAliases = req.moduleAliases;
    checkModule(*merged, sm, diag, options);
  }
  if (diag.hasErrors()) {
    errors = diag.renderAll();
    return nullptr;
  }

  KernelSpec spec;
  spec.kernel = req.kernel;
  spec.signature = req.signature;
  spec.constants = req.constants;
  spec.doNotSpecialize = req.doNotSpecialize;
  const ast::FunctionDef *def = merged->findFunction(req.kernel);
  if (!def) {
    errors =
        fmt::format("error: no @tk.jit function named '{}' in the sources given\n", req.kernel);
    return nullptr;
  }

  k->ctx_ = std::make_unique<IRContext>(sm);
  k->module_ = std::make_unique<Module>(*k->ctx_);
  k->fn_ = lowerKernel(*merged, spec, *k->ctx_, *k->module_, diag);
  if (!k->fn_) {
    errors = diag.renderAll();
    return nullptr;
  }
  // lowerKernel succeeded, so the parameters specialise without errors; this
  // second look only reads which of them became IR arguments.
  DiagnosticEngine quiet(sm);
  std::vector<ParamBinding> bindings;
  specializeParams(*def, spec, quiet, bindings);
  for (const ParamBinding &b : bindings)
    if (b.isArgument)
      k->argumentNames_.push_back(b.name);

  k->ir_ = printModule(*k->module_);
  PassManager pm(diag);
  // TK_DUMP_IR and TK_TIME_PASSES work as in tkc; their text is kept for the
  // Python side to write to stderr (library code does not print).
  pm.configureFromEnvironment();
  pm.setSink([&k](std::string_view text) { k->passLog_ += text; });
  buildPipeline(pm);
  if (!pm.run(*k->module_)) {
    errors = diag.renderAll();
    return nullptr;
  }
  k->irOpt_ = printModule(*k->module_);
  k->fn_ = k->module_->lookup(req.kernel);
  if (!k->fn_) {
    errors = fmt::format("error: the pipeline removed kernel '{}'\n", req.kernel);
    return nullptr;
  }
  return k;
}

bool JitKernel::run(const std::vector<JitArg> &args, std::array<int64_t, 3> grid,
                    unsigned numThreads, uint64_t maxSteps, std::string &printed,
                    std::string &errors) {
  // One HostBuffer per distinct memory range: an array passed twice (in-place
  // kernels) is one buffer, so its two pointers see each other's stores.
  std::vector<HostBuffer> buffers;
  std::map<std::pair<uint64_t, uint64_t>, size_t> bufferOf;
  buffers.reserve(args.size());
  for (const JitArg &a : args) {
    if (a.kind != JitArg::Kind::Pointer)
      continue;
    auto key = std::make_pair(a.base, a.bytes);
    if (bufferOf.count(key))
      continue;
    bufferOf[key] = buffers.size();
    buffers.push_back(HostBuffer::wrap(a.name, reinterpret_cast<void *>(a.base),
                                       static_cast<size_t>(a.bytes), a.dtype));
  }
  std::vector<InterpArg> interpArgs;
  for (const JitArg &a : args) {
    switch (a.kind) {
    case JitArg::Kind::Pointer:
      interpArgs.push_back(InterpArg::pointer(buffers[bufferOf[{a.base, a.bytes}]], a.offset));
      break;
    case JitArg::Kind::Int:
      interpArgs.push_back(InterpArg::integer(a.intValue));
      break;
    case JitArg::Kind::Float:
      interpArgs.push_back(InterpArg::real(a.floatValue));
      break;
    }
  }
  InterpretOptions options;
  options.grid = grid;
  options.numThreads = numThreads == 0 ? 1 : numThreads;
  options.maxSteps = maxSteps;
  options.printOutput = &printed;
  DiagnosticEngine diag(*sm_);
  if (interpret(*module_, *fn_, interpArgs, options, diag))
    return true;
  errors = diag.renderAll();
  return false;
}

} // namespace tk
