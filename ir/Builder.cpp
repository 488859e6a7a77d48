#include "ir/Builder.h"

#include <cassert>

namespace tk {

Operation *Builder::insert(std::unique_ptr<Operation> op) {
  assert(ip_.block && "no insertion point");
  ++numCreated_;
  return ip_.block->insert(ip_.before, std::move(op));
}

Operation *Builder::create(Opcode opcode, SourceLoc loc, const std::vector<Value *> &operands,
                           const std::vector<Type *> &resultTypes, AttrDict attrs,
                           unsigned numRegions) {
  Operation *op =
      insert(Operation::create(opcode, loc, operands, resultTypes, std::move(attrs), numRegions));
  for (unsigned i = 0; i < numRegions; ++i)
    op->region(i).addBlock();
  return op;
}

Function *Builder::createFunction(Module &module, std::string name,
                                  const std::vector<Type *> &argTypes,
                                  const std::vector<Type *> &resultTypes, SourceLoc loc) {
  Function *fn =
      module.addFunction(std::make_unique<Function>(std::move(name), argTypes, resultTypes, loc));
  setInsertionPointToEnd(&fn->body());
  return fn;
}

namespace {
AttrDict attrs1(std::string_view name, Attribute value) {
  AttrDict d;
  d.set(name, std::move(value));
  return d;
}
} // namespace

Value *Builder::constantInt(SourceLoc loc, int64_t value, Type *type) {
  return create(Opcode::Constant, loc, {}, {type}, attrs1("value", value))->result();
}

Value *Builder::constantFloat(SourceLoc loc, double value, Type *type) {
  return create(Opcode::Constant, loc, {}, {type}, attrs1("value", value))->result();
}

Value *Builder::binary(Opcode opcode, SourceLoc loc, Value *lhs, Value *rhs) {
  return create(opcode, loc, {lhs, rhs}, {lhs->type()})->result();
}

Value *Builder::unary(Opcode opcode, SourceLoc loc, Value *operand) {
  return create(opcode, loc, {operand}, {operand->type()})->result();
}

Value *Builder::max(SourceLoc loc, Value *a, Value *b, std::string nan) {
  AttrDict attrs;
  if (a->type()->isFloatLike())
    attrs.set("nan", std::move(nan));
  return create(Opcode::Max, loc, {a, b}, {a->type()}, std::move(attrs))->result();
}

Value *Builder::min(SourceLoc loc, Value *a, Value *b, std::string nan) {
  AttrDict attrs;
  if (a->type()->isFloatLike())
    attrs.set("nan", std::move(nan));
  return create(Opcode::Min, loc, {a, b}, {a->type()}, std::move(attrs))->result();
}

Value *Builder::fma(SourceLoc loc, Value *a, Value *b, Value *c) {
  return create(Opcode::Fma, loc, {a, b, c}, {a->type()})->result();
}

Value *Builder::externElementwise(SourceLoc loc, std::string symbol,
                                  const std::vector<Value *> &args, Type *resultElement) {
  Type *t = ctx_->withElement(args[0]->type(), resultElement);
  return create(Opcode::ExternElementwise, loc, args, {t}, attrs1("symbol", std::move(symbol)))
      ->result();
}

Value *Builder::cmpi(SourceLoc loc, std::string predicate, Value *a, Value *b) {
  Type *t = ctx_->withElement(a->type(), ctx_->i1());
  return create(Opcode::CmpI, loc, {a, b}, {t}, attrs1("predicate", std::move(predicate)))
      ->result();
}

Value *Builder::cmpf(SourceLoc loc, std::string predicate, Value *a, Value *b) {
  Type *t = ctx_->withElement(a->type(), ctx_->i1());
  return create(Opcode::CmpF, loc, {a, b}, {t}, attrs1("predicate", std::move(predicate)))
      ->result();
}

Value *Builder::select(SourceLoc loc, Value *cond, Value *a, Value *b) {
  return create(Opcode::Select, loc, {cond, a, b}, {a->type()})->result();
}

Value *Builder::cast(Opcode opcode, SourceLoc loc, Value *v, Type *to) {
  Type *t = to->isTensor() ? to : ctx_->withElement(v->type(), to);
  return create(opcode, loc, {v}, {t})->result();
}

Value *Builder::programId(SourceLoc loc, int axis) {
  return create(Opcode::ProgramId, loc, {}, {ctx_->i32()}, attrs1("axis", axis))->result();
}

Value *Builder::numPrograms(SourceLoc loc, int axis) {
  return create(Opcode::NumPrograms, loc, {}, {ctx_->i32()}, attrs1("axis", axis))->result();
}

Value *Builder::specialRegister(SourceLoc loc, const std::string &name) {
  Type *t = name == "globaltimer" ? ctx_->i64() : ctx_->i32();
  return create(Opcode::SpecialRegister, loc, {}, {t}, attrs1("name", name))->result();
}

Value *Builder::makeRange(SourceLoc loc, int64_t start, int64_t end) {
  AttrDict attrs;
  attrs.set("start", start);
  attrs.set("end", end);
  Type *t = ctx_->tensor({end > start ? end - start : 1}, ctx_->i32());
  return create(Opcode::MakeRange, loc, {}, {t}, std::move(attrs))->result();
}

Value *Builder::splat(SourceLoc loc, Value *scalar, const std::vector<int64_t> &shape) {
  return create(Opcode::Splat, loc, {scalar}, {ctx_->tensor(shape, scalar->type())})->result();
}

Value *Builder::broadcast(SourceLoc loc, Value *v, const std::vector<int64_t> &shape) {
  return create(Opcode::Broadcast, loc, {v}, {ctx_->withShape(v->type(), shape)})->result();
}

Value *Builder::expandDims(SourceLoc loc, Value *v, int axis) {
  std::vector<int64_t> shape = v->type()->shape();
  if (axis >= 0 && axis <= static_cast<int>(shape.size()))
    shape.insert(shape.begin() + axis, 1);
  return create(Opcode::ExpandDims, loc, {v}, {ctx_->withShape(v->type(), shape)},
                attrs1("axis", axis))
      ->result();
}

Value *Builder::reshape(SourceLoc loc, Value *v, const std::vector<int64_t> &shape) {
  return create(Opcode::Reshape, loc, {v}, {ctx_->withShape(v->type(), shape)})->result();
}

Value *Builder::trans(SourceLoc loc, Value *v, const std::vector<int64_t> &order) {
  const std::vector<int64_t> &in = v->type()->shape();
  std::vector<int64_t> shape;
  for (int64_t o : order)
    shape.push_back(o >= 0 && o < static_cast<int64_t>(in.size()) ? in[o] : 1);
  return create(Opcode::Trans, loc, {v}, {ctx_->withShape(v->type(), shape)},
                attrs1("order", order))
      ->result();
}

Value *Builder::gather(SourceLoc loc, Value *src, Value *index, int axis) {
  Type *t = ctx_->tensor(index->type()->shape(), src->type()->elementType());
  return create(Opcode::Gather, loc, {src, index}, {t}, attrs1("axis", int64_t(axis)))->result();
}

Value *Builder::addptr(SourceLoc loc, Value *ptr, Value *offset) {
  return create(Opcode::AddPtr, loc, {ptr, offset}, {ptr->type()})->result();
}

Value *Builder::load(SourceLoc loc, Value *ptr, Value *mask, Value *other) {
  std::vector<Value *> operands = {ptr};
  if (mask)
    operands.push_back(mask);
  if (mask && other)
    operands.push_back(other);
  Type *elem = ptr->type()->elementType();
  Type *pointee = elem->isPointer() ? tk::cast<PointerType>(elem)->pointee() : elem;
  return create(Opcode::Load, loc, operands, {ctx_->withElement(ptr->type(), pointee)})->result();
}

Operation *Builder::store(SourceLoc loc, Value *ptr, Value *value, Value *mask) {
  std::vector<Value *> operands = {ptr, value};
  if (mask)
    operands.push_back(mask);
  return create(Opcode::Store, loc, operands, {});
}

Value *Builder::atomicRMW(SourceLoc loc, std::string kind, Value *ptr, Value *value, Value *mask) {
  std::vector<Value *> operands = {ptr, value};
  if (mask)
    operands.push_back(mask);
  return create(Opcode::AtomicRMW, loc, operands, {value->type()}, attrs1("kind", std::move(kind)))
      ->result();
}

Value *Builder::atomicCAS(SourceLoc loc, Value *ptr, Value *cmp, Value *value) {
  return create(Opcode::AtomicCAS, loc, {ptr, cmp, value}, {value->type()})->result();
}

namespace {
std::vector<int64_t> dropAxis(const std::vector<int64_t> &shape, int axis) {
  std::vector<int64_t> out = shape;
  if (axis >= 0 && axis < static_cast<int>(out.size()))
    out.erase(out.begin() + axis);
  return out;
}
} // namespace

Value *Builder::reduce(SourceLoc loc, Value *v, int axis, std::string kind) {
  std::vector<int64_t> shape = dropAxis(v->type()->shape(), axis);
  Type *elem = (kind == "argmax" || kind == "argmin") ? ctx_->i32() : v->type()->elementType();
  Type *t = shape.empty() ? elem : ctx_->tensor(shape, elem);
  AttrDict attrs;
  attrs.set("axis", axis);
  attrs.set("kind", std::move(kind));
  return create(Opcode::Reduce, loc, {v}, {t}, std::move(attrs))->result();
}

Operation *Builder::createReduce(SourceLoc loc, const std::vector<Value *> &operands, int axis) {
  std::vector<Type *> results;
  for (Value *v : operands)
    results.push_back(ctx_->withShape(v->type(), dropAxis(v->type()->shape(), axis)));
  Operation *op = create(Opcode::Reduce, loc, operands, results, attrs1("axis", axis), 1);
  for (int round = 0; round < 2; ++round)
    for (Value *v : operands)
      op->body().addArgument(v->type()->elementType());
  return op;
}

Value *Builder::scan(SourceLoc loc, Value *v, int axis, std::string kind, bool reverse) {
  AttrDict attrs;
  attrs.set("axis", axis);
  attrs.set("kind", std::move(kind));
  if (reverse)
    attrs.set("reverse", true);
  return create(Opcode::Scan, loc, {v}, {v->type()}, std::move(attrs))->result();
}

Operation *Builder::createScan(SourceLoc loc, const std::vector<Value *> &operands, int axis,
                               bool reverse) {
  std::vector<Type *> results;
  for (Value *v : operands)
    results.push_back(v->type());
  AttrDict attrs;
  attrs.set("axis", axis);
  if (reverse)
    attrs.set("reverse", true);
  Operation *op = create(Opcode::Scan, loc, operands, results, std::move(attrs), 1);
  for (int round = 0; round < 2; ++round)
    for (Value *v : operands)
      op->body().addArgument(v->type()->elementType());
  return op;
}

Value *Builder::dot(SourceLoc loc, Value *a, Value *b, Value *acc, std::string precision) {
  return create(Opcode::Dot, loc, {a, b, acc}, {acc->type()},
                attrs1("input_precision", std::move(precision)))
      ->result();
}

Operation *Builder::assertOp(SourceLoc loc, Value *cond, std::string message) {
  return create(Opcode::Assert, loc, {cond}, {}, attrs1("message", std::move(message)));
}

Operation *Builder::print(SourceLoc loc, std::string prefix, const std::vector<Value *> &values) {
  return create(Opcode::Print, loc, values, {}, attrs1("prefix", std::move(prefix)));
}

Operation *Builder::call(SourceLoc loc, std::string callee, const std::vector<Value *> &args,
                         const std::vector<Type *> &resultTypes) {
  return create(Opcode::Call, loc, args, resultTypes, attrs1("callee", std::move(callee)));
}

Operation *Builder::ret(SourceLoc loc, const std::vector<Value *> &values) {
  return create(Opcode::Return, loc, values, {});
}

Operation *Builder::yield(SourceLoc loc, const std::vector<Value *> &values) {
  return create(Opcode::Yield, loc, values, {});
}

Operation *Builder::condition(SourceLoc loc, Value *cond, const std::vector<Value *> &values) {
  std::vector<Value *> operands = {cond};
  operands.insert(operands.end(), values.begin(), values.end());
  return create(Opcode::Condition, loc, operands, {});
}

Operation *Builder::createFor(SourceLoc loc, Value *lower, Value *upper, Value *step,
                              const std::vector<Value *> &inits) {
  std::vector<Value *> operands = {lower, upper, step};
  std::vector<Type *> results;
  for (Value *v : inits) {
    operands.push_back(v);
    results.push_back(v->type());
  }
  Operation *op = create(Opcode::For, loc, operands, results, {}, 1);
  op->body().addArgument(lower->type());
  for (Type *t : results)
    op->body().addArgument(t);
  return op;
}

Operation *Builder::createIf(SourceLoc loc, Value *cond, const std::vector<Type *> &resultTypes) {
  return create(Opcode::If, loc, {cond}, resultTypes, {}, 2);
}

Operation *Builder::createWhile(SourceLoc loc, const std::vector<Value *> &inits,
                                const std::vector<Type *> &resultTypes) {
  Operation *op = create(Opcode::While, loc, inits, resultTypes, {}, 2);
  for (Value *v : inits)
    op->body(0).addArgument(v->type());
  for (Type *t : resultTypes)
    op->body(1).addArgument(t);
  return op;
}

} // namespace tk
