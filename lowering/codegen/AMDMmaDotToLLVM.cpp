// dot -> LLVM IR on AMD's matrix cores (the result has an mfma or wmma
// layout, chosen by --accelerate-dot): C[M, N] = A[M, K] x B[K, N] + acc,
// one warp's n x n piece per instruction (lowering/codegen/AMDMatrixCore.h
// names them: v_mfma_f32_32x32x8_f16 and friends on gfx90a/gfx942,
// v_wmma_f32_16x16x16_f16 on gfx1100).
//
// Both operands are staged through LDS with K contiguous (DotLowering.h's
// SmemTile, 16-byte chunks swizzled): A as [M][K], B as [N][K], so each
// lane reads its kWidth consecutive K elements of one A row or B column as
// one vector (ds_read_b64 for fp16 on MFMA). Which row and K a lane reads
// is amdMmaOperandCoord (ir/Layout.h), the formula the unit tests check
// against the instructions' documented layouts: for piece mi the A rows
// are those the accumulator's ThreadMap gives the instruction's result
// rows, so D = A B lands in the layout's registers (instruction register r
// of piece (mi, ni) is ThreadMap register (n / g mi + r, ni)). Per k step
// each warp reads its A pieces and B pieces, then issues one instruction
// per (mi, ni); the accumulator stays in registers (a loop carries it in
// the layout, --accelerate-dot). An fp16 or bf16 accumulator is computed in
// fp32 and rounded once at the end, fp32 operands are rounded to tf32 as
// they are staged (the interpreter's tf32), int8 sums wrap.
//
// More warps along N than pieces (a 32 x 32 result on 4 warps of 16 x 16
// pieces) wrap as mma.sync's do: warp w computes what warp w % (N / n)
// does.
#include "lowering/codegen/AMDMatrixCore.h"
#include "lowering/codegen/DotLowering.h"

#include <fmt/format.h>

namespace tk {
namespace {

// amdMmaOperandCoord's arithmetic on i32 values.
struct IRArith {
  llvm::IRBuilderBase &b;
  llvm::Value *c(int64_t k) const { return b.getInt32(static_cast<uint32_t>(k)); }
  llvm::Value *add(llvm::Value *x, llvm::Value *y) const { return b.CreateAdd(x, y); }
  llvm::Value *mul(llvm::Value *x, int64_t k) const { return k == 1 ? x : b.CreateMul(x, c(k)); }
  llvm::Value *div(llvm::Value *x, int64_t k) const { return k == 1 ? x : b.CreateUDiv(x, c(k)); }
  llvm::Value *rem(llvm::Value *x, int64_t k) const {
    return k == 1 ? c(0) : b.CreateURem(x, c(k));
  }
};

class AMDMmaDot {
public:
  AMDMmaDot(FunctionLowering &fl, Operation &op, const AMDMmaLayout *layout)
      : fl_(fl), b_(fl.builder()), op_(op), layout_(layout) {}

