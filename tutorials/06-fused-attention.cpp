// Tutorial 6 from host C++: fused attention forward and backward through
// tk's public API alone (<tk/tk.h>), on tutorials/06-fused-attention.tk.
//
// The forward is autotuned over the four configs the Python form tunes
// (tutorials/06-fused-attention.py: BLOCK_M x BLOCK_N, warps, stages), keyed
// by N_CTX, with one autotuner per (head dim, causal, EVEN_N); the backward
// runs attn_bwd_preprocess and attn_bwd with one config. Each case checks O,
// dQ, dK and dV against a double-precision CPU reference on random fp16
// inputs whose sequence length is no multiple of any block, then times the
// forward.
//
//   build/tutorials/06-fused-attention [--tutorials DIR] [--small]
//
// Without a GPU the program says so and exits 0.
#include "tutorial_host.h"

#include <tk/tk.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using tutorial::fromHalf;
using tutorial::timeMs;
using tutorial::toHalf;

struct Case {
  int Z, H, N, D;
  bool causal;
};

unsigned cdiv(int64_t x, int64_t y) { return unsigned((x + y - 1) / y); }

// Q, K, V, dO of one case, (Z, H, N, D) contiguous, as fp16 patterns and as
// the doubles they round to.
struct Inputs {
  std::vector<uint16_t> q, k, v, dout;
};

// The reference (o, dq, dk, dv) in double from the fp16 inputs.
std::tuple<std::vector<double>, std::vector<double>, std::vector<double>, std::vector<double>>
reference(const Case &c, const Inputs &in, double smScale) {
  const int N = c.N, D = c.D;
  const size_t elems = size_t(c.Z) * size_t(c.H) * size_t(N) * size_t(D);
  std::vector<double> o(elems), dq(elems), dk(elems), dv(elems);
  std::vector<double> p(size_t(N) * size_t(N)), ds(p.size());
  auto widen = [](const std::vector<uint16_t> &t) {
    std::vector<double> out(t.size());
    for (size_t i = 0; i < t.size(); ++i)
      out[i] = fromHalf(t[i]);
    return out;
  };
  const std::vector<double> q = widen(in.q), k = widen(in.k), v = widen(in.v),
                            dout = widen(in.dout);
  for (int zh = 0; zh < c.Z * c.H; ++zh) {
    const size_t base = size_t(zh) * size_t(N) * size_t(D);
    auto at = [&](int i, int d) { return base + size_t(i) * size_t(D) + size_t(d); };
    for (int i = 0; i < N; ++i) {
      double mx = -INFINITY;
      int visible = c.causal ? i + 1 : N;
      for (int j = 0; j < visible; ++j) {
        double s = 0;
        for (int d = 0; d < D; ++d)
          s += q[at(i, d)] * k[at(j, d)];
        p[size_t(i) * size_t(N) + size_t(j)] = s * smScale;
        mx = std::max(mx, s * smScale);
      }
      double sum = 0;
      for (int j = 0; j < N; ++j) {
        double &pij = p[size_t(i) * size_t(N) + size_t(j)];
        pij = j < visible ? std::exp(pij - mx) : 0.0;
        sum += pij;
      }
      for (int j = 0; j < N; ++j)
        p[size_t(i) * size_t(N) + size_t(j)] /= sum;
      for (int d = 0; d < D; ++d) {
        double acc = 0;
        for (int j = 0; j < visible; ++j)
          acc += p[size_t(i) * size_t(N) + size_t(j)] * v[at(j, d)];
        o[at(i, d)] = acc;
      }
      double delta = 0;
      for (int d = 0; d < D; ++d)
        delta += o[at(i, d)] * dout[at(i, d)];
      for (int j = 0; j < visible; ++j) {
        double dp = 0;
        for (int d = 0; d < D; ++d)
          dp += dout[at(i, d)] * v[at(j, d)];
        ds[size_t(i) * size_t(N) + size_t(j)] = p[size_t(i) * size_t(N) + size_t(j)] * (dp - delta);
      }
      for (int j = visible; j < N; ++j)
        ds[size_t(i) * size_t(N) + size_t(j)] = 0;
    }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double pij = p[size_t(i) * size_t(N) + size_t(j)];
        double dsij = ds[size_t(i) * size_t(N) + size_t(j)];
        if (pij == 0 && dsij == 0)
          continue;
        for (int d = 0; d < D; ++d) {
          dv[at(j, d)] += pij * dout[at(i, d)];
          dq[at(i, d)] += dsij * k[at(j, d)] * smScale;
          dk[at(j, d)] += dsij * q[at(i, d)] * smScale;
        }
      }
  }
  return {o, dq, dk, dv};
}

