"""A corpus of small kernels in the idioms torch Inductor generates (written
here): 2-D tiled pointwise with y/x masks, persistent and looped reductions
with `[:, None]` shapes and `tl.full([1, 1], ...)` constants, welford
LayerNorm over a transposed read, argmax through a tuple reduction with
indices, a one-tuple scan, indirect indexing with a device assert, and
helpers called through a module (`triton_helpers.maximum`), Python's
remainder through `x.dtype is tl.float32`. Each runs on the
interpreter against numpy on random ragged inputs, and compiles to PTX for
sm_90 (bench/inductor measures tk on the kernels Inductor itself writes)."""

import numpy as np
import pytest

import inductor_helpers_mod as triton_helpers
import tk as triton
import tk.language as tl
from ptx_compile_util import CudaArray
from tk.language.extra import libdevice

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "1")


@triton.jit
def poi_transpose_bias_relu(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel,
                            YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[None, :]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    x1 = xindex
    y0 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + ynumel * x1), xmask & ymask, eviction_policy="evict_last")
    tmp1 = tl.load(in_ptr1 + (x1), xmask, eviction_policy="evict_last")
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1, 1], 0, tl.int32)
    tmp4 = triton_helpers.maximum(tmp3, tmp2)
    tl.store(out_ptr0 + (x1 + xnumel * y0), tmp4, xmask & ymask)


@triton.jit
def per_softmax(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
                R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index + r0_numel * xindex), r0_mask & xmask, other=0.0)
    tmp1 = tl.full([1, 1], 0.5, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = tl.where(r0_mask & xmask, tmp3, float("-inf"))
    tmp6 = triton_helpers.max2(tmp5, 1)[:, None].to(tl.float32)
    tmp7 = libdevice.exp(tmp2 - tmp6)
    tmp8 = tl.broadcast_to(tmp7, [XBLOCK, R0_BLOCK])
    tmp10 = tl.where(r0_mask & xmask, tmp8, 0)
    tmp11 = tl.sum(tmp10, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (r0_index + r0_numel * xindex), tmp7 / tmp11, r0_mask & xmask)


@triton.jit
def red_welford_layer_norm(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
                           R0_BLOCK: tl.constexpr):
    # in_ptr0 is read transposed (column x of a [r0_numel, xnumel] array), the
    # weights along r: the welford accumulators meet loads of two layouts.
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    tmp2_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        tmp0 = tl.load(in_ptr0 + (xindex + xnumel * r0_index), r0_mask & xmask,
                       eviction_policy="evict_last", other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        mean_next, m2_next, weight_next = triton_helpers.welford_reduce(
            tmp1, tmp2_mean, tmp2_m2, tmp2_weight, r0_offset == 0)
        tmp2_mean = tl.where(r0_mask & xmask, mean_next, tmp2_mean)
        tmp2_m2 = tl.where(r0_mask & xmask, m2_next, tmp2_m2)
        tmp2_weight = tl.where(r0_mask & xmask, weight_next, tmp2_weight)
    tmp3, tmp4, tmp5 = triton_helpers.welford(tmp2_mean, tmp2_m2, tmp2_weight, 1)
    tmp2 = tmp3[:, None]
    tmp6 = tmp4[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        tmp8 = tl.load(in_ptr0 + (xindex + xnumel * r0_index), r0_mask & xmask,
                       eviction_policy="evict_first", other=0.0)
        tmp16 = tl.load(in_ptr1 + (r0_index), r0_mask, eviction_policy="evict_last", other=0.0)
        tmp9 = tmp8 - tmp2
        tmp10 = tl.full([1, 1], 1.0, tl.float32) * r0_numel
        tmp13 = (tmp6 / tmp10) + tl.full([1, 1], 1e-05, tl.float32)
        tmp15 = tmp9 * libdevice.rsqrt(tmp13)
        tl.store(out_ptr0 + (r0_index + r0_numel * xindex), tmp15 * tmp16, r0_mask & xmask)


@triton.jit
def per_argmax(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
               R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index + r0_numel * xindex), r0_mask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(r0_mask & xmask, tmp1, float("-inf"))
    tmp4 = tl.broadcast_to(r0_index, tmp3.shape)
    _, tmp5_tmp = triton_helpers.max_with_index(tmp3, tmp4, 1)
    tmp5 = tmp5_tmp[:, None]
    tl.store(out_ptr0 + (xindex), tmp5.to(tl.int64), xmask)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def per_cumsum(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr,
               R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index + r0_numel * xindex), r0_mask & xmask, other=0.0)
    tmp1 = tmp0.to(tl.float32)
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp3, = tl.associative_scan((tmp2,), 1, _add)
    tl.store(out_ptr0 + (r0_index + r0_numel * xindex), tmp3, r0_mask & xmask)


@triton.jit
def poi_embedding(in_ptr0, in_ptr1, out_ptr0, xnumel, VOCAB: tl.constexpr, DIM: tl.constexpr,
                  XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // DIM
    x0 = xindex % DIM
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy="evict_last")
    tmp1 = tl.full([XBLOCK], VOCAB, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < VOCAB)) | ~(xmask), "index out of bounds: 0 <= tmp4 < VOCAB")
    tmp6 = tl.load(in_ptr1 + (x0 + DIM * tmp4), xmask)
    tl.store(out_ptr0 + (xindex), tmp6, xmask)


