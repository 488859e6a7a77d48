"""Tutorial 1: vector addition, from Python.

The kernel is tutorials/01-vector-add.tk's, written as a @tk.jit function:
out[i] = x[i] + y[i] for i < n_elements, one BLOCK_SIZE block per program,
the mask keeping the last program inside the vectors.

    python3 tutorials/01-vector-add.py            # runs it, checks it, prints the check
    python3 tutorials/01-vector-add.py --small    # a smaller size (what the tests run)
    python3 tutorials/01-vector-add.py --bench    # speed against torch/Triton: GPU only, later

Without a GPU launch path (today) it runs on the CPU interpreter
(TK_INTERPRET=1), on numpy arrays, and checks against numpy (and torch when
it is installed).
"""

import os
import sys

import numpy as np

os.environ.setdefault("TK_INTERPRET", "1")  # the GPU launch path follows (issue 6)

import tk  # noqa: E402


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
    output = np.empty_like(x)
    n = output.size
    grid = lambda meta: (tk.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n, BLOCK_SIZE=1024)
    return output


def main(argv):
    if "--bench" in argv:
        print("--bench times the kernel on a GPU against torch and Triton; tk's GPU launch path "
              "from Python is not available yet (issue 6), so there is nothing to time here.")
        return 0
    size = 3001 if "--small" in argv else 98432
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size).astype(np.float32)
    y = rng.uniform(-1, 1, size).astype(np.float32)
    out = add(x, y)
    expected = x.astype(np.float64) + y.astype(np.float64)
    diff = float(np.max(np.abs(out - expected)))
    tk.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    print(f"vector add, {size} fp32 elements: max |tk - numpy| = {diff:.3g}: OK")
    try:
        import torch
    except ImportError:
        print("torch is not installed: checked against numpy only")
    else:
        tk.testing.assert_close(out, (torch.from_numpy(x) + torch.from_numpy(y)), atol=0, rtol=0)
        print("matches torch exactly: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
