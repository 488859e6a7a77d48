// The dot's operands in shared memory (DotLowering.h): staging a register
// operand into the scratch, the stages of the cp.async ring of --pipeline
// and their layouts, and async_copy / async_wait, which fill the ring and wait
// for it.
//
// A ring stage is laid out as the staging would write it (rows along the
// operand's slower register dimension, 16-byte chunks swizzled), so a dot
// reading a ring_view skips its staging and barriers. An fp32 (tf32) stage
// stored MN-major (A as [K][M], B as [K][N]: ldmatrix .trans moves 16-bit
// halves) is read one ld.shared per element instead, its swizzle in 32-byte
// units (scalarRingLayout). A ring that feeds wgmma takes wgmma's layout
// (wgmmaRingLayout).
//
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
#include "analysis/AxisInfo.h"
#include "lowering/codegen/DotLowering.h"

#include <algorithm>

namespace tk {
namespace {

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

} // namespace

bool isRingView(Value *v) {
  Operation *def = v->definingOp();
  return def && def->is(Opcode::RingView);
}

bool isRegisterOperand(Value *v) {
  auto *t = dyn_cast<TensorType>(v->type());
  return t && isa<DotOperandLayout>(t->layout());
}

bool registerOperandFits(Value *v, const MmaLayout *mma) {
  auto *op = dyn_cast<DotOperandLayout>(cast<TensorType>(v->type())->layout());
  DType dt = v->type()->dtype();
  return op && op->opIdx() == 0 && op->kWidth() == 2 && (dt == DType::F16 || dt == DType::BF16) &&
         op->parent()->warps() == mma->warps();
}

// The ThreadMap register (2 mi + h, 4 kk + 2 q + e) of a dot_operand A is
// row half h, K column 16 kk + 8 q + 2 (lane % 4) + e of piece mi, so
// fragment register h + 2 q packs e = 0, 1 (ldmatrix's order: (h, q) = (0, 0),
// (1, 0), (0, 1), (1, 1)).
Regs registerFragmentA(FunctionLowering &fl, Value *a, int64_t mi, int64_t kk) {
  llvm::IRBuilderBase &b = fl.builder();
  ThreadMap map = fl.threadMap(a);
  const Regs &regs = fl.get(a);
  Regs r;
  for (int64_t q = 0; q < 2; ++q)
    for (int64_t h = 0; h < 2; ++h) {
      Regs pair;
      for (int64_t e = 0; e < 2; ++e)
        pair.push_back(regs[static_cast<size_t>(map.registerOf({2 * mi + h, 4 * kk + 2 * q + e}))]);
      r.push_back(b.CreateBitCast(vectorOf(b, pair), b.getInt32Ty()));
    }
  return r;
}

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

SmemTile viewStage(FunctionLowering &fl, Value *view, llvm::Value *idx) {
  Operation *def = view->definingOp();
  return ringStage(fl, def->operand(0), idx ? idx : fl.get(def->operand(1))[0], view->type(),
                   fl.threadMap(view).order()[0]);
}

void stageOperand(FunctionLowering &fl, Value *v, const SmemTile &tile, unsigned rowDim, bool tf32,
                  int64_t baseAlign) {
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
      elems.push_back(tf32 ? fl.target().roundToTF32(b, regs[r + i]) : regs[r + i]);
    llvm::Value *val = run == 1 ? elems.front() : vectorOf(b, elems);
    b.CreateAlignedStore(val, addr, llvm::Align(run * tile.elemBytes));
  }
}

void asyncWait(FunctionLowering &fl, int64_t pending, bool fenceAsync) {
  llvm::IRBuilderBase &b = fl.builder();
  fl.target().asyncCopyWait(b, pending);
  if (fenceAsync)
    fl.target().fenceAsyncProxy(b);
  fl.target().barrier(b);
}

bool lowerAsyncCopy(FunctionLowering &fl, Operation &op) {
  llvm::IRBuilder<> &b = fl.builder();
  const TargetInfo &target = fl.target();
  Value *ptr = op.operand(2), *mask = op.numOperands() > 3 ? op.operand(3) : nullptr;
  Type *tile = ptr->type();
  auto *pt = dyn_cast<PointerType>(tile->elementType());
  int64_t eb = pt ? dtypeBytes(pt->pointee()->dtype()) : 0;
  if (tile->rank() != 2 || (eb != 1 && eb != 2 && eb != 4))
    return fl.unsupported(op, "other than of a 2-D tile of 8-, 16- or 32-bit elements");
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
  if (fl.remarks())
    fl.remarkAccess(op, map, vec, eb);
  const Regs &ptrs = fl.get(ptr);
  const Regs *preds = mask ? &fl.get(mask) : nullptr;
  std::vector<std::vector<llvm::Value *>> coords = fl.coordinates(ptr);
  llvm::Type *global = llvm::PointerType::get(b.getContext(), 1);
  int64_t bytes = vec * eb;
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
    threadRow.push_back(map.threadOffset(1 - fast, tid % map.warpSize(), tid / map.warpSize()));
    threadCol.push_back(map.threadOffset(fast, tid % map.warpSize(), tid / map.warpSize()));
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
      target.asyncCopy(b, dst, src, bytes, on);
      continue;
    }
    // One or two bytes: a predicated load (0 where the mask is off), then a
    // store; 8-bit elements through LLVM's masked load.
    llvm::Value *v;
    if (bytes == 2) {
      v = target.loadB16OrZero(b, src, on);
    } else {
      auto *byte = llvm::FixedVectorType::get(b.getInt8Ty(), 1);
      v = b.CreateMaskedLoad(byte, src, llvm::Align(1), b.CreateVectorSplat(1, on),
                             llvm::Constant::getNullValue(byte));
    }
    b.CreateAlignedStore(v, dst, llvm::Align(bytes));
  }
  target.asyncCopyCommit(b);
  return true;
}

} // namespace tk