// The largest |got - want| over the largest |want| (at least 1).
double relativeError(const std::vector<uint16_t> &got, const std::vector<double> &want) {
  double err = 0, largest = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(double(fromHalf(got[i])) - want[i]));
    largest = std::max(largest, std::abs(want[i]));
  }
  return err / largest;
}

const char *kSignatureFwd = "*fp16, *fp16, *fp16, *fp16, *fp32, fp32, i32, i32, i32, i32, i32";

struct Attention {
  std::string path;
  // One autotuner per (head dim, causal, EVEN_N): those are constexprs.
  std::map<std::tuple<int, bool, bool>, tk::Autotuner> forward;
  std::map<std::tuple<int, bool, bool>, std::pair<tk::Kernel, tk::Kernel>> backward;

  tk::Autotuner &forwardTuner(int D, bool causal, bool even) {
    auto key = std::tuple{D, causal, even};
    if (auto it = forward.find(key); it != forward.end())
      return it->second;
    tk::KernelOptions base;
    base.kernel = "attn_fwd";
    base.signature = kSignatureFwd;
    base.arch = "sm_90a";
    base.constants["HEAD_DIM"] = D;
    base.constants["CAUSAL"] = causal;
    base.constants["EVEN_N"] = even;
    std::vector<tk::Config> configs;
    for (auto [bm, bn, w, s] :
         {std::tuple{128, 64, 4, 3}, {128, 64, 8, 3}, {128, 128, 8, 2}, {64, 64, 4, 3}})
      configs.push_back(tk::Config({{"BLOCK_M", bm}, {"BLOCK_N", bn}}, w, s));
    tk::AutotuneOptions tuning;
    tuning.key = {"N_CTX"};
    return forward.emplace(key, tk::Autotuner::fromFile(path, base, configs, tuning)).first->second;
  }

  std::pair<tk::Kernel, tk::Kernel> &backwardKernels(int D, bool causal, bool even) {
    auto key = std::tuple{D, causal, even};
    if (auto it = backward.find(key); it != backward.end())
      return it->second;
    tk::KernelOptions pre;
    pre.kernel = "attn_bwd_preprocess";
    pre.signature = "*fp16, *fp16, *fp32, i32, i32, i32, i32, i32";
    pre.constants["BLOCK_M"] = 128;
    pre.constants["HEAD_DIM"] = D;
    tk::KernelOptions bwd;
    bwd.kernel = "attn_bwd";
    bwd.signature = "*fp16, *fp16, *fp16, fp32, *fp16, *fp16, *fp16, *fp16, *fp32, *fp32, i32, "
                    "i32, i32, i32, i32";
    bwd.arch = "sm_90a";
    bwd.numWarps = 4;
    bwd.numStages = 2;
    for (auto [name, value] : {std::pair{"BLOCK_M1", 32},
                               {"BLOCK_N1", 128},
                               {"BLOCK_M2", 128},
                               {"BLOCK_N2", 32},
                               {"HEAD_DIM", D}})
      bwd.constants[name] = value;
    bwd.constants["CAUSAL"] = causal;
    bwd.constants["EVEN_N"] = even;
    return backward
        .emplace(key, std::pair{tk::Kernel::fromFile(path, pre), tk::Kernel::fromFile(path, bwd)})
        .first->second;
  }
};

