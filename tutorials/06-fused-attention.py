"""Tutorial 6: fused attention forward and backward, from Python.

    O = softmax(Q K^T * sm_scale) V       per (batch, head), optionally causal

The kernels are tutorials/06-fused-attention.tk's (FlashAttention-2's
algorithm; the header there explains them), loaded from that file: a .tk file
is Python, so one source serves tkc, the C++ API and this script.
`attention(q, k, v, causal, sm_scale)` is a torch.autograd.Function on GPU
tensors: the forward autotunes attn_fwd over FWD_CONFIGS (keyed by sequence
length, head dimension and causality), the backward runs attn_bwd_preprocess
and attn_bwd with BWD_CONFIG. `forward_config(head_dim)` is the default a
caller gets without tuning (`attention(..., tune=False)`).

    python3 tutorials/06-fused-attention.py [--small] [--bench [--out DIR]]

On a machine with a GPU (torch with CUDA) it checks the forward and the three
gradients against torch's attention in float32 on ragged shapes; elsewhere, or
with TK_INTERPRET=1, it runs the kernels on the CPU interpreter on numpy
arrays and checks them against numpy in float64. --bench (GPU) prints TFLOP/s
of the forward against torch's scaled_dot_product_attention (and Triton's
upstream tutorial kernel is not used: bench/attention_bench.py compares tk and
Triton compiling one source).
"""

import importlib.machinery
import importlib.util
import math
import os
import pathlib
import sys

import numpy as np

import tk


def _load_kernels():
    path = pathlib.Path(__file__).resolve().with_name("06-fused-attention.tk")
    loader = importlib.machinery.SourceFileLoader("fused_attention_tk", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


kernels = _load_kernels()

# (BLOCK_M, BLOCK_N, num_warps, num_stages): bench/attention_bench.py's four,
# whose best on the H200 (bench/results/attention.json) was 64x64x4x3 at
# 1024 tokens and 128x64 beyond.
FWD_CONFIGS = [
    tk.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
    for bm, bn, w, s in ((128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 2), (64, 64, 4, 3))
]
BWD_CONFIG = dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, num_warps=4,
                  num_stages=2)
PRE_BLOCK = 128

attn_fwd_tuned = tk.autotune(configs=FWD_CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"])(
    kernels.attn_fwd)


def forward_config(head_dim):
    """The untuned default: 128x64 on 4 warps (8 at head dim 128), 3 stages."""
    return dict(BLOCK_M=128, BLOCK_N=64, num_warps=8 if head_dim >= 128 else 4, num_stages=3)


def _strides(t):
    return t.stride(0), t.stride(1), t.stride(2)


def _forward(q, k, v, causal, sm_scale, tune=True):
    import torch

    Z, H, N, D = q.shape
    o = torch.empty_like(q)
    m = torch.empty((Z * H, N), device=q.device, dtype=torch.float32)
    args = (q, k, v, o, m, sm_scale, *_strides(q), H, N)
    even = dict(HEAD_DIM=D, CAUSAL=causal, EVEN_N=N % 128 == 0)
    if tune:
        grid = lambda meta: (tk.cdiv(N, meta["BLOCK_M"]), Z * H)  # noqa: E731
        attn_fwd_tuned[grid](*args, **even)
    else:
        c = forward_config(D)
        kernels.attn_fwd[(tk.cdiv(N, c["BLOCK_M"]), Z * H)](*args, **even, **c)
    return o, m


def _backward(q, k, v, o, m, do, causal, sm_scale):
    Z, H, N, D = q.shape
    do = do.contiguous()
    dq, dk, dv = q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)
    delta = m.new_empty(m.shape)
    kernels.attn_bwd_preprocess[(tk.cdiv(N, PRE_BLOCK), Z * H)](
        o, do, delta, *_strides(o), H, N, BLOCK_M=PRE_BLOCK, HEAD_DIM=D)
    c = BWD_CONFIG
    kernels.attn_bwd[(tk.cdiv(N, c["BLOCK_N1"]), Z * H)](
        q, k, v, sm_scale, do, dq, dk, dv, m, delta, *_strides(q), H, N, HEAD_DIM=D,
        CAUSAL=causal, EVEN_N=N % 128 == 0, **c)
    return dq, dk, dv


def _autograd_function():
    import torch

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale, tune):
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            o, m = _forward(q, k, v, causal, sm_scale, tune)
            ctx.save_for_backward(q, k, v, o, m)
            ctx.causal, ctx.sm_scale = causal, sm_scale
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, m = ctx.saved_tensors
            dq, dk, dv = _backward(q, k, v, o, m, do, ctx.causal, ctx.sm_scale)
            return dq, dk, dv, None, None, None

    return Attention


_Attention = None


def attention(q, k, v, causal=False, sm_scale=None, tune=True):
    """Attention of (Z, H, N_CTX, HEAD_DIM) fp16/bf16 CUDA tensors, differentiable."""
    global _Attention
    if _Attention is None:
        _Attention = _autograd_function()
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    return _Attention.apply(q, k, v, causal, sm_scale, tune)


# -- the CPU interpreter path ------------------------------------------------


