// GPU tests: tk kernels compiled with the C++ API (runtime/GpuKernel.h), run
// on the GPU and in the interpreter (interpreter/Interpreter.h) on the same random
// inputs (never zeros), and compared element by element. Sizes are ragged on
// purpose: vector add's last block is partial, softmax rows are shorter than
// the block, LayerNorm rows end inside a chunk, the 2-D tiles have masked
// edges on both axes.
//
// Where there is no CUDA driver or GPU, every test calls GTEST_SKIP() with the
// reason, so ctest (label `gpu`) stays green and says what it skipped.
//
// Tolerances (|gpu - interp| <= atol + rtol * |interp|):
//   - exact (0, 0): loads, stores, adds, multiplies and casts round the same
//     way on both sides (IEEE fp32, fp16 round to nearest even);
//   - fp32 with exp, division, sqrt or a reduction: rtol 1e-5 — the GPU's
//     exp is ex2.approx (about 2 ulps, more for large |x| once scaled by
//     log2(e)) and a reduction adds in a different order (tree across lanes
//     and warps versus the interpreter's left-to-right order);
//   - fp16 outputs computed in fp32: one fp16 ulp (rtol 2^-10) plus 1e-3
//     absolute, since fp32 differences of 1e-5 can flip a rounding.
//
// Running it from a copied folder (the GPU machine has the tree elsewhere):
//   gpu_tests --tutorials /path/to/tutorials      or   TK_TUTORIALS_DIR=/path/...
// The compiled-in source tree is the fallback.
#include "driver/CudaDriver.h"
#include "interpreter/HostBuffer.h"
#include "interpreter/Interpreter.h"
#include "ir/ASTToIR.h"
#include "parser/Frontend.h"
#include "runtime/GpuKernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

using namespace tk;

namespace {

std::string gTutorialsDir = std::string(TK_SOURCE_DIR) + "/tutorials";

std::string readTutorial(const std::string &name) {
  std::ifstream in(gTutorialsDir + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// One kernel argument, given once for both runs: a buffer (by index), an
/// integer or a float. Integers become i32 or i64 on the GPU as the compiled
/// kernel's parameter says.
struct TestArg {
  enum class Kind { Buffer, Int, Float } kind;
  size_t buffer = 0;
  int64_t intValue = 0;
  double floatValue = 0;
  static TestArg buf(size_t i) { return {Kind::Buffer, i, 0, 0}; }
  static TestArg integer(int64_t v) { return {Kind::Int, 0, v, 0}; }
  static TestArg real(double v) { return {Kind::Float, 0, 0, v}; }
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!CudaDriver::get(why))
      GTEST_SKIP() << "no GPU: " << why;
  }

  /// An input of n random numbers in [lo, hi], none of them zero.
  size_t input(const std::string &name, DType d, int64_t n, double lo = -4, double hi = 4) {
    HostBuffer b = HostBuffer::allocate(name, d, n);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i) {
      double v;
      do
        v = dist(rng);
      while (v == 0);
      b.set(i, v);
    }
    buffers.push_back(std::move(b));
    return buffers.size() - 1;
  }

  /// An output: unwritten in the interpreter (reading it is an error there),
  /// all-ones bytes on the GPU (NaN for floats), so an element the kernel
  /// forgets to write cannot match.
  size_t output(const std::string &name, DType d, int64_t n) {
    buffers.push_back(HostBuffer::allocate(name, d, n));
    outputs.push_back(buffers.size() - 1);
    return buffers.size() - 1;
  }

