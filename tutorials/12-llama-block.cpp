// Tutorial 12 from host C++: a Llama-style decoder block from the kernels of
// tutorials/12-llama-block.tk (its header explains them), through tk's
// public API alone (<tk/tk.h>), with no Python anywhere:
//
//   h   = x + Attention(RoPE(RMSNorm(x) @ W_qkv)) @ W_o          (causal, KV cache)
//   out = h + (silu(RMSNorm(h) @ W_gate) * (RMSNorm(h) @ W_up)) @ W_down
//
// The launches are the Python form's (tutorials/12-llama-block.py), with the
// same tiles and grids: eight for a prefill (rms_norm, matmul, rope_qkv,
// attn_prefill, matmul + residual, rms_norm, matmul_swiglu, matmul +
// residual), thirteen for a decode step, whose matmuls (M <= 16 rows) split K
// into matmul_partial + matmul_finish and whose attention is split-KV
// (attn_decode + attn_decode_combine). The matmuls are autotuned with
// tk::Autotuner over the .py's tile lists (prefill tiles for M > 64, decode
// tiles up to 64 rows, the partial's tiles), keyed by M, N, K.
//
// A decode step is then captured once as a CUDA graph (tk::Graph) and
// replayed: one cuGraphLaunch instead of thirteen cuLaunchKernel calls. A graph
// replays its launches with the recorded arguments, so the replayed step is
// the same step (same buffers, same position); a server would update the
// position and the inputs in device memory between replays.
//
// What it prints, for each size: the block's prefill and decode outputs and
// the cache entries they wrote against a double-precision CPU reference
// (from the same fp16 inputs and weights, every output of the small block;
// the decode step of the real one), that the graph's replay wrote the same
// bits as the launches, and the times: ms per block (back-to-back blocks,
// then a synchronize, per block) with and without the graph, and the host's
// time per decode step (the wall time of issuing the thirteen launches, or of
// the one graph launch, on an idle stream).
//
//   build/tutorials/12-llama-block [--tutorials DIR] [--small]
//
// --small: the small block only (hidden 320, 5 heads x 64, intermediate 688,
// batch 2, a ragged prefill of 37 tokens then a decode step), checked and
// timed. Without it, then the real size: hidden 4096, 32 heads x 128,
// intermediate 11008, fp16, prefill 1x2048 and a decode step at position
// 2048. Without a GPU the program says so and exits 0.
#include "tutorial_host.h"

#include <tk/tk.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

using tutorial::Clock;
using tutorial::fromHalf;
using tutorial::toHalf;

unsigned cdiv(int64_t x, int64_t y) { return unsigned((x + y - 1) / y); }

int nextPow2(int n) { return int(tutorial::nextPowerOfTwo(unsigned(n))); }

struct Shape {
  int hidden, heads, intermediate, maxLen;
  int headDim() const { return hidden / heads; }
};
constexpr double kEps = 1e-5;
constexpr double kRopeTheta = 10000.0;

// splitmix64: fast enough for the real size's 200M weights.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float uniform() { return float(double(next() >> 11) * 0x1.0p-52 - 1.0); }
  // Mean 0, variance 1 (the Python form's standard normal's variance).
  float unit() { return 1.7320508f * uniform(); }
};

// fp16 -> double for every bit pattern: the reference reads weights through it.
const std::vector<double> &halfTable() {
  static const std::vector<double> table = [] {
    std::vector<double> t(65536);
    for (size_t i = 0; i < t.size(); ++i)
      t[i] = fromHalf(uint16_t(i));
    return t;
  }();
  return table;
}

std::vector<uint16_t> randomHalf(Rng &rng, size_t n, float scale) {
  std::vector<uint16_t> v(n);
  for (uint16_t &h : v)
    h = toHalf(scale * rng.unit());
  return v;
}

// The block's weights on the host, fp16 patterns; every matrix (K, N)
// row-major, as the .tk's header lays them out.
struct HostWeights {
  std::vector<uint16_t> attnNorm, wQkv, wO, mlpNorm, wGateUp, wDown;
  std::vector<float> cos, sin; // (maxLen, headDim), Llama's rotate-half tables

  HostWeights(const Shape &s, uint64_t seed) {
    Rng rng{seed};
    const size_t h = size_t(s.hidden), i = size_t(s.intermediate);
    auto norm = [&] {
      std::vector<uint16_t> v(h);
      for (uint16_t &x : v)
        x = toHalf(1.0f + 0.5f * rng.uniform());
      return v;
    };
    // Scaled as a trained model's: std 1 / sqrt(fan_in).
    auto mat = [&](size_t k, size_t n) {
      return randomHalf(rng, k * n, 1.0f / std::sqrt(float(k)));
    };
    attnNorm = norm();
    wQkv = mat(h, 3 * h);
    wO = mat(h, h);
    mlpNorm = norm();
    wGateUp = mat(h, 2 * i);
    wDown = mat(i, h);
    const int d = s.headDim();
    cos.resize(size_t(s.maxLen) * size_t(d));
    sin.resize(cos.size());
    for (int p = 0; p < s.maxLen; ++p)
      for (int j = 0; j < d; ++j) {
        double inv = 1.0 / std::pow(kRopeTheta, double(2 * (j % (d / 2))) / d);
        cos[size_t(p) * size_t(d) + size_t(j)] = float(std::cos(p * inv));
        sin[size_t(p) * size_t(d) + size_t(j)] = float(std::sin(p * inv));
      }
  }
};

