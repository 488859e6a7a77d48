"""Tutorial 2: fused softmax, row by row, from Python.

The kernel is tutorials/02-fused-softmax.tk's: one program loads a whole row
(BLOCK_SIZE = the next power of two >= n_cols, the extra lanes -inf), takes
max, exp, sum and divides in registers, and writes the row once. Programs
stride over the rows, so the grid may be smaller than the number of rows.

    python3 tutorials/02-fused-softmax.py [--small] [--bench]

It runs on the CPU interpreter until tk's GPU launch path from Python exists;
--bench (speed against torch and Triton) needs that path.
"""

import os
import sys

import numpy as np

os.environ.setdefault("TK_INTERPRET", "1")  # the GPU launch path follows (issue 6)

import tk  # noqa: E402


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


def softmax(x, num_programs=None):
    n_rows, n_cols = x.shape
    y = np.empty_like(x)
    grid = (min(n_rows, num_programs or n_rows),)
    softmax_kernel[grid](y, x, x.strides[0] // x.itemsize, y.strides[0] // y.itemsize, n_rows,
                         n_cols, BLOCK_SIZE=tk.next_power_of_2(n_cols))
    return y


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(argv):
    if "--bench" in argv:
        print("--bench times the kernel on a GPU against torch and Triton; tk's GPU launch path "
              "from Python is not available yet (issue 6), so there is nothing to time here.")
        return 0
    rows, cols = (37, 181) if "--small" in argv else (823, 781)
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, (rows, cols)).astype(np.float32)
    y = softmax(x, num_programs=16)
    expected = reference(x)
    diff = float(np.max(np.abs(y - expected)))
    tk.testing.assert_close(y, expected, atol=1e-6, rtol=1e-5)
    print(f"fused softmax, {rows}x{cols} fp32: max |tk - numpy| = {diff:.3g}: OK")
    try:
        import torch
    except ImportError:
        print("torch is not installed: checked against numpy only")
    else:
        tk.testing.assert_close(y, torch.softmax(torch.from_numpy(x), dim=1), atol=1e-6, rtol=1e-5)
        print("matches torch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
