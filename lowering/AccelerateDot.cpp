// --accelerate-dot: puts each dot the tensor cores can compute on them. Runs
// after --coalesce, so every tensor has a layout.
//
// A dot qualifies for mma.sync when its operands and accumulator are
//   fp16 x fp16 + fp32, bf16 x bf16 + fp32   (m16n8k16)
//   fp16 x fp16 + fp16                       (m16n8k16, f16x2 accumulator
//                                             registers; mma.sync only)
//   fp32 x fp32 + fp32 with input_precision "tf32" (tk.dot's default; m16n8k8)
//   int8 x int8 + int32                      (m16n8k32)
// and M, N, K are multiples of the instruction and of a warp arrangement:
// the program's warps are split [wm, wn] over M and N (halving the longer
// per-warp side first), each warp taking a multiple of 16 rows and 8 columns;
// warps left over when no side can be halved again go along N, where the
// layout wraps (a 16x16 result on [1, 4] warps: warps 2 and 3 compute the
// pieces of warps 0 and 1);
// a dot of a chain (its result reaches another dot's A or accumulator, as
// attention's S = Q K^T reaches P V) takes [W, 1] when M allows 16 rows per
// warp, so the rows of both dots are the same threads' registers.
// Its result and accumulator then take the layout mma<version = 2, warps =
// [wm, wn], instr = [16, 8]>; the operands keep their (coalesced) layouts and
// the lowering stages them through swizzled shared memory for ldmatrix
// (lowering/codegen/MmaDotToLLVM.cpp). Users of the result get a convert_layout
// back to the layout they had. A loop-carried accumulator (`acc = tk.dot(a,
// b, acc)` in a for loop) is carried in the mma layout, so the conversion
// happens once, after the loop:
//
//   %r = for ... iter_args(%acc = %zero) {       %r = for ... iter_args(%acc = %zero') {
//     %d = dot %a, %b, %acc : blocked      ->      %d = dot %a, %b, %acc : mma
//     yield %d }                                   yield %d }
//                                                %c = convert_layout %r : blocked
//
// Other dots stay on the FMA path; the reason is written on the op as
// `fma_reason` (visible under TK_DUMP_IR=accelerate-dot), and their
// accumulator is converted to the result's layout if it differs.
//
// On sm_90a (the function's `arch` attribute, set by tkc and the driver for
// an arch-specific target) an fp16/bf16 dot takes Hopper's wgmma instead
// when its shape fits: num_warps a multiple of 4 (W / 4 warp groups along
// M), M a multiple of 16 W (whole 64-row pieces per group), N a multiple of
// 8 up to 256 (one wgmma.m64n<N>k16 per piece and k step), K a multiple of
// 16, and rows of the shared tiles wgmma's swizzle can describe (K and N of
// 16, 32 or a multiple of 64 elements). Its layout is
//
//   mma<version = 3, warps = [W, 1], instr = [64, N]>
//
// whose ThreadMap is mma version 2's with warps [W, 1], so the epilogue is
// the same. Otherwise it stays on mma.sync with the reason written as
// `wgmma_reason`.
//
// A dot of fp8 operands (fp8e4nv / fp8e5, the two may differ) with an fp32
// accumulator takes wgmma's fp8 form on sm_90a, when the function has
// `fp8_wgmma` (on unless TK_FP8_WGMMA=0), (m64n<N>k32, both operands
// K-major in shared memory) when the shape fits as above with K a multiple
// of 32 that is 32, 64 or a multiple of 128 (rows of K bytes). Every other
// fp8 dot (another arch, AMD, an fp16 accumulator, fp8e4b15, a shape that
// does not fit) gets its operands widened exactly to fp16 here (fpext in
// their layouts) and continues as an fp16 dot, the reason written as
// `fp8_reason`.
#include "ir/Builder.h"
#include "ir/IRContext.h"
#include "ir/Layout.h"
#include "lang/Remarks.h"
#include "lowering/LayoutRemat.h"
#include "lowering/Pass.h"
#include "lowering/codegen/AMDMatrixCore.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace tk {
namespace {

const LayoutAttr *layoutOf(Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t ? t->layout() : nullptr;
}

class DotAccelerator {
public:
  DotAccelerator(IRContext &ctx, int64_t numWarps, int64_t warpSize, std::string arch,
                 std::set<Operation *> chained, bool fp8Wgmma)
      : ctx_(ctx), numWarps_(numWarps), warpSize_(warpSize), arch_(std::move(arch)),
        chained_(std::move(chained)), fp8Wgmma_(fp8Wgmma) {}

