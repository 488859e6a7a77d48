"""Tutorial 4: matrix multiplication with a fused activation, from Python.

C = activation(A @ B) for fp16 A (M, K) and B (K, N), accumulated in fp32.
The kernel is tutorials/04-matmul.tk's: one BLOCK_SIZE_M x BLOCK_SIZE_N tile
of C per program, grouped program order for L2 reuse, K walked in
BLOCK_SIZE_K steps with tk.dot, and the activation a @tk.jit helper that is
inlined. @tk.autotune lists the tile configurations: on the GPU it times them
and keeps the fastest per (M, N, K); on the interpreter it uses the first.

    python3 tutorials/04-matmul.py [--small] [--bench [--out DIR]]

On a machine with a GPU (torch with CUDA) it runs on torch tensors, tk.dot on
tensor cores, and checks against torch (cuBLAS); elsewhere, or with
TK_INTERPRET=1, on the CPU interpreter on numpy arrays, checked against numpy
in float64. --bench (GPU) prints TFLOP/s of tk and torch for square fp16
matrices and plots them (04-matmul.png).
"""

import os
import sys

import numpy as np

import tk


@tk.jit
def leaky_relu(x):
    return tk.where(x >= 0, x, 0.01 * x)


@tk.autotune(
    configs=[
        tk.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4},
                  num_stages=3, num_warps=4),
        tk.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                  num_stages=4, num_warps=4),
        # On an H100/H200 (sm_90a: tk.dot on wgmma) the large-matrix winner:
        # 2 warp groups of 128x256, 4 ring stages (192 KiB of shared memory),
        # 0.85-0.88 of cuBLAS at 4096 (docs/codegen/dot.md).
        tk.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
                  num_stages=4, num_warps=8),
    ],
    key=["M", "N", "K"],
)
@tk.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tk.constexpr, BLOCK_SIZE_N: tk.constexpr,
                  BLOCK_SIZE_K: tk.constexpr, GROUP_SIZE_M: tk.constexpr,
                  ACTIVATION: tk.constexpr):
    pid = tk.program_id(axis=0)
    num_pid_m = tk.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tk.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tk.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tk.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tk.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tk.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tk.float32)
    for k in range(0, tk.cdiv(K, BLOCK_SIZE_K)):
        k_remaining = K - k * BLOCK_SIZE_K
        a = tk.load(a_ptrs, mask=offs_k[None, :] < k_remaining, other=0.0)
        b = tk.load(b_ptrs, mask=offs_k[:, None] < k_remaining, other=0.0)
        accumulator = tk.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tk.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tk.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tk.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tk.store(c_ptrs, c, mask=c_mask)


def matmul(a, b, activation=""):
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    if isinstance(a, np.ndarray):
        c = np.empty((M, N), dtype=np.float16)
        sa, sb, sc = (tuple(s // x.itemsize for s in x.strides) for x in (a, b, c))
    else:  # torch tensors on the GPU
        import torch

        c = torch.empty((M, N), device=a.device, dtype=torch.float16)
        sa, sb, sc = a.stride(), b.stride(), c.stride()
    grid = lambda META: (  # noqa: E731
        tk.cdiv(M, META["BLOCK_SIZE_M"]) * tk.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1],
                        ACTIVATION=activation)
    return c


def reference(a, b, activation):
    c = a.astype(np.float64) @ b.astype(np.float64)
    if activation == "leaky_relu":
        c = np.where(c >= 0, c, 0.01 * c)
    return c


def benchmark(small):
    """What --bench measures (TFLOP/s of tk and torch (cuBLAS)), as a
    tk.testing.perf_report; scripts/tutorials.py runs it for its GPU table."""
    import torch

    sizes = [256, 512, 1024] if small else [128 * i for i in range(2, 33, 2)]

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["M", "N", "K"], x_vals=sizes, line_arg="provider", line_vals=["tk", "torch"],
        line_names=["tk", "torch (cuBLAS)"], ylabel="TFLOP/s", plot_name="04-matmul", args={}))
    def run(M, N, K, provider):
        a = torch.randn((M, K), device="cuda", dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", dtype=torch.float16)
        fn = (lambda: matmul(a, b)) if provider == "tk" else (lambda: torch.matmul(a, b))
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        return 2 * M * N * K / ms * 1e-9

    return run


def bench(small, out_dir):
    benchmark(small).run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/04-matmul.png")


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        if not gpu:
            print("--bench times the kernel on a GPU against cuBLAS (torch); there is no GPU "
                  "launch here (no CUDA device, or TK_INTERPRET=1), so nothing to time.")
            return 0
        bench(small, argv[argv.index("--out") + 1] if "--out" in argv else ".")
        return 0
    M, N, K = (45, 70, 100) if small else (200, 136, 300)
    if gpu:
        import torch

        torch.manual_seed(3)
        for (m, n, k) in ((M, N, K), (512, 512, 512), (1000, 777, 333)):
            a = torch.rand((m, k), device="cuda", dtype=torch.float16) * 2 - 1
            b = torch.rand((k, n), device="cuda", dtype=torch.float16) * 2 - 1
            for activation in ("", "leaky_relu"):
                c = matmul(a, b, activation)
                expected = a.float() @ b.float()
                if activation == "leaky_relu":
                    expected = torch.where(expected >= 0, expected, 0.01 * expected)
                diff = float((c.float() - expected).abs().max())
                # fp32 accumulation (in another order than cuBLAS), one fp16
                # rounding of the result.
                tk.testing.assert_close(c.float(), expected, atol=2e-2, rtol=2e-3)
                print(f"matmul on the GPU {m}x{k} @ {k}x{n} fp16, activation "
                      f"{activation or 'none'}: max |tk - torch| = {diff:.3g}: OK")
        print(f"autotune: config for the last shape {matmul_kernel.best_config}")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    for activation in ("", "leaky_relu"):
        c = matmul(a, b, activation)
        expected = reference(a, b, activation)
        # fp32 accumulation, one fp16 rounding of the result.
        tk.testing.assert_close(c, expected, atol=2e-2, rtol=2e-3)
        diff = float(np.max(np.abs(c.astype(np.float64) - expected)))
        name = activation or "none"
        print(f"matmul {M}x{K} @ {K}x{N} fp16, activation {name}: "
              f"max |tk - numpy| = {diff:.3g}: OK")
    print(f"autotune: used config {matmul_kernel.best_config} (the first: no timing without a GPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
