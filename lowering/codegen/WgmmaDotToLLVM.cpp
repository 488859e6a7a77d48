// dot -> LLVM IR on Hopper's wgmma (the result has an mma layout of version
// 3, sm_90a; --accelerate-dot chooses it): A in registers when its layout is
// dot_operand (--propagate-dot-layouts: a previous dot's accumulator cast to
// 16 bits, a loop-invariant tile), the fragment of mma.sync's A per warp of
// the group; otherwise both operands stay in shared
// memory, in wgmma's canonical layout: the swizzle of DotLowering.h (=
// wgmma's 128/64/32 byte swizzle for rows of that length), rows over 128
// bytes cut into 128-byte column blocks, and A's 8-row blocks permuted so
// that the accumulator has mma version 2's ThreadMap (wgmmaSharedRowBlock).
// Per k step of 16 and 64-row piece of the warp group, one
//
//   wgmma.mma_async.sync.aligned.m64n<N>k16.f32.f16.f16 {d...}, descA, descB, p, 1, 1, tA, tB;
//
// with 64-bit descriptors (wgmmaDescriptor), after wgmma.fence; then
// wgmma.commit_group and wgmma.wait_group (0, or 1 with wgmma_pending: the
// group stays in flight and the async_wait after the loop drains it). The
// ring's wait fences the cp.async writes for the async proxy
// (fence.proxy.async.shared::cta); a dot off the ring stages A and B at a
// 1024-aligned scratch address, fences and syncs itself.
//
// Also here: the end of a pipelined loop of wgmma dots (drainWgmma, and
// wgmmaRowsInOrder for wgmma_native dots), which the loop's async_wait
// lowers to (DotToLLVM.cpp).
#include "analysis/SharedMemory.h"
#include "lowering/codegen/DotLowering.h"

#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>

namespace tk {
namespace {

// The wgmma dot (see the top of the file): both operands in shared
// memory (a ring stage, or staged here at a 1024-aligned scratch address),
// one wgmma.mma_async per 64-row piece of the warp group and k step of 16.
class WgmmaDot {
public:
  WgmmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma)
      : fl_(fl), b_(fl.builder()), op_(op), mma_(mma) {}

  bool run() {
    Value *a = op_.operand(0), *bv = op_.operand(1), *res = op_.result();
    DType dt = a->type()->dtype();
    M_ = a->type()->shape()[0], K_ = a->type()->shape()[1], N_ = bv->type()->shape()[1];
    W_ = mma_->warps()[0];
    // fp8 (e4m3 / e5m2, A's and B's formats may differ): k steps of 32, one
    // byte an element, both operands K-major.
    bool fp8 = dt == DType::F8E4NV || dt == DType::F8E5;
    kStep_ = fp8 ? 32 : 16;
    int64_t eb = fp8 ? 1 : 2;
    if ((dt != DType::F16 && dt != DType::BF16 && !fp8) || M_ % (16 * W_) || K_ % kStep_ ||
        mma_->instr()[1] != N_ || fl_.numWarps() != W_)
      return fl_.unsupported(
          op_, fmt::format("on wgmma with shape {}x{}x{} and {}", M_, N_, K_, mma_->str()));
    // MN-major: A's registers run along M, B's along N (as the ring or the
    // staging stores them); K-major otherwise. 8-bit operands are K-major
    // only: the staging below transposes an MN-major one.
    mnA_ = !fp8 && fl_.threadMap(a).order()[0] == 0;
    mnB_ = !fp8 && fl_.threadMap(bv).order()[0] == 1;
    bool ringA = isRingView(a), ringB = isRingView(bv), regA = isRegisterOperand(a);
    if (regA && !registerOperandFits(a, mma_))
      return fl_.unsupported(
          op_, fmt::format("with an A operand in registers of layout {}", fl_.layoutOf(a)->str()));
    if (fp8 && (regA || (ringA && fl_.threadMap(a).order()[0] != 1) ||
                (ringB && fl_.threadMap(bv).order()[0] != 0)))
      return fl_.unsupported(op_, "on fp8 wgmma with an operand in registers or an MN-major ring");
    SmemTile ta, tb;
    if (ringA)
      ta = viewStage(fl_, a);
    if (ringB)
      tb = viewStage(fl_, bv);
    bool staged = (!ringA && !regA) || !ringB;
    if (staged) {
      // The scratch base rounded up to 1024 (--allocate-shared counts the
      // extra bytes).
      llvm::Value *raw = fl_.scratch();
      llvm::Value *addr = b_.CreatePtrToInt(raw, b_.getInt32Ty());
      llvm::Value *pad = b_.CreateAnd(b_.CreateSub(b_.getInt32(0), addr), b_.getInt32(1023));
      llvm::Value *base = b_.CreateGEP(b_.getInt8Ty(), raw, pad);
      if (!ringA && !regA) {
        ta = SmemTile{base, mnA_ ? K_ : M_, mnA_ ? M_ : K_, eb};
        ta.blocks = true, ta.permWarps = W_, ta.permDim = mnA_ ? 1 : 0;
        ta.swizzle();
        stageOperand(fl_, a, ta, mnA_ ? 1 : 0, false, kChunkBytes);
        base = b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(ta.bytes())));
      }
      if (!ringB) {
        tb = SmemTile{base, mnB_ ? K_ : N_, mnB_ ? N_ : K_, eb};
        tb.blocks = true;
        tb.swizzle();
        stageOperand(fl_, bv, tb, mnB_ ? 0 : 1, false, kChunkBytes);
      }
      fl_.target().fenceAsyncProxy(b_);
      fl_.target().barrier(b_);
    }

