// Random values, buffers and 1-D block shapes for the differential test's
// case builders (DiffCases.cpp, DiffCasesStructured.cpp). Every generator
// avoids zero (except i1, and masks), as the test rules ask: a kernel that
// forgets an input or an element cannot pass on zeros.
//
//   Gen g = smallWhole(DType::F16, 8);      // -8..8 without 0, exact sums
//   CaseBuffer x = inputBuffer("x", DType::F16, n, g, rng);
#pragma once

#include "DiffCase.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tk::difftest {

using Rng = std::mt19937_64;
using Gen = std::function<Elem(Rng &)>;

//===----------------------------------------------------------------------===//
// Dtypes and random values
//===----------------------------------------------------------------------===//

inline const std::vector<DType> kAll = {DType::I1,   DType::I8,  DType::I16, DType::I32, DType::I64,
                                        DType::U8,   DType::U16, DType::U32, DType::U64, DType::F16,
                                        DType::BF16, DType::F32, DType::F64};
inline const std::vector<DType> kInts = {DType::I8, DType::I16, DType::I32, DType::I64,
                                         DType::U8, DType::U16, DType::U32, DType::U64};
inline const std::vector<DType> kFloats = {DType::F16, DType::BF16, DType::F32, DType::F64};

inline std::vector<DType> numeric() {
  std::vector<DType> v = kInts;
  v.insert(v.end(), kFloats.begin(), kFloats.end());
  return v;
}

inline std::string ir(DType d) { return std::string(dtypeName(d)); }
inline std::string py(DType d) { return "tk." + std::string(dtypePythonName(d)); }

