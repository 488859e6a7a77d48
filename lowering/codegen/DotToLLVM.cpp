// dot -> LLVM IR: C[M, N] = A[M, K] x B[K, N] + acc, on the CUDA cores (FMA)
// or on the tensor cores (mma.sync), with both operands staged through the
// shared-memory scratch.
//
// FMA (the result has a blocked layout; any dtype and shape): every thread
// writes its registers of A and B to shared memory (A transposed, [K][M], so
// the rows a thread needs for one k are one row of the buffer), a barrier,
// then for k = 0..K-1 each thread reads A[m][k] for each row m it holds and
// B[k][n] for each column n and does one multiply-add per register, in k
// order from the accumulator: products and sums in fp32 (fp64 when an
// operand or the accumulator is fp64; integers in the result's width), like
// the interpreter. A barrier, and the result is rounded once to its type.
//
// mma (the result has an mma layout, chosen by --accelerate-dot): A is
// written as [M][K] and B as [N][K] (K contiguous), or, for 16-bit types
// whose registers run along M (A) or N (B), as [K][M] / [K][N] read with
// ldmatrix .trans. Each buffer row is split into 16-byte chunks and chunk c
// of row r is stored at chunk c ^ ((r / per_phase) % max_phase), with
// per_phase = max(1, 128 / row bytes): the 8 rows one ldmatrix phase reads
// then fall in 8 different 16-byte bank groups (no conflicts). Per k step of
// the instruction (32 bytes of K) each warp loads its A pieces with
// ldmatrix.x4 and its B pieces with ldmatrix.x4 (two n pieces) or .x2, and
// issues one mma.sync per (16-row, 8-column) piece:
//
//   fp16/bf16: mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}...f32
//   tf32:      mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//              (operands rounded with cvt.rna.tf32.f32 as they are staged,
//              or after the read from a ring; the interpreter's rounding)
//   int8:      mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
//
// The accumulator registers are the mma layout's (ir/DotLayout.cpp): piece
// (i, j) is registers (k0, k1) = (2i..2i+1, 2j..2j+1).
//
// An operand that is a `ring_view` (the cp.async ring of --pipeline,
// lowering/SoftwarePipeline.cpp) is already in shared memory: stage
// index % S of the ring, laid out as the staging would write it (rows along
// the operand's slower register dimension, 16-byte chunks swizzled), so the
// dot skips its staging and barriers and reads the stage with ldmatrix. An
// fp32 (tf32) stage stored MN-major (A as [K][M], B as [K][N]: ldmatrix
// .trans moves 16-bit halves) is read one ld.shared per element instead, its
// swizzle in 32-byte units (scalarRingLayout).
// async_copy fills a stage: per run of up to 16 bytes a thread holds along
// the fastest dimension (as far as axis info proves contiguity, alignment and
// a uniform mask), one cp.async (.cg for 16 bytes, .ca for 4 and 8) with
// src-size 0 where the mask is off (the bytes become zeros), or a predicated
// 2-byte ld.global + st.shared for lone elements; then cp.async.commit_group.
// A destination depends only on the thread and the register: the lowering
// evaluates the layout's offset for every thread, and a copy whose offset
// differs from an earlier copy's by the same constant in all of them is that
// copy's address plus the constant (one formula per stage, not one per copy).
// async_wait is cp.async.wait_group N and bar.sync.
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
//
// wgmma (mma version 3, sm_90a; WgmmaDot): both operands stay in shared
// memory, in wgmma's canonical layout: the swizzle above (= wgmma's 128/64/32
// byte swizzle for rows of that length), rows over 128 bytes cut into
// 128-byte column blocks, and A's 8-row blocks permuted so that the
// accumulator has mma version 2's ThreadMap (wgmmaSharedRowBlock). Per k step
// of 16 and 64-row piece of the warp group, one
//
//   wgmma.mma_async.sync.aligned.m64n<N>k16.f32.f16.f16 {d...}, descA, descB, p, 1, 1, tA, tB;
//
// with 64-bit descriptors (wgmmaDescriptor), after wgmma.fence; then
// wgmma.commit_group and wgmma.wait_group (0, or 1 with wgmma_pending: the
// group stays in flight and the async_wait after the loop drains it). The
// ring's wait fences the cp.async writes for the async proxy
// (fence.proxy.async.shared::cta); a dot off the ring stages A and B at a
// 1024-aligned scratch address, fences and syncs itself.
#include "analysis/AxisInfo.h"
#include "lowering/SharedMemory.h"
#include "lowering/codegen/FunctionLowering.h"

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

namespace tk {
namespace {

constexpr int64_t kChunkBytes = 16;

// A 2-D buffer in the shared scratch: `rows` rows of `rowLen` elements of
// `elemBytes`, 16-byte chunks swizzled by row (see the header).
struct SmemTile {
  llvm::Value *base = nullptr; // i8 addrspace(3)*
  int64_t rows = 0, rowLen = 0, elemBytes = 0;
  int64_t perPhase = 1, maxPhase = 1;
  // wgmma's layout (see WgmmaDot): rows longer than 128 bytes are cut into
  // 128-byte column blocks, each a [rows][128 B] array; and A's M
  // coordinate (the row when permDim is 0, else the column) is permuted in
  // 8-row blocks for `permWarps` warps (wgmmaSharedRowBlock).
  bool blocks = false;
  int64_t permWarps = 0;
  unsigned permDim = 0;
  // The bytes the swizzle moves as one unit: 16 (ldmatrix reads 16-byte
  // rows), or 32 for a tf32 ring read one element per lane
  // (scalarRingLayout).
  int64_t unitBytes = kChunkBytes;

