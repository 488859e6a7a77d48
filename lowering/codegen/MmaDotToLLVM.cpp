// dot -> LLVM IR on the tensor cores with mma.sync (the result has an mma
// layout of version 2, chosen by --accelerate-dot): C[M, N] = A[M, K] x
// B[K, N] + acc, one warp's 16 x 8 piece per instruction:
//
//   fp16/bf16: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}...f32
//   tf32:      mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//              (operands rounded with cvt.rna.tf32.f32 as they are staged,
//              or after the read from a ring; the interpreter's rounding)
//   int8:      mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32
//
// An A operand in the dot_operand layout (--propagate-dot-layouts: the
// previous dot's accumulator cast to 16 bits, or a loop-invariant tile
// converted once) is read from its registers, two elements packed per 32-bit
// fragment register. Other operands in registers are staged through the shared scratch
// (DotLowering.h for the swizzle): A as [M][K] and B as [N][K] (K contiguous), or, for 16-bit types
// whose registers run along M (A) or N (B), as [K][M] / [K][N] read with ldmatrix .trans; a
// ring_view operand is read from its ring stage (DotOperands.cpp). Per k step of the instruction
// (32 bytes of K) each warp loads its A pieces with ldmatrix.x4 and its B pieces with ldmatrix.x4
// (two n pieces) or .x2, and issues one mma.sync per (16-row, 8-column) piece. The accumulator
// registers are the mma layout's (ir/DotLayout.cpp): piece (i, j) is registers (k0, k1) =
// (2i..2i+1, 2j..2j+1).
//
// Per k step the fragments of step kk + 1 are read before the mma of step
// kk. A dot with ring_wait = N (both operands ring views; the pipeline gives
// it the loop's wait) issues cp.async.wait_group N and bar.sync after its
// last ldmatrix of stage i and before its last step's mma; in a `for` whose
// body is one straight-line block and whose views take stage (iv - lb) /
// step, it then reads step 0 of stage i + 1 and carries it to the next
// iteration through phis in the loop header (stage 0's read before the
// loop, in the preheader), as CUTLASS's multistage main loop does:
//
//   preheader: ldmatrix stage 0, step 0 -> F
//   body:      ldmatrix stage i, step 1; mma(F); wait; bar.sync;
//              ldmatrix stage i + 1, step 0 -> F'; mma(step 1)    (F = F')
#include "lowering/codegen/DotLowering.h"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace tk {
namespace {

// The mma.sync dot (see the top of the file).
class MmaDot {
public:
  MmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma)
      : fl_(fl), b_(fl.builder()), op_(op), mma_(mma) {}

