// Builder: creates block-IR operations at an insertion point.
//
// The AST -> IR lowering, the text parser and the passes all build IR through
// this class. There is one generic entry point, `create`, and typed helpers for
// the common ops that compute result types themselves:
//
//   Builder b(ctx);
//   Function *fn = b.createFunction(module, "add_kernel",
//                                   {ctx.pointer(ctx.f32()), ctx.i32()}, {}, loc);
//   // the insertion point is now the end of fn's body
//   Value *pid = b.programId(loc, 0);                          // i32
//   Value *offs = b.add(loc, b.splat(loc, pid, {1024}),        // tensor<1024xi32>
//                       b.makeRange(loc, 0, 1024));
//   Value *ptrs = b.addptr(loc, b.splat(loc, fn->argument(0), {1024}), offs);
//   Value *x = b.load(loc, ptrs);                              // tensor<1024xfp32>
//   b.ret(loc, {});
//
// Structured ops come with their blocks already made; fill them by moving the
// insertion point inside and end each with a terminator:
//
//   Operation *loop = b.createFor(loc, lo, hi, step, {acc0});
//   {
//     Builder::InsertionGuard g(b);
//     b.setInsertionPointToEnd(&loop->body());     // args: (iv, acc)
//     Value *acc = loop->body().argument(1);
//     b.yield(loc, {b.add(loc, acc, x)});
//   }
//   Value *sum = loop->result(0);
//
// The helpers do not check types beyond what they need to compute result
// types (for example `add` takes the type of its first operand): the verifier
// (ir/Verifier.h) checks everything and reports located diagnostics.
#pragma once

#include "ir/IRContext.h"
#include "ir/Module.h"
#include "ir/Operation.h"

#include <string>
#include <vector>

namespace tk {

class Builder {
public:
  explicit Builder(IRContext &ctx) : ctx_(&ctx) {}

  IRContext &context() const { return *ctx_; }
  /// How many operations this builder has made (create and insert).
  int64_t numCreated() const { return numCreated_; }

  // --- insertion point: new ops go before `before`, or at the block's end.
  struct InsertPoint {
    Block *block = nullptr;
    Operation *before = nullptr;
  };
  void setInsertionPointToEnd(Block *block) { ip_ = {block, nullptr}; }
  void setInsertionPointToStart(Block *block) {
    ip_ = {block, block->empty() ? nullptr : block->front()};
  }
  void setInsertionPoint(Operation *before) { ip_ = {before->parentBlock(), before}; }
  void setInsertionPointAfter(Operation *op) { ip_ = {op->parentBlock(), op->nextNode()}; }
  Block *insertionBlock() const { return ip_.block; }
  InsertPoint saveInsertionPoint() const { return ip_; }
  void restoreInsertionPoint(InsertPoint ip) { ip_ = ip; }

  /// Restores the insertion point when it goes out of scope.
  class InsertionGuard {
  public:
    explicit InsertionGuard(Builder &b) : b_(b), ip_(b.saveInsertionPoint()) {}
    ~InsertionGuard() { b_.restoreInsertionPoint(ip_); }

  private:
    Builder &b_;
    InsertPoint ip_;
  };

  // --- generic creation
  /// Creates an op at the insertion point; regions get one empty block each.
  Operation *create(Opcode opcode, SourceLoc loc, const std::vector<Value *> &operands,
                    const std::vector<Type *> &resultTypes, AttrDict attrs = {},
                    unsigned numRegions = 0);
  /// Inserts an op made elsewhere (Operation::create) at the insertion point.
  Operation *insert(std::unique_ptr<Operation> op);

  /// Adds a function to `module` and moves the insertion point to the end of
  /// its (empty) body.
  Function *createFunction(Module &module, std::string name, const std::vector<Type *> &argTypes,
                           const std::vector<Type *> &resultTypes, SourceLoc loc);

  // --- constants: `type` is a scalar or a tensor (a splat constant)
  Value *constantInt(SourceLoc loc, int64_t value, Type *type);
  Value *constantFloat(SourceLoc loc, double value, Type *type);

