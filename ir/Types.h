// Types of the block IR: scalars, pointers and block tensors.
//
// Every type is created by, owned by and uniqued in an IRContext, so two types
// are equal exactly when their pointers are equal:
//
//   IRContext ctx(sm);
//   Type *f32 = ctx.scalar(DType::F32);            // fp32
//   Type *p = ctx.pointer(f32);                     // ptr<fp32>  (address space 1, global)
//   Type *t = ctx.tensor({128, 64}, DType::F32);    // tensor<128x64xfp32>
//   Type *tp = ctx.tensor({128}, p);                // tensor<128xptr<fp32>>
//   ctx.tensor({128, 64}, DType::F32) == t;         // true: uniqued
//
// A tensor's element is a scalar or a pointer. A tensor may carry a layout
// attribute (how its elements are spread over the threads of a program); it is
// absent until the layout passes run, and its kinds (blocked, slice, mma,
// shared...) are subclasses of LayoutAttr that later issues add.
#pragma once

#include "lang/DType.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tk {

/// A layout of a tensor type: an opaque, context-owned attribute. Subclasses
/// print themselves as a keyword with parameters, e.g. `blocked<...>`, which
/// follows the element type: `tensor<128xfp32, blocked<...>>`. Two layouts are
/// the same when their pointers are equal.
class LayoutAttr {
public:
  /// The layout kinds (ir/Layout.h defines the classes).
  enum class Kind : uint8_t { Blocked, Slice, Shared, Mma, DotOperand, AMDMma };

  virtual ~LayoutAttr() = default;
  Kind layoutKind() const { return kind_; }
  virtual std::string str() const = 0;

protected:
  explicit LayoutAttr(Kind k) : kind_(k) {}

private:
  Kind kind_;
};

class Type {
public:
  enum class Kind : uint8_t { Scalar, Pointer, Tensor };

  Kind kind() const { return kind_; }
  bool isScalar() const { return kind_ == Kind::Scalar; }
  bool isPointer() const { return kind_ == Kind::Pointer; }
  bool isTensor() const { return kind_ == Kind::Tensor; }

  /// For a tensor its element type, otherwise the type itself.
  Type *elementType();
  /// The shape of a tensor, empty for scalars and pointers.
  const std::vector<int64_t> &shape() const;
  unsigned rank() const { return static_cast<unsigned>(shape().size()); }
  /// Product of the dimensions (1 for a scalar or pointer).
  int64_t numElements() const;

  /// The element is a scalar of the given kind (looking through tensors).
  bool isIntLike();   // i1, iN, uN
  bool isFloatLike(); // fp16, bf16, fp32, fp64
  bool isPointerLike();
  /// The scalar dtype of the element; only valid when the element is a scalar.
  DType dtype();

  /// The text form: `i32`, `ptr<fp16>`, `ptr<fp32, 3>`, `tensor<128x64xfp32>`.
  std::string str();

  virtual ~Type() = default;

protected:
  explicit Type(Kind k) : kind_(k) {}
  friend class IRContext;

private:
  Kind kind_;
};

class ScalarType : public Type {
public:
  DType scalarDType() const { return dtype_; }
  static bool classof(const Type *t) { return t->kind() == Kind::Scalar; }

private:
  friend class IRContext;
  explicit ScalarType(DType d) : Type(Kind::Scalar), dtype_(d) {}
  DType dtype_;
};

class PointerType : public Type {
public:
  /// Address space 1 is global memory (the default), 3 is shared memory.
  static constexpr unsigned kGlobal = 1;
  static constexpr unsigned kShared = 3;

  Type *pointee() const { return pointee_; }
  unsigned addressSpace() const { return addrSpace_; }
  /// Read-only: a store or atomic through it is an error (Triton's const
  /// pointers, from a `tk.const` parameter annotation).
  bool isConst() const { return isConst_; }
  static bool classof(const Type *t) { return t->kind() == Kind::Pointer; }

private:
  friend class IRContext;
  PointerType(Type *pointee, unsigned as, bool isConst)
      : Type(Kind::Pointer), pointee_(pointee), addrSpace_(as), isConst_(isConst) {}
  Type *pointee_;
  unsigned addrSpace_;
  bool isConst_;
};

class TensorType : public Type {
public:
  const std::vector<int64_t> &dims() const { return shape_; }
  Type *element() const { return element_; }
  const LayoutAttr *layout() const { return layout_; }
  static bool classof(const Type *t) { return t->kind() == Kind::Tensor; }

private:
  friend class IRContext;
  TensorType(std::vector<int64_t> shape, Type *element, const LayoutAttr *layout)
      : Type(Kind::Tensor), shape_(std::move(shape)), element_(element), layout_(layout) {}
  std::vector<int64_t> shape_;
  Type *element_;
  const LayoutAttr *layout_;
};

/// LLVM-style casts on the type kind.
template <typename T> bool isa(const Type *t) { return T::classof(t); }
template <typename T> T *cast(Type *t) { return static_cast<T *>(t); }
template <typename T> T *dyn_cast(Type *t) {
  return t && T::classof(t) ? static_cast<T *>(t) : nullptr;
}

/// "[128, 64]": the shape as diagnostics print it.
std::string shapeStr(const std::vector<int64_t> &shape);

/// The most elements a tensor type holds: 2^31, as many as the largest
/// tk.arange (whose values are i32). The bound keeps every count, byte size
/// and index computed from a shape far from int64 overflow, so no stage
/// after the one that makes a type has to check its arithmetic. (The compile
/// budgets of docs/compiler.md refuse much smaller tensors on the GPU.)
constexpr int64_t kMaxTensorElements = int64_t(1) << 31;

/// Why `shape` cannot be a tensor's, or nullopt when it can: a dimension
/// that is not positive, or more than kMaxTensorElements elements in all
/// (the product computed without overflow). Every place that makes a tensor
/// type from outside input asks it first: the front end (shapes, broadcasts),
/// the IR parser and the verifier.
///
///   tensorShapeError({128, 64})         == nullopt
///   tensorShapeError({1 << 62, 4})      == "tensor shape [4611686018427387904, 4] has more
///                                          than 2^63 elements; a tensor holds at most 2^31
///                                          (2147483648)"
std::optional<std::string> tensorShapeError(std::span<const int64_t> shape);

} // namespace tk
