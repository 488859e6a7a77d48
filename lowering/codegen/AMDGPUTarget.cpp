// TargetInfo for AMD GPUs (gfx90a, gfx942, gfx1100; compile only: no AMD GPU
// runs the code here). LLVM's AMDGPU intrinsics for ids, cross-lane moves
// and barriers, the amdgpu_kernel calling convention, vector loads and
// stores in a branch on their predicate, and LLVM intrinsics for the fp32
// math.
//
// A warp is the wavefront (warpSize: 64 lanes on gfx90a and gfx942, 32 on
// gfx1100): the layouts of a kernel compiled for gfx9 have 64-thread warps
// (threads_per_warp, compiler/Pipeline.cpp), so a shuffle's lane mask goes
// up to 32 and crosses the wavefront's halves. A shuffle is DPP, ds_swizzle_b32,
// v_permlanex16_b32 or ds_bpermute_b32 by arch and lane mask
// (AMDGPUShuffle.h), a barrier s_barrier between workgroup-scope release
// and acquire fences (LDS ordered as __syncthreads orders it). fp64 math and
// the libdevice functions call ROCm's device libraries (ocml, ockl:
// ROCmDeviceLibs.h), linked after lowering, and so do print and assert
// (ockl's hostcall printf).
//
// What exists only on NVIDIA GPUs (the tensor-core dot layouts, inline PTX,
// the libdevice functions ROCm has no equivalent of) is reported at the op
// by unsupportedOp, so the hooks of the tensor-core dot
// lowering are never reached.
#include "ir/Layout.h"
#include "ir/Operation.h"
#include "ir/Types.h"
#include "lang/Libdevice.h"
#include "lowering/codegen/AMDGPUShuffle.h"
#include "lowering/codegen/AMDMatrixCore.h"
#include "lowering/codegen/Libdevice.h"
#include "lowering/codegen/ROCmDeviceLibs.h"
#include "lowering/codegen/TargetInfo.h"

#include <fmt/format.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ErrorHandling.h>

#include <map>

namespace tk {
namespace {

// "libdevice.NAME", the function of libdevice's `symbol` as kernels call it.
std::string libdeviceFunctionName(std::string_view symbol) {
  for (const LibdeviceFunction &f : allLibdeviceFunctions())
    for (const LibdeviceOverload *o : f.overloads)
      if (o->symbol == symbol)
        return "libdevice." + std::string(f.name);
  return std::string(symbol);
}

// The hooks of the tensor-core dot lowering: unsupportedOp rejects every op
// that would reach them, so reaching one is tk's bug.
[[noreturn]] void notLowered(const char *what) {
  llvm::report_fatal_error(llvm::Twine("internal error: ") + what + " reached on amdgcn");
}

class AMDGPUTarget : public TargetInfo {
public:
  explicit AMDGPUTarget(const TargetOptions &options) : options_(options) {}

  std::string_view name() const override { return "amdgcn"; }

  std::string unsupportedOp(const Operation &constOp) const override {
    auto &op = const_cast<Operation &>(constOp);
    switch (op.opcode()) {
    case Opcode::ExternElementwise: {
      std::string symbol = op.attrs().getString("symbol").value_or("");
      if (rocmEquivalent(symbol))
        return {};
      return fmt::format("({}: ROCm's device libraries have no equivalent of {})",
                         libdeviceFunctionName(symbol), symbol);
    }
    case Opcode::InlineAsm:
      return "(tk.inline_asm_elementwise; its assembly is PTX)";
    case Opcode::TmaLoad:
    case Opcode::TmaStore:
      return "(TMA; tensor descriptors load and store through pointers on amdgcn)";
    case Opcode::SpecialRegister:
      return "(tk.extra.cuda.globaltimer and smid read PTX's %globaltimer and %smid)";
    case Opcode::Dot:
      if (op.numResults() && mmaLayoutOf(op.result()->type()))
        return "on NVIDIA's tensor cores (an mma.sync / wgmma layout; amdgcn's dots take the "
               "mfma / wmma layouts)";
      return {};
    default:
      return {};
    }
  }

