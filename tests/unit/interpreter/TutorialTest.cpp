// Every tutorial kernel (tutorials/*.tk) through the front end, AST -> IR
// and the interpreter, on random inputs (never zeros), against references
// computed here in double. Tolerances (docs/interpreter.md): fp32 results
// within a few fp32 ulps of the double reference, fp16 results within 2 fp16
// ulps plus the fp32 accumulation error.
#include "InterpTestUtil.h"

#include "ir/ASTToIR.h"
#include "parser/Frontend.h"

#include <fmt/format.h>
#include <fstream>
#include <sstream>

using namespace tk;
using namespace tk::test;

namespace {

std::string readTutorial(const std::string &name) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/tutorials/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TutorialTest : public InterpFixture {
protected:
  // Front end + AST -> IR for one kernel; the IR lands in `module`.
  Function *compile(const std::string &file, const std::string &text, const KernelSpec &spec) {
    BufferId id = sm.addBuffer(file, text);
    ast::Module *m = parseAndCheck(sm, id, actx, diag);
    EXPECT_TRUE(m && !diag.hasErrors()) << diag.renderAll();
    if (!m)
      return nullptr;
    module = std::make_unique<Module>(ctx);
    Function *fn = lowerKernel(*m, spec, ctx, *module, diag);
    EXPECT_TRUE(fn) << diag.renderAll();
    return fn;
  }

  bool launch(Function *fn, const std::vector<InterpArg> &args, InterpretOptions opts) {
    diag.clear();
    return interpret(*module, *fn, args, opts, diag, &stats);
  }

  ast::Context actx;
};

TEST_F(TutorialTest, VectorAdd) {
  KernelSpec spec;
  spec.kernel = "add_kernel";
  spec.signature = "*fp32, *fp32, *fp32, i32";
  spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(256);
  Function *fn = compile("01-vector-add.tk", readTutorial("01-vector-add.tk"), spec);
  ASSERT_TRUE(fn);
  const int64_t n = 1000; // not a multiple of the block: the last program is masked
  HostBuffer x = random("x", DType::F32, n), y = random("y", DType::F32, n);
  HostBuffer out = HostBuffer::allocate("output", DType::F32, n);
  InterpretOptions opts;
  opts.grid = {(n + 255) / 256, 1, 1};
  ASSERT_TRUE(launch(fn,
                     {InterpArg::pointer(x), InterpArg::pointer(y), InterpArg::pointer(out),
                      InterpArg::integer(n)},
                     opts))
      << errors();
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(out.get(i), double(float(x.get(i) + y.get(i))));
}

TEST_F(TutorialTest, VectorAddPlantedOutOfBoundsIsReportedAtItsLine) {
  // A copy whose load of y lost its mask: the last program reads past y.
  std::string text = readTutorial("01-vector-add.tk");
  std::string from = "y = tk.load(y_ptr + offsets, mask=mask)";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "y = tk.load(y_ptr + offsets)");
  int line = 1 + int(std::count(text.begin(), text.begin() + at, '\n'));
  KernelSpec spec;
  spec.kernel = "add_kernel";
  spec.signature = "*fp32, *fp32, *fp32, i32";
  spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(256);
  Function *fn = compile("planted.tk", text, spec);
  ASSERT_TRUE(fn);
  const int64_t n = 1000;
  HostBuffer x = random("x", DType::F32, n), y = random("y", DType::F32, n);
  HostBuffer out = HostBuffer::allocate("output", DType::F32, n);
  InterpretOptions opts;
  opts.grid = {4, 1, 1};
  EXPECT_FALSE(launch(fn,
                      {InterpArg::pointer(x), InterpArg::pointer(y), InterpArg::pointer(out),
                       InterpArg::integer(n)},
                      opts));
  std::string e = errors();
  EXPECT_NE(e.find(fmt::format("planted.tk:{}:", line)), std::string::npos) << e;
  // Program 3 covers 768..1023; element 232 is index 1000, the first past y.
  EXPECT_NE(e.find("out-of-bounds load in program (3, 0, 0): element 232 of the block [256]"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("nearest buffer 'y'"), std::string::npos) << e;
}

TEST_F(TutorialTest, FusedSoftmax) {
  KernelSpec spec;
  spec.kernel = "softmax_kernel";
  spec.signature = "*fp32, *fp32, i32, i32, i32, i32";
  spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(128);
  Function *fn = compile("02-fused-softmax.tk", readTutorial("02-fused-softmax.tk"), spec);
  ASSERT_TRUE(fn);
  const int64_t rows = 37, cols = 100, inStride = 104, outStride = 101;
  HostBuffer in = random("input", DType::F32, rows * inStride, -6, 6);
  HostBuffer out = HostBuffer::allocate("output", DType::F32, rows * outStride);
  InterpretOptions opts;
  opts.grid = {8, 1, 1}; // fewer programs than rows: each strides over rows
  ASSERT_TRUE(
      launch(fn,
             {InterpArg::pointer(out), InterpArg::pointer(in), InterpArg::integer(inStride),
              InterpArg::integer(outStride), InterpArg::integer(rows), InterpArg::integer(cols)},
             opts))
      << errors();
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max(mx, in.get(r * inStride + c));
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(in.get(r * inStride + c) - mx);
    for (int64_t c = 0; c < cols; ++c) {
      double want = std::exp(in.get(r * inStride + c) - mx) / sum;
      EXPECT_NEAR(out.get(r * outStride + c), want, 1e-6 * want + 1e-9) << r << "," << c;
    }
    // The padding between rows was never written.
    if (outStride > cols) {
      EXPECT_FALSE(out.isWritten((r * outStride + cols) * 4, 4));
    }
  }
}