  void run(Operation &dot) {
    std::string reason = whyNot(dot);
    if (!reason.empty()) {
      dot.attrs().set("fma_reason", reason);
      const LayoutAttr *l = layoutOf(dot.result());
      // The FMA lowering computes in a blocked layout: a result in another
      // (a slice of a 3-D layout, where a batched dot was split per batch)
      // is computed in the shape's default blocked layout and converted.
      if (l && !isa<BlockedLayout>(l)) {
        const LayoutAttr *blocked =
            defaultBlockedLayout(ctx_, dot.result()->type()->shape(), numWarps_, warpSize_);
        dot.result()->setType(withLayout(dot.result(), blocked));
        dot.setOperand(2, convertBefore(&dot, dot.operand(2), blocked));
        replaceUsesAfter(&dot, dot.result(), l);
        return;
      }
      if (l && layoutOf(dot.operand(2)) != l)
        dot.setOperand(2, convertBefore(&dot, dot.operand(2), l));
      return;
    }
    const LayoutAttr *old = layoutOf(dot.result());
    const LayoutAttr *mma = amdInstr_ ? static_cast<const LayoutAttr *>(AMDMmaLayout::get(
                                            ctx_, amdInstr_->wmma, {wm_, wn_}, instr_))
                                      : MmaLayout::get(ctx_, version_, {wm_, wn_}, instr_);
    Value *res = dot.result(), *acc = dot.operand(2);

    // A loop-carried accumulator: %acc is the body's argument and the body
    // yields the dot's result. Carry it in the mma layout.
    Operation *loop = nullptr;
    unsigned slot = 0;
    if (acc->isBlockArgument() && acc->index() > 0) {
      Operation *parent = acc->ownerBlock()->parentOp();
      Block *body = acc->ownerBlock();
      slot = acc->index() - 1;
      if (parent && parent->is(Opcode::For) && slot < parent->numResults() &&
          body->terminator()->operand(slot) == res && acc->users().size() == 1)
        loop = parent;
    }

    res->setType(withLayout(res, mma));
    if (loop) {
      acc->setType(withLayout(acc, mma));
      Value *init = loop->operand(3 + slot);
      loop->setOperand(3 + slot, convertBefore(loop, init, mma));
      Value *out = loop->result(slot);
      out->setType(withLayout(out, mma));
      replaceUsesAfter(loop, out, old);
      // Inside the body, uses of the result other than the yield want the
      // old layout.
      redirectUses(&dot, res, old, loop->body().terminator());
    } else {
      dot.setOperand(2, convertBefore(&dot, acc, mma));
      replaceUsesAfter(&dot, res, old);
    }
  }

private:
  Type *withLayout(Value *v, const LayoutAttr *l) {
    return ctx_.tensor(v->type()->shape(), v->type()->elementType(), l);
  }

  // `v` in layout `l`, computed just before `before`: a constant or splat is
  // re-created in `l`, anything else converted.
  Value *convertBefore(Operation *before, Value *v, const LayoutAttr *l) {
    if (layoutOf(v) == l)
      return v;
    Builder b(ctx_);
    b.setInsertionPoint(before);
    Operation *def = v->definingOp();
    if (def && (def->is(Opcode::Constant) || def->is(Opcode::Splat)))
      return b.create(def->opcode(), def->loc(), def->operands(), {withLayout(v, l)}, def->attrs())
          ->result();
    return b.create(Opcode::ConvertLayout, before->loc(), {v}, {withLayout(v, l)})->result();
  }

  // Every use of `v` (defined by `def`) now sees `v` converted to `l`, the
  // conversion placed right after `def`.
  void replaceUsesAfter(Operation *def, Value *v, const LayoutAttr *l) {
    if (!v->hasUses())
      return;
    Builder b(ctx_);
    b.setInsertionPointAfter(def);
    Operation *conv = b.create(Opcode::ConvertLayout, def->loc(), {v}, {withLayout(v, l)});
    v->replaceAllUsesWith(conv->result());
    conv->setOperand(0, v);
    epilogue(conv);
  }