// The weights on the device. Refuses weights whose sizes are not the
// shape's, naming the first that is off.
struct DeviceWeights {
  tk::DeviceMemory attnNorm, wQkv, wO, mlpNorm, wGateUp, wDown, cos, sin;

  DeviceWeights(const Shape &s, const HostWeights &w) {
    const size_t h = size_t(s.hidden), i = size_t(s.intermediate),
                 rope = size_t(s.maxLen) * size_t(s.headDim());
    const std::tuple<const char *, size_t, size_t, size_t> sizes[] = {
        {"attn_norm", w.attnNorm.size(), h, 1},
        {"W_qkv", w.wQkv.size(), h, 3 * h},
        {"W_o", w.wO.size(), h, h},
        {"mlp_norm", w.mlpNorm.size(), h, 1},
        {"W_gate_up", w.wGateUp.size(), h, 2 * i},
        {"W_down", w.wDown.size(), i, h},
        {"cos", w.cos.size(), rope, 1},
        {"sin", w.sin.size(), rope, 1}};
    if (s.hidden % s.heads != 0)
      throw tk::Error("llama block: hidden " + std::to_string(s.hidden) + " is not a multiple of " +
                      std::to_string(s.heads) + " heads");
    for (auto [name, got, rows, cols] : sizes)
      if (got != rows * cols)
        throw tk::Error(std::string("llama block: ") + name + " has " + std::to_string(got) +
                        " elements; hidden " + std::to_string(s.hidden) + ", intermediate " +
                        std::to_string(s.intermediate) + " and max_len " +
                        std::to_string(s.maxLen) + " need " + std::to_string(rows) + " x " +
                        std::to_string(cols));
    attnNorm = tk::DeviceMemory::fromHost(w.attnNorm);
    wQkv = tk::DeviceMemory::fromHost(w.wQkv);
    wO = tk::DeviceMemory::fromHost(w.wO);
    mlpNorm = tk::DeviceMemory::fromHost(w.mlpNorm);
    wGateUp = tk::DeviceMemory::fromHost(w.wGateUp);
    wDown = tk::DeviceMemory::fromHost(w.wDown);
    cos = tk::DeviceMemory::fromHost(w.cos);
    sin = tk::DeviceMemory::fromHost(w.sin);
  }
};

// -- the kernels --------------------------------------------------------------

using Tile = std::tuple<int, int, int, int, int>; // BLOCK_M, BLOCK_N, BLOCK_K, warps, stages

// The .py's lists. Prefill (M in the thousands): 128x256 on two warp
// groups, the others for N that 256 divides badly; matmul_swiglu keeps two
// accumulators, so half the columns; the decode step's narrow tiles give
// enough programs to stream the weights.
const Tile kPrefillTiles[] = {
    {128, 256, 64, 8, 4}, {128, 128, 64, 8, 4}, {128, 128, 64, 4, 4}, {64, 128, 64, 4, 4}};
const Tile kSwigluTiles[] = {
    {128, 128, 64, 8, 4}, {128, 64, 64, 4, 4}, {64, 128, 64, 4, 4}, {128, 128, 64, 8, 3}};
const Tile kDecodeTiles[] = {{16, 64, 128, 4, 4}, {16, 32, 256, 4, 3},  {16, 32, 128, 4, 6},
                             {16, 16, 256, 4, 4}, {16, 128, 128, 4, 4}, {64, 64, 64, 4, 4}};
const Tile kPartialTiles[] = {
    {16, 64, 128, 4, 4}, {16, 128, 128, 4, 4}, {16, 64, 256, 4, 3}, {16, 32, 256, 4, 4}};
// The decode step's matmuls split K when M is at most this.
constexpr int kSplitKRows = 16;

template <size_t N>
void addTiles(std::vector<tk::Config> &out, const Tile (&tiles)[N], bool group) {
  for (auto [bm, bn, bk, w, s] : tiles) {
    std::map<std::string, tk::Constant> meta{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}};
    if (group)
      meta["GROUP_M"] = 8;
    out.push_back(tk::Config(meta, w, s));
  }
}

