// The launch paths' one binding (compiler/LaunchArgs.h): each parameter's
// slot and offset, the argument conversions, the packed buffer, and the one
// wording of what does not go.
#include "compiler/LaunchArgs.h"

#include "lang/Float16.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace tk;

namespace {

KernelParam param(bool isPointer, DType dtype) {
  KernelParam p;
  p.isPointer = isPointer;
  p.dtype = dtype;
  return p;
}

// The bytes of slot `i` of a packed buffer.
template <class T> T slotAt(const char *buffer, const ParamLayout &layout, size_t i) {
  T v;
  std::memcpy(&v, buffer + layout.offsets[i], sizeof v);
  return v;
}

TEST(LaunchArgs, EveryDTypeHasTheSlotOfItsWidth) {
  struct {
    DType dtype;
    SlotKind slot;
  } cases[] = {
      {DType::I1, SlotKind::I1},   {DType::I8, SlotKind::I8},     {DType::U8, SlotKind::I8},
      {DType::I16, SlotKind::I16}, {DType::U16, SlotKind::I16},   {DType::I32, SlotKind::I32},
      {DType::U32, SlotKind::I32}, {DType::I64, SlotKind::I64},   {DType::U64, SlotKind::I64},
      {DType::F16, SlotKind::F16}, {DType::BF16, SlotKind::BF16}, {DType::F32, SlotKind::F32},
      {DType::F64, SlotKind::F64}};
  for (auto c : cases) {
    EXPECT_EQ(slotKindOf(param(false, c.dtype)), c.slot) << dtypeName(c.dtype);
    EXPECT_EQ(slotKindOf(param(true, c.dtype)), SlotKind::Pointer) << dtypeName(c.dtype);
    EXPECT_EQ(slotBytes(c.slot), dtypeBytes(c.dtype)) << dtypeName(c.dtype);
  }
  EXPECT_EQ(slotBytes(SlotKind::Pointer), 8u);
}

TEST(LaunchArgs, TheLayoutAlignsEachSlotToItsSize) {
  // The header's example: (ptr, ptr, i32, fp16, i1, u64).
  std::vector<SlotKind> kinds = {SlotKind::Pointer, SlotKind::Pointer, SlotKind::I32,
                                 SlotKind::F16,     SlotKind::I1,      SlotKind::I64};
  ParamLayout l = paramLayout(kinds);
  EXPECT_EQ(l.offsets, (std::vector<uint32_t>{0, 8, 16, 20, 22, 24}));
  EXPECT_EQ(l.bytes, 32u);
  EXPECT_EQ(paramLayout({}).bytes, 0u);
  EXPECT_EQ(paramLayout(std::vector<SlotKind>{SlotKind::I1, SlotKind::F64}).offsets,
            (std::vector<uint32_t>{0, 8}));

  // Random lists: aligned, in order, not overlapping, tight, within 8 bytes a slot.
  std::mt19937 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SlotKind> ks(1 + rng() % 40);
    for (SlotKind &k : ks)
      k = SlotKind(rng() % 10);
    ParamLayout r = paramLayout(ks);
    ASSERT_EQ(r.offsets.size(), ks.size());
    uint32_t end = 0;
    for (size_t i = 0; i < ks.size(); ++i) {
      uint32_t size = slotBytes(ks[i]);
      EXPECT_EQ(r.offsets[i] % size, 0u);
      EXPECT_GE(r.offsets[i], end);
      EXPECT_LT(r.offsets[i], end + size) << "no more padding than the alignment needs";
      end = r.offsets[i] + size;
    }
    EXPECT_EQ(r.bytes, end);
    EXPECT_LE(r.bytes, 8 * ks.size());
  }
}

// An argument of `kind` holding `v` (an integer kind) or `d` (a float kind).
ArgValue integerArg(SlotKind kind, int64_t v) {
  ArgValue a = ArgValue::ofI64(0);
  a.kind = kind;
  switch (kind) {
  case SlotKind::I1:
    a.value.i1 = uint8_t(v);
    break;
  case SlotKind::I8:
    a.value.i8 = int8_t(v);
    break;
  case SlotKind::I16:
    a.value.i16 = int16_t(v);
    break;
  case SlotKind::I32:
    a.value.i32 = int32_t(v);
    break;
  default:
    a.value.i64 = v;
  }
  return a;
}