  int64_t bytes() const { return rows * rowLen * elemBytes; }
  int64_t vec() const { return std::max<int64_t>(1, kChunkBytes / elemBytes); }
  /// Elements of one row of a column block (the whole row without blocks).
  int64_t blockLen() const { return blocks ? std::min(rowLen, 128 / elemBytes) : rowLen; }

  /// Elements of one swizzle unit.
  int64_t unit() const { return std::max<int64_t>(1, unitBytes / elemBytes); }

  void swizzle() {
    int64_t rowBytes = blockLen() * elemBytes;
    perPhase = std::max<int64_t>(1, 128 / rowBytes);
    maxPhase = std::clamp<int64_t>(rowBytes / unitBytes, 1, 8);
  }

  /// The byte address of element (row, col) (i32 values).
  llvm::Value *address(llvm::IRBuilderBase &b, llvm::Value *row, llvm::Value *col) const {
    llvm::Value *elem = elementOffset(IRArith{b}, row, col);
    return b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(elem, b.getInt32(elemBytes)));
  }
  /// The same address as a byte offset from `base`, computed here.
  int64_t byteOffset(int64_t row, int64_t col) const {
    return elementOffset(IntArith{}, row, col) * elemBytes;
  }

private:
  // The arithmetic of the layout, once for both: on i32 values (emitting
  // instructions) and on integers (evaluating them), so the two cannot
  // disagree.
  struct IRArith {
    llvm::IRBuilderBase &b;
    llvm::Value *c(int64_t k) const { return b.getInt32(static_cast<uint32_t>(k)); }
    llvm::Value *add(llvm::Value *x, llvm::Value *y) const { return b.CreateAdd(x, y); }
    llvm::Value *mul(llvm::Value *x, int64_t k) const { return b.CreateMul(x, c(k)); }
    llvm::Value *div(llvm::Value *x, int64_t k) const { return b.CreateUDiv(x, c(k)); }
    llvm::Value *rem(llvm::Value *x, int64_t k) const { return b.CreateURem(x, c(k)); }
    llvm::Value *mask(llvm::Value *x, int64_t k) const { return b.CreateAnd(x, k); }
    llvm::Value *exor(llvm::Value *x, llvm::Value *y) const { return b.CreateXor(x, y); }
  };
  struct IntArith {
    int64_t add(int64_t x, int64_t y) const { return x + y; }
    int64_t mul(int64_t x, int64_t k) const { return x * k; }
    int64_t div(int64_t x, int64_t k) const { return x / k; }
    int64_t rem(int64_t x, int64_t k) const { return x % k; }
    int64_t mask(int64_t x, int64_t k) const { return x & k; }
    int64_t exor(int64_t x, int64_t y) const { return x ^ y; }
  };