class Kernels {
public:
  // `repMs`: the tuning's timed launches per config, by estimated time
  // (AutotuneOptions::repMs; a quarter of it warms up).
  Kernels(std::string path, std::string arch, int sms, double repMs)
      : path_(std::move(path)), arch_(std::move(arch)), sms_(sms),
        repMs_(repMs), matmul_{tuned("matmul", kMatmulSig, {{"RESIDUAL", false}}, kPrefillTiles),
                               tuned("matmul", kMatmulSig, {{"RESIDUAL", true}}, kPrefillTiles)},
        swiglu_(tuned("matmul_swiglu", "*fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32", {},
                      kSwigluTiles)),
        partial_(partialTuner()) {}

  int sms() const { return sms_; }
  tk::Autotuner &matmul(bool residual) { return matmul_[residual ? 1 : 0]; }
  tk::Autotuner &swiglu() { return swiglu_; }
  tk::Autotuner &partial() { return partial_; }

  // One kernel with these constexprs and launch options, compiled once.
  const tk::Kernel &get(const std::string &name, const char *signature,
                        const std::map<std::string, tk::Constant> &constants, int warps,
                        int stages = 3) {
    std::string key = name + "/" + std::to_string(warps) + "/" + std::to_string(stages);
    for (const auto &[k, v] : constants)
      key += "/" + k + "=" + v.str();
    auto it = kernels_.find(key);
    if (it != kernels_.end())
      return it->second;
    tk::KernelOptions o = base(name, signature, constants);
    o.numWarps = warps;
    o.numStages = stages;
    return kernels_.emplace(key, tk::Kernel::fromFile(path_, o)).first->second;
  }

private:
  // Types only: each launch specialises on its arguments, as @tk.jit does.
  static constexpr const char *kMatmulSig =
      "*fp16, *fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32";

  tk::KernelOptions base(const std::string &name, const char *signature,
                         const std::map<std::string, tk::Constant> &constants) const {
    tk::KernelOptions o;
    o.kernel = name;
    o.signature = signature;
    o.constants = constants;
    o.arch = arch_;
    return o;
  }

  tk::AutotuneOptions tuningOptions() const {
    tk::AutotuneOptions tuning;
    tuning.warmupMs = repMs_ / 4;
    tuning.repMs = repMs_;
    return tuning;
  }

  // Prefill tiles (the list given) for M > 64, the decode tiles up to 64 rows.
  template <size_t N>
  tk::Autotuner tuned(const char *name, const char *signature,
                      const std::map<std::string, tk::Constant> &constants,
                      const Tile (&large)[N]) {
    std::vector<tk::Config> configs;
    addTiles(configs, large, true);
    addTiles(configs, kDecodeTiles, true);
    tk::AutotuneOptions tuning = tuningOptions();
    tuning.key = {"M", "N", "K"};
    tuning.prune = [](const std::vector<tk::Config> &all,
                      const std::map<std::string, std::string> &keys) {
      bool rows = std::stol(keys.at("M")) <= 64;
      return rows ? std::vector<tk::Config>(all.begin() + N, all.end())
                  : std::vector<tk::Config>(all.begin(), all.begin() + N);
    };
    return tk::Autotuner::fromFile(path_, base(name, signature, constants), configs, tuning);
  }

  tk::Autotuner partialTuner() {
    std::vector<tk::Config> configs;
    addTiles(configs, kPartialTiles, false);
    tk::AutotuneOptions tuning = tuningOptions();
    tuning.key = {"M", "N", "K", "k_chunk"};
    return tk::Autotuner::fromFile(
        path_, base("matmul_partial", "*fp16, *fp16, *fp32, i32, i32, i32, i32, i32, i32", {}),
        configs, tuning);
  }

  std::string path_, arch_;
  int sms_;
  double repMs_;
  tk::Autotuner matmul_[2];
  tk::Autotuner swiglu_, partial_;
  std::map<std::string, tk::Kernel> kernels_;
};

// -- the block -----------------------------------------------------------------

// The KV cache: (batch, heads, maxLen, headDim) K and V, fp16.
struct Cache {
  int batch;
  tk::DeviceMemory k, v;
  Cache(const Shape &s, int batch)
      : batch(batch),
        k(size_t(batch) * size_t(s.heads) * size_t(s.maxLen) * size_t(s.headDim()) * 2),
        v(k.bytes()) {
    k.zero();
    v.zero();
  }
};

// One block step (batch x seq tokens at positions startPos..) with its
// buffers, so that its launches can be replayed: x is the input, out the
// output.
class Block {
  Kernels &kernels_;
  const Shape &s_;
  const DeviceWeights &w_;
  Cache &cache_;
  int batch_, seq_, startPos_, tokens_;

public:
  tk::DeviceMemory x, out;