  // The epilogue after a dot or loop: an accumulator converted back to a
  // blocked layout costs 4 bytes of shared memory per element (64 KiB for a
  // 128x128 tile, more than a kernel may have statically). Instead, the ops
  // after the conversion in its block that are elementwise (bias, activation,
  // the cast to fp16) and the stores are re-created in the mma layout, with
  // their other operands re-computed in it (offsets from make_range, splat,
  // expand_dims, broadcast, arithmetic; a bias load): the tile is stored
  // straight from the accumulator registers. Users that cannot follow keep
  // the conversion; DCE erases what is left unused.
  void epilogue(Operation *conv) {
    remat_.clear();
    anchor_ = conv;
    afterConv_.clear();
    for (Operation *op = conv->nextNode(); op; op = op->nextNode())
      afterConv_.insert(op);
    const LayoutAttr *l = layoutOf(conv->operand(0));
    remat_[{conv->result(), l}] = conv->operand(0);
    for (Operation *op = conv->nextNode(); op; op = op->nextNode()) {
      bool uses = false;
      for (Value *v : op->operands())
        uses |= remat_.count({v, l}) > 0;
      if (!uses)
        continue;
      if (op->is(Opcode::Store) && op->operand(0)->type()->isTensor()) {
        if (!storesFromAccumulator(conv->operand(0), l, layoutOf(op->operand(1))))
          continue;
        std::vector<Value *> ops;
        for (Value *v : op->operands())
          ops.push_back(inLayout(v, l, 0));
        if (std::find(ops.begin(), ops.end(), nullptr) != ops.end())
          continue;
        Builder b(ctx_);
        b.setInsertionPoint(op);
        b.create(Opcode::Store, op->loc(), ops, {}, op->attrs());
        Operation *dead = op;
        op = op->prevNode();
        dead->erase();
        if (!op)
          break;
        continue;
      }
      if (op->hasTrait(OpTrait::Elementwise) && op->numResults() == 1 &&
          op->result()->type()->isTensor())
        inLayout(op->result(), l, 0);
    }
  }

  // `v` computed in layout `l` (a distributed layout of v's rank),
  // re-creating the ops that compute it where they are cheap; null when
  // some op cannot be re-created.
  Value *inLayout(Value *v, const LayoutAttr *l, int depth) {
    if (!v->type()->isTensor() || layoutOf(v) == l)
      return v;
    if (auto it = remat_.find({v, l}); it != remat_.end())
      return it->second;
    Operation *def = v->definingOp();
    // A conversion (--coalesce's, between a 1-D load's layout and the slice
    // a bias row is broadcast from) is looked through: its operand is
    // re-created in `l` instead.
    if (def && def->is(Opcode::ConvertLayout) && depth <= 32)
      return inLayout(def->operand(0), l, depth + 1);
    if (!def || depth > 32 ||
        !(def->hasTrait(OpTrait::Elementwise) || def->is(Opcode::Broadcast) ||
          def->is(Opcode::ExpandDims) || def->is(Opcode::Load) || def->is(Opcode::Splat) ||
          def->is(Opcode::MakeRange) || def->is(Opcode::Constant)))
      return nullptr;
    std::vector<Value *> ops;
    for (unsigned i = 0; i < def->numOperands(); ++i) {
      const LayoutAttr *want = l;
      if (def->is(Opcode::ExpandDims))
        want = SliceLayout::get(ctx_, static_cast<unsigned>(*def->attrs().getInt("axis")), l);
      Value *o = inLayout(def->operand(i), want, depth + 1);
      if (!o)
        return nullptr;
      ops.push_back(o);
    }
    if (def->is(Opcode::Load) && def->attrs().getBool("volatile").value_or(false))
      return nullptr;
    // A load before the conversion stays where it is, but the copies of its
    // operands go to the conversion, after it: it cannot be re-created.
    if (def->is(Opcode::Load) && !afterConv_.count(def))
      return nullptr;
    // Ops of the epilogue are copied just before the original: its
    // operands' copies sit before theirs, so every use stays dominated.
    // Pure ops from before the conversion (offsets computed at the top of
    // the kernel) are copied at the conversion instead, in creation order,
    // so they do not live across a loop; on wgmma they then also come after
    // the wait that drains the loop's last group (--pipeline's async_wait
    // right after the loop), where ptxas wants nothing before the wait.
    // Loads stay where they were (the loop may write their memory).
    Builder b(ctx_);
    b.setInsertionPoint(afterConv_.count(def) || def->is(Opcode::Load) ? def : anchor_);
    Value *out =
        b.create(def->opcode(), def->loc(), ops, {withLayout(v, l)}, def->attrs())->result();
    remat_[{v, l}] = out;
    return out;
  }

