"""Issue 5's acceptance check, rehearsed: elementwise chains over mixed
dtypes (fp16/bf16/fp32/fp64 and integers, casts, where, math functions), row
and column reductions (sum/max/min/argmax/argmin over axis 0 and 1 of 2-D
tiles), ragged masked edges and strided (transposed) inputs. Each case runs
on the interpreter (CI) and on the GPU (marked gpu), against numpy in
float64 on the same input values; on the GPU the interpreter's result of
the same launch is compared too."""

import numpy as np
import pytest

import tk
import tk as tl
from acc_common import backend, check  # noqa: F401  (backend is a fixture)

# ---------------------------------------------------------------------------
# a long elementwise chain: three input dtypes, promotion, casts, where, math


@tl.jit
def chain_kernel(x_ptr, y_ptr, i_ptr, out_f32, out_low, out_int, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    i = tl.load(i_ptr + offs, mask=mask, other=0)
    a = x.to(tl.float32) * y + i            # float * float + int -> float
    b = tl.where(a > 0, tl.sqrt(a), -tl.exp(a * 0.25))
    c = tl.sigmoid(b) + tl.sin(y) * tl.cos(x.to(tl.float32)) + tl.abs(i % 7 - 3).to(tl.float32)
    d = tl.log(tl.abs(c) + 1.0) + tl.floor(y * 3.0) - tl.ceil(x.to(tl.float32))
    d = d + tl.erf(y) + tl.rsqrt(tl.abs(y) + 1.0) + tl.exp2(x.to(tl.float32) * 0.5)
    d = d + tl.log2(tl.abs(a) + 1.0) + tl.fma(y, y, -1.0)
    d = tl.maximum(d, -4.0) + tl.minimum(y, 0.5) + tl.clamp(a, -1.0, 1.0)
    tl.store(out_f32 + offs, d, mask=mask)
    tl.store(out_low + offs, (d * 0.5).to(out_low.dtype.element_ty), mask=mask)
    q = (i * 3 + (x > 0).to(tl.int32)) // 2 - (i >> 2) + (i & 5) ^ (i | 2)
    tl.store(out_int + offs, q, mask=mask)


def chain_ref(x, y, i):
    a = x * y + i
    b = np.where(a > 0, np.sqrt(np.maximum(a, 0)), -np.exp(a * 0.25))
    c = 1 / (1 + np.exp(-b)) + np.sin(y) * np.cos(x) + np.abs(np.fmod(i, 7) - 3)
    d = np.log(np.abs(c) + 1) + np.floor(y * 3) - np.ceil(x)
    from math import erf
    d = d + np.vectorize(erf)(y) + 1 / np.sqrt(np.abs(y) + 1) + np.exp2(x * 0.5)
    d = d + np.log2(np.abs(a) + 1) + (y * y - 1)
    d = np.maximum(d, -4) + np.minimum(y, 0.5) + np.clip(a, -1, 1)
    ii = i.astype(np.int64)
    t = ii * 3 + (x > 0)
    q = (np.trunc(t / 2).astype(np.int64) - (ii >> 2) + (ii & 5)) ^ (ii | 2)
    return d, q


@pytest.mark.parametrize("xd,yd,low", [("fp16", "fp32", "fp16"), ("fp32", "fp32", "bf16"),
                                       ("bf16", "fp32", "fp16"), ("fp64", "fp32", "fp32")])
@pytest.mark.parametrize("n", [1, 1000, 65539])
def test_elementwise_chain(backend, xd, yd, low, n):
    if not backend.gpu and n > 5000:
        n = 4099
    x, x64 = backend.rand(n, xd, -3, 3)
    y, y64 = backend.rand(n, yd, -2, 2)
    i, i64 = backend.rand(n, "i32", -1000, 1000)
    out, out_low, out_int = backend.empty(n, "fp32"), backend.empty(n, low), backend.empty(n, "i32")
    args = (x, y, i, out, out_low, out_int, n)
    grid = (tl.cdiv(n, 512),)
    chain_kernel[grid](*args, BLOCK=512)
    d, q = chain_ref(x64, y64, i64)
    # fp16/bf16 inputs promoted to fp32 math: tk.exp and tk.sqrt are the fast
    # approximate forms (docs/language.md), a few ulp of fp32
    check(backend.get(out), d, atol=5e-5, rtol=5e-5, what="fp32 chain")
    low_tol = {"fp16": 1e-3, "bf16": 8e-3, "fp32": 5e-5}[low]
    check(backend.get(out_low), d * 0.5, atol=low_tol, rtol=low_tol, what=f"{low} chain")
    check(backend.get(out_int), q, what="int chain")
    if backend.gpu:
        _, _, _, ref_out, _, ref_int, _ = backend.interp(chain_kernel, grid, *args, BLOCK=512)
        check(backend.get(out), backend.get(ref_out), atol=5e-5, rtol=5e-5, what="gpu vs interp")
        check(backend.get(out_int), backend.get(ref_int), what="gpu vs interp (int)")


# ---------------------------------------------------------------------------
# integer and narrow types: i8/u8/i16/i64 loads, mixed-signedness promotion,
# float -> int casts (in range), int -> float


@tl.jit
def int_mix_kernel(a_ptr, b_ptr, c_ptr, d_ptr, out_i64, out_f32, out_i8, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)        # int8
    b = tl.load(b_ptr + offs, mask=mask, other=0)        # uint8
    c = tl.load(c_ptr + offs, mask=mask, other=0)        # int16
    d = tl.load(d_ptr + offs, mask=mask, other=0)        # int64
    s = a.to(tl.int32) * b.to(tl.int32) + c              # int32
    big = s.to(tl.int64) * d                             # int64
    tl.store(out_i64 + offs, big - (d // 3) + tl.maximum(s.to(tl.int64), d), mask=mask)
    f = s.to(tl.float32) * 0.125 + a.to(tl.float32)
    tl.store(out_f32 + offs, f / (b.to(tl.float32) + 1.0), mask=mask)
    tl.store(out_i8 + offs, (f * 0.01).to(tl.int8), mask=mask)


def test_integer_mix(backend):
    n = 3001
    a, a64 = backend.rand(n, "i8", -128, 128)
    b, b64 = backend.rand(n, "u8", 0, 256)
    c, c64 = backend.rand(n, "i16", -30000, 30000)
    d, d64 = backend.rand(n, "i64", -2**40, 2**40)
    o64, of, o8 = backend.empty(n, "i64"), backend.empty(n, "fp32"), backend.empty(n, "i8")
    int_mix_kernel[(tl.cdiv(n, 256),)](a, b, c, d, o64, of, o8, n, BLOCK=256)
    s = a64 * b64 + c64
    check(backend.get(o64), s * d64 - np.trunc(d64 / 3).astype(np.int64) + np.maximum(s, d64),
          what="i64")
    f = (s * 0.125 + a64).astype(np.float32).astype(np.float64)
    check(backend.get(of), f / (b64 + 1.0), rtol=1e-6, what="fp32")
    check(backend.get(o8), np.trunc(f * 0.01), what="i8")


# ---------------------------------------------------------------------------
# row and column reductions of a 2-D tile, with ragged masked edges


@tl.jit
def reduce_rows_kernel(x_ptr, out_ptr, idx_ptr, M, N, stride_m, stride_n,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OP: tl.constexpr):
    # each program reduces BLOCK_M whole rows (BLOCK_N >= N) along axis 1
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    if OP == "sum":
        x = tl.load(ptrs, mask=mask, other=0)
        tl.store(out_ptr + rows, tl.sum(x, axis=1), mask=rows < M)
    elif OP == "sum32":
        x = tl.load(ptrs, mask=mask, other=0)
        tl.store(out_ptr + rows, tl.sum(x, axis=1, dtype=tl.float32), mask=rows < M)
    elif OP == "max":
        x = tl.load(ptrs, mask=mask, other=-float("inf"))
        v, i = tl.max(x, axis=1, return_indices=True)
        tl.store(out_ptr + rows, v, mask=rows < M)
        tl.store(idx_ptr + rows, i, mask=rows < M)
    elif OP == "min":
        x = tl.load(ptrs, mask=mask, other=float("inf"))
        tl.store(out_ptr + rows, tl.min(x, axis=1), mask=rows < M)
        tl.store(idx_ptr + rows, tl.argmin(x, axis=1), mask=rows < M)
    else:
        x = tl.load(ptrs, mask=mask, other=-float("inf"))
        tl.store(out_ptr + rows, tl.max(x, 1), mask=rows < M)
        tl.store(idx_ptr + rows, tl.argmax(x, axis=1), mask=rows < M)


@tl.jit
def reduce_cols_kernel(x_ptr, out_ptr, idx_ptr, M, N, stride_m, stride_n,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OP: tl.constexpr):
    # each program reduces BLOCK_N whole columns (BLOCK_M >= M) along axis 0
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    if OP == "sum":
        x = tl.load(ptrs, mask=mask, other=0)
        s = tl.sum(x, axis=0, keep_dims=True)
        tl.store(out_ptr + cols[None, :], s, mask=cols[None, :] < N)
    elif OP == "sum32":
        x = tl.load(ptrs, mask=mask, other=0)
        tl.store(out_ptr + cols, x.to(tl.float32).sum(axis=0), mask=cols < N)
    elif OP == "max":
        x = tl.load(ptrs, mask=mask, other=-float("inf"))
        tl.store(out_ptr + cols, tl.max(x, axis=0), mask=cols < N)
        tl.store(idx_ptr + cols, tl.argmax(x, axis=0), mask=cols < N)
    elif OP == "min":
        x = tl.load(ptrs, mask=mask, other=float("inf"))
        v, i = tl.min(x, axis=0, return_indices=True)
        tl.store(out_ptr + cols, v, mask=cols < N)
        tl.store(idx_ptr + cols, i, mask=cols < N)
    else:
        x = tl.load(ptrs, mask=mask, other=-float("inf"))
        tl.store(out_ptr + cols, x.max(axis=0), mask=cols < N)
        tl.store(idx_ptr + cols, x.argmax(axis=0), mask=cols < N)


REDUCE_TOL = {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1e-2, "i32": 0}
# |error| of a sum of 1000 terms in [-4, 4] kept in the input dtype, as
# Triton keeps it (tl.sum accumulates fp16 in fp16 unless dtype= is given):
# a few ulps of the largest partial sum (~100) per step, random-walk grown
SUM_ATOL = {"fp32": 1e-3, "fp16": 1.0, "bf16": 8.0, "i32": 0}


def sum32_atol(x64, axis):
    return 2e-6 * np.abs(x64).sum(axis=axis)


@pytest.mark.parametrize("op", ["sum", "sum32", "max", "min", "argmax"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "i32"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("transposed", [False, True])
def test_reductions(backend, op, dtype, axis, transposed):
    M, N = (37, 1000) if axis == 1 else (1000, 37)
    if dtype == "i32":
        host = backend.rng.integers(-10**6, 10**6, size=(N, M) if transposed else (M, N))
    else:
        host = backend.rng.uniform(-4, 4, size=(N, M) if transposed else (M, N))
    x, x64 = backend.put(host, dtype)
    if transposed:                       # a column-major view of the same values
        x, x64 = x.T, x64.T
    sm, sn = backend.strides(x)
    out_dtype = "fp32" if dtype != "i32" else "i32"
    length = M if axis == 1 else N
    out, idx = backend.empty(length, out_dtype), backend.empty(length, "i32")
    if axis == 1:
        bm, bn = 4, tl.next_power_of_2(N)
        kernel, grid = reduce_rows_kernel, (tl.cdiv(M, bm),)
    else:
        bm, bn = tl.next_power_of_2(M), 8
        kernel, grid = reduce_cols_kernel, (tl.cdiv(N, bn),)
    if dtype == "i32" and op not in ("sum", "sum32"):
        pytest.skip("integer max/min need an integer 'other'; covered by test_int_reductions")
    args = (x, out, idx, M, N, sm, sn)
    kernel[grid](*args, BLOCK_M=bm, BLOCK_N=bn, OP=op, num_warps=4)
    tol = REDUCE_TOL[dtype]
    if op == "sum":
        check(backend.get(out), x64.sum(axis=axis), atol=SUM_ATOL[dtype], rtol=tol, what="sum")
    elif op == "sum32":
        # accumulated in fp32 (dtype=tl.float32, or a cast first): a few
        # dozen fp32 ulps of the sum of magnitudes (integer inputs reach 1e9)
        check(backend.get(out), x64.sum(axis=axis), atol=sum32_atol(x64, axis), rtol=1e-5,
              what="fp32 sum")
    else:
        ref = {"max": x64.max, "min": x64.min, "argmax": x64.max}[op](axis=axis)
        check(backend.get(out), ref, what=op)
        want_idx = (x64.argmin if op == "min" else x64.argmax)(axis=axis)  # first on ties
        check(backend.get(idx), want_idx, what=f"{op} index")
    if backend.gpu:
        copies = backend.interp(kernel, grid, *args, BLOCK_M=bm, BLOCK_N=bn, OP=op, num_warps=4)
        # sums in another order round differently
        atol = sum32_atol(x64, axis) if op == "sum32" else SUM_ATOL[dtype]
        check(backend.get(out), backend.get(copies[1]), atol=atol, rtol=tol,
              what="gpu vs interp")
        if op not in ("sum", "sum32"):
            check(backend.get(idx), backend.get(copies[2]), what="gpu vs interp (index)")


@tl.jit
def int_reduce_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0)
    lo = tl.where(mask, x, 2147483647)
    hi = tl.where(mask, x, -2147483648)
    tl.store(out_ptr + rows, tl.max(hi, axis=1), mask=rows < M)
    tl.store(out_ptr + BLOCK_M + rows, tl.min(lo, axis=1), mask=rows < M)
    tl.store(out_ptr + 2 * BLOCK_M + cols, tl.argmax(hi, axis=0), mask=cols < N)
    tl.store(out_ptr + 2 * BLOCK_M + BLOCK_N + cols, tl.argmin(lo, axis=0), mask=cols < N)
    tl.store(out_ptr + 2 * BLOCK_M + 2 * BLOCK_N + cols, tl.sum(x, axis=0), mask=cols < N)
    tl.store(out_ptr + 2 * BLOCK_M + 3 * BLOCK_N, tl.xor_sum(tl.ravel(x), axis=0))


def test_int_reductions(backend):
    M, N, BM, BN = 45, 70, 64, 128
    x, x64 = backend.rand((M, N), "i32", -50, 50)      # small range: ties for arg*
    out = backend.empty(2 * BM + 3 * BN + 1, "i32")
    int_reduce_kernel[(1,)](x, out, M, N, BLOCK_M=BM, BLOCK_N=BN)
    got = backend.get(out)
    check(got[:M], x64.max(axis=1), what="row max")
    check(got[BM:BM + M], x64.min(axis=1), what="row min")
    check(got[2 * BM:2 * BM + N], x64.argmax(axis=0), what="col argmax")
    check(got[2 * BM + BN:2 * BM + BN + N], x64.argmin(axis=0), what="col argmin")
    check(got[2 * BM + 2 * BN:2 * BM + 2 * BN + N], x64.sum(axis=0), what="col sum")
    check(got[2 * BM + 3 * BN], np.bitwise_xor.reduce(x64.ravel()), what="xor_sum")


# ---------------------------------------------------------------------------
# a 2-D elementwise op over ragged tiles of a strided input, plus a column
# reduction that loops over row blocks (the LayerNorm-backward dW pattern)


@tl.jit
def tile_kernel(x_ptr, y_ptr, out_ptr, colsum_ptr, M, N, sxm, sxn, sym, syn, som, son,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * sxm + cols[None, :] * sxn, mask=mask, other=0.0)
        y = tl.load(y_ptr + rows[:, None] * sym + cols[None, :] * syn, mask=mask, other=0.0)
        z = tl.where(x.to(tl.float32) > y, x.to(tl.float32) - y, y * 0.5)
        tl.store(out_ptr + rows[:, None] * som + cols[None, :] * son, z.to(tl.float16), mask=mask)
        acc += z
    tl.store(colsum_ptr + cols, tl.sum(acc, axis=0), mask=cols < N)


@pytest.mark.parametrize("shape,blocks", [((1000, 37), (64, 16)), ((33, 513), (16, 128)),
                                          ((1, 1), (16, 16))])
def test_ragged_tiles_strided(backend, shape, blocks):
    M, N = shape
    xt, xt64 = backend.rand((N, M), "fp16")      # x is the transpose: column-major
    x, x64 = xt.T, xt64.T
    y, y64 = backend.rand((M, N), "fp32")
    out = backend.empty((M, N), "fp16")
    colsum = backend.empty(N, "fp32")
    sx, sy, so = backend.strides(x), backend.strides(y), backend.strides(out)
    BM, BN = blocks
    tile_kernel[(tl.cdiv(N, BN),)](x, y, out, colsum, M, N, sx[0], sx[1], sy[0], sy[1], so[0],
                                   so[1], BLOCK_M=BM, BLOCK_N=BN)
    z = np.where(x64 > y64, x64 - y64, y64 * 0.5)
    check(backend.get(out), z, atol=2e-3, rtol=1e-3, what="tile")
    check(backend.get(colsum), z.sum(axis=0), atol=1e-4, rtol=1e-5, what="column sum")


# ---------------------------------------------------------------------------
# a row sum in the shape torch inductor generates (xindex/rindex blocks, a
# masked accumulator carried through tl.where, `tl.sum(...)[:, None]`)


@tl.jit
def inductor_row_sum(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr,
                     RBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, RBLOCK], 0, tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(in_ptr0 + (r1 + (rnumel * x0)), rmask & xmask,
                       eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(rmask & xmask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_inductor_style_row_sum(backend, dtype):
    X, R = (1001, 777) if backend.gpu else (37, 77)
    x, x64 = backend.rand((X, R), dtype)
    out = backend.empty(X, "fp32")
    inductor_row_sum[(tl.cdiv(X, 8),)](x, out, X, R, XBLOCK=8, RBLOCK=128)
    check(backend.get(out), x64.sum(axis=1), atol=1e-3, rtol=1e-5, what="row sum")
