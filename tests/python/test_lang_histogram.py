"""tk.histogram as Triton's tl.histogram: int32 counts of the values
0 .. num_bins-1 of a 1-D integer tensor, with a mask; interpreter and (marked
`gpu`) GPU against numpy's bincount."""

import numpy as np
import pytest

import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(2712)


@triton.jit
def histogram_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, LIMIT, MASKED: tl.constexpr):
    offs = tl.arange(0, M)
    x = tl.load(X + offs)
    if MASKED:
        z = tl.histogram(x, N, mask=offs < LIMIT)
    else:
        z = x.histogram(N)
    tl.store(Z + tl.arange(0, N), z)


def expected(x, bins, limit=None):
    kept = x if limit is None else x[:limit]
    kept = kept[(kept >= 0) & (kept < bins)]
    return np.bincount(kept.astype(np.int64), minlength=bins).astype(np.int32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m,bins", [(2048, 2), (1024, 8), (1024, 128), (256, 512), (64, 512), (32, 512), (8, 2)])
@pytest.mark.parametrize("masked", [False, True])
def test_histogram_counts(device, m, bins, masked):
    # Values a little outside [0, bins) too: they fall in no bin.
    x = RNG.integers(-2, bins + 2, m).astype(np.int32)
    limit = int(RNG.integers(1, m)) if masked else m
    z = np.full(bins, -7, np.int32)
    launch(histogram_kernel, (1,), x, z, m, bins, limit, masked, device=device)
    np.testing.assert_array_equal(z, expected(x, bins, limit if masked else None))


@triton.jit
def narrow_histogram_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    z = tl.histogram(tl.load(X + tl.arange(0, M)), N)
    # The result broadcasts like any [N] tensor.
    z2 = z[None, :] + tl.full([4, N], 1, dtype=tl.int32)
    tl.store(Z + tl.arange(0, 4)[:, None] * N + tl.arange(0, N)[None, :], z2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("np_dtype", [np.int8, np.uint8, np.int16, np.int64])
def test_histogram_of_narrow_and_wide_integers(device, np_dtype):
    lo = -3 if np.issubdtype(np_dtype, np.signedinteger) else 0
    x = RNG.integers(lo, 70, 128).astype(np_dtype)
    z = np.zeros((4, 64), np.int32)
    launch(narrow_histogram_kernel, (1,), x, z, 128, 64, device=device)
    np.testing.assert_array_equal(z, np.broadcast_to(expected(x, 64) + 1, (4, 64)))
