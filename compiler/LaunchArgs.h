// LaunchArgs: how a compiled kernel's runtime parameters reach
// cuLaunchKernel, for every launch path: the runtime's GpuKernel and the
// public C++ API (runtime/), and the Python launcher (python/src/).
//
// Each runtime parameter (a KernelParam of compiler/Compiler.h) travels in a
// slot of the kernel's parameter space: a kind (SlotKind: u8..u64 take the
// signed kind of their width, the bits are the same), a size, and an offset,
// every slot at its natural alignment as PTX's .param space lays the
// parameters out:
//
//   kernel(x_ptr: *fp32, y_ptr: *fp32, n: i32, scale: fp16, flag: i1, m: u64)
//   slot      pointer     pointer      i32     fp16         i1        i64
//   offset    0           8            16      20           22        24     -> 32 bytes
//
// A typed argument (ArgValue: a kind and the value's bits, the layout of the
// public tk::Arg's value) goes into a slot when its value survives: an
// integer into any integer slot it fits (a signed or an unsigned value of
// the slot's width), a float into any float slot (rounded to nearest even),
// a pointer only into a pointer slot; an argument of the slot's own kind
// keeps its bits. What does not go is said one way, naming the argument:
//
//   kernel 'scalars': argument 2 ('c') is i8 in the signature; the i32 passed, 300, does not
//   fit (-128 to 255)
//   kernel 'copy': argument 0 ('x_ptr') is pointer in the signature but the argument passed
//   is i32
//
//   ParamLayout layout = paramLayout(compiled.params);   // once, at compile or load
//   ArgValue args[] = {ArgValue::ofPointer(x), ArgValue::ofPointer(y), ArgValue::ofI64(n)};
//   alignas(8) char buffer[kMaxPackedBytes];
//   void *slots[3];
//   size_t bad = packArgs(args, layout, buffer, slots);  // 3: all stored
//   // cuLaunchKernel(..., slots, nullptr) or, packed, its `extra` with buffer, layout.bytes
#pragma once

#include "compiler/Compiler.h"
#include "lang/DType.h"
#include "lang/Float16.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tk {

/// The kind of value in one parameter slot. The order is the public
/// tk::Arg::Kind's (include/tk/Kernel.h), which runtime/ checks.
/// TensorMap, last and not one of tk::Arg's, is a CUtensorMap's 128 bytes
/// (aligned to 64) that only Python's launch passes: its ArgValue holds the
/// host address of the bytes, which packArgs copies.
enum class SlotKind : uint8_t { Pointer, I1, I8, I16, I32, I64, F16, BF16, F32, F64, TensorMap };

/// "pointer", "i1", "i8", "i16", "i32", "i64", "fp16", "bf16", "fp32", "fp64".
const char *slotKindName(SlotKind kind);
/// The slot of a parameter of this type; nullopt for a dtype no launch can
/// pass (none today: every dtype of lang/DTypes.def has one).
std::optional<SlotKind> slotKindOf(bool isPointer, DType dtype);
inline std::optional<SlotKind> slotKindOf(const KernelParam &p) {
  return p.isTensorMap ? SlotKind::TensorMap : slotKindOf(p.isPointer, p.dtype);
}
/// The slot's size in bytes: 8 for pointers, i64, fp64; 4, 2, 1 for the rest by width.
constexpr uint32_t slotBytes(SlotKind kind) {
  switch (kind) {
  case SlotKind::TensorMap:
    return 128;
  case SlotKind::Pointer:
  case SlotKind::I64:
  case SlotKind::F64:
    return 8;
  case SlotKind::I32:
  case SlotKind::F32:
    return 4;
  case SlotKind::I16:
  case SlotKind::F16:
  case SlotKind::BF16:
    return 2;
  case SlotKind::I1:
  case SlotKind::I8:
    return 1;
  }
  return 8;
}
constexpr bool isIntegerSlot(SlotKind k) { return k >= SlotKind::I1 && k <= SlotKind::I64; }
constexpr bool isFloatSlot(SlotKind k) { return k >= SlotKind::F16 && k <= SlotKind::F64; }
/// A slot's alignment: its size, but 64 for a CUtensorMap (`.align 64`).
constexpr uint32_t slotAlign(SlotKind k) { return k == SlotKind::TensorMap ? 64 : slotBytes(k); }

/// The parameter space of a kernel: each runtime parameter's slot and
/// offset, and the bytes in all.
struct ParamLayout {
  std::vector<SlotKind> kinds;
  std::vector<uint32_t> offsets;
  uint32_t bytes = 0;
};
/// The layout of `kinds`, in order, each at its natural alignment.
ParamLayout paramLayout(std::span<const SlotKind> kinds);

/// The most bytes of kernel parameters PTX allows at the ISA version tk
/// emits (8.0; 8.1 and sm_70 on raise it to 32,764): 544 pointers. The
/// compile rejects a kernel whose layout is larger (Compiler.h's gpu stage),
/// so no launch path meets one.
constexpr uint32_t kMaxParamBytes = 4352;