  /// Compiles `opts.kernel` of `source`, runs it on the GPU and in the
  /// interpreter over `grid`, and leaves the GPU's outputs in gpuResults
  /// (one per output(), same order).
  void runBoth(const std::string &fileName, const std::string &source,
               const GpuCompileOptions &opts, std::array<unsigned, 3> grid,
               const std::vector<TestArg> &args) {
    ASSERT_FALSE(source.empty()) << "cannot read " << fileName << " (pass --tutorials DIR)";
    std::string error;
    GpuKernel *kernel = GpuKernel::compile(source, fileName, opts, error);
    ASSERT_TRUE(kernel) << error;
    ASSERT_EQ(kernel->params().size(), args.size());

    // The GPU run: inputs copied up, outputs preset to 0xff bytes.
    std::vector<DeviceBuffer> device(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      ASSERT_TRUE(device[i].allocate(buffers[i].bytes(), error)) << error;
      bool isOutput = std::find(outputs.begin(), outputs.end(), i) != outputs.end();
      if (isOutput) {
        CudaDriver *cuda = CudaDriver::get(error);
        ASSERT_TRUE(cuda->fill(device[i].ptr(), 0xff, buffers[i].bytes(), error)) << error;
      } else {
        ASSERT_TRUE(device[i].upload(buffers[i].data(), buffers[i].bytes(), error)) << error;
      }
    }
    std::vector<GpuArg> gpuArgs;
    for (size_t i = 0; i < args.size(); ++i) {
      const TestArg &a = args[i];
      switch (a.kind) {
      case TestArg::Kind::Buffer:
        gpuArgs.push_back(device[a.buffer].arg());
        break;
      case TestArg::Kind::Int:
        gpuArgs.push_back(kernel->params()[i].kind == GpuArg::Kind::I64
                              ? GpuArg::ofI64(a.intValue)
                              : GpuArg::ofI32(int32_t(a.intValue)));
        break;
      case TestArg::Kind::Float:
        gpuArgs.push_back(GpuArg::ofF32(float(a.floatValue)));
        break;
      }
    }
    ASSERT_TRUE(kernel->launch(grid, gpuArgs, nullptr, error)) << error;
    CudaDriver *cuda = CudaDriver::get(error);
    ASSERT_TRUE(cuda->synchronize(error)) << error;
    gpuBytes.clear();
    gpuResults.clear();
    for (size_t o : outputs) {
      gpuBytes.emplace_back(buffers[o].bytes());
      ASSERT_TRUE(device[o].download(gpuBytes.back().data(), buffers[o].bytes(), error)) << error;
    }
    for (size_t k = 0; k < outputs.size(); ++k)
      gpuResults.push_back(HostBuffer::wrap(buffers[outputs[k]].name(), gpuBytes[k].data(),
                                            gpuBytes[k].size(), buffers[outputs[k]].dtype()));

    // The interpreter run, on the same specialisation.
    SourceManager sm;
    DiagnosticEngine diag(sm);
    ast::Context actx;
    ast::Module *m = parseAndCheck(sm, sm.addBuffer(fileName, source), actx, diag);
    ASSERT_FALSE(diag.hasErrors()) << diag.renderAll();
    IRContext ctx(sm);
    Module module(ctx);
    KernelSpec spec;
    spec.kernel = opts.kernel;
    spec.signature = opts.signature;
    spec.constants = opts.constants;
    Function *fn = lowerKernel(*m, spec, ctx, module, diag);
    ASSERT_TRUE(fn) << diag.renderAll();
    std::vector<InterpArg> interpArgs;
    for (const TestArg &a : args) {
      if (a.kind == TestArg::Kind::Buffer)
        interpArgs.push_back(InterpArg::pointer(buffers[a.buffer]));
      else if (a.kind == TestArg::Kind::Int)
        interpArgs.push_back(InterpArg::integer(a.intValue));
      else
        interpArgs.push_back(InterpArg::real(double(float(a.floatValue))));
    }
    InterpretOptions io;
    io.grid = {grid[0], grid[1], grid[2]};
    ASSERT_TRUE(interpret(module, *fn, interpArgs, io, diag)) << diag.renderAll();
  }

