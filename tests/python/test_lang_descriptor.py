"""Block pointers (tk.make_block_ptr, tk.advance, tk.load/tk.store with
boundary_check and padding_option) and device-side tensor descriptors
(tk.make_tensor_descriptor, desc.load/store/atomic_add,
tk.load/store_tensor_descriptor), written as a Triton user writes them, on
the interpreter and (marked `gpu`) on the GPU, against numpy on random data
whose shapes are not multiples of the block; and their located errors."""

import math

import numpy as np
import pytest

import tk
import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(22)


@triton.jit
def bp_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(sam, sak),
                             offsets=(pid_m * BM, 0), block_shape=(BM, BK), order=(1, 0))
    b_bp = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(sbk, sbn),
                             offsets=(0, pid_n * BN), block_shape=(BK, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, input_precision="ieee")
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc, boundary_check=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m,n,k", [(37, 45, 29), (64, 32, 70)])
def test_block_ptr_matmul(device, m, n, k):
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), 7.0, np.float32)
    BM, BN, BK = 16, 32, 16
    launch(bp_matmul, (triton.cdiv(m, BM), triton.cdiv(n, BN)), a, b, c, m, n, k, k, 1, n, 1, n,
           1, BM, BN, BK, device=device)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@triton.jit
def bp_pad(x_ptr, y_ptr, M, N, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr,
           CHECK: tl.constexpr, PAD: tl.constexpr):
    x = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (off_m, off_n), (BM, BN), (1, 0))
    y = tl.make_block_ptr(y_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(y, tl.load(x, boundary_check=CHECK, padding_option=PAD))


def window(x, off_m, off_n, bm, bn, check, fill):
    m, n = x.shape
    out = np.empty((bm, bn), x.dtype)
    for i in range(bm):
        for j in range(bn):
            r, c = off_m + i, off_n + j
            oob0 = not (0 <= r < m)
            oob1 = not (0 <= c < n)
            if (0 in check and oob0) or (1 in check and oob1):
                out[i, j] = fill
            else:
                out[i, j] = x[r, c]
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pad,fill", [("zero", 0.0), ("nan", np.nan), ("", 0.0)])
@pytest.mark.parametrize("offs", [(0, 0), (-3, 5), (20, 30)])
def test_block_ptr_padding(device, pad, fill, offs):
    m, n = 27, 41
    x = RNG.standard_normal((m, n)).astype(np.float32)
    y = np.full((16, 16), 3.0, np.float32)
    launch(bp_pad, (1,), x, y, m, n, offs[0], offs[1], 16, 16, (0, 1), pad, device=device)
    np.testing.assert_array_equal(y, window(x, offs[0], offs[1], 16, 16, (0, 1), fill))


@pytest.mark.parametrize("device", DEVICES)
def test_block_ptr_one_dimension_checked(device):
    # Only dimension 0 checked; dimension 1 stays inside the row (n >= 16).
    m, n = 27, 41
    x = RNG.standard_normal((m, n)).astype(np.float32)
    y = np.full((16, 16), 3.0, np.float32)
    launch(bp_pad, (1,), x, y, m, n, 20, 8, 16, 16, (0,), "nan", device=device)
    np.testing.assert_array_equal(y, window(x, 20, 8, 16, 16, (0,), np.nan))


@triton.jit
def desc_abs(in_out_ptr, M, N, M_BLOCK: tl.constexpr, N_BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(in_out_ptr, shape=[M, N], strides=[N, 1],
                                     block_shape=[M_BLOCK, N_BLOCK])
    moffset = tl.program_id(0) * M_BLOCK
    noffset = tl.program_id(1) * N_BLOCK
    value = desc.load([moffset, noffset])
    desc.store([moffset, noffset], tl.abs(value) * 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m,n", [(45, 77), (16, 32)])
def test_descriptor_inplace(device, m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    want = np.abs(x) * 2
    launch(desc_abs, (triton.cdiv(m, 16), triton.cdiv(n, 32)), x, m, n, 16, 32, device=device)
    np.testing.assert_array_equal(x, want)


@triton.jit
def desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    # Tutorial 08/09's device-descriptor kernels: b is given transposed (N, K).
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    offs_am = tl.program_id(0) * BM
    offs_bn = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([offs_am, kk * BK])
        b = tl.load_tensor_descriptor(b_desc, [offs_bn, kk * BK])
        acc = tl.dot(a, b.T, acc)
    c = acc.to(c_desc.dtype)
    tl.store_tensor_descriptor(c_desc, [offs_am, offs_bn], c)


@pytest.mark.parametrize("device", DEVICES)
def test_descriptor_matmul(device):
    m, n, k = 50, 35, 43
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), 5, np.float16)
    launch(desc_matmul, (triton.cdiv(m, 32), triton.cdiv(n, 16)), a, b, c, m, n, k, 32, 16, 16,
           device=device)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=5e-2)


@triton.jit
def trans_4d(In, Out, in_shape1: tl.constexpr, in_shape2: tl.constexpr, in_shape3: tl.constexpr,
             in_shape4: tl.constexpr, ou_shape1: tl.constexpr, ou_shape2: tl.constexpr,
             ou_shape3: tl.constexpr, ou_shape4: tl.constexpr, trans1: tl.constexpr,
             trans2: tl.constexpr, trans3: tl.constexpr, trans4: tl.constexpr):
    # test_core.py's test_trans_4d kernel, as written there.
    in_desc = tl.make_tensor_descriptor(
        base=In,
        shape=[in_shape1, in_shape2, in_shape3, in_shape4],
        strides=[in_shape4 * in_shape3 * in_shape2, in_shape4 * in_shape3, in_shape4, 1],
        block_shape=[in_shape1, in_shape2, in_shape3, in_shape4],
    )
    out_desc = tl.make_tensor_descriptor(
        base=Out,
        shape=[ou_shape1 * ou_shape2 * ou_shape3 * ou_shape4],
        strides=[1],
        block_shape=[ou_shape1 * ou_shape2 * ou_shape3 * ou_shape4],
    )
    val = in_desc.load([0, 0, 0, 0]).permute((trans1, trans2, trans3, trans4))
    out_desc.store([0], val.reshape(out_desc.block_shape))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,perm", [((2, 4, 8, 16), (3, 1, 0, 2)), ((4, 2, 2, 8), (0, 2, 1, 3))])
def test_trans_4d(device, shape, perm):
    x = RNG.integers(-1000, 1000, math.prod(shape)).astype(np.int32).reshape(shape)
    want = np.transpose(x, perm)
    out = np.zeros(want.shape, np.int32)
    launch(trans_4d, (1,), x, out, *shape, *[shape[i] for i in perm], *perm, device=device)
    np.testing.assert_array_equal(out, want)


@triton.jit
def desc_atomic(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN], padding_option="nan")
    v = tl.full((BM, BN), 2.5, tl.float32)
    d.atomic_add([tl.program_id(0) * BM, 3], v)


