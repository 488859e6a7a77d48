"""Kernels as Triton's tutorials write them, with only the imports changed
(`import tk as tl`, `@tl.jit`), launched the way the tutorials launch them."""

import numpy as np

import tk
import tk as tl

RNG = np.random.default_rng(99)


@tl.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def test_triton_softmax_tutorial_kernel():
    n_rows, n_cols = 41, 97
    x = RNG.normal(0, 2, (n_rows, n_cols)).astype(np.float32)
    y = np.empty_like(x)
    BLOCK_SIZE = tk.next_power_of_2(n_cols)
    num_stages = 2
    num_programs = 8
    softmax_kernel[(num_programs, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows,
                                         n_cols, BLOCK_SIZE, num_stages)
    ref = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    tk.testing.assert_close(y, ref / ref.sum(axis=1, keepdims=True), atol=1e-6, rtol=1e-5)


@tl.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def test_triton_layer_norm_tutorial_kernel():
    M, N = 7, 333
    x = RNG.normal(1, 3, (M, N)).astype(np.float16)
    w = RNG.uniform(0.5, 1.5, N).astype(np.float16)
    b = RNG.uniform(-1, 1, N).astype(np.float16)
    y = np.empty_like(x)
    mean = np.empty(M, np.float32)
    rstd = np.empty(M, np.float32)
    _layer_norm_fwd_fused[(M, )](x, y, w, b, mean, rstd, x.strides[0] // 2, N, 1e-5,
                                 BLOCK_SIZE=128, num_warps=8, num_ctas=1)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1, keepdims=True)
    ref = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w + b
    tk.testing.assert_close(mean, mu[:, 0], atol=1e-4, rtol=1e-4)
    tk.testing.assert_close(y, ref, atol=1e-2, rtol=2e-3)