  /// Compares output `k` (the k-th output() call) of both runs.
  void expectClose(size_t k, Tolerance tol) {
    ASSERT_LT(k, gpuResults.size());
    const HostBuffer &ref = buffers[outputs[k]];
    const HostBuffer &gpu = gpuResults[k];
    int64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < ref.numElements(); ++i) {
      double r = ref.get(i), g = gpu.get(i);
      double err = std::fabs(g - r);
      if (!(err <= tol.atol + tol.rtol * std::fabs(r))) {
        if (bad < 5)
          ADD_FAILURE() << ref.name() << "[" << i << "]: gpu " << g << ", interpreter " << r;
        ++bad;
      }
      if (err == err)
        worst = std::max(worst, err);
    }
    EXPECT_EQ(bad, 0) << bad << " of " << ref.numElements() << " elements of " << ref.name()
                      << " differ (largest difference " << worst << ")";
  }

  std::mt19937 rng{20261129};
  std::vector<HostBuffer> buffers;
  std::vector<size_t> outputs;
  std::vector<std::vector<std::byte>> gpuBytes;
  std::vector<HostBuffer> gpuResults;
};

unsigned cdiv(int64_t a, int64_t b) { return unsigned((a + b - 1) / b); }

//===----------------------------------------------------------------------===//
// Tutorials
//===----------------------------------------------------------------------===//

TEST_F(GpuTest, VectorAddRaggedLastBlock) {
  const int64_t n = 1'000'003; // 977 blocks of 1024, the last one 611 elements short
  size_t x = input("x", DType::F32, n), y = input("y", DType::F32, n);
  size_t out = output("output", DType::F32, n);
  GpuCompileOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  runBoth("01-vector-add.tk", readTutorial("01-vector-add.tk"), opts, {cdiv(n, 1024), 1, 1},
          {TestArg::buf(x), TestArg::buf(y), TestArg::buf(out), TestArg::integer(n)});
  expectClose(0, {0, 0});
}

class SoftmaxTest : public GpuTest {
protected:
  void run(int64_t rows, int64_t cols, int64_t block, int warps, const std::string &signature,
           unsigned programs) {
    size_t in = input("input", DType::F32, rows * cols, -8, 8);
    size_t out = output("output", DType::F32, rows * cols);
    GpuCompileOptions opts;
    opts.kernel = "softmax_kernel";
    opts.signature = signature;
    opts.numWarps = warps;
    opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(block);
    runBoth("02-fused-softmax.tk", readTutorial("02-fused-softmax.tk"), opts, {programs, 1, 1},
            {TestArg::buf(out), TestArg::buf(in), TestArg::integer(cols), TestArg::integer(cols),
             TestArg::integer(rows), TestArg::integer(cols)});
    expectClose(0, {1e-9, 1e-5});
  }
};

TEST_F(SoftmaxTest, RowsShorterThanTheBlock) {
  // 781 columns in a 1024 block: the last 243 lanes are masked (-inf); the
  // row stride is not a multiple of 16. 13 programs stride over 37 rows.
  run(37, 781, 1024, 4, "*fp32:16, *fp32:16, i32, i32, i32, i32", 13);
}

TEST_F(SoftmaxTest, WideRowsEightWarps) {
  run(50, 3000, 4096, 8, "*fp32:16, *fp32:16, i32, i32, i32, i32", 50);
}

TEST_F(SoftmaxTest, AlignedRows) {
  run(64, 1024, 1024, 4, "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16", 64);
}