@pytest.mark.parametrize("device", DEVICES)
def test_descriptor_atomic_add(device):
    m, n = 21, 19
    x = RNG.standard_normal((m, n)).astype(np.float32)
    want = x.copy()
    want[:, 3:3 + 16] += 2.5
    launch(desc_atomic, (triton.cdiv(m, 8),), x, m, n, 8, 16, device=device)
    np.testing.assert_allclose(x, want, rtol=1e-6)


@triton.jit
def loop_helper(d, off):
    return d.load([off, 0])


@triton.jit
def desc_loop(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # A descriptor passed to a helper, and a block pointer carried through a
    # while loop and merged across a dynamic if.
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    yb = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    i = 0
    while i < tl.cdiv(M, BM):
        v = loop_helper(d, i * BM)
        if i % 2 == 1:
            v = -v
        tl.store(yb, v, boundary_check=(0, 1))
        yb = yb.advance((BM, 0))
        i += 1


@pytest.mark.parametrize("device", DEVICES)
def test_descriptor_loops_and_helpers(device):
    m, n = 45, 16
    x = RNG.standard_normal((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    launch(desc_loop, (1,), x, y, m, n, 8, 16, device=device)
    sign = np.where((np.arange(m) // 8) % 2 == 1, -1, 1).astype(np.float32)[:, None]
    np.testing.assert_array_equal(y, x * sign)


@triton.jit
def bad_block_ptr(x, WHICH: tl.constexpr):
    if WHICH == 0:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0,), (16, 16), (1, 0))
    elif WHICH == 1:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 12), (1, 0))
    elif WHICH == 2:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.load(p, boundary_check=(2,))
    elif WHICH == 3:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.load(p, padding_option="one")
    elif WHICH == 4:
        d = tl.make_tensor_descriptor(x, [16, 16], [16, 1], [16, 16])
        d.load([0])
    elif WHICH == 5:
        d = tl.make_tensor_descriptor(x, [16, 16], [1, 16], [16, 16])
    elif WHICH == 6:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (0, 0))
    elif WHICH == 7:
        n = tl.program_id(0) + 16
        d = tl.make_tensor_descriptor(x, [16, 16], [16, 1], [n, 16])
    elif WHICH == 8:
        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.load(p, mask=tl.arange(0, 16) < 3)
    else:
        d = tl.make_tensor_descriptor(x, [16, 16], [16, 1], [16, 16], padding_option="inf")


