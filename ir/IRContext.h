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
//
// It also carries the compilation's bounds on building IR (IRLimits), which
// the front end, the passes and the LLVM lowering read.
#pragma once

#include "ir/Types.h"
#include "lang/SourceManager.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace tk {

/// Bounds on the work of a compile that a small source can make huge: the
/// front end unrolls tk.static_range loops and inlines helpers, --inline
/// copies callees, and both count what they make against `maxOps`; Ctrl-C
/// reaches them, the passes and the LLVM lowering through `interrupted`.
/// The compile sets them (compiler/Compiler.h: CompileLimits, CompileHooks).
struct IRLimits {
  /// The most operations (and statements of unrolled loops and inlined
  /// helpers, which take time even when they fold to constants) one kernel
  /// may be made of; 0: no limit. TK_MAX_OPS.
  int64_t maxOps = 0;
  /// Asked at most every few milliseconds (interruptRequested()); true stops
  /// the compile with an error. Unset: never.
  std::function<bool()> interrupted;

  /// Whether `interrupted` says to stop; it is called only when 10 ms have
  /// passed since the last call, so this is cheap enough for every op. Once
  /// it said yes, the answer stays yes.
  bool interruptRequested() {
    if (!interrupted || stopped_)
      return stopped_;
    auto now = std::chrono::steady_clock::now();
    if (now - lastPoll_ < std::chrono::milliseconds(10))
      return false;
    lastPoll_ = now;
    stopped_ = interrupted();
    return stopped_;
  }

private:
  std::chrono::steady_clock::time_point lastPoll_{};
  bool stopped_ = false;
};

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

  /// ptr<pointee>; the pointee is a scalar or a pointer. A const pointer
  /// (ptr<pointee, const>, a `tk.const` parameter) is only read through.
  Type *pointer(Type *pointee, unsigned addressSpace = 1, bool isConst = false);
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

  IRLimits &limits() { return limits_; }

private:
  IRLimits limits_;
  SourceManager *sm_;
  std::vector<std::unique_ptr<Type>> owned_;
  std::vector<Type *> scalars_;
  std::map<std::tuple<Type *, unsigned, bool>, Type *> pointers_;
  std::map<std::tuple<std::vector<int64_t>, Type *, const LayoutAttr *>, Type *> tensors_;
  std::map<std::string, std::unique_ptr<LayoutAttr>> layouts_;
};

} // namespace tk
