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


@triton.jit
def nan_kernel(A, B, C, PROPAGATE: tl.constexpr):
    a = tl.load(A + tl.arange(0, 4))
    b = tl.load(B + tl.arange(0, 4))
    tl.store(C + tl.arange(0, 4), tl.maximum(a, b, propagate_nan=PROPAGATE))
    tl.store(C + 4 + tl.arange(0, 4), tl.minimum(a, b, propagate_nan=PROPAGATE))
    tl.store(C + 8 + tl.arange(0, 4), tl.clamp(a, -tl.abs(b), tl.abs(b), propagate_nan=PROPAGATE))
    # relu that keeps NaN, with the enum spelled in the kernel
    tl.store(C + 12 + tl.arange(0, 4), tl.maximum(a, 0.0, propagate_nan=tl.PropagateNan.ALL))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("propagate", [tl.PropagateNan.NONE, tl.PropagateNan.ALL])
def test_propagate_nan(device, dtype, propagate):
    a = np.array([np.nan, 1.5, np.nan, -2.0], dtype)
    b = np.array([3.0, np.nan, np.nan, 0.5], dtype)
    c = np.zeros(16, dtype)
    launch(nan_kernel, (1,), a, b, c, propagate, device=device)
    if propagate == tl.PropagateNan.ALL:
        want_max = np.maximum(a, b)  # numpy's maximum propagates NaN
        want_min = np.minimum(a, b)
        want_clamp = np.array([np.nan, np.nan, np.nan, -0.5], dtype)
    else:
        want_max, want_min = np.fmax(a, b), np.fmin(a, b)
        # a NaN x gives the lower bound, min(max(NaN, lo), hi) = lo; NaN
        # bounds lose to x
        want_clamp = np.array([-3.0, 1.5, np.nan, -0.5], dtype)
    np.testing.assert_array_equal(c[:4], want_max)
    np.testing.assert_array_equal(c[4:8], want_min)
    np.testing.assert_array_equal(c[8:12], want_clamp)
    np.testing.assert_array_equal(c[12:], np.array([np.nan, 1.5, np.nan, 0.0], dtype))


def test_propagate_nan_host_values():
    # Triton's enum values; an IntEnum, so it passes to a kernel as a constexpr.
    assert int(tl.PropagateNan.NONE) == 0 and int(tl.PropagateNan.ALL) == 0xFFFF


@triton.jit
def bad_nan_kernel(A):
    a = tl.load(A + tl.arange(0, 4))
    tl.store(A + tl.arange(0, 4), tl.maximum(a, 0.0, propagate_nan=True))


def test_propagate_nan_misuse():
    with pytest.raises(tl.CompilationError) as e:
        bad_nan_kernel[(1,)](np.zeros(4, np.float32))
    assert ("tk.maximum: propagate_nan must be tk.PropagateNan.NONE or tk.PropagateNan.ALL, "
            "got constexpr True") in str(e.value)


@triton.jit
def item_kernel(X, Z):
    x = tl.load(X + tl.arange(0, 1))
    v = x.item()
    tl.static_assert(len(v.shape) == 0)
    one = tl.full((1, 1), 3, dtype=tl.int32).item()
    tl.store(Z, v * one)


@pytest.mark.parametrize("device", DEVICES)
def test_item(device):
    x = np.array([-0.0 if device == "gpu" else 2.5], np.float32)
    z = np.zeros(1, np.float32)
    launch(item_kernel, (1,), x, z, device=device)
    assert z[0] == x[0] * 3


@triton.jit
def item_bad_kernel(X):
    tl.store(X, tl.load(X + tl.arange(0, 4)).item())


def test_item_misuse():
    with pytest.raises(tl.CompilationError) as e:
        item_bad_kernel[(1,)](np.zeros(4, np.float32))
    assert ".item() needs a one-element tensor, got tensor<4xfp32> (4 elements)" in str(e.value)


