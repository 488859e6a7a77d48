#include "interpreter/HostBuffer.h"

#include "lang/Float16.h"

#include <cassert>
#include <cmath>
#include <cstring>

namespace tk {
namespace {

template <typename T> T readAs(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void writeAs(std::byte *p, T v) { std::memcpy(p, &v, sizeof v); }

// Integer stores from a double: truncate toward zero, then wrap to the width
// through int64 (values beyond int64 saturate there; host code filling test
// buffers never needs them).
int64_t toInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2e18)
    return INT64_MAX;
  if (v <= -9.2e18)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}

} // namespace

HostBuffer HostBuffer::allocate(std::string name, DType dtype, int64_t numElements) {
  assert(numElements >= 0);
  HostBuffer b;
  b.name_ = std::move(name);
  b.dtype_ = dtype;
  b.bytes_ = static_cast<size_t>(numElements) * dtypeBytes(dtype);
  // At least one byte, so even an empty buffer has an address of its own.
  b.owned_.assign(b.bytes_ ? b.bytes_ : 1, std::byte{0});
  b.data_ = b.owned_.data();
  b.tracked_ = true;
  b.written_.assign(b.bytes_, 0);
  return b;
}

HostBuffer HostBuffer::wrap(std::string name, void *data, size_t bytes, DType dtype) {
  HostBuffer b;
  b.name_ = std::move(name);
  b.dtype_ = dtype;
  b.data_ = static_cast<std::byte *>(data);
  b.bytes_ = bytes;
  return b;
}

double HostBuffer::get(int64_t i) const {
  assert(i >= 0 && i < numElements());
  const std::byte *p = data_ + i * dtypeBytes(dtype_);
  switch (dtype_) {
  case DType::I1:
    return readAs<uint8_t>(p) & 1;
  case DType::I8:
    return readAs<int8_t>(p);
  case DType::I16:
    return readAs<int16_t>(p);
  case DType::I32:
    return readAs<int32_t>(p);
  case DType::I64:
    return static_cast<double>(readAs<int64_t>(p));
  case DType::U8:
    return readAs<uint8_t>(p);
  case DType::U16:
    return readAs<uint16_t>(p);
  case DType::U32:
    return readAs<uint32_t>(p);
  case DType::U64:
    return static_cast<double>(readAs<uint64_t>(p));
  case DType::F16:
    return halfToFloat(readAs<uint16_t>(p));
  case DType::BF16:
    return bf16ToFloat(readAs<uint16_t>(p));
  case DType::F32:
    return readAs<float>(p);
  case DType::F64:
    return readAs<double>(p);
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    return fp8ToFloat(readAs<uint8_t>(p), dtype_);
  }
  return 0;
}

void HostBuffer::set(int64_t i, double value) {
  assert(i >= 0 && i < numElements());
  size_t size = dtypeBytes(dtype_);
  std::byte *p = data_ + i * size;
  switch (dtype_) {
  case DType::I1:
    writeAs<uint8_t>(p, value != 0);
    break;
  case DType::I8:
  case DType::U8:
    writeAs<uint8_t>(p, static_cast<uint8_t>(toInt(value)));
    break;
  case DType::I16:
  case DType::U16:
    writeAs<uint16_t>(p, static_cast<uint16_t>(toInt(value)));
    break;
  case DType::I32:
  case DType::U32:
    writeAs<uint32_t>(p, static_cast<uint32_t>(toInt(value)));
    break;
  case DType::I64:
  case DType::U64:
    writeAs<uint64_t>(p, static_cast<uint64_t>(toInt(value)));
    break;
  case DType::F16:
    writeAs<uint16_t>(p, doubleToHalf(value));
    break;
  case DType::BF16:
    writeAs<uint16_t>(p, doubleToBF16(value));
    break;
  case DType::F32:
    writeAs<float>(p, static_cast<float>(value));
    break;
  case DType::F8E4NV:
  case DType::F8E5:
  case DType::F8E4B15:
    writeAs<uint8_t>(p, doubleToFp8(value, dtype_));
    break;
  case DType::F64:
    writeAs<double>(p, value);
    break;
  }
  markWritten(i * size, size);
}

} // namespace tk