TEST_F(GpuTest, LayerNormRaggedChunks) {
  const int64_t rows = 19, cols = 1000; // four 256-wide chunks, the last 24 short
  size_t x = input("X", DType::F16, rows * cols, -3, 3);
  size_t w = input("W", DType::F16, cols, 0.5, 1.5);
  size_t b = input("B", DType::F16, cols, -1, 1);
  size_t y = output("Y", DType::F16, rows * cols);
  size_t mean = output("Mean", DType::F32, rows);
  size_t rstd = output("Rstd", DType::F32, rows);
  GpuCompileOptions opts;
  opts.kernel = "layer_norm_fwd";
  opts.signature = "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32, i32, fp32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(256);
  runBoth("03-layer-norm.tk", readTutorial("03-layer-norm.tk"), opts, {unsigned(rows), 1, 1},
          {TestArg::buf(x), TestArg::buf(y), TestArg::buf(w), TestArg::buf(b), TestArg::buf(mean),
           TestArg::buf(rstd), TestArg::integer(cols), TestArg::integer(cols),
           TestArg::real(1e-5)});
  expectClose(0, {1e-3, 1.0 / 1024}); // Y, fp16
  expectClose(1, {1e-6, 1e-5});       // Mean
  expectClose(2, {1e-6, 1e-5});       // Rstd
}

//===----------------------------------------------------------------------===//
// Kernels written here
//===----------------------------------------------------------------------===//

const char *kRowSum = R"(import tk


@tk.jit
def row_sum(x_ptr, out_ptr, M, N, stride, BLOCK_M: tk.constexpr, BLOCK_N: tk.constexpr):
    rows = tk.program_id(0) * BLOCK_M + tk.arange(0, BLOCK_M)
    acc = tk.zeros([BLOCK_M], dtype=tk.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tk.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tk.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tk.sum(x, axis=1)
    tk.store(out_ptr + rows, acc, mask=rows < M)
)";

const char *kColSum = R"(import tk


@tk.jit
def col_sum(x_ptr, out_ptr, M, N, stride, BLOCK_M: tk.constexpr, BLOCK_N: tk.constexpr):
    cols = tk.program_id(0) * BLOCK_N + tk.arange(0, BLOCK_N)
    acc = tk.zeros([BLOCK_N], dtype=tk.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tk.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tk.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tk.sum(x, axis=0)
    tk.store(out_ptr + cols, acc, mask=cols < N)
)";

const char *kMaskedChain = R"(import tk


@tk.jit
def masked_chain(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(x_ptr + offs, mask=mask, other=1.0)
    y = tk.load(y_ptr + offs, mask=mask, other=2.0)
    z = tk.where(x > 0, x * y + scale, -x - y)
    z = tk.maximum(z, y * 0.5)
    tk.store(out_ptr + offs, z, mask=mask)
)";

const char *kCastChain = R"(import tk


@tk.jit
def cast_chain(x_ptr, h_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(x_ptr + offs, mask=mask)
    h = x.to(tk.float16)
    tk.store(h_ptr + offs, h, mask=mask)
    tk.store(out_ptr + offs, h.to(tk.float32) * 3.0, mask=mask)
)";

TEST_F(GpuTest, RowSumsMaskedOnBothAxes) {
  const int64_t m = 45, n = 203; // neither a multiple of its block
  size_t x = input("x", DType::F32, m * n);
  size_t out = output("out", DType::F32, m);
  GpuCompileOptions opts;
  opts.kernel = "row_sum";
  opts.signature = "*fp32:16, *fp32:16, i32, i32, i32";
  opts.constants["BLOCK_M"] = ConstValue::ofInt(16);
  opts.constants["BLOCK_N"] = ConstValue::ofInt(64);
  runBoth("row_sum.tk", kRowSum, opts, {cdiv(m, 16), 1, 1},
          {TestArg::buf(x), TestArg::buf(out), TestArg::integer(m), TestArg::integer(n),
           TestArg::integer(n)});
  expectClose(0, {1e-4, 1e-5}); // sums of ~200 values of |x| <= 4 in another order
}

