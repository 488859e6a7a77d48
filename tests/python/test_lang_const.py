"""`tl.const` parameters as in Triton: a read-only pointer; loads through it
work, a store through it (or through a pointer computed from it) is the
compile error "Cannot store to a constant pointer", and a const and a
writable pointer do not merge under a dynamic condition. Each way of picking
the pointer to store to (directly, `x if c else y`, a dynamic or compile-time
`if`, a helper) with the choice a run-time value or a constexpr."""

import numpy as np
import pytest

import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(4021)


@triton.jit
def pick(a, b, take_b):
    if take_b:
        return b
    else:
        return a


@triton.jit(do_not_specialize=["use_const"])
def direct_writable(src: tl.const, out, c_out: tl.const, use_const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit(do_not_specialize=["use_const"])
def direct_const(src: tl.const, out, c_out: tl.const, use_const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = c_out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit(do_not_specialize=["use_const"])
def by_ternary(src: tl.const, out, c_out: tl.const, use_const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = c_out if use_const else out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit(do_not_specialize=["use_const"])
def by_if(src: tl.const, out, c_out: tl.const, use_const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    if use_const:
        dst = c_out
    else:
        dst = out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit(do_not_specialize=["use_const"])
def by_call(src: tl.const, out, c_out: tl.const, use_const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = pick(out, c_out, use_const)
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit
def ternary_constexpr(src: tl.const, out, c_out: tl.const, use_const: tl.constexpr, n,
                      BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = c_out if use_const else out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit
def if_constexpr(src: tl.const, out, c_out: tl.const, use_const: tl.constexpr, n,
                 BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    if use_const:
        dst = c_out
    else:
        dst = out
    tl.store(dst + offs, v, mask=offs < n)


@triton.jit
def call_constexpr(src: tl.const, out, c_out: tl.const, use_const: tl.constexpr, n,
                   BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + offs, mask=offs < n)
    dst = pick(out, c_out, use_const)
    tl.store(dst + offs, v, mask=offs < n)


STORE = "Cannot store to a constant pointer"
# (kernel, use_const) -> the error's words, or None when the kernel runs.
CASES = [
    (direct_writable, False, None),
    (direct_const, True, STORE),
    (by_ternary, False, "Ternary expression with dynamic condition has inconsistent type"),
    (by_ternary, True, "Ternary expression with dynamic condition has inconsistent type"),
    (by_if, False, "Mismatched type for dst"),
    (by_if, True, "Mismatched type for dst"),
    (by_call, False, "Return type mismatch: "),
    (by_call, True, "Return type mismatch: "),
    (ternary_constexpr, False, None),
    (ternary_constexpr, True, STORE),
    (if_constexpr, False, None),
    (if_constexpr, True, STORE),
    (call_constexpr, False, None),
    (call_constexpr, True, STORE),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kernel,use_const,error", CASES,
                         ids=[f"{k.__name__}-{c}" for k, c, _ in CASES])
def test_const_pointer(device, kernel, use_const, error):
    n = 100
    src = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    if error:
        with pytest.raises(triton.CompilationError, match=error):
            launch(kernel, (1,), src, out, out, use_const, n, 128, device=device)
        return
    launch(kernel, (1,), src, out, out, use_const, n, 128, device=device)
    np.testing.assert_array_equal(out, src)


@triton.jit
def atomic_through_const(p: tl.const, n):
    offs = tl.arange(0, 16)
    tl.atomic_add(p + offs, 1.0, mask=offs < n)


def test_atomic_through_const_is_an_error():
    x = np.zeros(16, np.float32)
    with pytest.raises(triton.CompilationError, match=STORE + r": the pointer of tk.atomic_add"):
        atomic_through_const[(1,)](x, 16)
