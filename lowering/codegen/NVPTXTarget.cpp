// TargetInfo for NVIDIA GPUs: NVVM intrinsics for ids, shuffles, barriers,
// ldmatrix and cp.async, and inline PTX for predicated vector loads and
// stores and for the tensor-core instructions (mma.sync, wgmma) and fences.
//
// Why inline PTX for masked accesses: LLVM IR has no predicated load, and a
// branch around each vector load (what llvm.masked.load becomes on NVPTX)
// splits the kernel into many small blocks. `@p ld.global.v4.f32` is one
// instruction; the lanes whose mask is false keep the `other` values, which
// are moved into the destination registers first.
//
// Why inline PTX for mma.sync and wgmma: the accumulator registers are tied
// in and out of one statement, and a chain of wgmma k steps is one statement
// (see warpGroupMma), which LLVM 19's NVVM intrinsics cannot express.
#include "ir/Operation.h"
#include "lowering/codegen/Libdevice.h"
#include "lowering/codegen/TargetInfo.h"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <algorithm>

namespace tk {
namespace {

// The PTX type suffix and inline-asm constraint letter of one load/store word.
struct WordKind {
  const char *ptxType;
  const char *constraint;
};

// One PTX statement without operands, kept in place.
void ptxStatement(llvm::IRBuilderBase &b, const std::string &text) {
  auto *fnTy = llvm::FunctionType::get(b.getVoidTy(), {}, false);
  b.CreateCall(llvm::InlineAsm::get(fnTy, text, "~{memory}", true), {});
}

WordKind wordKind(llvm::Type *t) {
  // Floats keep their registers; the accesses are bit-typed (PTX lets a .bN
  // load or store use any register of N bits).
  if (t->isFloatTy())
    return {"b32", "f"};
  if (t->isDoubleTy())
    return {"b64", "d"};
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

// 2^x for fp32 with ex2.approx.f32's exact results, subnormal ones
// included, written out as ptxas expands that instruction (an input below
// -126 is halved, the flushing ex2.approx.ftz.f32 taken, the result
// squared under the same predicate) instead of leaving the expansion to
// ptxas: the SASS is byte-identical (ptxas 13.0, softmax at 16384 columns:
// the same .text section), and ptxas and the driver's JIT assemble it
// faster (31.0 instead of 33.8 ms minimum JIT on the H200, 30.6 instead of
// 32.9 ms ptxas CPU; compile-load-2026-11-30-4.md). Written as inline PTX
// because the predicated multiplies are what gives the same SASS: selects
// in LLVM IR become selp and a different, slower to assemble, sequence.
// mul.rn keeps ptxas from fusing the square into a following add. No side
// effects and no memory access, so LLVM may still CSE or drop it.
llvm::Value *exp2Approx(llvm::IRBuilderBase &b, llvm::Value *x) {
  llvm::FunctionType *fnTy = llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false);
  llvm::CallInst *call = b.CreateCall(
      llvm::InlineAsm::get(fnTy,
                           "{ .reg .pred p; .reg .f32 t; setp.lt.f32 p, $1, 0fC2FC0000; "
                           "mov.f32 t, $1; @p mul.rn.f32 t, t, 0f3F000000; "
                           "ex2.approx.ftz.f32 $0, t; @p mul.rn.f32 $0, $0, $0; }",
                           "=f,f", /*hasSideEffects=*/false),
      {x});
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

bool isConstantTrue(llvm::Value *v) {
  auto *c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c && c->isOne();
}

// The PTX qualifiers of a global access between ".global" and the vector
// width: the cache operator as written (".cg"), the L1 eviction priority
// (".L1::evict_last"), ".L2::cache_hint" when a cache policy operand
// follows. PTX takes a cache operator or an L1 eviction priority, not both,
// so with both the operator stays and the policy acts on L2 alone; a
// .volatile access takes neither.
std::string cacheQualifiers(const TargetInfo::MemoryHints &hints) {
  if (hints.isVolatile)
    return "";
  std::string q = hints.cache.empty() ? "" : "." + hints.cache;
  if (!hints.evict.empty() && hints.cache.empty())
    q += ".L1::" + hints.evict;
  if (hints.l2Policy)
    q += ".L2::cache_hint";
  return q;
}

class NVPTXTarget : public TargetInfo {
public:
  explicit NVPTXTarget(const TargetOptions &options) : options_(options) {}

  std::string_view name() const override { return "nvptx"; }
  std::string unsupportedOp(const Operation &op) const override {
    if ((op.is(Opcode::TmaLoad) || op.is(Opcode::TmaStore)) && !options_.arch.starts_with("sm_90"))
      return fmt::format("(TMA needs sm_90 or above, the kernel compiles for {})", options_.arch);
    return {};
  }
  std::string triple() const override { return "nvptx64-nvidia-cuda"; }
  std::string dataLayout() const override { return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"; }
  unsigned globalAddressSpace() const override { return 1; }
  unsigned sharedAddressSpace() const override { return 3; }
  bool testMiscompile() const override { return options_.testMiscompile; }
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

  // %globaltimer and %smid through NVVM's intrinsics, which LLVM neither
  // merges nor hoists (they read memory it cannot see).
  llvm::Value *specialRegister(llvm::IRBuilderBase &b, const std::string &name) const override {
    return b.CreateIntrinsic(name == "globaltimer" ? llvm::Intrinsic::nvvm_read_ptx_sreg_globaltimer
                                                   : llvm::Intrinsic::nvvm_read_ptx_sreg_smid,
                             {}, {});
  }

  llvm::Value *warpUniform(llvm::IRBuilderBase &b, llvm::Value *v) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                             {b.getInt32(0xffffffffu), v, b.getInt32(0), b.getInt32(0x1f)});
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

  // createpolicy.fractional.L2::evict_first / evict_last with fraction 1.0:
  // every line the access touches gets that L2 priority. No side effects and
  // no memory access, so LLVM may hoist it out of loops or merge copies.
  llvm::Value *l2EvictionPolicy(llvm::IRBuilderBase &b, const std::string &evict) const override {
    if (evict.empty())
      return nullptr;
    auto *fnTy = llvm::FunctionType::get(b.getInt64Ty(), {}, false);
    std::string text = fmt::format("createpolicy.fractional.L2::{}.b64 $0, 1.0;", evict);
    llvm::CallInst *policy = b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=l", false), {});
    policy->setDoesNotAccessMemory();
    policy->setDoesNotThrow();
    return policy;
  }

  // $0..$n-1 the results, then the address, the predicate (none where it is
  // the constant true), the `other` values moved in first (none without a
  // predicate: every lane loads), and the L2 cache policy.
  std::vector<llvm::Value *> predicatedLoad(llvm::IRBuilderBase &b, llvm::Value *addr,
                                            llvm::Value *pred, llvm::Type *wordType,
                                            const std::vector<llvm::Value *> &others,
                                            const MemoryHints &hints) const override {
    size_t n = others.size();
    WordKind k = wordKind(wordType);
    bool byte = wordType->isIntegerTy(8);
    llvm::Type *regTy = byte ? b.getInt16Ty() : wordType;
    bool guarded = !isConstantTrue(pred);
    std::string text, constraints, regs;
    std::vector<llvm::Value *> args = {b.CreatePtrToInt(addr, b.getInt64Ty())};
    size_t addrIdx = n, predIdx = n + 1;
    if (guarded)
      args.push_back(pred);
    for (size_t i = 0; i < n; ++i) {
      regs += fmt::format("{}${}", i ? ", " : "", i);
      constraints += fmt::format("={},", k.constraint);
    }
    constraints += guarded ? "l,b" : "l";
    if (guarded) {
      for (size_t i = 0; i < n; ++i) {
        text += fmt::format("mov.{} ${}, ${};\n\t", byte ? "b16" : k.ptxType, i, n + 2 + i);
        constraints += fmt::format(",{}", k.constraint);
        args.push_back(byte ? b.CreateZExt(others[i], regTy) : others[i]);
      }
    }
    std::string policy;
    if (hints.l2Policy && !hints.isVolatile) {
      policy = fmt::format(", ${}", n + args.size());
      constraints += ",l";
      args.push_back(hints.l2Policy);
    }
    text += fmt::format("{}ld{}.global{}{}.{} {}, [ ${} + 0 ]{};",
                        guarded ? fmt::format("@${} ", predIdx) : "",
                        hints.isVolatile ? ".volatile" : "", cacheQualifiers(hints),
                        n > 1 ? fmt::format(".v{}", n) : "", k.ptxType,
                        n > 1 ? "{ " + regs + " }" : regs, addrIdx, policy);
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

  // $0 the address, then the predicate (none where it is the constant
  // true), the words, and the L2 cache policy.
  void predicatedStore(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *pred,
                       const std::vector<llvm::Value *> &words,
                       const MemoryHints &hints) const override {
    size_t n = words.size();
    llvm::Type *wordType = words[0]->getType();
    WordKind k = wordKind(wordType);
    bool byte = wordType->isIntegerTy(8);
    bool guarded = !isConstantTrue(pred);
    std::string regs, constraints = guarded ? "l,b" : "l";
    std::vector<llvm::Value *> args = {b.CreatePtrToInt(addr, b.getInt64Ty())};
    if (guarded)
      args.push_back(pred);
    for (size_t i = 0; i < n; ++i) {
      regs += fmt::format("{}${}", i ? ", " : "", args.size());
      constraints += fmt::format(",{}", k.constraint);
      args.push_back(byte ? b.CreateZExt(words[i], b.getInt16Ty()) : words[i]);
    }
    std::string policy;
    if (hints.l2Policy && !hints.isVolatile) {
      policy = fmt::format(", ${}", args.size());
      constraints += ",l";
      args.push_back(hints.l2Policy);
    }
    std::string text = fmt::format("{}st{}.global{}{}.{} [ $0 + 0 ], {}{};", guarded ? "@$1 " : "",
                                   hints.isVolatile ? ".volatile" : "", cacheQualifiers(hints),
                                   n > 1 ? fmt::format(".v{}", n) : "", k.ptxType,
                                   n > 1 ? "{ " + regs + " }" : regs, policy);
    std::vector<llvm::Type *> argTypes;
    for (llvm::Value *a : args)
      argTypes.push_back(a->getType());
    auto *fnTy = llvm::FunctionType::get(b.getVoidTy(), argTypes, false);
    b.CreateCall(llvm::InlineAsm::get(fnTy, text, constraints, true), args);
  }

  // vprintf takes the format and a pointer to the arguments laid out as a
  // C struct (each at its natural alignment), in a buffer of the entry block.
  void printf(llvm::IRBuilderBase &b, llvm::Value *format, uint64_t,
              const std::vector<llvm::Value *> &args) const override {
    llvm::Module *m = b.GetInsertBlock()->getModule();
    llvm::Function *fn = b.GetInsertBlock()->getParent();
    llvm::Type *ptr = b.getPtrTy(0);
    llvm::FunctionCallee vprintf = m->getOrInsertFunction(
        "vprintf", llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr}, false));
    std::vector<llvm::Type *> types;
    for (llvm::Value *a : args)
      types.push_back(a->getType());
    auto *bufTy = llvm::StructType::get(b.getContext(), types);
    llvm::AllocaInst *buf;
    {
      llvm::IRBuilderBase::InsertPointGuard keep(b);
      b.SetInsertPoint(&fn->getEntryBlock(), fn->getEntryBlock().begin());
      buf = b.CreateAlloca(bufTy);
    }
    for (size_t i = 0; i < args.size(); ++i)
      b.CreateStore(args[i], b.CreateStructGEP(bufTy, buf, static_cast<unsigned>(i)));
    b.CreateCall(vprintf, {format, buf});
  }

  // __assertfail(message, file, line, function, 1): the CUDA runtime's.
  void assertFail(llvm::IRBuilderBase &b, const std::string &message, const std::string &file,
                  unsigned line, const std::string &function) const override {
    llvm::Module *m = b.GetInsertBlock()->getModule();
    llvm::Type *ptr = b.getPtrTy(0);
    llvm::FunctionCallee fail = m->getOrInsertFunction(
        "__assertfail", llvm::FunctionType::get(
                            b.getVoidTy(), {ptr, ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
    b.CreateCall(fail,
                 {genericString(b, message, "assert.msg"), genericString(b, file, "assert.file"),
                  b.getInt32(line), genericString(b, function, "assert.func"), b.getInt64(1)});
  }

  // libdevice itself, linked after lowering (linkLibdevice).
  llvm::Value *callLibdevice(llvm::IRBuilderBase &b, std::string_view symbol,
                             const std::vector<llvm::Value *> &args,
                             llvm::Type *result) const override {
    return tk::callLibdevice(b, symbol, args, result);
  }

  void markKernel(llvm::Function *fn, int64_t numThreads,
                  const std::vector<unsigned> &tensorMaps) const override {
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
    // A CUtensorMap parameter is read where it lies (cvta.param), not copied
    // to local memory: `__grid_constant__`, its index counted from 1.
    if (!tensorMaps.empty()) {
      std::vector<llvm::Metadata *> indices;
      for (unsigned i : tensorMaps)
        indices.push_back(i32(int64_t(i) + 1));
      annotations->addOperand(llvm::MDNode::get(
          c, {fnMd, llvm::MDString::get(c, "grid_constant"), llvm::MDNode::get(c, indices)}));
    }
  }

  llvm::Value *approxF32(llvm::IRBuilderBase &b, ApproxF32 fn, llvm::Value *x) const override {
    auto approx = [&](llvm::Intrinsic::ID id) { return b.CreateIntrinsic(id, {}, {x}); };
    switch (fn) {
    case ApproxF32::Exp2:
      return exp2Approx(b, x);
    case ApproxF32::Exp2Reflect:
      // Triton's math.exp2: ex2.approx.ftz.f32 under enable_reflect_ftz, else
      // ex2.approx.f32 (which ptxas expands as exp2Approx spells out).
      return approx(options_.reflectFtz ? llvm::Intrinsic::nvvm_ex2_approx_ftz_f
                                        : llvm::Intrinsic::nvvm_ex2_approx_f);
    case ApproxF32::Log2:
      return approx(llvm::Intrinsic::nvvm_lg2_approx_f);
    case ApproxF32::Sin:
      return approx(llvm::Intrinsic::nvvm_sin_approx_f);
    case ApproxF32::Cos:
      return approx(llvm::Intrinsic::nvvm_cos_approx_f);
    case ApproxF32::Rsqrt:
      return approx(llvm::Intrinsic::nvvm_rsqrt_approx_f);
    case ApproxF32::Rcp:
      return approx(llvm::Intrinsic::nvvm_rcp_approx_ftz_f);
    }
    return nullptr;
  }

  // div.full.f32. No side effects, no memory: LLVM may CSE, hoist or drop it
  // like any pure value (a call to inline asm is otherwise assumed to touch
  // memory).
  llvm::Value *divideF32(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y) const override {
    llvm::Type *f32 = b.getFloatTy();
    auto *fnTy = llvm::FunctionType::get(f32, {f32, f32}, false);
    llvm::CallInst *q = b.CreateCall(
        llvm::InlineAsm::get(fnTy, "div.full.f32 $0, $1, $2;", "=f,f,f", false), {x, y});
    q->setDoesNotAccessMemory();
    q->setDoesNotThrow();
    return q;
  }

  std::string archName() const override { return options_.arch; }

  bool hasFp8Conversions() const override {
    // sm_89 and sm_90[a] of the supported list (lowering/codegen/TargetOptions.h).
    return options_.arch == "sm_89" || options_.arch.starts_with("sm_90");
  }

  llvm::Value *fp8ToHalf(llvm::IRBuilderBase &b, llvm::Value *v, DType format) const override {
    // cvt of a pair: the low byte of the b16 operand becomes the low half.
    std::string text =
        fmt::format("cvt.rn.f16x2.{}x2 $0, $1;", format == DType::F8E5 ? "e5m2" : "e4m3");
    auto *fnTy = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt16Ty()}, false);
    llvm::Value *pair = b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=r,h", false),
                                     {b.CreateZExt(v, b.getInt16Ty())});
    return b.CreateBitCast(b.CreateTrunc(pair, b.getInt16Ty()), b.getHalfTy());
  }

  llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *v, DType format) const override {
    // cvt d, a, b puts b's conversion in the low byte of d; a is 0.
    std::string text = fmt::format("cvt.rn.satfinite.{}x2.f32 $0, $1, $2;",
                                   format == DType::F8E5 ? "e5m2" : "e4m3");
    auto *fnTy = llvm::FunctionType::get(b.getInt16Ty(), {b.getFloatTy(), b.getFloatTy()}, false);
    llvm::Value *pair = b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=h,f,f", false),
                                     {llvm::ConstantFP::get(b.getFloatTy(), 0.0), v});
    return b.CreateTrunc(pair, b.getInt8Ty());
  }