/// The most runtime parameters a packed buffer on the stack is sized for,
/// and its bytes: a slot is at most 8 bytes and aligned to its size, so n
/// slots take at most 8n bytes; the 8 more let packArgs store whole 8-byte
/// words.
constexpr size_t kMaxPackedParams = 256;
constexpr size_t kMaxPackedBytes = 8 * kMaxPackedParams + 8;

/// A typed launch argument: its kind and its value's bits at offset 0, as
/// the driver reads them (little-endian; the public tk::Arg keeps its value
/// in the same union).
struct ArgValue {
  union Value {
    uint64_t pointer;
    uint8_t i1;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t bits16; // fp16 and bf16 patterns
    float f32;
    double f64;
  } value;
  SlotKind kind;

  static ArgValue ofPointer(uint64_t p) { return make(SlotKind::Pointer, &Value::pointer, p); }
  static ArgValue ofI1(bool v) { return make(SlotKind::I1, &Value::i1, uint8_t(v)); }
  static ArgValue ofI32(int32_t v) { return make(SlotKind::I32, &Value::i32, v); }
  static ArgValue ofI64(int64_t v) { return make(SlotKind::I64, &Value::i64, v); }
  static ArgValue ofF32(float v) { return make(SlotKind::F32, &Value::f32, v); }
  static ArgValue ofF64(double v) { return make(SlotKind::F64, &Value::f64, v); }
  /// The 128 bytes of a CUtensorMap at host address `map` (alive until the
  /// launch has packed them).
  static ArgValue ofTensorMap(const void *map) {
    return make(SlotKind::TensorMap, &Value::pointer, uint64_t(reinterpret_cast<uintptr_t>(map)));
  }

private:
  // The whole word zeroed first: narrow kinds leave the upper bytes defined.
  template <class T> static ArgValue make(SlotKind kind, T Value::*field, T v) {
    ArgValue a;
    a.value.pointer = 0;
    a.value.*field = v;
    a.kind = kind;
    return a;
  }
};

/// An integer argument's value (i1 .. i64 kinds), sign-extended.
int64_t integerValue(const ArgValue &a) noexcept;
/// A float argument's value (fp16 .. fp64 kinds).
double floatValue(const ArgValue &a) noexcept;

/// Converts `a` to a slot of kind `want` (see the header comment) and
/// writes the slot's bytes at `out` (slotBytes(want) of them). False,
/// writing nothing, when the kinds do not mix or the integer does not fit.
bool convertArg(const ArgValue &a, SlotKind want, void *out) noexcept;

/// Writes `a` into a slot of kind `want` at `out`, which has 8 bytes of
/// room. An argument of the slot's own kind (the launches' usual case) is
/// one 8-byte store: its slot's bytes first, the rest landing where the next
/// slot or the padding goes (slots are written in order, so a later slot
/// overwrites them). An fp64 into an fp32 slot (a Python float passed to
/// an fp32 parameter) is rounded here too; any other kind goes through
/// convertArg.
[[gnu::always_inline]] inline bool storeArg(const ArgValue &a, SlotKind want, char *out) noexcept {
  if (a.kind == want && want != SlotKind::TensorMap) [[likely]] {
    std::memcpy(out, &a.value, 8);
    return true;
  }
  if (a.kind == SlotKind::F64 && want == SlotKind::F32) {
    float f = float(a.value.f64);
    std::memcpy(out, &f, sizeof f);
    return true;
  }
  return convertArg(a, want, out);
}

/// Stores `args[i]` at `buffer + layout.offsets[i]` and points `slots[i]`
/// there: the two forms cuLaunchKernel takes (the packed buffer through
/// `extra`, or the array of pointers). `buffer` has layout.bytes + 8 bytes
/// (kMaxPackedBytes for up to kMaxPackedParams arguments), `args.size()` is
/// layout.kinds.size(). Returns
/// args.size(), or the index of the first argument that does not go into
/// its slot (argError says why).
[[gnu::always_inline]] inline size_t packArgs(std::span<const ArgValue> args,
                                              const ParamLayout &layout, char *buffer,
                                              void **slots) noexcept {
  const SlotKind *kinds = layout.kinds.data();
  const uint32_t *offsets = layout.offsets.data();
  for (size_t i = 0; i < args.size(); ++i) {
    char *slot = buffer + offsets[i];
    if (!storeArg(args[i], kinds[i], slot)) [[unlikely]]
      return i;
    slots[i] = slot;
  }
  return args.size();
}

/// Why `a` does not go into argument `index` (`name`) of `kernel`, a slot of
/// kind `want` (see the header comment).
std::string argError(std::string_view kernel, size_t index, std::string_view name, SlotKind want,
                     const ArgValue &a);
/// "kernel 'add' takes 4 arguments (x_ptr, y_ptr, out_ptr, n) but 3 were passed".
std::string argCountError(std::string_view kernel, std::span<const std::string> names,
                          size_t passed);

} // namespace tk
