// IRContext: owns and uniques the types and layouts of the block IR, and
// knows the SourceManager that IR locations point into.
//
//   SourceManager sm;
//   IRContext ctx(sm);
//   Type *t = ctx.tensor({128}, DType::F32);   // tensor<128xfp32>
//   t == ctx.tensor({128}, ctx.scalar(DType::F32));
//   ctx.withElement(t, ctx.i1())               // tensor<128xi1>
//
// A context outlives every module built with it. It is not thread-safe: one
// compilation, one context.
#pragma once

#include "ir/Types.h"
#include "lang/SourceManager.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace tk {

class IRContext {
public:
  explicit IRContext(SourceManager &sm);
  ~IRContext();
  IRContext(const IRContext &) = delete;
  IRContext &operator=(const IRContext &) = delete;

  SourceManager &sourceManager() const { return *sm_; }

  Type *scalar(DType d) const { return scalars_[static_cast<unsigned>(d)]; }
  Type *i1() const { return scalar(DType::I1); }
  Type *i32() const { return scalar(DType::I32); }
  Type *i64() const { return scalar(DType::I64); }
  Type *f32() const { return scalar(DType::F32); }

  /// ptr<pointee>; the pointee is a scalar or a pointer.
  Type *pointer(Type *pointee, unsigned addressSpace = 1);
  /// tensor<shape x element>; the element is a scalar or a pointer, every
  /// dimension positive.
  Type *tensor(const std::vector<int64_t> &shape, Type *element,
               const LayoutAttr *layout = nullptr);
  Type *tensor(const std::vector<int64_t> &shape, DType element) {
    return tensor(shape, scalar(element));
  }
  /// `like` with its element replaced: a tensor of the same shape and layout,
  /// or `element` itself when `like` is not a tensor.
  Type *withElement(Type *like, Type *element);
  /// `like`'s element in a tensor of `shape` (no layout); the element itself
  /// when the shape is empty (a rank-0 result is a scalar).
  Type *withShape(Type *like, const std::vector<int64_t> &shape);

  /// Takes ownership of a layout; a layout printing the same as one already
  /// owned is dropped and the existing one returned, so layouts are uniqued.
  const LayoutAttr *layout(std::unique_ptr<LayoutAttr> layout);

  /// The buffer standing for `fileName` in `loc("file":line:col)` locations of
  /// parsed IR: an existing buffer of that name, or a new one with no text.
  BufferId bufferForFile(const std::string &fileName);

private:
  SourceManager *sm_;
  std::vector<std::unique_ptr<Type>> owned_;
  std::vector<Type *> scalars_;
  std::map<std::pair<Type *, unsigned>, Type *> pointers_;
  std::map<std::tuple<std::vector<int64_t>, Type *, const LayoutAttr *>, Type *> tensors_;
  std::map<std::string, std::unique_ptr<LayoutAttr>> layouts_;
};

} // namespace tk
