// Libdevice lookup and linking (see Libdevice.h).
#include "lowering/codegen/Libdevice.h"

#include <fmt/format.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

namespace tk {

llvm::Value *callLibdevice(llvm::IRBuilderBase &b, std::string_view name,
                           const std::vector<llvm::Value *> &args, llvm::Type *result) {
  llvm::Module *m = b.GetInsertBlock()->getModule();
  std::vector<llvm::Type *> params;
  for (llvm::Value *a : args)
    params.push_back(a->getType());
  llvm::FunctionCallee fn = m->getOrInsertFunction(llvm::StringRef(name.data(), name.size()),
                                                   llvm::FunctionType::get(result, params, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    // Pure math: lets CSE and DCE treat the call like an instruction.
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  return b.CreateCall(fn, args);
}

const char *libdeviceMathName(Opcode opcode) {
  static const std::pair<Opcode, const char *> kFunctions[] = {
      {Opcode::Exp, "__nv_exp"},     {Opcode::Exp2, "__nv_exp2"}, {Opcode::Log, "__nv_log"},
      {Opcode::Log2, "__nv_log2"},   {Opcode::Sin, "__nv_sin"},   {Opcode::Cos, "__nv_cos"},
      {Opcode::Rsqrt, "__nv_rsqrt"}, {Opcode::Erf, "__nv_erf"},
  };
  for (const auto &[op, name] : kFunctions)
    if (op == opcode)
      return name;
  return nullptr;
}

std::vector<std::string> libdeviceCandidates(const std::string &explicitPath) {
  std::vector<std::string> paths;
  // An explicit path is the only one tried: a wrong setting is reported,
  // not silently replaced by another toolkit's file.
  if (!explicitPath.empty())
    return {explicitPath};
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    paths.push_back(std::string(home) + "/nvvm/libdevice/libdevice.10.bc");
  paths.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  return paths;
}

namespace {

std::string typeString(const llvm::Type *t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  t->print(os);
  return out;
}

// LLVM 19's InstCombine, through the NVPTX target's intrinsic hook, turns
// the round-toward-zero integer-to-float intrinsics into sitofp/uitofp,
// which NVPTX emits as cvt.rn: libdevice's __nv_int2float_rz and its five
// siblings (the only libdevice bodies that call these six) then round to
// nearest. Each call becomes its cvt.rz instruction as inline PTX, which no
// pass rewrites; the other nvvm intrinsics libdevice uses fold to LLVM ops
// that keep their meaning (fma.rn to llvm.fma, f2i.rz to fptosi, ...).
void keepRoundTowardZeroConversions(llvm::Module &m) {
  struct Conversion {
    const char *intrinsic;
    const char *ptx;
    const char *constraints;
  };
  static const Conversion kConversions[] = {
      {"llvm.nvvm.i2f.rz", "cvt.rz.f32.s32 $0, $1;", "=f,r"},
      {"llvm.nvvm.ui2f.rz", "cvt.rz.f32.u32 $0, $1;", "=f,r"},
      {"llvm.nvvm.ll2f.rz", "cvt.rz.f32.s64 $0, $1;", "=f,l"},
      {"llvm.nvvm.ull2f.rz", "cvt.rz.f32.u64 $0, $1;", "=f,l"},
      {"llvm.nvvm.ll2d.rz", "cvt.rz.f64.s64 $0, $1;", "=d,l"},
      {"llvm.nvvm.ull2d.rz", "cvt.rz.f64.u64 $0, $1;", "=d,l"},
  };
  for (const Conversion &c : kConversions) {
    llvm::Function *intrinsic = m.getFunction(c.intrinsic);
    if (!intrinsic)
      continue;
    llvm::InlineAsm *cvt = llvm::InlineAsm::get(intrinsic->getFunctionType(), c.ptx, c.constraints,
                                                /*hasSideEffects=*/false);
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *u : intrinsic->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(u);
          call && call->getCalledFunction() == intrinsic)
        calls.push_back(call);
    for (llvm::CallInst *call : calls) {
      llvm::IRBuilder<> b(call);
      llvm::CallInst *replacement =
          b.CreateCall(intrinsic->getFunctionType(), cvt, {call->getArgOperand(0)});
      replacement->setDoesNotAccessMemory();
      replacement->takeName(call);
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
    if (intrinsic->use_empty())
      intrinsic->eraseFromParent();
  }
}

} // namespace

bool linkBitcodeLibrary(llvm::Module &m, const std::string &path, std::string_view what,
                        const std::function<bool(std::string_view)> &provides,
                        DiagnosticEngine &diag) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    diag.error({}, fmt::format("cannot read {} '{}': {}", what, path, buf.getError().message()));
    return false;
  }
  llvm::Expected<std::unique_ptr<llvm::Module>> lib =
      llvm::parseBitcodeFile((*buf)->getMemBufferRef(), m.getContext());
  if (!lib) {
    // Also bitcode of an LLVM newer than the one tk is built with.
    diag.error({}, fmt::format("{} '{}' is not valid bitcode: {}", what, path,
                               llvm::toString(lib.takeError())));
    return false;
  }
  // Every function the kernel declares must be the library's with the same
  // type: the linker would leave a missing one external (ptxas or ld.lld then
  // fails far from the cause) and call one of another type through a
  // mismatched call.
  for (const llvm::Function &f : m) {
    if (!f.isDeclaration() || !provides(std::string_view(f.getName())))
      continue;
    const llvm::Function *def = (*lib)->getFunction(f.getName());
    if (!def || def->isDeclaration()) {
      diag.error({}, fmt::format("{} '{}' has no function '{}'", what, path, f.getName().str()));
      return false;
    }
    if (def->getFunctionType() != f.getFunctionType()) {
      diag.error({}, fmt::format("{} '{}' defines '{}' as {}, but tk calls it as {}", what, path,
                                 f.getName().str(), typeString(def->getFunctionType()),
                                 typeString(f.getFunctionType())));
      return false;
    }
  }
  // The library's triple and data layout are older spellings (libdevice's
  // nvptx64-nvidia-gpulibs; ROCm's clang-15 layout): take the kernel
  // module's so the linker has nothing to warn about.
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  bool failed = llvm::Linker::linkModules(
      m, std::move(*lib), llvm::Linker::LinkOnlyNeeded,
      [](llvm::Module &mod, const llvm::StringSet<> &linked) {
        // Everything that came from the library becomes internal: the
        // pipeline inlines it and deletes what is left.
        llvm::internalizeModule(mod, [&linked](const llvm::GlobalValue &gv) {
          return !gv.hasName() || !linked.contains(gv.getName());
        });
      });
  if (failed) {
    diag.error({}, fmt::format("linking {} '{}' failed", what, path));
    return false;
  }
  return true;
}

bool linkLibdevice(llvm::Module &m, const std::string &explicitPath, bool ftz,
                   DiagnosticEngine &diag) {
  bool needed = false;
  for (const llvm::Function &f : m)
    needed |= f.isDeclaration() && f.getName().starts_with("__nv_");
  if (!needed)
    return true;
  std::vector<std::string> paths = libdeviceCandidates(explicitPath);
  std::string found;
  for (const std::string &p : paths) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) {
      found = p;
      break;
    }
  }
  if (found.empty()) {
    std::string tried;
    for (const std::string &p : paths)
      tried += (tried.empty() ? "" : ", ") + p;
    diag.error({}, fmt::format("fp64 math and the libdevice functions need the CUDA toolkit's "
                               "libdevice bitcode, which was not found (tried {}); set "
                               "TK_LIBDEVICE_PATH to libdevice.10.bc",
                               tried));
    return false;
  }
  auto isLibdevice = [](std::string_view name) { return name.starts_with("__nv_"); };
  if (!linkBitcodeLibrary(m, found, "libdevice", isLibdevice, diag))
    return false;
  keepRoundTowardZeroConversions(m);
  if (!m.getModuleFlag("nvvm-reflect-ftz"))
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(ftz ? 1 : 0));
  return true;
}

} // namespace tk