  /// Element (row, col)'s offset in elements (see the header).
  template <class Arith, class V> V elementOffset(const Arith &a, V row, V col) const {
    if (permWarps) {
      V &m = permDim == 0 ? row : col;
      V block = a.div(m, 8);
      int64_t w = permWarps;
      V warp = a.rem(block, w), t = a.div(block, w);
      V to = a.add(a.mul(a.add(a.mul(a.div(t, 2), w / 4), a.div(warp, 4)), 8),
                   a.add(a.mul(a.rem(warp, 4), 2), a.rem(t, 2)));
      m = a.add(a.mul(to, 8), a.rem(m, 8));
    }
    int64_t len = blockLen();
    V blockOffset{};
    if (len < rowLen) {
      blockOffset = a.mul(a.div(col, len), rows * len);
      col = a.rem(col, len);
    }
    V c = col;
    if (maxPhase > 1) {
      V phase = a.mask(a.div(row, perPhase), maxPhase - 1);
      V chunk = a.div(col, unit());
      c = a.add(a.mul(a.exor(chunk, phase), unit()), a.rem(col, unit()));
    }
    V elem = a.add(a.mul(row, len), c);
    if (len < rowLen)
      elem = a.add(elem, blockOffset);
    return elem;
  }
};

// Whether `v` is a stage of a cp.async ring (see the header).
bool isRingView(Value *v) {
  Operation *def = v->definingOp();
  return def && def->is(Opcode::RingView);
}

// The dots that read a stage of `ring` (through its ring_views), each with
// the operand (0: A, 1: B) it reads the stage as.
std::vector<std::pair<Operation *, unsigned>> ringReaders(Value *ring) {
  std::vector<std::pair<Operation *, unsigned>> out;
  for (Operation *view : ring->users())
    if (view->is(Opcode::RingView))
      for (Operation *dot : view->result()->users())
        if (dot->is(Opcode::Dot))
          for (unsigned i = 0; i < 2; ++i)
            if (dot->operand(i) == view->result())
              out.push_back({dot, i});
  return out;
}

// A ring that feeds wgmma (--pipeline aligns it to 1024 bytes) takes its
// layout: 128-byte column blocks, and A's rows permuted (see SmemTile).
void wgmmaRingLayout(Value *ring, unsigned fast, SmemTile &t) {
  Operation *alloc = ring->definingOp();
  if (!alloc || alloc->attrs().getInt("align").value_or(16) < 1024)
    return;
  t.blocks = true;
  for (auto [dot, operand] : ringReaders(ring)) {
    // A wgmma_native dot reads A in its own row order (wgmmaRowsInOrder).
    if (operand == 0 && isWgmmaLayout(dot->result()->type()) &&
        !dot->attrs().getBool("wgmma_native").value_or(false)) {
      t.permWarps = mmaLayoutOf(dot->result()->type())->warps()[0];
      t.permDim = fast == 1 ? 0 : 1;
    }
  }
}

// A ring of fp32 (tf32) tiles that an mma.sync dot reads one element per
// lane (MN-major: A stored [K][M], B [K][N], i.e. the operand's registers
// run along the tile's dimension `fast` = 0 for A, 1 for B; ldmatrix .trans
// moves 16-bit elements only) swizzles 32-byte units: lane (g, t) of a warp
// reads row k0 + t (+ 4), column c0 + g, so the 8-column segments (32 bytes)
// of the 4 rows land in 4 different units of the 128-byte bank line. With
// 16-byte units rows t and t ^ 1 share their banks (2-way conflicts).
void scalarRingLayout(Value *ring, unsigned fast, SmemTile &t) {
  if (t.elemBytes != 4)
    return;
  for (auto [dot, operand] : ringReaders(ring)) {
    const MmaLayout *mma = mmaLayoutOf(dot->result()->type());
    if (mma && mma->version() == 2 && operand == fast)
      t.unitBytes = 2 * kChunkBytes;
  }
}

// The stage `idx` % S of `ring` (a local_alloc of shape [S, ...]) holding a
// tile of the shape of `tile` whose registers run fastest along dimension
// `fast`.
SmemTile ringStage(FunctionLowering &fl, Value *ring, llvm::Value *idx, Type *tile, unsigned fast) {
  llvm::IRBuilderBase &b = fl.builder();
  // The ring's element size: `tile` may be the tensor of pointers of an
  // async_copy.
  SmemTile t{nullptr, tile->shape()[1 - fast], tile->shape()[fast],
             dtypeBytes(ring->type()->dtype())};
  wgmmaRingLayout(ring, fast, t);
  scalarRingLayout(ring, fast, t);
  t.swizzle();
  llvm::Value *i = b.CreateZExtOrTrunc(idx, b.getInt32Ty());
  llvm::Value *slot = b.CreateURem(i, b.getInt32(static_cast<uint32_t>(ring->type()->shape()[0])));
  t.base = b.CreateGEP(b.getInt8Ty(), fl.get(ring)[0],
                       b.CreateMul(slot, b.getInt32(static_cast<uint32_t>(t.bytes()))));
  return t;
}

// The stage a ring_view `view` reads: its ring's slot `idx` (by default the
// view's own index), laid out the way the view's registers run.
SmemTile viewStage(FunctionLowering &fl, Value *view, llvm::Value *idx = nullptr) {
  Operation *def = view->definingOp();
  return ringStage(fl, def->operand(0), idx ? idx : fl.get(def->operand(1))[0], view->type(),
                   fl.threadMap(view).order()[0]);
}

// One PTX statement without operands, kept in place.
void ptxStatement(llvm::IRBuilderBase &b, const char *text) {
  auto *fnTy = llvm::FunctionType::get(b.getVoidTy(), {}, false);
  b.CreateCall(llvm::InlineAsm::get(fnTy, text, "~{memory}", true), {});
}

// Makes this thread's generic-proxy writes to shared memory (st.shared,
// cp.async) visible to the async proxy that wgmma reads through.
void fenceProxyAsync(llvm::IRBuilderBase &b) { ptxStatement(b, "fence.proxy.async.shared::cta;"); }

// wgmma.wait_group `pending`, with the accumulator registers passed through
// it (in chunks of at most 128) so nothing reads them before the wait.
void wgmmaWait(llvm::IRBuilderBase &b, Regs &acc, int64_t pending) {
  std::string text = fmt::format("wgmma.wait_group.sync.aligned {};", pending);
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

// Rounds an fp32 value to tf32 (nearest, ties away), as the interpreter.
llvm::Value *roundTF32(llvm::IRBuilderBase &b, llvm::Value *v) {
  auto *fnTy = llvm::FunctionType::get(b.getInt32Ty(), {b.getFloatTy()}, false);
  llvm::Value *bits =
      b.CreateCall(llvm::InlineAsm::get(fnTy, "cvt.rna.tf32.f32 $0, $1;", "=r,f", false), {v});
  return b.CreateBitCast(bits, b.getFloatTy());
}

// cp.async.wait_group `pending`, then a barrier: the groups committed
// before the last `pending` have landed and every thread sees them.
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
    wgmmaWait(b, regs, 0);
    fl.set(loop->result(r), std::move(regs));
    waited = true;
  }
  if (!waited)
    ptxStatement(b, "wgmma.wait_group.sync.aligned 0;");
  llvm::LLVMContext &ctx = b.getContext();
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  auto *other = llvm::BasicBlock::Create(ctx, "wgmma.drained.other", fn);
  auto *next = llvm::BasicBlock::Create(ctx, "wgmma.drained", fn);
  auto *predTy = llvm::FunctionType::get(b.getInt1Ty(), {}, false);
  llvm::Value *taken =
      b.CreateCall(llvm::InlineAsm::get(predTy, "setp.eq.u32 $0, 0, 0;", "=b", false), {});
  b.CreateCondBr(taken, next, other);
  b.SetInsertPoint(other);
  b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(next);
}