@triton.jit
def poi_python_remainder(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # Python's %: the sign of the divisor, through a dtype identity test that
    # folds when the kernel is compiled.
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (xindex), xmask)
    tmp3 = tl.full([1], 3.0, tl.float32)
    tmp4 = tmp0 % tmp3
    tmp6 = tmp4 != tl.full([1], 0, tl.int32)
    tmp7 = (libdevice.signbit(tmp4) != 0) if (tmp4).dtype is tl.float32 else tmp4 < 0
    tmp8 = (libdevice.signbit(tmp3) != 0) if (tmp3).dtype is tl.float32 else tmp3 < 0
    tmp10 = tmp6 & (tmp7 != tmp8)
    tl.store(out_ptr0 + (xindex), tl.where(tmp10, tmp4 + tmp3, tmp4), xmask)


def _rows(rows, cols):
    return RNG.standard_normal((rows, cols)).astype(np.float32)


def test_tiled_pointwise_transposes_with_relu_keeping_nan():
    ynumel, xnumel = 45, 70
    x = RNG.standard_normal((xnumel, ynumel)).astype(np.float32)
    x[3, 4] = np.nan
    bias = RNG.standard_normal(xnumel).astype(np.float32)
    out = np.empty((ynumel, xnumel), np.float32)
    grid = (triton.cdiv(xnumel, 32), triton.cdiv(ynumel, 16))
    poi_transpose_bias_relu[grid](x, bias, out, ynumel, xnumel, YBLOCK=16, XBLOCK=32)
    s = (x + bias[:, None]).T
    np.testing.assert_array_equal(out, np.where(np.isnan(s), s, np.maximum(s, 0)))


def test_persistent_softmax():
    x = _rows(37, 100)
    out = np.empty_like(x)
    per_softmax[(triton.cdiv(37, 8),)](x, out, 37, 100, XBLOCK=8, R0_BLOCK=128)
    e = np.exp(0.5 * x.astype(np.float64) - (0.5 * x).max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_looped_welford_layer_norm_over_a_transposed_read():
    r0_numel, xnumel = 203, 21  # r is looped in blocks of 64, ragged
    x = (RNG.standard_normal((r0_numel, xnumel)) * 2 + 1).astype(np.float32)
    w = RNG.standard_normal(r0_numel).astype(np.float32)
    out = np.empty((xnumel, r0_numel), np.float32)
    red_welford_layer_norm[(triton.cdiv(xnumel, 4),)](x, w, out, xnumel, r0_numel,
                                                      XBLOCK=4, R0_BLOCK=64)
    t = x.T.astype(np.float64)
    ref = (t - t.mean(1, keepdims=True)) / np.sqrt(t.var(1, keepdims=True) + 1e-5) * w
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_argmax_through_a_tuple_reduction_with_indices():
    x = np.round(_rows(29, 90) * 2) / 2  # ties: the first index wins
    x[5, 40] = np.nan  # NaN counts as the largest
    out = np.empty(29, np.int64)
    per_argmax[(triton.cdiv(29, 4),)](x, out, 29, 90, XBLOCK=4, R0_BLOCK=128)
    np.testing.assert_array_equal(out, np.argmax(np.where(np.isnan(x), np.inf, x), 1))


def test_one_tuple_scan():
    x = _rows(13, 50)
    out = np.empty_like(x)
    per_cumsum[(triton.cdiv(13, 2),)](x, out, 13, 50, XBLOCK=2, R0_BLOCK=64)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float64), 1), rtol=1e-5, atol=1e-5)


