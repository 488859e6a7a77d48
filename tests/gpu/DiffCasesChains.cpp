// The differential test's dot chains: dot -> elementwise/reduction -> dot,
// the pattern of attention, which the compiler keeps in registers
// (--propagate-dot-layouts, the A operand from registers, loop-invariant
// operands in one-slot rings; docs/codegen/dot.md, "Dot chains"). Each runs
// on mma.sync (sm_90) and on wgmma (sm_90a), fp16 and bf16, with ragged
// rows and keys, on shapes drawn from the tiles the compiler takes:
//
//   chain2     online rescaled two-dot loop: S = Q K^T, row max and sum,
//              P = S - max, O = O * scale + P V (exact)
//   chain3     three dots with a reduction between each (exact)
//   chain_bwd  attention's dK/dV loop: four dots, 1-D row vectors, trans B
//              operands (exact)
//   attention  the forward pass with exp2, causal or not (a tolerance)
//
// Exactness: the inputs are small whole numbers, so every dot's fp32 sum is
// an integer (or a multiple of 2^-3 after the rescales) below 2^24 and
// exact in any order, and the casts of P to 16 bits round the same exact
// value on both sides. The attention case uses reals and exp2, and compares
// within a tolerance (the GPU's exp2 is ex2.approx; P's 16-bit rounding may
// then differ by one unit).
#include "DiffGen.h"

#include <cassert>

