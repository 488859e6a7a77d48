// The differential test's vocabulary: a case is a small tk kernel (source
// text made from a template), its specialisation, its buffers with random
// contents, its grid, and a tolerance per output. The same case runs in two
// modes (DifferentialTest.cpp):
//
//   - Ci:  no GPU needed. The kernel is compiled to PTX through tk and
//          assembled by `ptxas -arch=sm_90` (when ptxas is found), and run in
//          the interpreter, whose outputs are compared with a host-side
//          reference where the case has one (elementwise ops, casts,
//          reductions).
//   - Gpu: the kernel runs on the GPU (GpuKernel) and in the interpreter on
//          the same inputs; every output is compared element by element.
//
// A case is described once, as a CaseDef: a name ("binary/add/i32"), the op
// family and dtype it covers (the keys of kNotYetOnGpu), and a builder that
// turns a seeded random generator into a CaseRun (random sizes, masks and
// values, never zeros). The seed is a hash of the name, so a failure
// reproduces by re-running the one case:
//
//   gpu_difftest --gtest_filter='Ci/*binary_add_i32*'
//   TK_DIFF_SEED=7 gpu_difftest ...   # other random draws for every case
#pragma once

#include "lang/DType.h"
#include "runtime/GpuKernel.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tk::difftest {

/// One element of any dtype, read from or written to raw memory: integers
/// sign- or zero-extended into `i` (a u64 keeps its bit pattern), floats
/// exactly in `f`. For readElem both fields are set (an integer's value in
/// `f` too, a float's truncation in `i` is not meaningful).
struct Elem {
  int64_t i = 0;
  double f = 0;
  static Elem ofInt(int64_t v) { return {v, double(v)}; }
  static Elem ofFloat(double v) { return {0, v}; }
};

Elem readElem(const std::byte *p, DType d);
/// Floats: `f` rounded to the dtype (nearest, ties to even; overflow gives
/// infinity). Integers: the low bits of `i`. i1: `i != 0`.
void writeElem(std::byte *p, DType d, Elem v);

/// How close an output must be: |got - want| <= ulps * ulp(want) + abs, in
/// the output's dtype. Both zero is exact (integers are always exact; NaN
/// matches NaN, infinities must match exactly).
struct Tol {
  double ulps = 0;
  double abs = 0;
};

struct CaseBuffer {
  std::string name; // the kernel parameter's name, for messages
  DType dtype = DType::F32;
  int64_t size = 0;             // elements
  bool output = false;          // compared after the run
  bool preset = true;           // starts with `bytes` (inputs; outputs updated in place)
  std::vector<std::byte> bytes; // size * dtypeBytes(dtype) when preset
  Tol tol;                      // outputs only
  std::vector<int64_t> shape;   // for messages: a 2-D output's [rows, cols]
};

/// A kernel argument: a buffer (index into CaseRun::buffers), an integer
/// (passed as the parameter's i32 or i64), or a scalar of a given dtype
/// (passed as exactly that kind: fp16, i8, fp64, ...).
struct CaseArg {
  bool isBuffer = false;
  size_t buffer = 0;
  int64_t value = 0;
  bool typed = false;
  DType dtype = DType::I32;
  Elem scalar;
  static CaseArg buf(size_t b) { return {true, b, 0, false, DType::I32, {}}; }
  static CaseArg integer(int64_t v) { return {false, 0, v, false, DType::I32, {}}; }
  static CaseArg scalarOf(DType d, Elem v) { return {false, 0, v.i, true, d, v}; }
};

/// What a host reference expects of one output: its bytes, and which
/// elements the kernel writes (the rest must stay unwritten).
struct Expected {
  std::vector<std::byte> bytes;
  std::vector<bool> written;
};

struct CaseRun {
  std::string source;
  GpuCompileOptions opts; // kernel, signature, constants, numWarps
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::vector<CaseBuffer> buffers;
  std::vector<CaseArg> args;
  /// The host reference (Ci mode): one Expected per output buffer, in buffer
  /// order. Unset where the reference would not be simple.
  std::function<std::vector<Expected>(const std::vector<CaseBuffer> &)> reference;
  /// What the builder chose (block, warps, sizes), printed on failure.
  std::string shapeNote;
};

struct CaseDef {
  std::string name;   // "binary/add/i32": unique; gtest's name replaces '/' by '_'
  std::string family; // "add", "cast", "reduce_argmax", ...
  std::string dtype;  // "i32", "fp16->i8", ...
  std::function<CaseRun(std::mt19937_64 &)> build;
};

/// Every case, in a fixed order.
const std::vector<CaseDef> &allCases();
/// The functions of lang/Libdevice.def without a domain and tolerance in
/// DiffCasesLibdevice.cpp (so without cases); empty when all have them.
std::vector<std::string> libdeviceFunctionsWithoutCases();

/// Ops the GPU code generator does not support yet. A case whose compile
/// fails with "not supported ... yet" fails unless it is listed here; a
/// listed case that compiles fails too ("remove it from kNotYetOnGpu"), so
/// the table only shrinks as the back end grows. `dtype` "" means every
/// dtype of the family; otherwise a comma-separated list.
struct NotYet {
  const char *family;
  const char *dtypes;
  const char *why;
};
const std::vector<NotYet> &notYetOnGpu();
const NotYet *findNotYet(const CaseDef &c);

/// The per-case seed: FNV-1a of the name, plus TK_DIFF_SEED when set.
uint64_t caseSeed(const std::string &name);

} // namespace tk::difftest