  Block(Kernels &kernels, const Shape &s, const DeviceWeights &w, Cache &cache, int seq,
        int startPos)
      : kernels_(kernels), s_(s), w_(w), cache_(cache), batch_(cache.batch), seq_(seq),
        startPos_(startPos), tokens_(cache.batch * seq), x(bytes(s.hidden)), out(bytes(s.hidden)),
        xn_(bytes(s.hidden)), qkv_(bytes(3 * s.hidden)), q_(bytes(s.hidden)), o_(bytes(s.hidden)),
        h_(bytes(s.hidden)), hn_(bytes(s.hidden)), a_(bytes(s.intermediate)) {
    if (startPos + seq > s.maxLen)
      throw tk::Error("llama block: positions up to " + std::to_string(startPos + seq) +
                      " do not fit max_len " + std::to_string(s.maxLen));
    if (tokens_ <= kSplitKRows) {
      // The split-K partials of the widest matmul (gate/up), at most 8 splits.
      part_ = tk::DeviceMemory(size_t(8) * size_t(tokens_) * size_t(2 * s.intermediate) * 4);
      attnSplits_ = std::max(1, std::min(std::max(1, 2 * kernels.sms() / (batch_ * s.heads)),
                                         int(cdiv(startPos + 1, 64))));
      attnChunk_ = int(cdiv(cdiv(startPos + 1, attnSplits_), 64) * 64);
      attnSplits_ = int(cdiv(startPos + 1, attnChunk_));
      const size_t rows = size_t(batch_) * size_t(s.heads) * size_t(attnSplits_);
      attnPart_ = tk::DeviceMemory(rows * size_t(s.headDim()) * 4);
      attnPartML_ = tk::DeviceMemory(rows * 2 * 4);
    }
  }

  int tokens() const { return tokens_; }
  // Launches per step: two RMSNorms, RoPE, four matmuls (two launches each
  // when split along K), attention (two launches for a decode step).
  int launches() const { return 3 + (tokens_ <= kSplitKRows ? 8 : 4) + (seq_ > 1 ? 1 : 2); }

  // Queues the block's launches on `stream` (the first call of a shape tunes
  // its matmuls and compiles its kernels; later ones only launch).
  void enqueue(const tk::Stream &stream) {
    next_ = 0;
    const int H = s_.hidden, I = s_.intermediate, T = tokens_;
    rmsNorm(stream, x, w_.attnNorm, xn_);
    matmul(stream, xn_, w_.wQkv, qkv_, nullptr, T, 3 * H, H);
    rope(stream);
    attention(stream);
    matmul(stream, o_, w_.wO, h_, &x, T, H, H);
    rmsNorm(stream, h_, w_.mlpNorm, hn_);
    swiglu(stream, hn_, w_.wGateUp, a_, T, I, H);
    matmul(stream, a_, w_.wDown, out, &h_, T, H, I);
  }

private:
  // The kernel of the next launch: looked up in `kernels_` (compiling it)
  // by the first enqueue, then taken in launch order, so that a step's host
  // time is its launches' and not the lookups'.
  template <class Get> const tk::Kernel &site(Get &&get) {
    if (next_ == sites_.size())
      sites_.push_back(&get());
    return *sites_[next_++];
  }

  size_t bytes(int columns) const { return size_t(tokens_) * size_t(columns) * 2; }

  void rmsNorm(const tk::Stream &stream, const tk::DeviceMemory &in, const tk::DeviceMemory &w,
               const tk::DeviceMemory &y) {
    const int block = nextPow2(s_.hidden);
    site([&]() -> const tk::Kernel & {
      return kernels_.get("rms_norm", "*fp16, *fp16, *fp16, i32, i32, i32, fp32",
                          {{"BLOCK_N", block}}, std::max(1, std::min(16, block / 256)));
    })
        .launch(tk::Grid(unsigned(tokens_)), stream, in, w, y, s_.hidden, s_.hidden, s_.hidden,
                float(kEps));
  }

  static tk::Grid tileGrid(const tk::Config &c, int M, int N) {
    return tk::Grid(cdiv(M, c.intValue("BLOCK_M")) * cdiv(N, c.intValue("BLOCK_N")));
  }

  // c = a (M, K) @ b (K, N) (+ residual).
  void matmul(const tk::Stream &stream, const tk::DeviceMemory &a, const tk::DeviceMemory &b,
              const tk::DeviceMemory &c, const tk::DeviceMemory *residual, int M, int N, int K) {
    if (M <= kSplitKRows) {
      splitK(stream, a, b, c, residual, residual ? "residual" : "none", M, N, K, N);
      return;
    }
    kernels_.matmul(residual != nullptr)
        .launch([&](const tk::Config &cfg) { return tileGrid(cfg, M, N); }, stream, a, b, c,
                residual ? *residual : c, M, N, K, K, N, N, N);
  }

