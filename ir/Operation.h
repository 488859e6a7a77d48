// The structured SSA of the block IR: values, operations, blocks, regions.
//
// An Operation has an opcode (ir/Ops.def), operands (Values), results
// (Values it owns), an attribute dictionary, nested regions and a source
// location. A Region holds Blocks; structured ops (for, while, if, reduce and
// scan with a combiner) use regions of exactly one block ending in a
// terminator. A Block owns its operations in order and its arguments.
//
//   %2 = for %lo, %hi, %step, %acc0 : fp32 {        // op For, 4 operands, 1 result
//   ^bb0(%i: i32, %acc: fp32):                      // region 0, block args
//     %3 = add %acc, %x : fp32
//     yield %3 : fp32                               // terminator
//   }
//
// Ownership runs downwards (Function -> Region -> Block -> Operation ->
// Region ...); every object knows its parent. A Value keeps the list of
// operations that use it (one entry per use), so passes can replace and erase
// without scanning the function.
#pragma once

#include "ir/Attribute.h"
#include "ir/Opcode.h"
#include "ir/Types.h"
#include "lang/SourceManager.h"

#include <functional>
#include <list>
#include <memory>
#include <string_view>
#include <vector>

namespace tk {

class Block;
class Function;
class Operation;
class Region;

class Value {
public:
  Type *type() const { return type_; }
  void setType(Type *t) { type_ = t; }

  /// The op whose result this is, or null for a block argument.
  Operation *definingOp() const { return defOp_; }
  /// The block whose argument this is, or null for an op result.
  Block *ownerBlock() const { return ownerBlock_; }
  bool isBlockArgument() const { return ownerBlock_ != nullptr; }
  /// Result number or argument number.
  unsigned index() const { return index_; }

  /// The using operations, one entry per use (an op using the value twice
  /// appears twice).
  const std::vector<Operation *> &users() const { return users_; }
  bool hasUses() const { return !users_.empty(); }
  /// Makes every user use `v` instead.
  void replaceAllUsesWith(Value *v);

private:
  friend class Operation;
  friend class Block;
  Value(Type *t, Operation *op, Block *block, unsigned index)
      : type_(t), defOp_(op), ownerBlock_(block), index_(index) {}
  void addUser(Operation *op) { users_.push_back(op); }
  void removeUser(Operation *op);

  Type *type_;
  Operation *defOp_;
  Block *ownerBlock_;
  unsigned index_;
  std::vector<Operation *> users_;
};

class Region {
public:
  /// A region belongs to an operation or is the body of a function.
  Operation *parentOp() const { return parentOp_; }
  Function *parentFunction() const { return parentFunc_; }

  bool empty() const { return blocks_.empty(); }
  size_t numBlocks() const { return blocks_.size(); }
  Block &front() { return *blocks_.front(); }
  Block &block(unsigned i) { return *blocks_[i]; }
  Block *addBlock();

private:
  friend class Operation;
  friend class Function;
  Region(Operation *op, Function *fn) : parentOp_(op), parentFunc_(fn) {}
  Operation *parentOp_;
  Function *parentFunc_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

class Operation {
public:
  ~Operation();
  Operation(const Operation &) = delete;
  Operation &operator=(const Operation &) = delete;

  /// A detached op; insert it with Block::insert (or use the Builder).
  static std::unique_ptr<Operation> create(Opcode opcode, SourceLoc loc,
                                           const std::vector<Value *> &operands,
                                           const std::vector<Type *> &resultTypes,
                                           AttrDict attrs = {}, unsigned numRegions = 0);

  Opcode opcode() const { return opcode_; }
  std::string_view name() const { return opName(opcode_); }
  bool is(Opcode op) const { return opcode_ == op; }
  /// The traits of Ops.def's row, except that an inline_asm with `pure =
  /// true` is Pure (not MemRead | MemWrite).
  uint32_t traits() const;
  bool hasTrait(uint32_t trait) const { return (traits() & trait) != 0; }
  SourceLoc loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = loc; }

