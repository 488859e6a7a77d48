"""Tutorial 8: RMSNorm, forward and backward, from Python.

    y = x * rstd * w,   rstd = 1 / sqrt(mean(x^2) + eps)        per row x

Given dy, per row (xhat = x * rstd):

    dx = rstd * (w dy - mean(xhat * w dy) xhat),   dw = sum over rows of dy * xhat

The kernels are tutorials/08-rms-norm.tk's, the whole row in one block
(BLOCK_N = the next power of two >= N), statistics in fp32:

- rms_norm_fwd: one program per row; y and the row's rstd (for the backward);
- rms_norm_bwd_dx: P programs, program p taking rows p, p + P, ...: their
  dx, and the sum of dy * xhat over its rows in fp32 registers, written as
  row p of DW_partial (P x N fp32);
- rms_norm_bwd_dw: the column sums of DW_partial (the second stage of dw).

    python3 tutorials/08-rms-norm.py [--small]

On a GPU (torch with CUDA) it checks against torch autograd in float64; else,
or with TK_INTERPRET=1, on the CPU interpreter against numpy in float64.
bench/membound_bench.py times these kernels against Triton on this same
source, a device copy, torch eager and torch.compile.
"""

import os
import sys

import numpy as np

import tk


@tk.jit
def rms_norm_fwd(X, Y, W, Rstd, stride, N, eps, BLOCK_N: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    rstd = tk.rsqrt(tk.sum(x * x, axis=0) / N + eps)
    tk.store(Rstd + row, rstd)
    w = tk.load(W + cols, mask=mask)
    tk.store(Y + row * stride + cols, x * rstd * w, mask=mask)


@tk.jit
def rms_norm_bwd_dx(X, DY, DX, W, Rstd, DW_partial, stride, M, N, BLOCK_N: tk.constexpr):
    pid = tk.program_id(0)
    step = tk.num_programs(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    w = tk.load(W + cols, mask=mask, other=0.0).to(tk.float32)
    dw = tk.zeros([BLOCK_N], dtype=tk.float32)
    for row in range(pid, M, step):
        x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
        dy = tk.load(DY + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
        rstd = tk.load(Rstd + row)
        xhat = x * rstd
        wdy = w * dy
        c = tk.sum(xhat * wdy, axis=0) / N
        tk.store(DX + row * stride + cols, (wdy - xhat * c) * rstd, mask=mask)
        dw += dy * xhat
    tk.store(DW_partial + pid * N + cols, dw, mask=mask)


@tk.jit
def rms_norm_bwd_dw(DW_partial, DW, P, N, BLOCK_M: tk.constexpr, BLOCK_N: tk.constexpr):
    cols = tk.program_id(0) * BLOCK_N + tk.arange(0, BLOCK_N)
    acc = tk.zeros([BLOCK_M, BLOCK_N], dtype=tk.float32)
    for start in range(0, P, BLOCK_M):
        rows = start + tk.arange(0, BLOCK_M)
        mask = (rows[:, None] < P) & (cols[None, :] < N)
        acc += tk.load(DW_partial + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    tk.store(DW + cols, tk.sum(acc, axis=0), mask=cols < N)


def configs():
    """The autotuning space of rms_norm_fwd and rms_norm_bwd_dx (BLOCK_N is the row's)."""
    return [tk.Config({}, num_warps=w) for w in (4, 8, 16, 32)]


def default_warps(block, backward):
    """num_warps without tuning: about 16 fp32 elements of the row per thread
    forward, 8 backward (x, dy, w and the partial sum live at once), 4 to 32."""
    return min(32, max(4, block // (256 if backward else 512)))


rms_norm_fwd_tuned = tk.autotune(configs=configs(), key=["N"])(rms_norm_fwd)
rms_norm_bwd_dx_tuned = tk.autotune(configs=configs(), key=["N"])(rms_norm_bwd_dx)


def _empty(like, shape, dtype):
    if isinstance(like, np.ndarray):
        return np.empty(shape, dtype=np.dtype(dtype))
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)


def _stride(a):
    return a.strides[0] // a.itemsize if isinstance(a, np.ndarray) else a.stride(0)


def rms_norm(x, w, eps=1e-6, tuned=False):
    """(y, rstd) of an (M, N) x (torch tensors on the GPU, or numpy arrays)."""
    M, N = x.shape
    y = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    rstd = _empty(x, (M,), "float32")
    block = tk.next_power_of_2(N)
    args = (x, y, w, rstd, _stride(x), N, eps)
    if tuned:
        rms_norm_fwd_tuned[(M,)](*args, BLOCK_N=block)
    else:
        rms_norm_fwd[(M,)](*args, BLOCK_N=block, num_warps=default_warps(block, False))
    return y, rstd


def default_programs(M, sms):
    """The P of the first stage without tuning: up to 4 programs per SM, but
    32 rows or more each where the SMs are busy anyway (each program's
    partial row, N fp32, is written and read once more), and never more
    programs than rows."""
    return max(1, min(M, 4 * sms, max(sms, M // 32)))


def rms_norm_bwd(x, dy, w, rstd, programs=None, tuned=False):
    """(dx, dw): dx in x's dtype, dw in fp32. programs: the P of the first
    stage (default: default_programs on a GPU, 8 on the interpreter)."""
    M, N = x.shape
    dx = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    if programs is None:
        if isinstance(x, np.ndarray):
            programs = 8
        else:
            import torch

            sms = torch.cuda.get_device_properties(x.device).multi_processor_count
            programs = default_programs(M, sms)
    programs = min(programs, M)
    part = _empty(x, (programs, N), "float32")
    dw = _empty(x, (N,), "float32")
    block = tk.next_power_of_2(N)
    args = (x, dy, dx, w, rstd, part, _stride(x), M, N)
    if tuned:
        rms_norm_bwd_dx_tuned[(programs,)](*args, BLOCK_N=block)
    else:
        rms_norm_bwd_dx[(programs,)](*args, BLOCK_N=block, num_warps=default_warps(block, True))
    rms_norm_bwd_dw[(tk.cdiv(N, 128),)](part, dw, programs, N, BLOCK_M=32, BLOCK_N=128,
                                        num_warps=4)
    return dx, dw


def reference(x, dy, w, eps):
    """(y, rstd, dx, dw) in float64 from the formulas above."""
    x, dy, w = (a.astype(np.float64) for a in (x, dy, w))
    rstd = 1 / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    xhat = x * rstd
    wdy = w * dy
    dx = rstd * (wdy - xhat * (xhat * wdy).mean(axis=1, keepdims=True))
    return xhat * w, rstd[:, 0], dx, (dy * xhat).sum(axis=0)


def check_on_gpu(M, N, dtype, tuned):
    import torch

    eps = 1e-6
    x = torch.randn(M, N, device="cuda", dtype=dtype) + 0.3
    w = (torch.rand(N, device="cuda") + 0.5).to(dtype)
    dy = torch.randn(M, N, device="cuda", dtype=dtype)
    x64, w64 = (t.double().requires_grad_() for t in (x, w))
    y64 = x64 * torch.rsqrt((x64 * x64).mean(dim=1, keepdim=True) + eps) * w64
    y64.backward(dy.double())
    y, rstd = rms_norm(x, w, eps, tuned=tuned)
    dx, dw = rms_norm_bwd(x, dy, w, rstd, tuned=tuned)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    tk.testing.assert_close(y, y64.detach(), atol=tol, rtol=tol)
    tk.testing.assert_close(dx, x64.grad, atol=tol, rtol=tol)
    tk.testing.assert_close(dw, w64.grad, atol=tol * M ** 0.5, rtol=1e-3)
    diff = float((dx.double() - x64.grad).abs().max())
    print(f"rms norm forward + backward on the GPU, {M}x{N} {str(dtype)[6:]}"
          f"{' (autotuned)' if tuned else ''}: max |dx - torch autograd| = {diff:.3g}: OK")


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        print("--bench: these kernels are timed on a GPU by bench/membound_bench.py (against "
              "Triton on this same source, a device copy and torch); nothing to time here.")
        return 0
    if gpu:
        import torch

        torch.manual_seed(8)
        for M, N, dtype, tuned in ((1000, 1543, torch.float16, False),
                                   (4096, 4000, torch.bfloat16, False),
                                   (300, 8191, torch.float32, True),
                                   (64, 16385, torch.float16, False)):
            check_on_gpu(M, N, dtype, tuned)
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(8)
    M, N = (29, 300) if small else (67, 700)
    eps = 1e-6
    x = rng.normal(0.3, 1, (M, N)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, N).astype(np.float16)
    dy = rng.normal(0, 1, (M, N)).astype(np.float16)
    ref_y, ref_rstd, ref_dx, ref_dw = reference(x, dy, w, eps)
    for tuned in (False, True):
        y, rstd = rms_norm(x, w, eps, tuned=tuned)
        dx, dw = rms_norm_bwd(x, dy, w, rstd, tuned=tuned)
        tk.testing.assert_close(y, ref_y, atol=4e-3, rtol=4e-3)
        tk.testing.assert_close(rstd, ref_rstd, atol=0, rtol=1e-5)
        tk.testing.assert_close(dx, ref_dx, atol=4e-3, rtol=4e-3)
        tk.testing.assert_close(dw, ref_dw, atol=1e-3, rtol=1e-4)
        diff = max(float(np.max(np.abs(a - r))) for a, r in ((y, ref_y), (dx, ref_dx),
                                                             (dw, ref_dw)))
        print(f"rms norm forward + backward on the interpreter, {M}x{N} fp16"
              f"{' (autotuned)' if tuned else ''}: max |tk - numpy| over y, dx, dw = "
              f"{diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
