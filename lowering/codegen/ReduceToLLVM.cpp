// reduce and convert_layout -> registers, warp shuffles and shared memory.
//
// A reduction along `axis` carries a tuple per partial: one value per operand
// (sum/max/min: the operand; argmax/argmin: the value and its i32 index along
// the axis; a combiner region: one value per operand). It runs in three
// steps, each only as wide as the data:
//  1. within a thread: its registers that differ only along `axis` combine,
//     in increasing position;
//  2. across the lanes that share the other coordinates: a butterfly of
//     shfl.sync.bfly over the lane-id bits of `axis` (after it every lane
//     holds the warp's partial); for a combiner region the lane with the
//     lower position is the left operand;
//  3. across warps, when warps split `axis`: each warp writes its partial to
//     the op's shared scratch (SharedMemory.h: one part per tuple component,
//     slot = result element * warps + warp), a barrier, lane l reads partial
//     l % warps and a butterfly over log2(warps) lanes combines them, lower
//     warps on the left (every lane ends with the same bits). The barrier
//     before the scratch is reused is --insert-barriers' job, so reductions
//     on disjoint scratch run back to back.
// Lanes and warps that hold copies of elements (a dimension smaller than the
// layout's tile) are left out of steps 2 and 3, so a sum counts each element
// once.
//
// argmax/argmin match the interpreter (interpreter/InterpreterReduce.cpp): the
// first position of the extreme value wins, NaN never wins unless every value
// is NaN (then position 0). As a pairwise rule: b beats a when b is not NaN
// and (a is NaN or b is strictly better), and on a tie (equal, or both NaN)
// the smaller index wins; that rule is associative and commutative, so the
// tree of steps 1-3 gives the sequential answer.
//
// A combiner region is lowered once per combine, its arguments bound to the
// two tuples' registers, through the ordinary op lowering. Like Triton, it is
// taken to be associative; positions stay in order across lanes and warps,
// and within a thread when the layout has no repeats along the axis.
//
// convert_layout renames registers when every thread already holds the
// elements of its new layout (DataMovement.h, convertIsLocal: an accumulator
// read as a dot's A operand, two layouts with one ThreadMap); otherwise it
// stages the tensor through shared memory: every thread writes
// the elements it holds at their row-major index (rows padded by a word, see
// convertRowPadding), a barrier, every thread reads the elements its new
// layout gives it. A tensor too large for shared memory goes in rounds
// (convertRounds, set by --allocate-shared): per slice along one dimension,
// the writes of the registers in it, a barrier, the reads, and a barrier
// before the next slice's writes; which registers are in which slice is
// fixed at compile time, so no store or load is predicated.
#include "analysis/DataMovement.h"
#include "analysis/SharedMemory.h"
#include "lowering/codegen/FunctionLowering.h"

#include <algorithm>

namespace tk {

llvm::Value *FunctionLowering::combine(std::string_view kind, Type *type, llvm::Value *a,
                                       llvm::Value *b) {
  Opcode opc = kind == "sum" ? Opcode::Add : kind == "max" ? Opcode::Max : Opcode::Min;
  AttrDict attrs;
  // Like Triton's tl.max/tl.min without propagate_nan: NaN loses to a number.
  if (opc != Opcode::Add && type->isFloatLike())
    attrs.set("nan", "number");
  return scalarOp(opc, attrs, type, type, {a, b});
}

namespace {

using Tuple = std::vector<llvm::Value *>;

class ReduceLowering {
public:
  ReduceLowering(FunctionLowering &fl, Operation &op)
      : fl_(fl), op_(op), b_(fl.builder()), kind_(op.attrs().getString("kind")),
        axis_(static_cast<unsigned>(*op.attrs().getInt("axis"))) {
    isArg_ = kind_ && kind_->starts_with("arg");
    for (Value *v : op.operands())
      types_.push_back(v->type()->elementType());
  }