  // Like replaceUsesAfter, but `keep` goes on using `v` itself.
  void redirectUses(Operation *def, Value *v, const LayoutAttr *l, Operation *keep) {
    std::vector<Operation *> users = v->users();
    bool others = false;
    for (Operation *u : users)
      others |= u != keep;
    if (!others)
      return;
    Builder b(ctx_);
    b.setInsertionPointAfter(def);
    Operation *conv = b.create(Opcode::ConvertLayout, def->loc(), {v}, {withLayout(v, l)});
    for (Operation *u : users)
      if (u != keep && u != conv)
        for (unsigned i = 0; i < u->numOperands(); ++i)
          if (u->operand(i) == v)
            u->setOperand(i, conv->result());
  }

  // Empty when `dot` goes to the tensor cores (and wm_, wn_ are set), else
  // why not.
  std::string whyNot(Operation &dot) {
    dot.attrs().erase("wgmma_reason");
    Type *a = dot.operand(0)->type(), *c = dot.result()->type();
    if (!layoutOf(dot.result()) || !layoutOf(dot.operand(0)))
      return "the dot has no layout (run --coalesce first)";
    amdInstr_ = nullptr;
    // fp8 operands: sm_90a's fp8 wgmma, else widened exactly to fp16 here
    // and on fp16's path (the numbers of an fp32 sum of the exact products).
    if (isFp8(a->dtype())) {
      int64_t M = a->shape()[0], K = a->shape()[1], N = c->shape()[1];
      std::string why = whyNotFp8Wgmma(dot, M, N, K);
      if (why.empty()) {
        version_ = 3, wm_ = numWarps_, wn_ = 1, instr_ = {64, N};
        return {};
      }
      dot.attrs().set("fp8_reason", why);
      widenFp8(dot);
      a = dot.operand(0)->type();
    }
    // AMD GPUs (the `arch` attribute gfx*): the matrix cores.
    if (arch_.starts_with("gfx"))
      return whyNotMatrixCore(dot);
    DType at = a->dtype(), ct = c->dtype();
    std::string precision = dot.attrs().getString("input_precision").value_or("ieee");
    int64_t kStep;
    bool f16Acc = at == DType::F16 && ct == DType::F16;
    if (((at == DType::F16 || at == DType::BF16) && ct == DType::F32) || f16Acc)
      kStep = 16;
    else if (at == DType::F32 && ct == DType::F32 && precision == "tf32")
      kStep = 8;
    else if (at == DType::I8 && ct == DType::I32)
      kStep = 32;
    else if (at == DType::F32 && ct == DType::F32)
      return fmt::format("input_precision \"{}\" is computed exactly on the CUDA cores", precision);
    else
      return fmt::format(
          "{} x {} + {} has no tensor-core instruction (fp16/bf16 + fp32, fp16 + fp16, tf32 + "
          "fp32, int8 + int32)",
          a->elementType()->str(), a->elementType()->str(), c->elementType()->str());
    int64_t M = a->shape()[0], K = a->shape()[1], N = c->shape()[1];
    version_ = 2, instr_ = {16, 8};
    if (f16Acc && isWgmmaArch())
      dot.attrs().set("wgmma_reason", "an fp16 accumulator takes mma.sync");
    if (kStep == 16 && !f16Acc && isWgmmaArch()) {
      std::string why = whyNotWgmma(M, N, K);
      if (why.empty()) {
        version_ = 3, wm_ = numWarps_, wn_ = 1, instr_ = {64, N};
        return {};
      }
      dot.attrs().set("wgmma_reason", why);
    }
    if (M % 16 || N % 8 || K % kStep)
      return fmt::format("shape {}x{}x{} (MxNxK) is not a multiple of the instruction's "
                         "16x8x{}",
                         M, N, K, kStep);
    // A dot of a chain: every warp takes whole rows, so the accumulator is
    // the next dot's A operand in registers and its row reductions stay in
    // the warp (--propagate-dot-layouts).
    if (chained_.count(&dot) && M % (16 * numWarps_) == 0) {
      wm_ = numWarps_, wn_ = 1;
      return {};
    }
    wm_ = 1, wn_ = 1;
    while (wm_ * wn_ < numWarps_) {
      bool mFits = M % (32 * wm_) == 0, nFits = N % (16 * wn_) == 0;
      if (mFits && (M / wm_ >= N / wn_ || !nFits))
        wm_ *= 2;
      else
        // Past the last whole piece the warps along N wrap: several compute
        // the same 16x8 pieces (Triton's choice too), which beats the FMA
        // path on the small tiles that get here (16x16 on 4 warps).
        wn_ *= 2;
    }
    return {};
  }

