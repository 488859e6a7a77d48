"""Two things Triton's helpers do that test_core.py relies on: a @jit
function passed as an argument to another helper and called there
(test_jit_function_arg), and `return` inside a dynamic if of a helper or
kernel (test_if_call's helpers). Interpreter and (marked `gpu`) GPU, each
against numpy."""

import numpy as np
import pytest

import tk
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(6416)


@tl.jit
def times(a, b):
    return a * b


@tl.jit
def minus(a, b):
    return a - b


@tl.jit
def fold_with(x, combine):
    # `combine` is an ordinary (not constexpr) parameter holding a function.
    return combine(x, x + 1.0)


@tl.jit
def fold_twice(x, combine):
    # Handed on once more before it is called.
    return fold_with(fold_with(x, combine), combine)


@tl.jit
def apply_kernel(X, Y, n, OP: tl.constexpr, TWICE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    if OP == "times":
        if TWICE:
            y = fold_twice(x, times)
        else:
            y = fold_with(x, times)
    else:
        if TWICE:
            y = fold_twice(x, minus)
        else:
            y = fold_with(x, minus)
    tl.store(Y + offs, y, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["times", "minus"])
@pytest.mark.parametrize("twice", [False, True])
def test_function_passed_to_a_helper(device, op, twice):
    n = 300
    x = RNG.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    launch(apply_kernel, ((n + 127) // 128,), x, y, n, op, twice, 128, device=device)
    f = (lambda a: a * (a + 1)) if op == "times" else (lambda a: a - (a + 1))
    expect = f(f(x)) if twice else f(x)
    np.testing.assert_allclose(y, expect, rtol=1e-6)


@tl.jit
def call_non_function_kernel(X):
    x = tl.load(X)
    tl.store(X, fold_with(x, 3))


def test_calling_a_parameter_that_holds_no_function_is_a_located_error():
    x = np.ones(1, np.float32)
    with pytest.raises(tk.CompilationError,
                       match=r"'combine' is constexpr int 3, which is not callable"):
        call_non_function_kernel[(1,)](x)


# --- return inside a dynamic if


@tl.jit
def plus_one_or_two(x, pid):
    if pid == 0:
        return x + 1
    else:
        return x + 2


@tl.jit
def bucket(x, lo, hi):
    # Three exits: an early one, one from a nested if, and the fall-through.
    if x < lo:
        return 0
    if x >= hi:
        if x >= 2 * hi:
            return 3
        return 2
    return 1


@tl.jit
def store_then_maybe_stop(Out, v, pid):
    if pid % 2 == 1:
        tl.store(Out, v)
        return
    tl.store(Out, v * 10)


@tl.jit
def returns_kernel(X, Out, Buckets, Stored, lo, hi):
    pid = tl.program_id(0)
    x = tl.load(X + pid)
    o = x
    if pid % 3 == 0:
        o = plus_one_or_two(o, pid % 2)
    tl.store(Out + pid, o)
    tl.store(Buckets + pid, bucket(x, lo, hi))
    store_then_maybe_stop(Stored + pid, x, pid)


@pytest.mark.parametrize("device", DEVICES)
def test_return_inside_dynamic_ifs_of_helpers(device):
    n = 37
    x = RNG.integers(-50, 150, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    buckets = np.zeros(n, np.int32)
    stored = np.zeros(n, np.int32)
    lo, hi = 10, 60
    launch(returns_kernel, (n,), x, out, buckets, stored, lo, hi, device=device)
    pid = np.arange(n)
    expect = np.where(pid % 3 == 0, x + np.where(pid % 2 == 0, 1, 2), x)
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(
        buckets, np.select([x < lo, x >= 2 * hi, x >= hi], [0, 3, 2], default=1))
    np.testing.assert_array_equal(stored, np.where(pid % 2 == 1, x, x * 10))


@tl.jit
def block_select(x, flag):
    # Tensors returned from both branches of a scalar condition.
    if flag > 0:
        return tl.where(x > 0, x, 0.0)
    return x * 2.0


@tl.jit
def block_return_kernel(X, Y, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, block_select(x, flag), mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("flag", [0, 1])
def test_return_of_blocks_from_a_dynamic_if(device, flag):
    n = 200
    x = RNG.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    launch(block_return_kernel, (2,), x, y, n, flag, 128, device=device)
    np.testing.assert_array_equal(y, np.where(x > 0, x, 0.0) if flag else x * 2.0)


@tl.jit
def int_or_block(x, flag):
    if flag > 0:
        return flag
    return x


@tl.jit
def mismatched_return_kernel(X, flag):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(X + tl.arange(0, 16), int_or_block(x, flag))


def test_returns_of_different_types_are_a_located_error():
    x = np.ones(16, np.float32)
    with pytest.raises(tk.CompilationError, match=r"the 'if' branch returns i32 but the 'else' "
                                                  r"branch returns tensor<16xfp32>"):
        mismatched_return_kernel[(1,)](x, 5)


# --- the call shapes of test_core.py's test_if_call, each inside `if pid == 0`


@tl.jit
def inc(v):
    return v + 1


@tl.jit(noinline=True)
def inc_not_inlined(v):
    return v + 1


@tl.jit
def store_it(P, v):
    tl.store(P, v)


@tl.jit
def inc_unless_empty(v, tag: tl.constexpr):
    if tag == "":
        return v
    else:
        return v + 1


@tl.jit
def call_shapes_kernel(P, SHAPE: tl.constexpr):
    pid = tl.program_id(0)
    v = tl.load(P)
    if SHAPE == "method":
        if pid == 0:
            v = v.to(tl.int32).to(tl.int32) + 1
    elif SHAPE == "method_and_helper":
        if pid == 0:
            v = tl.load(P + inc(v) - 1 - v).to(tl.int32) + 1
    elif SHAPE == "helper":
        if pid == 0:
            v = inc(v)
    elif SHAPE == "helper_returning_in_if":
        if pid == 0:
            v = plus_one_or_two(v, pid)
    elif SHAPE == "helper_as_statement":
        if pid == 0:
            w = v + 1
            store_it(P, w)
            v = w
    elif SHAPE == "helper_static_cond":
        if pid == 0:
            w = v + 1
            inc_unless_empty(v, SHAPE)
            v = w
    elif SHAPE == "helper_noinline":
        if pid == 0:
            w = v + 1
            inc_not_inlined(w)
            v = w
    else:
        if pid == 0:
            w = v + 1
            tl.cdiv(w, w)
            v = w
    tl.store(P, v)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", ["method", "method_and_helper", "helper",
                                   "helper_returning_in_if", "helper_as_statement",
                                   "helper_static_cond", "helper_noinline", "builtin"])
def test_call_shapes_inside_a_dynamic_if(device, shape):
    start = int(RNG.integers(-1000, 1000))
    p = np.array([start], np.int32)
    launch(call_shapes_kernel, (1,), p, shape, device=device)
    assert p[0] == start + 1


@tl.jit
def _scaled_rows(x, offs: tl.constexpr, n: tl.constexpr, SCALE: tl.constexpr):
    # offs and n are run-time values although annotated tl.constexpr, as
    # upstream tutorial 06's _attn_fwd_inner takes offs_m and N_CTX.
    return tl.where(offs < n, x * SCALE, 0.0)


@tl.jit
def constexpr_annotated_helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, _scaled_rows(x, offs, n, 3.0), mask=offs < n + 5)


@pytest.mark.parametrize("device", DEVICES)
def test_constexpr_annotation_of_a_helper_takes_runtime_values(device):
    n = 45
    x = np.random.default_rng(3).standard_normal(n + 19).astype(np.float32)
    out = np.full(n + 19, 7.0, np.float32)
    launch(constexpr_annotated_helper_kernel, (2,), x, out, n, 32, device=device)
    np.testing.assert_allclose(out[:n], x[:n] * 3.0, rtol=1e-6)
    np.testing.assert_array_equal(out[n:n + 5], 0.0)
    np.testing.assert_array_equal(out[n + 5:], 7.0)
