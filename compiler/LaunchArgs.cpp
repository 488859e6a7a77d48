#include "compiler/LaunchArgs.h"

#include <fmt/format.h>

namespace tk {

const char *slotKindName(SlotKind kind) {
  switch (kind) {
  case SlotKind::Pointer:
    return "pointer";
  case SlotKind::I1:
    return "i1";
  case SlotKind::I8:
    return "i8";
  case SlotKind::I16:
    return "i16";
  case SlotKind::I32:
    return "i32";
  case SlotKind::I64:
    return "i64";
  case SlotKind::F16:
    return "fp16";
  case SlotKind::BF16:
    return "bf16";
  case SlotKind::F32:
    return "fp32";
  case SlotKind::F64:
    return "fp64";
  case SlotKind::TensorMap:
    return "tensormap";
  }
  return "?";
}

std::optional<SlotKind> slotKindOf(bool isPointer, DType dtype) {
  if (isPointer)
    return SlotKind::Pointer;
  // No default: a dtype added to lang/DTypes.def is a -Wswitch warning here
  // until it is given a slot (or left without one).
  switch (dtype) {
  case DType::I1:
    return SlotKind::I1;
  case DType::I8:
  case DType::U8:
    return SlotKind::I8;
  case DType::I16:
  case DType::U16:
    return SlotKind::I16;
  case DType::I32:
  case DType::U32:
    return SlotKind::I32;
  case DType::I64:
  case DType::U64:
    return SlotKind::I64;
  case DType::F16:
    return SlotKind::F16;
  case DType::BF16:
    return SlotKind::BF16;
  case DType::F32:
    return SlotKind::F32;
  case DType::F64:
    return SlotKind::F64;
  case DType::F8E4NV: // fp8 scalars are not kernel arguments (pointers to fp8 are)
  case DType::F8E5:
  case DType::F8E4B15:
    break;
  }
  return std::nullopt;
}

ParamLayout paramLayout(std::span<const SlotKind> kinds) {
  ParamLayout layout;
  uint32_t offset = 0;
  for (SlotKind kind : kinds) {
    uint32_t size = slotBytes(kind), align = slotAlign(kind);
    offset = (offset + align - 1) / align * align;
    layout.kinds.push_back(kind);
    layout.offsets.push_back(offset);
    offset += size;
  }
  layout.bytes = offset;
  return layout;
}

int64_t integerValue(const ArgValue &a) noexcept {
  switch (a.kind) {
  case SlotKind::I1:
    return a.value.i1;
  case SlotKind::I8:
    return a.value.i8;
  case SlotKind::I16:
    return a.value.i16;
  case SlotKind::I32:
    return a.value.i32;
  case SlotKind::I64:
    return a.value.i64;
  default:
    return 0;
  }
}

double floatValue(const ArgValue &a) noexcept {
  switch (a.kind) {
  case SlotKind::F16:
    return halfToFloat(a.value.bits16);
  case SlotKind::BF16:
    return bf16ToFloat(a.value.bits16);
  case SlotKind::F32:
    return a.value.f32;
  case SlotKind::F64:
    return a.value.f64;
  default:
    return 0;
  }
}

namespace {

unsigned integerBits(SlotKind k) {
  switch (k) {
  case SlotKind::I1:
    return 1;
  case SlotKind::I8:
    return 8;
  case SlotKind::I16:
    return 16;
  case SlotKind::I32:
    return 32;
  default:
    return 64;
  }
}

// A slot of `bits` takes a value of its signed or its unsigned type.
bool fitsBits(int64_t v, unsigned bits) {
  if (bits >= 64)
    return true;
  if (bits == 1)
    return v == 0 || v == 1;
  return v >= -(int64_t(1) << (bits - 1)) && v <= (int64_t(1) << bits) - 1;
}

template <class T> void put(void *out, T v) { std::memcpy(out, &v, sizeof v); }

} // namespace

bool convertArg(const ArgValue &a, SlotKind want, void *out) noexcept {
  if (want == SlotKind::TensorMap || a.kind == SlotKind::TensorMap) {
    if (a.kind != want)
      return false;
    std::memcpy(out, reinterpret_cast<const void *>(uintptr_t(a.value.pointer)), 128);
    return true;
  }
  if (a.kind == want) {
    // The bits as they are: an fp16 stays the same pattern (no round trip
    // through double, which would quiet a signalling NaN).
    std::memcpy(out, &a.value, slotBytes(want));
    return true;
  }
  if (want == SlotKind::Pointer || a.kind == SlotKind::Pointer)
    return false;
  if (isIntegerSlot(want)) {
    if (!isIntegerSlot(a.kind))
      return false;
    int64_t v = integerValue(a);
    if (!fitsBits(v, integerBits(want)))
      return false;
    switch (want) {
    case SlotKind::I1:
      put(out, uint8_t(v));
      break;
    case SlotKind::I8:
      put(out, uint8_t(v));
      break;
    case SlotKind::I16:
      put(out, uint16_t(v));
      break;
    case SlotKind::I32:
      put(out, uint32_t(v));
      break;
    default:
      put(out, v);
      break;
    }
    return true;
  }
  if (!isFloatSlot(a.kind))
    return false;
  double v = floatValue(a);
  switch (want) {
  case SlotKind::F16:
    put(out, doubleToHalf(v));
    break;
  case SlotKind::BF16:
    put(out, doubleToBF16(v));
    break;
  case SlotKind::F32:
    put(out, float(v));
    break;
  default:
    put(out, v);
    break;
  }
  return true;
}

std::string argError(std::string_view kernel, size_t index, std::string_view name, SlotKind want,
                     const ArgValue &a) {
  if (isIntegerSlot(want) && isIntegerSlot(a.kind)) {
    unsigned bits = integerBits(want);
    std::string range =
        bits == 1 ? "0 or 1"
                  : fmt::format("{} to {}", -(int64_t(1) << (bits - 1)), (int64_t(1) << bits) - 1);
    return fmt::format("kernel '{}': argument {} ('{}') is {} in the signature; the {} passed, {}, "
                       "does not fit ({})",
                       kernel, index, name, slotKindName(want), slotKindName(a.kind),
                       integerValue(a), range);
  }
  return fmt::format("kernel '{}': argument {} ('{}') is {} in the signature but the argument "
                     "passed is {}",
                     kernel, index, name, slotKindName(want), slotKindName(a.kind));
}

std::string argCountError(std::string_view kernel, std::span<const std::string> names,
                          size_t passed) {
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return fmt::format("kernel '{}' takes {} arguments ({}) but {} were passed", kernel, names.size(),
                     list, passed);
}

} // namespace tk