@pytest.mark.parametrize("which,message", [
    (0, "tk.make_block_ptr: offsets has 1 elements but block_shape is 2-D; give one per dimension"),
    (1, "must be powers of two"),
    (2, "boundary_check must hold dimensions 0..1 of the 2-D block pointer, got (constexpr int 2,)"),
    (3, "padding_option must be '', 'zero' or 'nan', got string 'one'"),
    (4, "desc.load: offsets has 1 elements but the tensor descriptor is 2-D"),
    (5, "tk.make_tensor_descriptor: the last stride must be the constant 1"),
    (6, "tk.make_block_ptr: order must be a permutation of 0..1"),
    (7, "compile-time integers"),
    (8, "mask and other cannot be given with a block pointer; use boundary_check"),
    (9, "tk.make_tensor_descriptor: padding_option must be 'zero' or 'nan', got string 'inf'"),
])
def test_errors(which, message):
    with pytest.raises(tk.CompilationError) as e:
        bad_block_ptr[(1,)](np.zeros(256, np.float32), which)
    assert message in str(e.value)
    assert "test_lang_descriptor.py:" in str(e.value)  # located


@triton.jit
def narrow_descriptor_copy(src, dst, n, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(src, [n, n], [n, 1], [4, BN])
    e = tl.make_tensor_descriptor(dst, [n, n], [n, 1], [4, BN])
    e.store([0, 0], d.load([0, 0]))


@pytest.mark.parametrize("dtype, bn, ok", [(np.float32, 2, False), (np.float32, 4, True),
                                           (np.float16, 4, False), (np.float16, 8, True)])
def test_descriptor_rows_have_at_least_16_bytes(dtype, bn, ok):
    # Triton's rule for tensor descriptors (a TMA box row is 16 bytes or
    # more), located at the block shape, on every path.
    x = RNG.standard_normal((13, 13)).astype(dtype)
    y = np.zeros_like(x)
    if ok:
        narrow_descriptor_copy[(1,)](x, y, 13, BN=bn)
        np.testing.assert_array_equal(y[:4, :bn], x[:4, :bn])
        return
    with pytest.raises(tk.CompilationError) as e:
        narrow_descriptor_copy[(1,)](x, y, 13, BN=bn)
    assert "Descriptor block shape must have at least 16 bytes in the last dimension" in str(e.value)
    assert f"{bn} x" in str(e.value) and "[4, BN]" in str(e.value)