// With `fenceAsync` the landed bytes are also made visible to wgmma; with a
// `drain` loop (wgmma_drain) the wgmma groups its dots left in flight are
// waited for and the loop's wgmma accumulators re-read after that wait,
// before the barrier that lets others reuse the ring.
void asyncWait(FunctionLowering &fl, int64_t pending, bool fenceAsync = false, bool drain = false,
               Operation *loop = nullptr) {
  llvm::IRBuilderBase &b = fl.builder();
  if (drain)
    drainWgmma(fl, loop);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                    {b.getInt32(static_cast<uint32_t>(pending))});
  if (fenceAsync)
    fenceProxyAsync(b);
  fl.target().barrier(b);
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

} // namespace

// Writes the registers of `v` (rank 2) into `tile`: buffer row = coordinate
// `rowDim` of the element, buffer column = the other coordinate. Runs of
// registers consecutive along the column dimension go out as one vector of
// at most 16 bytes and at most `baseAlign`, the alignment of the tile's base.
static void stageOperand(FunctionLowering &fl, Value *v, const SmemTile &tile, unsigned rowDim,
                         bool tf32, int64_t baseAlign) {
  llvm::IRBuilder<> &b = fl.builder();
  unsigned colDim = 1 - rowDim;
  ThreadMap map = fl.threadMap(v);
  const Regs &regs = fl.get(v);
  std::vector<std::vector<llvm::Value *>> coords = fl.coordinates(v);
  int64_t run = 1;
  if (map.order()[0] == colDim)
    run = std::min({map.dim(colDim).size, tile.vec(), map.dim(colDim).extent,
                    std::max<int64_t>(1, baseAlign / tile.elemBytes)});
  for (int64_t r = 0; r < map.numRegisters(); ++r) {
    if (map.registerIndex(r)[colDim] % run)
      continue;
    llvm::Value *addr = tile.address(b, coords[r][rowDim], coords[r][colDim]);
    Regs elems;
    for (int64_t i = 0; i < run; ++i)
      elems.push_back(tf32 ? roundTF32(b, regs[r + i]) : regs[r + i]);
    llvm::Value *val = run == 1 ? elems.front() : vectorOf(b, elems);
    b.CreateAlignedStore(val, addr, llvm::Align(run * tile.elemBytes));
  }
}

namespace {

// The FMA dot (see the header).
class FmaDot {
public:
  FmaDot(FunctionLowering &fl, Operation &op) : fl_(fl), b_(fl.builder()), op_(op) {}

  bool run() {
    Value *a = op_.operand(0), *bv = op_.operand(1), *res = op_.result();
    Type *aElem = a->type()->elementType();
    int64_t M = a->type()->shape()[0], K = a->type()->shape()[1], N = bv->type()->shape()[1];
    bool isInt = aElem->isIntLike();
    bool tf32 = aElem->dtype() == DType::F32 &&
                op_.attrs().getString("input_precision").value_or("ieee") == "tf32";
    llvm::Type *compute;
    if (isInt)
      compute = fl_.elementType(res->type());
    else if (aElem->dtype() == DType::F64 || op_.operand(2)->type()->dtype() == DType::F64)
      compute = b_.getDoubleTy();
    else
      compute = b_.getFloatTy();
    int64_t eb = dtypeBytes(aElem->dtype());
    SmemTile ta{fl_.scratch(), K, M, eb}, tb{fl_.scratch(), K, N, eb};
    tb.base = b_.CreateGEP(b_.getInt8Ty(), fl_.scratch(), b_.getInt32(ta.bytes()));
    stageOperand(fl_, a, ta, 1, tf32, kChunkBytes);
    stageOperand(fl_, bv, tb, 0, tf32, ta.bytes() & -ta.bytes());
    fl_.target().barrier(b_);

    ThreadMap map = fl_.threadMap(res);
    std::vector<std::vector<llvm::Value *>> coords = fl_.coordinates(res);
    int64_t rows = map.dim(0).perThread, cols = map.dim(1).perThread;
    std::vector<llvm::Value *> rowOf(rows), colOf(cols);
    for (int64_t i = 0; i < rows; ++i)
      rowOf[i] = coords[map.registerOf({i, 0})][0];
    for (int64_t j = 0; j < cols; ++j)
      colOf[j] = coords[map.registerOf({0, j})][1];

    bool accSigned = isSigned(op_.operand(2)->type()->dtype());
    Regs acc;
    for (llvm::Value *c : fl_.get(op_.operand(2)))
      acc.push_back(convert(c, compute, accSigned));
    llvm::Type *storage = fl_.elementType(a->type());
    bool aSigned = isSigned(aElem->dtype());
    std::vector<llvm::Value *> av(rows), bvals(cols);
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t i = 0; i < rows; ++i)
        av[i] = convert(b_.CreateLoad(storage, ta.address(b_, b_.getInt32(k), rowOf[i])), compute,
                        aSigned);
      for (int64_t j = 0; j < cols; ++j)
        bvals[j] = convert(b_.CreateLoad(storage, tb.address(b_, b_.getInt32(k), colOf[j])),
                           compute, aSigned);
      for (int64_t r = 0; r < map.numRegisters(); ++r) {
        std::vector<int64_t> idx = map.registerIndex(r);
        llvm::Value *x = av[idx[0]], *y = bvals[idx[1]];
        acc[r] = isInt ? b_.CreateAdd(acc[r], b_.CreateMul(x, y))
                       : b_.CreateIntrinsic(llvm::Intrinsic::fma, {compute}, {x, y, acc[r]});
      }
    }
    fl_.target().barrier(b_);
    llvm::Type *outTy = fl_.elementType(res->type());
    for (llvm::Value *&v : acc)
      v = convert(v, outTy, true);
    fl_.set(res, std::move(acc));
    return true;
  }

