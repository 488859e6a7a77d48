"""Tutorial 13: Conv2d + bias + ReLU fused in one kernel, from Python.

    y = relu(conv2d(x, w, stride, padding, dilation) + bias)

The kernel is tutorials/13-conv2d-bias-relu.tk's (its header explains the
implicit GEMM, the layouts and the two ways it walks the reduction), loaded
from that file. Layouts: x NHWC (N, H, W, C), w (KH, KW, C, K) (torch's
(K, C, KH, KW) filter as `w.permute(2, 3, 1, 0)`), bias (K,), y NHWC
(N, P, Q, K); all fp16, accumulated in fp32.

`conv2d_bias_relu(x, w, bias, stride, padding, dilation)` launches it on
torch CUDA tensors or (on the interpreter) numpy arrays, autotuned over
CONFIGS keyed by the layer's shape; `config=` launches one config untuned.
CHANNEL_BLOCKS (BLOCK_K channels of one filter tap at a time) is chosen when
C >= 16, the flat walk over the KH * KW * C patch values otherwise.

    python3 tutorials/13-conv2d-bias-relu.py [--small] [--bench [--out DIR]]

On a machine with a GPU (torch with CUDA) it checks against
torch.nn.functional.conv2d + bias + relu in float32 on ragged layers (C and
K no multiple of any block, the 7x7/2 RGB stem, strided, padded and dilated
filters); elsewhere, or with TK_INTERPRET=1, on the CPU interpreter against
numpy in float64 at small sizes. --bench (GPU) prints TFLOP/s of tk and
cuDNN (F.conv2d on channels_last fp16, then bias and relu) on a few of
ResNet-50's layers; bench/conv_bench.py times all of them.
"""

import importlib.machinery
import importlib.util
import os
import pathlib
import sys

import numpy as np

import tk


def _load_kernels():
    path = pathlib.Path(__file__).resolve().with_name("13-conv2d-bias-relu.tk")
    loader = importlib.machinery.SourceFileLoader("conv2d_bias_relu_tk", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


kernels = _load_kernels()

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages). The first is the
# interpreter's (it does not time configs).
CONFIGS = [
    tk.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w,
              num_stages=s)
    for bm, bn, bk, w, s in ((128, 128, 64, 8, 3), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
                             (128, 256, 64, 8, 3), (64, 64, 64, 4, 4), (128, 64, 32, 4, 4))
]
KEY = ["N", "H", "W", "C", "K", "P", "Q", "stride_h", "stride_w", "dil_h", "dil_w", "KH", "KW"]

conv_tuned = tk.autotune(configs=CONFIGS, key=KEY)(kernels.conv2d_bias_relu_kernel)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def out_size(size, kernel, stride, pad, dil):
    return (size + 2 * pad - dil * (kernel - 1) - 1) // stride + 1


def conv2d_bias_relu(x, w, bias, stride=1, padding=0, dilation=1, config=None):
    """relu(conv2d(x, w) + bias) of NHWC x (N, H, W, C) and w (KH, KW, C, K),
    fp16, as an NHWC (N, P, Q, K) fp16 array: torch CUDA tensors, or numpy
    arrays on the interpreter. `config`: a dict of BLOCK_M, BLOCK_N, BLOCK_K,
    GROUP_M, num_warps, num_stages launched as is; None autotunes."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    N, H, W, C = x.shape
    KH, KW, C_w, K = w.shape
    if C_w != C or tuple(bias.shape) != (K,):
        raise ValueError(f"conv2d_bias_relu: x has {C} channels, w is {tuple(w.shape)} "
                         f"(KH, KW, C, K), bias {tuple(bias.shape)}")
    P, Q = out_size(H, KH, sh, ph, dh), out_size(W, KW, sw, pw, dw)
    if P <= 0 or Q <= 0:
        raise ValueError(f"conv2d_bias_relu: a {KH}x{KW} filter leaves no output on {H}x{W}")
    if isinstance(x, np.ndarray):
        y = np.empty((N, P, Q, K), dtype=np.float16)
    else:
        import torch

        x, w = x.contiguous(), w.contiguous()
        y = torch.empty((N, P, Q, K), device=x.device, dtype=torch.float16)
    args = (x, w, bias, y, N, H, W, C, P, Q, K, sh, sw, ph, pw, dh, dw)
    shape = dict(KH=KH, KW=KW, CHANNEL_BLOCKS=C >= 16)
    M = N * P * Q
    if config is None:
        grid = lambda meta: (  # noqa: E731
            tk.cdiv(M, meta["BLOCK_M"]) * tk.cdiv(K, meta["BLOCK_N"]),)
        conv_tuned[grid](*args, **shape)
    else:
        grid = (tk.cdiv(M, config["BLOCK_M"]) * tk.cdiv(K, config["BLOCK_N"]),)
        kernels.conv2d_bias_relu_kernel[grid](*args, **shape, **config)
    return y


def reference(x, w, bias, stride, padding, dilation):
    """relu(conv2d + bias) in float64 with numpy, NHWC in and out."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    N, H, W, C = x.shape
    KH, KW, _, K = w.shape
    P, Q = out_size(H, KH, sh, ph, dh), out_size(W, KW, sw, pw, dw)
    xp = np.zeros((N, H + 2 * ph, W + 2 * pw, C))
    xp[:, ph:ph + H, pw:pw + W] = x
    y = np.zeros((N, P, Q, K)) + bias.astype(np.float64)
    for r in range(KH):
        for s in range(KW):
            patch = xp[:, r * dh:r * dh + sh * (P - 1) + 1:sh, s * dw:s * dw + sw * (Q - 1) + 1:sw]
            y += patch @ w[r, s].astype(np.float64)
    return np.maximum(y, 0.0)