  llvm::Value *roundToTF32(llvm::IRBuilderBase &b, llvm::Value *v) const override {
    auto *fnTy = llvm::FunctionType::get(b.getInt32Ty(), {b.getFloatTy()}, false);
    llvm::Value *bits =
        b.CreateCall(llvm::InlineAsm::get(fnTy, "cvt.rna.tf32.f32 $0, $1;", "=r,f", false), {v});
    return b.CreateBitCast(bits, b.getFloatTy());
  }

  std::vector<llvm::Value *> loadMatrices(llvm::IRBuilderBase &b, llvm::Value *addr, bool x4,
                                          bool trans) const override {
    llvm::Intrinsic::ID id =
        x4 ? (trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
           : (trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
    llvm::Value *call = b.CreateIntrinsic(id, {addr->getType()}, {addr});
    std::vector<llvm::Value *> out;
    for (unsigned i = 0; i < (x4 ? 4u : 2u); ++i)
      out.push_back(b.CreateExtractValue(call, {i}));
    return out;
  }

  std::vector<llvm::Value *> warpMma(llvm::IRBuilderBase &b, DType operands,
                                     const std::vector<llvm::Value *> &a,
                                     const std::vector<llvm::Value *> &bFrag,
                                     const std::vector<llvm::Value *> &c) const override {
    // An fp16 accumulator (out_dtype=tk.float16) is two f16x2 registers,
    // (c0, c1) and (c2, c3): the same elements per lane as fp32's four.
    if (operands == DType::F16 && c[0]->getType()->isHalfTy())
      return warpMmaF16Accumulator(b, a, bFrag, c);
    std::string shape, types;
    switch (operands) {
    case DType::F16:
      shape = "m16n8k16", types = "f32.f16.f16.f32";
      break;
    case DType::BF16:
      shape = "m16n8k16", types = "f32.bf16.bf16.f32";
      break;
    case DType::F32:
      shape = "m16n8k8", types = "f32.tf32.tf32.f32";
      break;
    case DType::U8:
      shape = "m16n8k32", types = "satfinite.s32.u8.u8.s32";
      break;
    default:
      // .satfinite as Triton's: a sum past the int32 range saturates
      // (only past K = 133,000 int8 products), where the FMA path and the
      // interpreter wrap.
      shape = "m16n8k32", types = "satfinite.s32.s8.s8.s32";
      break;
    }
    bool isInt = operands == DType::I8 || operands == DType::U8;
    llvm::Type *accTy = isInt ? b.getInt32Ty() : b.getFloatTy();
    std::string text = fmt::format("mma.sync.aligned.{}.row.col.{} {{$0, $1, $2, $3}}, "
                                   "{{$4, $5, $6, $7}}, {{$8, $9}}, {{$10, $11, $12, $13}};",
                                   shape, types);
    std::string cons = isInt ? "=r,=r,=r,=r" : "=f,=f,=f,=f";
    cons += ",r,r,r,r,r,r,0,1,2,3";
    std::vector<llvm::Type *> params(6, b.getInt32Ty());
    params.insert(params.end(), 4, accTy);
    auto *retTy = llvm::StructType::get(b.getContext(), {accTy, accTy, accTy, accTy});
    auto *fnTy = llvm::FunctionType::get(retTy, params, false);
    std::vector<llvm::Value *> args = {a[0],     a[1], a[2], a[3], bFrag[0],
                                       bFrag[1], c[0], c[1], c[2], c[3]};
    llvm::Value *call = b.CreateCall(llvm::InlineAsm::get(fnTy, text, cons, false), args);
    std::vector<llvm::Value *> out;
    for (unsigned i = 0; i < 4; ++i)
      out.push_back(b.CreateExtractValue(call, {i}));
    return out;
  }

  std::vector<llvm::Value *> warpMmaF16Accumulator(llvm::IRBuilderBase &b,
                                                   const std::vector<llvm::Value *> &a,
                                                   const std::vector<llvm::Value *> &bFrag,
                                                   const std::vector<llvm::Value *> &c) const {
    llvm::Type *pair = llvm::FixedVectorType::get(b.getHalfTy(), 2);
    auto pack = [&](llvm::Value *lo, llvm::Value *hi) {
      llvm::Value *v = b.CreateInsertElement(llvm::PoisonValue::get(pair), lo, uint64_t(0));
      return b.CreateBitCast(b.CreateInsertElement(v, hi, uint64_t(1)), b.getInt32Ty());
    };
    std::string text = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {$0, $1}, "
                       "{$2, $3, $4, $5}, {$6, $7}, {$8, $9};";
    std::vector<llvm::Type *> params(8, b.getInt32Ty());
    auto *retTy = llvm::StructType::get(b.getContext(), {b.getInt32Ty(), b.getInt32Ty()});
    auto *fnTy = llvm::FunctionType::get(retTy, params, false);
    std::vector<llvm::Value *> args = {
        a[0], a[1], a[2], a[3], bFrag[0], bFrag[1], pack(c[0], c[1]), pack(c[2], c[3])};
    llvm::Value *call =
        b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=r,=r,r,r,r,r,r,r,0,1", false), args);
    std::vector<llvm::Value *> out;
    for (unsigned i = 0; i < 2; ++i) {
      llvm::Value *v = b.CreateBitCast(b.CreateExtractValue(call, {i}), pair);
      out.push_back(b.CreateExtractElement(v, uint64_t(0)));
      out.push_back(b.CreateExtractElement(v, uint64_t(1)));
    }
    return out;
  }

  // The k steps of one piece as one asm statement: the n / 2 registers tied
  // in and out once for the whole chain (one statement per k step cost
  // LLVM's instruction selection and register coalescing four times the
  // accumulator's operands, for the same PTX). Per k step, A is one i64 descriptor or four i32
  // registers (two 16-bit elements each; there is no transposed A in registers). A zero accumulator
  // is scale-d = false on the first step (D = A x B) with its registers left undefined: no copies
  // of 0.0 into the tied registers between wgmma.fence and the wgmma (ptxas would add a
  // warpgroup.arrive of its own, C7519).
  std::vector<llvm::Value *> warpGroupMma(llvm::IRBuilderBase &b,
                                          const WarpGroupMma &mma) const override {
    auto typeName = [](DType t) {
      return t == DType::BF16     ? "bf16"
             : t == DType::F8E4NV ? "e4m3"
             : t == DType::F8E5   ? "e5m2"
                                  : "f16";
    };
    // fp8: k steps of 32, A's and B's formats apart, no transpose operands
    // (both K-major).
    bool fp8 = isFp8(mma.operands);
    std::string ty = typeName(mma.operands), tyB = fp8 ? typeName(mma.operandsB) : ty;
    size_t regCount = mma.d.size(), steps = mma.a.size();
    const std::vector<std::vector<llvm::Value *>> &a = mma.a;
    std::string regs;
    for (size_t i = 0; i < regCount; ++i)
      regs += fmt::format("{}${}", i ? ", " : "", i);
    // Operands: the outputs, the steps' A operands, the steps B descriptors,
    // the scale-d flag, then the tied inputs.
    size_t aCount = 0;
    std::vector<std::string> aText;
    for (const std::vector<llvm::Value *> &step : a) {
      std::string t;
      for (size_t i = 0; i < step.size(); ++i)
        t += fmt::format("{}${}", i ? ", " : "", regCount + aCount + i);
      aText.push_back(step.size() == 1 ? t : "{" + t + "}");
      aCount += step.size();
    }
    size_t flag = regCount + aCount + steps;
    // p: scale-d of the first step (the flag), q: of the others (true).
    std::string text =
        mma.zeroInit && steps > 1
            ? fmt::format("{{ .reg .pred p, q; setp.ne.b32 p, ${0}, 0; setp.eq.b32 q, ${0}, 0;",
                          flag)
            : fmt::format("{{ .reg .pred p; setp.ne.b32 p, ${}, 0;", flag);
    for (size_t k = 0; k < steps; ++k) {
      bool regA = a[k].size() > 1;
      std::string trans = fp8 ? ""
                          : regA
                              ? fmt::format(", {}", mma.mnMajorB ? 1 : 0)
                              : fmt::format(", {}, {}", mma.mnMajorA ? 1 : 0, mma.mnMajorB ? 1 : 0);
      text += fmt::format("\n\twgmma.mma_async.sync.aligned.m64n{}k{}.f32.{}.{} {{{}}}, {}, ${}, "
                          "{}, 1, 1{};",
                          mma.n, fp8 ? 32 : 16, ty, tyB, regs, aText[k], regCount + aCount + k,
                          k > 0 && mma.zeroInit ? "q" : "p", trans);
    }
    text += "\n\t}";
    std::string cons;
    for (size_t i = 0; i < regCount; ++i)
      cons += "=f,";
    std::vector<llvm::Type *> params;
    std::vector<llvm::Value *> args;
    for (const std::vector<llvm::Value *> &step : a)
      for (llvm::Value *v : step) {
        bool desc = step.size() == 1;
        cons += desc ? "l," : "r,";
        params.push_back(desc ? b.getInt64Ty() : b.getInt32Ty());
        args.push_back(v);
      }
    for (size_t i = 0; i < steps; ++i)
      cons += "l,";
    cons += "r";
    for (size_t i = 0; i < regCount; ++i)
      cons += fmt::format(",{}", i);
    params.insert(params.end(), steps, b.getInt64Ty());
    params.push_back(b.getInt32Ty());
    params.insert(params.end(), regCount, b.getFloatTy());
    std::vector<llvm::Type *> outs(regCount, b.getFloatTy());
    auto *fnTy =
        llvm::FunctionType::get(llvm::StructType::get(b.getContext(), outs), params, false);
    args.insert(args.end(), mma.descB.begin(), mma.descB.end());
    args.push_back(b.getInt32(mma.zeroInit ? 0 : 1));
    for (llvm::Value *v : mma.d)
      args.push_back(mma.zeroInit ? llvm::PoisonValue::get(v->getType()) : v);
    llvm::Value *call = b.CreateCall(llvm::InlineAsm::get(fnTy, text, cons, true), args);
    std::vector<llvm::Value *> out;
    for (unsigned i = 0; i < regCount; ++i)
      out.push_back(b.CreateExtractValue(call, {i}));
    return out;
  }

  void warpGroupFence(llvm::IRBuilderBase &b) const override {
    ptxStatement(b, "wgmma.fence.sync.aligned;");
  }

  void warpGroupCommit(llvm::IRBuilderBase &b) const override {
    ptxStatement(b, "wgmma.commit_group.sync.aligned;");
  }

  // The registers go through the statement in chunks of at most 128.
  void warpGroupWait(llvm::IRBuilderBase &b, std::vector<llvm::Value *> &acc,
                     int64_t pending) const override {
    std::string text = fmt::format("wgmma.wait_group.sync.aligned {};", pending);
    if (acc.empty()) {
      ptxStatement(b, text);
      return;
    }
    for (size_t at = 0; at < acc.size(); at += 128) {
      size_t n = std::min<size_t>(128, acc.size() - at);
      std::string cons;
      for (size_t i = 0; i < n; ++i)
        cons += "=f,";
      for (size_t i = 0; i < n; ++i)
        cons += fmt::format("{}{}", i ? "," : "", i);
      std::vector<llvm::Type *> tys(n, b.getFloatTy());
      auto *fnTy = llvm::FunctionType::get(llvm::StructType::get(b.getContext(), tys), tys, false);
      std::vector<llvm::Value *> args(acc.begin() + static_cast<std::ptrdiff_t>(at),
                                      acc.begin() + static_cast<std::ptrdiff_t>(at + n));
      llvm::Value *call = b.CreateCall(llvm::InlineAsm::get(fnTy, text, cons, true), args);
      for (unsigned i = 0; i < n; ++i)
        acc[at + i] = b.CreateExtractValue(call, {i});
    }
  }

  void fenceAsyncProxy(llvm::IRBuilderBase &b) const override {
    ptxStatement(b, "fence.proxy.async.shared::cta;");
  }

  llvm::Value *opaqueTrue(llvm::IRBuilderBase &b) const override {
    auto *predTy = llvm::FunctionType::get(b.getInt1Ty(), {}, false);
    return b.CreateCall(llvm::InlineAsm::get(predTy, "setp.eq.u32 $0, 0, 0;", "=b", false), {});
  }

  // cp.async.cg for 16 bytes (bypassing L1), .ca for 4 and 8; src-size 0
  // where `on` is false.
  void asyncCopy(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int64_t bytes,
                 llvm::Value *on) const override {
    llvm::Intrinsic::ID copy = bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                               : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                            : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
    llvm::Value *size = b.CreateSelect(on, b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(0));
    b.CreateIntrinsic(copy, {}, {dst, src, size});
  }

  void asyncCopyCommit(llvm::IRBuilderBase &b) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  }

  void asyncCopyWait(llvm::IRBuilderBase &b, int64_t pending) const override {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                      {b.getInt32(static_cast<uint32_t>(pending))});
  }

