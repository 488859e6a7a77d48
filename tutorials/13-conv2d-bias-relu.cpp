// Tutorial 13 from host C++: Conv2d + bias + ReLU fused in one implicit-GEMM
// kernel (tutorials/13-conv2d-bias-relu.tk; its header explains the kernel
// and the layouts), through tk's public API alone (<tk/tk.h>).
//
// x is NHWC (N, H, W, C), the filter (KH, KW, C, K), bias (K), y NHWC
// (N, P, Q, K), all fp16. The kernel is autotuned over the configs the
// Python form tunes (tutorials/13-conv2d-bias-relu.py: BLOCK_M x BLOCK_N x
// BLOCK_K, warps, stages), keyed by the layer's shape, with one autotuner per
// (KH, KW, CHANNEL_BLOCKS): those are constexprs. Each layer is checked
// against a double-precision CPU reference on random fp16 inputs (every
// output of the small ragged layers; 512 sampled outputs of the ResNet-50
// layers), then timed.
//
//   build/tutorials/13-conv2d-bias-relu [--tutorials DIR] [--small]
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

unsigned cdiv(int64_t x, int64_t y) { return unsigned((x + y - 1) / y); }

struct Layer {
  const char *name;
  int N, H, W, C, K, KH, KW, stride, pad, dil;
  int P() const { return (H + 2 * pad - dil * (KH - 1) - 1) / stride + 1; }
  int Q() const { return (W + 2 * pad - dil * (KW - 1) - 1) / stride + 1; }
};

// The host copies of one layer's tensors, fp16 bit patterns.
struct Tensors {
  std::vector<uint16_t> x, w, bias;
};

// relu(conv2d + bias) at output (n, p, q, k), in double.
double reference(const Layer &l, const Tensors &t, int n, int p, int q, int k) {
  double acc = fromHalf(t.bias[size_t(k)]);
  for (int r = 0; r < l.KH; ++r)
    for (int s = 0; s < l.KW; ++s) {
      int h = p * l.stride - l.pad + r * l.dil, w = q * l.stride - l.pad + s * l.dil;
      if (h < 0 || h >= l.H || w < 0 || w >= l.W)
        continue;
      const size_t xBase =
          ((size_t(n) * size_t(l.H) + size_t(h)) * size_t(l.W) + size_t(w)) * size_t(l.C);
      const size_t wBase = (size_t(r) * size_t(l.KW) + size_t(s)) * size_t(l.C);
      for (int c = 0; c < l.C; ++c)
        acc += double(fromHalf(t.x[xBase + size_t(c)])) *
               double(fromHalf(t.w[(wBase + size_t(c)) * size_t(l.K) + size_t(k)]));
    }
  return std::max(acc, 0.0);
}

struct Conv {
  std::string path;
  // One autotuner per (KH, KW, CHANNEL_BLOCKS): those are constexprs.
  std::map<std::tuple<int, int, bool>, tk::Autotuner> tuners;

  tk::Autotuner &tuner(int KH, int KW, bool channelBlocks) {
    auto key = std::tuple{KH, KW, channelBlocks};
    if (auto it = tuners.find(key); it != tuners.end())
      return it->second;
    tk::KernelOptions base;
    base.kernel = "conv2d_bias_relu_kernel";
    // Types only: each launch specialises on its arguments (unit strides,
    // multiples of 16), as Python's @tk.jit does.
    base.signature = "*fp16, *fp16, *fp16, *fp16, i32, i32, i32, i32, i32, i32, i32, i32, i32, "
                     "i32, i32, i32, i32";
    base.constants["KH"] = KH;
    base.constants["KW"] = KW;
    base.constants["CHANNEL_BLOCKS"] = channelBlocks;
    base.constants["GROUP_M"] = 8;
    std::vector<tk::Config> configs;
    for (auto [bm, bn, bk, w, s] : {std::tuple{128, 128, 64, 8, 3},
                                    {128, 64, 64, 4, 4},
                                    {64, 128, 64, 4, 4},
                                    {128, 256, 64, 8, 3},
                                    {64, 64, 64, 4, 4},
                                    {128, 64, 32, 4, 4}})
      configs.push_back(tk::Config({{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}}, w, s));
    tk::AutotuneOptions tuning;
    tuning.key = {"N", "H", "W", "C", "K", "P", "Q", "stride_h", "stride_w", "dil_h", "dil_w"};
    return tuners.emplace(key, tk::Autotuner::fromFile(path, base, configs, tuning)).first->second;
  }
};

