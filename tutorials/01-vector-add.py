"""Tutorial 1: vector addition, from Python.

The kernel is tutorials/01-vector-add.tk's, written as a @tk.jit function:
out[i] = x[i] + y[i] for i < n_elements, one BLOCK_SIZE block per program,
the mask keeping the last program inside the vectors.

    python3 tutorials/01-vector-add.py            # runs it, checks it, prints the check
    python3 tutorials/01-vector-add.py --small    # a smaller size (what the tests run)
    python3 tutorials/01-vector-add.py --bench [--out DIR]   # GB/s vs Triton and torch, PNG

On a machine with a GPU (torch with CUDA) it runs on torch tensors on the GPU
and checks against torch; elsewhere, or with TK_INTERPRET=1, it runs on the
CPU interpreter on numpy arrays and checks against numpy.
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
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tk.constexpr):
    pid = tk.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tk.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tk.load(x_ptr + offsets, mask=mask)
    y = tk.load(y_ptr + offsets, mask=mask)
    tk.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y):
    """x + y through the kernel, on torch tensors (GPU) or numpy arrays."""
    output = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    n = x.size if isinstance(x, np.ndarray) else x.numel()
    grid = lambda meta: (tk.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n, BLOCK_SIZE=1024)
    return output


if triton is not None:
    # The same computation in Triton, for --bench only.
    @triton.jit
    def triton_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        keep = i < n
        tl.store(out_ptr + i, tl.load(x_ptr + i, mask=keep) + tl.load(y_ptr + i, mask=keep),
                 mask=keep)


def benchmark(small):
    """What --bench measures (GB/s of tk, Triton (where installed) and torch), as a
    tk.testing.perf_report; scripts/tutorials.py runs it for its GPU table."""
    import torch

    providers = ["tk"] + (["triton"] if triton is not None else []) + ["torch"]
    sizes = [2**i for i in (range(12, 18) if small else range(12, 28, 2))]

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["size"], x_vals=sizes, x_log=True, line_arg="provider", line_vals=providers,
        line_names=providers, ylabel="GB/s", plot_name="01-vector-add", args={}))
    def run(size, provider):
        x = torch.rand(size, device="cuda")
        y = torch.rand(size, device="cuda")
        if provider == "tk":
            fn = lambda: add(x, y)  # noqa: E731
        elif provider == "triton":
            out = torch.empty_like(x)
            fn = lambda: triton_add_kernel[(triton.cdiv(size, 1024),)](x, y, out, size,  # noqa
                                                                       BLOCK=1024)
        else:
            fn = lambda: x + y  # noqa: E731
        ms = tk.testing.do_bench(fn, warmup=5 if small else 25, rep=20 if small else 100)
        return 3 * x.numel() * x.element_size() / ms * 1e-6

    return run


def bench(small, out_dir):
    benchmark(small).run(print_data=True, save_path=out_dir)
    print(f"plot: {out_dir}/01-vector-add.png")


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
    size = 3001 if small else 98432
    if gpu:
        import torch

        torch.manual_seed(0)
        x = torch.rand(size, device="cuda") * 2 - 1
        y = torch.rand(size, device="cuda") * 2 - 1
        out = add(x, y)
        torch.cuda.synchronize()
        diff = float((out - (x + y)).abs().max())
        tk.testing.assert_close(out, x + y, atol=0, rtol=0)
        print(f"vector add on the GPU, {size} fp32 elements: max |tk - torch| = {diff:.3g}: OK")
        return 0
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size).astype(np.float32)
    y = rng.uniform(-1, 1, size).astype(np.float32)
    out = add(x, y)
    expected = x.astype(np.float64) + y.astype(np.float64)
    diff = float(np.max(np.abs(out - expected)))
    tk.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    print(f"vector add on the interpreter, {size} fp32 elements: max |tk - numpy| = {diff:.3g}: "
          "OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