TEST_F(GpuTest, ColumnSumsMaskedOnBothAxes) {
  const int64_t m = 301, n = 77;
  size_t x = input("x", DType::F32, m * n);
  size_t out = output("out", DType::F32, n);
  GpuCompileOptions opts;
  opts.kernel = "col_sum";
  opts.signature = "*fp32:16, *fp32:16, i32, i32, i32";
  opts.constants["BLOCK_M"] = ConstValue::ofInt(32);
  opts.constants["BLOCK_N"] = ConstValue::ofInt(32);
  runBoth("col_sum.tk", kColSum, opts, {cdiv(n, 32), 1, 1},
          {TestArg::buf(x), TestArg::buf(out), TestArg::integer(m), TestArg::integer(n),
           TestArg::integer(n)});
  expectClose(0, {1e-4, 1e-5});
}

TEST_F(GpuTest, MaskedRaggedEdgeElementwise) {
  const int64_t n = 777; // 6 blocks of 128, the last 9 elements long
  size_t x = input("x", DType::F32, n), y = input("y", DType::F32, n);
  size_t out = output("out", DType::F32, n);
  GpuCompileOptions opts;
  opts.kernel = "masked_chain";
  opts.signature = "*fp32, *fp32, *fp32, i32, fp32";
  opts.constants["BLOCK"] = ConstValue::ofInt(128);
  runBoth("masked_chain.tk", kMaskedChain, opts, {cdiv(n, 128), 1, 1},
          {TestArg::buf(x), TestArg::buf(y), TestArg::buf(out), TestArg::integer(n),
           TestArg::real(1.25)});
  // x * y + scale may be fused into one fma on the GPU: one rounding fewer.
  expectClose(0, {1e-6, 1e-6});
}

TEST_F(GpuTest, CastChainFp32Fp16Fp32) {
  const int64_t n = 5000;
  size_t x = input("x", DType::F32, n, -70000, 70000); // past fp16's range: inf both sides
  size_t h = output("h", DType::F16, n);               // outputs[0]
  size_t out = output("out", DType::F32, n);           // outputs[1]
  GpuCompileOptions opts;
  opts.kernel = "cast_chain";
  opts.signature = "*fp32:16, *fp16:16, *fp32:16, i32";
  opts.constants["BLOCK"] = ConstValue::ofInt(512);
  runBoth("cast_chain.tk", kCastChain, opts, {cdiv(n, 512), 1, 1},
          {TestArg::buf(x), TestArg::buf(h), TestArg::buf(out), TestArg::integer(n)});
  // Round to nearest even on both sides; infinities compare equal.
  for (size_t k = 0; k < 2; ++k) {
    const HostBuffer &ref = buffers[outputs[k]];
    int64_t bad = 0;
    for (int64_t i = 0; i < ref.numElements(); ++i)
      if (ref.get(i) != gpuResults[k].get(i) && bad++ < 5)
        ADD_FAILURE() << ref.name() << "[" << i << "]: gpu " << gpuResults[k].get(i)
                      << ", interpreter " << ref.get(i);
    EXPECT_EQ(bad, 0);
  }
}

// `/` by a divisor that is one value per program (here a scalar load; in
// softmax the row sum) is a scaled reciprocal and multiplies on the GPU
// (docs/codegen/math.md): within div.full's 2 ulp of the interpreter's IEEE
// quotient over the whole range, with the IEEE results for zeros,
// infinities and NaN. One row per divisor, from the smallest subnormal to
// past 2^126; dividends from 2^-140 to 2^120 of both signs, so quotients
// overflow and go subnormal too.
const char *kUniformDivide = R"(import tk


@tk.jit
def divide_rows(x_ptr, d_ptr, out_ptr, BLOCK: tk.constexpr):
    row = tk.program_id(0)
    offs = row * BLOCK + tk.arange(0, BLOCK)
    d = tk.load(d_ptr + row)
    tk.store(out_ptr + offs, tk.load(x_ptr + offs) / d)
)";