# (N, H, W, C, K, KH, KW, stride, padding, dilation): C and K no multiple of
# the blocks, the RGB stem's C = 3 (the flat walk), strides, padding, dilation.
INTERPRETER_LAYERS = [
    (2, 9, 11, 3, 10, 7, 7, 2, 3, 1),
    (2, 7, 6, 20, 24, 3, 3, 1, 1, 1),
    (1, 10, 9, 18, 9, 3, 3, 2, 2, 2),
    (3, 5, 5, 33, 17, 1, 1, 1, 0, 1),
]
# Small blocks keep the interpreter quick and leave partial tiles on every side.
INTERPRETER_CONFIG = dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=16, GROUP_M=2, num_warps=4,
                          num_stages=2)


def random_layer(rng, N, H, W, C, K, KH, KW):
    """fp16 x, w, bias with outputs of order 1 (w scaled by 1/sqrt(fan-in))."""
    x = rng.uniform(-1, 1, (N, H, W, C)).astype(np.float16)
    w = (rng.uniform(-1, 1, (KH, KW, C, K)) / np.sqrt(KH * KW * C)).astype(np.float16)
    bias = rng.uniform(-0.5, 0.5, K).astype(np.float16)
    return x, w, bias


def check_interpreter(small):
    rng = np.random.default_rng(13)
    layers = INTERPRETER_LAYERS[:2] if small else INTERPRETER_LAYERS
    for N, H, W, C, K, KH, KW, stride, pad, dil in layers:
        x, w, bias = random_layer(rng, N, H, W, C, K, KH, KW)
        want = reference(x, w, bias, stride, pad, dil)
        # Both walks of the reduction, whichever C would pick.
        for channel_blocks in (False, True):
            shape = dict(KH=KH, KW=KW, CHANNEL_BLOCKS=channel_blocks)
            P, Q = want.shape[1:3]
            y = np.empty((N, P, Q, K), dtype=np.float16)
            c = INTERPRETER_CONFIG
            grid = (tk.cdiv(N * P * Q, c["BLOCK_M"]) * tk.cdiv(K, c["BLOCK_N"]),)
            kernels.conv2d_bias_relu_kernel[grid](x, w, bias, y, N, H, W, C, P, Q, K, stride,
                                                  stride, pad, pad, dil, dil, **shape, **c)
            # fp32 accumulation, one fp16 rounding of outputs of order 1.
            tk.testing.assert_close(y, want, atol=1e-2, rtol=1e-2)
            err = float(np.abs(y.astype(np.float64) - want).max())
            walk = "channel blocks" if channel_blocks else "flat"
            print(f"conv2d+bias+relu on the interpreter, x {N}x{H}x{W}x{C} (NHWC), {K} filters "
                  f"{KH}x{KW} stride {stride} pad {pad} dilation {dil} ({walk}): "
                  f"max |tk - numpy| = {err:.3g}: OK")
    # The launcher (autotuned: the first config here) on one layer.
    x, w, bias = random_layer(rng, 1, 8, 8, 3, 5, 3, 3)
    tk.testing.assert_close(conv2d_bias_relu(x, w, bias, 1, 1), reference(x, w, bias, 1, 1, 1),
                            atol=1e-2, rtol=1e-2)
    print(f"conv2d_bias_relu (autotuned, config {conv_tuned.best_config}) on the interpreter: OK")


def torch_reference(x, w, bias, stride, padding, dilation):
    """The float32 reference: F.conv2d + bias + relu on NCHW, returned NHWC."""
    import torch.nn.functional as F

    y = F.conv2d(x.permute(0, 3, 1, 2).float(), w.permute(3, 2, 0, 1).float(), bias.float(),
                 stride=stride, padding=padding, dilation=dilation)
    return F.relu(y).permute(0, 2, 3, 1)


