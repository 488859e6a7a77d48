"""@tk.jit helpers and a global constant that kernels in other test modules use."""

import tk

SHIFT = 3


@tk.jit
def scale_and_shift(x, factor):
    return x * factor + SHIFT


@tk.jit
def square(x):
    return x * x