@triton.jit
def slice_kernel(Z, XBLOCK: tl.constexpr):
    # test_core's test_slice, and tuple slicing
    data = tl.arange(0, XBLOCK)
    tl.static_assert(data.shape == [XBLOCK])
    t = data[None, :]
    tl.static_assert(t.shape == [1, XBLOCK])
    t = data[None, None:]
    tl.static_assert(t.shape == [1, XBLOCK])
    t = data[None, :None]
    tl.static_assert(t.shape == [1, XBLOCK])
    t = data[None, :, None]
    tl.static_assert(t.shape == [1, XBLOCK, 1])
    t = data[None, None:None, None]
    tl.static_assert(t.shape == [1, XBLOCK, 1])
    t = data[None, ::None]
    tl.static_assert(t.shape[1:] == (XBLOCK,))
    s = (1, 2, 3, 4)
    tl.static_assert(s[1:3] == (2, 3))
    tl.static_assert(s[::-1] == (4, 3, 2, 1))
    tl.static_assert(s[-2:] == (3, 4))
    tl.static_assert(s[:10:2] == (1, 3))
    tl.store(Z + tl.arange(0, XBLOCK), t.reshape(XBLOCK))


@pytest.mark.parametrize("device", DEVICES)
def test_slices(device):
    z = np.zeros(32, np.int32)
    launch(slice_kernel, (1,), z, 32, device=device)
    np.testing.assert_array_equal(z, np.arange(32))


@triton.jit
def index_by_int_kernel(Z):
    x = tl.arange(0, 8)
    tl.store(Z, x[3])


def test_tensor_index_by_value_is_refused():
    with pytest.raises(tl.CompilationError) as e:
        index_by_int_kernel[(1,)](np.zeros(1, np.int32))
    assert "a tensor takes only None and ':' as indices" in str(e.value)