  bool run() {
    Value *a = op_.operand(0), *bv = op_.operand(1), *res = op_.result();
    DType dt = a->type()->dtype();
    M_ = a->type()->shape()[0], K_ = a->type()->shape()[1], N_ = bv->type()->shape()[1];
    wm_ = mma_->warps()[0], wn_ = mma_->warps()[1], warpsN_ = wn_;
    eb_ = dtypeBytes(dt);
    kStep_ = 32 / eb_;
    // More warps along N than 8-column pieces (a 16x16 result on [1, 4]
    // warps): the layout wraps (ThreadMap), warp w computes what warp
    // w % (N / 8) does, and only N / 8 of them are distinct.
    if (N_ % 8 == 0 && N_ < 8 * wn_)
      wn_ = N_ / 8;
    if (M_ % (16 * wm_) || N_ % (8 * wn_) || K_ % kStep_ || fl_.numWarps() != wm_ * warpsN_)
      return fl_.unsupported(op_, fmt::format("on the tensor cores with shape {}x{}x{} and {}", M_,
                                              N_, K_, mma_->str()));
    ringA_ = isRingView(a), ringB_ = isRingView(bv);
    regA_ = isRegisterOperand(a);
    if (regA_ && !registerOperandFits(a, mma_))
      return fl_.unsupported(
          op_, fmt::format("with an A operand in registers of layout {}", fl_.layoutOf(a)->str()));
    // 16-bit operands whose registers run along M (A) or N (B) are stored
    // that way and read with ldmatrix .trans; others K-contiguous. A tf32
    // ring stage is stored the way its copies wrote it: MN-major ones are
    // read one element per lane (loadElement), K-major ones with ldmatrix.
    transA_ = threadMapOrder(a) == 0 && (eb_ == 2 || (eb_ == 4 && ringA_));
    transB_ = threadMapOrder(bv) == 1 && (eb_ == 2 || (eb_ == 4 && ringB_));
    numMi_ = M_ / (16 * wm_), numNi_ = N_ / (8 * wn_);
    SmemTile ta{fl_.scratch(), transA_ ? K_ : M_, transA_ ? M_ : K_, eb_};
    SmemTile tb{fl_.scratch(), transB_ ? K_ : N_, transB_ ? N_ : K_, eb_};
    if (!ringA_ && !regA_)
      tb.base = b_.CreateGEP(b_.getInt8Ty(), fl_.scratch(), b_.getInt32(ta.bytes()));
    ta.swizzle();
    tb.swizzle();
    std::optional<int64_t> ringWait = op_.attrs().getInt("ring_wait");
    bool waits = ringWait && ringA_ && ringB_;
    llvm::BasicBlock *pre = waits ? carryPreheader() : nullptr;
    llvm::Value *idx = nullptr;
    Frags cur;
    std::vector<llvm::PHINode *> phis;
    if (pre) {
      // Stage 0's first k step, read before the loop (after its wait), and
      // the header's phis that carry it.
      llvm::BasicBlock *body = b_.GetInsertBlock();
      b_.SetInsertPoint(pre->getTerminator());
      setUpLanes();
      auto [ta0, tb0] = ringTiles(b_.getInt32(0));
      Frags first = loadStep(ta0, tb0, 0);
      llvm::BasicBlock *header = body->getSinglePredecessor();
      b_.SetInsertPoint(header, header->getFirstNonPHIIt());
      std::vector<llvm::Value *> vals;
      for (llvm::Value *v : first.values()) {
        llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2);
        phi->addIncoming(v, pre);
        phis.push_back(phi);
        vals.push_back(phi);
      }
      cur = first;
      cur.assign(vals);
      b_.SetInsertPoint(body);
    } else {
      setUpLanes();
    }
    if (ringA_ && ringB_ && a->definingOp()->operand(1) == bv->definingOp()->operand(1)) {
      idx = fl_.get(a->definingOp()->operand(1))[0];
      std::tie(ta, tb) = ringTiles(idx);
    } else {
      // (Rings read at different stages: a loop-invariant one-slot ring
      // beside the loop's own.)
      if (ringA_)
        ta = viewStage(fl_, a);
      if (ringB_)
        tb = viewStage(fl_, bv);
    }
    bool tf32 = dt == DType::F32;
    bool staged = (!ringA_ && !regA_) || !ringB_;
    if (!ringA_ && !regA_)
      stageOperand(fl_, a, ta, transA_ ? 1 : 0, tf32, kChunkBytes);
    if (!ringB_)
      stageOperand(fl_, bv, tb, transB_ ? 0 : 1, tf32, kChunkBytes);
    if (staged)
      fl_.target().barrier(b_);

    if (regA_)
      return runRegisterA(tb, dt, staged);

    // Per k step: the fragments of the next step are read before this
    // step's mma, so ldmatrix latency hides behind tensor-core work. With
    // ring_wait the wait for the next stage comes before the last step's
    // mma (once every read of this stage is issued), and with a carry the
    // next stage's first step is read right after it.
    ThreadMap map = fl_.threadMap(res);
    Regs acc = fl_.get(op_.operand(2));
    int64_t steps = K_ / kStep_;
    if (!pre)
      cur = loadStep(ta, tb, 0);
    for (int64_t kk = 0; kk < steps; ++kk) {
      Frags next;
      if (kk + 1 < steps) {
        next = loadStep(ta, tb, kk + 1);
      } else if (waits) {
        asyncWait(fl_, *ringWait);
        if (pre) {
          auto [tan, tbn] = ringTiles(b_.CreateAdd(idx, llvm::ConstantInt::get(idx->getType(), 1)));
          next = loadStep(tan, tbn, 0);
          std::vector<llvm::Value *> vals = next.values();
          for (size_t i = 0; i < phis.size(); ++i)
            phis[i]->addIncoming(vals[i], b_.GetInsertBlock());
        }
      }
      for (int64_t mi = 0; mi < numMi_; ++mi)
        for (int64_t ni = 0; ni < numNi_; ++ni) {
          int64_t regs[4] = {map.registerOf({2 * mi, 2 * ni}), map.registerOf({2 * mi, 2 * ni + 1}),
                             map.registerOf({2 * mi + 1, 2 * ni}),
                             map.registerOf({2 * mi + 1, 2 * ni + 1})};
          Regs c;
          for (int64_t r : regs)
            c.push_back(acc[r]);
          Regs d = fl_.target().warpMma(b_, dt, cur.a[mi], cur.b[ni], c);
          for (int i = 0; i < 4; ++i)
            acc[regs[i]] = d[i];
        }
      cur = std::move(next);
    }
    if (staged)
      fl_.target().barrier(b_);
    fl_.set(res, std::move(acc));
    return true;
  }

