"""Tutorial 3: LayerNorm forward, from Python.

    y = (x - mean(x)) / sqrt(var(x) + eps) * w + b      for each row x

The kernel is tutorials/03-layer-norm.tk's: one program per row of an (M, N)
fp16 matrix, walking the row in BLOCK_SIZE chunks three times (mean,
variance, normalise), statistics in fp32, and writing each row's mean and
1/std for the backward pass.

    python3 tutorials/03-layer-norm.py [--small] [--bench]

It runs on the CPU interpreter until tk's GPU launch path from Python exists;
--bench needs that path.
"""

import os
import sys

import numpy as np

os.environ.setdefault("TK_INTERPRET", "1")  # the GPU launch path follows (issue 6)

import tk  # noqa: E402


@tk.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tk.constexpr):
    row = tk.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tk.zeros([BLOCK_SIZE], dtype=tk.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        a = tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
        _mean += a
    mean = tk.sum(_mean, axis=0) / N
    _var = tk.zeros([BLOCK_SIZE], dtype=tk.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        x = tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
        x = tk.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tk.sum(_var, axis=0) / N
    rstd = 1 / tk.sqrt(var + eps)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tk.load(W + cols, mask=mask)
        b = tk.load(B + cols, mask=mask)
        x = tk.load(X + cols, mask=mask, other=0.0).to(tk.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tk.store(Y + cols, y.to(tk.float16), mask=mask)


def layer_norm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = np.empty_like(x)
    mean = np.empty(M, dtype=np.float32)
    rstd = np.empty(M, dtype=np.float32)
    # Blocks of at most 256 elements, so a row of a few hundred elements is
    # already walked in several chunks (Triton's tutorial caps at 64 KB).
    block = min(256, tk.next_power_of_2(N))
    layer_norm_fwd[(M,)](x, y, weight, bias, mean, rstd, x.strides[0] // x.itemsize, N, eps,
                         BLOCK_SIZE=block)
    return y, mean, rstd


def reference(x, weight, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * weight.astype(np.float64) + bias.astype(np.float64)
    return y, mean[:, 0], 1 / np.sqrt(var[:, 0] + eps)


def main(argv):
    if "--bench" in argv:
        print("--bench times the kernel on a GPU against torch and Triton; tk's GPU launch path "
              "from Python is not available yet (issue 6), so there is nothing to time here.")
        return 0
    M, N = (13, 700) if "--small" in argv else (151, 1543)
    rng = np.random.default_rng(2)
    x = (rng.normal(0.5, 2, (M, N))).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, N).astype(np.float16)
    bias = rng.uniform(-1, 1, N).astype(np.float16)
    eps = 1e-5
    y, mean, rstd = layer_norm(x, weight, bias, eps)
    ref_y, ref_mean, ref_rstd = reference(x, weight, bias, eps)
    tk.testing.assert_close(mean, ref_mean, atol=1e-4, rtol=1e-4)
    tk.testing.assert_close(rstd, ref_rstd, atol=1e-4, rtol=1e-4)
    # y is rounded to fp16: within a couple of fp16 ulps of the fp64 result.
    tk.testing.assert_close(y, ref_y, atol=1e-2, rtol=2e-3)
    diff = float(np.max(np.abs(y.astype(np.float64) - ref_y)))
    print(f"layer norm, {M}x{N} fp16: max |tk - numpy| = {diff:.3g}: OK")
    try:
        import torch
    except ImportError:
        print("torch is not installed: checked against numpy only")
    else:
        t = torch.nn.functional.layer_norm(torch.from_numpy(x).float(), (N,),
                                           torch.from_numpy(weight).float(),
                                           torch.from_numpy(bias).float(), eps)
        tk.testing.assert_close(y, t, atol=1e-2, rtol=2e-3)
        print("matches torch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
