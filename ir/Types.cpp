#include "ir/Types.h"

#include <cassert>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tk {

Type *Type::elementType() {
  if (auto *t = dyn_cast<TensorType>(this))
    return t->element();
  return this;
}

const std::vector<int64_t> &Type::shape() const {
  static const std::vector<int64_t> kNoShape;
  if (kind_ == Kind::Tensor)
    return static_cast<const TensorType *>(this)->dims();
  return kNoShape;
}

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape())
    n *= d;
  return n;
}

bool Type::isIntLike() {
  Type *e = elementType();
  return e->isScalar() && isInteger(cast<ScalarType>(e)->scalarDType());
}

bool Type::isFloatLike() {
  Type *e = elementType();
  return e->isScalar() && isFloat(cast<ScalarType>(e)->scalarDType());
}

bool Type::isPointerLike() { return elementType()->isPointer(); }

DType Type::dtype() {
  Type *e = elementType();
  assert(e->isScalar() && "dtype() of a pointer type");
  return cast<ScalarType>(e)->scalarDType();
}

std::string Type::str() {
  switch (kind_) {
  case Kind::Scalar:
    return std::string(dtypeName(cast<ScalarType>(this)->scalarDType()));
  case Kind::Pointer: {
    auto *p = cast<PointerType>(this);
    std::string as =
        p->addressSpace() == PointerType::kGlobal ? "" : fmt::format(", {}", p->addressSpace());
    return fmt::format("ptr<{}{}{}>", p->pointee()->str(), as, p->isConst() ? ", const" : "");
  }
  case Kind::Tensor: {
    auto *t = cast<TensorType>(this);
    std::string out = "tensor<";
    for (int64_t d : t->dims())
      out += fmt::format("{}x", d);
    out += t->element()->str();
    if (t->layout())
      out += ", " + t->layout()->str();
    return out + ">";
  }
  }
  return "<bad type>";
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::optional<std::string> tensorShapeError(std::span<const int64_t> shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d <= 0)
      return fmt::format("tensor dimensions must be positive, got {}", shapeStr(dims));
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  if (!overflow && n <= kMaxTensorElements)
    return std::nullopt;
  std::string count = overflow ? "more than 2^63" : fmt::format("{}", n);
  return fmt::format("tensor shape {} has {} elements; a tensor holds at most 2^31 ({})",
                     shapeStr(dims), count, kMaxTensorElements);
}

} // namespace tk