inline int64_t uniformInt(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
inline double uniformReal(Rng &rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
inline int64_t pow2(Rng &rng, int lo, int hi) { return int64_t(1) << uniformInt(rng, lo, hi); }

/// The value `v` as dtype `d` holds it (rounded, or wrapped to the width).
inline Elem roundTo(DType d, Elem v) {
  std::byte b[8];
  writeElem(b, d, v);
  return readElem(b, d);
}

/// Random integers of `d`, never zero: half of them any bit pattern of the
/// width, half small (|v| <= 100), so that both wrap-around and ordinary
/// arithmetic are exercised. i1 is 0 or 1.
inline Gen anyInt(DType d) {
  return [d](Rng &rng) {
    if (d == DType::I1)
      return Elem::ofInt(uniformInt(rng, 0, 1));
    for (;;) {
      int64_t v = rng() & 1 ? int64_t(rng())
                            : (isSigned(d) ? uniformInt(rng, -100, 100) : uniformInt(rng, 1, 200));
      Elem e = roundTo(d, Elem::ofInt(v));
      if (e.i != 0)
        return e;
    }
  };
}

/// Integers in [lo, hi], never zero.
inline Gen intIn(DType d, int64_t lo, int64_t hi) {
  return [=](Rng &rng) {
    for (;;)
      if (int64_t v = uniformInt(rng, lo, hi))
        return roundTo(d, Elem::ofInt(v));
  };
}

/// Floats in [lo, hi] (rounded to `d`), never zero.
inline Gen realIn(DType d, double lo, double hi) {
  return [=](Rng &rng) {
    for (;;) {
      Elem e = roundTo(d, Elem::ofFloat(uniformReal(rng, lo, hi)));
      if (e.f != 0)
        return e;
    }
  };
}

/// Values of either sign with magnitudes 2^[lo, hi] (rounded to `d`).
inline Gen logUniform(DType d, double lo, double hi) {
  return [=](Rng &rng) {
    for (;;) {
      double m = std::exp2(uniformReal(rng, lo, hi)) * (rng() & 1 ? 1 : -1);
      Elem e = roundTo(d, Elem::ofFloat(m));
      if (e.f != 0)
        return e;
    }
  };
}

/// Integer-valued numbers of any dtype in [-k, k] \ {0} ([1, k] unsigned):
/// sums and products of them are exact, so reductions, scans, dots and
/// float atomics compare exactly whatever their order.
inline Gen smallWhole(DType d, int64_t k) {
  if (d == DType::I1)
    return anyInt(d);
  return [=](Rng &rng) {
    for (;;) {
      int64_t v = isUnsigned(d) ? uniformInt(rng, 1, k) : uniformInt(rng, -k, k);
      if (v != 0)
        return isFloat(d) ? roundTo(d, Elem::ofFloat(double(v))) : roundTo(d, Elem::ofInt(v));
    }
  };
}

inline Gen anyValue(DType d) { return isFloat(d) ? realIn(d, -8, 8) : anyInt(d); }

/// Random bit patterns of the width (bitcasts): NaNs with payloads included.
inline Gen anyBits(DType d) {
  return [d](Rng &rng) {
    std::byte b[8];
    uint64_t bits = rng();
    std::memcpy(b, &bits, 8);
    return readElem(b, d);
  };
}

inline CaseBuffer inputBuffer(const std::string &name, DType d, int64_t n, const Gen &gen,
                              Rng &rng) {
  CaseBuffer b;
  b.name = name;
  b.dtype = d;
  b.size = n;
  b.bytes.resize(size_t(n) * dtypeBytes(d));
  for (int64_t i = 0; i < n; ++i)
    writeElem(b.bytes.data() + i * dtypeBytes(d), d, gen(rng));
  return b;
}

inline CaseBuffer outputBuffer(const std::string &name, DType d, int64_t n, Tol tol = {}) {
  CaseBuffer b;
  b.name = name;
  b.dtype = d;
  b.size = n;
  b.output = true;
  b.preset = false;
  b.tol = tol;
  return b;
}

inline Elem at(const CaseBuffer &b, int64_t i) {
  return readElem(b.bytes.data() + i * dtypeBytes(b.dtype), b.dtype);
}

inline Expected unwritten(const CaseBuffer &b) {
  Expected e;
  e.bytes.assign(size_t(b.size) * dtypeBytes(b.dtype), std::byte{0});
  e.written.assign(size_t(b.size), false);
  return e;
}

inline void expectAt(Expected &e, const CaseBuffer &b, int64_t i, Elem v) {
  writeElem(e.bytes.data() + i * dtypeBytes(b.dtype), b.dtype, v);
  e.written[size_t(i)] = true;
}

//===----------------------------------------------------------------------===//
// 1-D blocks: sizes and masking styles
//===----------------------------------------------------------------------===//

struct Blocks {
  int64_t block = 0, n = 0;
  unsigned programs = 1;
  enum class Mask { Random, Tail, Aligned } mask = Mask::Random;
};

inline Blocks pickBlocks(Rng &rng, CaseRun &run) {
  Blocks b;
  b.block = pow2(rng, 4, 10);
  b.programs = unsigned(uniformInt(rng, 1, 4));
  b.mask = Blocks::Mask(uniformInt(rng, 0, 2));
  if (b.mask == Blocks::Mask::Aligned)
    b.n = (b.programs - 1) * b.block + 16 * uniformInt(rng, 1, b.block / 16 - (b.block > 16));
  else
    b.n = (b.programs - 1) * b.block + uniformInt(rng, 1, b.block - 1);
  if (b.mask == Blocks::Mask::Aligned && b.n % b.block == 0)
    b.n -= 16; // never a multiple of the block
  if (b.n <= 0) {
    b.mask = Blocks::Mask::Tail;
    b.n = uniformInt(rng, 1, b.block - 1);
  }
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BLOCK"] = ConstValue::ofInt(b.block);
  run.grid = {b.programs, 1, 1};
  static const char *styles[] = {"random mask", "ragged tail", "aligned tail (vector path)"};
  run.shapeNote = fmt::format("BLOCK={} num_warps={} n={} grid={} {}", b.block, run.opts.numWarps,
                              b.n, b.programs, styles[int(b.mask)]);
  return b;
}

/// The lines that compute `offs` and `mask` for a 1-D case, and the
/// signature text for the pointers (`:16` on the vector path).
inline std::string maskLines(const Blocks &b) {
  std::string s = "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
                  "    inb = offs < n\n";
  if (b.mask == Blocks::Mask::Random)
    s += "    mask = inb & (tk.load(m_ptr + offs, mask=inb, other=0) != 0)\n";
  else
    s += "    mask = inb\n";
  return s;
}

inline std::string ptrSig(const Blocks &b, DType d) {
  return "*" + ir(d) + (b.mask == Blocks::Mask::Aligned ? ":16" : "");
}

/// The random mask buffer (i32 0/1, mostly 1), used by the Random style.
inline CaseBuffer maskBuffer(int64_t n, Rng &rng) {
  return inputBuffer(
      "m", DType::I32, n, [](Rng &r) { return Elem::ofInt(uniformInt(r, 0, 4) != 0); }, rng);
}

inline bool activeLane(const Blocks &b, const std::vector<CaseBuffer> &bufs, size_t maskBuf,
                       int64_t i) {
  return b.mask != Blocks::Mask::Random || at(bufs[maskBuf], i).i != 0;
}

//===----------------------------------------------------------------------===//
// Elementwise cases (DiffCases.cpp)
//===----------------------------------------------------------------------===//

/// A host reference of one element: the operands' dtype and values.
using RefFn = std::function<Elem(DType, const Elem *)>;

/// One elementwise case on a 1-D block: inputs x, y, z, w of dtypes `ins` drawn
/// from `gen(dtype, operand)` (null: anyValue), out = EXPR of dtype `out`
/// within `tol`, checked against `ref` in the Ci mode when it is set;
/// `equalOperands` copies x into y at random lanes (comparisons).
CaseRun buildElementwise(Rng &rng, const std::vector<DType> &ins, DType out,
                         const std::string &expr, const std::function<Gen(DType, int)> &gen,
                         const RefFn &ref, Tol tol, bool equalOperands);

// Integer helpers for references: values arrive sign- or zero-extended, as
// their dtype says; results are wrapped to the width by writeElem.
inline uint64_t u(const Elem &e) { return uint64_t(e.i); }
inline Elem wrapped(uint64_t v) { return Elem::ofInt(int64_t(v)); }
inline bool less(DType d, const Elem &a, const Elem &b) {
  if (isFloat(d))
    return a.f < b.f;
  return isUnsigned(d) ? u(a) < u(b) : a.i < b.i;
}
inline bool equal(DType d, const Elem &a, const Elem &b) {
  return isFloat(d) ? a.f == b.f : a.i == b.i;
}
inline Elem boolean(bool v) { return Elem::ofInt(v); }
inline Elem real(double v) { return Elem::ofFloat(v); }

// The width of an integer dtype in bits (1 for i1).
inline int64_t bits(DType d) { return int64_t(dtypeBits(d)); }

} // namespace tk::difftest