    ThreadMap map = fl_.threadMap(res);
    Regs acc = fl_.get(op_.operand(2));
    // A constant zero accumulator (S = Q K^T in attention's loop) is not
    // read: the first k step computes D = A x B.
    bool zeroInit = isZeroConstant(op_.operand(2));
    int64_t pieces = M_ / (16 * W_), groups = W_ / 4;
    // The warp group, warp-uniform for ptxas (shfl.sync.idx, as Triton
    // does): the descriptors computed from it then live in uniform
    // registers, where wgmma reads them, instead of moving there (R2UR, and
    // a sign extension) before every wgmma of the loop.
    llvm::Value *group = b_.CreateUDiv(fl_.target().warpUniform(b_, fl_.warpId()), b_.getInt32(4));
    if (groups > 1)
      group = b_.CreateURem(group, b_.getInt32(static_cast<uint32_t>(groups)));
    // Piece mi's accumulator registers in wgmma's order: d[4 ni + 2 h + c]
    // is row half h, column 8 ni + 2 (lane % 4) + c, i.e. the ThreadMap's
    // register (2 mi + h, 2 ni + c).
    std::vector<std::vector<int64_t>> regsOf(static_cast<size_t>(pieces));
    for (int64_t mi = 0; mi < pieces; ++mi)
      for (int64_t ni = 0; ni < N_ / 8; ++ni)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t c = 0; c < 2; ++c)
            regsOf[mi].push_back(map.registerOf({2 * mi + h, 2 * ni + c}));
    // A from registers: every fragment packed before the fence, so that no
    // instruction writes a register wgmma reads after it (ptxas would add a
    // warpgroup.arrive of its own, C7519).
    std::vector<std::vector<Regs>> fragsA(static_cast<size_t>(pieces));
    int64_t steps = K_ / kStep_;
    for (int64_t mi = 0; regA && mi < pieces; ++mi)
      for (int64_t kk = 0; kk < steps; ++kk)
        fragsA[mi].push_back(registerFragmentA(fl_, a, mi, kk));
    std::vector<llvm::Value *> descB;
    for (int64_t kk = 0; kk < steps; ++kk)
      descB.push_back(descriptor(tb, mnB_, b_.getInt32(0), kk));
    // max_num_imprecise_acc = P on an fp8 dot (Triton's meaning): the k
    // steps go in chunks of max(1, ceil(P / 32)), each summed by wgmma from
    // zero and then added into the accumulator with fp32 adds (after its
    // group's wait); without it, one chunk of every step accumulates in
    // wgmma itself.
    std::optional<int64_t> imprecise = op_.attrs().getInt("max_num_imprecise_acc");
    bool partial = fp8 && imprecise && *imprecise <= K_;
    int64_t chunk = partial ? std::max<int64_t>(1, (*imprecise + kStep_ - 1) / kStep_) : steps;
    for (int64_t k0 = 0; k0 < steps; k0 += chunk) {
      int64_t k1 = std::min(steps, k0 + chunk);
      fl_.target().warpGroupFence(b_);
      std::vector<Regs> sums(static_cast<size_t>(pieces));
      for (int64_t mi = 0; mi < pieces; ++mi) {
        llvm::Value *piece = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(mi * groups)), group);
        Regs c;
        for (int64_t r : regsOf[mi])
          c.push_back(acc[r]);
        TargetInfo::WarpGroupMma mma;
        mma.operands = dt, mma.operandsB = bv->type()->dtype(), mma.n = N_, mma.d = c;
        mma.descB.assign(descB.begin() + k0, descB.begin() + k1);
        mma.mnMajorA = mnA_, mma.mnMajorB = mnB_, mma.zeroInit = zeroInit || partial;
        if (regA) {
          // Piece mi's fragment registers are the ThreadMap's rows 2 mi + h,
          // wgmma's row order within the group (see wgmmaSharedRowBlock).
          mma.a = fragsA[mi];
        } else {
          for (int64_t kk = k0; kk < k1; ++kk)
            mma.a.push_back({descriptor(ta, mnA_, b_.CreateMul(piece, b_.getInt32(64)), kk)});
        }
        sums[mi] = fl_.target().warpGroupMma(b_, mma);
        if (!partial)
          for (size_t i = 0; i < sums[mi].size(); ++i)
            acc[regsOf[mi][i]] = sums[mi][i];
      }
      if (!partial)
        continue;
      fl_.target().warpGroupCommit(b_);
      Regs all;
      for (const Regs &p : sums)
        all.insert(all.end(), p.begin(), p.end());
      fl_.target().warpGroupWait(b_, all, 0);
      size_t at = 0;
      for (int64_t mi = 0; mi < pieces; ++mi)
        for (int64_t r : regsOf[mi])
          acc[r] = b_.CreateFAdd(acc[r], all[at++]);
    }
    fl_.target().warpGroupCommit(b_);
    // wgmma_pending = 1 (--pipeline, an accumulator the next iteration reads
    // only after a wait): this group stays in flight into the next
    // iteration; the async_wait after the loop drains it. wgmma_wait_carried
    // = i: this dot's wait also retires the previous iteration's group of
    // the dot that the body's argument i carries, whose registers pass
    // through it, so that no reader of the argument comes before the wait.
    Value *carried = nullptr;
    if (std::optional<int64_t> arg = op_.attrs().getInt("wgmma_wait_carried"))
      carried = op_.parentBlock()->argument(static_cast<unsigned>(*arg));
    size_t own = acc.size();
    if (carried) {
      const Regs &prev = fl_.get(carried);
      acc.insert(acc.end(), prev.begin(), prev.end());
    }
    fl_.target().warpGroupWait(b_, acc, op_.attrs().getInt("wgmma_pending").value_or(0));
    if (carried) {
      fl_.set(carried, Regs(acc.begin() + static_cast<std::ptrdiff_t>(own), acc.end()));
      acc.resize(own);
    }
    if (staged)
      fl_.target().barrier(b_);
    fl_.set(res, std::move(acc));
    return true;
  }

