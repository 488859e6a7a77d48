"""Tutorial 3: LayerNorm forward, from Python.

    y = (x - mean(x)) / sqrt(var(x) + eps) * w + b      for each row x

The kernel is tutorials/03-layer-norm.tk's: one program per row of an (M, N)
fp16 matrix, walking the row in BLOCK_SIZE chunks three times (mean,
variance, normalise), statistics in fp32, and writing each row's mean and
1/std for the backward pass. (The .tk file also has layer_norm_fwd_fused,
the whole row in registers, with ONE_PASS statistics as an option: the
kernels bench/gpu_bench.py times against Triton on the H200.)

    python3 tutorials/03-layer-norm.py [--small] [--bench [--out DIR]]

On a machine with a GPU (torch with CUDA) it runs on torch tensors and checks
against torch.nn.functional.layer_norm; elsewhere, or with TK_INTERPRET=1, on
the CPU interpreter on numpy arrays, checked against numpy in float64.
--bench (GPU) prints GB/s against Triton and torch and plots them
(03-layer-norm.png).
"""

import os
import sys

import numpy as np

import tk

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None


@tk.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tk.constexpr):
    row = tk.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tk.zeros([BLOCK_SIZE], dtype=tk.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        a = tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
        _mean += a
    mean = tk.sum(_mean, axis=0) / N
    _var = tk.zeros([BLOCK_SIZE], dtype=tk.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        x = tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
        x = tk.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tk.sum(_var, axis=0) / N
    rstd = 1 / tk.sqrt(var + eps)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tk.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tk.load(W + cols, mask=mask)
        b = tk.load(B + cols, mask=mask)
        x = tk.load(X + cols, mask=mask, other=0.0).to(tk.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tk.store(Y + cols, y.to(tk.float16), mask=mask)


def layer_norm(x, weight, bias, eps=1e-5):
    """(y, mean, rstd) of a 2-D fp16 torch tensor (GPU) or numpy array."""
    M, N = x.shape
    if isinstance(x, np.ndarray):
        y = np.empty_like(x)
        mean = np.empty(M, dtype=np.float32)
        rstd = np.empty(M, dtype=np.float32)
        stride = x.strides[0] // x.itemsize
        # On the interpreter, blocks of at most 256 elements, so a row of a
        # few hundred elements is already walked in several chunks.
        block, num_warps = min(256, tk.next_power_of_2(N)), 4
    else:
        import torch

        y = torch.empty_like(x)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        stride = x.stride(0)
        # On the GPU, at most 4096 elements per chunk, 8 per thread.
        block = min(4096, tk.next_power_of_2(N))
        num_warps = min(max(block // 256, 1), 8)
    layer_norm_fwd[(M,)](x, y, weight, bias, mean, rstd, stride, N, eps, BLOCK_SIZE=block,
                         num_warps=num_warps)
    return y, mean, rstd


if triton is not None:
    # The same computation in Triton (chunks of the row, fp32 statistics),
    # for --bench only.
    @triton.jit
    def triton_layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        X += r * stride
        Y += r * stride
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            acc += tl.load(X + c, mask=c < N, other=0.0).to(tl.float32)
        mu = tl.sum(acc, axis=0) / N
        acc2 = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            d = tl.where(c < N, tl.load(X + c, mask=c < N, other=0.0).to(tl.float32) - mu, 0.0)
            acc2 += d * d
        inv = 1 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
        tl.store(Mean + r, mu)
        tl.store(Rstd + r, inv)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            m = c < N
            v = (tl.load(X + c, mask=m, other=0.0).to(tl.float32) - mu) * inv
            tl.store(Y + c, (v * tl.load(W + c, mask=m) + tl.load(B + c, mask=m)).to(tl.float16),
                     mask=m)


def bench(small, out_dir):
    import torch

    providers = ["tk"] + (["triton"] if triton is not None else []) + ["torch"]
    cols = [1024, 4096] if small else [512 * i for i in range(2, 33, 2)]

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["N"], x_vals=cols, line_arg="provider", line_vals=providers,
        line_names=providers, ylabel="GB/s", plot_name="03-layer-norm", args={"M": 4096}))
    def run(M, N, provider):
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        w = torch.rand(N, device="cuda", dtype=torch.float16)
        b = torch.rand(N, device="cuda", dtype=torch.float16)
        if provider == "tk":
            fn = lambda: layer_norm(x, w, b)  # noqa: E731
        elif provider == "triton":
            y = torch.empty_like(x)
            mean = torch.empty(M, device="cuda")
            rstd = torch.empty(M, device="cuda")
            block = min(4096, triton.next_power_of_2(N))
            warps = min(max(block // 256, 1), 8)
            fn = lambda: triton_layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N,  # noqa
                                                     1e-5, BLOCK=block, num_warps=warps)
        else:
            fn = lambda: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)  # noqa: E731
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        return 2 * x.numel() * x.element_size() / ms * 1e-6

    run.run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/03-layer-norm.png")


def reference(x, weight, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * weight.astype(np.float64) + bias.astype(np.float64)
    return y, mean[:, 0], 1 / np.sqrt(var[:, 0] + eps)


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        if not gpu:
            print("--bench times the kernel on a GPU against torch and Triton; there is no GPU "
                  "launch here (no CUDA device, or TK_INTERPRET=1), so nothing to time.")
            return 0
        bench(small, argv[argv.index("--out") + 1] if "--out" in argv else ".")
        return 0
    M, N = (13, 700) if small else (151, 1543)
    if gpu:
        import torch

        torch.manual_seed(2)
        for M, N in ((M, N), (64, 8192)):
            x = torch.randn(M, N, device="cuda", dtype=torch.float16) * 2 + 0.5
            w = (torch.rand(N, device="cuda") + 0.5).half()
            b = (torch.rand(N, device="cuda") * 2 - 1).half()
            y, mean, rstd = layer_norm(x, w, b, 1e-5)
            t = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
            tk.testing.assert_close(mean, x.float().mean(dim=1), atol=1e-3, rtol=1e-3)
            tk.testing.assert_close(y, t, atol=1e-2, rtol=2e-3)
            diff = float((y.float() - t).abs().max())
            print(f"layer norm on the GPU, {M}x{N} fp16: max |tk - torch| = {diff:.3g}: OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(2)
    x = (rng.normal(0.5, 2, (M, N))).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, N).astype(np.float16)
    bias = rng.uniform(-1, 1, N).astype(np.float16)
    eps = 1e-5
    y, mean, rstd = layer_norm(x, weight, bias, eps)
    ref_y, ref_mean, ref_rstd = reference(x, weight, bias, eps)
    tk.testing.assert_close(mean, ref_mean, atol=1e-4, rtol=1e-4)
    tk.testing.assert_close(rstd, ref_rstd, atol=1e-4, rtol=1e-4)
    # y is rounded to fp16: within a couple of fp16 ulps of the fp64 result.
    tk.testing.assert_close(y, ref_y, atol=1e-2, rtol=2e-3)
    diff = float(np.max(np.abs(y.astype(np.float64) - ref_y)))
    print(f"layer norm on the interpreter, {M}x{N} fp16: max |tk - numpy| = {diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