  bool run();

private:
  // a's positions come before b's.
  Tuple combine(const Tuple &a, const Tuple &b);
  // One butterfly step: `a` combined with the lane `lane ^ laneMask`'s tuple.
  // Both partners combine the same two tuples in the same order (for a
  // combiner region the lane whose `coord` has `bit` clear goes left; the
  // other kinds are commutative), so they end with the same bits.
  Tuple butterfly(const Tuple &a, unsigned laneMask, llvm::Value *coord, uint32_t bit);
  Tuple argCombine(const Tuple &a, const Tuple &b);
  // argmax/argmin over one thread's (value, position) pairs in position
  // order: the extreme value by the same max/min chain a plain max/min
  // reduce of the operand emits (so LLVM shares the two when a kernel asks
  // for both, as tk.max(x, return_indices=True) does), then the first
  // position holding it, found from the last pair back with each match
  // overriding; the first position when none matches (all NaN: NaN loses to
  // any number, and an all-NaN run keeps its first).
  Tuple firstExtreme(const std::vector<Tuple> &run);
  llvm::Value *storageOf(llvm::Value *v) {
    return v->getType()->isIntegerTy(1) ? b_.CreateZExt(v, b_.getInt8Ty()) : v;
  }

  FunctionLowering &fl_;
  Operation &op_;
  llvm::IRBuilder<> &b_;
  std::optional<std::string> kind_;
  unsigned axis_;
  bool isArg_ = false;
  std::vector<Type *> types_; // element type of each operand
  bool failed_ = false;
};

Tuple ReduceLowering::argCombine(const Tuple &a, const Tuple &b) {
  bool isMax = *kind_ == "argmax";
  Type *t = types_[0];
  llvm::Value *bBetter, *tie;
  if (t->isFloatLike()) {
    // b is better when it is a number and a is NaN or below (above) it:
    // b >u a (unordered or greater: a NaN or b > a), b not NaN.
    llvm::Value *bNum = b_.CreateFCmpORD(b[0], b[0]);
    llvm::Value *unordered = isMax ? b_.CreateFCmpUGT(b[0], a[0]) : b_.CreateFCmpULT(b[0], a[0]);
    bBetter = b_.CreateAnd(bNum, unordered);
    llvm::Value *bothNaN = b_.CreateAnd(b_.CreateFCmpUNO(a[0], a[0]), b_.CreateNot(bNum));
    tie = b_.CreateOr(b_.CreateFCmpOEQ(a[0], b[0]), bothNaN);
  } else {
    bool sign = isSigned(t->dtype());
    llvm::CmpInst::Predicate p = isMax ? (sign ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT)
                                       : (sign ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT);
    bBetter = b_.CreateICmp(p, b[0], a[0]);
    tie = b_.CreateICmpEQ(a[0], b[0]);
  }
  // Equal values keep the lower position.
  llvm::Value *pickB = b_.CreateOr(bBetter, b_.CreateAnd(tie, b_.CreateICmpSLT(b[1], a[1])));
  return {b_.CreateSelect(pickB, b[0], a[0]), b_.CreateSelect(pickB, b[1], a[1])};
}

Tuple ReduceLowering::firstExtreme(const std::vector<Tuple> &run) {
  Type *t = types_[0];
  llvm::Value *extreme = run[0][0];
  for (size_t i = 1; i < run.size(); ++i)
    extreme = fl_.combine(*kind_ == "argmax" ? "max" : "min", t, extreme, run[i][0]);
  llvm::Value *position = run[0][1];
  for (size_t i = run.size(); i-- > 0;) {
    llvm::Value *hit = t->isFloatLike() ? b_.CreateFCmpOEQ(run[i][0], extreme)
                                        : b_.CreateICmpEQ(run[i][0], extreme);
    position = b_.CreateSelect(hit, run[i][1], position);
  }
  return {extreme, position};
}

Tuple ReduceLowering::combine(const Tuple &a, const Tuple &b) {
  if (isArg_)
    return argCombine(a, b);
  if (kind_)
    return {fl_.combine(*kind_, types_[0], a[0], b[0])};
  Block &body = op_.body();
  size_t n = a.size();
  for (size_t i = 0; i < n; ++i) {
    fl_.set(body.argument(static_cast<unsigned>(i)), {a[i]});
    fl_.set(body.argument(static_cast<unsigned>(n + i)), {b[i]});
  }
  if (!fl_.lowerBlock(body)) {
    failed_ = true;
    return a;
  }
  Tuple out;
  for (Value *v : body.terminator()->operands())
    out.push_back(fl_.get(v)[0]);
  return out;
}

Tuple ReduceLowering::butterfly(const Tuple &a, unsigned laneMask, llvm::Value *coord,
                                uint32_t bit) {
  Tuple other;
  for (llvm::Value *x : a)
    other.push_back(fl_.target().shuffleXor(b_, x, laneMask));
  if (kind_)
    return combine(a, other);
  llvm::Value *upper = b_.CreateICmpNE(b_.CreateAnd(coord, b_.getInt32(bit)), b_.getInt32(0));
  Tuple lhs, rhs;
  for (size_t i = 0; i < a.size(); ++i) {
    lhs.push_back(b_.CreateSelect(upper, other[i], a[i]));
    rhs.push_back(b_.CreateSelect(upper, a[i], other[i]));
  }
  return combine(lhs, rhs);
}

bool ReduceLowering::run() {
  if (kind_ && *kind_ != "sum" && *kind_ != "max" && *kind_ != "min" && !isArg_)
    return fl_.unsupported(op_, "of kind \"" + *kind_ + "\"");
  if (!kind_ && op_.numRegions() != 1)
    return fl_.unsupported(op_, "without a kind or a combiner region");
  Value *in = op_.operand(0), *res = op_.result();
  for (Value *v : op_.operands())
    if (!v->type()->isTensor() || fl_.layoutOf(v) != fl_.layoutOf(in))
      return fl_.unsupported(op_, "whose operands are not in one layout");
  ThreadMap inMap = fl_.threadMap(in);
  bool scalarResult = !res->type()->isTensor();
  std::unique_ptr<ThreadMap> outMap;
  if (!scalarResult) {
    for (Value *r : op_.results()) {
      auto *slice = dyn_cast<SliceLayout>(fl_.layoutOf(r));
      if (!slice || slice->dim() != axis_ || slice->parent() != fl_.layoutOf(in))
        return fl_.unsupported(op_, "whose result layout is not the slice of its operand's");
    }
    outMap = std::make_unique<ThreadMap>(fl_.threadMap(res));
  }
  int64_t numOut = scalarResult ? 1 : outMap->numRegisters();

  // 1. Within the thread, registers in increasing position along the axis.
  const ThreadMap::Dim &d = inMap.dim(axis_);
  std::vector<std::vector<llvm::Value *>> inCoords;
  if (isArg_)
    inCoords = fl_.coordinates(in);
  std::vector<Tuple> acc(static_cast<size_t>(numOut));
  std::vector<std::vector<Tuple>> runs(isArg_ ? static_cast<size_t>(numOut) : 0);
  for (int64_t r = 0; r < inMap.numRegisters(); ++r) {
    std::vector<int64_t> k = inMap.registerIndex(r);
    if (k[axis_] >= d.extent)
      continue; // a copy of an element this thread already has
    k.erase(k.begin() + axis_);
    size_t o = scalarResult ? 0 : static_cast<size_t>(outMap->registerOf(k));
    Tuple v;
    for (Value *operand : op_.operands())
      v.push_back(fl_.get(operand)[static_cast<size_t>(r)]);
    if (isArg_) {
      v.push_back(inCoords[static_cast<size_t>(r)][axis_]);
      runs[o].push_back(std::move(v));
      continue;
    }
    acc[o] = acc[o].empty() ? v : combine(acc[o], v);
    if (failed_)
      return false;
  }
  for (size_t o = 0; o < runs.size(); ++o)
    if (!runs[o].empty())
      acc[o] = firstExtreme(runs[o]);

  // 2. Across lanes. For a combiner region the lane whose axis coordinate
  // has bit m clear holds the lower positions and goes left.
  int64_t lanes = std::clamp<int64_t>(d.extent / d.size, 1, d.threads);
  llvm::Value *laneCoord = nullptr;
  if (!kind_ && lanes > 1)
    laneCoord = b_.CreateURem(b_.CreateUDiv(fl_.laneId(), b_.getInt32(d.laneStride)),
                              b_.getInt32(d.threads));
  for (int64_t m = 1; m < lanes; m *= 2)
    for (Tuple &a : acc) {
      a = butterfly(a, static_cast<unsigned>(m * d.laneStride), laneCoord,
                    static_cast<uint32_t>(m));
      if (failed_)
        return false;
    }

  // 3. Across warps, through the op's scratch.
  int64_t warps = reduceWarpsAlongAxis(op_);
  if (warps > 1) {
    int64_t total = 0;
    std::vector<int64_t> parts = reduceScratchParts(op_, total);
    std::vector<llvm::Type *> storage;
    std::vector<llvm::Value *> bases;
    for (size_t i = 0; i < acc[0].size(); ++i) {
      llvm::Type *t = acc[0][i]->getType();
      storage.push_back(t->isIntegerTy(1) ? b_.getInt8Ty() : t);
      bases.push_back(b_.CreateGEP(b_.getInt8Ty(), fl_.scratch(), b_.getInt32(parts[i])));
    }
    llvm::Value *warpIdx =
        b_.CreateURem(b_.CreateUDiv(fl_.warpId(), b_.getInt32(d.warpStride)), b_.getInt32(warps));
    // The row-major index of each result element: the slot group it uses.
    std::vector<llvm::Value *> outIndex(static_cast<size_t>(numOut), b_.getInt32(0));
    if (!scalarResult) {
      std::vector<std::vector<llvm::Value *>> coords = fl_.coordinates(res);
      const std::vector<int64_t> &shape = res->type()->shape();
      for (int64_t o = 0; o < numOut; ++o) {
        llvm::Value *lin = b_.getInt32(0);
        for (unsigned dd = 0; dd < shape.size(); ++dd)
          lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(shape[dd])), coords[o][dd]);
        outIndex[o] = lin;
      }
    }
    auto slot = [&](int64_t o, llvm::Value *w) {
      return b_.CreateAdd(b_.CreateMul(outIndex[o], b_.getInt32(warps)), w);
    };
    for (int64_t o = 0; o < numOut; ++o)
      for (size_t i = 0; i < acc[o].size(); ++i)
        b_.CreateStore(storageOf(acc[o][i]), b_.CreateGEP(storage[i], bases[i], slot(o, warpIdx)));
    fl_.target().barrier(b_);
    // When at least `warps` lanes run along the axis, those lanes hold the
    // same result elements, so lane coordinate c along the axis reads only
    // partial c % warps and a butterfly over those lanes combines them: one
    // load and log2(warps) shuffles instead of every thread loading all
    // `warps` partials, which held `warps` registers at once (softmax at
    // 16384 columns and 16 warps: 71 -> 64 registers, two 512-thread
    // programs per SM instead of one; bench/results/notes/softmax-layernorm.md).
    // Partners must share their result elements: lanes along other
    // dimensions do not, so with fewer lanes than warps along the axis every
    // thread combines all partials itself, in warp order.
    bool butterflyAcrossWarps = d.threads >= warps;
    llvm::Value *mine = nullptr;
    if (butterflyAcrossWarps)
      mine =
          b_.CreateURem(b_.CreateUDiv(fl_.laneId(), b_.getInt32(d.laneStride)), b_.getInt32(warps));
    auto loadPartial = [&](int64_t o, llvm::Value *w) {
      Tuple v;
      for (size_t i = 0; i < acc[o].size(); ++i) {
        llvm::Value *x = b_.CreateLoad(storage[i], b_.CreateGEP(storage[i], bases[i], slot(o, w)));
        if (acc[o][i]->getType()->isIntegerTy(1))
          x = b_.CreateTrunc(x, b_.getInt1Ty());
        v.push_back(x);
      }
      return v;
    };
    for (int64_t o = 0; o < numOut; ++o) {
      Tuple v;
      if (butterflyAcrossWarps) {
        v = loadPartial(o, mine);
        for (int64_t m = 1; m < warps && !failed_; m *= 2)
          v = butterfly(v, static_cast<unsigned>(m * d.laneStride), mine, static_cast<uint32_t>(m));
      } else {
        for (int64_t w = 0; w < warps && !failed_; ++w) {
          Tuple p = loadPartial(o, b_.getInt32(static_cast<uint32_t>(w)));
          v = v.empty() ? p : combine(v, p);
        }
      }
      if (failed_)
        return false;
      acc[o] = v;
    }
  }