  llvm::Value *loadB16OrZero(llvm::IRBuilderBase &b, llvm::Value *src,
                             llvm::Value *on) const override {
    auto *fnTy = llvm::FunctionType::get(b.getInt16Ty(), {src->getType(), b.getInt16Ty()}, false);
    const char *text = "{ .reg .pred p; setp.ne.b16 p, $2, 0; mov.b16 $0, 0; "
                       "@p ld.global.b16 $0, [$1]; }";
    return b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=h,l,h", true),
                        {src, b.CreateZExt(on, b.getInt16Ty())});
  }

private:
  TargetOptions options_;
};

} // namespace

std::unique_ptr<TargetInfo> createNVPTXTarget(const TargetOptions &options) {
  return std::make_unique<NVPTXTarget>(options);
}

llvm::Value *genericString(llvm::IRBuilderBase &b, std::string_view text, const char *name) {
  llvm::Module *m = b.GetInsertBlock()->getModule();
  llvm::GlobalVariable *g = b.CreateGlobalString(text, name, 1, m);
  return b.CreateAddrSpaceCast(g, b.getPtrTy(0));
}

std::unique_ptr<TargetInfo> createTarget(const TargetOptions &options) {
  return isAMDGPUArch(options.arch) ? createAMDGPUTarget(options) : createNVPTXTarget(options);
}

} // namespace tk