  bool run() {
    Value *a = op_.operand(0), *bv = op_.operand(1), *res = op_.result();
    DType dt = a->type()->dtype();
    int64_t M = a->type()->shape()[0], K = a->type()->shape()[1], N = bv->type()->shape()[1];
    const AMDMatrixInstr *instr = amdMatrixInstr(fl_.target().archName(), dt, layout_->n());
    if (!instr || instr->wmma != layout_->isWmma())
      return fl_.unsupported(op_, fmt::format("on the matrix cores of {} with {} operands and {}",
                                              fl_.target().archName(),
                                              a->type()->elementType()->str(), layout_->str()));
    instr_ = instr;
    n_ = layout_->n();
    wm_ = layout_->warps()[0], warpsN_ = layout_->warps()[1], wn_ = warpsN_;
    if (N % n_ == 0 && N < n_ * wn_)
      wn_ = N / n_;
    if (M % (n_ * wm_) || N % (n_ * wn_) || K % instr->k || fl_.numWarps() != wm_ * warpsN_)
      return fl_.unsupported(op_, fmt::format("on the matrix cores with shape {}x{}x{} and {}", M,
                                              N, K, layout_->str()));
    if (isRingView(a) || isRingView(bv) || isRegisterOperand(a) || isRegisterOperand(bv))
      return fl_.unsupported(op_, "on the matrix cores with an operand from a cp.async ring or "
                                  "in registers (amdgcn stages both through LDS)");
    eb_ = dtypeBytes(dt);
    numMi_ = M / (n_ * wm_), numNi_ = N / (n_ * wn_);

    // Stage A as [M][K] and B as [N][K]: K contiguous.
    SmemTile ta{fl_.scratch(), M, K, eb_}, tb{fl_.scratch(), N, K, eb_};
    tb.base = b_.CreateGEP(b_.getInt8Ty(), fl_.scratch(), b_.getInt32(ta.bytes()));
    ta.swizzle();
    tb.swizzle();
    bool tf32 = dt == DType::F32;
    stageOperand(fl_, a, ta, 0, tf32, kChunkBytes);
    stageOperand(fl_, bv, tb, 1, tf32, ta.bytes() & -ta.bytes());
    fl_.target().barrier(b_);

    llvm::Value *warp = fl_.warpId();
    warpM_ = b_.CreateURem(b_.CreateUDiv(warp, b_.getInt32(warpsN_)), b_.getInt32(wm_));
    warpN_ = b_.CreateURem(b_.CreateURem(warp, b_.getInt32(warpsN_)), b_.getInt32(wn_));

    // The accumulator, in fp32 for 16-bit float results.
    Type *resElem = res->type()->elementType();
    bool widen = resElem->dtype() == DType::F16 || resElem->dtype() == DType::BF16;
    Regs acc = fl_.get(op_.operand(2));
    if (widen)
      for (llvm::Value *&v : acc)
        v = b_.CreateFPExt(v, b_.getFloatTy());

    ThreadMap map = fl_.threadMap(res);
    int64_t regs = layout_->regsPerInstr(), rowsPerPiece = n_ / layout_->laneGroups();
    for (int64_t kk = 0; kk < K / instr->k; ++kk) {
      std::vector<Regs> fa, fb;
      for (int64_t mi = 0; mi < numMi_; ++mi)
        fa.push_back(loadOperand(ta, 0, mi, warpM_, kk));
      for (int64_t ni = 0; ni < numNi_; ++ni)
        fb.push_back(loadOperand(tb, 1, ni, warpN_, kk));
      for (int64_t mi = 0; mi < numMi_; ++mi)
        for (int64_t ni = 0; ni < numNi_; ++ni) {
          std::vector<int64_t> at;
          Regs c;
          for (int64_t r = 0; r < regs; ++r) {
            at.push_back(map.registerOf({rowsPerPiece * mi + r, ni}));
            c.push_back(acc[static_cast<size_t>(at.back())]);
          }
          Regs d = fl_.target().matrixCoreMma(b_, *instr, fa[mi], fb[ni], c);
          if (d.size() != c.size())
            return fl_.unsupported(op_,
                                   fmt::format("with {} on {}", instr->name, fl_.target().name()));
          for (int64_t r = 0; r < regs; ++r)
            acc[static_cast<size_t>(at[r])] = d[r];
        }
    }
    fl_.target().barrier(b_); // the scratch is free for the next user
    if (widen)
      for (llvm::Value *&v : acc)
        v = b_.CreateFPTrunc(v, fl_.elementType(res->type()));
    fl_.set(res, std::move(acc));
    return true;
  }

private:
  // This lane's kWidth K elements of operand `opIdx` for piece `piece` and
  // k step kk, read in vectors of at most one 16-byte chunk (the swizzle
  // moves whole chunks).
  Regs loadOperand(const SmemTile &t, unsigned opIdx, int64_t piece, llvm::Value *warpIdx,
                   int64_t kk) {
    llvm::Type *elem = fl_.elementType(op_.operand(opIdx)->type());
    int64_t run = std::min(instr_->kWidth, kChunkBytes / eb_);
    Regs out;
    for (int64_t e = 0; e < instr_->kWidth; e += run) {
      auto [mn, k] = amdMmaOperandCoord(IRArith{b_}, *layout_, opIdx, piece, warpIdx, fl_.laneId(),
                                        kk, e, instr_->kWidth, instr_->k);
      llvm::Value *addr = t.address(b_, mn, k);
      if (run == 1) {
        out.push_back(b_.CreateAlignedLoad(elem, addr, llvm::Align(static_cast<uint64_t>(eb_))));
        continue;
      }
      auto *vecTy = llvm::FixedVectorType::get(elem, static_cast<unsigned>(run));
      llvm::Value *v =
          b_.CreateAlignedLoad(vecTy, addr, llvm::Align(static_cast<uint64_t>(run * eb_)));
      for (int64_t i = 0; i < run; ++i)
        out.push_back(b_.CreateExtractElement(v, static_cast<uint64_t>(i)));
    }
    return out;
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
  const AMDMmaLayout *layout_;
  const AMDMatrixInstr *instr_ = nullptr;
  // wn_: the distinct warps along N; warpsN_: the layout's (more when it wraps).
  int64_t n_ = 32, wm_ = 1, wn_ = 1, warpsN_ = 1, eb_ = 2, numMi_ = 0, numNi_ = 0;
  llvm::Value *warpM_ = nullptr, *warpN_ = nullptr;
};

} // namespace

bool lowerAMDMmaDot(FunctionLowering &fl, Operation &op, const AMDMmaLayout *layout) {
  return AMDMmaDot(fl, op, layout).run();
}

} // namespace tk
