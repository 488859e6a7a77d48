"""Helpers written the way torch Inductor's triton_helpers module writes its
own (Triton code imported through `triton`): kernels in test_user_modules.py
call them as attributes of this module."""

import tk as triton
import tk.language as tl

NOT_A_FUNCTION = 3


@triton.jit
def promote_to_tensor(x):
    return x + tl.zeros((1,), tl.int1)


@triton.jit
def is_floating(x):
    return promote_to_tensor(x).dtype.is_floating()


@triton.jit
def maximum(a, b):
    # NaN wins, as torch's max does.
    mask = a > b
    if is_floating(a):
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def max2(a, dim):
    return tl.reduce(a, dim, maximum)


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
            new_weight)


def not_jit(x):
    return x