private:
  llvm::Value *convert(llvm::Value *v, llvm::Type *to, bool isSignedInt) {
    llvm::Type *from = v->getType();
    if (from == to)
      return v;
    if (from->isIntegerTy())
      return isSignedInt ? b_.CreateSExtOrTrunc(v, to) : b_.CreateZExtOrTrunc(v, to);
    return b_.CreateFPCast(v, to);
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
};

// The tensor-core dot (see the header).
class MmaDot {
public:
  MmaDot(FunctionLowering &fl, Operation &op, const MmaLayout *mma)
      : fl_(fl), b_(fl.builder()), op_(op), mma_(mma) {}

  bool run() {
    Value *a = op_.operand(0), *bv = op_.operand(1), *res = op_.result();
    DType dt = a->type()->dtype();
    M_ = a->type()->shape()[0], K_ = a->type()->shape()[1], N_ = bv->type()->shape()[1];
    wm_ = mma_->warps()[0], wn_ = mma_->warps()[1];
    eb_ = dtypeBytes(dt);
    kStep_ = 32 / eb_;
    if (M_ % (16 * wm_) || N_ % (8 * wn_) || K_ % kStep_ || fl_.numWarps() != wm_ * wn_)
      return fl_.unsupported(op_, fmt::format("on the tensor cores with shape {}x{}x{} and {}", M_,
                                              N_, K_, mma_->str()));
    ringA_ = isRingView(a), ringB_ = isRingView(bv);
    // 16-bit operands whose registers run along M (A) or N (B) are stored
    // that way and read with ldmatrix .trans; others K-contiguous. A tf32
    // ring stage is stored the way its copies wrote it: MN-major ones are
    // read one element per lane (loadElement), K-major ones with ldmatrix.
    transA_ = threadMapOrder(a) == 0 && (eb_ == 2 || (eb_ == 4 && ringA_));
    transB_ = threadMapOrder(bv) == 1 && (eb_ == 2 || (eb_ == 4 && ringB_));
    numMi_ = M_ / (16 * wm_), numNi_ = N_ / (8 * wn_);
    SmemTile ta{fl_.scratch(), transA_ ? K_ : M_, transA_ ? M_ : K_, eb_};
    SmemTile tb{fl_.scratch(), transB_ ? K_ : N_, transB_ ? N_ : K_, eb_};
    if (!ringA_)
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
    if (ringA_ && ringB_) {
      idx = fl_.get(a->definingOp()->operand(1))[0];
      std::tie(ta, tb) = ringTiles(idx);
    } else if (ringA_) {
      ta = viewStage(fl_, a);
    } else if (ringB_) {
      tb = viewStage(fl_, bv);
    }
    bool tf32 = dt == DType::F32;
    bool staged = !ringA_ || !ringB_;
    if (!ringA_)
      stageOperand(fl_, a, ta, transA_ ? 1 : 0, tf32, kChunkBytes);
    if (!ringB_)
      stageOperand(fl_, bv, tb, transB_ ? 0 : 1, tf32, kChunkBytes);
    if (staged)
      fl_.target().barrier(b_);

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
          Regs d = issueMma(dt, cur.a[mi], cur.b[ni], c);
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
    warpM_ = b_.CreateURem(b_.CreateUDiv(warp, b_.getInt32(wn_)), b_.getInt32(wm_));
    warpN_ = b_.CreateURem(warp, b_.getInt32(wn_));
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

  Regs ldmatrix(llvm::Value *addr, bool x4, bool trans) {
    llvm::Intrinsic::ID id =
        x4 ? (trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
           : (trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                    : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
    llvm::Value *call = b_.CreateIntrinsic(id, {addr->getType()}, {addr});
    Regs out;
    for (unsigned i = 0; i < (x4 ? 4u : 2u); ++i)
      out.push_back(b_.CreateExtractValue(call, {i}));
    return out;
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
    return roundRing(ldmatrix(addr, true, transA_), ringA_);
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
    return roundRing(ldmatrix(addr, pair, transB_), ringB_);
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
      v = b_.CreateBitCast(roundTF32(b_, b_.CreateBitCast(v, b_.getFloatTy())), b_.getInt32Ty());
    return r;
  }

  Regs issueMma(DType dt, const Regs &a, const Regs &bb, const Regs &c) {
    std::string shape, types;
    switch (dt) {
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
      shape = "m16n8k32", types = "s32.u8.u8.s32";
      break;
    default:
      shape = "m16n8k32", types = "s32.s8.s8.s32";
      break;
    }
    bool isInt = dt == DType::I8 || dt == DType::U8;
    llvm::Type *accTy = isInt ? b_.getInt32Ty() : b_.getFloatTy();
    std::string text = fmt::format("mma.sync.aligned.{}.row.col.{} {{$0, $1, $2, $3}}, "
                                   "{{$4, $5, $6, $7}}, {{$8, $9}}, {{$10, $11, $12, $13}};",
                                   shape, types);
    std::string cons = isInt ? "=r,=r,=r,=r" : "=f,=f,=f,=f";
    cons += ",r,r,r,r,r,r,0,1,2,3";
    std::vector<llvm::Type *> params(6, b_.getInt32Ty());
    params.insert(params.end(), 4, accTy);
    auto *retTy = llvm::StructType::get(b_.getContext(), {accTy, accTy, accTy, accTy});
    auto *fnTy = llvm::FunctionType::get(retTy, params, false);
    std::vector<llvm::Value *> args = {a[0],  a[1], a[2], a[3], bb[0],
                                       bb[1], c[0], c[1], c[2], c[3]};
    llvm::Value *call = b_.CreateCall(llvm::InlineAsm::get(fnTy, text, cons, false), args);
    Regs out;
    for (unsigned i = 0; i < 4; ++i)
      out.push_back(b_.CreateExtractValue(call, {i}));
    return out;
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
  const MmaLayout *mma_;
  int64_t M_ = 0, N_ = 0, K_ = 0, wm_ = 1, wn_ = 1, eb_ = 2, kStep_ = 16, numMi_ = 0, numNi_ = 0;
  bool transA_ = false, transB_ = false, ringA_ = false, ringB_ = false;
  llvm::Value *warpM_ = nullptr, *warpN_ = nullptr, *quad_ = nullptr, *rowInMatrix_ = nullptr;
  llvm::Value *laneGroup_ = nullptr, *laneInGroup_ = nullptr;
};

// The wgmma dot (mma version 3, see the header): both operands in shared
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
    if ((dt != DType::F16 && dt != DType::BF16) || M_ % (16 * W_) || K_ % 16 ||
        mma_->instr()[1] != N_ || fl_.numWarps() != W_)
      return fl_.unsupported(
          op_, fmt::format("on wgmma with shape {}x{}x{} and {}", M_, N_, K_, mma_->str()));
    // MN-major: A's registers run along M, B's along N (as the ring or the
    // staging stores them); K-major otherwise.
    mnA_ = fl_.threadMap(a).order()[0] == 0;
    mnB_ = fl_.threadMap(bv).order()[0] == 1;
    bool ringA = isRingView(a), ringB = isRingView(bv);
    SmemTile ta, tb;
    if (ringA)
      ta = viewStage(fl_, a);
    if (ringB)
      tb = viewStage(fl_, bv);
    bool staged = !ringA || !ringB;
    if (staged) {
      // The scratch base rounded up to 1024 (--allocate-shared counts the
      // extra bytes).
      llvm::Value *raw = fl_.scratch();
      llvm::Value *addr = b_.CreatePtrToInt(raw, b_.getInt32Ty());
      llvm::Value *pad = b_.CreateAnd(b_.CreateSub(b_.getInt32(0), addr), b_.getInt32(1023));
      llvm::Value *base = b_.CreateGEP(b_.getInt8Ty(), raw, pad);
      if (!ringA) {
        ta = SmemTile{base, mnA_ ? K_ : M_, mnA_ ? M_ : K_, 2};
        ta.blocks = true, ta.permWarps = W_, ta.permDim = mnA_ ? 1 : 0;
        ta.swizzle();
        stageOperand(fl_, a, ta, mnA_ ? 1 : 0, false, kChunkBytes);
        base = b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(ta.bytes())));
      }
      if (!ringB) {
        tb = SmemTile{base, mnB_ ? K_ : N_, mnB_ ? N_ : K_, 2};
        tb.blocks = true;
        tb.swizzle();
        stageOperand(fl_, bv, tb, mnB_ ? 0 : 1, false, kChunkBytes);
      }
      fenceProxyAsync(b_);
      fl_.target().barrier(b_);
    }

    ThreadMap map = fl_.threadMap(res);
    Regs acc = fl_.get(op_.operand(2));
    int64_t pieces = M_ / (16 * W_), groups = W_ / 4;
    llvm::Value *group = b_.CreateUDiv(fl_.warpId(), b_.getInt32(4));
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
    ptxStatement(b_, "wgmma.fence.sync.aligned;");
    std::vector<llvm::Value *> descB;
    for (int64_t kk = 0; kk < K_ / 16; ++kk)
      descB.push_back(descriptor(tb, mnB_, b_.getInt32(0), kk));
    for (int64_t mi = 0; mi < pieces; ++mi) {
      llvm::Value *piece = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(mi * groups)), group);
      std::vector<llvm::Value *> descA;
      for (int64_t kk = 0; kk < K_ / 16; ++kk)
        descA.push_back(descriptor(ta, mnA_, b_.CreateMul(piece, b_.getInt32(64)), kk));
      Regs c;
      for (int64_t r : regsOf[mi])
        c.push_back(acc[r]);
      Regs d = issue(dt, descA, descB, c);
      for (size_t i = 0; i < d.size(); ++i)
        acc[regsOf[mi][i]] = d[i];
    }
    ptxStatement(b_, "wgmma.commit_group.sync.aligned;");
    // wgmma_pending = 1 (--pipeline, an accumulator only the loop carries):
    // this group stays in flight into the next iteration; the async_wait
    // after the loop drains it.
    wgmmaWait(b_, acc, op_.attrs().getInt("wgmma_pending").value_or(0));
    if (staged)
      fl_.target().barrier(b_);
    fl_.set(res, std::move(acc));
    return true;
  }

