// ROCm's device libraries on amdgcn (see ROCmDeviceLibs.h).
#include "lowering/codegen/ROCmDeviceLibs.h"
#include "lowering/codegen/Libdevice.h"
#include "lowering/codegen/TargetOptions.h"

#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/TargetParser.h>

#include <cstdlib>
#include <filesystem>

namespace tk {
namespace {

constexpr DType I32 = DType::I32, U32 = DType::U32, I64 = DType::I64, U64 = DType::U64,
                F32 = DType::F32, F64 = DType::F64;

constexpr ROCmFunction kFunctions[] = {
#define TK_ROCM_LIBDEVICE(NV_SYMBOL, ROCM_SYMBOL, ROCM_RESULT)                                     \
  {NV_SYMBOL, ROCM_SYMBOL, ROCM_RESULT},
#include "lowering/codegen/ROCmLibdevice.def"
};

std::string typeString(const llvm::Type *t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  t->print(os);
  return out;
}

bool isROCmSymbol(llvm::StringRef name) {
  return name.starts_with("__ocml_") || name.starts_with("__ockl_");
}

// Whether `m` declares a function of `library` ("ocml.bc", "ockl.bc").
bool declaresFrom(const llvm::Module &m, std::string_view library) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && rocmLibraryOf(f.getName().str()) == library)
      return true;
  return false;
}

// Links the functions of `library` that `m` declares (and what they call),
// internalised: the tk pipeline's inliner then takes them in, and globaldce
// drops what is left (Libdevice.h's linkBitcodeLibrary, as for libdevice).
bool linkLibrary(llvm::Module &m, const std::string &explicitPath, std::string_view library,
                 DiagnosticEngine &diag) {
  std::string path = findROCmDeviceLib(explicitPath, library);
  if (path.empty()) {
    // The lowering reports this at the op that needs it first
    // (AMDGPUTarget::missingLibrary); this is for other callers.
    diag.error({}, missingROCmDeviceLibMessage(explicitPath, library));
    return false;
  }
  return linkBitcodeLibrary(
      m, path, "ROCm's device library",
      [library](std::string_view name) { return rocmLibraryOf(name) == library; }, diag);
}

// Gives the control constants the linked functions read their value for
// the arch, internal: each load of one folds, and the branches on it go.
bool defineControls(llvm::Module &m, std::string_view arch, DiagnosticEngine &diag) {
  for (const OclcControl &c : oclcControls(arch)) {
    llvm::GlobalVariable *gv = m.getGlobalVariable(c.name, /*AllowInternal=*/true);
    if (!gv || !gv->isDeclaration())
      continue;
    auto *type = llvm::dyn_cast<llvm::IntegerType>(gv->getValueType());
    if (!type || type->getBitWidth() != c.bits) {
      diag.error({}, fmt::format("ROCm's device libraries declare '{}' as {}, not i{}", c.name,
                                 typeString(gv->getValueType()), c.bits));
      return false;
    }
    gv->setInitializer(llvm::ConstantInt::get(type, c.value));
    gv->setConstant(true);
    gv->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  for (const llvm::GlobalVariable &gv : m.globals())
    if (gv.isDeclaration() && gv.getName().starts_with("__oclc_")) {
      diag.error({}, fmt::format("ROCm's device libraries read the control constant '{}', which "
                                 "tk does not define (a newer ROCm than 5.2?)",
                                 gv.getName().str()));
      return false;
    }
  return true;
}

} // namespace

std::span<const ROCmFunction> allROCmEquivalents() { return kFunctions; }

const ROCmFunction *rocmEquivalent(std::string_view libdeviceSymbol) {
  for (const ROCmFunction &f : kFunctions)
    if (f.libdevice == libdeviceSymbol)
      return &f;
  return nullptr;
}

std::string_view rocmLibraryOf(std::string_view symbol) {
  if (symbol.starts_with("__ocml_"))
    return "ocml.bc";
  if (symbol.starts_with("__ockl_"))
    return "ockl.bc";
  return "";
}