  // --- elementwise: the result has the type of the first operand
  Value *binary(Opcode opcode, SourceLoc loc, Value *lhs, Value *rhs);
  Value *unary(Opcode opcode, SourceLoc loc, Value *operand);
  Value *add(SourceLoc loc, Value *a, Value *b) { return binary(Opcode::Add, loc, a, b); }
  Value *sub(SourceLoc loc, Value *a, Value *b) { return binary(Opcode::Sub, loc, a, b); }
  Value *mul(SourceLoc loc, Value *a, Value *b) { return binary(Opcode::Mul, loc, a, b); }
  Value *div(SourceLoc loc, Value *a, Value *b) { return binary(Opcode::Div, loc, a, b); }
  Value *rem(SourceLoc loc, Value *a, Value *b) { return binary(Opcode::Rem, loc, a, b); }
  /// max/min; `nan` ("propagate" or "number") is set for floats only.
  Value *max(SourceLoc loc, Value *a, Value *b, std::string nan = "propagate");
  Value *min(SourceLoc loc, Value *a, Value *b, std::string nan = "propagate");
  Value *fma(SourceLoc loc, Value *a, Value *b, Value *c);
  /// Comparisons give i1 of the operand shape. Integer predicates: eq ne slt
  /// sle sgt sge ult ule ugt uge; float: oeq one olt ole ogt oge ord ueq une
  /// ult ule ugt uge uno.
  Value *cmpi(SourceLoc loc, std::string predicate, Value *a, Value *b);
  Value *cmpf(SourceLoc loc, std::string predicate, Value *a, Value *b);
  Value *select(SourceLoc loc, Value *cond, Value *a, Value *b);
  /// The libdevice function `symbol` of `args` (one shape), with result
  /// element type `resultElement`.
  Value *externElementwise(SourceLoc loc, std::string symbol, const std::vector<Value *> &args,
                           Type *resultElement);
  /// A cast op (SExt, ZExt, Trunc, FPExt, FPTrunc, SIToFP, UIToFP, FPToSI,
  /// FPToUI, Bitcast, PtrToInt, IntToPtr) to `to`, a scalar or pointer element
  /// type or a full type; an element type keeps the operand's shape.
  Value *cast(Opcode opcode, SourceLoc loc, Value *v, Type *to);

  // --- block-level ops
  Value *programId(SourceLoc loc, int axis);
  Value *numPrograms(SourceLoc loc, int axis);
  /// The special register `name` ("globaltimer": i64, "smid": i32).
  Value *specialRegister(SourceLoc loc, const std::string &name);
  Value *makeRange(SourceLoc loc, int64_t start, int64_t end);
  Value *splat(SourceLoc loc, Value *scalar, const std::vector<int64_t> &shape);
  Value *broadcast(SourceLoc loc, Value *v, const std::vector<int64_t> &shape);
  Value *expandDims(SourceLoc loc, Value *v, int axis);
  Value *reshape(SourceLoc loc, Value *v, const std::vector<int64_t> &shape);
  Value *trans(SourceLoc loc, Value *v, const std::vector<int64_t> &order);
  /// src's elements along `axis` picked by `index` (same rank): index's shape.
  Value *gather(SourceLoc loc, Value *src, Value *index, int axis);
  Value *addptr(SourceLoc loc, Value *ptr, Value *offset);

  // --- memory
  /// `mask` and `other` are optional (other only with a mask).
  Value *load(SourceLoc loc, Value *ptr, Value *mask = nullptr, Value *other = nullptr);
  Operation *store(SourceLoc loc, Value *ptr, Value *value, Value *mask = nullptr);
  /// kind: add max min and or xor xchg; returns the old value.
  Value *atomicRMW(SourceLoc loc, std::string kind, Value *ptr, Value *value,
                   Value *mask = nullptr);
  Value *atomicCAS(SourceLoc loc, Value *ptr, Value *cmp, Value *value);

  // --- reductions
  /// kind: sum max min argmax argmin (argmax/argmin give i32 indices).
  Value *reduce(SourceLoc loc, Value *v, int axis, std::string kind);
  /// A reduce with a combiner region over `operands` (all of one shape); the
  /// region's block takes (acc0..accN-1, x0..xN-1) and must yield N values.
  Operation *createReduce(SourceLoc loc, const std::vector<Value *> &operands, int axis);
  /// kind: cumsum cumprod.
  Value *scan(SourceLoc loc, Value *v, int axis, std::string kind, bool reverse = false);
  Operation *createScan(SourceLoc loc, const std::vector<Value *> &operands, int axis,
                        bool reverse = false);
  /// a[M,K] x b[K,N] + acc[M,N]; precision: ieee tf32 tf32x3.
  Value *dot(SourceLoc loc, Value *a, Value *b, Value *acc, std::string precision = "tf32");

  // --- debugging, calls, terminators
  Operation *assertOp(SourceLoc loc, Value *cond, std::string message);
  Operation *print(SourceLoc loc, std::string prefix, const std::vector<Value *> &values);
  Operation *call(SourceLoc loc, std::string callee, const std::vector<Value *> &args,
                  const std::vector<Type *> &resultTypes);
  Operation *ret(SourceLoc loc, const std::vector<Value *> &values);
  Operation *yield(SourceLoc loc, const std::vector<Value *> &values);
  Operation *condition(SourceLoc loc, Value *cond, const std::vector<Value *> &values);

  // --- structured control flow (bodies created empty, with their arguments)
  /// Body block args: (iv, carried...); results have the types of `inits`.
  Operation *createFor(SourceLoc loc, Value *lower, Value *upper, Value *step,
                       const std::vector<Value *> &inits);
  /// Then (region 0) and else (region 1) blocks without arguments.
  Operation *createIf(SourceLoc loc, Value *cond, const std::vector<Type *> &resultTypes);
  /// Before block args have the types of `inits`; after block args and the
  /// results have `resultTypes` (the values passed by `condition`).
  Operation *createWhile(SourceLoc loc, const std::vector<Value *> &inits,
                         const std::vector<Type *> &resultTypes);

private:
  IRContext *ctx_;
  int64_t numCreated_ = 0;
  InsertPoint ip_;
};

} // namespace tk
