"""tk.gather as Triton's tl.gather (torch.gather's contract): along `axis`,
out[..., i, ...] = src[..., index[..., i, ...], ...], the result in index's
shape and src's dtype. Random data of odd sizes loaded into power-of-two
blocks with masks, on the interpreter and (marked `gpu`) the GPU, against
numpy's take_along_axis; the located errors of bad calls."""

import numpy as np
import pytest

import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(6384)


def random_values(shape, np_dtype):
    if np.issubdtype(np_dtype, np.floating):
        return RNG.standard_normal(shape).astype(np_dtype)
    if np_dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(np_dtype)
    return RNG.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(np_dtype)


@triton.jit
def gather_2d(S, I, O, src_rows, src_cols, idx_rows, idx_cols, AXIS: tl.constexpr,
              SR: tl.constexpr, SC: tl.constexpr, IR: tl.constexpr, IC: tl.constexpr,
              METHOD: tl.constexpr):
    r = tl.arange(0, SR)[:, None]
    c = tl.arange(0, SC)[None, :]
    src = tl.load(S + r * src_cols + c, mask=(r < src_rows) & (c < src_cols), other=0)
    ri = tl.arange(0, IR)[:, None]
    ci = tl.arange(0, IC)[None, :]
    m = (ri < idx_rows) & (ci < idx_cols)
    idx = tl.load(I + ri * idx_cols + ci, mask=m, other=0)
    if METHOD:
        out = src.gather(idx, AXIS)
    else:
        out = tl.gather(src, idx, AXIS)
    tl.store(O + ri * idx_cols + ci, out, mask=m)


def block(n):
    return triton.next_power_of_2(n)


def run_2d(device, src, idx, axis, method=False):
    out = np.zeros(idx.shape, src.dtype)
    sr, sc = src.shape
    ir, ic = idx.shape
    launch(gather_2d, (1,), src, idx, out, sr, sc, ir, ic, axis, block(sr), block(sc), block(ir),
           block(ic), method, device=device)
    return out


# The shapes of Triton's test_gather (test_core.py), whole blocks, no masks.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("src_shape,idx_shape,axis", [([32], [64], 0), ([4, 4], [8, 4], 0),
                                                      ([128, 64], [256, 64], 0),
                                                      ([128, 64], [128, 128], 1)])
def test_gather_triton_shapes(device, src_shape, idx_shape, axis):
    src = random_values(src_shape, np.float32)
    idx = RNG.integers(0, src_shape[axis], idx_shape).astype(np.int64)
    if len(src_shape) == 1:
        out = np.zeros(idx_shape, np.float32)
        launch(gather_1d, (1,), src, idx, out, src_shape[0], idx_shape[0], axis, src_shape[0],
               idx_shape[0], device=device)
    else:
        out = run_2d(device, src, idx, axis)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("src_len,idx_len,other", [(13, 29, 7), (40, 5, 3), (64, 64, 1),
                                                   (3, 100, 17), (128, 256, 64)])
def test_gather_2d_ragged(device, axis, src_len, idx_len, other):
    # src is src_len along the axis, idx is idx_len; both `other` across it.
    src_shape = (src_len, other) if axis == 0 else (other, src_len)
    idx_shape = (idx_len, other) if axis == 0 else (other, idx_len)
    src = random_values(src_shape, np.float32)
    idx = RNG.integers(0, src_len, idx_shape).astype(np.int32)
    out = run_2d(device, src, idx, axis)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("np_dtype", [np.float16, np.float64, np.int8, np.int64, np.uint16,
                                      np.bool_])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int16, np.uint8])
def test_gather_2d_dtypes(device, np_dtype, index_dtype):
    src = random_values((9, 21), np_dtype)
    idx = RNG.integers(0, 21, (9, 11)).astype(index_dtype)
    out = run_2d(device, src, idx, 1)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx.astype(np.int64), 1))


@pytest.mark.parametrize("device", DEVICES)
def test_gather_method_form(device):
    src = random_values((6, 30), np.float32)
    idx = RNG.integers(0, 6, (17, 30)).astype(np.int32)
    out = run_2d(device, src, idx, 0, method=True)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, 0))