std::vector<std::string> rocmDeviceLibCandidates(const std::string &explicitPath) {
  // An explicit folder is the only one tried: a wrong setting is reported,
  // not silently replaced by another installation's.
  if (!explicitPath.empty())
    return {explicitPath};
  std::vector<std::string> dirs;
  if (const char *rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
    dirs.push_back(std::string(rocm) + "/amdgcn/bitcode");
  dirs.push_back("/opt/rocm/amdgcn/bitcode");
  dirs.push_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"); // Debian's rocm-device-libs
  return dirs;
}

std::string findROCmDeviceLib(const std::string &explicitPath, std::string_view file) {
  for (const std::string &dir : rocmDeviceLibCandidates(explicitPath)) {
    std::filesystem::path p = std::filesystem::path(dir) / std::string(file);
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec))
      return p.string();
  }
  return "";
}

std::string missingROCmDeviceLibMessage(const std::string &explicitPath, std::string_view file) {
  std::string tried;
  for (const std::string &dir : rocmDeviceLibCandidates(explicitPath))
    tried += (tried.empty() ? "" : ", ") + dir;
  return fmt::format("ROCm's device library {} was not found (tried {}): install it (Debian: "
                     "apt-get install rocm-device-libs) or set TK_ROCM_DEVICE_LIBS to the "
                     "folder that holds it",
                     file, tried);
}

std::vector<OclcControl> oclcControls(std::string_view arch) {
  // oclc_isa_version_NNN.bc's value: major * 1000 + minor * 100 + stepping
  // (gfx90a: 9.0.10 -> 9010, as the installed oclc_isa_version_90a.bc says).
  llvm::AMDGPU::IsaVersion isa = llvm::AMDGPU::getIsaVersion(llvm::StringRef(arch));
  uint32_t version = isa.Major * 1000 + isa.Minor * 100 + isa.Stepping;
  std::string isaName = std::string(arch.substr(3));
  bool wave64 = amdgpuWavefrontSize(arch) == 64;
  return {
      {"oclc_isa_version_" + isaName + ".bc", "__oclc_ISA_version", 32, version},
      // Code object version 5 (LLVM 19's default): ockl finds the implicit
      // kernel arguments (the hostcall buffer, ...) where v5 puts them.
      {"oclc_abi_version_500.bc", "__oclc_ABI_version", 32, 500},
      // The hardware wavefront tk compiles for (wave64 on gfx9, wave32 on
      // gfx11): ockl's wave-wide functions read it.
      {wave64 ? "oclc_wavefrontsize64_on.bc" : "oclc_wavefrontsize64_off.bc",
       "__oclc_wavefrontsize64", 8, wave64 ? 1u : 0u},
      // Infinities and NaNs are values (the interpreter computes them).
      {"oclc_finite_only_off.bc", "__oclc_finite_only_opt", 8, 0},
      // The accurate paths, not the fast approximations.
      {"oclc_unsafe_math_off.bc", "__oclc_unsafe_math_opt", 8, 0},
      // tk's amdgcn kernels keep fp32 subnormals (LLVM's default
      // denormal-fp-math on gfx9 and gfx11), so ocml must not assume they
      // are flushed; TargetOptions::reflectFtz is NVIDIA's libdevice only.
      {"oclc_daz_opt_off.bc", "__oclc_daz_opt", 8, 0},
      // tk.sqrt and libdevice.sqrt_rn are IEEE's sqrt.
      {"oclc_correctly_rounded_sqrt_on.bc", "__oclc_correctly_rounded_sqrt32", 8, 1},
  };
}

bool linkROCmDeviceLibs(llvm::Module &m, const std::string &explicitPath, std::string_view arch,
                        DiagnosticEngine &diag) {
  bool any = false;
  for (const llvm::Function &f : m)
    any |= f.isDeclaration() && isROCmSymbol(f.getName());
  if (!any)
    return true;
  // Twice over both: what one library's functions call in the other is
  // declared only once it is linked (5.2's ocml calls nothing of ockl).
  for (int round = 0; round < 2; ++round)
    for (std::string_view library : {"ocml.bc", "ockl.bc"})
      if (declaresFrom(m, library) && !linkLibrary(m, explicitPath, library, diag))
        return false;
  return defineControls(m, arch, diag);
}

} // namespace tk
