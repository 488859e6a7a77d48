// dot -> LLVM IR on the CUDA cores (the result has a blocked layout; any
// dtype and shape): C[M, N] = A[M, K] x B[K, N] + acc. Every thread writes its
// registers of A and B to the shared-memory scratch (A transposed, [K][M], so
// the rows a thread needs for one k are one row of the buffer), a barrier,
// then for k = 0..K-1 each thread reads A[m][k] for each row m it holds and
// B[k][n] for each column n and does one multiply-add per register, in k
// order from the accumulator: products and sums in fp32 (fp64 when an
// operand or the accumulator is fp64; integers in the result's width), like
// the interpreter. A barrier, and the result is rounded once to its type.
#include "lowering/codegen/DotLowering.h"

#include <llvm/IR/Intrinsics.h>

namespace tk {
namespace {

// The FMA dot (see the top of the file).
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

} // namespace

bool lowerFmaDot(FunctionLowering &fl, Operation &op) { return FmaDot(fl, op).run(); }

} // namespace tk