  // The ops that call ROCm's device libraries need their bitcode on this
  // machine: said at the op, with what to install, rather than at the link.
  std::string missingLibrary(const Operation &constOp) const override {
    auto &op = const_cast<Operation &>(constOp);
    std::string libdevice;
    if (op.is(Opcode::ExternElementwise))
      libdevice = op.attrs().getString("symbol").value_or("");
    else if (libdeviceMathName(op.opcode()) && op.numResults() &&
             op.result()->type()->dtype() == DType::F64)
      libdevice = libdeviceMathName(op.opcode());
    const ROCmFunction *f = rocmEquivalent(libdevice);
    // print and assert: ockl's printf.
    std::string_view symbol = f ? f->symbol
                              : op.is(Opcode::Print) || op.is(Opcode::Assert)
                                  ? "__ockl_printf_begin"
                                  : "";
    if (symbol.empty())
      return "";
    std::string_view library = rocmLibraryOf(symbol);
    auto [it, inserted] = foundLibraries_.try_emplace(std::string(library));
    if (inserted)
      it->second = findROCmDeviceLib(options_.rocmDeviceLibsPath, library);
    if (!it->second.empty())
      return "";
    return fmt::format("'{}' calls {} on amdgcn: {}", op.name(), symbol,
                       missingROCmDeviceLibMessage(options_.rocmDeviceLibsPath, library));
  }

  // ockl's printf over the hostcall buffer (a hidden kernel argument the HIP
  // runtime fills and serves): begin, the format (with its NUL), then the
  // arguments as 64-bit words (doubles as their bits), seven per call, the
  // last call flagged. The host formats them as C printf would.
  void printf(llvm::IRBuilderBase &b, llvm::Value *format, uint64_t formatBytes,
              const std::vector<llvm::Value *> &args) const override {
    llvm::Module *m = b.GetInsertBlock()->getModule();
    llvm::Type *i64 = b.getInt64Ty(), *i32 = b.getInt32Ty();
    auto ockl = [&](const char *name, std::vector<llvm::Type *> params) {
      return m->getOrInsertFunction(name, llvm::FunctionType::get(i64, params, false));
    };
    llvm::Value *desc = b.CreateCall(ockl("__ockl_printf_begin", {i64}), {b.getInt64(0)});
    desc = b.CreateCall(ockl("__ockl_printf_append_string_n", {i64, b.getPtrTy(0), i64, i32}),
                        {desc, format, b.getInt64(formatBytes), b.getInt32(args.empty())});
    constexpr size_t kPerCall = 7;
    std::vector<llvm::Type *> params = {i64, i32};
    params.insert(params.end(), kPerCall, i64);
    params.push_back(i32);
    for (size_t i = 0; i < args.size(); i += kPerCall) {
      size_t n = std::min(kPerCall, args.size() - i);
      std::vector<llvm::Value *> call = {desc, b.getInt32(static_cast<uint32_t>(n))};
      for (size_t k = 0; k < kPerCall; ++k) {
        llvm::Value *a = k < n ? args[i + k] : b.getInt64(0);
        call.push_back(a->getType()->isDoubleTy() ? b.CreateBitCast(a, i64)
                                                  : b.CreateSExtOrTrunc(a, i64));
      }
      call.push_back(b.getInt32(i + n == args.size()));
      desc = b.CreateCall(ockl("__ockl_printf_append_args", params), call);
    }
  }

  // HIP's __assert_fail: the message through printf, then a trap (s_trap 2),
  // which ends the kernel with an error.
  void assertFail(llvm::IRBuilderBase &b, const std::string &message, const std::string &file,
                  unsigned line, const std::string &function) const override {
    std::string text;
    for (char c : fmt::format("{}:{}: {}: Device-side assertion `{}' failed.\n", file, line,
                              function, message))
      text += c == '%' ? std::string("%%") : std::string(1, c);
    printf(b, genericString(b, text, "assert.msg"), text.size() + 1, {});
    b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  }

  // ROCm's function for libdevice's (unsupportedOp has refused the others),
  // its wider integer result (ockl's u64 counts) truncated to libdevice's.
  llvm::Value *callLibdevice(llvm::IRBuilderBase &b, std::string_view symbol,
                             const std::vector<llvm::Value *> &args,
                             llvm::Type *result) const override {
    const ROCmFunction *f = rocmEquivalent(symbol);
    if (!f)
      notLowered(("libdevice's " + std::string(symbol)).c_str());
    bool wide = (f->result == DType::I64 || f->result == DType::U64) && result->isIntegerTy(32);
    llvm::Value *r = tk::callLibdevice(b, f->symbol, args, wide ? b.getInt64Ty() : result);
    return wide ? b.CreateTrunc(r, result) : r;
  }

