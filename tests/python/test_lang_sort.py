"""tk.sort and tk.topk (and x.sort(), x.topk()) on the interpreter and
(marked `gpu`) on the GPU: against numpy's sort on ordinary data, and bit for
bit against an emulation of Triton's bitonic network (written here from its
definition) on data with NaN, signed zeros and repeats, where the network's
choices show."""

import numpy as np
import pytest

import tk
import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(7)


def network(x, descending, k=None):
    """Triton's network on the last axis of `x` (numpy), step for step: the
    swap rule `(x > y) != (flip ^ right)` on flat positions."""
    shape = x.shape
    n = shape[-1]
    log_n = n.bit_length() - 1
    log_k = log_n if k is None else k.bit_length() - 1
    h = x.reshape(-1).copy()

    def bit(m, i):
        return ((np.arange(m) >> i) & 1).astype(bool)

    def merge(h, stage, order):
        flip = bit(h.size, stage) if order == 2 else np.full(h.size, bool(order))
        for i in range(stage - 1, -1, -1):
            y = h[np.arange(h.size) ^ (1 << i)]
            with np.errstate(invalid="ignore"):
                h = np.where((h > y) != (flip ^ bit(h.size, i)), y, h)
        return h

    last = 1 if descending else 0
    for s in range(1, log_k + 1):
        h = merge(h, s, 2 if s < log_n else last)
    for s in range(log_k + 1, log_n + 1):
        pairs = h.reshape(-1, 2, 1 << log_k)
        a, b = pairs[:, 0], pairs[:, 1]
        # max/min that NaN loses (fmax/fmin), as tk.max and Triton's tl.max
        h = (np.fmax(a, b) if descending else np.fmin(a, b)).reshape(-1)
        h = merge(h, log_k, 2 if s < log_n else last)
    return h.reshape(shape[:-1] + (1 << log_k,))


@triton.jit
def sort_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr, AS_METHOD: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    if AS_METHOD:
        y = x.sort(descending=DESC)
    else:
        y = tl.sort(x, descending=DESC)
    tl.store(Z + offs, y)


@triton.jit
def topk_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Z + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("m,n", [(1, 2), (4, 32), (8, 128), (2, 256)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy(device, dtype, m, n, descending):
    if np.dtype(dtype).kind == "f":
        x = RNG.normal(0, 100, (m, n)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(max(info.min, -1000), min(info.max, 1000), (m, n)).astype(dtype)
    x[0, 0] = x[0, -1]  # a repeated key
    z = np.zeros_like(x)
    launch(sort_kernel, (1,), x, z, m, n, descending, n == 32, device=device)
    want = np.sort(x, axis=-1)
    np.testing.assert_array_equal(z, want[:, ::-1] if descending else want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_and_signed_zeros_follow_the_network(device, descending):
    m, n = 4, 64
    x = RNG.normal(0, 3, (m, n)).astype(np.float32)
    x[RNG.random((m, n)) < 0.1] = np.nan
    x[RNG.random((m, n)) < 0.1] = 0.0
    x[RNG.random((m, n)) < 0.1] = -0.0
    z = np.zeros_like(x)
    launch(sort_kernel, (1,), x, z, m, n, descending, False, device=device)
    np.testing.assert_array_equal(z.view(np.int32), network(x, descending).view(np.int32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n,k", [(8, 4), (64, 8), (128, 1), (32, 32)])
def test_topk(device, n, k):
    m = 4
    x = RNG.permutation(m * n).reshape(m, n).astype(np.float32) - 50
    z = np.zeros((m, k), np.float32)
    launch(topk_kernel, (1,), x, z, m, n, k, device=device)
    np.testing.assert_array_equal(z, -np.sort(-x, axis=-1)[:, :k])
    x[RNG.random((m, n)) < 0.2] = np.nan
    launch(topk_kernel, (1,), x, z, m, n, k, device=device)
    np.testing.assert_array_equal(z.view(np.int32), network(x, True, k).view(np.int32))


def test_network_emulation_sorts():
    x = RNG.normal(size=(3, 16)).astype(np.float32)
    np.testing.assert_array_equal(network(x, False), np.sort(x, axis=-1))
    np.testing.assert_array_equal(network(x, True, 4), -np.sort(-x, axis=-1)[:, :4])


@triton.jit
def sort_dim0_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Z + offs, tl.sort(tl.load(X + offs), dim=0))


@pytest.mark.parametrize("device", DEVICES)
def test_sort_other_dimension(device):
    x = RNG.normal(size=(16, 8)).astype(np.float32)
    z = np.zeros_like(x)
    launch(sort_dim0_kernel, (1,), x, z, 16, 8, device=device)
    np.testing.assert_array_equal(z, np.sort(x, axis=0))


@triton.jit
def bad_topk_kernel(X, K: tl.constexpr):
    x = tl.load(X + tl.arange(0, 16))
    top = tl.topk(x, K)
    tl.store(X + tl.arange(0, top.shape[0]), top)


@pytest.mark.parametrize("k,why", [(3, "got 3"), (32, "got 32")])
def test_topk_misuse(k, why):
    with pytest.raises(tk.CompilationError) as e:
        bad_topk_kernel[(1,)](np.zeros(16, np.float32), k)
    assert "tk.topk: k must be a power of two no larger than the size of dimension 0 (16), " + why \
        in str(e.value)