@triton.jit
def gather_1d(S, I, O, src_len, idx_len, AXIS: tl.constexpr, SN: tl.constexpr,
              IN: tl.constexpr):
    s = tl.arange(0, SN)
    src = tl.load(S + s, mask=s < src_len, other=0)
    i = tl.arange(0, IN)
    idx = tl.load(I + i, mask=i < idx_len, other=0)
    tl.store(O + i, tl.gather(src, idx, AXIS), mask=i < idx_len)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("src_len,idx_len", [(31, 63), (77, 9), (1, 5), (1000, 700)])
@pytest.mark.parametrize("np_dtype", [np.float32, np.int32, np.float16])
@pytest.mark.parametrize("axis", [0, -1])
def test_gather_1d(device, src_len, idx_len, np_dtype, axis):
    src = random_values(src_len, np_dtype)
    idx = RNG.integers(0, src_len, idx_len).astype(np.int32)
    out = np.zeros(idx_len, np_dtype)
    launch(gather_1d, (1,), src, idx, out, src_len, idx_len, axis, block(src_len),
           block(idx_len), device=device)
    np.testing.assert_array_equal(out, src[idx])


@triton.jit
def gather_3d(S, I, O, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, K: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    k = tl.arange(0, K)[None, :, None]
    src = tl.load(S + a * B * C + b * C + c)
    idx = tl.load(I + a * K * C + k * C + c)
    tl.store(O + a * K * C + k * C + c, tl.gather(src, idx, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_gather_3d_middle_axis(device):
    src = random_values((4, 8, 16), np.float32)
    idx = RNG.integers(0, 8, (4, 32, 16)).astype(np.int32)
    out = np.zeros(idx.shape, np.float32)
    launch(gather_3d, (1,), src, idx, out, 4, 8, 16, 32, device=device)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, 1))


@triton.jit
def gather_shifted(S, O, N: tl.constexpr, SHIFT):
    i = tl.arange(0, N)
    src = tl.load(S + i)
    tl.store(O + i, tl.gather(src, i + SHIFT, 0))


def test_gather_out_of_range_index_is_an_interpreter_error():
    src = random_values(16, np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(triton.InterpreterError, match=r"index 16 of tk.gather at position \[15\] is out of "
                       r"range for axis 0 of the source \[16\] \(valid: 0 to 15\)"):
        gather_shifted[(1,)](src, out, 16, 1)
    # In range, the same kernel runs.
    gather_shifted[(1,)](src, out, 16, 0)
    np.testing.assert_array_equal(out, src)


@triton.jit
def bad_gather(S, I, O, CASE: tl.constexpr):
    r = tl.arange(0, 8)
    src2 = tl.load(S + r[:, None] * 8 + r[None, :])
    if CASE == "rank":
        out = tl.gather(src2, r, 0)
    elif CASE == "shape":
        idx = tl.load(I + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])
        out = tl.gather(src2, idx, 0)
    elif CASE == "float":
        out = tl.gather(src2, src2, 1)
    else:
        out = tl.gather(src2, r[:, None] + r[None, :], 2)
    tl.store(O + r[:, None] * 8 + r[None, :], out)


@pytest.mark.parametrize("case,message", [
    ("rank", r"src and index must have the same rank, got tensor<8x8xfp32> and tensor<8xi32>"),
    ("shape", r"index \[4, 4\] must match src \[8, 8\] in every dimension but axis 0 "
     r"\(dimension 1 is 4 and 8\)"),
    ("float", r"tk.gather needs a tensor of integers as index, got tensor<8x8xfp32>"),
    ("axis", r"axis 2 is out of range for tensor<8x8xfp32>"),
])
def test_gather_errors_are_located(case, message):
    x = np.zeros(64, np.float32)
    i = np.zeros(64, np.int32)
    with pytest.raises(triton.CompilationError, match=message) as e:
        bad_gather[(1,)](x, i, x, case)
    assert "test_lang_gather.py:" in str(e.value)