TEST(LaunchArgs, IntegersGoIntoEverySlotTheyFit) {
  std::mt19937_64 rng(5);
  struct {
    SlotKind slot;
    int64_t lo, hi; // a signed or an unsigned value of the slot's width
  } slots[] = {{SlotKind::I1, 0, 1},
               {SlotKind::I8, -128, 255},
               {SlotKind::I16, -32768, 65535},
               {SlotKind::I32, INT32_MIN, int64_t(UINT32_MAX)},
               {SlotKind::I64, INT64_MIN, INT64_MAX}};
  for (int trial = 0; trial < 2000; ++trial) {
    int shift = int(rng() % 64);
    int64_t v = int64_t(rng()) >> shift;
    ArgValue a = ArgValue::ofI64(v);
    for (auto s : slots) {
      uint64_t out = 0;
      bool fits = v >= s.lo && v <= s.hi;
      ASSERT_EQ(convertArg(a, s.slot, &out), fits) << v << " into " << slotKindName(s.slot);
      if (!fits) {
        EXPECT_EQ(out, 0u) << "nothing written";
        continue;
      }
      uint64_t mask =
          slotBytes(s.slot) == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * slotBytes(s.slot))) - 1;
      EXPECT_EQ(out, uint64_t(v) & mask) << v << " into " << slotKindName(s.slot);
      // And back from the narrow kind: the same bits into the wide slot.
      ArgValue narrow = integerArg(s.slot, v);
      uint64_t wide = 0;
      ASSERT_TRUE(convertArg(narrow, SlotKind::I64, &wide));
      EXPECT_EQ(wide & mask, uint64_t(v) & mask);
    }
  }
}

TEST(LaunchArgs, FloatsRoundIntoEveryFloatSlotAndKeepTheirBitsInTheirOwn) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> real(-7e4, 7e4);
  for (int trial = 0; trial < 1000; ++trial) {
    double d = real(rng);
    ArgValue a = ArgValue::ofF64(d);
    uint64_t out = 0;
    ASSERT_TRUE(convertArg(a, SlotKind::F64, &out));
    EXPECT_EQ(std::memcmp(&out, &d, 8), 0);
    uint32_t f = 0;
    ASSERT_TRUE(convertArg(a, SlotKind::F32, &f));
    float want = float(d);
    EXPECT_EQ(std::memcmp(&f, &want, 4), 0);
    uint16_t h = 0, b = 0;
    ASSERT_TRUE(convertArg(a, SlotKind::F16, &h));
    ASSERT_TRUE(convertArg(a, SlotKind::BF16, &b));
    EXPECT_EQ(h, doubleToHalf(d));
    EXPECT_EQ(b, doubleToBF16(d));
  }
  // A signalling fp16 NaN stays the pattern it is (no trip through double).
  ArgValue nan = ArgValue::ofI64(0);
  nan.kind = SlotKind::F16;
  nan.value.bits16 = 0x7D01;
  uint16_t h = 0;
  ASSERT_TRUE(convertArg(nan, SlotKind::F16, &h));
  EXPECT_EQ(h, 0x7D01);
}

TEST(LaunchArgs, KindsThatDoNotMixAreRefused) {
  uint64_t out = 0;
  EXPECT_FALSE(convertArg(ArgValue::ofI64(7), SlotKind::Pointer, &out));
  EXPECT_FALSE(convertArg(ArgValue::ofPointer(0x1000), SlotKind::I64, &out));
  EXPECT_FALSE(convertArg(ArgValue::ofF64(1.0), SlotKind::I32, &out));
  EXPECT_FALSE(convertArg(ArgValue::ofI32(1), SlotKind::F32, &out));
  EXPECT_FALSE(convertArg(ArgValue::ofPointer(0x1000), SlotKind::F64, &out));
  EXPECT_EQ(out, 0u);
  EXPECT_TRUE(convertArg(ArgValue::ofPointer(0x1000), SlotKind::Pointer, &out));
  EXPECT_EQ(out, 0x1000u);
}

TEST(LaunchArgs, PackArgsFillsTheBufferAndThePointerArray) {
  // Random values of every kind, each of its slot's own kind or converted
  // from a wider one, checked slot by slot in the buffer.
  std::vector<SlotKind> kinds = {SlotKind::I1,  SlotKind::I64, SlotKind::I8,   SlotKind::Pointer,
                                 SlotKind::F16, SlotKind::I32, SlotKind::BF16, SlotKind::F32,
                                 SlotKind::I16, SlotKind::F64, SlotKind::I1};
  ParamLayout layout = paramLayout(kinds);
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    bool b = rng() & 1;
    int64_t l = int64_t(rng());
    int8_t c = int8_t(rng());
    uint64_t p = rng() & ~uint64_t(15);
    double h = double(int(rng() % 2000) - 1000) / 8; // exact in fp16
    int32_t i = int32_t(rng());
    double bf = double(int(rng() % 200) - 100);
    float f = float(int64_t(rng() % 100000) - 50000) / 3;
    int16_t s = int16_t(rng());
    double d = double(int64_t(rng())) / 7;
    std::vector<ArgValue> args = {ArgValue::ofI1(b),      ArgValue::ofI64(l), ArgValue::ofI64(c),
                                  ArgValue::ofPointer(p), ArgValue::ofF64(h), ArgValue::ofI32(i),
                                  ArgValue::ofF64(bf),    ArgValue::ofF32(f), ArgValue::ofI64(s),
                                  ArgValue::ofF64(d),     ArgValue::ofI1(!b)};
    alignas(8) char buffer[kMaxPackedBytes];
    std::memset(buffer, 0xAB, sizeof buffer);
    void *slots[16] = {};
    ASSERT_EQ(packArgs(args, layout, buffer, slots), args.size());
    for (size_t k = 0; k < args.size(); ++k)
      EXPECT_EQ(slots[k], buffer + layout.offsets[k]);
    EXPECT_EQ(slotAt<uint8_t>(buffer, layout, 0), uint8_t(b));
    EXPECT_EQ(slotAt<int64_t>(buffer, layout, 1), l);
    EXPECT_EQ(slotAt<int8_t>(buffer, layout, 2), c);
    EXPECT_EQ(slotAt<uint64_t>(buffer, layout, 3), p);
    EXPECT_EQ(halfToFloat(slotAt<uint16_t>(buffer, layout, 4)), h);
    EXPECT_EQ(slotAt<int32_t>(buffer, layout, 5), i);
    EXPECT_EQ(bf16ToFloat(slotAt<uint16_t>(buffer, layout, 6)), bf);
    EXPECT_EQ(slotAt<float>(buffer, layout, 7), f);
    EXPECT_EQ(slotAt<int16_t>(buffer, layout, 8), s);
    EXPECT_EQ(slotAt<double>(buffer, layout, 9), d);
    EXPECT_EQ(slotAt<uint8_t>(buffer, layout, 10), uint8_t(!b));
  }
  // The first argument that does not go is named by its index.
  std::vector<ArgValue> bad(kinds.size(), ArgValue::ofI64(0));
  bad[3] = ArgValue::ofPointer(0x100);
  bad[4] = ArgValue::ofF64(1);
  bad[5] = ArgValue::ofI64(int64_t(1) << 40);
  alignas(8) char buffer[kMaxPackedBytes];
  void *slots[16];
  EXPECT_EQ(packArgs(bad, layout, buffer, slots), 5u);
}