TEST_F(GpuTest, DivisionByAUniformDivisorOverTheWholeRange) {
  const double inf = INFINITY;
  const std::vector<double> divisors = {
      0x1p-149,  1e-40, 0x1.fffffcp-127, 0x1p-126, 3.0,  -7.25, 0.1,  1e20, 0x1p126,
      0x1.8p126, 3e38,  -3.4e38,         inf,      -inf, 0.0,   -0.0, NAN};
  const int64_t rows = int64_t(divisors.size()), block = 256, n = rows * block;
  size_t x = input("x", DType::F32, n);
  std::uniform_int_distribution<int> exponent(-140, 120);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int64_t i = 0; i < n; ++i)
    buffers[x].set(i, (i % 2 ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng)));
  size_t d = input("d", DType::F32, rows);
  for (int64_t r = 0; r < rows; ++r)
    buffers[d].set(r, divisors[size_t(r)]);
  size_t out = output("out", DType::F32, n);
  GpuCompileOptions opts;
  opts.kernel = "divide_rows";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16";
  opts.constants["BLOCK"] = ConstValue::ofInt(block);
  runBoth("divide_rows.tk", kUniformDivide, opts, {unsigned(rows), 1, 1},
          {TestArg::buf(x), TestArg::buf(d), TestArg::buf(out)});
  const HostBuffer &ref = buffers[out];
  const double maxFloat = 0x1.fffffep127;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = ref.get(i), g = gpuResults[0].get(i);
    bool ok;
    if (std::isnan(r) || std::isnan(g))
      ok = std::isnan(r) && std::isnan(g);
    else if (std::isinf(r) || std::isinf(g)) // equal, or both at the top of the range
      ok = r == g || (std::signbit(r) == std::signbit(g) &&
                      std::min(std::fabs(r), std::fabs(g)) >= maxFloat * (1 - 0x1p-22));
    else // 2 ulp: relative for normal quotients, 2^-148 for subnormal ones
      ok = std::fabs(g - r) <= 0x1p-148 + 0x1p-22 * std::fabs(r) &&
           (r != 0 || std::signbit(r) == std::signbit(g));
    if (!ok && bad++ < 5)
      ADD_FAILURE() << "x[" << i << "] = " << buffers[x].get(i) << " / "
                    << divisors[size_t(i / block)] << ": gpu " << g << ", interpreter " << r;
  }
  EXPECT_EQ(bad, 0) << bad << " of " << n << " quotients are off by more than 2 ulp";
}

//===----------------------------------------------------------------------===//
// The launch API itself
//===----------------------------------------------------------------------===//