  std::string triple() const override { return "amdgcn-amd-amdhsa"; }
  std::string dataLayout() const override {
    return "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
           "p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-"
           "v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";
  }
  unsigned globalAddressSpace() const override { return 1; }

  // AMDGPU's memory model scopes (LLVM's AMDGPUUsage): a workgroup, the
  // agent (one GPU), the system.
  std::optional<std::string> llvmAtomicScope(const std::string &scope) const override {
    if (scope == "cta")
      return "workgroup";
    if (scope == "gpu")
      return "agent";
    return "";
  }
  unsigned sharedAddressSpace() const override { return 3; }
  bool testMiscompile() const override { return options_.testMiscompile; }

  // No fp8 conversions on amdgcn yet: the lowering reports them at the op
  // (hasFp8Conversions), so the two converters are never called.
  bool hasFp8Conversions() const override { return false; }
  std::string archName() const override { return options_.arch; }
  llvm::Value *fp8ToHalf(llvm::IRBuilderBase &, llvm::Value *, DType) const override {
    return nullptr;
  }
  llvm::Value *floatToFp8(llvm::IRBuilderBase &, llvm::Value *, DType) const override {
    return nullptr;
  }
  // LDS is allocated statically, up to the workgroup's 64 KiB.
  int64_t maxStaticSharedBytes() const override { return kAMDGPULDSBytes; }
  int64_t maxSharedBytes() const override { return kAMDGPULDSBytes; }

  int64_t warpSize() const override { return warpSizeFor(options_.arch); }

  llvm::Value *threadId(llvm::IRBuilderBase &b) const override {
    return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
  }

  llvm::Value *programId(llvm::IRBuilderBase &b, int axis) const override {
    static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workgroup_id_x,
                                              llvm::Intrinsic::amdgcn_workgroup_id_y,
                                              llvm::Intrinsic::amdgcn_workgroup_id_z};
    return b.CreateIntrinsic(ids[axis], {}, {});
  }

