"""Kernels that call the @tk.jit functions of a Python module bound to a
global (`import helpers; helpers.f(x)`), as torch Inductor's kernels call
triton_helpers.maximum: on the interpreter against numpy, with NaN
propagation through the helpers, a helper passed as a combine function, a
tuple reduction through them, and located errors for what a module offers
that a kernel cannot use."""

import os

import numpy as np
import pytest

import inductor_helpers_mod as triton_helpers
import tk

RNG = np.random.default_rng(2026)


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "1")


@tk.jit
def relu_kernel(in_ptr, out_ptr, n, XBLOCK: tk.constexpr):
    offs = tk.program_id(0) * XBLOCK + tk.arange(0, XBLOCK)
    mask = offs < n
    x = tk.load(in_ptr + offs, mask, eviction_policy="evict_last")
    zero = tk.full([1], 0, tk.int32)
    tk.store(out_ptr + offs, triton_helpers.maximum(zero.to(tk.float32), x), mask)


@tk.jit
def row_max_kernel(in_ptr, out_ptr, rows, cols, RBLOCK: tk.constexpr):
    row = tk.program_id(0)
    offs = tk.arange(0, RBLOCK)
    x = tk.load(in_ptr + row * cols + offs, offs < cols, other=float("-inf"))
    by_helper = triton_helpers.max2(x[None, :], 1)
    by_combine = tk.reduce(x, 0, triton_helpers.maximum)
    tk.store(out_ptr + 2 * row, tk.sum(by_helper, 0))
    tk.store(out_ptr + 2 * row + 1, by_combine)


@tk.jit
def welford_kernel(in_ptr, mean_ptr, var_ptr, cols, RBLOCK: tk.constexpr):
    row = tk.program_id(0)
    offs = tk.arange(0, RBLOCK)
    mask = offs < cols
    x = tk.load(in_ptr + row * cols + offs, mask, other=0.0)
    weight = tk.where(mask, 1.0, 0.0)
    mean, m2, w = tk.reduce((x, tk.zeros_like(x), weight), 0, triton_helpers.welford_combine)
    tk.store(mean_ptr + row, mean)
    tk.store(var_ptr + row, m2 / w)


def test_helper_of_a_module_propagates_nan_like_torch():
    x = RNG.standard_normal(1000).astype(np.float32)
    x[[3, 500]] = np.nan
    out = np.empty_like(x)
    relu_kernel[(tk.cdiv(1000, 128),)](x, out, 1000, XBLOCK=128)
    expected = np.where(np.isnan(x), x, np.maximum(x, 0))
    np.testing.assert_array_equal(out, expected)
    assert np.isnan(out[[3, 500]]).all()


def test_helpers_calling_each_other_and_passed_as_combine_functions():
    rows, cols = 7, 100  # not a multiple of the block
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    x[2, 17] = np.nan
    out = np.empty(2 * rows, np.float32)
    row_max_kernel[(rows,)](x, out, rows, cols, RBLOCK=128)
    expected = np.where(np.isnan(x).any(1), np.nan, x.max(1))
    np.testing.assert_array_equal(out[0::2], expected)
    np.testing.assert_array_equal(out[1::2], expected)


def test_tuple_reduction_through_a_module_helper():
    rows, cols = 5, 77
    x = (RNG.standard_normal((rows, cols)) * 3 + 1).astype(np.float32)
    mean, var = np.empty(rows, np.float32), np.empty(rows, np.float32)
    welford_kernel[(rows,)](x, mean, var, cols, RBLOCK=128)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, x.astype(np.float64).var(1), rtol=1e-4, atol=1e-5)


def _kernel_with(body):
    """A kernel (in a file of its own, so errors point into it) whose last
    line is `body`, with triton_helpers bound to the helper module."""
    import importlib.util
    import tempfile
    import textwrap

    text = textwrap.dedent(f"""
        import tk
        import inductor_helpers_mod as triton_helpers

        @tk.jit
        def bad(x_ptr):
            x = tk.load(x_ptr)
            {body}
    """)
    path = os.path.join(tempfile.mkdtemp(), "bad_user_module.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("bad_user_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.bad, path


@pytest.mark.parametrize("body, message", [
    ("tk.store(x_ptr, x + triton_helpers.NOT_A_FUNCTION)",
     r"bad_user_module.py:8:\d+: error: 'triton_helpers.NOT_A_FUNCTION' is not a @tk.jit "
     r"function"),
    ("tk.store(x_ptr, triton_helpers.nope(x))",
     r"bad_user_module.py:8:\d+: error: 'triton_helpers.nope' is not a @tk.jit function"),
    ("tk.store(x_ptr, triton_helpers.not_jit(x))",
     r"bad_user_module.py:8:\d+: error: 'triton_helpers.not_jit' is not a @tk.jit function"),
    ("tk.store(x_ptr, triton_helpers(x))",
     r"bad_user_module.py:8:\d+: error: module 'triton_helpers' is not callable"),
    ("tk.store(x_ptr, triton_helpers.maximum(x))",
     r"maximum\(\) (missing|takes)"),
])
def test_what_a_kernel_cannot_use_of_a_module_is_a_located_error(body, message):
    kernel, _ = _kernel_with(body)
    x = np.ones(1, np.float32)
    with pytest.raises(tk.CompilationError, match=message):
        kernel[(1,)](x)
