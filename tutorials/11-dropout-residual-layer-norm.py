"""Tutorial 11: fused dropout + residual add + LayerNorm forward, from Python.

The step between two blocks of a transformer, per row:

    h = dropout(x, p) + r                    (the new residual stream)
    y = (h - mean(h)) * rstd(h) * w + b      (its LayerNorm)

in one kernel (tutorials/11-dropout-residual-layer-norm.tk's), one program
per row, the whole row in one block (BLOCK_N = the next power of two >= N):
x and r read once, h, y and the keep mask written once, the statistics in
fp32 from h as computed (not from h rounded to its dtype). Dropout keeps an
element when tk.rand(seed, row * N + col) >= p and scales it by 1 / (1 - p);
the keep mask (int8) is written for the backward, which needs it, and the
row's mean and rstd as tutorial 3's forward does.

    python3 tutorials/11-dropout-residual-layer-norm.py [--small]

On a GPU (torch with CUDA) it checks against torch in float64 (with the
kernel's own keep mask) and the kept fraction against 1 - p; else, or with
TK_INTERPRET=1, on the CPU interpreter against numpy in float64.
bench/membound_bench.py times it against Triton on this same source, a
device copy, torch eager and torch.compile.
"""

import os
import sys

import numpy as np

import tk


@tk.jit
def dropout_add_layer_norm_fwd(X, R, H, Y, W, B, Keep, Mean, Rstd, stride, N, p, seed, eps,
                               BLOCK_N: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    offs = row * stride + cols
    x = tk.load(X + offs, mask=mask, other=0.0).to(tk.float32)
    r = tk.load(R + offs, mask=mask, other=0.0).to(tk.float32)
    keep = tk.rand(seed, row * N + cols) >= p
    h = tk.where(keep, x / (1 - p), 0.0) + r
    tk.store(H + offs, h, mask=mask)
    tk.store(Keep + offs, keep.to(tk.int8), mask=mask)
    mean = tk.sum(h, axis=0) / N
    centred = tk.where(mask, h - mean, 0.0)
    rstd = tk.rsqrt(tk.sum(centred * centred, axis=0) / N + eps)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    w = tk.load(W + cols, mask=mask)
    b = tk.load(B + cols, mask=mask)
    tk.store(Y + offs, centred * rstd * w + b, mask=mask)


def configs():
    """The autotuning space (BLOCK_N is the row's)."""
    return [tk.Config({}, num_warps=w) for w in (4, 8, 16, 32)]


def default_warps(block):
    """num_warps without tuning: about 8 fp32 elements of the row per thread
    (x, r, h and the random bits live at once), 4 to 32 warps."""
    return min(32, max(4, block // 256))


dropout_add_layer_norm_fwd_tuned = tk.autotune(configs=configs(), key=["N"])(
    dropout_add_layer_norm_fwd)


def dropout_add_layer_norm(x, r, w, b, p, seed, eps=1e-5, tuned=False):
    """(y, h, keep, mean, rstd) of (M, N) x and r (torch tensors on the GPU, or numpy arrays)."""
    M, N = x.shape
    if isinstance(x, np.ndarray):
        h, y, keep = np.empty_like(x), np.empty_like(x), np.empty((M, N), dtype=np.int8)
        mean, rstd = np.empty(M, dtype=np.float32), np.empty(M, dtype=np.float32)
        stride = x.strides[0] // x.itemsize
    else:
        import torch

        h, y = torch.empty_like(x), torch.empty_like(x)
        keep = torch.empty((M, N), dtype=torch.int8, device=x.device)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        stride = x.stride(0)
    block = tk.next_power_of_2(N)
    args = (x, r, h, y, w, b, keep, mean, rstd, stride, N, p, seed, eps)
    if tuned:
        dropout_add_layer_norm_fwd_tuned[(M,)](*args, BLOCK_N=block)
    else:
        dropout_add_layer_norm_fwd[(M,)](*args, BLOCK_N=block, num_warps=default_warps(block))
    return y, h, keep, mean, rstd


def reference(x, r, w, b, keep, p, eps):
    """(y, h, mean, rstd) in float64 for the given keep mask."""
    x, r, w, b = (a.astype(np.float64) for a in (x, r, w, b))
    h = np.where(keep != 0, x / (1 - p), 0.0) + r
    mean = h.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((h - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    return (h - mean) * rstd * w + b, h, mean[:, 0], rstd[:, 0]


def check_kept_fraction(keep, p):
    """The fraction kept within 6 standard deviations of 1 - p; returns it."""
    n = keep.size if isinstance(keep, np.ndarray) else keep.numel()
    kept = float((keep != 0).sum()) / n
    assert abs(kept - (1 - p)) < 6 * (p * (1 - p) / n) ** 0.5, (kept, 1 - p)
    return kept


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        print("--bench: this kernel is timed on a GPU by bench/membound_bench.py (against "
              "Triton on this same source, a device copy and torch); nothing to time here.")
        return 0
    eps = 1e-5
    if gpu:
        import torch

        torch.manual_seed(11)
        for M, N, dtype, p, tuned in ((1000, 1543, torch.float16, 0.1, False),
                                      (4096, 4000, torch.bfloat16, 0.2, False),
                                      (300, 8191, torch.float32, 0.5, True),
                                      (64, 16385, torch.float16, 0.1, False)):
            x = torch.randn(M, N, device="cuda", dtype=dtype)
            r = torch.randn(M, N, device="cuda", dtype=dtype) * 2 + 0.5
            w = (torch.rand(N, device="cuda") + 0.5).to(dtype)
            b = (torch.rand(N, device="cuda") - 0.5).to(dtype)
            y, h, keep, mean, rstd = dropout_add_layer_norm(x, r, w, b, p, 1234, eps, tuned)
            h64 = torch.where(keep != 0, x.double() / (1 - p), 0.0) + r.double()
            y64 = torch.nn.functional.layer_norm(h64, (N,), w.double(), b.double(), eps)
            tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
            tk.testing.assert_close(h, h64, atol=tol, rtol=tol)
            tk.testing.assert_close(y, y64, atol=tol * 2, rtol=tol)
            tk.testing.assert_close(rstd, 1 / torch.sqrt(h64.var(dim=1, unbiased=False) + eps),
                                    atol=0, rtol=1e-4)
            kept = check_kept_fraction(keep, p)
            diff = float((y.double() - y64).abs().max())
            print(f"dropout + residual + layer norm on the GPU, {M}x{N} {str(dtype)[6:]} p={p}"
                  f"{' (autotuned)' if tuned else ''}: kept {kept:.4f}, max |y - torch| = "
                  f"{diff:.3g}: OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(11)
    M, N = (29, 300) if small else (67, 700)
    x = rng.normal(0, 1, (M, N)).astype(np.float16)
    r = rng.normal(0.5, 2, (M, N)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, N).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, N).astype(np.float16)
    for p, tuned in ((0.1, False), (0.5, True)):
        y, h, keep, mean, rstd = dropout_add_layer_norm(x, r, w, b, p, 1234, eps, tuned)
        ref_y, ref_h, ref_mean, ref_rstd = reference(x, r, w, b, keep, p, eps)
        tk.testing.assert_close(h, ref_h, atol=4e-3, rtol=2e-3)
        tk.testing.assert_close(mean, ref_mean, atol=1e-4, rtol=1e-4)
        tk.testing.assert_close(rstd, ref_rstd, atol=0, rtol=1e-4)
        tk.testing.assert_close(y, ref_y, atol=1e-2, rtol=4e-3)
        kept = check_kept_fraction(keep, p)
        # The same seed gives the same mask, another seed another one.
        again = dropout_add_layer_norm(x, r, w, b, p, 1234, eps, tuned)[2]
        other = dropout_add_layer_norm(x, r, w, b, p, 99, eps, tuned)[2]
        assert (again == keep).all() and (other != keep).any()
        diff = float(np.max(np.abs(y.astype(np.float64) - ref_y)))
        print(f"dropout + residual + layer norm on the interpreter, {M}x{N} fp16 p={p}"
              f"{' (autotuned)' if tuned else ''}: kept {kept:.4f}, max |y - numpy| = "
              f"{diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