  unsigned numOperands() const { return static_cast<unsigned>(operands_.size()); }
  Value *operand(unsigned i) const { return operands_[i]; }
  const std::vector<Value *> &operands() const { return operands_; }
  void setOperand(unsigned i, Value *v);
  void addOperand(Value *v);
  void eraseOperand(unsigned i);

  unsigned numResults() const { return static_cast<unsigned>(results_.size()); }
  Value *result(unsigned i = 0) const { return results_[i].get(); }
  std::vector<Value *> results() const;
  /// Removes result `i` (it must have no uses); later results are renumbered.
  void eraseResult(unsigned i);

  AttrDict &attrs() { return attrs_; }
  const AttrDict &attrs() const { return attrs_; }
  void setAttr(std::string_view name, Attribute value) { attrs_.set(name, std::move(value)); }

  unsigned numRegions() const { return static_cast<unsigned>(regions_.size()); }
  Region &region(unsigned i) { return *regions_[i]; }
  /// The single block of region `i` (structured ops).
  Block &body(unsigned i = 0) { return regions_[i]->front(); }
  /// Appends an empty region (the verifier decides whether the op may have it).
  Region &addRegion();

  Block *parentBlock() const { return parentBlock_; }
  /// The op whose region holds this op, or null at function level.
  Operation *parentOp() const;
  Function *parentFunction() const;
  /// Whether this op lies inside `ancestor` (at any depth); an op is not its own.
  bool isInside(const Operation *ancestor) const;

  /// No side effects here and (for structured ops) in any nested op.
  bool isSideEffectFree() const;

  /// Unlinks and destroys the op; its results must have no uses left.
  void erase();
  /// Moves the op (unlinking it from its block) to just before `other`.
  void moveBefore(Operation *other);
  /// Next/previous op in the same block, or null.
  Operation *nextNode() const;
  Operation *prevNode() const;

  /// Calls `fn` on this op and every nested op, parents before children, in
  /// text order.
  void walk(const std::function<void(Operation *)> &fn);

private:
  friend class Block;
  Operation(Opcode opcode, SourceLoc loc) : opcode_(opcode), loc_(loc) {}
  void dropOperands();
  /// Drops the operands of this op and of every nested op.
  void dropAllReferences();

  Opcode opcode_;
  SourceLoc loc_;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrDict attrs_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block *parentBlock_ = nullptr;
  std::list<std::unique_ptr<Operation>>::iterator self_;
};

class Block {
public:
  using OpList = std::list<std::unique_ptr<Operation>>;
  ~Block();

  Region *parent() const { return parent_; }
  /// The op whose region holds this block, or null for a function body.
  Operation *parentOp() const { return parent_->parentOp(); }

  unsigned numArguments() const { return static_cast<unsigned>(args_.size()); }
  Value *argument(unsigned i) const { return args_[i].get(); }
  std::vector<Value *> arguments() const;
  Value *addArgument(Type *t);
  /// Removes argument `i` (it must have no uses); later ones are renumbered.
  void eraseArgument(unsigned i);

  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  Operation *front() const { return ops_.front().get(); }
  Operation *back() const { return ops_.back().get(); }
  /// The last op if it is a terminator, else null.
  Operation *terminator() const;
  /// A snapshot of the ops in order: safe to iterate while erasing.
  std::vector<Operation *> opsVector() const;

  /// Iteration over `Operation &` in order (do not erase while iterating; use
  /// opsVector for that).
  class iterator {
  public:
    explicit iterator(OpList::const_iterator it) : it_(it) {}
    Operation &operator*() const { return **it_; }
    Operation *operator->() const { return it_->get(); }
    iterator &operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const iterator &o) const { return it_ == o.it_; }

  private:
    OpList::const_iterator it_;
  };
  iterator begin() const { return iterator(ops_.begin()); }
  iterator end() const { return iterator(ops_.end()); }

  /// Inserts `op` before `before` (null: at the end) and returns it.
  Operation *insert(Operation *before, std::unique_ptr<Operation> op);
  /// Unlinks `op` and hands it back.
  std::unique_ptr<Operation> remove(Operation *op);

private:
  friend class Region;
  friend class Operation;
  explicit Block(Region *parent) : parent_(parent) {}
  Region *parent_;
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
};

} // namespace tk