def attention_interpreted(q, k, v, do, causal, sm_scale, block=16):
    """Forward and backward on numpy arrays (Z, H, N, D) on the interpreter:
    (o, dq, dk, dv). Small blocks keep the interpreter quick."""
    Z, H, N, D = q.shape
    strides = tuple(s // q.itemsize for s in q.strides[:3])
    o = np.empty_like(q)
    m = np.empty((Z * H, N), dtype=np.float32)
    kernels.attn_fwd[(tk.cdiv(N, 2 * block), Z * H)](
        q, k, v, o, m, sm_scale, *strides, H, N, HEAD_DIM=D, BLOCK_M=2 * block, BLOCK_N=block,
        CAUSAL=causal, EVEN_N=False)
    delta = np.empty_like(m)
    kernels.attn_bwd_preprocess[(tk.cdiv(N, 2 * block), Z * H)](
        o, do, delta, *strides, H, N, BLOCK_M=2 * block, HEAD_DIM=D)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    kernels.attn_bwd[(tk.cdiv(N, 2 * block), Z * H)](
        q, k, v, sm_scale, do, dq, dk, dv, m, delta, *strides, H, N, BLOCK_M1=block,
        BLOCK_N1=2 * block, BLOCK_M2=2 * block, BLOCK_N2=block, HEAD_DIM=D, CAUSAL=causal,
        EVEN_N=False)
    return o, dq, dk, dv


def reference(q, k, v, do, causal, sm_scale):
    """(o, dq, dk, dv) in float64 with numpy."""
    q, k, v, do = (a.astype(np.float64) for a in (q, k, v, do))
    s = np.einsum("zhid,zhjd->zhij", q, k) * sm_scale
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    o = np.einsum("zhij,zhjd->zhid", p, v)
    dv = np.einsum("zhij,zhid->zhjd", p, do)
    dp = np.einsum("zhid,zhjd->zhij", do, v)
    ds = p * (dp - (o * do).sum(axis=-1, keepdims=True))
    dq = np.einsum("zhij,zhjd->zhid", ds, k) * sm_scale
    dk = np.einsum("zhij,zhid->zhjd", ds, q) * sm_scale
    return o, dq, dk, dv


def check_interpreter(small):
    rng = np.random.default_rng(6)
    Z, H, N, D = (1, 2, 37, 16) if small else (2, 2, 70, 32)
    sm_scale = 0.5 / math.sqrt(D)
    for causal in (False, True):
        q, k, v, do = (rng.uniform(-1, 1, (Z, H, N, D)).astype(np.float16) for _ in range(4))
        got = attention_interpreted(q, k, v, do, causal, sm_scale)
        want = reference(q, k, v, do, causal, sm_scale)
        for name, g, w in zip(("O", "dQ", "dK", "dV"), got, want):
            # fp16 outputs, P and dS rounded to fp16 before their dots: a few
            # fp16 epsilons of the largest value.
            tol = 8 * 2.0**-11 * max(1.0, float(np.abs(w).max()))
            err = float(np.abs(g.astype(np.float64) - w).max())
            assert err <= tol, f"{name} (causal={causal}): max |tk - numpy| = {err:.3g} > {tol:.3g}"
        print(f"fused attention on the interpreter, {Z}x{H}x{N}x{D} fp16, causal={causal}: "
              "O, dQ, dK, dV match numpy: OK")


def check_gpu(small):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(6)
    shapes = ((1, 2, 77, 64), (2, 3, 300, 128)) if small else ((2, 4, 1000, 64), (1, 4, 1027, 128),
                                                                (1, 2, 2048, 64))
    for dtype in (torch.float16, torch.bfloat16):
        for Z, H, N, D in shapes:
            for causal in (False, True):
                q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=dtype).requires_grad_()
                           for _ in range(3))
                do = torch.randn(Z, H, N, D, device="cuda", dtype=dtype)
                o = attention(q, k, v, causal, tune=not small)
                o.backward(do)
                got = (o, q.grad, k.grad, v.grad)
                qr, kr, vr = (t.detach().float().requires_grad_() for t in (q, k, v))
                ref = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
                ref.backward(do.float())
                eps = 2.0**-8 if dtype == torch.bfloat16 else 2.0**-11
                for name, g, w in zip(("O", "dQ", "dK", "dV"), got, (ref, qr.grad, kr.grad,
                                                                      vr.grad)):
                    tol = 16 * eps * max(1.0, float(w.abs().max()))
                    err = float((g.float() - w).abs().max())
                    assert err <= tol, (f"{name} {dtype} {Z}x{H}x{N}x{D} causal={causal}: "
                                        f"max |tk - torch| = {err:.3g} > {tol:.3g}")
                print(f"fused attention on the GPU, {str(dtype)[6:]} {Z}x{H}x{N}x{D} "
                      f"causal={causal}: O, dQ, dK, dV match torch: OK")


def benchmark(small):
    import torch
    import torch.nn.functional as F

    seqs = [1024, 2048] if small else [1024, 2048, 4096, 8192, 16384]

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["N_CTX"], x_vals=seqs, line_arg="provider", line_vals=["tk", "torch"],
        line_names=["tk", "torch SDPA"], ylabel="TFLOP/s", plot_name="06-fused-attention",
        args={"D": 64 if small else 128, "causal": False}))
    def run(N_CTX, D, causal, provider):
        Z, H = (4, 16) if small else (4, 32)
        q, k, v = (torch.randn(Z, H, N_CTX, D, device="cuda", dtype=torch.float16)
                   for _ in range(3))
        if provider == "tk":
            fn = lambda: attention(q, k, v, causal)  # noqa: E731
        else:
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        flops = 4 * Z * H * N_CTX * N_CTX * D * (0.5 if causal else 1.0)
        return flops / ms * 1e-9

    return run


def bench(small, out_dir):
    benchmark(small).run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/06-fused-attention.png")


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        if not gpu:
            print("--bench times the kernel on a GPU against torch; there is no GPU launch here "
                  "(no CUDA device, or TK_INTERPRET=1), so nothing to time.")
            return 0
        bench(small, argv[argv.index("--out") + 1] if "--out" in argv else ".")
        return 0
    if gpu:
        check_gpu(small)
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    check_interpreter(small)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
