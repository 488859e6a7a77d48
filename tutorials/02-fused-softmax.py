"""Tutorial 2: fused softmax, row by row, from Python.

The kernel is tutorials/02-fused-softmax.tk's: one program loads a whole row
(BLOCK_SIZE = the next power of two >= n_cols, the extra lanes -inf), takes
max, exp, sum and divides in registers, and writes the row once. Programs
stride over the rows, so the grid may be smaller than the number of rows.

    python3 tutorials/02-fused-softmax.py [--small] [--bench [--out DIR]]

On a machine with a GPU (torch with CUDA) it runs on torch tensors and checks
against torch.softmax; elsewhere, or with TK_INTERPRET=1, on the CPU
interpreter on numpy arrays, checked against numpy in float64. --bench (GPU)
prints GB/s against Triton and torch and plots them (02-fused-softmax.png).
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
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tk.constexpr):
    row_start = tk.program_id(0)
    row_step = tk.num_programs(0)
    for row_idx in tk.range(row_start, n_rows, row_step):
        row_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tk.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tk.load(row_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tk.max(row, axis=0)
        numerator = tk.exp(row_minus_max)
        denominator = tk.sum(numerator, axis=0)
        tk.store(output_ptr + row_idx * output_row_stride + col_offsets, numerator / denominator,
                 mask=mask)


def row_stride(a):
    return a.strides[0] // a.itemsize if isinstance(a, np.ndarray) else a.stride(0)


def softmax(x, num_programs=None):
    """Row-wise softmax of a 2-D torch tensor (GPU) or numpy array."""
    n_rows, n_cols = x.shape
    y = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    block = tk.next_power_of_2(n_cols)
    # More warps for longer rows: at most 32 elements per thread up to 8K,
    # 16 from 16K (32 warps: as fast as 16 on the H200, 0.1337 against
    # 0.1339 ms at 4096 x 16384, and a third less PTX for the driver's JIT;
    # bench/results/history.md, softmax-layernorm af7f719).
    num_warps = 4 if block <= 2048 else 8 if block <= 4096 else 16 if block <= 8192 else 32
    grid = (min(n_rows, num_programs or n_rows),)
    softmax_kernel[grid](y, x, row_stride(x), row_stride(y), n_rows, n_cols, BLOCK_SIZE=block,
                         num_warps=num_warps)
    return y


if triton is not None:
    # The same computation in Triton (one row per program), for --bench only.
    @triton.jit
    def triton_softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(in_ptr + r * in_stride + c, mask=c < n_cols, other=-float("inf"))
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + r * out_stride + c, e / tl.sum(e, axis=0), mask=c < n_cols)


def benchmark(small):
    """What --bench measures (GB/s of tk, Triton (where installed) and torch), as a
    tk.testing.perf_report; scripts/tutorials.py runs it for its GPU table."""
    import torch

    providers = ["tk"] + (["triton"] if triton is not None else []) + ["torch"]
    cols = [256, 1024, 4096] if small else [256 * i for i in range(1, 65, 4)]

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["N"], x_vals=cols, line_arg="provider", line_vals=providers,
        line_names=providers, ylabel="GB/s", plot_name="02-fused-softmax", args={"M": 4096}))
    def run(M, N, provider):
        x = torch.randn(M, N, device="cuda")
        if provider == "tk":
            fn = lambda: softmax(x)  # noqa: E731
        elif provider == "triton":
            y = torch.empty_like(x)
            block = triton.next_power_of_2(N)
            warps = 4 if block <= 2048 else 8 if block <= 4096 else 16
            fn = lambda: triton_softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), N,  # noqa
                                                     BLOCK=block, num_warps=warps)
        else:
            fn = lambda: torch.softmax(x, dim=-1)  # noqa: E731
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        return 2 * x.numel() * x.element_size() / ms * 1e-6

    return run


def bench(small, out_dir):
    benchmark(small).run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/02-fused-softmax.png")


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


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
    rows, cols = (37, 181) if small else (823, 781)
    if gpu:
        import torch

        torch.manual_seed(1)
        for shape in ((rows, cols), (64, 4096), (16, 16384)):
            x = torch.randn(*shape, device="cuda") * 3
            y = softmax(x, num_programs=16 if shape[0] > 16 else None)
            expected = torch.softmax(x.double(), dim=1)
            diff = float((y.double() - expected).abs().max())
            tk.testing.assert_close(y, expected, atol=1e-6, rtol=1e-5)
            print(f"fused softmax on the GPU, {shape[0]}x{shape[1]} fp32: "
                  f"max |tk - torch| = {diff:.3g}: OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, (rows, cols)).astype(np.float32)
    y = softmax(x, num_programs=16)
    expected = reference(x)
    diff = float(np.max(np.abs(y - expected)))
    tk.testing.assert_close(y, expected, atol=1e-6, rtol=1e-5)
    print(f"fused softmax on the interpreter, {rows}x{cols} fp32: max |tk - numpy| = {diff:.3g}: "
          "OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
