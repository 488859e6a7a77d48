#include "compiler/ArgSpecialization.h"

namespace tk {

std::string_view factSuffix(ArgFact fact) {
  switch (fact) {
  case ArgFact::None:
    return "";
  case ArgFact::Divisible16:
    return ":16";
  case ArgFact::EqualsOne:
    return ":1";
  case ArgFact::Divisible8:
    return ":8";
  }
  return "";
}

int64_t factDivisibility(ArgFact fact) {
  switch (fact) {
  case ArgFact::Divisible16:
    return 16;
  case ArgFact::Divisible8:
    return 8;
  case ArgFact::None:
  case ArgFact::EqualsOne:
    return 1;
  }
  return 1;
}

std::string ArgSpecialization::entry() const {
  std::string out = isPointer ? "*" : "";
  out += dtypeName(dtype);
  out += factSuffix(fact);
  return out;
}

ArgSpecialization specializeArg(const RuntimeArg &arg, bool allowFacts) {
  ArgSpecialization s;
  switch (arg.kind) {
  case RuntimeArg::Kind::Pointer:
    s.isPointer = true;
    s.dtype = arg.dtype;
    break;
  case RuntimeArg::Kind::Int:
    s.dtype = integerType(arg.intValue, arg.aboveInt64);
    break;
  case RuntimeArg::Kind::Float:
    s.dtype = DType::F32;
    break;
  case RuntimeArg::Kind::Bool:
    s.dtype = DType::I1;
    break;
  case RuntimeArg::Kind::Scalar:
    s.dtype = arg.dtype;
    break;
  }
  if (!allowFacts || !takesFacts(s.isPointer, s.dtype))
    return s;
  // A u64's bits are divisible by 16 or 8 exactly when its value is (2**64
  // is), and a u64 is never 1.
  s.fact = s.isPointer ? pointerFact(arg.address) : integerFact(arg.intValue);
  return s;
}

} // namespace tk