namespace tk::difftest {
namespace {

const char *kHeader = "import tk\n\n\n@tk.jit\n";

struct ChainShape {
  int64_t bm, bn, d;
  int warps;
};

// Shapes every path takes: wgmma needs 64 rows per warp group (BM = 64 on 4
// warps, 128 on 4 or 8), K and N of 32 or multiples of 64.
const ChainShape kShapes[] = {{64, 32, 32, 4},   {64, 64, 64, 4},  {128, 64, 64, 4},
                              {128, 64, 128, 8}, {128, 32, 64, 8}, {64, 128, 32, 4},
                              {128, 128, 64, 8}, {128, 64, 32, 8}};

ChainShape pickShape(Rng &rng, int64_t maxD) {
  for (;;) {
    const ChainShape &s = kShapes[uniformInt(rng, 0, std::size(kShapes) - 1)];
    if (s.d <= maxD)
      return s;
  }
}

void setUp(CaseRun &run, const ChainShape &s, const std::string &arch) {
  run.opts.kernel = "k";
  run.opts.arch = arch;
  run.opts.numWarps = s.warps;
  run.opts.constants["BM"] = ConstValue::ofInt(s.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(s.bn);
  run.opts.constants["D"] = ConstValue::ofInt(s.d);
}

void addBuffers(CaseRun &run) {
  for (size_t i = 0; i < run.buffers.size(); ++i)
    run.args.push_back(CaseArg::buf(i));
}

Elem to16(DType d, double v) { return roundTo(d, Elem::ofFloat(v)); }

//===----------------------------------------------------------------------===//
// chain2: the online rescaled loop
//===----------------------------------------------------------------------===//

CaseRun buildChain2(Rng &rng, DType dt, const std::string &arch) {
  CaseRun run;
  ChainShape s = pickShape(rng, 64);
  setUp(run, s, arch);
  unsigned programs = unsigned(uniformInt(rng, 1, 3));
  int64_t m = (programs - 1) * s.bm + uniformInt(rng, 1, s.bm);
  int64_t n = uniformInt(rng, 1, 3 * s.bn - 1); // ragged, up to three key blocks
  run.grid = {programs, 1, 1};
  run.shapeNote = fmt::format("BM={} BN={} D={} M={} N={} grid={} num_warps={} arch={}", s.bm, s.bn,
                              s.d, m, n, programs, s.warps, arch);
  Gen g = smallWhole(dt, 2);
  run.buffers.push_back(inputBuffer("q", dt, m * s.d, g, rng));
  run.buffers.push_back(inputBuffer("kk", dt, n * s.d, g, rng));
  run.buffers.push_back(inputBuffer("v", dt, n * s.d, g, rng));
  run.buffers.push_back(outputBuffer("o", DType::F32, m * s.d));
  run.buffers.back().shape = {m, s.d};
  run.buffers.push_back(outputBuffer("l", DType::F32, m));
  run.buffers.push_back(outputBuffer("mx", DType::F32, m));
  run.source =
      std::string(kHeader) +
      "def k(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, m_ptr, M, N, BM: tk.constexpr,\n"
      "      BN: tk.constexpr, D: tk.constexpr):\n"
      "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
      "    d = tk.arange(0, D)\n"
      "    q = tk.load(q_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < M,\n"
      "                other=0.0)\n"
      "    m_i = tk.zeros([BM], dtype=tk.float32) - 512.0\n"
      "    l_i = tk.zeros([BM], dtype=tk.float32)\n"
      "    acc = tk.zeros([BM, D], dtype=tk.float32)\n"
      "    for start in range(0, N, BN):\n"
      "        cols = start + tk.arange(0, BN)\n"
      "        kt = tk.load(k_ptr + cols[None, :] * D + d[:, None], mask=cols[None, :] < N,\n"
      "                     other=0.0)\n"
      "        s = tk.where(cols[None, :] < N, tk.dot(q, kt), -512.0)\n"
      "        m_new = tk.maximum(m_i, tk.max(s, 1))\n"
      "        p = s - m_new[:, None]\n"
      "        scale = tk.where(m_new > m_i, 0.5, 1.0)\n"
      "        l_i = l_i * scale + tk.sum(p, 1)\n"
      "        acc = acc * scale[:, None]\n"
      "        v = tk.load(v_ptr + cols[:, None] * D + d[None, :], mask=cols[:, None] < N,\n"
      "                    other=0.0)\n"
      "        acc = tk.dot(p.to(" +
      py(dt) +
      "), v, acc)\n"
      "        m_i = m_new\n"
      "    tk.store(o_ptr + rows[:, None] * D + d[None, :], acc, mask=rows[:, None] < M)\n"
      "    tk.store(l_ptr + rows, l_i, mask=rows < M)\n"
      "    tk.store(m_ptr + rows, m_i, mask=rows < M)\n";
  std::string p = "*" + ir(dt) + ":16";
  run.opts.signature = p + ", " + p + ", " + p + ", *fp32:16, *fp32:16, *fp32:16, i32, i32";
  addBuffers(run);
  run.args.push_back(CaseArg::integer(m));
  run.args.push_back(CaseArg::integer(n));
  int64_t D = s.d, BN = s.bn;
  run.reference = [=](const std::vector<CaseBuffer> &b) {
    Expected eo = unwritten(b[3]), el = unwritten(b[4]), em = unwritten(b[5]);
    for (int64_t i = 0; i < m; ++i) {
      double mi = -512, li = 0;
      std::vector<double> acc(size_t(D), 0.0);
      for (int64_t start = 0; start < n; start += BN) {
        std::vector<double> sv(static_cast<size_t>(BN));
        double mx = mi;
        for (int64_t j = 0; j < BN; ++j) {
          double v = -512;
          if (start + j < n) {
            v = 0;
            for (int64_t c = 0; c < D; ++c)
              v += at(b[0], i * D + c).f * at(b[1], (start + j) * D + c).f;
          }
          sv[size_t(j)] = v;
          mx = std::max(mx, v);
        }
        double scale = mx > mi ? 0.5 : 1.0, rowSum = 0;
        for (double &a : acc)
          a *= scale;
        for (int64_t j = 0; j < BN; ++j) {
          double pj = sv[size_t(j)] - mx;
          rowSum += pj;
          if (start + j >= n)
            continue; // v is 0 there
          double p16 = to16(dt, pj).f;
          for (int64_t c = 0; c < D; ++c)
            acc[size_t(c)] += p16 * at(b[2], (start + j) * D + c).f;
        }
        li = li * scale + rowSum;
        mi = mx;
      }
      for (int64_t c = 0; c < D; ++c)
        expectAt(eo, b[3], i * D + c, real(acc[size_t(c)]));
      expectAt(el, b[4], i, real(li));
      expectAt(em, b[5], i, real(mi));
    }
    return std::vector<Expected>{std::move(eo), std::move(el), std::move(em)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// chain3: three dots, a reduction between each
//===----------------------------------------------------------------------===//

CaseRun buildChain3(Rng &rng, DType dt, const std::string &arch) {
  CaseRun run;
  ChainShape s = pickShape(rng, 64);
  if (s.bn > 64)
    s.bn = 64;
  setUp(run, s, arch);
  int64_t e = s.d == 32 ? 64 : 32; // the third dot's N
  run.opts.constants["E"] = ConstValue::ofInt(e);
  unsigned programs = unsigned(uniformInt(rng, 1, 2));
  int64_t m = (programs - 1) * s.bm + uniformInt(rng, 1, s.bm);
  int64_t n = uniformInt(rng, 1, s.bn); // ragged keys in one block
  run.grid = {programs, 1, 1};
  run.shapeNote = fmt::format("BM={} BN={} D={} E={} M={} N={} grid={} num_warps={} arch={}", s.bm,
                              s.bn, s.d, e, m, n, programs, s.warps, arch);
  Gen g = smallWhole(dt, 2);
  run.buffers.push_back(inputBuffer("q", dt, m * s.d, g, rng));
  run.buffers.push_back(inputBuffer("kk", dt, n * s.d, g, rng));
  run.buffers.push_back(inputBuffer("v", dt, n * s.d, smallWhole(dt, 1), rng));
  run.buffers.push_back(inputBuffer("w", dt, s.d * e, g, rng));
  run.buffers.push_back(outputBuffer("r", DType::F32, m * e));
  run.buffers.back().shape = {m, e};
  run.source =
      std::string(kHeader) +
      "def k(q_ptr, k_ptr, v_ptr, w_ptr, r_ptr, M, N, BM: tk.constexpr, BN: tk.constexpr,\n"
      "      D: tk.constexpr, E: tk.constexpr):\n"
      "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
      "    n = tk.arange(0, BN)\n"
      "    d = tk.arange(0, D)\n"
      "    e = tk.arange(0, E)\n"
      "    q = tk.load(q_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < M,\n"
      "                other=0.0)\n"
      "    kt = tk.load(k_ptr + n[None, :] * D + d[:, None], mask=n[None, :] < N, other=0.0)\n"
      "    s = tk.where(n[None, :] < N, tk.dot(q, kt), -512.0)\n"
      "    p = s - tk.max(s, 1)[:, None]\n"
      "    v = tk.load(v_ptr + n[:, None] * D + d[None, :], mask=n[:, None] < N, other=0.0)\n"
      "    o = tk.dot(p.to(" +
      py(dt) +
      "), v)\n"
      "    o = tk.minimum(o - tk.min(o, 1)[:, None], 1000.0)\n"
      "    w = tk.load(w_ptr + d[:, None] * E + e[None, :])\n"
      "    r = tk.dot(o.to(" +
      py(dt) +
      "), w)\n"
      "    tk.store(r_ptr + rows[:, None] * E + e[None, :], r, mask=rows[:, None] < M)\n";
  std::string p = "*" + ir(dt) + ":16";
  run.opts.signature = p + ", " + p + ", " + p + ", " + p + ", *fp32:16, i32, i32";
  addBuffers(run);
  run.args.push_back(CaseArg::integer(m));
  run.args.push_back(CaseArg::integer(n));
  int64_t D = s.d, BN = s.bn;
  run.reference = [=](const std::vector<CaseBuffer> &b) {
    Expected er = unwritten(b[4]);
    for (int64_t i = 0; i < m; ++i) {
      std::vector<double> sv(size_t(BN), -512.0);
      double mx = -1e30;
      for (int64_t j = 0; j < BN; ++j) {
        if (j < n) {
          sv[size_t(j)] = 0;
          for (int64_t c = 0; c < D; ++c)
            sv[size_t(j)] += at(b[0], i * D + c).f * at(b[1], j * D + c).f;
        }
        mx = std::max(mx, sv[size_t(j)]);
      }
      std::vector<double> o(size_t(D), 0.0);
      for (int64_t j = 0; j < n; ++j) {
        double p16 = to16(dt, sv[size_t(j)] - mx).f;
        for (int64_t c = 0; c < D; ++c)
          o[size_t(c)] += p16 * at(b[2], j * D + c).f;
      }
      double mn = *std::min_element(o.begin(), o.end());
      for (double &x : o)
        x = to16(dt, std::min(x - mn, 1000.0)).f;
      for (int64_t c = 0; c < e; ++c) {
        double r = 0;
        for (int64_t k = 0; k < D; ++k)
          r += o[size_t(k)] * at(b[3], k * e + c).f;
        expectAt(er, b[4], i * e + c, real(r));
      }
    }
    return std::vector<Expected>{std::move(er)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// chain_bwd: attention's dK/dV loop
//===----------------------------------------------------------------------===//

CaseRun buildChainBwd(Rng &rng, DType dt, const std::string &arch) {
  CaseRun run;
  ChainShape s = pickShape(rng, 64);
  // Rows are keys (BN of them per program), the loop walks BM queries.
  setUp(run, s, arch);
  unsigned programs = unsigned(uniformInt(rng, 1, 2));
  int64_t nk = (programs - 1) * s.bm + uniformInt(rng, 1, s.bm);
  int64_t mq = uniformInt(rng, 1, 3 * s.bn - 1);
  run.grid = {programs, 1, 1};
  run.shapeNote = fmt::format("keys per program={} queries per step={} D={} keys={} queries={} "
                              "grid={} num_warps={} arch={}",
                              s.bm, s.bn, s.d, nk, mq, programs, s.warps, arch);
  Gen one = smallWhole(dt, 1);
  run.buffers.push_back(inputBuffer("q", dt, mq * s.d, one, rng));
  run.buffers.push_back(inputBuffer("kk", dt, nk * s.d, one, rng));
  run.buffers.push_back(inputBuffer("v", dt, nk * s.d, one, rng));
  run.buffers.push_back(inputBuffer("do", dt, mq * s.d, one, rng));
  run.buffers.push_back(inputBuffer("m", DType::F32, mq, smallWhole(DType::F32, 2), rng));
  run.buffers.push_back(inputBuffer("di", DType::F32, mq, smallWhole(DType::F32, 2), rng));
  run.buffers.push_back(outputBuffer("dk", DType::F32, nk * s.d));
  run.buffers.back().shape = {nk, s.d};
  run.buffers.push_back(outputBuffer("dv", DType::F32, nk * s.d));
  run.buffers.back().shape = {nk, s.d};
  std::string cast = ".to(" + py(dt) + ")";
  run.source =
      std::string(kHeader) +
      "def k(q_ptr, k_ptr, v_ptr, do_ptr, m_ptr, di_ptr, dk_ptr, dv_ptr, NK, MQ,\n"
      "      BM: tk.constexpr, BN: tk.constexpr, D: tk.constexpr):\n"
      "    keys = tk.program_id(0) * BM + tk.arange(0, BM)\n"
      "    d = tk.arange(0, D)\n"
      "    kv = keys[:, None] * D + d[None, :]\n"
      "    kk = tk.load(k_ptr + kv, mask=keys[:, None] < NK, other=0.0)\n"
      "    vv = tk.load(v_ptr + kv, mask=keys[:, None] < NK, other=0.0)\n"
      "    dk = tk.zeros([BM, D], dtype=tk.float32)\n"
      "    dv = tk.zeros([BM, D], dtype=tk.float32)\n"
      "    for start in range(0, MQ, BN):\n"
      "        qs = start + tk.arange(0, BN)\n"
      "        qT = tk.load(q_ptr + qs[None, :] * D + d[:, None], mask=qs[None, :] < MQ, "
      "other=0.0)\n"
      "        mv = tk.load(m_ptr + qs, mask=qs < MQ, other=0.0)\n"
      "        pT = tk.where(qs[None, :] < MQ, tk.dot(kk, qT) - mv[None, :], 0.0)\n"
      "        do = tk.load(do_ptr + qs[:, None] * D + d[None, :], mask=qs[:, None] < MQ,\n"
      "                     other=0.0)\n"
      "        dv += tk.dot(pT" +
      cast +
      ", do)\n"
      "        di = tk.load(di_ptr + qs, mask=qs < MQ, other=0.0)\n"
      "        dsT = pT * (tk.dot(vv, tk.trans(do)) - di[None, :])\n"
      "        dk += tk.dot(dsT" +
      cast +
      ", tk.trans(qT))\n"
      "    tk.store(dk_ptr + kv, dk, mask=keys[:, None] < NK)\n"
      "    tk.store(dv_ptr + kv, dv, mask=keys[:, None] < NK)\n";
  std::string p = "*" + ir(dt) + ":16";
  run.opts.signature =
      p + ", " + p + ", " + p + ", " + p + ", *fp32:16, *fp32:16, *fp32:16, *fp32:16, i32, i32";
  addBuffers(run);
  run.args.push_back(CaseArg::integer(nk));
  run.args.push_back(CaseArg::integer(mq));
  int64_t D = s.d;
  run.reference = [=](const std::vector<CaseBuffer> &b) {
    Expected ek = unwritten(b[6]), ev = unwritten(b[7]);
    for (int64_t i = 0; i < nk; ++i) {
      std::vector<double> dk(size_t(D), 0.0), dv(size_t(D), 0.0);
      for (int64_t j = 0; j < mq; ++j) {
        double qk = 0, dp = 0;
        for (int64_t c = 0; c < D; ++c) {
          qk += at(b[1], i * D + c).f * at(b[0], j * D + c).f;
          dp += at(b[2], i * D + c).f * at(b[3], j * D + c).f;
        }
        double pT = qk - at(b[4], j).f, ds = pT * (dp - at(b[5], j).f);
        double p16 = to16(dt, pT).f, ds16 = to16(dt, ds).f;
        for (int64_t c = 0; c < D; ++c) {
          dv[size_t(c)] += p16 * at(b[3], j * D + c).f;
          dk[size_t(c)] += ds16 * at(b[0], j * D + c).f;
        }
      }
      for (int64_t c = 0; c < D; ++c) {
        expectAt(ek, b[6], i * D + c, real(dk[size_t(c)]));
        expectAt(ev, b[7], i * D + c, real(dv[size_t(c)]));
      }
    }
    return std::vector<Expected>{std::move(ek), std::move(ev)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// attention: the forward pass with exp2
//===----------------------------------------------------------------------===//

CaseRun buildAttention(Rng &rng, DType dt, const std::string &arch, bool causal) {
  CaseRun run;
  ChainShape s = pickShape(rng, 128);
  setUp(run, s, arch);
  unsigned programs = unsigned(uniformInt(rng, 1, 3));
  int64_t m = (programs - 1) * s.bm + uniformInt(rng, 1, s.bm);
  int64_t n = causal ? m : uniformInt(rng, 1, 3 * s.bn - 1);
  run.grid = {programs, 1, 1};
  run.shapeNote = fmt::format("BM={} BN={} D={} M={} N={} causal={} grid={} num_warps={} arch={}",
                              s.bm, s.bn, s.d, m, n, causal, programs, s.warps, arch);
  Gen g = realIn(dt, -1, 1);
  run.buffers.push_back(inputBuffer("q", dt, m * s.d, g, rng));
  run.buffers.push_back(inputBuffer("kk", dt, n * s.d, g, rng));
  run.buffers.push_back(inputBuffer("v", dt, n * s.d, g, rng));
  // P's 16-bit rounding (one unit either way between the GPU's approximate
  // exp2 and the interpreter's) moves O by about that much of |v| <= 1.
  double tol = dt == DType::BF16 ? 2e-2 : 4e-3;
  run.buffers.push_back(outputBuffer("o", DType::F32, m * s.d, Tol{0, tol}));
  run.buffers.back().shape = {m, s.d};
  run.buffers.push_back(outputBuffer("lse", DType::F32, m, Tol{0, 1e-3}));
  run.source =
      std::string(kHeader) +
      "def k(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, M, N, BM: tk.constexpr,\n"
      "      BN: tk.constexpr, D: tk.constexpr, CAUSAL: tk.constexpr):\n"
      "    start_m = tk.program_id(0)\n"
      "    rows = start_m * BM + tk.arange(0, BM)\n"
      "    d = tk.arange(0, D)\n"
      "    q = tk.load(q_ptr + rows[:, None] * D + d[None, :], mask=rows[:, None] < M,\n"
      "                other=0.0)\n"
      "    m_i = tk.zeros([BM], dtype=tk.float32) - float(\"inf\")\n"
      "    l_i = tk.zeros([BM], dtype=tk.float32) + 1.0\n"
      "    acc = tk.zeros([BM, D], dtype=tk.float32)\n"
      "    qk_scale = sm_scale * 1.44269504\n"
      "    hi = N\n"
      "    if CAUSAL:\n"
      "        hi = tk.minimum((start_m + 1) * BM, N)\n"
      "    for start in range(0, hi, BN):\n"
      "        cols = start + tk.arange(0, BN)\n"
      "        kt = tk.load(k_ptr + cols[None, :] * D + d[:, None], mask=cols[None, :] < N,\n"
      "                     other=0.0)\n"
      "        keep = cols[None, :] < N\n"
      "        if CAUSAL:\n"
      "            keep = keep & (rows[:, None] >= cols[None, :])\n"
      "        qk = tk.where(keep, tk.dot(q, kt) * qk_scale, -1.0e6)\n"
      "        m_ij = tk.maximum(m_i, tk.max(qk, 1))\n"
      "        p = tk.math.exp2(qk - m_ij[:, None])\n"
      "        alpha = tk.math.exp2(m_i - m_ij)\n"
      "        l_i = l_i * alpha + tk.sum(p, 1)\n"
      "        acc = acc * alpha[:, None]\n"
      "        v = tk.load(v_ptr + cols[:, None] * D + d[None, :], mask=cols[:, None] < N,\n"
      "                    other=0.0)\n"
      "        acc = tk.dot(p.to(" +
      py(dt) +
      "), v, acc)\n"
      "        m_i = m_ij\n"
      "    tk.store(o_ptr + rows[:, None] * D + d[None, :], acc / l_i[:, None],\n"
      "             mask=rows[:, None] < M)\n"
      "    tk.store(lse_ptr + rows, m_i + tk.math.log2(l_i), mask=rows < M)\n";
  run.opts.constants["CAUSAL"] = ConstValue::ofBool(causal);
  std::string p = "*" + ir(dt) + ":16";
  run.opts.signature = p + ", " + p + ", " + p + ", *fp32:16, *fp32:16, fp32, i32, i32";
  addBuffers(run);
  double scale = 1.0 / std::sqrt(double(s.d));
  run.args.push_back(CaseArg::scalarOf(DType::F32, Elem::ofFloat(scale)));
  run.args.push_back(CaseArg::integer(m));
  run.args.push_back(CaseArg::integer(n));
  int64_t D = s.d;
  // The exact softmax in double. l starts at 1 in the kernel (as in
  // Triton's tutorial): exp2(-inf - m) = 0 rescales it away at the first
  // block, so O and the log-sum-exp are the usual ones.
  run.reference = [=](const std::vector<CaseBuffer> &b) {
    Expected eo = unwritten(b[3]), el = unwritten(b[4]);
    for (int64_t i = 0; i < m; ++i) {
      int64_t keys = causal ? i + 1 : n;
      std::vector<double> sc(static_cast<size_t>(keys));
      double mx = -1e300;
      for (int64_t j = 0; j < keys; ++j) {
        double v = 0;
        for (int64_t c = 0; c < D; ++c)
          v += at(b[0], i * D + c).f * at(b[1], j * D + c).f;
        sc[size_t(j)] = v * scale * 1.44269504;
        mx = std::max(mx, sc[size_t(j)]);
      }
      double sum = 0;
      std::vector<double> o(size_t(D), 0.0);
      for (int64_t j = 0; j < keys; ++j) {
        double pj = std::exp2(sc[size_t(j)] - mx);
        sum += pj;
        for (int64_t c = 0; c < D; ++c)
          o[size_t(c)] += pj * at(b[2], j * D + c).f;
      }
      for (int64_t c = 0; c < D; ++c)
        expectAt(eo, b[3], i * D + c, real(o[size_t(c)] / sum));
      expectAt(el, b[4], i, real(mx + std::log2(sum)));
    }
    return std::vector<Expected>{std::move(eo), std::move(el)};
  };
  return run;
}

} // namespace

void addChainCases(std::vector<CaseDef> &cases) {
  auto add = [&](std::string name, std::string dtype, std::function<CaseRun(Rng &)> build) {
    cases.push_back({std::move(name), "dot_chain", std::move(dtype), std::move(build)});
  };
  for (const char *arch : {"sm_90", "sm_90a"})
    for (DType dt : {DType::F16, DType::BF16}) {
      std::string a = arch, d = ir(dt);
      for (int i = 0; i < 3; ++i)
        add(fmt::format("chain2/{}/{}/{}", d, a, i), d,
            [=](Rng &r) { return buildChain2(r, dt, a); });
      add(fmt::format("chain3/{}/{}", d, a), d, [=](Rng &r) { return buildChain3(r, dt, a); });
      for (int i = 0; i < 2; ++i)
        add(fmt::format("chain_bwd/{}/{}/{}", d, a, i), d,
            [=](Rng &r) { return buildChainBwd(r, dt, a); });
      for (bool causal : {false, true})
        for (int i = 0; i < 2; ++i)
          add(fmt::format("attention/{}/{}/{}/{}", d, a, causal ? "causal" : "full", i), d,
              [=](Rng &r) { return buildAttention(r, dt, a, causal); });
    }
}

} // namespace tk::difftest
