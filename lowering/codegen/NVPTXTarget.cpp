// TargetInfo for NVIDIA GPUs: NVVM intrinsics for ids, shuffles and barriers,
// and inline PTX for predicated vector loads and stores.
//
// Why inline PTX for masked accesses: LLVM IR has no predicated load, and a
// branch around each vector load (what llvm.masked.load becomes on NVPTX)
// splits the kernel into many small blocks. `@p ld.global.v4.f32` is one
// instruction; the lanes whose mask is false keep the `other` values, which
// are moved into the destination registers first.
#include "lowering/codegen/TargetInfo.h"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace tk {
namespace {

// The PTX type suffix and inline-asm constraint letter of one load/store word.
struct WordKind {
  const char *ptxType;
  const char *constraint;
};

WordKind wordKind(llvm::Type *t) {
  if (t->isFloatTy())
    return {"f32", "f"};
  switch (t->getIntegerBitWidth()) {
  case 64:
    return {"b64", "l"};
  case 32:
    return {"b32", "r"};
  case 16:
    return {"b16", "h"};
  default:
    return {"b8", "h"}; // an 8-bit access into a 16-bit register
  }
}

class NVPTXTarget : public TargetInfo {
public:
  explicit NVPTXTarget(const TargetOptions &options) : options_(options) {}