bool runCase(Attention &attn, const Case &c, std::mt19937 &rng, bool time) {
  const int N = c.N, D = c.D, ZH = c.Z * c.H;
  const size_t elems = size_t(ZH) * size_t(N) * size_t(D);
  const float smScale = 1.0f / std::sqrt(float(D));
  const bool even = N % 128 == 0;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Inputs in;
  for (auto *t : {&in.q, &in.k, &in.v, &in.dout}) {
    t->resize(elems);
    for (uint16_t &x : *t)
      x = toHalf(dist(rng));
  }
  tk::DeviceMemory q = tk::DeviceMemory::fromHost(in.q), k = tk::DeviceMemory::fromHost(in.k),
                   v = tk::DeviceMemory::fromHost(in.v), dout = tk::DeviceMemory::fromHost(in.dout);
  tk::DeviceMemory o(elems * 2), dq(elems * 2), dk(elems * 2), dv(elems * 2);
  tk::DeviceMemory m(size_t(ZH) * size_t(N) * 4), delta(size_t(ZH) * size_t(N) * 4);
  const int sz = c.H * N * D, sh = N * D, sm = D;
  tk::Stream stream;

  tk::Autotuner &fwd = attn.forwardTuner(D, c.causal, even);
  auto grid = [&](const tk::Config &cfg) {
    return tk::Grid(cdiv(N, cfg.intValue("BLOCK_M")), unsigned(ZH));
  };
  auto forward = [&] { fwd.launch(grid, stream, q, k, v, o, m, smScale, sz, sh, sm, c.H, N); };
  forward();
  auto &[pre, bwd] = attn.backwardKernels(D, c.causal, even);
  pre.launch(tk::Grid(cdiv(N, 128), unsigned(ZH)), stream, o, dout, delta, sz, sh, sm, c.H, N);
  bwd.launch(tk::Grid(cdiv(N, 128), unsigned(ZH)), stream, q, k, v, smScale, dout, dq, dk, dv, m,
             delta, sz, sh, sm, c.H, N);
  tk::synchronize();

  bool ok = true;
  std::string errors;
  if (!time || N <= 2048) {
    auto [ro, rdq, rdk, rdv] = reference(c, in, double(smScale));
    const double tol = 2e-2; // fp16 outputs, P and dS rounded to fp16 before their dots
    for (auto [name, got, want] :
         {std::tuple{"O", &o, &ro}, {"dQ", &dq, &rdq}, {"dK", &dk, &rdk}, {"dV", &dv, &rdv}}) {
      double err = relativeError(got->toHost<uint16_t>(), *want);
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.1e", name, err);
      errors += buf;
      ok = ok && err <= tol;
    }
  }
  std::printf("attention %dx%dx%dx%d %-6s best {%s}  errors:%s  %s", c.Z, c.H, N, D,
              c.causal ? "causal" : "full",
              fwd.best(grid, std::vector<tk::Arg>{q, k, v, o, m, smScale, sz, sh, sm, c.H, N})
                  .str()
                  .c_str(),
              errors.empty() ? " (not checked: too large for the CPU reference)" : errors.c_str(),
              ok ? "ok" : "MISMATCH");
  if (time) {
    double ms = timeMs(forward, 10);
    double flops = 4.0 * ZH * double(N) * N * D * (c.causal ? 0.5 : 1.0);
    std::printf("  forward %.3f ms, %.0f TFLOP/s", ms, flops / (ms * 1e9));
  }
  std::printf("\n");
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  return tutorial::runMain(
      "06-fused-attention", TK_TUTORIALS_DIR, argc, argv, [](const std::string &dir, bool small) {
        Attention attn{dir + "/06-fused-attention.tk", {}, {}};
        std::mt19937 rng(2026);
        bool ok = true;
        for (int D : {64, 128})
          for (bool causal : {false, true}) {
            ok = runCase(attn, {1, 2, 333, D, causal}, rng, false) && ok;
            if (!small)
              ok = runCase(attn, {2, 2, 1024 + 77, D, causal}, rng, false) && ok;
          }
        if (!small)
          for (bool causal : {false, true})
            ok = runCase(attn, {4, 32, 4096, 128, causal}, rng, true) && ok;
        return ok;
      });
}