# Ragged GPU layers (N, H, W, C, K, KH, KW, stride, padding, dilation).
GPU_LAYERS = [
    (4, 57, 61, 3, 64, 7, 7, 2, 3, 1),      # the stem, odd image size
    (3, 30, 29, 40, 72, 3, 3, 1, 1, 1),     # C, K no multiple of the blocks
    (2, 33, 35, 130, 100, 3, 3, 2, 1, 1),   # strided
    (2, 20, 21, 64, 96, 3, 3, 1, 2, 2),     # dilated
    (5, 14, 14, 256, 200, 1, 1, 1, 0, 1),   # 1x1
    (5, 15, 15, 96, 136, 1, 1, 2, 0, 1),    # 1x1 strided (a downsample)
]


def check_gpu(small):
    import torch

    torch.manual_seed(13)
    layers = GPU_LAYERS[:3] if small else GPU_LAYERS
    for N, H, W, C, K, KH, KW, stride, pad, dil in layers:
        x = torch.rand((N, H, W, C), device="cuda", dtype=torch.float16) * 2 - 1
        w = ((torch.rand((KH, KW, C, K), device="cuda") * 2 - 1) / (KH * KW * C) ** 0.5).half()
        bias = (torch.rand(K, device="cuda") - 0.5).half()
        want = torch_reference(x, w, bias, stride, pad, dil)
        for config in ((None,) if small else (None, CONFIGS[4].all_kwargs())):
            y = conv2d_bias_relu(x, w, bias, stride, pad, dil, config=config)
            tk.testing.assert_close(y.float(), want, atol=1e-2, rtol=1e-2)
            err = float((y.float() - want).abs().max())
            how = "autotuned" if config is None else "64x64x64"
            print(f"conv2d+bias+relu on the GPU ({how}), x {N}x{H}x{W}x{C} (NHWC), {K} filters "
                  f"{KH}x{KW} stride {stride} pad {pad} dilation {dil}: "
                  f"max |tk - torch| = {err:.3g}: OK")
    print(f"autotune: config for the last layer {conv_tuned.best_config}")


# A few of ResNet-50's layers at batch 32 (bench/conv_bench.py has them all):
# (name, H, C, K, kernel, stride).
BENCH_LAYERS = [("stem 7x7/2", 224, 3, 64, 7, 2), ("conv2 3x3", 56, 64, 64, 3, 1),
                ("conv3 3x3/2", 56, 128, 128, 3, 2), ("conv4 1x1", 14, 256, 1024, 1, 1),
                ("conv5 3x3", 7, 512, 512, 3, 1)]


def layer_tensors(batch, H, C, K, KS, device="cuda"):
    """Random NHWC fp16 x, (KH, KW, C, K) w, bias of one square layer, and
    the same as torch's channels_last NCHW input and (K, C, KH, KW) filter
    (the same memory, cuDNN's layout)."""
    import torch

    x = torch.randn((batch, H, H, C), device=device, dtype=torch.float16)
    w = (torch.randn((KS, KS, C, K), device=device) / (KS * KS * C) ** 0.5).half()
    bias = torch.randn(K, device=device, dtype=torch.float16)
    x_nchw = x.permute(0, 3, 1, 2)  # channels_last: x's memory, NCHW's shape
    w_torch = w.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    return x, w, bias, x_nchw, w_torch


def benchmark(small):
    """TFLOP/s of tk and cuDNN (F.conv2d on channels_last fp16 + bias + relu)
    at batch 32 (8 with small)."""
    import torch.nn.functional as F

    layers = BENCH_LAYERS[:3] if small else BENCH_LAYERS
    batch = 8 if small else 32

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["layer"], x_vals=list(range(len(layers))), line_arg="provider",
        line_vals=["tk", "torch"], line_names=["tk", "cuDNN + bias + relu"], ylabel="TFLOP/s",
        plot_name="13-conv2d-bias-relu", args={}))
    def run(layer, provider):
        _, H, C, K, KS, stride = layers[layer]
        x, w, bias, x_nchw, w_torch = layer_tensors(batch, H, C, K, KS)
        pad = KS // 2
        if provider == "tk":
            fn = lambda: conv2d_bias_relu(x, w, bias, stride, pad)  # noqa: E731
        else:
            fn = lambda: F.relu(F.conv2d(x_nchw, w_torch, stride=stride, padding=pad)  # noqa
                                + bias[None, :, None, None])
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        P = out_size(H, KS, stride, pad, 1)
        return 2 * batch * P * P * K * C * KS * KS / ms * 1e-9

    return run


def bench(small, out_dir):
    layers = BENCH_LAYERS[:3] if small else BENCH_LAYERS
    print("layers: " + ", ".join(f"{i} = {layer[0]}" for i, layer in enumerate(layers)))
    benchmark(small).run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/13-conv2d-bias-relu.png")


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        if not gpu:
            print("--bench times the kernel on a GPU against cuDNN (torch); there is no GPU "
                  "launch here (no CUDA device, or TK_INTERPRET=1), so nothing to time "
                  "(bench/conv_bench.py times every ResNet-50 layer).")
            return 0
        bench(small, argv[argv.index("--out") + 1] if "--out" in argv else ".")
        return 0
    if gpu:
        check_gpu(small)
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    check_interpreter(small)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
