"""Triton names and idioms the rehearsal found missing, checked by value on
the interpreter (CI) and the GPU (marked gpu): tl.softmax, tl.umulhi,
tl.join, tl.cat, tl.debug_barrier, tl.assume, early exits
(`if pid >= n: return`), and the errors that remain (a return inside a
loop)."""

import numpy as np
import pytest

import tk
import tk as tl
from acc_common import backend, check, run_in_child  # noqa: F401  (backend is a fixture)


@tl.jit
def softmax_rows(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
    y = tl.softmax(x, dim=1, keep_dims=True)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y, mask=mask)
    v = tl.load(x_ptr + cols, mask=cols < N, other=-float("inf"))
    tl.store(out_ptr + M * N + cols, v.softmax(ieee_rounding=True), mask=cols < N)


def test_softmax_builtin(backend):
    M, N = 37, 100
    x, x64 = backend.rand((M, N), "fp32", -5, 5)
    out = backend.empty(M * N + N, "fp32")
    softmax_rows[(tl.cdiv(M, 8),)](x, out, M, N, BLOCK_M=8, BLOCK_N=128)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    got = backend.get(out)
    check(got[:M * N].reshape(M, N), e / e.sum(axis=1, keepdims=True), atol=1e-7, rtol=1e-5,
          what="rows")
    check(got[M * N:], e[0] / e[0].sum(), atol=1e-7, rtol=1e-5, what="1-D")


@tl.jit
def umulhi_join_cat(a_ptr, b_ptr, out_ptr, f_ptr, fout_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.umulhi(a, b))
    tl.store(out_ptr + BLOCK + offs, tl.umulhi(a.to(tl.uint32), b.to(tl.uint32)).to(tl.int32))
    f = tl.load(f_ptr + offs)
    j = tl.join(f, f * 2.0)                                   # [BLOCK, 2]
    tl.store(fout_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    c = tl.cat(f, f + 1.0, can_reorder=True)                  # [2 * BLOCK]
    tl.store(fout_ptr + 2 * BLOCK + tl.arange(0, 2 * BLOCK), c)


def test_umulhi_join_cat(backend):
    n = 64
    a, a64 = backend.rand(n, "i32", -2**31, 2**31)
    b, b64 = backend.rand(n, "i32", -2**31, 2**31)
    f, f64 = backend.rand(n, "fp32")
    out, fout = backend.empty(2 * n, "i32"), backend.empty(4 * n, "fp32")
    umulhi_join_cat[(1,)](a, b, out, f, fout, BLOCK=n)
    got = backend.get(out)
    # umulhi is unsigned whatever the operands' signedness, as Triton's
    # (mul.hi.u32 through libdevice's __nv_umulhi): int32 and uint32 operands
    # of the same bits give the same high word.
    ua, ub = a64 % 2**32, b64 % 2**32
    hi = ((ua * ub) >> 32).astype(np.uint64).astype(np.uint32).view(np.int32)
    check(got[:n], hi, what="umulhi of int32")
    check(got[n:], hi, what="umulhi of uint32")
    gf = backend.get(fout)
    check(gf[:2 * n].reshape(n, 2), np.stack([f64, 2 * f64], axis=1), what="join")
    check(gf[2 * n:], np.concatenate([f64, f64 + 1]), rtol=1e-7, what="cat")


@tl.jit
def store_if_positive(ptr, offs, v):
    if tl.sum(v, axis=0) < 0:
        return
    tl.store(ptr + offs, v)


@tl.jit
def early_exit_kernel(x_ptr, out_ptr, n, n_rows, BLOCK: tl.constexpr, SKIP: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n_rows:
        return
    if SKIP:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if pid % 3 == 1:
        tl.store(out_ptr + offs, x * 0 - 1.0, mask=offs < n)
        return
    elif pid % 3 == 2:
        tl.store(out_ptr + offs, x * 10.0, mask=offs < n)
    else:
        tl.assume(pid >= 0)
    tl.debug_barrier()
    store_if_positive(out_ptr + n, offs, x)
    tl.store(out_ptr + offs, x + 1.0, mask=(offs < n) & (pid % 3 == 0))


def test_early_exits(backend):
    BLOCK, rows = 32, 9
    n = BLOCK * rows
    x, x64 = backend.rand(n, "fp32", -1, 1.2)
    out = backend.put(np.full(2 * n, 5.0), "fp32")[0]
    early_exit_kernel[(rows + 3,)](x, out, n, rows - 2, BLOCK=BLOCK, SKIP=False)
    want = np.full(2 * n, 5.0)
    for pid in range(rows - 2):
        s = slice(pid * BLOCK, (pid + 1) * BLOCK)
        seg = x64[s]
        if pid % 3 == 1:
            want[s] = -1.0
            continue
        want[s] = seg * 10.0 if pid % 3 == 2 else seg + 1.0
        if seg.astype(np.float32).sum() >= 0:
            want[n + pid * BLOCK:n + (pid + 1) * BLOCK] = seg
    check(backend.get(out), want, rtol=1e-6, what="early exits")
    untouched = backend.put(np.full(2 * n, 5.0), "fp32")[0]
    early_exit_kernel[(rows,)](x, untouched, n, rows, BLOCK=BLOCK, SKIP=True)
    check(backend.get(untouched), np.full(2 * n, 5.0), what="SKIP=True stores nothing")


@tl.jit
def return_in_loop(x_ptr, n):
    for i in range(n):
        if tl.load(x_ptr + i) < 0:
            return
        tl.store(x_ptr + i, 1.0)


def test_return_inside_a_loop_is_still_a_clear_error():
    x = np.ones(4, np.float32)
    with pytest.raises(tk.CompilationError) as e:
        return_in_loop[(1,)](x, 4)
    assert "'return' inside a dynamic for or while loop" in str(e.value), str(e.value)


@tl.jit
def flip_kernel(x_ptr, i_ptr, out_ptr, iout_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)                        # fp16 [M, N]
    tl.store(out_ptr + r * N + c, tl.flip(x))             # the last dimension
    tl.store(out_ptr + M * N + r * N + c, tl.flip(x, 0))
    v = tl.load(i_ptr + tl.arange(0, N))                  # i32 [N]
    tl.store(iout_ptr + tl.arange(0, N), tl.flip(v, 0))
    tl.store(iout_ptr + N + tl.arange(0, 2), tl.flip(tl.arange(0, 2)))


def test_flip(backend):
    if backend.gpu:
        # in a process of its own (new on the GPU when written): a fault
        # would poison this process's CUDA context for every later GPU test
        run_in_child("test_acc_triton_names", "flip_checks")
    else:
        flip_checks(backend)


def flip_checks(backend):
    M, N = 8, 64
    x, x64 = backend.rand((M, N), "fp16")
    v, v64 = backend.rand(N, "i32", -10**9, 10**9)
    out, iout = backend.empty(2 * M * N, "fp16"), backend.empty(N + 2, "i32")
    flip_kernel[(1,)](x, v, out, iout, M=M, N=N)
    got = backend.get(out)
    check(got[:M * N].reshape(M, N), x64[:, ::-1], what="flip last")
    check(got[M * N:].reshape(M, N), x64[::-1, :], what="flip dim 0")
    check(backend.get(iout), np.concatenate([v64[::-1], [1, 0]]), what="flip i32")
