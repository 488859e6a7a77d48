"""Tutorial 7: LayerNorm backward, from Python.

    y = (x - mean) * rstd * w + b       (tutorial 3's forward, per row x)

Given dy, the gradients are, per row (xhat = (x - mean) * rstd):

    dx = rstd * (w dy - mean(xhat * w dy) xhat - mean(w dy))
    dw = sum over rows of dy * xhat,    db = sum over rows of dy

The kernels are tutorials/07-layer-norm-backward.tk's, written the plain way
(one whole row per step, BLOCK_N = the next power of two >= N):

- layer_norm_bwd_dx: a grid of P programs; program p takes rows p, p + P,
  ... and writes their dx, and sums dy * xhat and dy of its rows in fp32
  registers: the first stage of dw and db, one partial row each per program
  (DW_partial, DB_partial: P x N fp32);
- layer_norm_bwd_dwdb: the second stage, each program summing BLOCK_N columns
  of the P partial rows (no atomics, no locks: the result does not depend on
  the order the programs ran in).

The statistics (mean, rstd) are the forward's, in fp32. dw and db come out
in fp32 (the host casts them to w's dtype).

    python3 tutorials/07-layer-norm-backward.py [--small]

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
def layer_norm_bwd_dx(X, DY, DX, W, Mean, Rstd, DW_partial, DB_partial, stride, M, N,
                      BLOCK_N: tk.constexpr):
    pid = tk.program_id(0)
    step = tk.num_programs(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    w = tk.load(W + cols, mask=mask, other=0.0).to(tk.float32)
    dw = tk.zeros([BLOCK_N], dtype=tk.float32)
    db = tk.zeros([BLOCK_N], dtype=tk.float32)
    for row in range(pid, M, step):
        x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
        dy = tk.load(DY + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
        mean = tk.load(Mean + row)
        rstd = tk.load(Rstd + row)
        xhat = tk.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tk.sum(xhat * wdy, axis=0) / N
        c2 = tk.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tk.store(DX + row * stride + cols, dx, mask=mask)
        dw += dy * xhat
        db += dy
    tk.store(DW_partial + pid * N + cols, dw, mask=mask)
    tk.store(DB_partial + pid * N + cols, db, mask=mask)


@tk.jit
def layer_norm_bwd_dwdb(DW_partial, DB_partial, DW, DB, P, N, BLOCK_M: tk.constexpr,
                        BLOCK_N: tk.constexpr):
    cols = tk.program_id(0) * BLOCK_N + tk.arange(0, BLOCK_N)
    dw = tk.zeros([BLOCK_M, BLOCK_N], dtype=tk.float32)
    db = tk.zeros([BLOCK_M, BLOCK_N], dtype=tk.float32)
    for start in range(0, P, BLOCK_M):
        rows = start + tk.arange(0, BLOCK_M)
        mask = (rows[:, None] < P) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tk.load(DW_partial + offs, mask=mask, other=0.0)
        db += tk.load(DB_partial + offs, mask=mask, other=0.0)
    tk.store(DW + cols, tk.sum(dw, axis=0), mask=cols < N)
    tk.store(DB + cols, tk.sum(db, axis=0), mask=cols < N)


def dx_configs():
    """The autotuning space of layer_norm_bwd_dx (BLOCK_N is the row's)."""
    return [tk.Config({}, num_warps=w) for w in (4, 8, 16, 32)]


def default_warps(block):
    """num_warps without tuning: about 8 fp32 elements of each row per thread
    (x, dy, w, dx and the two partial sums all live at once), 4 to 32 warps."""
    return min(32, max(4, block // 256))


layer_norm_bwd_dx_tuned = tk.autotune(configs=dx_configs(), key=["N"])(layer_norm_bwd_dx)


def default_programs(M, sms):
    """The P of the first stage without tuning: up to 4 programs per SM, but
    32 rows or more each where the SMs are busy anyway (each program's
    partial rows, 2 x N fp32, are written and read once more), and never more
    programs than rows."""
    return max(1, min(M, 4 * sms, max(sms, M // 32)))


def layer_norm_bwd(x, dy, w, mean, rstd, programs=None, tuned=False):
    """(dx, dw, db) of an (M, N) x (torch tensors on the GPU, or numpy arrays):
    dx in x's dtype, dw and db in fp32. programs: the P of the first stage
    (default: default_programs on a GPU, 8 on the interpreter)."""
    M, N = x.shape
    block = tk.next_power_of_2(N)
    if isinstance(x, np.ndarray):
        programs = min(M, programs or 8)
        dx = np.empty_like(x)
        part = np.empty((2, programs, N), dtype=np.float32)
        dw, db = np.empty(N, dtype=np.float32), np.empty(N, dtype=np.float32)
        stride = x.strides[0] // x.itemsize
    else:
        import torch

        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        programs = min(M, programs or default_programs(M, sms))
        dx = torch.empty_like(x)
        part = torch.empty((2, programs, N), dtype=torch.float32, device=x.device)
        dw = torch.empty(N, dtype=torch.float32, device=x.device)
        db = torch.empty(N, dtype=torch.float32, device=x.device)
        stride = x.stride(0)
    args = (x, dy, dx, w, mean, rstd, part[0], part[1], stride, M, N)
    if tuned:
        layer_norm_bwd_dx_tuned[(programs,)](*args, BLOCK_N=block)
    else:
        layer_norm_bwd_dx[(programs,)](*args, BLOCK_N=block, num_warps=default_warps(block))
    cols = 128
    layer_norm_bwd_dwdb[(tk.cdiv(N, cols),)](part[0], part[1], dw, db, programs, N, BLOCK_M=32,
                                             BLOCK_N=cols, num_warps=4)
    return dx, dw, db


def reference(x, dy, w, eps):
    """(dx, dw, db, mean, rstd) in float64 from the formulas above."""
    x, dy, w = (a.astype(np.float64) for a in (x, dy, w))
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    wdy = w * dy
    dx = rstd * (wdy - xhat * (xhat * wdy).mean(axis=1, keepdims=True)
                 - wdy.mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0), mean[:, 0], rstd[:, 0]


def check_on_gpu(M, N, dtype, tuned):
    import torch

    eps = 1e-5
    x = torch.randn(M, N, device="cuda", dtype=dtype) * 2 + 0.5
    w = (torch.rand(N, device="cuda") + 0.5).to(dtype)
    b = (torch.rand(N, device="cuda") - 0.5).to(dtype)
    dy = torch.randn(M, N, device="cuda", dtype=dtype)
    x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
    y64 = torch.nn.functional.layer_norm(x64, (N,), w64, b64, eps)
    y64.backward(dy.double())
    mean = x.double().mean(dim=1).float()
    rstd = (1 / torch.sqrt(x.double().var(dim=1, unbiased=False) + eps)).float()
    dx, dw, db = layer_norm_bwd(x, dy, w, mean, rstd, tuned=tuned)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    tk.testing.assert_close(dx, x64.grad, atol=tol, rtol=tol)
    tk.testing.assert_close(dw, w64.grad, atol=tol * M ** 0.5, rtol=1e-3)
    tk.testing.assert_close(db, b64.grad, atol=tol * M ** 0.5, rtol=1e-3)
    diff = float((dx.double() - x64.grad).abs().max())
    print(f"layer norm backward on the GPU, {M}x{N} {str(dtype)[6:]}"
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

        torch.manual_seed(7)
        for M, N, dtype, tuned in ((1000, 1543, torch.float16, False),
                                   (4096, 4000, torch.bfloat16, False),
                                   (300, 8191, torch.float32, True),
                                   (64, 16385, torch.float16, False)):
            check_on_gpu(M, N, dtype, tuned)
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(7)
    M, N = (29, 300) if small else (67, 700)
    eps = 1e-5
    x = rng.normal(0.5, 2, (M, N)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, N).astype(np.float16)
    dy = rng.normal(0, 1, (M, N)).astype(np.float16)
    ref_dx, ref_dw, ref_db, mean, rstd = reference(x, dy, w, eps)
    # 8 programs over 29 or 67 rows: each takes 3 to 9 of them, the last
    # ones fewer; the autotuned launch (its first config on the interpreter).
    for tuned in (False, True):
        dx, dw, db = layer_norm_bwd(x, dy, w, mean.astype(np.float32),
                                    rstd.astype(np.float32), tuned=tuned)
        tk.testing.assert_close(dx, ref_dx, atol=4e-3, rtol=4e-3)
        tk.testing.assert_close(dw, ref_dw, atol=1e-3, rtol=1e-4)
        tk.testing.assert_close(db, ref_db, atol=1e-3, rtol=1e-4)
        diff = max(float(np.max(np.abs(a - r))) for a, r in ((dx, ref_dx), (dw, ref_dw),
                                                             (db, ref_db)))
        print(f"layer norm backward on the interpreter, {M}x{N} fp16"
              f"{' (autotuned)' if tuned else ''}: max |tk - numpy| over dx, dw, db = "
              f"{diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