private:
  // A from registers: there is nothing of A to read ahead, so B is read one
  // column pair ahead of its mma instead of one k step ahead. (A step of B
  // at N = 128 on [8, 1] warps is 32 registers, two steps 64: attention's
  // P V at head dim 128 spilled.)
  bool runRegisterA(const SmemTile &tb, DType dt, bool staged) {
    Value *a = op_.operand(0);
    ThreadMap map = fl_.threadMap(op_.result());
    Regs acc = fl_.get(op_.operand(2));
    struct Read {
      int64_t kk, ni;
      bool pair;
    };
    std::vector<Read> reads;
    for (int64_t kk = 0; kk < K_ / kStep_; ++kk)
      for (int64_t ni = 0; ni < numNi_; ni += 2)
        reads.push_back({kk, ni, ni + 1 < numNi_});
    std::map<std::pair<int64_t, int64_t>, Regs> fragsA;
    Regs next = loadB(tb, reads[0].ni, reads[0].kk, reads[0].pair);
    for (size_t i = 0; i < reads.size(); ++i) {
      Regs cur = std::move(next);
      if (i + 1 < reads.size())
        next = loadB(tb, reads[i + 1].ni, reads[i + 1].kk, reads[i + 1].pair);
      for (int64_t p = 0; p < (reads[i].pair ? 2 : 1); ++p) {
        int64_t ni = reads[i].ni + p, kk = reads[i].kk;
        for (int64_t mi = 0; mi < numMi_; ++mi) {
          Regs &fa = fragsA[{mi, kk}];
          if (fa.empty())
            fa = registerFragmentA(fl_, a, mi, kk);
          int64_t regs[4] = {map.registerOf({2 * mi, 2 * ni}), map.registerOf({2 * mi, 2 * ni + 1}),
                             map.registerOf({2 * mi + 1, 2 * ni}),
                             map.registerOf({2 * mi + 1, 2 * ni + 1})};
          Regs c;
          for (int64_t r : regs)
            c.push_back(acc[r]);
          Regs d = fl_.target().warpMma(b_, dt, fa, {cur[2 * p], cur[2 * p + 1]}, c);
          for (int j = 0; j < 4; ++j)
            acc[regs[j]] = d[j];
        }
      }
    }
    if (staged)
      fl_.target().barrier(b_);
    fl_.set(op_.result(), std::move(acc));
    return true;
  }

  // One k step's fragments of this warp: per 16-row piece of A 4 registers,
  // per 8-column piece of B 2.
  struct Frags {
    std::vector<Regs> a, b;

    std::vector<llvm::Value *> values() const {
      std::vector<llvm::Value *> out;
      for (const std::vector<Regs> *side : {&a, &b})
        for (const Regs &r : *side)
          out.insert(out.end(), r.begin(), r.end());
      return out;
    }
    // Replaces the values, in the order of values().
    void assign(const std::vector<llvm::Value *> &vals) {
      size_t i = 0;
      for (std::vector<Regs> *side : {&a, &b})
        for (Regs &r : *side)
          for (llvm::Value *&v : r)
            v = vals[i++];
    }
  };

  unsigned threadMapOrder(Value *v) { return fl_.threadMap(v).order()[0]; }

  // The lane's coordinates in the warp arrangement, at the insertion point.
  void setUpLanes() {
    llvm::Value *lane = fl_.laneId(), *warp = fl_.warpId();
    warpM_ = b_.CreateURem(b_.CreateUDiv(warp, b_.getInt32(warpsN_)), b_.getInt32(wm_));
    warpN_ = b_.CreateURem(b_.CreateURem(warp, b_.getInt32(warpsN_)), b_.getInt32(wn_));
    quad_ = b_.CreateUDiv(lane, b_.getInt32(8));
    rowInMatrix_ = b_.CreateURem(lane, b_.getInt32(8));
    laneGroup_ = b_.CreateUDiv(lane, b_.getInt32(4));
    laneInGroup_ = b_.CreateURem(lane, b_.getInt32(4));
  }

  // Stage `idx` of both operands' rings.
  std::pair<SmemTile, SmemTile> ringTiles(llvm::Value *idx) {
    Value *a = op_.operand(0), *bv = op_.operand(1);
    return {viewStage(fl_, a, idx), viewStage(fl_, bv, idx)};
  }

  Frags loadStep(const SmemTile &ta, const SmemTile &tb, int64_t kk) {
    Frags f;
    f.b.resize(static_cast<size_t>(numNi_));
    for (int64_t mi = 0; mi < numMi_; ++mi)
      f.a.push_back(loadA(ta, mi, kk));
    for (int64_t ni = 0; ni < numNi_;) {
      bool pair = ni + 1 < numNi_;
      Regs r = loadB(tb, ni, kk, pair);
      f.b[ni] = {r[0], r[1]};
      if (pair)
        f.b[ni + 1] = {r[2], r[3]};
      ni += pair ? 2 : 1;
    }
    return f;
  }

  // Where the first k step of the next stage can be carried across the
  // loop's back edge (a dot with ring_wait): the preheader block of the
  // enclosing `for`, when the dot reads stage (iv - lb) / step of rings made
  // before the loop and the body is one straight-line LLVM block (no ops
  // with regions, only pure ops besides the dot, its copies and views);
  // null otherwise (the dot then reads its first step itself).
  llvm::BasicBlock *carryPreheader() {
    Block *body = op_.parentBlock();
    Operation *loop = body ? body->parentOp() : nullptr;
    if (!loop || !loop->is(Opcode::For))
      return nullptr;
    Value *idx = op_.operand(0)->definingOp()->operand(1);
    if (op_.operand(1)->definingOp()->operand(1) != idx)
      return nullptr;
    Operation *div = idx->definingOp();
    Operation *sub = div && div->is(Opcode::Div) ? div->operand(0)->definingOp() : nullptr;
    if (!sub || !sub->is(Opcode::Sub) || sub->operand(0) != body->argument(0) ||
        sub->operand(1) != loop->operand(0) || div->operand(1) != loop->operand(2))
      return nullptr;
    for (unsigned i = 0; i < 2; ++i) {
      Operation *ring = op_.operand(i)->definingOp()->operand(0)->definingOp();
      if (!ring || ring->parentBlock() != loop->parentBlock())
        return nullptr;
    }
    for (Operation &o : *body)
      if (&o != &op_ && !o.is(Opcode::AsyncCopy) && !o.is(Opcode::RingView) &&
          !o.is(Opcode::Yield) && (o.numRegions() || !o.hasTrait(OpTrait::Pure)))
        return nullptr;
    llvm::BasicBlock *header = b_.GetInsertBlock()->getSinglePredecessor();
    llvm::BasicBlock *pre = header ? header->getSinglePredecessor() : nullptr;
    if (!pre || !pre->getTerminator())
      return nullptr;
    return pre;
  }

  // This lane's ldmatrix row address in `t` for the 8x8 matrix whose
  // M (or N) coordinates start at piece * 8 * warpsAlong + 8 * warpIdx and
  // whose K coordinates start at kk * kStep + kHalf * kStep / 2; `trans`
  // buffers hold K along their rows.
  llvm::Value *fragmentAddress(const SmemTile &t, bool trans, llvm::Value *piece,
                               int64_t warpsAlong, llvm::Value *warpIdx, int64_t kk,
                               llvm::Value *kHalf) {
    llvm::Value *mn0 = b_.CreateAdd(b_.CreateMul(piece, b_.getInt32(8 * warpsAlong)),
                                    b_.CreateMul(warpIdx, b_.getInt32(8)));
    llvm::Value *k0 =
        b_.CreateAdd(b_.getInt32(kk * kStep_), b_.CreateMul(kHalf, b_.getInt32(kStep_ / 2)));
    return trans ? t.address(b_, b_.CreateAdd(k0, rowInMatrix_), mn0)
                 : t.address(b_, b_.CreateAdd(mn0, rowInMatrix_), k0);
  }

  // The A piece (rows of 16-row piece mi, k step kk) of this warp: 4
  // registers. Lane L addresses row L % 8 of matrix q = L / 8 = (row half
  // q % 2, k half q / 2); row half h of piece mi is accumulator row block
  // 2 mi + h.
  Regs loadA(const SmemTile &t, int64_t mi, int64_t kk) {
    if (regA_)
      return registerFragmentA(fl_, op_.operand(0), mi, kk);
    if (eb_ == 4 && transA_) {
      Regs r; // m16n8k8's a0..a3: (row half, k half) = (0, 0), (1, 0), (0, 1), (1, 1)
      for (int64_t kHalf = 0; kHalf < 2; ++kHalf)
        for (int64_t h = 0; h < 2; ++h)
          r.push_back(loadElement(t, 2 * mi + h, wm_, warpM_, kk, kHalf));
      return roundRing(std::move(r), ringA_);
    }
    llvm::Value *rowBlock = b_.CreateAdd(b_.getInt32(2 * mi), b_.CreateAnd(quad_, 1));
    llvm::Value *addr =
        fragmentAddress(t, transA_, rowBlock, wm_, warpM_, kk, b_.CreateLShr(quad_, 1));
    return roundRing(fl_.target().loadMatrices(b_, addr, true, transA_), ringA_);
  }

  // The B pieces (columns of n piece ni, and ni + 1 when `pair`) of this
  // warp: 2 registers per piece. Matrix q = (piece q / 2, k half q % 2).
  Regs loadB(const SmemTile &t, int64_t ni, int64_t kk, bool pair) {
    if (eb_ == 4 && transB_) {
      Regs r; // b0, b1 (k half 0, 1) of piece ni, then of ni + 1
      for (int64_t p = 0; p < (pair ? 2 : 1); ++p)
        for (int64_t kHalf = 0; kHalf < 2; ++kHalf)
          r.push_back(loadElement(t, ni + p, wn_, warpN_, kk, kHalf));
      return roundRing(std::move(r), ringB_);
    }
    llvm::Value *q = pair ? quad_ : b_.CreateAnd(quad_, 1);
    llvm::Value *piece = b_.CreateAdd(b_.getInt32(ni), b_.CreateLShr(q, 1));
    llvm::Value *addr = fragmentAddress(t, transB_, piece, wn_, warpN_, kk, b_.CreateAnd(q, 1));
    return roundRing(fl_.target().loadMatrices(b_, addr, pair, transB_), ringB_);
  }

  // One fp32 element of an MN-major ring stage (rows along K): lane
  // (g, t) = (lane / 4, lane % 4) takes row kk * 8 + 4 kHalf + t, column
  // 8 (block * warpsAlong + warpIdx) + g, its element of m16n8k8's fragment
  // (ldmatrix .trans would move 16-bit halves).
  llvm::Value *loadElement(const SmemTile &t, int64_t block, int64_t warpsAlong,
                           llvm::Value *warpIdx, int64_t kk, int64_t kHalf) {
    llvm::Value *mn = b_.CreateAdd(
        b_.CreateMul(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(block * warpsAlong)), warpIdx),
                     b_.getInt32(8)),
        laneGroup_);
    llvm::Value *k = b_.CreateAdd(
        b_.getInt32(static_cast<uint32_t>(kk * kStep_ + kHalf * kStep_ / 2)), laneInGroup_);
    return b_.CreateAlignedLoad(b_.getInt32Ty(), t.address(b_, k, mn), llvm::Align(4));
  }

  // Fragments of a tf32 ring stage rounded to tf32 after the read, as the
  // staging rounds what it writes (cvt.rna, the interpreter's rounding; the
  // copies moved the fp32 bits unchanged). Others as they are.
  Regs roundRing(Regs r, bool ring) {
    if (eb_ != 4 || !ring)
      return r;
    for (llvm::Value *&v : r)
      v = b_.CreateBitCast(fl_.target().roundToTF32(b_, b_.CreateBitCast(v, b_.getFloatTy())),
                           b_.getInt32Ty());
    return r;
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
  const MmaLayout *mma_;
  // wn_: the distinct warps along N; warpsN_: the layout's (more when it wraps).
  int64_t M_ = 0, N_ = 0, K_ = 0, wm_ = 1, wn_ = 1, warpsN_ = 1, eb_ = 2, kStep_ = 16, numMi_ = 0,
          numNi_ = 0;
  bool transA_ = false, transB_ = false, ringA_ = false, ringB_ = false, regA_ = false;
  llvm::Value *warpM_ = nullptr, *warpN_ = nullptr, *quad_ = nullptr, *rowInMatrix_ = nullptr;
  llvm::Value *laneGroup_ = nullptr, *laneInGroup_ = nullptr;
};

} // namespace

bool lowerMmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma) {
  return MmaDot(fl, op, mma).run();
}

} // namespace tk
