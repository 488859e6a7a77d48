"""Kernels with deliberate mistakes: the tests check that the errors point at
the right line and column of this file."""

import tk


@tk.jit
def undefined_name_kernel(x_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.load(x_ptr + offz), mask=offs < n)  # MISTAKE: offz


@tk.jit
def shape_mismatch_kernel(x_ptr, BLOCK: tk.constexpr):
    a = tk.arange(0, BLOCK)
    b = tk.arange(0, 2 * BLOCK)
    tk.store(x_ptr + a, a + b)  # MISTAKE: shapes


@tk.jit
def out_of_bounds_kernel(x_ptr, y_ptr, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(y_ptr + offs, tk.load(x_ptr + offs))  # no mask: reads past a short x


@tk.jit
def huge_tile_kernel(x_ptr, ROWS: tk.constexpr):
    z = tk.zeros((ROWS, 4), tk.float32)  # MISTAKE: elements
    tk.store(x_ptr + tk.arange(0, 4), tk.sum(z, 0))