private:
  // The descriptor of the 64 x 16 (A) or 16 x N (B) matrix of k step `kk`
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

  // The K / 16 wgmma.mma_async m64n<N>k16 of one 64-row piece, d = A x B +
  // d for each k step's descriptors in turn, as one asm statement: N / 2
  // fp32 registers per thread, tied in and out once for the whole chain
  // (one statement per k step cost LLVM's instruction selection and
  // register coalescing four times the accumulator's operands, for the same
  // PTX).
  Regs issue(DType dt, const std::vector<llvm::Value *> &descA,
             const std::vector<llvm::Value *> &descB, const Regs &c) {
    const char *ty = dt == DType::BF16 ? "bf16" : "f16";
    size_t n = c.size(), steps = descA.size();
    std::string regs;
    for (size_t i = 0; i < n; ++i)
      regs += fmt::format("{}${}", i ? ", " : "", i);
    // Operands: the n outputs, the steps A and steps B descriptors, the
    // scale-d flag, then the n tied inputs.
    size_t flag = n + 2 * steps;
    std::string text = fmt::format("{{ .reg .pred p; setp.ne.b32 p, ${}, 0;", flag);
    for (size_t k = 0; k < steps; ++k)
      text += fmt::format("\n\twgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{} {{{}}}, ${}, ${}, "
                          "p, 1, 1, {}, {};",
                          N_, ty, ty, regs, n + k, n + steps + k, mnA_ ? 1 : 0, mnB_ ? 1 : 0);
    text += "\n\t}";
    std::string cons;
    for (size_t i = 0; i < n; ++i)
      cons += "=f,";
    for (size_t i = 0; i < 2 * steps; ++i)
      cons += "l,";
    cons += "r";
    for (size_t i = 0; i < n; ++i)
      cons += fmt::format(",{}", i);
    std::vector<llvm::Type *> params(2 * steps, b_.getInt64Ty());
    params.push_back(b_.getInt32Ty());
    params.insert(params.end(), n, b_.getFloatTy());
    std::vector<llvm::Type *> outs(n, b_.getFloatTy());
    auto *fnTy =
        llvm::FunctionType::get(llvm::StructType::get(b_.getContext(), outs), params, false);
    std::vector<llvm::Value *> args(descA);
    args.insert(args.end(), descB.begin(), descB.end());
    args.push_back(b_.getInt32(1));
    args.insert(args.end(), c.begin(), c.end());
    llvm::Value *call = b_.CreateCall(llvm::InlineAsm::get(fnTy, text, cons, true), args);
    Regs out;
    for (unsigned i = 0; i < n; ++i)
      out.push_back(b_.CreateExtractValue(call, {i}));
    return out;
  }

  FunctionLowering &fl_;
  llvm::IRBuilder<> &b_;
  Operation &op_;
  const MmaLayout *mma_;
  int64_t M_ = 0, N_ = 0, K_ = 0, W_ = 4;
  bool mnA_ = false, mnB_ = false;
};

} // namespace

