"""Issue 6's acceptance check, rehearsed: kernels written the way a Triton
user writes them (the shapes of Triton's tutorials: vector add, fused
softmax, dropout, LayerNorm forward and backward with a lock, matmul with
autotune and leaky_relu, a persistent and a grouped GEMM, fused attention),
with only the import changed to `import tk as tl`. Each runs on the
interpreter (CI) and on the GPU (marked gpu) and is checked against numpy in
float64 on the same inputs. Written for tk, not copied from Triton."""

import math

import numpy as np
import pytest

import tk
import tk as tl
from acc_common import backend, check, check_norm, run_in_child  # noqa: F401

# ---------------------------------------------------------------------------
# vector add


@tl.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@pytest.mark.parametrize("n", [1, 98432, 4097])
def test_vector_add(backend, n):
    x, x64 = backend.rand(n, "fp32")
    y, y64 = backend.rand(n, "fp32")
    out = backend.empty(n, "fp32")
    grid = lambda meta: (tl.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    check(backend.get(out), x64 + y64, rtol=1e-7, what="add")


# ---------------------------------------------------------------------------
# fused softmax: a persistent loop over rows (programs stride by num_programs)


@tl.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax_ref(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("shape", [(1823, 781), (37, 1000), (5, 2049)])
def test_fused_softmax(backend, shape):
    if not backend.gpu:
        shape = (min(shape[0], 23), shape[1])
    n_rows, n_cols = shape
    x, x64 = backend.rand(shape, "fp32", -5, 5)
    y = backend.empty(shape, "fp32")
    BLOCK_SIZE = tl.next_power_of_2(n_cols)
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    softmax_kernel[(min(n_rows, 132), 1, 1)](y, x, backend.strides(x)[0], backend.strides(y)[0],
                                             n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_stages=2,
                                             num_warps=num_warps)
    check(backend.get(y), softmax_ref(x64), atol=1e-7, rtol=2e-5, what="softmax")


# ---------------------------------------------------------------------------
# dropout with an explicit keep mask (the tutorial's first kernel)


@tl.jit
def _dropout(x_ptr, x_keep_ptr, output_ptr, n_elements, p, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x_keep = tl.load(x_keep_ptr + offsets, mask=mask)
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def test_dropout_with_keep_mask(backend):
    n = 10007
    x, x64 = backend.rand(n, "fp32")
    keep, keep64 = backend.put(backend.rng.random(n) > 0.5, "i1")
    out = backend.empty(n, "fp32")
    p = 0.5
    _dropout[(tl.cdiv(n, 1024),)](x, keep, out, n, p, BLOCK_SIZE=1024)
    check(backend.get(out), np.where(keep64 != 0, x64 / (1 - p), 0.0), rtol=1e-6, what="dropout")


@tl.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    tl.store(output_ptr + offsets, tl.where(x_keep, x / (1 - p), 0.0), mask=mask)


def test_seeded_dropout(backend):
    # The tutorial's seeded dropout: the mask comes from tl.rand(seed,
    # offsets), the same for the same seed and different for another; the
    # values are Triton's (tests/python/test_lang_random.py checks the bits).
    n = 10007
    x, x64 = backend.rand(n, "fp32")
    outs = []
    for seed in (123, 123, 7):
        out = backend.empty(n, "fp32")
        _seeded_dropout[(tl.cdiv(n, 1024),)](x, out, n, 0.5, seed, BLOCK_SIZE=1024)
        outs.append(backend.get(out))
    keep = outs[0] != 0
    check(outs[0], np.where(keep, x64 / 0.5, 0.0), rtol=1e-6, what="seeded dropout")
    assert (outs[0] == outs[1]).all() and (outs[0] != outs[2]).any()
    assert 0.45 < keep.mean() < 0.55


# ---------------------------------------------------------------------------
# LayerNorm forward, and backward with a spin lock guarding partial dW/dB


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


@tl.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # one row per program; rows hash onto GROUP_SIZE_M partial-sum rows of
    # DW/DB, each guarded by a lock word (Lock[g]) and a first-writer flag
    # (Lock[GROUP_SIZE_M + g])
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    DW = DW + group * N + cols
    DB = DB + group * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@tl.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                         BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def layer_norm_ref(x, w, b, eps):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    return (x - mean) * rstd * w + b, mean[:, 0], rstd[:, 0]


def layer_norm_bwd_ref(x, w, dy, mean, rstd):
    n = x.shape[1]
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / n
    c2 = wdy.sum(axis=1, keepdims=True) / n
    dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_layer_norm_forward_and_backward(backend, dtype):
    M, N = (1151, 1000) if backend.gpu else (29, 300)
    eps = 1e-5
    x, x64 = backend.rand((M, N), dtype, -3, 3)
    w, w64 = backend.rand(N, dtype, 0.5, 1.5)
    b, b64 = backend.rand(N, dtype, -1, 1)
    dy, dy64 = backend.rand((M, N), dtype, -1, 1)
    y = backend.empty((M, N), dtype)
    mean = backend.empty(M, "fp32")
    rstd = backend.empty(M, "fp32")
    BLOCK_SIZE = min(65536 // 2, tl.next_power_of_2(N))
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M,)](x, y, w, b, mean, rstd, backend.strides(x)[0], N, eps,
                                BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    y_ref, mean_ref, rstd_ref = layer_norm_ref(x64, w64, b64, eps)
    tol = 2e-3 if dtype == "fp16" else 2e-5
    check(backend.get(mean), mean_ref, atol=1e-5, rtol=1e-5, what="mean")
    check(backend.get(rstd), rstd_ref, rtol=1e-4, what="rstd")
    check(backend.get(y), y_ref, atol=tol, rtol=tol, what="y")

    GROUP_SIZE_M = 64 if N <= 8192 else 32
    locks = backend.zeros(2 * GROUP_SIZE_M, "i32")
    dw_part = backend.zeros((GROUP_SIZE_M, N), dtype)
    db_part = backend.zeros((GROUP_SIZE_M, N), dtype)
    dx = backend.empty((M, N), dtype)
    dw = backend.empty(N, dtype)
    db = backend.empty(N, dtype)
    _layer_norm_bwd_dx_fused[(M,)](dx, dy, dw_part, db_part, x, w, mean, rstd, locks,
                                   backend.strides(x)[0], N, GROUP_SIZE_M=GROUP_SIZE_M,
                                   BLOCK_SIZE_N=BLOCK_SIZE, num_warps=num_warps)
    grid = lambda meta: (tl.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    _layer_norm_bwd_dwdb[grid](dw_part, db_part, dw, db, min(GROUP_SIZE_M, M), N,
                               BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    dx_ref, dw_ref, db_ref = layer_norm_bwd_ref(x64, w64, dy64, backend.get(mean),
                                                backend.get(rstd))
    check(backend.get(dx), dx_ref, atol=tol * 10, rtol=tol * 10, what="dx")
    # dw/db sum M rows; the partial sums are held in `dtype`
    check_norm(backend.get(dw), dw_ref, 2e-2 if dtype == "fp16" else 1e-5, what="dw")
    check_norm(backend.get(db), db_ref, 2e-2 if dtype == "fp16" else 1e-5, what="db")


# ---------------------------------------------------------------------------
# matmul: autotune, grouped program order, leaky_relu epilogue, tl.assume


def _configs():
    return [
        tl.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                   "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8),
        tl.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64,
                   "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        tl.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32,
                   "GROUP_SIZE_M": 4}, num_stages=2, num_warps=2),
    ]


@tl.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@tl.autotune(configs=_configs(), key=["M", "N", "K"])
@tl.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    tl.assume(stride_bn > 0)
    tl.assume(stride_bk > 0)
    tl.assume(stride_cm > 0)
    tl.assume(stride_cn > 0)
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@pytest.mark.parametrize("activation", ["", "leaky_relu"])
def test_matmul_autotune_leaky_relu(backend, activation):
    M, N, K = (1000, 1100, 900) if backend.gpu else (70, 45, 83)
    a, a64 = backend.rand((M, K), "fp16", -1, 1)
    b, b64 = backend.rand((K, N), "fp16", -1, 1)
    c = backend.empty((M, N), "fp16")
    grid = lambda META: (  # noqa: E731
        tl.cdiv(M, META["BLOCK_SIZE_M"]) * tl.cdiv(N, META["BLOCK_SIZE_N"]),)
    sa, sb, sc = backend.strides(a), backend.strides(b), backend.strides(c)
    matmul_kernel[grid](a, b, c, M, N, K, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1],
                        ACTIVATION=activation)
    ref = a64 @ b64
    if activation == "leaky_relu":
        ref = np.where(ref >= 0, ref, 0.01 * ref)
    check_norm(backend.get(c), ref, 2e-3, what="matmul")
    assert matmul_kernel.best_config is not None


# ---------------------------------------------------------------------------
# persistent matmul: NUM_SMS programs loop over the tiles


@tl.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                      BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                      GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, accumulator.to(tl.float16), mask=c_mask)


def test_persistent_matmul(backend):
    M, N, K = (1000, 1100, 900) if backend.gpu else (70, 45, 83)
    a, a64 = backend.rand((M, K), "fp16", -1, 1)
    b, b64 = backend.rand((K, N), "fp16", -1, 1)
    c = backend.empty((M, N), "fp16")
    num_sms = 132 if backend.gpu else 3
    BM, BN, BK = (128, 128, 64) if backend.gpu else (32, 32, 32)
    tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    sa, sb, sc = backend.strides(a), backend.strides(b), backend.strides(c)
    matmul_persistent[(min(num_sms, tiles),)](
        a, b, c, M, N, K, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1], BLOCK_SIZE_M=BM,
        BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8, NUM_SMS=num_sms, num_warps=8,
        num_stages=3)
    check_norm(backend.get(c), a64 @ b64, 2e-3, what="persistent matmul")