// Runs one layer: launch (tuning on the first launch of its shape), check,
// and with `time` the median of 20 launches.
bool runLayer(Conv &conv, const Layer &l, std::mt19937 &rng, bool full, bool time) {
  const int P = l.P(), Q = l.Q();
  const size_t M = size_t(l.N) * size_t(P) * size_t(Q);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const float scale = 1.0f / std::sqrt(float(l.KH * l.KW * l.C));
  Tensors t;
  t.x.resize(size_t(l.N) * size_t(l.H) * size_t(l.W) * size_t(l.C));
  t.w.resize(size_t(l.KH) * size_t(l.KW) * size_t(l.C) * size_t(l.K));
  t.bias.resize(size_t(l.K));
  for (uint16_t &v : t.x)
    v = toHalf(unit(rng));
  for (uint16_t &v : t.w)
    v = toHalf(unit(rng) * scale);
  for (uint16_t &v : t.bias)
    v = toHalf(0.5f * unit(rng));
  tk::DeviceMemory x = tk::DeviceMemory::fromHost(t.x), w = tk::DeviceMemory::fromHost(t.w),
                   bias = tk::DeviceMemory::fromHost(t.bias);
  tk::DeviceMemory y(M * size_t(l.K) * 2);
  // Channel blocks from C = 16; below (the RGB stem, C = 3) the flat walk.
  tk::Autotuner &tuner = conv.tuner(l.KH, l.KW, l.C >= 16);
  auto grid = [&](const tk::Config &c) {
    return tk::Grid(cdiv(int64_t(M), c.intValue("BLOCK_M")) * cdiv(l.K, c.intValue("BLOCK_N")));
  };
  std::vector<tk::Arg> args{x, w,   bias,     y,        l.N,   l.H,   l.W,   l.C,  P,
                            Q, l.K, l.stride, l.stride, l.pad, l.pad, l.dil, l.dil};
  tk::Stream stream;
  tk::Status status = tuner.tryLaunch(grid, args, stream);
  if (!status) {
    std::printf("%-28s launch failed: %s\n", l.name, status.message.c_str());
    return false;
  }
  tk::synchronize();

  // |tk - reference| <= 1e-2 + 1e-2 |reference|: fp32 accumulation, one
  // fp16 rounding of outputs of order 1.
  std::vector<uint16_t> got = y.toHost<uint16_t>();
  double maxErr = 0;
  bool ok = true;
  auto check = [&](size_t m, int k) {
    int q = int(m % size_t(Q)), p = int(m / size_t(Q) % size_t(P)),
        n = int(m / (size_t(P) * size_t(Q)));
    double want = reference(l, t, n, p, q, k);
    double err = std::abs(double(fromHalf(got[m * size_t(l.K) + size_t(k)])) - want);
    maxErr = std::max(maxErr, err);
    ok = ok && err <= 1e-2 + 1e-2 * std::abs(want);
  };
  if (full) {
    for (size_t m = 0; m < M; ++m)
      for (int k = 0; k < l.K; ++k)
        check(m, k);
  } else {
    std::uniform_int_distribution<size_t> pickM(0, M - 1);
    std::uniform_int_distribution<int> pickK(0, l.K - 1);
    for (int i = 0; i < 512; ++i)
      check(pickM(rng), pickK(rng));
  }
  std::printf("%-28s x %dx%dx%dx%d  %d filters %dx%d/%d pad %d dil %d  best {%s}  max err %.2e "
              "(%s)  %s",
              l.name, l.N, l.H, l.W, l.C, l.K, l.KH, l.KW, l.stride, l.pad, l.dil,
              tuner.best(grid, args).str().c_str(), maxErr, full ? "all outputs" : "512 sampled",
              ok ? "ok" : "MISMATCH");
  if (time) {
    double ms = timeMs(
        [&] {
          tuner.launch(grid, stream, x, w, bias, y, l.N, l.H, l.W, l.C, P, Q, l.K, l.stride,
                       l.stride, l.pad, l.pad, l.dil, l.dil);
        },
        20);
    double flops = 2.0 * double(M) * l.K * l.C * l.KH * l.KW;
    std::printf("  launch+sync %.4f ms, %.1f TFLOP/s", ms, flops / (ms * 1e9));
  }
  std::printf("\n");
  return ok;
}

// Ragged layers, every output checked: C and K no multiple of any block.
const Layer kRagged[] = {{"stem-like 7x7/2, C = 3", 2, 37, 41, 3, 24, 7, 7, 2, 3, 1},
                         {"3x3, C = 40, K = 72", 2, 19, 17, 40, 72, 3, 3, 1, 1, 1},
                         {"3x3/2 dilated, C = 130", 1, 23, 25, 130, 100, 3, 3, 2, 2, 2},
                         {"1x1/2, C = 96, K = 136", 3, 15, 15, 96, 136, 1, 1, 2, 0, 1}};
// ResNet-50 layers at batch 32 (bench/conv_bench.py times all of them
// against cuDNN), checked on sampled outputs and timed.
const Layer kResnet[] = {{"resnet50 conv1 7x7/2", 32, 224, 224, 3, 64, 7, 7, 2, 3, 1},
                         {"resnet50 conv2 3x3", 32, 56, 56, 64, 64, 3, 3, 1, 1, 1},
                         {"resnet50 conv3 3x3/2", 32, 56, 56, 128, 128, 3, 3, 2, 1, 1},
                         {"resnet50 conv4 1x1 256->1024", 32, 14, 14, 256, 1024, 1, 1, 1, 0, 1},
                         {"resnet50 conv5 3x3", 32, 7, 7, 512, 512, 3, 3, 1, 1, 1}};

} // namespace

int main(int argc, char **argv) {
  return tutorial::runMain("13-conv2d-bias-relu", TK_TUTORIALS_DIR, argc, argv,
                           [](const std::string &dir, bool small) {
                             Conv conv{dir + "/13-conv2d-bias-relu.tk", {}};
                             std::mt19937 rng(2026);
                             bool ok = true;
                             for (const Layer &l : kRagged)
                               ok = runLayer(conv, l, rng, true, false) && ok;
                             if (!small)
                               for (const Layer &l : kResnet)
                                 ok = runLayer(conv, l, rng, false, true) && ok;
                             return ok;
                           });
}