// async_copy ring, index, ptr [, mask] (see the header).
static bool lowerAsyncCopy(FunctionLowering &fl, Operation &op) {
  llvm::IRBuilder<> &b = fl.builder();
  Value *ptr = op.operand(2), *mask = op.numOperands() > 3 ? op.operand(3) : nullptr;
  Type *tile = ptr->type();
  auto *pt = dyn_cast<PointerType>(tile->elementType());
  int64_t eb = pt ? dtypeBytes(pt->pointee()->dtype()) : 0;
  if (tile->rank() != 2 || (eb != 2 && eb != 4))
    return fl.unsupported(op, "other than of a 2-D tile of 16- or 32-bit elements");
  ThreadMap map = fl.threadMap(ptr);
  unsigned fast = map.order()[0];
  SmemTile t = ringStage(fl, op.operand(0), fl.get(op.operand(1))[0], tile, fast);
  const ThreadMap::Dim &d = map.dim(fast);
  const AxisInfo &info = fl.axis().get(ptr);
  int64_t vec = std::min({d.size, d.extent, info.contiguity[fast],
                          std::max<int64_t>(1, info.divisibility[fast] / eb), kChunkBytes / eb});
  if (mask)
    vec = std::min(vec, fl.axis().maskAlignment(mask, fast));
  int64_t p = 1;
  while (p * 2 <= vec)
    p *= 2;
  vec = p;
  const Regs &ptrs = fl.get(ptr);
  const Regs *preds = mask ? &fl.get(mask) : nullptr;
  std::vector<std::vector<llvm::Value *>> coords = fl.coordinates(ptr);
  llvm::Type *global = llvm::PointerType::get(b.getContext(), 1);
  int64_t bytes = vec * eb;
  llvm::Intrinsic::ID copy = bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                             : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                          : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  // Each copy's destination is a function of the thread and the register
  // only; a register whose offset differs from an earlier copy's by the same
  // constant in every thread of the program (checked here, thread by thread)
  // takes that copy's address plus the constant, instead of the whole
  // permute-and-swizzle formula again (which LLVM would fold, but at a cost
  // in compile time).
  // ThreadMap::coords, with the thread's part of each coordinate computed
  // once per thread.
  std::vector<int64_t> threadRow, threadCol;
  for (int64_t tid = 0; tid < map.numThreads(); ++tid) {
    threadRow.push_back(map.threadOffset(1 - fast, tid % kWarpSize, tid / kWarpSize));
    threadCol.push_back(map.threadOffset(fast, tid % kWarpSize, tid / kWarpSize));
  }
  auto offsets = [&](int64_t r) {
    int64_t row = map.registerOffset(r, 1 - fast), col = map.registerOffset(r, fast);
    int64_t rows = map.dim(1 - fast).extent, cols = map.dim(fast).extent;
    std::vector<int64_t> out(threadRow.size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = t.byteOffset((row + threadRow[i]) % rows, (col + threadCol[i]) % cols);
    return out;
  };
  struct Anchor {
    std::vector<int64_t> offsets;
    llvm::Value *address;
  };
  std::vector<Anchor> anchors;
  auto destination = [&](int64_t r) -> llvm::Value * {
    std::vector<int64_t> mine = offsets(r);
    for (const Anchor &a : anchors) {
      int64_t delta = mine[0] - a.offsets[0];
      bool constant = true;
      for (size_t i = 1; i < mine.size() && constant; ++i)
        constant = mine[i] - a.offsets[i] == delta;
      if (constant)
        return delta == 0 ? a.address : b.CreateGEP(b.getInt8Ty(), a.address, b.getInt32(delta));
    }
    llvm::Value *address = t.address(b, coords[r][1 - fast], coords[r][fast]);
    anchors.push_back({std::move(mine), address});
    return address;
  };
  for (int64_t r = 0; r < map.numRegisters(); r += vec) {
    llvm::Value *dst = destination(r);
    llvm::Value *src = ptrs[r];
    if (src->getType() != global)
      src = b.CreateAddrSpaceCast(src, global);
    llvm::Value *on = preds ? (*preds)[r] : b.getTrue();
    if (bytes >= 4) {
      llvm::Value *size =
          b.CreateSelect(on, b.getInt32(static_cast<uint32_t>(bytes)), b.getInt32(0));
      b.CreateIntrinsic(copy, {}, {dst, src, size});
      continue;
    }
    // One element: a predicated load (0 where the mask is off), then a store.
    auto *fnTy = llvm::FunctionType::get(b.getInt16Ty(), {global, b.getInt16Ty()}, false);
    const char *text = "{ .reg .pred p; setp.ne.b16 p, $2, 0; mov.b16 $0, 0; "
                       "@p ld.global.b16 $0, [$1]; }";
    llvm::Value *v = b.CreateCall(llvm::InlineAsm::get(fnTy, text, "=h,l,h", true),
                                  {src, b.CreateZExt(on, b.getInt16Ty())});
    b.CreateAlignedStore(v, dst, llvm::Align(2));
  }
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  return true;
}

bool FunctionLowering::lowerDot(Operation &op) {
  if (op.is(Opcode::AsyncCopy))
    return lowerAsyncCopy(*this, op);
  if (op.is(Opcode::AsyncWait)) {
    // The drained loop: --pipeline puts this wait right after it; should a
    // later pass put ops in between, the nearest `for` before it (without
    // one the wait still happens, the registers just not passed through).
    // The second wait after a loop of wgmma_native dots puts their rows in
    // order; it finds its loop the same way (the drain's wait sits between).
    bool drain = op.attrs().getBool("wgmma_drain").value_or(false);
    bool native = op.attrs().getInt("wgmma_native_bytes").value_or(0) > 0;
    Operation *loop = drain || native ? op.prevNode() : nullptr;
    while (loop && !loop->is(Opcode::For))
      loop = loop->prevNode();
    asyncWait(*this, op.attrs().getInt("pending").value_or(0),
              op.attrs().getBool("fence_async").value_or(false), drain, drain ? loop : nullptr);
    if (native && loop)
      wgmmaRowsInOrder(*this, *loop);
    return true;
  }
  if (op.is(Opcode::RingView)) {
    // No registers: the dot reads the stage from shared memory.
    llvm::Type *elem = elementType(op.result()->type());
    set(op.result(), Regs(static_cast<size_t>(threadMap(op.result()).numRegisters()),
                          llvm::PoisonValue::get(elem)));
    return true;
  }
  Value *a = op.operand(0), *res = op.result();
  if (a->type()->rank() != 2)
    return unsupported(op, "of rank other than 2");
  if (layoutOf(op.operand(2)) != layoutOf(res))
    return unsupported(op, "whose accumulator layout differs from its result's (run "
                           "--accelerate-dot)");
  if (auto *mma = dyn_cast<MmaLayout>(layoutOf(res)))
    return mma->version() == 3 ? WgmmaDot(*this, op, mma).run() : MmaDot(*this, op, mma).run();
  if (!isa<BlockedLayout>(layoutOf(res)))
    return unsupported(op, "with a result layout other than blocked or mma");
  return FmaDot(*this, op).run();
}

} // namespace tk