  // The workgroup counts are the first three i32 of the implicit kernel
  // arguments (hidden_block_count_x/y/z, code object version 5).
  llvm::Value *numPrograms(llvm::IRBuilderBase &b, int axis) const override {
    llvm::Value *base = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_implicitarg_ptr, {}, {});
    llvm::Value *at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, uint64_t(4 * axis));
    llvm::LoadInst *n = b.CreateAlignedLoad(b.getInt32Ty(), at, llvm::Align(4));
    n->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
    return n;
  }

  llvm::Value *specialRegister(llvm::IRBuilderBase &, const std::string &) const override {
    return nullptr; // unsupportedOp reports the op first
  }

  // Lane `lane ^ laneMask`'s value through the instructions
  // xorShufflePlan picks for the arch (AMDGPUShuffle.h: DPP moves within
  // rows, ds_swizzle or v_permlanex16 within 32 lanes, ds_bpermute across
  // the halves of a wave64 wavefront), on 32-bit pieces: narrower values
  // widen, 64-bit ones move as two halves.
  llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v,
                          unsigned laneMask) const override {
    std::vector<LaneOp> plan = xorShufflePlan(options_.arch, laneMask);
    if (plan.empty())
      llvm::report_fatal_error(llvm::Twine("internal error: shuffle lane mask ") +
                               llvm::Twine(laneMask) + " outside the " +
                               llvm::Twine(amdgpuWavefrontSize(options_.arch)) +
                               "-lane wavefront of " + options_.arch);
    llvm::Type *i32 = b.getInt32Ty();
    llvm::Value *lane = nullptr; // for ds_bpermute: the lane within the wavefront
    auto move = [&](llvm::Value *x) {
      for (const LaneOp &op : plan) {
        switch (op.kind) {
        case LaneOpKind::Swizzle:
          x = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_swizzle, {},
                                {x, b.getInt32(swizzleOffset(op))});
          break;
        case LaneOpKind::PermlaneX16: {
          auto [lo, hi] = permlaneSelects(op);
          x = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_permlanex16, {i32},
                                {llvm::PoisonValue::get(i32), x, b.getInt32(lo), b.getInt32(hi),
                                 b.getFalse(), b.getFalse()});
          break;
        }
        case LaneOpKind::Bpermute: {
          if (!lane) {
            llvm::Value *lo = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {},
                                                {b.getInt32(~0u), b.getInt32(0)});
            lane = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {b.getInt32(~0u), lo});
          }
          llvm::Value *index = b.CreateShl(b.CreateXor(lane, b.getInt32(op.arg)), 2);
          x = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {index, x});
          break;
        }
        default:
          // Every lane reads a lane of its own row, and all of them take
          // part: no lane reads out of bounds, so neither the old value nor
          // bound_ctrl (zero for such lanes) shows. With both masks full and
          // bound_ctrl set, LLVM folds the move into the VALU op that uses
          // it (v_add_f32_dpp ... row_ror:8).
          x = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_update_dpp, {i32},
                                {llvm::PoisonValue::get(i32), x, b.getInt32(dppControl(op)),
                                 b.getInt32(0xf), b.getInt32(0xf), b.getTrue()});
          break;
        }
      }
      return x;
    };
    llvm::Type *t = v->getType();
    const llvm::DataLayout &dl = b.GetInsertBlock()->getModule()->getDataLayout();
    unsigned bits = static_cast<unsigned>(dl.getTypeSizeInBits(t));
    llvm::Type *intTy = b.getIntNTy(bits);
    llvm::Value *asInt = t->isPointerTy() ? b.CreatePtrToInt(v, intTy) : b.CreateBitCast(v, intTy);
    llvm::Value *result;
    if (bits == 64) {
      llvm::Value *lo32 = move(b.CreateTrunc(asInt, i32));
      llvm::Value *hi32 = move(b.CreateTrunc(b.CreateLShr(asInt, 32), i32));
      result = b.CreateOr(b.CreateZExt(lo32, intTy), b.CreateShl(b.CreateZExt(hi32, intTy), 32));
    } else {
      result = move(bits == 32 ? asInt : b.CreateZExt(asInt, i32));
      if (bits != 32)
        result = b.CreateTrunc(result, intTy);
    }
    return t->isPointerTy() ? b.CreateIntToPtr(result, t) : b.CreateBitCast(result, t);
  }

  void barrier(llvm::IRBuilderBase &b) const override {
    llvm::SyncScope::ID wg = b.getContext().getOrInsertSyncScopeID("workgroup");
    b.CreateFence(llvm::AtomicOrdering::Release, wg);
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, wg);
  }

  // Cache modifiers and eviction policies are not lowered for AMD GPUs yet
  // (docs/codegen/loads-stores.md): the accesses are the plain ones.
  llvm::Value *l2EvictionPolicy(llvm::IRBuilderBase &, const std::string &) const override {
    return nullptr;
  }

  // One vector load (global_load_dwordx4 for four 32-bit words) in a branch
  // on the predicate, the `others` where it is false; no branch where the
  // predicate is the constant true. (LLVM's masked load would be one branch
  // per element: the AMDGPU back end scalarises it.)
  std::vector<llvm::Value *> predicatedLoad(llvm::IRBuilderBase &b, llvm::Value *addr,
                                            llvm::Value *pred, llvm::Type *wordType,
                                            const std::vector<llvm::Value *> &others,
                                            const MemoryHints &hints) const override {
    bool isVolatile = hints.isVolatile;
    unsigned n = static_cast<unsigned>(others.size());
    auto *vecTy = llvm::FixedVectorType::get(wordType, n);
    const llvm::DataLayout &dl = b.GetInsertBlock()->getModule()->getDataLayout();
    llvm::Align align(dl.getTypeStoreSize(vecTy).getFixedValue());
    llvm::Value *passThru = llvm::PoisonValue::get(vecTy);
    for (unsigned i = 0; i < n; ++i)
      passThru = b.CreateInsertElement(passThru, others[i], uint64_t(i));
    llvm::Value *loaded;
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(pred); c && c->isOne()) {
      loaded = b.CreateAlignedLoad(vecTy, addr, align, isVolatile);
    } else {
      llvm::Function *fn = b.GetInsertBlock()->getParent();
      llvm::BasicBlock *from = b.GetInsertBlock();
      llvm::BasicBlock *then = llvm::BasicBlock::Create(b.getContext(), "load", fn);
      llvm::BasicBlock *done = llvm::BasicBlock::Create(b.getContext(), "load.done", fn);
      b.CreateCondBr(pred, then, done);
      b.SetInsertPoint(then);
      llvm::Value *v = b.CreateAlignedLoad(vecTy, addr, align, isVolatile);
      b.CreateBr(done);
      b.SetInsertPoint(done);
      llvm::PHINode *phi = b.CreatePHI(vecTy, 2);
      phi->addIncoming(v, then);
      phi->addIncoming(passThru, from);
      loaded = phi;
    }
    std::vector<llvm::Value *> out;
    for (unsigned i = 0; i < n; ++i)
      out.push_back(b.CreateExtractElement(loaded, uint64_t(i)));
    return out;
  }

  void predicatedStore(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *pred,
                       const std::vector<llvm::Value *> &words,
                       const MemoryHints &) const override {
    unsigned n = static_cast<unsigned>(words.size());
    llvm::Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(words[0]->getType(), n));
    for (unsigned i = 0; i < n; ++i)
      vec = b.CreateInsertElement(vec, words[i], uint64_t(i));
    const llvm::DataLayout &dl = b.GetInsertBlock()->getModule()->getDataLayout();
    llvm::Align align(dl.getTypeStoreSize(vec->getType()).getFixedValue());
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(pred); c && c->isOne()) {
      b.CreateAlignedStore(vec, addr, align);
      return;
    }
    llvm::Function *fn = b.GetInsertBlock()->getParent();
    llvm::BasicBlock *then = llvm::BasicBlock::Create(b.getContext(), "store", fn);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(b.getContext(), "store.done", fn);
    b.CreateCondBr(pred, then, done);
    b.SetInsertPoint(then);
    b.CreateAlignedStore(vec, addr, align);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  }

  // The workgroup size is exact (tk launches numThreads per program): the
  // code object's metadata records it (.max_flat_workgroup_size,
  // .reqd_workgroup_size).
  void markKernel(llvm::Function *fn, int64_t numThreads,
                  const std::vector<unsigned> &) const override {
    llvm::LLVMContext &c = fn->getContext();
    fn->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    fn->addFnAttr("amdgpu-flat-work-group-size",
                  std::to_string(numThreads) + "," + std::to_string(numThreads));
    fn->addFnAttr("uniform-work-group-size", "true");
    auto i32 = [&](int64_t v) {
      return llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(c), v));
    };
    fn->setMetadata("reqd_work_group_size",
                    llvm::MDNode::get(c, {i32(numThreads), i32(1), i32(1)}));
  }

  llvm::Value *approxF32(llvm::IRBuilderBase &b, ApproxF32 fn, llvm::Value *x) const override {
    switch (fn) {
    case ApproxF32::Exp2:
    case ApproxF32::Exp2Reflect:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp2, x);
    case ApproxF32::Log2:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::log2, x);
    case ApproxF32::Sin:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x);
    case ApproxF32::Cos:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x);
    case ApproxF32::Rsqrt:
      return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_rsq, {x->getType()}, {x});
    case ApproxF32::Rcp:
      return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_rcp, {x->getType()}, {x});
    }
    return nullptr;
  }

  // IEEE division: LLVM's AMDGPU expansion (v_div_scale / v_div_fmas /
  // v_div_fixup) is correctly rounded.
  llvm::Value *divideF32(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y) const override {
    return b.CreateFDiv(x, y);
  }

  // Round to nearest, ties away from zero, at 10 mantissa bits; infinities
  // and NaNs unchanged.
  llvm::Value *roundToTF32(llvm::IRBuilderBase &b, llvm::Value *v) const override {
    llvm::Value *bits = b.CreateBitCast(v, b.getInt32Ty());
    llvm::Value *rounded = b.CreateAnd(b.CreateAdd(bits, b.getInt32(0x1000)), b.getInt32(~0x1fffu));
    llvm::Value *special =
        b.CreateICmpEQ(b.CreateAnd(bits, b.getInt32(0x7f800000)), b.getInt32(0x7f800000));
    return b.CreateBitCast(b.CreateSelect(special, bits, rounded), b.getFloatTy());
  }

  std::vector<llvm::Value *> loadMatrices(llvm::IRBuilderBase &, llvm::Value *, bool,
                                          bool) const override {
    notLowered("ldmatrix");
  }
  std::vector<llvm::Value *> warpMma(llvm::IRBuilderBase &, DType,
                                     const std::vector<llvm::Value *> &,
                                     const std::vector<llvm::Value *> &,
                                     const std::vector<llvm::Value *> &) const override {
    notLowered("mma.sync");
  }
  std::vector<llvm::Value *> warpGroupMma(llvm::IRBuilderBase &,
                                          const WarpGroupMma &) const override {
    notLowered("wgmma");
  }

  // MFMA (gfx90a, gfx942) and WMMA (gfx1100): the operands packed as the
  // intrinsics take them (fp16 <k x half>, bf16 <k x i16>, int8 packed into
  // i32 / i64 / <4 x i32>, fp32 one float), MFMA's cbsz/abid/blgp 0, WMMA's
  // int8 signed and without clamping (int32 sums wrap, as the interpreter's).
  std::vector<llvm::Value *> matrixCoreMma(llvm::IRBuilderBase &b, const AMDMatrixInstr &instr,
                                           const std::vector<llvm::Value *> &a,
                                           const std::vector<llvm::Value *> &bv,
                                           const std::vector<llvm::Value *> &c) const override {
    static const std::map<std::string_view, llvm::Intrinsic::ID> ids = {
        {"v_mfma_f32_32x32x8f16", llvm::Intrinsic::amdgcn_mfma_f32_32x32x8f16},
        {"v_mfma_f32_32x32x8_f16", llvm::Intrinsic::amdgcn_mfma_f32_32x32x8f16},
        {"v_mfma_f32_16x16x16f16", llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16},
        {"v_mfma_f32_16x16x16_f16", llvm::Intrinsic::amdgcn_mfma_f32_16x16x16f16},
        {"v_mfma_f32_32x32x8bf16_1k", llvm::Intrinsic::amdgcn_mfma_f32_32x32x8bf16_1k},
        {"v_mfma_f32_32x32x8_bf16", llvm::Intrinsic::amdgcn_mfma_f32_32x32x8bf16_1k},
        {"v_mfma_f32_16x16x16bf16_1k", llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k},
        {"v_mfma_f32_16x16x16_bf16", llvm::Intrinsic::amdgcn_mfma_f32_16x16x16bf16_1k},
        {"v_mfma_i32_32x32x8i8", llvm::Intrinsic::amdgcn_mfma_i32_32x32x8i8},
        {"v_mfma_i32_16x16x16i8", llvm::Intrinsic::amdgcn_mfma_i32_16x16x16i8},
        {"v_mfma_i32_32x32x16_i8", llvm::Intrinsic::amdgcn_mfma_i32_32x32x16_i8},
        {"v_mfma_i32_16x16x32_i8", llvm::Intrinsic::amdgcn_mfma_i32_16x16x32_i8},
        {"v_mfma_f32_32x32x2f32", llvm::Intrinsic::amdgcn_mfma_f32_32x32x2f32},
        {"v_mfma_f32_32x32x2_f32", llvm::Intrinsic::amdgcn_mfma_f32_32x32x2f32},
        {"v_mfma_f32_16x16x4f32", llvm::Intrinsic::amdgcn_mfma_f32_16x16x4f32},
        {"v_mfma_f32_16x16x4_f32", llvm::Intrinsic::amdgcn_mfma_f32_16x16x4f32},
        {"v_wmma_f32_16x16x16_f16", llvm::Intrinsic::amdgcn_wmma_f32_16x16x16_f16},
        {"v_wmma_f32_16x16x16_bf16", llvm::Intrinsic::amdgcn_wmma_f32_16x16x16_bf16},
        {"v_wmma_i32_16x16x16_iu8", llvm::Intrinsic::amdgcn_wmma_i32_16x16x16_iu8},
    };
    auto it = ids.find(instr.name);
    if (it == ids.end())
      return {};
    auto pack = [&](const std::vector<llvm::Value *> &elems) -> llvm::Value * {
      llvm::Type *t = elems[0]->getType();
      if (elems.size() == 1)
        return elems[0];
      unsigned k = static_cast<unsigned>(elems.size());
      llvm::Value *v = llvm::PoisonValue::get(llvm::FixedVectorType::get(t, k));
      for (unsigned i = 0; i < k; ++i)
        v = b.CreateInsertElement(v, elems[i], uint64_t(i));
      if (t->isBFloatTy())
        return b.CreateBitCast(v, llvm::FixedVectorType::get(b.getInt16Ty(), k));
      if (t->isIntegerTy(8))
        return b.CreateBitCast(
            v, k == 16 ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(b.getInt32Ty(), 4))
                       : b.getIntNTy(8 * k));
      return v;
    };
    llvm::Value *pa = pack(a), *pb = pack(bv), *pc = pack(c);
    llvm::Value *d;
    if (it->second == llvm::Intrinsic::amdgcn_wmma_i32_16x16x16_iu8)
      d = b.CreateIntrinsic(it->second, {pc->getType(), pa->getType()},
                            {b.getTrue(), pa, b.getTrue(), pb, pc, b.getFalse()});
    else if (instr.wmma)
      d = b.CreateIntrinsic(it->second, {pc->getType(), pa->getType()}, {pa, pb, pc});
    else
      d = b.CreateIntrinsic(it->second, {},
                            {pa, pb, pc, b.getInt32(0), b.getInt32(0), b.getInt32(0)});
    std::vector<llvm::Value *> out;
    for (size_t i = 0; i < c.size(); ++i)
      out.push_back(b.CreateExtractElement(d, uint64_t(i)));
    return out;
  }
  void warpGroupFence(llvm::IRBuilderBase &) const override { notLowered("wgmma.fence"); }
  void warpGroupCommit(llvm::IRBuilderBase &) const override { notLowered("wgmma.commit_group"); }
  void warpGroupWait(llvm::IRBuilderBase &, std::vector<llvm::Value *> &, int64_t) const override {
    notLowered("wgmma.wait_group");
  }
  void fenceAsyncProxy(llvm::IRBuilderBase &) const override { notLowered("fence.proxy.async"); }

  llvm::Value *opaqueTrue(llvm::IRBuilderBase &b) const override {
    auto *fnTy = llvm::FunctionType::get(b.getInt32Ty(), {}, false);
    llvm::Value *one = b.CreateCall(llvm::InlineAsm::get(fnTy, "v_mov_b32 $0, 1", "=v", false), {});
    return b.CreateICmpNE(one, b.getInt32(0));
  }

  // No asynchronous copy: the copy is a predicated load and an LDS store,
  // complete when it is issued, so commit and wait have nothing to do (the
  // barrier that follows a wait still orders the LDS for everyone).
  void asyncCopy(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int64_t bytes,
                 llvm::Value *on) const override {
    std::vector<llvm::Value *> zeros(static_cast<size_t>(bytes / 4), b.getInt32(0));
    std::vector<llvm::Value *> words = predicatedLoad(b, src, on, b.getInt32Ty(), zeros, {});
    llvm::Value *vec = llvm::PoisonValue::get(
        llvm::FixedVectorType::get(b.getInt32Ty(), static_cast<unsigned>(words.size())));
    for (size_t i = 0; i < words.size(); ++i)
      vec = b.CreateInsertElement(vec, words[i], uint64_t(i));
    b.CreateAlignedStore(vec, dst, llvm::Align(static_cast<uint64_t>(bytes)));
  }
  void asyncCopyCommit(llvm::IRBuilderBase &) const override {}
  void asyncCopyWait(llvm::IRBuilderBase &, int64_t) const override {}

  llvm::Value *loadB16OrZero(llvm::IRBuilderBase &b, llvm::Value *src,
                             llvm::Value *on) const override {
    return predicatedLoad(b, src, on, b.getInt16Ty(), {b.getInt16(0)}, {})[0];
  }

private:
  TargetOptions options_;
  // missingLibrary's lookups, per library file: its path, "" when absent.
  mutable std::map<std::string, std::string> foundLibraries_;
};

} // namespace

std::unique_ptr<TargetInfo> createAMDGPUTarget(const TargetOptions &options) {
  return std::make_unique<AMDGPUTarget>(options);
}

} // namespace tk