def test_indirect_indexing_with_negative_indices_and_an_assert():
    vocab, dim, n = 50, 24, 7
    table = RNG.standard_normal((vocab, dim)).astype(np.float32)
    ids = RNG.integers(-vocab, vocab, n).astype(np.int32)
    out = np.empty((n, dim), np.float32)
    poi_embedding[(triton.cdiv(n * dim, 64),)](ids, table, out, n * dim, VOCAB=vocab, DIM=dim,
                                               XBLOCK=64)
    np.testing.assert_array_equal(out, table[ids % vocab])
    ids[3] = vocab  # out of range: the assert stops the launch
    with pytest.raises(triton.InterpreterError, match="index out of bounds"):
        poi_embedding[(triton.cdiv(n * dim, 64),)](ids, table, out, n * dim, VOCAB=vocab,
                                                   DIM=dim, XBLOCK=64)


def test_python_remainder_through_a_dtype_identity_test():
    x = (RNG.standard_normal(300) * 10).astype(np.float32)
    out = np.empty_like(x)
    poi_python_remainder[(triton.cdiv(300, 128),)](x, out, 300, XBLOCK=128)
    np.testing.assert_allclose(out, np.remainder(x, np.float32(3)), rtol=1e-5, atol=1e-5)


@triton.jit
def per_int64_max(in_ptr0, out_ptr0, r0_numel, R0_BLOCK: tl.constexpr):
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index), r0_mask, other=0)
    tmp1 = tl.broadcast_to(tmp0, [1, R0_BLOCK])
    tmp3 = tl.where(r0_mask, tmp1, -9223372036854775808)
    tmp4 = triton_helpers.max2(tmp3, 1)[:, None].to(tl.int64)
    tl.store(out_ptr0 + (tl.full([1, 1], 0, tl.int32)), tmp4, None)


def test_int64_minimum_literal_as_a_reduction_identity():
    x = RNG.integers(-(1 << 62), -(1 << 40), 90).astype(np.int64)
    out = np.zeros(1, np.int64)
    per_int64_max[(1,)](x, out, 90, R0_BLOCK=128)
    assert out[0] == x.max()


def test_an_int_literal_beyond_64_bits_is_a_located_error(tmp_path):
    import importlib.util

    path = tmp_path / "too_big.py"
    path.write_text("import tk\n\n@tk.jit\ndef k(Y):\n    tk.store(Y, 9223372036854775808)\n")
    spec = importlib.util.spec_from_file_location("too_big", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(triton.CompilationError,
                       match=r"too_big.py:5:\d+: error: integer literal 9223372036854775808 does "
                             r"not fit in 64 bits"):
        module.k[(1,)](np.zeros(1, np.int64))


_PTX_CASES = [
    (poi_transpose_bias_relu, 3, (45, 70), dict(YBLOCK=16, XBLOCK=32)),
    (per_softmax, 2, (37, 100), dict(XBLOCK=8, R0_BLOCK=128)),
    (red_welford_layer_norm, 3, (21, 203), dict(XBLOCK=4, R0_BLOCK=64)),
    (per_argmax, 2, (29, 90), dict(XBLOCK=4, R0_BLOCK=128)),
    (per_cumsum, 2, (13, 50), dict(XBLOCK=2, R0_BLOCK=64)),
    (poi_embedding, 3, (168,), dict(VOCAB=50, DIM=24, XBLOCK=64)),
    (poi_python_remainder, 2, (300,), dict(XBLOCK=128)),
]


@pytest.mark.parametrize("kernel, pointers, ints, constants", _PTX_CASES,
                         ids=[c[0].__name__ for c in _PTX_CASES])
def test_compiles_to_ptx(kernel, pointers, ints, constants, ptx_compile):
    types = {"per_argmax": ["<f4", "<i8"], "poi_embedding": ["<i4", "<f4", "<f4"]}
    typestrs = types.get(kernel.__name__, ["<f4"] * pointers)
    args = [CudaArray((i + 1) << 20, t) for i, t in enumerate(typestrs)] + list(ints)
    ptx = kernel.warmup(*args, grid=(1,), **constants).asm["ptx"]
    assert f".entry {kernel.__name__}" in ptx
