"""Triton language features as test_core.py uses them, with only the imports
changed, on the interpreter and (marked `gpu`) on the GPU: each result is
checked against a numpy reference."""

import numpy as np
import pytest

import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(18)


@triton.jit
def static_range_step_kernel(Z, N: tl.constexpr, step: tl.constexpr):
    acc = 0
    for i in tl.static_range(0, N, step=step):
        acc += i
    tl.store(Z, acc)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n,step", [(100, 7), (20, 3), (5, 9)])
def test_static_range_step_by_keyword(device, n, step):
    out = np.zeros(1, np.int32)
    launch(static_range_step_kernel, (1,), out, n, step, device=device)
    assert out[0] == sum(range(0, n, step))


@triton.jit
def int8_dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                    OUT: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, out_dtype=OUT)
    tl.store(C + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("out_dtype", [tl.int8, tl.int32, tl.float32])
def test_int8_dot_is_int32_whatever_out_dtype(device, out_dtype):
    # Triton ignores out_dtype for integer operands: the product is int32, so
    # sums far outside int8 survive (K = 64 products of up to 127 * 127).
    M, N, K = 32, 16, 64
    a = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    b = RNG.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    launch(int8_dot_kernel, (1,), a, b, c, M, N, K, out_dtype, device=device)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
    assert np.abs(c).max() > 127