  // c = silu(a @ b[:, :N]) * (a @ b[:, N:]) for b (K, 2N).
  void swiglu(const tk::Stream &stream, const tk::DeviceMemory &a, const tk::DeviceMemory &b,
              const tk::DeviceMemory &c, int M, int N, int K) {
    if (M <= kSplitKRows) {
      splitK(stream, a, b, c, nullptr, "swiglu", M, 2 * N, K, N);
      return;
    }
    kernels_.swiglu().launch([&](const tk::Config &cfg) { return tileGrid(cfg, M, N); }, stream, a,
                             b, c, M, N, K, K, 2 * N, N);
  }

  // Split-K: fp32 partials of a (M, K) @ b (K, N), then matmul_finish's
  // epilogue into c (M, nOut). About two programs per SM over 64-column
  // tiles x splits; chunks of K a multiple of every BLOCK_K.
  void splitK(const tk::Stream &stream, const tk::DeviceMemory &a, const tk::DeviceMemory &b,
              const tk::DeviceMemory &c, const tk::DeviceMemory *residual, const char *epilogue,
              int M, int N, int K, int nOut) {
    int splits = std::max(1, std::min(8, 2 * kernels_.sms() / int(cdiv(N, 64))));
    const int kChunk = int(cdiv(cdiv(K, splits), 256) * 256);
    splits = int(cdiv(K, kChunk));
    kernels_.partial().launch(
        [&](const tk::Config &cfg) {
          return tk::Grid(cdiv(N, cfg.intValue("BLOCK_N")), unsigned(splits),
                          cdiv(M, cfg.intValue("BLOCK_M")));
        },
        stream, a, b, part_, M, N, K, kChunk, K, N);
    const int blockN = 256;
    site([&]() -> const tk::Kernel & {
      return kernels_.get(
          "matmul_finish", "*fp32, *fp16, *fp16, i32, i32, i32",
          {{"EPILOGUE", epilogue}, {"BLOCK_S", std::max(2, nextPow2(splits))}, {"BLOCK_N", blockN}},
          2);
    })
        .launch(tk::Grid(unsigned(M), cdiv(nOut, blockN)), stream, part_, residual ? *residual : c,
                c, M, nOut, splits);
  }

  int cacheBatchStride() const { return s_.heads * s_.maxLen * s_.headDim(); }
  int cacheHeadStride() const { return s_.maxLen * s_.headDim(); }

  void rope(const tk::Stream &stream) {
    site([&]() -> const tk::Kernel & {
      return kernels_.get(
          "rope_qkv", "*fp16, *fp32, *fp32, *fp16, *fp16, *fp16, i32, i32, i32, i32, i32",
          {{"H", s_.heads}, {"HEAD_DIM", s_.headDim()}, {"BLOCK_H", nextPow2(s_.heads)}}, 4);
    })
        .launch(tk::Grid(unsigned(tokens_)), stream, qkv_, w_.cos, w_.sin, q_, cache_.k, cache_.v,
                seq_, startPos_, 3 * s_.hidden, cacheBatchStride(), cacheHeadStride());
  }

  void attention(const tk::Stream &stream) {
    const int d = s_.headDim();
    const float scale = float(1.0 / std::sqrt(double(d)));
    const unsigned programs = unsigned(batch_ * s_.heads);
    if (seq_ > 1) {
      const int bm = 128, bn = 64;
      site([&]() -> const tk::Kernel & {
        return kernels_.get(
            "attn_prefill", "*fp16, *fp16, *fp16, *fp16, fp32, i32, i32, i32, i32, i32",
            {{"HEAD_DIM", d}, {"BLOCK_M", bm}, {"BLOCK_N", bn}}, d >= 128 ? 8 : 4, 3);
      })
          .launch(tk::Grid(cdiv(seq_, bm), programs), stream, q_, cache_.k, cache_.v, o_, scale,
                  seq_, startPos_, cacheBatchStride(), cacheHeadStride(), s_.heads);
      return;
    }
    site([&]() -> const tk::Kernel & {
      return kernels_.get("attn_decode",
                          "*fp16, *fp16, *fp16, *fp32, *fp32, fp32, i32, i32, i32, i32, i32",
                          {{"HEAD_DIM", d}, {"BLOCK_N", 64}}, 4);
    })
        .launch(tk::Grid(programs, unsigned(attnSplits_)), stream, q_, cache_.k, cache_.v,
                attnPart_, attnPartML_, scale, startPos_ + 1, attnChunk_, cacheBatchStride(),
                cacheHeadStride(), s_.heads);
    site([&]() -> const tk::Kernel & {
      return kernels_.get("attn_decode_combine", "*fp32, *fp32, *fp16, i32",
                          {{"HEAD_DIM", d}, {"BLOCK_S", std::max(2, nextPow2(attnSplits_))}}, 4);
    }).launch(tk::Grid(programs), stream, attnPart_, attnPartML_, o_, attnSplits_);
  }