TEST_F(GpuTest, LaunchChecksArgumentsAgainstTheSignature) {
  GpuCompileOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(256);
  std::string error;
  GpuKernel *k =
      GpuKernel::compile(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, error);
  ASSERT_TRUE(k) << error;
  // The same compile again is the cached kernel.
  EXPECT_EQ(GpuKernel::compile(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, error),
            k);
  EXPECT_GT(k->resources().registers, 0);

  DeviceBuffer buf;
  ASSERT_TRUE(buf.allocate(1024, error)) << error;
  GpuArg tooFew[] = {buf.arg(), buf.arg(), buf.arg()};
  EXPECT_FALSE(k->launch({1, 1, 1}, tooFew, nullptr, error));
  EXPECT_NE(error.find("takes 4 arguments (x_ptr, y_ptr, output_ptr, n_elements) but 3"),
            std::string::npos)
      << error;
  GpuArg wrongKind[] = {buf.arg(), buf.arg(), buf.arg(), GpuArg::ofI64(256)};
  EXPECT_FALSE(k->launch({1, 1, 1}, wrongKind, nullptr, error));
  EXPECT_NE(error.find("argument 3 ('n_elements') is i32"), std::string::npos) << error;
  GpuArg scalarForPointer[] = {GpuArg::ofI32(1), buf.arg(), buf.arg(), GpuArg::ofI32(256)};
  EXPECT_FALSE(k->launch({1, 1, 1}, scalarForPointer, nullptr, error));
  EXPECT_NE(error.find("argument 0 ('x_ptr') is pointer"), std::string::npos) << error;
  // A grid the driver rejects is an error carrying the CUDA error name.
  GpuArg ok[] = {buf.arg(), buf.arg(), buf.arg(), GpuArg::ofI32(0)};
  EXPECT_FALSE(k->launch({1, 1u << 20, 1}, ok, nullptr, error));
  EXPECT_NE(error.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << error;
  EXPECT_TRUE(k->launch({1, 1, 1}, ok, nullptr, error)) << error;
}

TEST_F(GpuTest, LaunchOnAStreamTimedWithEvents) {
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  ASSERT_TRUE(cuda);
  const CudaFunctions &api = cuda->api();
  GpuCompileOptions opts;
  opts.kernel = "add_kernel";
  opts.signature = "*fp32:16, *fp32:16, *fp32:16, i32";
  opts.constants["BLOCK_SIZE"] = ConstValue::ofInt(1024);
  GpuKernel *k =
      GpuKernel::compile(readTutorial("01-vector-add.tk"), "01-vector-add.tk", opts, error);
  ASSERT_TRUE(k) << error;

  const int64_t n = 1 << 20;
  std::vector<float> x(n), y(n), out(n);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = -dist(rng);
  }
  DeviceBuffer dx, dy, dout;
  size_t bytes = n * sizeof(float);
  ASSERT_TRUE(dx.allocate(bytes, error) && dy.allocate(bytes, error) && dout.allocate(bytes, error))
      << error;
  ASSERT_TRUE(dx.upload(x.data(), bytes, error) && dy.upload(y.data(), bytes, error)) << error;

  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  ASSERT_TRUE(cuda->check(api.cuStreamCreate(&stream, 0), "cuStreamCreate", error)) << error;
  ASSERT_TRUE(cuda->check(api.cuEventCreate(&start, 0), "cuEventCreate", error) &&
              cuda->check(api.cuEventCreate(&stop, 0), "cuEventCreate", error))
      << error;
  GpuArg args[] = {dx.arg(), dy.arg(), dout.arg(), GpuArg::ofI32(int32_t(n))};
  EXPECT_TRUE(cuda->check(api.cuEventRecord(start, stream), "cuEventRecord", error)) << error;
  EXPECT_TRUE(k->launch({unsigned(n / 1024), 1, 1}, args, stream, error)) << error;
  EXPECT_TRUE(cuda->check(api.cuEventRecord(stop, stream), "cuEventRecord", error)) << error;
  EXPECT_TRUE(cuda->check(api.cuStreamSynchronize(stream), "cuStreamSynchronize", error)) << error;
  float ms = -1;
  EXPECT_TRUE(cuda->check(api.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime", error))
      << error;
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 1000.0f);
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  api.cuStreamDestroy(stream);

  ASSERT_TRUE(dout.download(out.data(), bytes, error)) << error;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += out[i] != x[i] + y[i];
  EXPECT_EQ(bad, 0);
}

TEST_F(GpuTest, BadPTXCarriesTheJITLog) {
  std::string error;
  CudaDriver *cuda = CudaDriver::get(error);
  ASSERT_TRUE(cuda);
  CUmodule module = nullptr;
  const std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry broken()\n{\n  add.f32 %f1, %f2, %f3;\n  ret;\n}\n";
  EXPECT_FALSE(cuda->loadModule(ptx, module, error));
  EXPECT_NE(error.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << error;
  EXPECT_NE(error.find("JIT error log"), std::string::npos) << error;
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (const char *dir = std::getenv("TK_TUTORIALS_DIR"))
    gTutorialsDir = dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tutorials") == 0 && i + 1 < argc)
      gTutorialsDir = argv[++i];
    else if (std::strncmp(argv[i], "--tutorials=", 12) == 0)
      gTutorialsDir = argv[i] + 12;
  }
  return RUN_ALL_TESTS();
}
