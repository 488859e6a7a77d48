#include "ir/Module.h"

#include <algorithm>

namespace tk {

Function::Function(std::string name, const std::vector<Type *> &argTypes,
                   std::vector<Type *> resultTypes, SourceLoc loc)
    : name_(std::move(name)), argAttrs_(argTypes.size()), resultTypes_(std::move(resultTypes)),
      loc_(loc), body_(new Region(nullptr, this)) {
  Block *entry = body_->addBlock();
  for (Type *t : argTypes)
    entry->addArgument(t);
}

void Function::walk(const std::function<void(Operation *)> &fn) {
  for (Operation *op : body().opsVector())
    op->walk(fn);
}

Function *Module::addFunction(std::unique_ptr<Function> fn) {
  funcs_.push_back(std::move(fn));
  return funcs_.back().get();
}

Function *Module::lookup(std::string_view name) const {
  for (auto &f : funcs_)
    if (f->name() == name)
      return f.get();
  return nullptr;
}

void Module::eraseFunction(Function *fn) {
  auto it = std::find_if(funcs_.begin(), funcs_.end(), [&](auto &f) { return f.get() == fn; });
  if (it != funcs_.end())
    funcs_.erase(it);
}

} // namespace tk
