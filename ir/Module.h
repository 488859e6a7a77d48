// Functions and modules: the top level of the block IR.
//
//   func @add_kernel(%arg0: ptr<fp32> {divisibility = 16}, %arg1: i32) {
//   ^bb0:
//     ...
//     return
//   }
//
// A Function has a name, typed arguments (the arguments of its body's entry
// block) with one attribute dictionary each (`divisibility = 16`,
// `constexpr = true`), result types (empty for kernels; @jit helpers that are
// called may return values) and a body region ending in `return`.
#pragma once

#include "ir/Operation.h"

#include <memory>
#include <string>
#include <vector>

namespace tk {

class IRContext;
class RemarkSink; // lang/Remarks.h

class Function {
public:
  Function(std::string name, const std::vector<Type *> &argTypes, std::vector<Type *> resultTypes,
           SourceLoc loc);

  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  SourceLoc loc() const { return loc_; }

  Region &bodyRegion() { return *body_; }
  Block &body() { return body_->front(); }

  unsigned numArguments() { return body().numArguments(); }
  Value *argument(unsigned i) { return body().argument(i); }
  AttrDict &argAttrs(unsigned i) { return argAttrs_[i]; }
  const std::vector<Type *> &resultTypes() const { return resultTypes_; }
  /// Attributes of the function itself, printed `attributes {num_warps = 4}`
  /// after the signature: compilation options such as the warps per program.
  AttrDict &attrs() { return attrs_; }

  /// Calls `fn` on every op of the body, parents first, in text order.
  void walk(const std::function<void(Operation *)> &fn);

private:
  std::string name_;
  std::vector<AttrDict> argAttrs_;
  std::vector<Type *> resultTypes_;
  AttrDict attrs_;
  SourceLoc loc_;
  std::unique_ptr<Region> body_;
};

class Module {
public:
  explicit Module(IRContext &ctx) : ctx_(&ctx) {}

  IRContext &context() const { return *ctx_; }
  const std::vector<std::unique_ptr<Function>> &functions() const { return funcs_; }
  Function *addFunction(std::unique_ptr<Function> fn);
  /// The function of that name, or null.
  Function *lookup(std::string_view name) const;
  /// Removes and destroys a function (callers must not reference it).
  void eraseFunction(Function *fn);

  /// Where passes and code generation add remarks (lang/Remarks.h): the
  /// compile's sink when it asked for remarks, else null (no remark work).
  RemarkSink *remarks() const { return remarks_; }
  void setRemarks(RemarkSink *sink) { remarks_ = sink; }

private:
  IRContext *ctx_;
  RemarkSink *remarks_ = nullptr;
  std::vector<std::unique_ptr<Function>> funcs_;
};

} // namespace tk
