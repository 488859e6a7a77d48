#include "ir/Operation.h"

#include "ir/Module.h"

#include <algorithm>
#include <cassert>

namespace tk {

void Value::removeUser(Operation *op) {
  auto it = std::find(users_.begin(), users_.end(), op);
  assert(it != users_.end() && "removing a use that is not there");
  users_.erase(it);
}

void Value::replaceAllUsesWith(Value *v) {
  if (v == this)
    return;
  // Each user may use this value several times; setOperand updates the use
  // lists one use at a time, so work from a snapshot.
  std::vector<Operation *> users = users_;
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());
  for (Operation *user : users)
    for (unsigned i = 0; i < user->numOperands(); ++i)
      if (user->operand(i) == this)
        user->setOperand(i, v);
}

Block *Region::addBlock() {
  blocks_.push_back(std::unique_ptr<Block>(new Block(this)));
  return blocks_.back().get();
}

std::unique_ptr<Operation> Operation::create(Opcode opcode, SourceLoc loc,
                                             const std::vector<Value *> &operands,
                                             const std::vector<Type *> &resultTypes, AttrDict attrs,
                                             unsigned numRegions) {
  std::unique_ptr<Operation> op(new Operation(opcode, loc));
  for (Value *v : operands)
    op->addOperand(v);
  for (unsigned i = 0; i < resultTypes.size(); ++i)
    op->results_.push_back(std::unique_ptr<Value>(new Value(resultTypes[i], op.get(), nullptr, i)));
  op->attrs_ = std::move(attrs);
  for (unsigned i = 0; i < numRegions; ++i)
    op->addRegion();
  return op;
}

Operation::~Operation() {
  dropAllReferences();
  regions_.clear();
}

void Operation::dropOperands() {
  // Every use of this op goes, so which of a repeated use goes first does
  // not matter: take it from the back of the use list when it is there.
  // Ops dropped in reverse order of creation (Block::~Block) then cost O(1)
  // each, where a search from the front made freeing a value with millions
  // of users (an unrolled loop's pointer argument) quadratic.
  for (auto it = operands_.rbegin(); it != operands_.rend(); ++it) {
    Value *v = *it;
    if (!v)
      continue;
    if (!v->users_.empty() && v->users_.back() == this)
      v->users_.pop_back();
    else
      v->removeUser(this);
  }
  operands_.clear();
}

void Operation::dropAllReferences() {
  dropOperands();
  for (auto &r : regions_)
    for (auto &b : r->blocks_)
      for (auto op = b->ops_.rbegin(); op != b->ops_.rend(); ++op)
        (*op)->dropAllReferences();
}

void Operation::setOperand(unsigned i, Value *v) {
  if (operands_[i])
    operands_[i]->removeUser(this);
  operands_[i] = v;
  if (v)
    v->addUser(this);
}

void Operation::addOperand(Value *v) {
  operands_.push_back(v);
  if (v)
    v->addUser(this);
}

void Operation::eraseOperand(unsigned i) {
  if (operands_[i])
    operands_[i]->removeUser(this);
  operands_.erase(operands_.begin() + i);
}

std::vector<Value *> Operation::results() const {
  std::vector<Value *> out;
  for (auto &r : results_)
    out.push_back(r.get());
  return out;
}

void Operation::eraseResult(unsigned i) {
  assert(!results_[i]->hasUses() && "erasing a result that is still used");
  results_.erase(results_.begin() + i);
  for (unsigned j = i; j < results_.size(); ++j)
    results_[j]->index_ = j;
}

Region &Operation::addRegion() {
  regions_.push_back(std::unique_ptr<Region>(new Region(this, nullptr)));
  return *regions_.back();
}

Operation *Operation::parentOp() const { return parentBlock_ ? parentBlock_->parentOp() : nullptr; }

Function *Operation::parentFunction() const {
  const Operation *op = this;
  while (op->parentOp())
    op = op->parentOp();
  if (!op->parentBlock_)
    return nullptr;
  return op->parentBlock_->parent()->parentFunction();
}