  std::string triple() const override { return "nvptx64-nvidia-cuda"; }
  std::string dataLayout() const override { return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"; }
  unsigned globalAddressSpace() const override { return 1; }
  unsigned sharedAddressSpace() const override { return 3; }
  int64_t maxStaticSharedBytes() const override { return 48 * 1024; }
  int64_t maxSharedBytes() const override { return maxSharedBytesFor(options_.arch); }

  llvm::Value *threadId(llvm::IRBuilderBase &b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  }

  llvm::Value *programId(llvm::IRBuilderBase &b, int axis) const override {
    static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    return b.CreateIntrinsic(ids[axis], {}, {});
  }

  llvm::Value *numPrograms(llvm::IRBuilderBase &b, int axis) const override {
    static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                              llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    return b.CreateIntrinsic(ids[axis], {}, {});
  }

  llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v,
                          unsigned laneMask) const override {
    llvm::Type *t = v->getType();
    llvm::Value *all = b.getInt32(0xffffffffu), *mask = b.getInt32(laneMask),
                *clamp = b.getInt32(0x1f);
    if (t->isFloatTy())
      return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, {}, {all, v, mask, clamp});
    const llvm::DataLayout &dl = b.GetInsertBlock()->getModule()->getDataLayout();
    unsigned bits = static_cast<unsigned>(dl.getTypeSizeInBits(t));
    llvm::Type *intTy = b.getIntNTy(bits);
    llvm::Value *asInt = t->isPointerTy() ? b.CreatePtrToInt(v, intTy) : b.CreateBitCast(v, intTy);
    auto shfl32 = [&](llvm::Value *x) {
      return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {}, {all, x, mask, clamp});
    };
    llvm::Value *result;
    if (bits == 64) {
      // Two 32-bit halves, each shuffled.
      llvm::Value *lo = shfl32(b.CreateTrunc(asInt, b.getInt32Ty()));
      llvm::Value *hi = shfl32(b.CreateTrunc(b.CreateLShr(asInt, 32), b.getInt32Ty()));
      result = b.CreateOr(b.CreateZExt(lo, intTy), b.CreateShl(b.CreateZExt(hi, intTy), 32));
    } else {
      result = shfl32(bits == 32 ? asInt : b.CreateZExt(asInt, b.getInt32Ty()));
      if (bits != 32)
        result = b.CreateTrunc(result, intTy);
    }
    return t->isPointerTy() ? b.CreateIntToPtr(result, t) : b.CreateBitCast(result, t);
  }

  void barrier(llvm::IRBuilderBase &b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  }

  std::vector<llvm::Value *> predicatedLoad(llvm::IRBuilderBase &b, llvm::Value *addr,
                                            llvm::Value *pred, llvm::Type *wordType,
                                            const std::vector<llvm::Value *> &others,
                                            bool isVolatile) const override {
    size_t n = others.size();
    WordKind k = wordKind(wordType);
    bool byte = wordType->isIntegerTy(8);
    llvm::Type *regTy = byte ? b.getInt16Ty() : wordType;
    // $0..$n-1 the results, $n the address, $n+1 the predicate, then the
    // `other` values moved in first.
    std::string text, constraints, regs;
    std::vector<llvm::Value *> args = {b.CreatePtrToInt(addr, b.getInt64Ty()), pred};
    for (size_t i = 0; i < n; ++i) {
      text += fmt::format("mov.{} ${}, ${};\n\t", byte ? "b16" : k.ptxType, i, n + 2 + i);
      regs += fmt::format("{}${}", i ? ", " : "", i);
      constraints += fmt::format("={},", k.constraint);
      args.push_back(byte ? b.CreateZExt(others[i], regTy) : others[i]);
    }
    text += fmt::format("@${} ld{}.global{}.{} {}, [ ${} + 0 ];", n + 1,
                        isVolatile ? ".volatile" : "", n > 1 ? fmt::format(".v{}", n) : "",
                        k.ptxType, n > 1 ? "{ " + regs + " }" : regs, n);
    constraints += "l,b";
    for (size_t i = 0; i < n; ++i)
      constraints += fmt::format(",{}", k.constraint);
    std::vector<llvm::Type *> resultTypes(n, regTy), argTypes;
    for (llvm::Value *a : args)
      argTypes.push_back(a->getType());
    llvm::Type *retTy = n == 1 ? regTy : llvm::StructType::get(b.getContext(), resultTypes);
    auto *fnTy = llvm::FunctionType::get(retTy, argTypes, false);
    // Side effects keep the load ordered after earlier stores to the same
    // address (the asm names no memory operands LLVM could see).
    llvm::Value *call = b.CreateCall(llvm::InlineAsm::get(fnTy, text, constraints, true), args);
    std::vector<llvm::Value *> out;
    for (size_t i = 0; i < n; ++i) {
      llvm::Value *w = n == 1 ? call : b.CreateExtractValue(call, {static_cast<unsigned>(i)});
      out.push_back(byte ? b.CreateTrunc(w, wordType) : w);
    }
    return out;
  }

  void predicatedStore(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *pred,
                       const std::vector<llvm::Value *> &words) const override {
    size_t n = words.size();
    llvm::Type *wordType = words[0]->getType();
    WordKind k = wordKind(wordType);
    bool byte = wordType->isIntegerTy(8);
    std::string regs, constraints = "l,b";
    std::vector<llvm::Value *> args = {b.CreatePtrToInt(addr, b.getInt64Ty()), pred};
    for (size_t i = 0; i < n; ++i) {
      regs += fmt::format("{}${}", i ? ", " : "", i + 2);
      constraints += fmt::format(",{}", k.constraint);
      args.push_back(byte ? b.CreateZExt(words[i], b.getInt16Ty()) : words[i]);
    }
    std::string text =
        fmt::format("@$1 st.global{}.{} [ $0 + 0 ], {};", n > 1 ? fmt::format(".v{}", n) : "",
                    k.ptxType, n > 1 ? "{ " + regs + " }" : regs);
    std::vector<llvm::Type *> argTypes;
    for (llvm::Value *a : args)
      argTypes.push_back(a->getType());
    auto *fnTy = llvm::FunctionType::get(b.getVoidTy(), argTypes, false);
    b.CreateCall(llvm::InlineAsm::get(fnTy, text, constraints, true), args);
  }

  void markKernel(llvm::Function *fn, int64_t numThreads) const override {
    llvm::LLVMContext &c = fn->getContext();
    llvm::Module *m = fn->getParent();
    llvm::NamedMDNode *annotations = m->getOrInsertNamedMetadata("nvvm.annotations");
    auto i32 = [&](int64_t v) {
      return llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(c), v));
    };
    llvm::Metadata *fnMd = llvm::ConstantAsMetadata::get(fn);
    annotations->addOperand(llvm::MDNode::get(c, {fnMd, llvm::MDString::get(c, "kernel"), i32(1)}));
    annotations->addOperand(
        llvm::MDNode::get(c, {fnMd, llvm::MDString::get(c, "maxntidx"), i32(numThreads)}));
  }

private:
  TargetOptions options_;
};

} // namespace

std::unique_ptr<TargetInfo> createNVPTXTarget(const TargetOptions &options) {
  return std::make_unique<NVPTXTarget>(options);
}

} // namespace tk