private:
  static bool isZeroConstant(Value *v) {
    Operation *def = v->definingOp();
    if (def && def->is(Opcode::Splat))
      def = def->operand(0)->definingOp();
    if (!def || !def->is(Opcode::Constant))
      return false;
    std::optional<double> f = def->attrs().getFloat("value");
    return f && *f == 0.0;
  }

  // The descriptor of the 64 x 16 (A) or 16 x N (B) matrix of k step `kk`
  // (64 x 32 and 32 x N for fp8: a k step is 32 bytes of a K-major row)
  // whose M (N) coordinates start at `mn0` (a multiple of 64, i32) in tile
  // `t`. K-major (rows along M/N, K along the row): 8-row groups SBO = 8 row
  // bytes apart, the k step 32 bytes into the row (into the column block of
  // 128 bytes that holds it). MN-major (rows along K): the k step 16 rows
  // down, 8-row groups SBO apart, 128-byte column blocks LBO apart.
  llvm::Value *descriptor(const SmemTile &t, bool mnMajor, llvm::Value *mn0, int64_t kk) {
    int64_t rowBytes = t.blockLen() * t.elemBytes, blockBytes = t.rows * rowBytes;
    llvm::Value *offset;
    uint64_t lbo = 16;
    if (!mnMajor) {
      int64_t kByte = kk * 32;
      offset =
          b_.CreateAdd(b_.CreateMul(mn0, b_.getInt32(static_cast<uint32_t>(rowBytes))),
                       b_.getInt32(static_cast<uint32_t>(kByte / 128 * blockBytes + kByte % 128)));
    } else {
      lbo = static_cast<uint64_t>(blockBytes);
      // mn0 * 2 bytes / 128 column blocks, each blockBytes.
      offset = b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(mn0, b_.getInt32(64)),
                                         b_.getInt32(static_cast<uint32_t>(blockBytes))),
                            b_.getInt32(static_cast<uint32_t>(16 * kk * rowBytes)));
    }
    llvm::Value *addr = b_.CreateAdd(b_.CreatePtrToInt(t.base, b_.getInt32Ty()), offset);
    uint64_t fixed = wgmmaDescriptor(0, lbo, static_cast<uint64_t>(8 * rowBytes), rowBytes);
    llvm::Value *start =
        b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(addr, 4), b_.getInt32(0x3FFF)), b_.getInt64Ty());
    return b_.CreateOr(start, b_.getInt64(fixed));
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
  const MmaLayout *mma_;
  int64_t M_ = 0, N_ = 0, K_ = 0, W_ = 4, kStep_ = 16;
  bool mnA_ = false, mnB_ = false;
};

} // namespace