  // An arg reduction's result is the index; others one result per component.
  size_t first = isArg_ ? 1 : 0;
  for (unsigned i = 0; i < op_.numResults(); ++i) {
    Regs regs;
    for (const Tuple &t : acc)
      regs.push_back(t[first + i]);
    fl_.set(op_.result(i), std::move(regs));
  }
  return true;
}

} // namespace

bool FunctionLowering::lowerReduce(Operation &op) { return ReduceLowering(*this, op).run(); }

bool FunctionLowering::lowerConvertLayout(Operation &op) {
  Value *in = op.operand(0), *res = op.result();
  if (layoutOf(in) == layoutOf(res)) {
    set(res, get(in));
    return true;
  }
  // Every thread already holds its new elements: a renaming.
  std::vector<int64_t> pick;
  if (convertIsLocal(op, &pick)) {
    const Regs &src = get(in);
    Regs out;
    for (int64_t r : pick)
      out.push_back(src[static_cast<size_t>(r)]);
    set(res, std::move(out));
    return true;
  }
  llvm::Type *storage = elementType(in->type());
  bool isBool = storage->isIntegerTy(1);
  if (isBool)
    storage = b_.getInt8Ty();
  // One slice of the tensor at a time (the whole tensor in one round),
  // row-major, each row (the last dimension) padded (SharedMemory.h).
  std::vector<int64_t> slice = convertSliceShape(op);
  int64_t rounds = convertRounds(op);
  unsigned axis = rounds > 1 ? *convertRoundAxis(op, rounds) : 0;
  int64_t pad = convertRowPadding(op);
  auto linear = [&](const std::vector<llvm::Value *> &c, int64_t round) {
    llvm::Value *lin = b_.getInt32(0);
    for (unsigned d = 0; d < slice.size(); ++d) {
      int64_t stride = slice[d] + (d + 1 == slice.size() ? pad : 0);
      llvm::Value *x = c[d];
      if (d == axis && round > 0)
        x = b_.CreateSub(x, b_.getInt32(static_cast<uint32_t>(round * slice[d])));
      lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(stride)), x);
    }
    return lin;
  };
  // The round of each register: its slices are whole tiles, so the register
  // offset alone places it (convertRoundAxis).
  auto roundOf = [&](const ThreadMap &map, int64_t r) {
    return rounds > 1 ? map.registerOffset(r, axis) / slice[axis] : 0;
  };
  const Regs &src = get(in);
  ThreadMap inMap = threadMap(in), outMap = threadMap(res);
  std::vector<std::vector<llvm::Value *>> inCoords = coordinates(in), outCoords;
  Regs out(static_cast<size_t>(outMap.numRegisters()));
  for (int64_t round = 0; round < rounds; ++round) {
    if (round > 0)
      target_.barrier(b_); // the last round's reads are done
    for (size_t r = 0; r < src.size(); ++r) {
      if (roundOf(inMap, static_cast<int64_t>(r)) != round)
        continue;
      llvm::Value *v = isBool ? b_.CreateZExt(src[r], storage) : src[r];
      b_.CreateStore(v, b_.CreateGEP(storage, smem_, linear(inCoords[r], round)));
    }
    target_.barrier(b_);
    if (round == 0)
      outCoords = coordinates(res); // after the writes, as in one round
    for (size_t r = 0; r < outCoords.size(); ++r) {
      if (roundOf(outMap, static_cast<int64_t>(r)) != round)
        continue;
      llvm::Value *v =
          b_.CreateLoad(storage, b_.CreateGEP(storage, smem_, linear(outCoords[r], round)));
      out[r] = isBool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v;
    }
  }
  set(res, std::move(out));
  return true;
}

} // namespace tk