@triton.jit
def split_kernel(X, Z1, Z2, J, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    z1, z2 = tl.split(tl.reshape(x, (N // 2, 2)))
    tl.store(Z1 + tl.arange(0, N // 2), z1)
    tl.store(Z2 + tl.arange(0, N // 2), z2)
    a, b = x.reshape(N // 2, 2).split()
    tl.store(J + tl.arange(0, N), tl.interleave(b, a))
    s1, s2 = tl.split(tl.load(X + tl.arange(0, 2)))
    tl.static_assert(len(s1.shape) == 0)
    tl.store(Z1 + N // 2, s1 + s2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float64])
def test_split_interleave(device, dtype):
    n = 256
    x = RNG.normal(0, 50, n).astype(dtype)
    z1, z2 = np.zeros(n // 2 + 1, dtype), np.zeros(n // 2, dtype)
    j = np.zeros(n, dtype)
    launch(split_kernel, (1,), x, z1, z2, j, n, device=device)
    np.testing.assert_array_equal(z1[:-1], x[0::2])
    np.testing.assert_array_equal(z2, x[1::2])
    np.testing.assert_array_equal(j, np.stack([x[1::2], x[0::2]], axis=-1).reshape(n))
    assert z1[-1] == dtype(x[0] + x[1])


@triton.jit
def join_scalars_kernel(X, Y, Z):
    z = tl.join(tl.load(X), tl.load(Y))
    tl.static_assert(z.shape == [2])
    tl.store(Z + tl.arange(0, 2), z)
    w = tl.interleave(tl.load(Y), tl.load(X))
    tl.static_assert(w.shape == [tl.constexpr(2)])
    tl.store(Z + 2 + tl.arange(0, 2), w)


@pytest.mark.parametrize("device", DEVICES)
def test_join_interleave_scalars(device):
    z = np.zeros(4, np.int32)
    launch(join_scalars_kernel, (1,), np.array([42], np.int32), np.array([100], np.int32), z,
           device=device)
    np.testing.assert_array_equal(z, [42, 100, 100, 42])


@triton.jit
def batched_trans_kernel(X, Y, Z, B: tl.constexpr, M: tl.constexpr, K: tl.constexpr):
    # x is [B, K, M]; tl.trans without dimensions swaps the last two.
    rb = tl.arange(0, B)[:, None, None]
    rk = tl.arange(0, K)[None, :, None]
    rm = tl.arange(0, M)[None, None, :]
    x = tl.load(X + rb * K * M + rk * M + rm)
    xt = tl.trans(x)
    tl.store(Y + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :],
             xt)
    z = tl.dot(xt, x)
    tl.store(Z + rb * M * M + tl.arange(0, M)[None, :, None] * M + rm, z)


@pytest.mark.parametrize("device", DEVICES)
def test_trans_without_dims_swaps_the_last_two(device):
    B, M, K = 2, 16, 32
    x = RNG.integers(-4, 5, (B, K, M)).astype(np.float32)
    y = np.zeros((B, M, K), np.float32)
    z = np.zeros((B, M, M), np.float32)
    launch(batched_trans_kernel, (1,), x, y, z, B, M, K, device=device)
    np.testing.assert_array_equal(y, np.swapaxes(x, 1, 2))
    np.testing.assert_allclose(z, np.swapaxes(x, 1, 2) @ x, rtol=1e-5)


@triton.jit
def multi_batch_dot_kernel(X, Y, Z, BATCH: tl.constexpr, M: tl.constexpr, K: tl.constexpr,
                           N: tl.constexpr, TRANS_B: tl.constexpr):
    # x is [*BATCH, M, K], y is [*BATCH, K, N] (or [*BATCH, N, K] with TRANS_B).
    nb: tl.constexpr = BATCH[0] * BATCH[1] * BATCH[2]
    x = tl.load(X + tl.arange(0, nb * M * K)).reshape([BATCH[0], BATCH[1], BATCH[2], M, K])
    if TRANS_B:
        y = tl.trans(tl.load(Y + tl.arange(0, nb * K * N)).reshape(
            [BATCH[0], BATCH[1], BATCH[2], N, K]))
    else:
        y = tl.load(Y + tl.arange(0, nb * K * N)).reshape([BATCH[0], BATCH[1], BATCH[2], K, N])
    z = tl.dot(x, y)
    tl.store(Z + tl.arange(0, nb * M * N), z.reshape([nb * M * N]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batch", [(1, 2, 2), (2, 1, 4)])
@pytest.mark.parametrize("trans_b", [False, True])
def test_dot_with_several_batch_axes(device, batch, trans_b):
    # Triton's dot of rank 4 and up: one product per index of the batch axes.
    M, K, N = 16, 32, 64
    x = RNG.integers(-4, 5, batch + (M, K)).astype(np.float16)
    y = RNG.integers(-4, 5, batch + ((N, K) if trans_b else (K, N))).astype(np.float16)
    z = np.zeros(batch + (M, N), np.float32)
    launch(multi_batch_dot_kernel, (1,), x, y, z, batch, M, K, N, trans_b, device=device)
    yy = np.swapaxes(y, -1, -2) if trans_b else y
    np.testing.assert_array_equal(z, x.astype(np.float32) @ yy.astype(np.float32))


@triton.jit
def mismatched_batch_dot_kernel(X, Z):
    x = tl.load(X + tl.arange(0, 1024)).reshape([2, 2, 16, 16])
    y = tl.load(X + tl.arange(0, 1024)).reshape([4, 1, 16, 16])
    tl.store(Z + tl.arange(0, 1024), tl.dot(x, y).reshape([1024]))


def test_dot_with_different_batch_axes_is_a_located_error():
    x = np.ones(1024, np.float32)
    with pytest.raises(tl.CompilationError) as e:
        mismatched_batch_dot_kernel[(1,)](x, x)
    assert "tk.dot needs 2-D tensors, or ones of rank 3 and up with the same batch axes" in str(
        e.value), e.value
    assert "test_lang_compat.py" in str(e.value), e.value