  tk::DeviceMemory xn_, qkv_, q_, o_, h_, hn_, a_;
  tk::DeviceMemory part_, attnPart_, attnPartML_;
  int attnSplits_ = 1, attnChunk_ = 64;
  std::vector<const tk::Kernel *> sites_;
  size_t next_ = 0;
};

// -- the double-precision reference -------------------------------------------

// out = a (T, K) @ b (K, N), b fp16 patterns.
std::vector<double> matmulRef(const std::vector<double> &a, const std::vector<uint16_t> &b,
                              size_t T, size_t K, size_t N) {
  const std::vector<double> &f = halfTable();
  std::vector<double> out(T * N, 0.0);
  for (size_t t = 0; t < T; ++t)
    for (size_t k = 0; k < K; ++k) {
      const double av = a[t * K + k];
      const uint16_t *row = b.data() + k * N;
      double *o = out.data() + t * N;
      for (size_t n = 0; n < N; ++n)
        o[n] += av * f[row[n]];
    }
  return out;
}

std::vector<double> rmsNormRef(const std::vector<double> &x, const std::vector<uint16_t> &g,
                               size_t T, size_t H) {
  std::vector<double> y(x.size());
  for (size_t t = 0; t < T; ++t) {
    double ss = 0;
    for (size_t i = 0; i < H; ++i)
      ss += x[t * H + i] * x[t * H + i];
    const double r = 1.0 / std::sqrt(ss / double(H) + kEps);
    for (size_t i = 0; i < H; ++i)
      y[t * H + i] = x[t * H + i] * r * fromHalf(g[i]);
  }
  return y;
}

struct RefOut {
  std::vector<double> out;  // (tokens, hidden)
  std::vector<double> k, v; // the new cache rows: (batch, heads, seq, headDim)
};

// The block on x (batch, seq, hidden) at positions startPos.., with the
// cache's earlier rows `kPast`, `vPast` ((batch, heads, maxLen, headDim)
// fp16 patterns, rows below startPos read).
RefOut reference(const Shape &s, const HostWeights &w, const std::vector<uint16_t> &x, int batch,
                 int seq, int startPos, const std::vector<uint16_t> &kPast,
                 const std::vector<uint16_t> &vPast) {
  const size_t H = size_t(s.hidden), I = size_t(s.intermediate), T = size_t(batch) * size_t(seq);
  const int nh = s.heads, d = s.headDim();
  std::vector<double> xd(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    xd[i] = fromHalf(x[i]);
  std::vector<double> qkv = matmulRef(rmsNormRef(xd, w.attnNorm, T, H), w.wQkv, T, H, 3 * H);
  RefOut r;
  r.k.resize(size_t(batch) * size_t(nh) * size_t(seq) * size_t(d));
  r.v.resize(r.k.size());
  std::vector<double> q(r.k.size()), o(T * H);
  auto rope = [&](const double *src, double *dst, int pos) {
    for (int j = 0; j < d; ++j) {
      double rot = j < d / 2 ? -src[j + d / 2] : src[j - d / 2];
      size_t at = size_t(pos) * size_t(d) + size_t(j);
      dst[j] = src[j] * w.cos[at] + rot * w.sin[at];
    }
  };
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq; ++t)
      for (int h = 0; h < nh; ++h) {
        const double *row = qkv.data() + (size_t(b) * size_t(seq) + size_t(t)) * 3 * H;
        size_t at = ((size_t(b) * size_t(nh) + size_t(h)) * size_t(seq) + size_t(t)) * size_t(d);
        rope(row + size_t(h) * size_t(d), q.data() + at, startPos + t);
        rope(row + H + size_t(h) * size_t(d), r.k.data() + at, startPos + t);
        for (int j = 0; j < d; ++j)
          r.v[at + size_t(j)] = row[2 * H + size_t(h) * size_t(d) + size_t(j)];
      }
  const double scale = 1.0 / std::sqrt(double(d));
  std::vector<double> p;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < nh; ++h) {
      const size_t bh = size_t(b) * size_t(nh) + size_t(h);
      // Key j: the cache's row j below startPos, else the new row j - startPos.
      auto key = [&](const std::vector<uint16_t> &past, const std::vector<double> &fresh, int j,
                     int c) {
        return j < startPos
                   ? double(fromHalf(
                         past[(bh * size_t(s.maxLen) + size_t(j)) * size_t(d) + size_t(c)]))
                   : fresh[(bh * size_t(seq) + size_t(j - startPos)) * size_t(d) + size_t(c)];
      };
      for (int t = 0; t < seq; ++t) {
        const double *qi = q.data() + (bh * size_t(seq) + size_t(t)) * size_t(d);
        const int visible = startPos + t + 1;
        p.assign(size_t(visible), 0.0);
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < visible; ++j) {
          double dot = 0;
          for (int c = 0; c < d; ++c)
            dot += qi[c] * key(kPast, r.k, j, c);
          p[size_t(j)] = dot * scale;
          mx = std::max(mx, p[size_t(j)]);
        }
        for (double &v : p)
          sum += (v = std::exp(v - mx));
        double *oi = o.data() + (size_t(b) * size_t(seq) + size_t(t)) * H + size_t(h) * size_t(d);
        for (int j = 0; j < visible; ++j)
          for (int c = 0; c < d; ++c)
            oi[c] += p[size_t(j)] / sum * key(vPast, r.v, j, c);
      }
    }
  std::vector<double> hres = matmulRef(o, w.wO, T, H, H);
  for (size_t i = 0; i < hres.size(); ++i)
    hres[i] += xd[i];
  std::vector<double> gu = matmulRef(rmsNormRef(hres, w.mlpNorm, T, H), w.wGateUp, T, H, 2 * I);
  std::vector<double> a(T * I);
  for (size_t t = 0; t < T; ++t)
    for (size_t i = 0; i < I; ++i) {
      double g = gu[t * 2 * I + i], u = gu[t * 2 * I + I + i];
      a[t * I + i] = g / (1.0 + std::exp(-g)) * u;
    }
  r.out = matmulRef(a, w.wDown, T, I, H);
  for (size_t i = 0; i < r.out.size(); ++i)
    r.out[i] += hres[i];
  return r;
}

