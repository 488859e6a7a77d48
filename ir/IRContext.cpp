#include "ir/IRContext.h"

#include <cassert>

namespace tk {

IRContext::IRContext(SourceManager &sm) : sm_(&sm) {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND)                                                 \
  owned_.push_back(std::unique_ptr<Type>(new ScalarType(DType::ENUM)));                            \
  scalars_.push_back(owned_.back().get());
#include "lang/DTypes.def"
}

IRContext::~IRContext() = default;

Type *IRContext::pointer(Type *pointee, unsigned addressSpace, bool isConst) {
  assert(pointee && !pointee->isTensor() && "pointer to a tensor");
  Type *&slot = pointers_[{pointee, addressSpace, isConst}];
  if (!slot) {
    owned_.push_back(std::unique_ptr<Type>(new PointerType(pointee, addressSpace, isConst)));
    slot = owned_.back().get();
  }
  return slot;
}

Type *IRContext::tensor(const std::vector<int64_t> &shape, Type *element,
                        const LayoutAttr *layout) {
  assert(element && !element->isTensor() && "tensor of tensors");
  Type *&slot = tensors_[{shape, element, layout}];
  if (!slot) {
    owned_.push_back(std::unique_ptr<Type>(new TensorType(shape, element, layout)));
    slot = owned_.back().get();
  }
  return slot;
}

Type *IRContext::withElement(Type *like, Type *element) {
  if (auto *t = dyn_cast<TensorType>(like))
    return tensor(t->dims(), element, t->layout());
  return element;
}

Type *IRContext::withShape(Type *like, const std::vector<int64_t> &shape) {
  if (shape.empty())
    return like->elementType();
  return tensor(shape, like->elementType());
}

const LayoutAttr *IRContext::layout(std::unique_ptr<LayoutAttr> layout) {
  auto &slot = layouts_[layout->str()];
  if (!slot)
    slot = std::move(layout);
  return slot.get();
}

BufferId IRContext::bufferForFile(const std::string &fileName) {
  for (BufferId id = 0; id < sm_->numBuffers(); ++id)
    if (sm_->fileName(id) == fileName)
      return id;
  return sm_->addBuffer(fileName, "");
}

} // namespace tk
