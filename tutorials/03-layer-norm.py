"""Tutorial 3: LayerNorm forward, from Python.

    y = (x - mean(x)) / sqrt(var(x) + eps) * w + b      for each row x

The kernels are tutorials/03-layer-norm.tk's, statistics in fp32, each row's
mean and 1/std written for the backward pass:

- layer_norm_fwd: one program per row of an (M, N) fp16 matrix, walking the
  row in BLOCK_SIZE chunks three times (mean, variance, normalise); any N;
- layer_norm_fwd_fused: one program per row, the whole row in registers
  (BLOCK_SIZE >= N), so x is read from memory once;
- layer_norm_fwd_persistent: the same over a persistent grid, a few programs
  per SM striding over the rows, each loading its next row before it
  reduces and writes the current one.

layer_norm_config(N, sms) picks one from N, by what the H200 measured (in
its comment); layer_norm() launches it.

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


@tk.jit
def _add_pair(a0, a1, b0, b1):
    # tk.reduce's combiner for a pair of sums: (a0, a1) + (b0, b1).
    return a0 + b0, a1 + b1


@tk.jit
def _row_stats(x, mask, k, N, eps, ONE_PASS: tk.constexpr):
    # (mean, rstd, x - mean) of one fp32 row in registers, lanes past N
    # loaded as 0. ONE_PASS: the sum and the sum of squares shifted by k (the
    # row's first element, against cancellation when |mean| >> std) in one
    # tk.reduce over the pair, one cross-warp round; else mean, then the
    # variance around it.
    if ONE_PASS:
        shifted = tk.where(mask, x - k, 0.0)
        s1, s2 = tk.reduce((shifted, shifted * shifted), 0, _add_pair)
        m1 = s1 / N
        var = tk.maximum(s2 / N - m1 * m1, 0.0)
        mean = k + m1
        centred = x - mean
    else:
        mean = tk.sum(x, axis=0) / N
        centred = tk.where(mask, x - mean, 0.0)
        var = tk.sum(centred * centred, axis=0) / N
    # rsqrt.approx (relative error under 2^-22): one instruction per row,
    # where 1 / sqrt is IEEE sqrt's expansion with a slow-path branch and then
    # a divide. The persistent kernel at 1024 columns runs a row after the
    # other, so that chain is on its critical path: 3-4% on the H200
    # (bench/results/notes/layernorm.md, "2026-11-30, 3704606 to 5fe8e57").
    return mean, tk.rsqrt(var + eps), centred


@tk.jit
def _normalise_row(x, k, mask, cols, row, Y, W, B, Mean, Rstd, stride, N, eps,
                   ONE_PASS: tk.constexpr):
    # The rest of one row once it is in registers (fp32 x, lanes past N 0;
    # k its first element when ONE_PASS): the statistics, stored, then y.
    # w and b are loaded only after the reductions, so they hold no
    # registers while the statistics are taken.
    mean, rstd, centred = _row_stats(x, mask, k, N, eps, ONE_PASS)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    w = tk.load(W + cols, mask=mask)
    b = tk.load(B + cols, mask=mask)
    y = centred * rstd * w + b
    tk.store(Y + row * stride + cols, y.to(tk.float16), mask=mask)


@tk.jit
def layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tk.constexpr,
                         ONE_PASS: tk.constexpr = False):
    # One row per program, BLOCK_SIZE >= N.
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    k = 0.0
    if ONE_PASS:
        k = tk.load(X + row * stride).to(tk.float32)
    _normalise_row(x, k, mask, cols, row, Y, W, B, Mean, Rstd, stride, N, eps, ONE_PASS)


@tk.jit
def layer_norm_fwd_persistent(X, Y, W, B, Mean, Rstd, stride, N, eps, M,
                              BLOCK_SIZE: tk.constexpr, ONE_PASS: tk.constexpr = False):
    # Program p normalises rows p, p + P, p + 2P, ... of the P launched; the
    # next row (and its first element, ONE_PASS's shift) is loaded before
    # this one is reduced and written, and carried in registers as fp16.
    first = tk.program_id(0)
    step = tk.num_programs(0)
    cols = tk.arange(0, BLOCK_SIZE)
    mask = cols < N
    x_next = tk.load(X + first * stride + cols, mask=mask & (first < M), other=0.0)
    k_next = tk.load(X + first * stride, mask=first < M, other=0.0)
    for row in tk.range(first, M, step):
        x = x_next.to(tk.float32)
        k = k_next.to(tk.float32)
        nxt = row + step
        x_next = tk.load(X + nxt * stride + cols, mask=mask & (nxt < M), other=0.0)
        k_next = tk.load(X + nxt * stride, mask=nxt < M, other=0.0)
        _normalise_row(x, k, mask, cols, row, Y, W, B, Mean, Rstd, stride, N, eps, ONE_PASS)


def layer_norm_config(n, sms):
    """The kernel and launch for rows of n fp16 elements on a GPU with sms
    SMs: a dict of kernel (a name above), BLOCK_SIZE, num_warps, ONE_PASS
    and programs_per_sm (None: one program per row). Plain Python, no tk:
    bench/gpu_bench.py reads this function from this file to report the
    variant it picks beside the fastest one."""
    # Two H200 runs of bench/gpu_bench.py, 8192 rows, every kernel, warp
    # count and grid (bench/results/notes/layernorm.md, "2026-11-30, fed4116"):
    # - up to 1024 columns the persistent kernel, ONE_PASS, 2 warps, 16
    #   programs per SM: 2356 / 2383 GB/s against 2335 / 2309 for one row
    #   per program (Triton 2294 / 2255); a row is too short to keep the
    #   memory busy on its own, the prefetched next row helps. With rsqrt
    #   (bench/results/notes/layernorm.md, "2026-11-30, 3704606 to 5fe8e57") 2438 GB/s,
    #   1.065 of Triton head to head, and 1.048 in 8 alternating rounds
    #   (1.020 before); one row per program at 1 to 4 warps, 2-D tiles of 2
    #   or 4 rows and their persistent form were 0.99-1.02 there;
    # - from 2048 to 16384 one row per program, the whole row in registers,
    #   16 elements per thread up to 4096 columns and 32 beyond, ONE_PASS
    #   only at 16384 (3845 against 3678 two-pass at 16 warps; level at 8192,
    #   and with 64 or more elements per thread it collapses). Every
    #   persistent form was 4-8% slower there: with 6-8 programs per SM the
    #   hardware already overlaps one program's load with another's math;
    # - past 16384 the row no longer fits in registers: chunks of 4096.
    block = 1 << max(n - 1, 0).bit_length()
    if block > 16384:
        return {"kernel": "layer_norm_fwd", "BLOCK_SIZE": 4096, "num_warps": 8,
                "ONE_PASS": False, "programs_per_sm": None}
    if block <= 1024:
        return {"kernel": "layer_norm_fwd_persistent", "BLOCK_SIZE": block, "num_warps": 2,
                "ONE_PASS": True, "programs_per_sm": 16}
    warps = block // 512 if block <= 4096 else block // 1024
    return {"kernel": "layer_norm_fwd_fused", "BLOCK_SIZE": block, "num_warps": warps,
            "ONE_PASS": block >= 16384, "programs_per_sm": None}


def layer_norm(x, weight, bias, eps=1e-5, config=None, sms=None):
    """(y, mean, rstd) of a 2-D fp16 torch tensor (GPU) or numpy array, by
    the kernel of `config` (default: layer_norm_config's for the GPU; on the
    interpreter the chunked kernel, 256-wide blocks) on a GPU of `sms` SMs
    (default: the tensor's device's)."""
    M, N = x.shape
    if isinstance(x, np.ndarray):
        y = np.empty_like(x)
        mean = np.empty(M, dtype=np.float32)
        rstd = np.empty(M, dtype=np.float32)
        stride = x.strides[0] // x.itemsize
        # On the interpreter, blocks of at most 256 elements, so a row of a
        # few hundred elements is already walked in several chunks.
        config = config or {"kernel": "layer_norm_fwd",
                            "BLOCK_SIZE": min(256, tk.next_power_of_2(N)), "num_warps": 4,
                            "ONE_PASS": False, "programs_per_sm": None}
        sms = sms or 1
    else:
        import torch

        y = torch.empty_like(x)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        stride = x.stride(0)
        sms = sms or torch.cuda.get_device_properties(x.device).multi_processor_count
        config = config or layer_norm_config(N, sms)
    args = (x, y, weight, bias, mean, rstd, stride, N, eps)
    block, warps = config["BLOCK_SIZE"], config["num_warps"]
    if config["kernel"] == "layer_norm_fwd":
        layer_norm_fwd[(M,)](*args, BLOCK_SIZE=block, num_warps=warps)
    elif config["kernel"] == "layer_norm_fwd_fused":
        layer_norm_fwd_fused[(M,)](*args, BLOCK_SIZE=block, ONE_PASS=config["ONE_PASS"],
                                   num_warps=warps)
    else:
        assert config["kernel"] == "layer_norm_fwd_persistent", config
        grid = (min(M, config["programs_per_sm"] * sms),)
        layer_norm_fwd_persistent[grid](*args, M, BLOCK_SIZE=block, ONE_PASS=config["ONE_PASS"],
                                        num_warps=warps)
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


def benchmark(small):
    """What --bench measures (GB/s of tk, Triton (where installed) and torch), as a
    tk.testing.perf_report; scripts/tutorials.py runs it for its GPU table."""
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

    return run


def bench(small, out_dir):
    benchmark(small).run(print_data=True, save_path=out_dir)
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
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        # The default kernel of each width (persistent, fused; a ragged 4000
        # column row), the other statistics form with a mean far from 0, and
        # the persistent kernel on a grid of one program per SM, each taking
        # 7 or 8 of the 1000 rows, in both forms.
        persistent = {"kernel": "layer_norm_fwd_persistent", "num_warps": 4,
                      "programs_per_sm": 1}
        for M, N, offset, change in (
                (M, N, 0.5, {}), (64, 8192, 0.5, {}), (1000, 4000, 0.5, {}),
                (1000, 4000, 300.0, {"ONE_PASS": True}),
                (1000, 1000, 0.5, {"ONE_PASS": False}),
                (1000, 1500, 0.5, dict(persistent, BLOCK_SIZE=2048, ONE_PASS=False)),
                (1000, 1500, 300.0, dict(persistent, BLOCK_SIZE=2048, ONE_PASS=True))):
            x = torch.randn(M, N, device="cuda", dtype=torch.float16) * 2 + offset
            w = (torch.rand(N, device="cuda") + 0.5).half()
            b = (torch.rand(N, device="cuda") * 2 - 1).half()
            config = dict(layer_norm_config(N, sms), **change)
            y, mean, rstd = layer_norm(x, w, b, 1e-5, config)
            t = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
            tk.testing.assert_close(mean, x.double().mean(dim=1).float(), atol=1e-3, rtol=1e-5)
            tk.testing.assert_close(rstd, 1 / torch.sqrt(x.double().var(dim=1, unbiased=False)
                                                         + 1e-5).float(), atol=0, rtol=1e-4)
            tk.testing.assert_close(y, t, atol=1e-2, rtol=2e-3)
            diff = float((y.float() - t).abs().max())
            print(f"layer norm on the GPU, {M}x{N} fp16 (mean {offset}), {config['kernel']} "
                  f"w{config['num_warps']} ONE_PASS={config['ONE_PASS']}: max |tk - torch| = "
                  f"{diff:.3g}: OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(2)
    x = (rng.normal(0.5, 2, (M, N))).astype(np.float16)
    weight = rng.uniform(0.5, 1.5, N).astype(np.float16)
    bias = rng.uniform(-1, 1, N).astype(np.float16)
    eps = 1e-5
    ref_y, ref_mean, ref_rstd = reference(x, weight, bias, eps)
    # The chunked kernel; the fused one; then the persistent one as on a GPU
    # of 5 SMs (a grid of 5 programs striding over the rows, the last ones
    # short of a full round); the last two in both statistics forms.
    block = tk.next_power_of_2(N)
    for config in (None,) + tuple(
            {"kernel": kernel, "BLOCK_SIZE": block, "num_warps": 4, "ONE_PASS": one_pass,
             "programs_per_sm": 1}
            for kernel in ("layer_norm_fwd_fused", "layer_norm_fwd_persistent")
            for one_pass in (False, True)):
        y, mean, rstd = layer_norm(x, weight, bias, eps, config, sms=5)
        tk.testing.assert_close(mean, ref_mean, atol=1e-4, rtol=1e-4)
        tk.testing.assert_close(rstd, ref_rstd, atol=1e-4, rtol=1e-4)
        # y is rounded to fp16: within a couple of fp16 ulps of the fp64 result.
        tk.testing.assert_close(y, ref_y, atol=1e-2, rtol=2e-3)
        diff = float(np.max(np.abs(y.astype(np.float64) - ref_y)))
        name = "layer_norm_fwd" if config is None else \
            f"{config['kernel']} ONE_PASS={config['ONE_PASS']}"
        print(f"layer norm on the interpreter, {M}x{N} fp16, {name}: max |tk - numpy| = "
              f"{diff:.3g}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