// -- checks and timing --------------------------------------------------------

double maxAbs(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

// The largest |got - want|; `got` fp16 patterns, `at(i)` the index of want[i] in got.
template <class At>
double maxErr(const std::vector<uint16_t> &got, const std::vector<double> &want, At at) {
  double e = 0;
  for (size_t i = 0; i < want.size(); ++i)
    e = std::max(e, std::abs(double(fromHalf(got[at(i)])) - want[i]));
  return e;
}

// Runs `block` once and checks its output and the cache rows it wrote against
// the reference (the cache's earlier rows as tk wrote them are the past).
bool checkStep(const char *label, const Shape &s, const HostWeights &w, Block &block, Cache &cache,
               const std::vector<uint16_t> &x, int seq, int startPos, const tk::Stream &stream) {
  const std::vector<uint16_t> kBefore = cache.k.toHost<uint16_t>(),
                              vBefore = cache.v.toHost<uint16_t>();
  block.enqueue(stream);
  stream.synchronize();
  RefOut want = reference(s, w, x, cache.batch, seq, startPos, kBefore, vBefore);
  const std::vector<uint16_t> got = block.out.toHost<uint16_t>(), k = cache.k.toHost<uint16_t>(),
                              v = cache.v.toHost<uint16_t>();
  const size_t d = size_t(s.headDim());
  // Row (bh, t) of the new entries is the cache's row (bh, startPos + t).
  auto inCache = [&](size_t i) {
    size_t c = i % d, t = i / d % size_t(seq), bh = i / d / size_t(seq);
    return (bh * size_t(s.maxLen) + size_t(startPos) + t) * d + c;
  };
  const double err = maxErr(got, want.out, [](size_t i) { return i; });
  const double kErr = maxErr(k, want.k, inCache), vErr = maxErr(v, want.v, inCache);
  // fp16 intermediates rounded once per kernel: a few fp16 epsilons of the
  // largest output (the Python form's bound).
  const double scale = maxAbs(want.out), bound = 16 * std::ldexp(1.0, -11) * std::max(1.0, scale);
  const bool ok = err <= bound && kErr <= bound && vErr <= bound;
  std::printf("%s %dx%d (start %d): max |tk - reference| = %.3g (output up to %.3g), cache K "
              "%.3g V %.3g: %s\n",
              label, cache.batch, seq, startPos, err, scale, kErr, vErr, ok ? "OK" : "FAILED");
  return ok;
}

// ms per call of `f` over `n` back-to-back calls, then a synchronize.
template <class F> double msPerCall(F &&f, const tk::Stream &stream, int n) {
  f();
  stream.synchronize();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    f();
  stream.synchronize();
  return tutorial::msSince(t0) / n;
}

// Median host time (us) of issuing `f` on an idle stream.
template <class F> double hostUs(F &&f, const tk::Stream &stream, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    stream.synchronize();
    auto t0 = Clock::now();
    f();
    t.push_back(tutorial::msSince(t0) * 1e3);
  }
  stream.synchronize();
  std::nth_element(t.begin(), t.begin() + ptrdiff_t(t.size() / 2), t.end());
  return t[t.size() / 2];
}

struct Workload {
  const char *name;
  Shape shape;
  int batch, prefillSeq;
  bool checkPrefill; // the decode step is always checked
  int prefillReps, decodeReps;
};