# ---------------------------------------------------------------------------
# grouped GEMM: several problems of different sizes in one launch. Triton's
# version keeps a table of raw pointers and casts them with tl.pointer_type,
# which tk does not have; here the problems live in one buffer each for A, B
# and C and the table holds element offsets (int64) and sizes.


@tl.jit
def grouped_matmul_kernel(a_base, b_base, c_base, offsets, sizes, group_size,
                          NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(sizes + g * 3)
        gn = tl.load(sizes + g * 3 + 1)
        gk = tl.load(sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            a_ptr = a_base + tl.load(offsets + g * 3)
            b_ptr = b_base + tl.load(offsets + g * 3 + 1)
            c_ptr = c_base + tl.load(offsets + g * 3 + 2)
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * gk + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * gn + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_SIZE_K)):
                k_left = gk - kk * BLOCK_SIZE_K
                a = tl.load(a_ptrs, mask=(offs_am[:, None] < gm) & (offs_k[None, :] < k_left),
                            other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_bn[None, :] < gn),
                            other=0.0)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * gn
            c = accumulator.to(tl.float16)
            c_ptrs = c_ptr + gn * offs_am[:, None] + offs_bn[None, :]
            tl.store(c_ptrs, c, mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def test_grouped_gemm(backend):
    problems = [(300, 200, 150), (64, 64, 64), (129, 77, 250)]
    if not backend.gpu:
        problems = [(40, 33, 50), (16, 16, 16), (21, 40, 35)]
    a_parts, b_parts, refs, offs, sizes = [], [], [], [], []
    ao = bo = co = 0
    for m, n, k in problems:
        a = backend.rng.uniform(-1, 1, (m, k)).astype(np.float16)
        b = backend.rng.uniform(-1, 1, (k, n)).astype(np.float16)
        a_parts.append(a.ravel())
        b_parts.append(b.ravel())
        refs.append(a.astype(np.float64) @ b.astype(np.float64))
        offs += [ao, bo, co]
        sizes += [m, n, k]
        ao, bo, co = ao + m * k, bo + k * n, co + m * n
    a_all, _ = backend.put(np.concatenate(a_parts), "fp16")
    b_all, _ = backend.put(np.concatenate(b_parts), "fp16")
    c_all = backend.empty(co, "fp16")
    offsets, _ = backend.put(np.array(offs), "i64")
    sz, _ = backend.put(np.array(sizes), "i32")
    num_sm = 4
    grouped_matmul_kernel[(num_sm,)](a_all, b_all, c_all, offsets, sz, len(problems),
                                     NUM_SM=num_sm, BLOCK_SIZE_M=32, BLOCK_SIZE_N=32,
                                     BLOCK_SIZE_K=32)
    got = backend.get(c_all)
    start = 0
    for (m, n, _), ref in zip(problems, refs):
        check_norm(got[start:start + m * n].reshape(m, n), ref, 2e-3, what=f"gemm {m}x{n}")
        start += m * n


# ---------------------------------------------------------------------------
# fused attention forward (online softmax, causal or not)


@tl.jit
def _attn_fwd(Q, K, V, Out, sm_scale, stride_qz, stride_qm, stride_kz, stride_kn, stride_vz,
              stride_vn, stride_oz, stride_om, N_CTX, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + offs_m[:, None] * stride_qm + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = N_CTX
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = K + off_z * stride_kz + cols[None, :] * stride_kn + offs_d[:, None]
        k = tl.load(k_ptrs, mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        valid = cols[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v_ptrs = V + off_z * stride_vz + cols[:, None] * stride_vn + offs_d[None, :]
        v = tl.load(v_ptrs, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention_ref(q, k, v, scale, causal):
    s = np.einsum("zmd,znd->zmn", q, k) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    return np.einsum("zmn,znd->zmd", softmax_ref(s.reshape(-1, s.shape[-1])).reshape(s.shape), v)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_forward(backend, causal):
    Z, N_CTX, D = (6, 1000, 64) if backend.gpu else (2, 70, 16)
    q, q64 = backend.rand((Z, N_CTX, D), "fp16", -1, 1)
    k, k64 = backend.rand((Z, N_CTX, D), "fp16", -1, 1)
    v, v64 = backend.rand((Z, N_CTX, D), "fp16", -1, 1)
    o = backend.empty((Z, N_CTX, D), "fp16")
    # a numpy float64 scalar, as a port computing it with numpy passes it: an
    # fp32 argument, as in Triton (it is a Python float; docs/python.md)
    scale = 1.0 / np.sqrt(np.float64(D))
    BLOCK_M, BLOCK_N = (128, 64) if backend.gpu else (32, 16)
    sq, sk, sv, so = (backend.strides(t) for t in (q, k, v, o))
    _attn_fwd[(tl.cdiv(N_CTX, BLOCK_M), Z)](q, k, v, o, scale, sq[0], sq[1], sk[0], sk[1],
                                            sv[0], sv[1], so[0], so[1], N_CTX, HEAD_DIM=D,
                                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                                            num_warps=4 if D <= 64 else 8)
    check(backend.get(o), attention_ref(q64, k64, v64, scale, causal), atol=1e-2, rtol=1e-2,
          what="attention")


# ---------------------------------------------------------------------------
# loops that count down (torch inductor's matmul template walks K this way)
# and Triton's tl.math submodule


@tl.jit
def countdown_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = a_ptr + rm[:, None] * K + rk[None, :]
    B = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(K, 0, -BLOCK_K):
        a = tl.load(A, mask=(rm[:, None] < M) & (rk[None, :] < k), other=0.)
        b = tl.load(B, mask=(rk[:, None] < k) & (rn[None, :] < N), other=0.)
        acc += tl.dot(a, b)
        A += BLOCK_K
        B += BLOCK_K * N
    steps = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for i in range(10, 1, -3):              # 10, 7, 4
        steps += i
    acc += tl.math.exp2(tl.math.log2(steps.to(tl.float32)))
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


def test_countdown_loops_and_tl_math(backend):
    M, N, K = (300, 200, 333) if backend.gpu else (40, 30, 75)
    a, a64 = backend.rand((M, K), "fp16", -1, 1)
    b, b64 = backend.rand((K, N), "fp16", -1, 1)
    c = backend.empty((M, N), "fp32")
    countdown_matmul[(tl.cdiv(M, 32), tl.cdiv(N, 32))](a, b, c, M, N, K, BLOCK_M=32,
                                                       BLOCK_N=32, BLOCK_K=32)
    check_norm(backend.get(c), a64 @ b64 + 21.0, 1e-5, what="countdown matmul")


@tl.jit
def math_missing_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.math.tanh(tl.load(x_ptr + offs)))


def test_tl_math_name_tk_lacks_is_a_clear_error():
    x = np.ones(16, dtype=np.float32)
    with pytest.raises(tk.CompilationError) as e:
        math_missing_kernel[(1,)](x, BLOCK=16)
    # Triton's math module has no tanh either (it is libdevice's).
    assert "module 'tk.math' has no attribute 'tanh'" in str(e.value), str(e.value)


# ---------------------------------------------------------------------------
# the grouped GEMM as Triton's tutorial writes it: a table of raw addresses
# (int64) cast to pointers with tl.pointer_type. GPU only: the interpreter's
# pointers are its own, so an address from the host is out of bounds there.


@tl.jit
def grouped_matmul_ptr_table(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes,
                             g_lds, group_size, NUM_SM: tl.constexpr,
                             BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                             BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                left = k - kk * BLOCK_SIZE_K
                a = tl.load(a_ptrs, mask=(offs_am[:, None] < gm) & (offs_k[None, :] < left),
                            other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & (offs_bn[None, :] < gn),
                            other=0.0)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c, mask=(offs_cm[:, None] < gm) & (offs_cn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


@pytest.mark.gpu
def test_grouped_gemm_pointer_table():
    run_in_child("test_acc_triton_style", "grouped_gemm_pointer_table_on_the_gpu")


def grouped_gemm_pointer_table_on_the_gpu(backend):
    import torch

    torch.manual_seed(8)
    problems = [(300, 200, 150), (64, 64, 64), (129, 77, 250), (1024, 512, 256)]
    A = [torch.rand((m, k), device="cuda", dtype=torch.float16) - 0.5 for m, n, k in problems]
    B = [torch.rand((k, n), device="cuda", dtype=torch.float16) - 0.5 for m, n, k in problems]
    C = [torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
         for m, n, k in problems]
    d_a = torch.tensor([a.data_ptr() for a in A], device="cuda")
    d_b = torch.tensor([b.data_ptr() for b in B], device="cuda")
    d_c = torch.tensor([c.data_ptr() for c in C], device="cuda")
    sizes = torch.tensor([x for p in problems for x in (p[0], p[1], p[2])], dtype=torch.int32,
                         device="cuda")
    lds = torch.tensor([x for a, b, c in zip(A, B, C)
                        for x in (a.stride(0), b.stride(0), c.stride(0))], dtype=torch.int32,
                       device="cuda")
    grouped_matmul_ptr_table[(132,)](d_a, d_b, d_c, sizes, lds, len(problems), NUM_SM=132,
                                     BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32)
    for a, b, c in zip(A, B, C):
        check_norm(c.double().cpu().numpy(), (a.double() @ b.double()).cpu().numpy(), 2e-3,
                   what=f"pointer-table gemm {tuple(c.shape)}")


@tl.jit
def load_through_address(table_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(table_ptr).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr + offs, tl.load(p + offs))


def test_pointer_type_compiles_and_interpreter_rejects_foreign_addresses():
    x = np.arange(16, dtype=np.float32)
    table = np.array([x.ctypes.data], dtype=np.int64)
    out = np.zeros(16, np.float32)
    # the IR casts the loaded i64 to a pointer
    k = load_through_address.warmup(table, out, BLOCK=16)
    assert "inttoptr" in k.asm["ir"], k.asm["ir"]
    # a host address is not memory the interpreter handed out: a clear
    # error, not a crash
    with pytest.raises(tk.InterpreterError):
        load_through_address[(1,)](table, out, BLOCK=16)
