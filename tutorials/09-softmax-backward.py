"""Tutorial 9: softmax backward, from Python.

    y = softmax(x) per row;  given dy:  dx = y * (dy - sum(y * dy))

The kernel is tutorials/09-softmax-backward.tk's, written the plain way: one
program per row, the whole row in one block (BLOCK_N = the next power of two
>= N), y and dy read once, the row's sum in fp32, dx written once. It needs
only the forward's output y, not x.

    python3 tutorials/09-softmax-backward.py [--small]

On a GPU (torch with CUDA) it checks against torch autograd in float64 of
torch.softmax; else, or with TK_INTERPRET=1, on the CPU interpreter against
numpy in float64. bench/membound_bench.py times it against Triton on this
same source, a device copy, torch eager and torch.compile.
"""

import os
import sys

import numpy as np

import tk


@tk.jit
def softmax_bwd(DX, Y, DY, stride, N, BLOCK_N: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    y = tk.load(Y + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    dy = tk.load(DY + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    dot = tk.sum(y * dy, axis=0)
    tk.store(DX + row * stride + cols, y * (dy - dot), mask=mask)


def configs():
    """The autotuning space (BLOCK_N is the row's)."""
    return [tk.Config({}, num_warps=w) for w in (4, 8, 16, 32)]


def default_warps(block):
    """num_warps without tuning: about 16 elements of each of y and dy per thread, 4 to 32."""
    return min(32, max(4, block // 512))


softmax_bwd_tuned = tk.autotune(configs=configs(), key=["N"])(softmax_bwd)


def softmax_backward(y, dy, tuned=False):
    """dx of an (M, N) y and dy (torch tensors on the GPU, or numpy arrays), in y's dtype."""
    M, N = y.shape
    if isinstance(y, np.ndarray):
        dx, stride = np.empty_like(y), y.strides[0] // y.itemsize
    else:
        dx, stride = y.new_empty(y.shape), y.stride(0)
    block = tk.next_power_of_2(N)
    if tuned:
        softmax_bwd_tuned[(M,)](dx, y, dy, stride, N, BLOCK_N=block)
    else:
        softmax_bwd[(M,)](dx, y, dy, stride, N, BLOCK_N=block, num_warps=default_warps(block))
    return dx


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        print("--bench: this kernel is timed on a GPU by bench/membound_bench.py (against "
              "Triton on this same source, a device copy and torch); nothing to time here.")
        return 0
    if gpu:
        import torch

        torch.manual_seed(9)
        for M, N, dtype, tuned in ((1000, 1543, torch.float16, False),
                                   (4096, 4000, torch.bfloat16, False),
                                   (300, 8191, torch.float32, True),
                                   (64, 32769, torch.float16, False)):
            x64 = (torch.randn(M, N, device="cuda", dtype=torch.float64) * 3).requires_grad_()
            y64 = torch.softmax(x64, dim=1)
            dy = torch.randn(M, N, device="cuda", dtype=dtype)
            y64.backward(dy.double())
            dx = softmax_backward(y64.detach().to(dtype), dy, tuned=tuned)
            # y rounded to dtype, dx rounded at the store: relative errors of
            # a few units of dtype's last place, against |y| * |dy|.
            scale = float((y64.detach().abs() * (dy.double().abs() + 1)).max())
            tol = (2e-2 if dtype == torch.bfloat16 else 2e-3) * scale
            tk.testing.assert_close(dx, x64.grad, atol=tol, rtol=0)
            diff = float((dx.double() - x64.grad).abs().max())
            print(f"softmax backward on the GPU, {M}x{N} {str(dtype)[6:]}"
                  f"{' (autotuned)' if tuned else ''}: max |dx - torch autograd| = {diff:.3g} "
                  f"(of max |y| (|dy| + 1) = {scale:.3g}): OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(9)
    M, N = (29, 300) if small else (97, 1100)
    x = rng.normal(0, 3, (M, N))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    dy = rng.normal(0, 1, (M, N)).astype(np.float32)
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    expected = y64 * (dy64 - (y64 * dy64).sum(axis=1, keepdims=True))
    for tuned in (False, True):
        dx = softmax_backward(y, dy, tuned=tuned)
        tk.testing.assert_close(dx, expected, atol=1e-6, rtol=1e-5)
        diff = float(np.max(np.abs(dx - expected)))
        print(f"softmax backward on the interpreter, {M}x{N} fp32"
              f"{' (autotuned)' if tuned else ''}: max |tk - numpy| = {diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
