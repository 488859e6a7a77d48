// Every tutorial kernel (tutorials/*.tk) through the front end, AST -> IR
// and the interpreter, on random inputs (never zeros), against references
// computed here in double. Tolerances (docs/interpreter.md): fp32 results
// within a few fp32 ulps of the double reference, fp16 results within 2 fp16
// ulps plus the fp32 accumulation error.
#include "InterpTestUtil.h"

#include "ir/ASTToIR.h"
#include "parser/Frontend.h"

#include <cmath>
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

// Tutorial 6's three kernels on (Z, H) = (1, 2) heads of N_CTX = 70 tokens
// (not a multiple of any block: the last blocks are masked, EVEN_N false),
// fp16 and bf16, causal and not, against attention computed here in double
// from the same (rounded) inputs: the forward's O and its log-sum-exp M, then
// Delta = rowsum(O * dO) and dQ, dK, dV of the backward.
struct AttentionCase {
  DType dtype;
  bool causal;
  int64_t headDim;
};

class AttentionTutorial : public TutorialTest,
                          public ::testing::WithParamInterface<AttentionCase> {};

TEST_P(AttentionTutorial, ForwardAndBackwardMatchDouble) {
  const AttentionCase c = GetParam();
  const int64_t H = 2, N = 70, D = c.headDim, BM = 32, BN = 16;
  const double smScale = 0.5 / std::sqrt(double(D));
  const std::string ty = c.dtype == DType::F16 ? "fp16" : "bf16";
  const std::string text = readTutorial("06-fused-attention.tk");
  const int64_t elems = H * N * D;
  HostBuffer Q = random("q", c.dtype, elems, -1, 1), K = random("k", c.dtype, elems, -1, 1),
             V = random("v", c.dtype, elems, -1, 1), DO = random("do", c.dtype, elems, -1, 1);
  HostBuffer O = HostBuffer::allocate("o", c.dtype, elems);
  HostBuffer M = HostBuffer::allocate("m", DType::F32, H * N);
  auto at = [&](const HostBuffer &b, int64_t h, int64_t i, int64_t d) {
    return b.get((h * N + i) * D + d);
  };
  auto strides = [&] {
    return std::vector<InterpArg>{InterpArg::integer(H * N * D), InterpArg::integer(N * D),
                                  InterpArg::integer(D), InterpArg::integer(H),
                                  InterpArg::integer(N)};
  };
  auto constants = [&](KernelSpec &spec) {
    spec.constants["HEAD_DIM"] = ConstValue::ofInt(D);
    spec.constants["EVEN_N"] = ConstValue::ofBool(false);
  };

  // The reference: P = softmax(S), S = Q K^T * scale (causal: keys j <= i).
  std::vector<double> P(H * N * N), dP(H * N * N), lse(H * N);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      double mx = -1e300;
      std::vector<double> s(N);
      for (int64_t j = 0; j < N; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += at(Q, h, i, d) * at(K, h, j, d);
        s[j] = (c.causal && j > i) ? -1e300 : dot * smScale;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < N; ++j)
        sum += (s[j] > -1e299) ? std::exp(s[j] - mx) : 0;
      for (int64_t j = 0; j < N; ++j)
        P[(h * N + i) * N + j] = (s[j] > -1e299) ? std::exp(s[j] - mx) / sum : 0;
      lse[h * N + i] = (mx + std::log(sum)) / std::log(2.0);
    }

  {
    KernelSpec spec;
    spec.kernel = "attn_fwd";
    spec.signature =
        fmt::format("*{0}, *{0}, *{0}, *{0}, *fp32, fp32, i32, i32, i32, i32, i32", ty);
    constants(spec);
    spec.constants["BLOCK_M"] = ConstValue::ofInt(BM);
    spec.constants["BLOCK_N"] = ConstValue::ofInt(BN);
    spec.constants["CAUSAL"] = ConstValue::ofBool(c.causal);
    Function *fn = compile("06-fused-attention.tk", text, spec);
    ASSERT_TRUE(fn);
    std::vector<InterpArg> args = {InterpArg::pointer(Q), InterpArg::pointer(K),
                                   InterpArg::pointer(V), InterpArg::pointer(O),
                                   InterpArg::pointer(M), InterpArg::real(smScale)};
    for (const InterpArg &a : strides())
      args.push_back(a);
    InterpretOptions opts;
    opts.grid = {(N + BM - 1) / BM, H, 1};
    ASSERT_TRUE(launch(fn, args, opts)) << errors();
  }
  // 2 ulps of the 16-bit result, plus the rounding of P to 16 bits before
  // P V: a few of its epsilons of the largest reference value.
  const double eps = c.dtype == DType::F16 ? 0x1p-11 : 0x1p-8;
  auto tolerance = [&](double want, double largest) {
    return 2 * ulpOf(c.dtype, want) + 4 * eps * largest;
  };
  auto largest = [](const std::vector<double> &xs) {
    double m = 0;
    for (double x : xs)
      m = std::max(m, std::abs(x));
    return m;
  };
  std::vector<double> refO(static_cast<size_t>(elems));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t j = 0; j < N; ++j)
          refO[size_t((h * N + i) * D + d)] += P[(h * N + i) * N + j] * at(V, h, j, d);
  const double maxO = largest(refO);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      EXPECT_NEAR(M.get(h * N + i), lse[h * N + i], 1e-4) << h << "," << i;
      for (int64_t d = 0; d < D; ++d) {
        double want = refO[size_t((h * N + i) * D + d)];
        EXPECT_NEAR(at(O, h, i, d), want, tolerance(want, maxO)) << h << "," << i << "," << d;
      }
    }

  // Backward, from the kernel's own O and M (as the autograd function runs).
  HostBuffer Delta = HostBuffer::allocate("delta", DType::F32, H * N);
  HostBuffer DQ = HostBuffer::allocate("dq", c.dtype, elems),
             DK = HostBuffer::allocate("dk", c.dtype, elems),
             DV = HostBuffer::allocate("dv", c.dtype, elems);
  {
    KernelSpec spec;
    spec.kernel = "attn_bwd_preprocess";
    spec.signature = fmt::format("*{0}, *{0}, *fp32, i32, i32, i32, i32, i32", ty);
    spec.constants["BLOCK_M"] = ConstValue::ofInt(BM);
    spec.constants["HEAD_DIM"] = ConstValue::ofInt(D);
    Function *fn = compile("06-fused-attention.tk", text, spec);
    ASSERT_TRUE(fn);
    std::vector<InterpArg> args = {InterpArg::pointer(O), InterpArg::pointer(DO),
                                   InterpArg::pointer(Delta)};
    for (const InterpArg &a : strides())
      args.push_back(a);
    InterpretOptions opts;
    opts.grid = {(N + BM - 1) / BM, H, 1};
    ASSERT_TRUE(launch(fn, args, opts)) << errors();
  }
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      double want = 0;
      for (int64_t d = 0; d < D; ++d)
        want += at(O, h, i, d) * at(DO, h, i, d);
      EXPECT_NEAR(Delta.get(h * N + i), want, 1e-4 * (1 + std::abs(want))) << h << "," << i;
    }
  {
    KernelSpec spec;
    spec.kernel = "attn_bwd";
    spec.signature = fmt::format("*{0}, *{0}, *{0}, fp32, *{0}, *{0}, *{0}, *{0}, *fp32, *fp32, "
                                 "i32, i32, i32, i32, i32",
                                 ty);
    constants(spec);
    spec.constants["BLOCK_M1"] = ConstValue::ofInt(16);
    spec.constants["BLOCK_N1"] = ConstValue::ofInt(32);
    spec.constants["BLOCK_M2"] = ConstValue::ofInt(32);
    spec.constants["BLOCK_N2"] = ConstValue::ofInt(16);
    spec.constants["CAUSAL"] = ConstValue::ofBool(c.causal);
    Function *fn = compile("06-fused-attention.tk", text, spec);
    ASSERT_TRUE(fn);
    std::vector<InterpArg> args = {InterpArg::pointer(Q),  InterpArg::pointer(K),
                                   InterpArg::pointer(V),  InterpArg::real(smScale),
                                   InterpArg::pointer(DO), InterpArg::pointer(DQ),
                                   InterpArg::pointer(DK), InterpArg::pointer(DV),
                                   InterpArg::pointer(M),  InterpArg::pointer(Delta)};
    for (const InterpArg &a : strides())
      args.push_back(a);
    InterpretOptions opts;
    opts.grid = {(N + 31) / 32, H, 1};
    ASSERT_TRUE(launch(fn, args, opts)) << errors();
  }
  // dP = dO V^T, dS = P * (dP - rowsum(O dO)), dQ = scale dS K, dK = scale dS^T Q,
  // dV = P^T dO, with the reference's own O.
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      double delta = 0;
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j < N; ++j)
          o += P[(h * N + i) * N + j] * at(V, h, j, d);
        delta += o * at(DO, h, i, d);
      }
      for (int64_t j = 0; j < N; ++j) {
        double dp = 0;
        for (int64_t d = 0; d < D; ++d)
          dp += at(DO, h, i, d) * at(V, h, j, d);
        dP[(h * N + i) * N + j] = P[(h * N + i) * N + j] * (dp - delta); // dS
      }
    }
  const size_t count = static_cast<size_t>(elems);
  std::vector<double> refDQ(count), refDK(count), refDV(count);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t d = 0; d < D; ++d) {
        size_t e = size_t((h * N + i) * D + d);
        for (int64_t j = 0; j < N; ++j) {
          refDQ[e] += dP[(h * N + i) * N + j] * at(K, h, j, d) * smScale;
          refDK[e] += dP[(h * N + j) * N + i] * at(Q, h, j, d) * smScale;
          refDV[e] += P[(h * N + j) * N + i] * at(DO, h, j, d);
        }
      }
  const double maxDQ = largest(refDQ), maxDK = largest(refDK), maxDV = largest(refDV);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t d = 0; d < D; ++d) {
        size_t e = size_t((h * N + i) * D + d);
        EXPECT_NEAR(at(DQ, h, i, d), refDQ[e], tolerance(refDQ[e], maxDQ))
            << "dq " << h << "," << i << "," << d;
        EXPECT_NEAR(at(DK, h, i, d), refDK[e], tolerance(refDK[e], maxDK))
            << "dk " << h << "," << i << "," << d;
        EXPECT_NEAR(at(DV, h, i, d), refDV[e], tolerance(refDV[e], maxDV))
            << "dv " << h << "," << i << "," << d;
      }
}

INSTANTIATE_TEST_SUITE_P(Configs, AttentionTutorial,
                         ::testing::Values(AttentionCase{DType::F16, false, 64},
                                           AttentionCase{DType::F16, true, 64},
                                           AttentionCase{DType::BF16, false, 128},
                                           AttentionCase{DType::BF16, true, 128}));

} // namespace
