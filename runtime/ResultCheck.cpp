#include "runtime/ResultCheck.h"

#include "ir/Attribute.h"
#include "lang/Float16.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tk {

Tolerance toleranceOf(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {1e-9, 1e-12};
  case DType::F32:
    return {1e-4, 1e-5};
  case DType::F16:
    return {2e-3, 1e-3};
  case DType::BF16:
    return {1.6e-2, 8e-3};
  default:
    return {0, 0};
  }
}

double elementValue(const std::byte *p, DType d) {
  auto as = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (d) {
  case DType::F16:
    return halfToFloat(as(uint16_t()));
  case DType::BF16:
    return bf16ToFloat(as(uint16_t()));
  case DType::F32:
    return as(float());
  case DType::F64:
    return as(double());
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    return fp8ToFloat(as(uint8_t()), d);
  case DType::I1:
    return as(uint8_t()) & 1;
  case DType::I8:
    return as(int8_t());
  case DType::I16:
    return as(int16_t());
  case DType::I32:
    return as(int32_t());
  case DType::I64:
    return double(as(int64_t()));
  case DType::U8:
    return as(uint8_t());
  case DType::U16:
    return as(uint16_t());
  case DType::U32:
    return as(uint32_t());
  case DType::U64:
    return double(as(uint64_t()));
  }
  return 0;
}

std::string elementText(const std::byte *p, DType d) {
  if (isFloat(d))
    return formatDouble(elementValue(p, d));
  uint64_t bits = 0;
  std::memcpy(&bits, p, dtypeBytes(d));
  if (d == DType::I1)
    return (bits & 1) ? "true" : "false";
  if (isSigned(d)) {
    unsigned shift = 64 - dtypeBits(d);
    return fmt::format("{}", int64_t(bits << shift) >> shift);
  }
  return fmt::format("{}", bits);
}

double largestMagnitude(const std::byte *elements, size_t count, DType dtype) {
  if (!isFloat(dtype))
    return 0;
  double m = 0;
  for (size_t i = 0; i < count; ++i) {
    double v = elementValue(elements + i * dtypeBytes(dtype), dtype);
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  }
  return m;
}

namespace {

double boundOf(double expected, DType dtype, double scale) {
  Tolerance t = toleranceOf(dtype);
  return t.rtol * std::fabs(expected) + t.atol * scale;
}

} // namespace

bool elementsAgree(const std::byte *got, const std::byte *expected, DType dtype, double scale) {
  if (dtype == DType::I1) // kept as one byte, 0 or 1
    return ((std::to_integer<uint8_t>(*got) ^ std::to_integer<uint8_t>(*expected)) & 1) == 0;
  if (!isFloat(dtype))
    return std::memcmp(got, expected, dtypeBytes(dtype)) == 0;
  double g = elementValue(got, dtype), e = elementValue(expected, dtype);
  if (std::isnan(g) || std::isnan(e))
    return std::isnan(g) && std::isnan(e);
  if (std::isinf(g) || std::isinf(e))
    return g == e;
  return std::fabs(g - e) <= boundOf(e, dtype, scale);
}

std::string differenceWhy(const std::byte *got, const std::byte *expected, DType dtype,
                          double scale) {
  if (!isFloat(dtype))
    return fmt::format("{}: compared exactly", dtypeName(dtype));
  double g = elementValue(got, dtype), e = elementValue(expected, dtype);
  Tolerance t = toleranceOf(dtype);
  return fmt::format("{}: |difference| {} > {} = {} x |expected| + {} x {}, the largest "
                     "magnitude expected",
                     dtypeName(dtype), formatDouble(std::fabs(g - e)),
                     formatDouble(boundOf(e, dtype, scale)), formatDouble(t.rtol),
                     formatDouble(t.atol), formatDouble(scale));
}

std::optional<Difference> firstDifference(const std::byte *got, const std::byte *expected,
                                          size_t count, DType dtype, double scale) {
  const size_t size = dtypeBytes(dtype);
  for (size_t i = 0; i < count; ++i)
    if (!elementsAgree(got + i * size, expected + i * size, dtype, scale))
      return Difference{i, elementText(got + i * size, dtype),
                        elementText(expected + i * size, dtype),
                        differenceWhy(got + i * size, expected + i * size, dtype, scale)};
  return std::nullopt;
}

} // namespace tk