bool lowerWgmmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma) {
  return WgmmaDot(fl, op, mma).run();
}

// wgmma.wait_group 0 after the loop `loop` whose dots left their groups in
// flight, with its wgmma accumulators passed through the wait (re-set to the
// values after it). ptxas serialises every wgmma of the kernel (warning
// C7514) when any instruction runs between the loop's exit and this wait,
// and LLVM sinks index math computed at the top of the kernel (the
// epilogue's) to the start of the block that uses it. So what follows the
// wait goes in a block of its own, entered by a branch LLVM cannot fold: the
// sunk instructions land after the wait (the predicate is always true, only
// opaque to LLVM; the other side traps).
void drainWgmma(FunctionLowering &fl, Operation *loop) {
  llvm::IRBuilderBase &b = fl.builder();
  bool waited = false;
  for (unsigned r = 0; loop && r < loop->numResults(); ++r) {
    if (!isWgmmaLayout(loop->result(r)->type()))
      continue;
    Regs regs = fl.get(loop->result(r));
    fl.target().warpGroupWait(b, regs, 0);
    fl.set(loop->result(r), std::move(regs));
    waited = true;
  }
  if (!waited) {
    Regs none;
    fl.target().warpGroupWait(b, none, 0);
  }
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  auto *other = llvm::BasicBlock::Create(ctx, "wgmma.drained.other", fn);
  auto *next = llvm::BasicBlock::Create(ctx, "wgmma.drained", fn);
  b.CreateCondBr(fl.target().opaqueTrue(b), next, other);
  b.SetInsertPoint(other);
  b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(next);
}