  bool isWgmmaArch() const { return arch_ == "sm_90a"; }

  // Empty when the fp8 dot `dot` (M x N x K) takes wgmma's fp8 form
  // (m64n<N>k32, fp32 accumulator, e4m3/e5m2 in either order, both operands
  // K-major in shared memory), else why not.
  std::string whyNotFp8Wgmma(Operation &dot, int64_t M, int64_t N, int64_t K) const {
    DType fa = dot.operand(0)->type()->dtype(), fb = dot.operand(1)->type()->dtype();
    auto wgmmaFormat = [](DType f) { return f == DType::F8E4NV || f == DType::F8E5; };
    if (!isWgmmaArch())
      return "fp8 tensor-core instructions need sm_90a (wgmma)";
    if (!fp8Wgmma_)
      return "fp8 wgmma is off (TK_FP8_WGMMA=0)";
    if (dot.result()->type()->dtype() != DType::F32)
      return "an fp16 accumulator takes fp16's path";
    if (!wgmmaFormat(fa) || !wgmmaFormat(fb))
      return "fp8e4b15 has no tensor-core instruction";
    if (std::string why = whyNotWarpGroups(M, N); !why.empty())
      return why;
    // Rows of K bytes that wgmma's 32/64/128-byte swizzle describes.
    if (K % 32 || !(K == 32 || K == 64 || K % 128 == 0))
      return fmt::format("K = {} is not 32, 64 or a multiple of 128 (fp8)", K);
    return {};
  }

  // The dot's fp8 operands widened exactly to fp16, in their layouts.
  void widenFp8(Operation &dot) {
    Builder b(ctx_);
    b.setInsertionPoint(&dot);
    for (unsigned i = 0; i < 2; ++i) {
      Value *v = dot.operand(i);
      Type *t = ctx_.tensor(v->type()->shape(), ctx_.scalar(DType::F16), layoutOf(v));
      dot.setOperand(i, b.create(Opcode::FPExt, dot.loc(), {v}, {t})->result());
    }
  }

