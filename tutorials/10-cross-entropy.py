"""Tutorial 10: cross-entropy over a large vocabulary, forward and backward, from Python.

For logits x (M rows of V classes) and a target class t per row:

    lse = log(sum_j exp(x_j)),   loss = lse - x_t
    dx_j = dloss * (exp(x_j - lse) - [j == t])

A row whose target is ignore_index has loss 0 and dx 0 (as
torch.nn.functional.cross_entropy's ignore_index). The kernels are
tutorials/10-cross-entropy.tk's, one program per row walking it in BLOCK_V
columns, so V is not bounded by a block (32k to 256k classes):

- cross_entropy_fwd: the log-sum-exp in one walk, keeping the running
  maximum m and the sum s of exp(x - m), rescaled when m grows (both fp32);
  writes loss and lse per row;
- cross_entropy_bwd: a second walk from the stored lse, writing dx; dloss is
  per row (1 / the number of counted rows for a mean over the batch).

Row offsets are 64-bit: M x V passes 2^31 elements at a few thousand rows
of 256k classes.

    python3 tutorials/10-cross-entropy.py [--small]

On a GPU (torch with CUDA) it checks against torch autograd in float64 of
torch.nn.functional.cross_entropy; else, or with TK_INTERPRET=1, on the CPU
interpreter against numpy in float64. bench/membound_bench.py times both
kernels against Triton on this same source, a device copy, torch eager and
torch.compile.
"""

import os
import sys

import numpy as np

import tk


@tk.jit
def cross_entropy_fwd(X, Targets, Loss, Lse, stride, V, ignore_index, BLOCK_V: tk.constexpr):
    row = tk.program_id(0).to(tk.int64)
    base = X + row * stride
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tk.arange(0, BLOCK_V)
        x = tk.load(base + cols, mask=cols < V, other=-float("inf")).to(tk.float32)
        m_new = tk.maximum(m, tk.max(x, axis=0))
        s = s * tk.exp(m - m_new) + tk.sum(tk.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tk.log(s)
    target = tk.load(Targets + row)
    counted = target != ignore_index
    x_target = tk.load(base + target, mask=counted, other=0.0).to(tk.float32)
    tk.store(Loss + row, tk.where(counted, lse - x_target, 0.0))
    tk.store(Lse + row, lse)


@tk.jit
def cross_entropy_bwd(DX, X, Targets, Lse, DLoss, stride, V, ignore_index,
                      BLOCK_V: tk.constexpr):
    row = tk.program_id(0).to(tk.int64)
    target = tk.load(Targets + row)
    lse = tk.load(Lse + row)
    g = tk.where(target != ignore_index, tk.load(DLoss + row), 0.0)
    for start in range(0, V, BLOCK_V):
        cols = start + tk.arange(0, BLOCK_V)
        mask = cols < V
        x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
        p = tk.exp(x - lse)
        dx = (p - tk.where(cols == target, 1.0, 0.0)) * g
        tk.store(DX + row * stride + cols, dx, mask=mask)


def configs():
    """The autotuning space of both kernels: the column block and the warps."""
    return [tk.Config({"BLOCK_V": v}, num_warps=w) for v in (4096, 1024, 2048, 8192, 16384)
            for w in (8, 4, 16)]


DEFAULT = {"BLOCK_V": 4096, "num_warps": 8}  # without tuning: 16 elements per thread per chunk

cross_entropy_fwd_tuned = tk.autotune(configs=configs(), key=["V"])(cross_entropy_fwd)
cross_entropy_bwd_tuned = tk.autotune(configs=configs(), key=["V"])(cross_entropy_bwd)


def _empty(like, shape, dtype):
    if isinstance(like, np.ndarray):
        return np.empty(shape, dtype=np.dtype(dtype))
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)


def _stride(a):
    return a.strides[0] // a.itemsize if isinstance(a, np.ndarray) else a.stride(0)


def cross_entropy(x, targets, ignore_index=-100, config=None, tuned=False):
    """(loss, lse) per row of an (M, V) x (torch tensors on the GPU, or numpy arrays)."""
    M, V = x.shape
    loss, lse = _empty(x, (M,), "float32"), _empty(x, (M,), "float32")
    args = (x, targets, loss, lse, _stride(x), V, ignore_index)
    if tuned:
        cross_entropy_fwd_tuned[(M,)](*args)
    else:
        cross_entropy_fwd[(M,)](*args, **(config or DEFAULT))
    return loss, lse