// A `tma` descriptor's CUtensorMap: 128 bytes at a multiple of 64 (PTX's
// `.param .align 64 .b8 [128]`), copied from the host address its ArgValue
// holds; nothing else goes into its slot, and it goes into no other.
TEST(LaunchArgs, ATensorMapIs128BytesAlignedTo64) {
  KernelParam map = param(true, DType::I8);
  map.isTensorMap = true;
  ASSERT_EQ(slotKindOf(map), SlotKind::TensorMap);
  std::vector<SlotKind> kinds = {SlotKind::Pointer, SlotKind::I32, SlotKind::TensorMap,
                                 SlotKind::I32};
  ParamLayout layout = paramLayout(kinds);
  EXPECT_EQ(layout.offsets, (std::vector<uint32_t>{0, 8, 64, 192}));
  EXPECT_EQ(layout.bytes, 196u);
  alignas(64) unsigned char bytes[128];
  for (int i = 0; i < 128; ++i)
    bytes[i] = static_cast<unsigned char>(i * 7);
  std::vector<ArgValue> args = {ArgValue::ofPointer(0x1000), ArgValue::ofI32(5),
                                ArgValue::ofTensorMap(bytes), ArgValue::ofI32(-3)};
  std::vector<char> buffer(layout.bytes + 8);
  void *slots[4];
  ASSERT_EQ(packArgs(args, layout, buffer.data(), slots), 4u);
  EXPECT_EQ(std::memcmp(buffer.data() + 64, bytes, 128), 0);
  EXPECT_EQ(slots[2], buffer.data() + 64);
  EXPECT_EQ(slotAt<int32_t>(buffer.data(), layout, 3), -3);
  char out[128];
  EXPECT_FALSE(convertArg(ArgValue::ofPointer(0x1000), SlotKind::TensorMap, out));
  EXPECT_FALSE(convertArg(ArgValue::ofTensorMap(bytes), SlotKind::Pointer, out));
  EXPECT_STREQ(slotKindName(SlotKind::TensorMap), "tensormap");
}

TEST(LaunchArgs, WhatDoesNotGoIsSaidOneWayNamingTheArgument) {
  EXPECT_EQ(argError("scalars", 2, "c", SlotKind::I8, ArgValue::ofI32(300)),
            "kernel 'scalars': argument 2 ('c') is i8 in the signature; the i32 passed, 300, does "
            "not fit (-128 to 255)");
  EXPECT_EQ(argError("scalars", 1, "b", SlotKind::I1, ArgValue::ofI64(2)),
            "kernel 'scalars': argument 1 ('b') is i1 in the signature; the i64 passed, 2, does "
            "not fit (0 or 1)");
  EXPECT_EQ(argError("copy", 0, "x_ptr", SlotKind::Pointer, ArgValue::ofI32(7)),
            "kernel 'copy': argument 0 ('x_ptr') is pointer in the signature but the argument "
            "passed is i32");
  EXPECT_EQ(argError("copy", 3, "n", SlotKind::I32, ArgValue::ofF64(0.5)),
            "kernel 'copy': argument 3 ('n') is i32 in the signature but the argument passed is "
            "fp64");
  std::vector<std::string> names = {"x_ptr", "y_ptr", "out_ptr", "n"};
  EXPECT_EQ(argCountError("add", names, 3),
            "kernel 'add' takes 4 arguments (x_ptr, y_ptr, out_ptr, n) but 3 were passed");
}

} // namespace