  // whyNot for AMD GPUs: empty when `dot` goes to the matrix cores (MFMA on
  // gfx90a/gfx942, WMMA on gfx1100; lowering/codegen/AMDMatrixCore.h) and
  // amdInstr_, instr_, wm_, wn_ are set. fp16/bf16 operands with an fp32,
  // fp16 or bf16 accumulator (computed in fp32, rounded once as the
  // interpreter does), int8 with int32, fp32 as tf32 (rounded operands on
  // the fp32 MFMA). The piece is 32 x 32 where the tile gives every warp
  // one, else 16 x 16; the warps split M and N as on mma.sync, wrapping
  // along N when pieces run out.
  std::string whyNotMatrixCore(Operation &dot) {
    Type *a = dot.operand(0)->type(), *c = dot.result()->type();
    DType at = a->dtype(), ct = c->dtype();
    std::string precision = dot.attrs().getString("input_precision").value_or("ieee");
    if (at == DType::F32 && ct == DType::F32 && precision != "tf32")
      return fmt::format("input_precision \"{}\" is computed exactly with FMA", precision);
    bool floats = (at == DType::F16 || at == DType::BF16) &&
                  (ct == DType::F32 || ct == DType::F16 || ct == DType::BF16);
    bool types =
        floats || (at == DType::I8 && ct == DType::I32) || (at == DType::F32 && ct == DType::F32);
    if (!types || !amdMatrixInstr(arch_, at, 16))
      return fmt::format("{} x {} + {} has no matrix-core instruction on {} (fp16/bf16 + "
                         "fp32/fp16/bf16, int8 + int32{})",
                         a->elementType()->str(), a->elementType()->str(), c->elementType()->str(),
                         arch_, amdMatrixInstr(arch_, DType::F32, 16) ? ", tf32 + fp32" : "");
    int64_t M = a->shape()[0], K = a->shape()[1], N = c->shape()[1];
    // The largest piece that gives every warp one, else the smallest (the
    // most pieces; the warps past them wrap).
    const AMDMatrixInstr *fits = nullptr;
    for (int64_t n : {32, 16}) {
      const AMDMatrixInstr *in = amdMatrixInstr(arch_, at, n);
      if (!in || M % n || N % n || K % in->k)
        continue;
      fits = in;
      if ((M / n) * (N / n) >= numWarps_)
        break;
    }
    if (!fits) {
      const AMDMatrixInstr *small = amdMatrixInstr(arch_, at, 16);
      return fmt::format("shape {}x{}x{} (MxNxK) is not a multiple of the instruction's "
                         "16x16x{} ({})",
                         M, N, K, small->k, small->name);
    }
    amdInstr_ = fits;
    int64_t n = fits->n;
    instr_ = {n, n};
    wm_ = 1, wn_ = 1;
    while (wm_ * wn_ < numWarps_) {
      bool mFits = M % (2 * n * wm_) == 0, nFits = N % (2 * n * wn_) == 0;
      if (mFits && (M / wm_ >= N / wn_ || !nFits))
        wm_ *= 2;
      else
        wn_ *= 2; // past the last piece along N the warps wrap
    }
    return {};
  }

  // Empty when the warp groups can split an M x N wgmma result (whole
  // 64-row pieces per group, one instruction across N), else why not.
  std::string whyNotWarpGroups(int64_t M, int64_t N) const {
    if (numWarps_ % 4)
      return fmt::format("{} warps are not whole warp groups of 4", numWarps_);
    if (M % (16 * numWarps_))
      return fmt::format("M = {} is not a multiple of {} (64 rows per warp group, {} warps)", M,
                         16 * numWarps_, numWarps_);
    if (N % 8 || N > 256)
      return fmt::format("N = {} is not a multiple of 8 up to 256", N);
    return {};
  }

  // Empty when an fp16/bf16 dot of M x N x K fits wgmma (see the header),
  // else why not.
  std::string whyNotWgmma(int64_t M, int64_t N, int64_t K) const {
    if (std::string why = whyNotWarpGroups(M, N); !why.empty())
      return why;
    // A shared tile's row (K, or N for a row-major B) is 32, 64 or n x 128
    // bytes: a swizzle wgmma's descriptors describe.
    auto rowFits = [](int64_t elems) { return elems == 16 || elems == 32 || elems % 64 == 0; };
    if (K % 16 || !rowFits(K))
      return fmt::format("K = {} is not 16, 32 or a multiple of 64", K);
    if (!rowFits(N))
      return fmt::format("N = {} is not 16, 32 or a multiple of 64", N);
    return {};
  }