// A wgmma_native dot (--pipeline: an M-major A on 8+ warps) reads A's rows
// unpermuted, so its accumulator register (2 mi + h, 2 ni + c) of warp w,
// lane l holds row P = 64 (mi G + g) + 16 (w % 4) + l / 4 + 8 h (g = w / 4 %
// G, G = W / 4 warp groups: wgmma's own fragment) where the mma layout's
// ThreadMap puts row L = 8 w + l / 4 + 8 W (2 mi + h); the columns agree
// (8 ni + 2 (l % 4) + c). After the loop's drain (whose barrier freed the
// ring's bytes) each thread stores its registers at row P of the scratch,
// a barrier, loads them back from row L, a barrier: once per program, where
// the permuted A cost every copy of every iteration.
void wgmmaRowsInOrder(FunctionLowering &fl, Operation &loop) {
  llvm::IRBuilderBase &b = fl.builder();
  Operation *yield = loop.body().terminator();
  for (unsigned r = 0; yield && r < loop.numResults(); ++r) {
    Operation *dot = yield->operand(r)->definingOp();
    if (!dot || !dot->is(Opcode::Dot) || !dot->attrs().getBool("wgmma_native").value_or(false))
      continue;
    Value *res = loop.result(r);
    const std::vector<int64_t> &shape = res->type()->shape();
    int64_t W = mmaLayoutOf(res->type())->warps()[0], G = W / 4, M = shape[0], N = shape[1];
    int64_t stride = wgmmaNativeRowWords(N);
    ThreadMap map = fl.threadMap(res);
    llvm::Value *w = fl.warpId(), *l = fl.laneId();
    llvm::Value *q = b.CreateURem(w, b.getInt32(4));
    llvm::Value *g =
        b.CreateURem(b.CreateUDiv(w, b.getInt32(4)), b.getInt32(static_cast<uint32_t>(G)));
    llvm::Value *l4 = b.CreateUDiv(l, b.getInt32(4));
    // Thread parts of P, L and the column, in words.
    llvm::Value *pThread = b.CreateAdd(
        b.CreateAdd(b.CreateMul(g, b.getInt32(64)), b.CreateMul(q, b.getInt32(16))), l4);
    llvm::Value *lThread = b.CreateAdd(b.CreateMul(w, b.getInt32(8)), l4);
    llvm::Value *cThread = b.CreateMul(b.CreateURem(l, b.getInt32(4)), b.getInt32(2));
    Regs regs = fl.get(res);
    llvm::Type *f32 = b.getFloatTy();
    auto at = [&](llvm::Value *row, int64_t rowConst, llvm::Value *col, int64_t colConst) {
      llvm::Value *word =
          b.CreateAdd(b.CreateMul(b.CreateAdd(row, b.getInt32(static_cast<uint32_t>(rowConst))),
                                  b.getInt32(static_cast<uint32_t>(stride))),
                      b.CreateAdd(col, b.getInt32(static_cast<uint32_t>(colConst))));
      return b.CreateGEP(f32, fl.scratch(), word);
    };
    auto *pair = llvm::FixedVectorType::get(f32, 2);
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t mi = 0; mi < M / (16 * W); ++mi)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t ni = 0; ni < N / 8; ++ni) {
            int64_t r0 = map.registerOf({2 * mi + h, 2 * ni}),
                    r1 = map.registerOf({2 * mi + h, 2 * ni + 1});
            if (pass == 0) {
              b.CreateAlignedStore(vectorOf(b, {regs[r0], regs[r1]}),
                                   at(pThread, 64 * mi * G + 8 * h, cThread, 8 * ni),
                                   llvm::Align(8));
            } else {
              llvm::Value *v = b.CreateAlignedLoad(
                  pair, at(lThread, 8 * W * (2 * mi + h), cThread, 8 * ni), llvm::Align(8));
              regs[r0] = b.CreateExtractElement(v, b.getInt32(0));
              regs[r1] = b.CreateExtractElement(v, b.getInt32(1));
            }
          }
      fl.target().barrier(b);
    }
    fl.set(res, std::move(regs));
  }
}

} // namespace tk