def cross_entropy_backward(x, targets, lse, dloss, ignore_index=-100, config=None, tuned=False):
    """dx (x's dtype) of an (M, V) x, from the forward's lse and dloss per row."""
    M, V = x.shape
    dx = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    args = (dx, x, targets, lse, dloss, _stride(x), V, ignore_index)
    if tuned:
        cross_entropy_bwd_tuned[(M,)](*args)
    else:
        cross_entropy_bwd[(M,)](*args, **(config or DEFAULT))
    return dx


def reference(x, targets, dloss, ignore_index):
    """(loss, lse, dx) in float64 from the formulas above."""
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    counted = targets != ignore_index
    t = np.where(counted, targets, 0)
    rows = np.arange(len(x))
    loss = np.where(counted, lse - x[rows, t], 0.0)
    dx = np.exp(x - lse[:, None])
    dx[rows, t] -= 1
    return loss, lse, dx * np.where(counted, dloss, 0.0)[:, None]


def check_on_gpu(M, V, dtype, tuned):
    import torch

    x = torch.randn(M, V, device="cuda", dtype=dtype) * 4
    targets = torch.randint(0, V, (M,), device="cuda")
    targets[::7] = -100  # ignored rows
    x64 = x.double().requires_grad_()
    ref = torch.nn.functional.cross_entropy(x64, targets, ignore_index=-100)
    ref.backward()
    counted = int((targets != -100).sum())
    loss, lse = cross_entropy(x, targets, tuned=tuned)
    dloss = torch.full((M,), 1 / counted, device="cuda")
    dx = cross_entropy_backward(x, targets, lse, dloss, tuned=tuned)
    tk.testing.assert_close(loss.double().sum() / counted, ref.detach(), atol=1e-4, rtol=1e-5)
    tol = (1e-2 if dtype == torch.bfloat16 else 2e-3) / counted
    tk.testing.assert_close(dx, x64.grad, atol=tol, rtol=0)
    diff = float((dx.double() - x64.grad).abs().max()) * counted
    print(f"cross-entropy forward + backward on the GPU, {M}x{V} {str(dtype)[6:]}"
          f"{' (autotuned)' if tuned else ''}: mean loss {float(ref):.4f}, max |dx - torch "
          f"autograd| = {diff:.3g} / {counted}: OK")


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        print("--bench: these kernels are timed on a GPU by bench/membound_bench.py (against "
              "Triton on this same source, a device copy and torch); nothing to time here.")
        return 0
    if gpu:
        import torch

        torch.manual_seed(10)
        for M, V, dtype, tuned in ((300, 1000, torch.float16, False),
                                   (512, 32003, torch.bfloat16, False),
                                   (256, 131072, torch.float32, True),
                                   (64, 256019, torch.float16, False)):
            check_on_gpu(M, V, dtype, tuned)
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(10)
    M, V = (13, 2500) if small else (29, 9000)
    x = (rng.normal(0, 4, (M, V))).astype(np.float16)
    targets = rng.integers(0, V, M)
    targets[::5] = -100
    dloss = rng.uniform(0.5, 1.5, M).astype(np.float32)
    ref_loss, ref_lse, ref_dx = reference(x, targets, dloss, -100)
    # Chunks of 1024 columns (3 or 9 per row, the last one ragged), then the
    # autotuned launch (its first config, 4096 columns, on the interpreter).
    for config, tuned in (({"BLOCK_V": 1024, "num_warps": 4}, False), (None, True)):
        loss, lse = cross_entropy(x, targets, config=config, tuned=tuned)
        dx = cross_entropy_backward(x, targets, lse, dloss, config=config, tuned=tuned)
        tk.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-5)
        tk.testing.assert_close(lse, ref_lse, atol=1e-5, rtol=1e-5)
        tk.testing.assert_close(dx, ref_dx, atol=1e-3, rtol=4e-3)
        diff = max(float(np.max(np.abs(a - r))) for a, r in ((loss, ref_loss), (dx, ref_dx)))
        name = "autotuned" if tuned else f"BLOCK_V={config['BLOCK_V']}"
        print(f"cross-entropy forward + backward on the interpreter, {M}x{V} fp16 ({name}): "
              f"max |tk - numpy| over loss, dx = {diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