  IRContext &ctx_;
  int64_t numWarps_, warpSize_;
  std::string arch_;
  std::set<Operation *> chained_;
  bool fp8Wgmma_ = true; // the function's fp8_wgmma attribute (TK_FP8_WGMMA)
  int64_t wm_ = 1, wn_ = 1, version_ = 2;
  const AMDMatrixInstr *amdInstr_ = nullptr; // the AMD matrix-core instruction chosen
  std::vector<int64_t> instr_ = {16, 8};
  // (value, layout) -> the value re-created in that layout (epilogue).
  std::map<std::pair<Value *, const LayoutAttr *>, Value *> remat_;
  // The epilogue's conversion and the ops after it in its block.
  Operation *anchor_ = nullptr;
  std::set<Operation *> afterConv_;
};

// The dots of chains: those whose result reaches another dot's A operand or
// accumulator (through elementwise ops, broadcasts, expand_dims, reductions,
// conversions and the loops that carry them), and those other dots.
// Attention's S = Q K^T reaches P V's A (P = softmax(S)) and its
// accumulator (rescaled by exp2(m_old - m_new) of S's row maximum).
std::set<Operation *> chainedDots(const std::vector<Operation *> &dots) {
  std::set<Operation *> chained;
  for (Operation *dot : dots) {
    std::set<Value *> seen;
    std::vector<Value *> work = {dot->result()};
    while (!work.empty()) {
      Value *v = work.back();
      work.pop_back();
      if (!seen.insert(v).second)
        continue;
      for (Operation *u : v->users()) {
        if (u->is(Opcode::Dot)) {
          if (u != dot && (u->operand(0) == v || u->operand(2) == v)) {
            chained.insert(dot);
            chained.insert(u);
          }
          continue;
        }
        if (u->is(Opcode::Yield)) {
          Operation *loop = u->parentBlock()->parentOp();
          if (loop && loop->is(Opcode::For))
            for (unsigned i = 0; i < u->numOperands(); ++i)
              if (u->operand(i) == v) {
                work.push_back(loop->body().argument(i + 1));
                work.push_back(loop->result(i));
              }
          continue;
        }
        bool follows = u->hasTrait(OpTrait::Elementwise) || u->is(Opcode::Broadcast) ||
                       u->is(Opcode::ExpandDims) || u->is(Opcode::Reduce) ||
                       u->is(Opcode::ConvertLayout);
        if (follows)
          for (Value *r : u->results())
            work.push_back(r);
      }
    }
  }
  return chained;
}

// What an author can change about a dot that stays off the tensor cores
// (or off wgmma), from the reason whyNot / whyNotWgmma gave.
std::string dotFix(std::string_view reason) {
  if (reason.find("input_precision") != std::string_view::npos)
    return "input_precision=\"tf32\" (tk.dot's default) runs fp32 on the tensor cores when a "
           "10-bit mantissa is enough, or cast the operands to tk.float16/tk.bfloat16";
  if (reason.find("no tensor-core instruction") != std::string_view::npos ||
      reason.find("no matrix-core instruction") != std::string_view::npos)
    return "cast the operands to tk.float16 or tk.bfloat16 (fp32 accumulator), or int8 with an "
           "int32 accumulator";
  if (reason.find("not a multiple of the instruction") != std::string_view::npos)
    return "make the tile at least the instruction's (BLOCK_M a multiple of 16, BLOCK_N of 8, "
           "BLOCK_K of 16 for 16-bit operands) and mask or pad the edges";
  if (reason.find("warps cannot split") != std::string_view::npos)
    return "use fewer warps (num_warps) or a larger tile";
  if (reason.find("warp groups") != std::string_view::npos)
    return "num_warps = 4 or 8";
  if (reason.starts_with("M = "))
    return "BLOCK_M a multiple of 16 x num_warps (64 per warp group), or fewer warps";
  if (reason.starts_with("N = "))
    return "BLOCK_N a multiple of 8 up to 256 that is 16, 32 or a multiple of 64";
  if (reason.starts_with("K = "))
    return "BLOCK_K = 16, 32 or a multiple of 64";
  return "";
}

// The dot remark: the instruction and tile each dot runs on, and for one
// off the tensor cores (or, on sm_90a, off wgmma) the reason and the fix.
void remarkDot(RemarkSink &rs, Function &fn, Operation &dot) {
  Type *a = dot.operand(0)->type(), *c = dot.result()->type();
  int64_t M = a->shape()[0], K = a->shape()[1], N = c->shape()[1];
  int64_t warps = fn.attrs().getInt("num_warps").value_or(4);
  std::string shape =
      fmt::format("{}x{}x{} {} x {} + {}", M, N, K, a->elementType()->str(),
                  dot.operand(1)->type()->elementType()->str(), c->elementType()->str());
  if (std::optional<std::string> why = dot.attrs().getString("fp8_reason"))
    shape += fmt::format(" (fp8 operands widened to fp16: {})", *why);
  auto numbers = [&](Remark &r) -> Remark & {
    return r.with("m", M).with("n", N).with("k", K).with("num_warps", warps);
  };
  if (std::optional<std::string> why = dot.attrs().getString("fma_reason")) {
    std::string fix = dotFix(*why);
    numbers(rs.add(dot.loc(), "dot", RemarkStatus::Missed, fn.name(),
                   fmt::format("tk.dot {} runs on FMA (CUDA cores), not the tensor cores: {}{}{}",
                               shape, *why, fix.empty() ? "" : "; ", fix)));
    return;
  }
  if (auto *amd = dyn_cast<AMDMmaLayout>(cast<TensorType>(c)->layout())) {
    const AMDMatrixInstr *in =
        amdMatrixInstr(fn.attrs().getString("arch").value_or(""), a->dtype(), amd->n());
    numbers(rs.add(dot.loc(), "dot", RemarkStatus::Passed, fn.name(),
                   fmt::format("tk.dot {} runs on the matrix cores: {} (warps [{}, {}])", shape,
                               in ? in->name : "?", amd->warps()[0], amd->warps()[1])));
    return;
  }
  const MmaLayout *mma = mmaLayoutOf(dot.result()->type());
  if (!mma)
    return;
  int64_t kStep = a->dtype() == DType::I8 || isFp8(a->dtype()) ? 32
                  : a->dtype() == DType::F32                   ? 8
                                                               : 16;
  std::string instr =
      mma->version() == 3
          ? fmt::format("wgmma m64n{}k{}", mma->instr()[1], isFp8(a->dtype()) ? 32 : 16)
          : fmt::format("mma.sync m{}n{}k{}", mma->instr()[0], mma->instr()[1], kStep);
  std::string warpsText = fmt::format("warps [{}, {}]", mma->warps()[0], mma->warps()[1]);
  auto add = [&](RemarkStatus status, std::string message) {
    numbers(rs.add(dot.loc(), "dot", status, fn.name(), std::move(message)))
        .with("mma_version", mma->version())
        .with("warps_m", mma->warps()[0])
        .with("warps_n", mma->warps()[1])
        .with("instr_m", mma->version() == 3 ? 64 : mma->instr()[0])
        .with("instr_n", mma->instr()[1])
        .with("instr_k", kStep);
  };
  if (std::optional<std::string> why = dot.attrs().getString("wgmma_reason")) {
    std::string fix = dotFix(*why);
    add(RemarkStatus::Missed, fmt::format("tk.dot {} runs on {} ({}), not wgmma: {}{}{}", shape,
                                          instr, warpsText, *why, fix.empty() ? "" : "; ", fix));
    return;
  }
  add(RemarkStatus::Passed,
      fmt::format("tk.dot {} runs on the tensor cores: {} ({})", shape, instr, warpsText));
}

class AccelerateDotPass : public Pass {
public:
  AccelerateDotPass() : Pass(PassId::AccelerateDot) {}