bool Operation::isInside(const Operation *ancestor) const {
  for (Operation *p = parentOp(); p; p = p->parentOp())
    if (p == ancestor)
      return true;
  return false;
}

uint32_t Operation::traits() const {
  uint32_t t = opInfo(opcode_).traits;
  if (opcode_ == Opcode::InlineAsm && attrs_.getBool("pure").value_or(false))
    t = (t & ~(OpTrait::MemRead | OpTrait::MemWrite)) | OpTrait::Pure;
  return t;
}

bool Operation::isSideEffectFree() const {
  if (hasTrait(OpTrait::Pure))
    return true;
  if (!hasTrait(OpTrait::RecursivePure))
    return false;
  for (auto &r : regions_)
    for (auto &b : r->blocks_)
      for (Operation &op : *b)
        if (!op.hasTrait(OpTrait::Terminator) && !op.isSideEffectFree())
          return false;
  return true;
}

void Operation::erase() {
  assert(parentBlock_ && "erasing a detached op");
  for (auto &r : results_) {
    (void)r;
    assert(!r->hasUses() && "erasing an op whose results are still used");
  }
  parentBlock_->remove(this); // the returned unique_ptr destroys it
}

void Operation::moveBefore(Operation *other) {
  std::unique_ptr<Operation> self = parentBlock_->remove(this);
  other->parentBlock()->insert(other, std::move(self));
}

Operation *Operation::nextNode() const {
  auto it = std::next(self_);
  return it == parentBlock_->ops_.end() ? nullptr : it->get();
}

Operation *Operation::prevNode() const {
  if (self_ == parentBlock_->ops_.begin())
    return nullptr;
  return std::prev(self_)->get();
}

void Operation::walk(const std::function<void(Operation *)> &fn) {
  fn(this);
  for (auto &r : regions_)
    for (auto &b : r->blocks_)
      for (Operation *op : b->opsVector())
        op->walk(fn);
}

Block::~Block() {
  // Every use goes before any value dies, so ops may be destroyed in any
  // order (a pass may have left a user above its definition in invalid IR).
  for (auto op = ops_.rbegin(); op != ops_.rend(); ++op)
    (*op)->dropAllReferences();
  ops_.clear();
}

std::vector<Value *> Block::arguments() const {
  std::vector<Value *> out;
  for (auto &a : args_)
    out.push_back(a.get());
  return out;
}

Value *Block::addArgument(Type *t) {
  args_.push_back(std::unique_ptr<Value>(new Value(t, nullptr, this, numArguments())));
  return args_.back().get();
}

void Block::eraseArgument(unsigned i) {
  assert(!args_[i]->hasUses() && "erasing a block argument that is still used");
  args_.erase(args_.begin() + i);
  for (unsigned j = i; j < args_.size(); ++j)
    args_[j]->index_ = j;
}

Operation *Block::terminator() const {
  if (ops_.empty() || !ops_.back()->hasTrait(OpTrait::Terminator))
    return nullptr;
  return ops_.back().get();
}

std::vector<Operation *> Block::opsVector() const {
  std::vector<Operation *> out;
  out.reserve(ops_.size());
  for (auto &op : ops_)
    out.push_back(op.get());
  return out;
}

Operation *Block::insert(Operation *before, std::unique_ptr<Operation> op) {
  assert(!op->parentBlock_ && "inserting an op that is already in a block");
  assert((!before || before->parentBlock_ == this) && "insertion point in another block");
  Operation *raw = op.get();
  raw->parentBlock_ = this;
  raw->self_ = ops_.insert(before ? before->self_ : ops_.end(), std::move(op));
  return raw;
}

std::unique_ptr<Operation> Block::remove(Operation *op) {
  assert(op->parentBlock_ == this);
  std::unique_ptr<Operation> owned = std::move(*op->self_);
  ops_.erase(op->self_);
  op->parentBlock_ = nullptr;
  return owned;
}

} // namespace tk
