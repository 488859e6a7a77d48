// The driver of the block IR -> LLVM IR lowering: one kernel per function,
// its `.param` arguments, the thread ids every layout formula starts from,
// the shared-memory scratch buffer, and the dispatch of each op to its
// family's file.
#include "analysis/AxisInfo.h"
#include "lowering/AllocateShared.h"
#include "lowering/InsertBarriers.h"
#include "lowering/codegen/FunctionLowering.h"
#include "lowering/codegen/LowerToLLVM.h"

#include <fmt/format.h>
#include <llvm/IR/Module.h>

#include <algorithm>

namespace tk {

FunctionLowering::FunctionLowering(Function &fn, llvm::Function *llfn, const TargetInfo &target,
                                   const AxisInfoAnalysis &axis, llvm::Constant *smem,
                                   int64_t numWarps, DiagnosticEngine &diag)
    : fn_(fn), llfn_(llfn), target_(target), axis_(axis), smemArray_(smem), smem_(smem),
      numWarps_(numWarps), warpSize_(functionWarpSize(fn)), diag_(diag), b_(llfn->getContext()) {}

llvm::Constant *FunctionLowering::sharedAt(int64_t offset) const {
  assert(smemArray_ && "shared memory used but none allocated");
  if (offset == 0)
    return smemArray_;
  return llvm::ConstantExpr::getInBoundsGetElementPtr(
      llvm::Type::getInt8Ty(smemArray_->getContext()), smemArray_,
      llvm::ConstantInt::get(llvm::Type::getInt32Ty(smemArray_->getContext()), offset));
}

namespace {

// Points the lowering's scratch at the op's scratch_offset while it lowers
// (ops in its regions have their own), and back afterwards.
class ScratchScope {
public:
  ScratchScope(llvm::Value *&slot, llvm::Value *at) : slot_(slot), saved_(slot) {
    if (at)
      slot_ = at;
  }
  ~ScratchScope() { slot_ = saved_; }
  ScratchScope(const ScratchScope &) = delete;
  ScratchScope &operator=(const ScratchScope &) = delete;

private:
  llvm::Value *&slot_;
  llvm::Value *saved_;
};

} // namespace

llvm::Value *vectorOf(llvm::IRBuilderBase &b, const Regs &elems) {
  llvm::Value *v = llvm::PoisonValue::get(
      llvm::FixedVectorType::get(elems.front()->getType(), static_cast<unsigned>(elems.size())));
  for (size_t i = 0; i < elems.size(); ++i)
    v = b.CreateInsertElement(v, elems[i], static_cast<uint64_t>(i));
  return v;
}

llvm::Type *llvmElementType(llvm::LLVMContext &c, Type *t) {
  Type *e = t->elementType();
  if (auto *p = dyn_cast<PointerType>(e))
    return llvm::PointerType::get(c, p->addressSpace());
  switch (e->dtype()) {
  case DType::F16:
    return llvm::Type::getHalfTy(c);
  case DType::BF16:
    return llvm::Type::getBFloatTy(c);
  case DType::F32:
    return llvm::Type::getFloatTy(c);
  case DType::F64:
    return llvm::Type::getDoubleTy(c);
  default:
    return llvm::Type::getIntNTy(c, dtypeBits(e->dtype()));
  }
}

llvm::Type *FunctionLowering::elementType(Type *t) { return llvmElementType(b_.getContext(), t); }

const Regs &FunctionLowering::get(Value *v) const {
  auto it = values_.find(v);
  assert(it != values_.end() && "value used before it was lowered");
  return it->second;
}

void FunctionLowering::set(Value *v, Regs regs) { values_[v] = std::move(regs); }

const LayoutAttr *FunctionLowering::layoutOf(Value *v) const {
  auto *t = dyn_cast<TensorType>(v->type());
  assert(t && t->layout() && "a tensor without a layout reached the GPU lowering");
  return t->layout();
}

ThreadMap FunctionLowering::threadMap(Value *v) const {
  return ThreadMap(layoutOf(v), v->type()->shape());
}

llvm::Value *FunctionLowering::threadOffset(const LayoutAttr *layout, const ThreadMap &map,
                                            unsigned dim) {
  llvm::Value *&slot = offsets_[{layout, dim}];
  if (slot)
    return slot;
  // In the entry block, so the value dominates every use in any region.
  llvm::IRBuilder<> eb(entry_->getTerminator());
  const ThreadMap::Dim &d = map.dim(dim);
  // (id / stride) % count, without the steps that change nothing (a
  // division by 1; a count of 1 makes the part 0), and so on below: LLVM
  // would fold them, but only after its first passes have walked them.
  // `ids` is the number of ids (warpSize lanes, numWarps warps): when stride *
  // count covers them the remainder is the quotient.
  auto part = [&](llvm::Value *id, int64_t ids, int64_t stride, int64_t count) -> llvm::Value * {
    if (count == 1)
      return nullptr;
    llvm::Value *q = stride == 1 ? id : eb.CreateUDiv(id, eb.getInt32(stride));
    return stride * count >= ids ? q : eb.CreateURem(q, eb.getInt32(count));
  };
  llvm::Value *l = part(lane_, warpSize_, d.laneStride, d.threads);
  llvm::Value *w = part(warp_, numWarps_, d.warpStride, d.warps);
  if (w && d.threads != 1)
    w = eb.CreateMul(w, eb.getInt32(d.threads));
  llvm::Value *t = l && w ? eb.CreateAdd(w, l) : l ? l : w ? w : eb.getInt32(0);
  slot = d.size == 1 ? t : eb.CreateMul(t, eb.getInt32(d.size));
  return slot;
}

std::vector<std::vector<llvm::Value *>> FunctionLowering::coordinates(Value *v) {
  ThreadMap map = threadMap(v);
  const LayoutAttr *layout = layoutOf(v);
  std::vector<std::vector<llvm::Value *>> out(static_cast<size_t>(map.numRegisters()));
  // One value per dimension and register offset: registers that differ only
  // in other dimensions share it (a 2-d tile's rows and columns).
  std::map<std::pair<unsigned, int64_t>, llvm::Value *> made;
  for (int64_t r = 0; r < map.numRegisters(); ++r)
    for (unsigned d = 0; d < map.rank(); ++d) {
      int64_t offset = map.registerOffset(r, d);
      llvm::Value *&c = made[{d, offset}];
      if (!c) {
        c = threadOffset(layout, map, d);
        if (offset != 0)
          c = b_.CreateAdd(c, b_.getInt32(static_cast<uint32_t>(offset)));
        // Extents are powers of two: the wrap-around of a small dimension
        // is a mask, which folds away when the tile fits.
        if (map.dim(d).tile() > map.dim(d).extent)
          c = b_.CreateAnd(c, b_.getInt32(map.dim(d).extent - 1));
      }
      out[static_cast<size_t>(r)].push_back(c);
    }
  return out;
}

bool FunctionLowering::unsupported(Operation &op, std::string_view what) {
  diag_.error(op.loc(), fmt::format("'{}'{}{} is not supported by the GPU back end yet", op.name(),
                                    what.empty() ? "" : " ", what));
  return false;
}

bool FunctionLowering::run() {
  llvm::LLVMContext &c = b_.getContext();
  entry_ = llvm::BasicBlock::Create(c, "entry", llfn_);
  llvm::BasicBlock *body = llvm::BasicBlock::Create(c, "body", llfn_);
  b_.SetInsertPoint(entry_);
  llvm::Value *tid = target_.threadId(b_);
  lane_ = b_.CreateURem(tid, b_.getInt32(warpSize_), "lane");
  warp_ = b_.CreateUDiv(tid, b_.getInt32(warpSize_), "warp");
  b_.CreateBr(body);
  for (unsigned i = 0; i < fn_.numArguments(); ++i)
    set(fn_.argument(i), {llfn_->getArg(i)});
  b_.SetInsertPoint(body);
  return lowerBlock(fn_.body());
}

bool FunctionLowering::lowerBlock(Block &block) {
  for (Operation &op : block) {
    if (op.is(Opcode::Yield) || op.is(Opcode::Condition))
      continue;
    if (limits_ && limits_->interruptRequested()) {
      diag_.error(op.loc(), fmt::format("the compile of '{}' was interrupted", fn_.name()));
      return false;
    }
    // Counted over the blocks made so far (a few per loop and branch).
    if (maxInstructions_ > 0 && int64_t(llfn_->getInstructionCount()) > maxInstructions_) {
      diag_.error(op.loc(), overInstructionBudget(fn_.name(), llfn_->getInstructionCount(),
                                                  maxInstructions_, "by here"));
      return false;
    }
    if (!lowerOp(op))
      return false;
  }
  return true;
}

bool FunctionLowering::lowerOp(Operation &op) {
  if (std::string why = target_.unsupportedOp(op); !why.empty()) {
    diag_.error(op.loc(),
                fmt::format("'{}' {} is not supported on {} yet", op.name(), why, target_.name()));
    return false;
  }
  if (std::string missing = target_.missingLibrary(op); !missing.empty()) {
    diag_.error(op.loc(), missing);
    return false;
  }
  std::optional<int64_t> scratchOffset = op.attrs().getInt("scratch_offset");
  ScratchScope scope(smem_, scratchOffset && smemArray_ ? sharedAt(*scratchOffset) : nullptr);
  switch (op.opcode()) {
  case Opcode::MakeRange:
  case Opcode::Splat:
  case Opcode::Broadcast:
  case Opcode::ExpandDims:
    return lowerShape(op);
  case Opcode::Reshape:
  case Opcode::Trans:
    return lowerReshapeTrans(op);
  case Opcode::Gather:
    return lowerGather(op);
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
    return lowerAtomic(op);
  case Opcode::Load:
  case Opcode::Store:
    return lowerLoadStore(op);
  case Opcode::Reduce:
    return lowerReduce(op);
  case Opcode::ConvertLayout:
    return lowerConvertLayout(op);
  case Opcode::LocalAlloc:
  case Opcode::LocalLoad:
  case Opcode::LocalStore:
  case Opcode::Barrier:
    return lowerSharedBuffer(op);
  case Opcode::TmaLoad:
    return lowerTmaLoad(op);
  case Opcode::TmaStore:
    return lowerTmaStore(op);
  case Opcode::For:
    return lowerFor(op);
  case Opcode::If:
    return lowerIf(op);
  case Opcode::While:
    return lowerWhile(op);
  case Opcode::Return:
    if (op.numOperands())
      return unsupported(op, "with values (a called helper that was not inlined)");
    b_.CreateRetVoid();
    return true;
  case Opcode::Scan:
    return lowerScan(op);
  case Opcode::Assert:
  case Opcode::Print:
    return lowerDebug(op);
  case Opcode::Dot:
  case Opcode::AsyncCopy:
  case Opcode::AsyncWait:
  case Opcode::RingView:
    return lowerDot(op);
  case Opcode::InlineAsm:
    return lowerInlineAsm(op);
  case Opcode::MapElementwise:
    return lowerMapElementwise(op);
  case Opcode::Call:
    return unsupported(op, "");
  default:
    return lowerElementwise(op);
  }
}

std::string overInstructionBudget(std::string_view kernel, int64_t count, int64_t budget,
                                  std::string_view when) {
  return fmt::format("kernel '{}' is {} LLVM instructions {}, over the compile's budget of {} "
                     "(TK_MAX_LLVM_INSTRUCTIONS), past which NVPTX code generation takes "
                     "minutes; use smaller blocks, more warps, fewer unrolled iterations, or a "
                     "loop (tk.range) over the work",
                     kernel, count, when, budget);
}

namespace {

// Every element a thread holds is a register of its own in the LLVM IR, and
// every op on a tensor is one instruction per register: past the budget
// (TK_MAX_ELEMENTS_PER_THREAD) NVPTX's code generation runs for minutes
// (docs/codegen/llvm-pipeline.md, "Large tiles"), and the registers would
// spill anyway. The first op whose result is over it is the error.
bool withinElementBudget(Function &fn, int64_t budget, DiagnosticEngine &diag) {
  if (budget <= 0)
    return true;
  Operation *over = nullptr;
  int64_t count = 0;
  Type *type = nullptr;
  fn.walk([&](Operation *op) {
    for (Value *r : op->results()) {
      auto *t = dyn_cast<TensorType>(r->type());
      if (over || !t || !t->layout() || isa<SharedLayout>(t->layout()))
        continue;
      ThreadMap map(t->layout(), t->shape());
      if (map.numRegisters() > budget) {
        over = op;
        count = map.numRegisters();
        type = t;
      }
    }
  });
  if (!over)
    return true;
  ThreadMap map(cast<TensorType>(type)->layout(), type->shape());
  std::string shape; // the type without its layout, which says nothing here
  for (int64_t d : type->shape())
    shape += fmt::format("{}x", d);
  diag.error(over->loc(),
             fmt::format("'{}' makes a {}, {} elements per thread on {} warps: over the compile's "
                         "budget of {} elements per thread (TK_MAX_ELEMENTS_PER_THREAD); use a "
                         "smaller block, more warps (num_warps), or a loop (tk.range) over parts "
                         "of the tile",
                         over->name(), "tensor<" + shape + type->elementType()->str() + ">", count,
                         map.numWarps(), budget));
  return false;
}

} // namespace

std::unique_ptr<llvm::Module> lowerToLLVM(Module &module, const TargetOptions &options,
                                          llvm::LLVMContext &llctx, DiagnosticEngine &diag) {
  std::unique_ptr<TargetInfo> target = createTarget(options);
  auto llmod = std::make_unique<llvm::Module>("tk", llctx);
  llmod->setTargetTriple(target->triple());
  llmod->setDataLayout(target->dataLayout());
  bool ok = true;
  for (auto &fnPtr : module.functions()) {
    Function &fn = *fnPtr;
    if (!fn.resultTypes().empty()) {
      diag.error(fn.loc(), fmt::format("'@{}' returns values: only kernels (functions without "
                                       "results) lower to the GPU; helpers must be inlined",
                                       fn.name()));
      ok = false;
      continue;
    }
    // Layouts come from --coalesce (buildGPUPipeline); IR without them is a
    // pipeline mistake, reported rather than lowered.
    Operation *unlaid = nullptr;
    fn.walk([&](Operation *op) {
      for (Value *r : op->results())
        if (auto *t = dyn_cast<TensorType>(r->type()); t && !t->layout() && !unlaid)
          unlaid = op;
    });
    if (unlaid) {
      diag.error(unlaid->loc(), fmt::format("'{}' result {} has no layout; run the GPU passes "
                                            "(--coalesce) before code generation",
                                            unlaid->name(), unlaid->result()->type()->str()));
      ok = false;
      continue;
    }
    if (!withinElementBudget(fn, options.maxElementsPerThread, diag)) {
      ok = false;
      continue;
    }
    // The layouts' warps are the target's (threads_per_warp, set with the
    // arch by the GPU passes' driver): IR laid out for another warp size
    // cannot run here.
    if (functionWarpSize(fn) != target->warpSize()) {
      diag.error(fn.loc(),
                 fmt::format("'@{}' has {}-thread warps (threads_per_warp) but a warp on "
                             "{} is {} threads; run the GPU passes for this arch",
                             fn.name(), functionWarpSize(fn), options.arch, target->warpSize()));
      ok = false;
      continue;
    }
    if (!fn.attrs().getInt("num_warps"))
      fn.attrs().set("num_warps", int64_t(options.numWarps));
    int64_t numWarps = *fn.attrs().getInt("num_warps");
    // Offsets and barriers come from --allocate-shared and --insert-barriers
    // (the gpu stage, compiler/Pipeline.cpp); IR without them is a pipeline
    // mistake, reported rather than lowered.
    if (!fn.attrs().getInt("shared_bytes")) {
      diag.error(fn.loc(), fmt::format("'@{}' has no shared_bytes; run the GPU passes "
                                       "(--allocate-shared, --insert-barriers) before code "
                                       "generation",
                                       fn.name()));
      ok = false;
      continue;
    }
    int64_t smemBytes = *fn.attrs().getInt("shared_bytes");
    if (smemBytes > target->maxSharedBytes()) {
      diag.error(fn.loc(),
                 fmt::format("'@{}' needs {} bytes of shared memory, more than the {} "
                             "available per program on {}; use smaller blocks",
                             fn.name(), smemBytes, target->maxSharedBytes(), options.arch));
      ok = false;
      continue;
    }
    llvm::GlobalVariable *smem = nullptr;
    if (smemBytes > 0) {
      // Up to the static limit the array is static (`.shared .b8 k_smem[N]`);
      // above it dynamic (`.extern .shared .b8 k_smem[]`), and the launch
      // passes shared_bytes and raises the kernel's dynamic-shared limit.
      bool dynamic = smemBytes > target->maxStaticSharedBytes();
      auto *arrTy = llvm::ArrayType::get(llvm::Type::getInt8Ty(llctx), dynamic ? 0 : smemBytes);
      smem = new llvm::GlobalVariable(
          *llmod, arrTy, false,
          dynamic ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
          dynamic ? nullptr : llvm::UndefValue::get(arrTy), fn.name() + "_smem", nullptr,
          llvm::GlobalValue::NotThreadLocal, target->sharedAddressSpace());
      // 16 bytes, or what a buffer needs (--allocate-shared's shared_align:
      // 1024 for wgmma's swizzled rings).
      smem->setAlignment(llvm::Align(static_cast<uint64_t>(
          std::max<int64_t>(16, fn.attrs().getInt("shared_align").value_or(16)))));
    }

    std::vector<llvm::Type *> params;
    for (unsigned i = 0; i < fn.numArguments() && ok; ++i) {
      Type *t = fn.argument(i)->type();
      if (t->isTensor()) {
        diag.error(fn.loc(),
                   fmt::format("kernel '@{}' takes a tensor argument ({})", fn.name(), t->str()));
        ok = false;
      }
      // A CUtensorMap passed by value (`tensormap`): a byval [128 x i8]
      // aligned to 64, read in place (grid_constant, below).
      params.push_back(fn.argAttrs(i).getBool("tensormap").value_or(false)
                           ? llvm::PointerType::get(llctx, 0)
                           : llvmElementType(llctx, t));
    }
    if (!ok)
      continue;
    llvm::Type *voidTy = llvm::Type::getVoidTy(llctx);
    auto *llfn = llvm::Function::Create(llvm::FunctionType::get(voidTy, params, false),
                                        llvm::GlobalValue::ExternalLinkage, fn.name(), *llmod);
    for (unsigned i = 0; i < fn.numArguments(); ++i) {
      llfn->getArg(i)->setName(fmt::format("arg{}", i));
      std::optional<int64_t> div = fn.argAttrs(i).getInt("divisibility");
      if (div && fn.argument(i)->type()->isPointer() && *div >= 16)
        llfn->addParamAttr(i, llvm::Attribute::getWithAlignment(llctx, llvm::Align(16)));
    }
    std::vector<unsigned> tensorMaps;
    for (unsigned i = 0; i < fn.numArguments(); ++i)
      if (fn.argAttrs(i).getBool("tensormap").value_or(false)) {
        llfn->addParamAttr(i, llvm::Attribute::getWithByValType(
                                  llctx, llvm::ArrayType::get(llvm::Type::getInt8Ty(llctx), 128)));
        llfn->addParamAttr(i, llvm::Attribute::getWithAlignment(llctx, llvm::Align(64)));
        tensorMaps.push_back(i);
      }
    target->markKernel(llfn, numWarps * functionWarpSize(fn), tensorMaps);
    AxisInfoAnalysis axis(fn);
    FunctionLowering lowering(fn, llfn, *target, axis, smem, numWarps, diag);
    lowering.setBudget(&module.context().limits(), options.maxLLVMInstructions);
    lowering.setRemarks(module.remarks());
    if (!lowering.run()) {
      ok = false;
      llfn->eraseFromParent();
    }
  }
  if (!ok)
    return nullptr;
  return llmod;
}

} // namespace tk