  bool run(Module &module, DiagnosticEngine &diag) override {
    bool changed = false;
    for (auto &fn : module.functions()) {
      std::vector<Operation *> dots;
      fn->walk([&](Operation *op) {
        if (op->is(Opcode::Dot) && op->result()->type()->rank() == 2)
          dots.push_back(op);
      });
      // The GPU back end's dots (tensor cores and the FMA path alike) take
      // tiles of at least 16 in each dimension, as Triton's GPU compile
      // requires; the interpreter, like Triton's, computes smaller ones.
      bool small = false;
      for (Operation *dot : dots) {
        const std::vector<int64_t> &a = dot->operand(0)->type()->shape();
        const std::vector<int64_t> &b = dot->operand(1)->type()->shape();
        if (a[0] < 16 || a[1] < 16 || b[1] < 16) {
          diag.error(dot->loc(), fmt::format("tk.dot needs every dimension >= 16 on the GPU, got "
                                             "[{}, {}] x [{}, {}] (the interpreter computes "
                                             "smaller dots)",
                                             a[0], a[1], b[0], b[1]));
          small = true;
        }
      }
      if (small)
        return false;
      DotAccelerator acc(module.context(), fn->attrs().getInt("num_warps").value_or(4),
                         functionWarpSize(*fn), fn->attrs().getString("arch").value_or(""),
                         chainedDots(dots), fn->attrs().getBool("fp8_wgmma").value_or(true));
      for (Operation *dot : dots) {
        acc.run(*dot);
        if (RemarkSink *rs = module.remarks())
          remarkDot(*rs, *fn, *dot);
      }
      changed |= !dots.empty();
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createAccelerateDotPass() { return std::make_unique<AccelerateDotPass>(); }

} // namespace tk