bool run(Kernels &kernels, const Workload &wl) {
  const Shape &s = wl.shape;
  std::printf("%s: hidden %d, %d heads x %d, intermediate %d, fp16, batch %d\n", wl.name, s.hidden,
              s.heads, s.headDim(), s.intermediate, wl.batch);
  auto t0 = Clock::now();
  HostWeights host(s, 12);
  DeviceWeights w(s, host);
  Cache cache(s, wl.batch);
  Rng rng{34};
  tk::Stream stream = tk::Stream::create();
  Block prefill(kernels, s, w, cache, wl.prefillSeq, 0);
  Block decode(kernels, s, w, cache, 1, wl.prefillSeq);
  const std::vector<uint16_t> xp = randomHalf(rng, size_t(prefill.tokens()) * size_t(s.hidden), 1),
                              xd = randomHalf(rng, size_t(decode.tokens()) * size_t(s.hidden), 1);
  prefill.x.upload(xp);
  decode.x.upload(xd);
  bool ok = true;
  if (wl.checkPrefill) {
    ok = checkStep("  prefill", s, host, prefill, cache, xp, wl.prefillSeq, 0, stream) && ok;
  } else {
    prefill.enqueue(stream); // tunes; the decode step's past
    stream.synchronize();
    std::printf("  prefill %dx%d: run (its output is not checked at this size)\n", wl.batch,
                wl.prefillSeq);
  }
  ok = checkStep("  decode ", s, host, decode, cache, xd, 1, wl.prefillSeq, stream) && ok;
  std::printf("  set-up, tuning and checks: %.1f s\n", tutorial::msSince(t0) / 1e3);

  // The decode step as a graph: its replay writes the launches' bits.
  const std::vector<uint16_t> direct = decode.out.toHost<uint16_t>();
  decode.out.zero();
  tk::Graph decodeGraph = tk::Graph::capture(stream, [&] { decode.enqueue(stream); });
  decodeGraph.launch(stream);
  stream.synchronize();
  const bool same = decode.out.toHost<uint16_t>() == direct;
  std::printf("  decode step replayed as a CUDA graph: %s\n",
              same ? "the same output, bit for bit" : "a DIFFERENT output");
  ok = ok && same;
  tk::Graph prefillGraph = tk::Graph::capture(stream, [&] { prefill.enqueue(stream); });

  const double prefillMs = msPerCall([&] { prefill.enqueue(stream); }, stream, wl.prefillReps);
  const double prefillGraphMs =
      msPerCall([&] { prefillGraph.launch(stream); }, stream, wl.prefillReps);
  const double decodeMs = msPerCall([&] { decode.enqueue(stream); }, stream, wl.decodeReps);
  const double decodeGraphMs =
      msPerCall([&] { decodeGraph.launch(stream); }, stream, wl.decodeReps);
  const double hostLaunches = hostUs([&] { decode.enqueue(stream); }, stream, wl.decodeReps);
  const double hostGraph = hostUs([&] { decodeGraph.launch(stream); }, stream, wl.decodeReps);
  std::printf("  prefill %dx%d: %.4f ms per block (launches), %.4f ms (CUDA graph)\n", wl.batch,
              wl.prefillSeq, prefillMs, prefillGraphMs);
  std::printf("  decode  %dx1 at position %d: %.4f ms per block (launches), %.4f ms (CUDA graph)\n",
              wl.batch, wl.prefillSeq, decodeMs, decodeGraphMs);
  std::printf("  host time per decode step: %.2f us issuing its %d launches, %.2f us replaying "
              "the graph\n",
              hostLaunches, decode.launches(), hostGraph);
  return ok;
}

std::string archOf(const tk::DeviceInfo &gpu) {
  // sm_90a on Hopper: wgmma and TMA.
  return "sm_" + std::to_string(gpu.computeCapability) + (gpu.computeCapability == 90 ? "a" : "");
}

} // namespace

int main(int argc, char **argv) {
  return tutorial::runMain(
      "12-llama-block", TK_TUTORIALS_DIR, argc, argv, [](const std::string &dir, bool small) {
        const tk::DeviceInfo gpu = tk::deviceInfo();
        std::printf("%s (%s, %d SMs)\n", gpu.name.c_str(), archOf(gpu).c_str(),
                    gpu.multiprocessors);
        const std::string path = dir + "/12-llama-block.tk", arch = archOf(gpu);
        // Small: every output checked; a ragged prefill (37 tokens), 5 heads
        // (BLOCK_H 8), hidden and intermediate no multiple of the larger
        // tiles. Tuned briefly: its times are not the point.
        Kernels quick(path, arch, gpu.multiprocessors, 1.0);
        bool ok = run(quick, {"small block", {320, 5, 688, 64}, 2, 37, true, 5, 20});
        if (!small) {
          Kernels kernels(path, arch, gpu.multiprocessors, 100.0);
          ok = run(kernels, {"Llama-7B-sized block",
                             {4096, 32, 11008, 2048 + 64},
                             1,
                             2048,
                             false,
                             20,
                             200}) &&
               ok;
        }
        return ok;
      });
}
