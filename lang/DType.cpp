#include "lang/DType.h"

namespace tk {
namespace {

struct DTypeInfo {
  std::string_view irName;
  std::string_view pyName;
  unsigned bits;
  DTypeKind kind;
};

constexpr DTypeInfo kInfo[] = {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND) {IRNAME, PYNAME, BITS, DTypeKind::KIND},
#include "lang/DTypes.def"
};

constexpr DType kAll[] = {
#define TK_DTYPE(ENUM, IRNAME, PYNAME, BITS, KIND) DType::ENUM,
#include "lang/DTypes.def"
};

const DTypeInfo &info(DType t) { return kInfo[static_cast<unsigned>(t)]; }

} // namespace

std::string_view dtypeName(DType t) { return info(t).irName; }
std::string_view dtypePythonName(DType t) { return info(t).pyName; }
unsigned dtypeBits(DType t) { return info(t).bits; }
DTypeKind dtypeKind(DType t) { return info(t).kind; }

std::optional<DType> parseDTypeName(std::string_view name) {
  for (DType t : kAll)
    if (info(t).irName == name)
      return t;
  return std::nullopt;
}

std::optional<DType> parseSignatureDTypeName(std::string_view name) {
  if (name == "bool" || name == "u1")
    return DType::I1;
  return parseDTypeName(name);
}

std::optional<DType> parseDTypePythonName(std::string_view name) {
  for (DType t : kAll)
    if (info(t).pyName == name || info(t).irName == name)
      return t;
  // Triton's extra spellings.
  if (name == "bool")
    return DType::I1;
  return std::nullopt;
}

} // namespace tk
