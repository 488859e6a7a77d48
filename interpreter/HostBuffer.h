// HostBuffer: a block of host memory a kernel may read and write when it runs
// in the interpreter (interpreter/Interpreter.h), with its name, size and element
// type, so an out-of-bounds access can name the buffer it missed.
//
// Two kinds:
//   - wrap(): the caller's memory (a numpy array, a std::vector). Every byte
//     counts as initialised; tk never frees it.
//   - allocate(): memory tk owns. It remembers which bytes were written (by
//     the host through set()/fill or by the kernel), so a kernel that reads an
//     output before writing it is reported instead of reading garbage.
//
//   HostBuffer x = HostBuffer::allocate("x", DType::F16, 1024);
//   for (int64_t i = 0; i < 1024; ++i)
//     x.set(i, rng());                     // rounded to fp16, marked written
//   HostBuffer out = HostBuffer::allocate("out", DType::F16, 1024); // unwritten
//   ... interpret(...) ...
//   double first = out.get(0);             // fp16 bits widened to double
//
// A HostBuffer is move-only; the interpreter refers to it by address, so it
// must stay put while a run uses it.
#pragma once

#include "lang/DType.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tk {

class HostBuffer {
public:
  /// tk-owned memory for `numElements` elements, none of them written yet
  /// (the bytes are zero, but reading them before writing is reported).
  static HostBuffer allocate(std::string name, DType dtype, int64_t numElements);
  /// The caller's memory: `bytes` bytes at `data`, all initialised.
  static HostBuffer wrap(std::string name, void *data, size_t bytes, DType dtype);

  HostBuffer(HostBuffer &&) = default;
  HostBuffer &operator=(HostBuffer &&) = default;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;

  const std::string &name() const { return name_; }
  DType dtype() const { return dtype_; }
  std::byte *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  int64_t numElements() const { return static_cast<int64_t>(bytes_ / dtypeBytes(dtype_)); }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data_); }

  /// Whether tk tracks the written bytes (allocate) or trusts them (wrap).
  bool isTracked() const { return tracked_; }
  /// Whether the `n` bytes at `offset` have all been written.
  bool isWritten(size_t offset, size_t n) const {
    return !tracked_ || std::memchr(written_.data() + offset, 0, n) == nullptr;
  }
  void markWritten(size_t offset, size_t n) {
    if (!tracked_)
      return;
    // Mostly one element (a few bytes): a loop beats a memset call there.
    if (n > 64)
      std::memset(written_.data() + offset, 1, n);
    else
      for (size_t i = 0; i < n; ++i)
        written_[offset + i] = 1;
  }
  void markAllWritten() { markWritten(0, bytes_); }

  /// Element `i` as a double (fp16/bf16 widened, integers converted).
  double get(int64_t i) const;
  /// Sets element `i`, rounding as a store of that dtype would (fp16/bf16
  /// to nearest even; integers truncate toward zero and wrap), and marks it
  /// written.
  void set(int64_t i, double value);

  /// Set by the interpreter when a kernel stored into this buffer.
  bool storedByKernel() const { return storedByKernel_; }
  void setStoredByKernel(bool v) { storedByKernel_ = v; }

  /// Memory the caller may not have written (a read-only numpy array, a
  /// view of a `bytes` object): a store or atomic into it stops the run with
  /// an error before it writes.
  bool isReadOnly() const { return readOnly_; }
  void setReadOnly(bool v) { readOnly_ = v; }

private:
  HostBuffer() = default;

  std::string name_;
  DType dtype_ = DType::U8;
  std::byte *data_ = nullptr;
  size_t bytes_ = 0;
  bool tracked_ = false;
  bool storedByKernel_ = false;
  bool readOnly_ = false;
  std::vector<std::byte> owned_;
  std::vector<uint8_t> written_; // one flag per byte when tracked
};

} // namespace tk