// Both kernels of the tutorial: chunked (three walks over 128-wide blocks)
// and fused (the whole 300-wide row in one 512-wide block), the fused one
// also with ONE_PASS statistics (shifted sum and sum of squares in one
// tk.reduce); rows with |mean| >> std as well, where an unshifted one-pass
// variance would cancel.
struct LayerNormCase {
  const char *kernel;
  int block;
  bool onePass;
  double offset; // added to every x
};

class LayerNormTutorial : public TutorialTest,
                          public ::testing::WithParamInterface<LayerNormCase> {};

TEST_P(LayerNormTutorial, MatchesDoubleReference) {
  KernelSpec spec;
  const LayerNormCase &tc = GetParam();
  spec.kernel = tc.kernel;
  spec.signature = "*fp16, *fp16, *fp16, *fp16, *fp32, *fp32, i32, i32, fp32";
  spec.constants["BLOCK_SIZE"] = ConstValue::ofInt(tc.block);
  if (tc.onePass)
    spec.constants["ONE_PASS"] = ConstValue::ofBool(true);
  Function *fn = compile("03-layer-norm.tk", readTutorial("03-layer-norm.tk"), spec);
  ASSERT_TRUE(fn);
  const int64_t M = 12, N = 300;
  const double eps = 1e-5;
  HostBuffer X = random("X", DType::F16, M * N, tc.offset - 3, tc.offset + 3),
             W = random("W", DType::F16, N, 0.5, 1.5);
  HostBuffer B = random("B", DType::F16, N, -1, 1);
  HostBuffer Y = HostBuffer::allocate("Y", DType::F16, M * N);
  HostBuffer Mean = HostBuffer::allocate("Mean", DType::F32, M);
  HostBuffer Rstd = HostBuffer::allocate("Rstd", DType::F32, M);
  InterpretOptions opts;
  opts.grid = {M, 1, 1};
  ASSERT_TRUE(launch(fn,
                     {InterpArg::pointer(X), InterpArg::pointer(Y), InterpArg::pointer(W),
                      InterpArg::pointer(B), InterpArg::pointer(Mean), InterpArg::pointer(Rstd),
                      InterpArg::integer(N), InterpArg::integer(N), InterpArg::real(eps)},
                     opts))
      << errors();
  for (int64_t r = 0; r < M; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < N; ++c)
      mean += X.get(r * N + c);
    mean /= N;
    for (int64_t c = 0; c < N; ++c)
      var += (X.get(r * N + c) - mean) * (X.get(r * N + c) - mean);
    var /= N;
    double rstd = 1 / std::sqrt(var + eps);
    // fp32 carries ~7 digits: at |mean| = 300 the last one is ~1e-5.
    EXPECT_NEAR(Mean.get(r), mean, 1e-5 + 1e-6 * std::abs(mean));
    EXPECT_NEAR(Rstd.get(r), rstd, 1e-5 * rstd);
    for (int64_t c = 0; c < N; ++c) {
      double want = (X.get(r * N + c) - mean) * rstd * W.get(c) + B.get(c);
      EXPECT_NEAR(Y.get(r * N + c), want, 2 * ulpOf(DType::F16, want) + 1e-4) << r << "," << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, LayerNormTutorial,
                         ::testing::Values(LayerNormCase{"layer_norm_fwd", 128, false, 0},
                                           LayerNormCase{"layer_norm_fwd_fused", 512, false, 0},
                                           LayerNormCase{"layer_norm_fwd_fused", 512, true, 0},
                                           LayerNormCase{"layer_norm_fwd_fused", 512, false, 300},
                                           LayerNormCase{"layer_norm_fwd_fused", 512, true, 300}));

TEST_F(TutorialTest, MatmulWithAndWithoutActivation) {
  for (std::string activation : {"", "leaky_relu"}) {
    SCOPED_TRACE("activation '" + activation + "'");
    KernelSpec spec;
    spec.kernel = "matmul_kernel";
    spec.signature = "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32";
    spec.constants["BLOCK_SIZE_M"] = ConstValue::ofInt(32);
    spec.constants["BLOCK_SIZE_N"] = ConstValue::ofInt(32);
    spec.constants["BLOCK_SIZE_K"] = ConstValue::ofInt(16);
    spec.constants["GROUP_SIZE_M"] = ConstValue::ofInt(4);
    spec.constants["ACTIVATION"] = ConstValue::ofString(activation);
    Function *fn = compile("04-matmul.tk", readTutorial("04-matmul.tk"), spec);
    ASSERT_TRUE(fn);
    const int64_t M = 70, N = 90, K = 50; // none a multiple of its block
    HostBuffer A = random("a", DType::F16, M * K, -1, 1),
               Bm = random("b", DType::F16, K * N, -1, 1);
    HostBuffer C = HostBuffer::allocate("c", DType::F16, M * N);
    InterpretOptions opts;
    opts.grid = {((M + 31) / 32) * ((N + 31) / 32), 1, 1};
    ASSERT_TRUE(launch(fn,
                       {InterpArg::pointer(A), InterpArg::pointer(Bm), InterpArg::pointer(C),
                        InterpArg::integer(M), InterpArg::integer(N), InterpArg::integer(K),
                        InterpArg::integer(K), InterpArg::integer(1), InterpArg::integer(N),
                        InterpArg::integer(1), InterpArg::integer(N), InterpArg::integer(1)},
                       opts))
        << errors();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k)
          want += A.get(m * K + k) * Bm.get(k * N + n);
        if (activation == "leaky_relu" && want < 0)
          want *= 0.01;
        EXPECT_NEAR(C.get(m * N + n), want, 2 * ulpOf(DType::F16, want) + 1e-5) << m << "," << n;
      }
  }
}

} // namespace
