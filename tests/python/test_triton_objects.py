"""Kernels that read Triton's objects: a helper module written with `import
triton` / `import triton.language as tl` (as torch Inductor's triton_helpers
is), a `@triton.jit` kernel given to `tk.jit`, `tl.constexpr` annotations
and globals, Triton dtypes. Each stands for the tk object of the same name
(python/tk/runtime/_triton_objects.py). With Triton installed these are its
real objects; without it, a stand-in package named `triton` with the same
module and class names (what the mapping reads) takes its place. Interpreter
runs against numpy on random ragged inputs, and the PTX compile."""

import importlib
import importlib.util
import os
import sys
import textwrap

import numpy as np
import pytest

import tk
from ptx_compile_util import CudaArray

RNG = np.random.default_rng(7)

_STAND_IN = {
    "triton/__init__.py": "from . import language\nfrom .runtime.jit import jit\n",
    "triton/runtime/__init__.py": "",
    "triton/runtime/jit.py": textwrap.dedent("""
        class JITFunction:
            def __init__(self, fn):
                self.fn = fn

        def jit(fn=None, **options):
            return JITFunction(fn) if fn is not None else JITFunction
    """),
    "triton/language/__init__.py": "from .core import constexpr, dtype, float16, float32\n"
                                   "from . import math\n",
    "triton/language/math.py": "",
    "triton/language/core.py": textwrap.dedent("""
        class constexpr:
            def __init__(self, value):
                self.value = value

        class dtype:
            def __init__(self, name):
                self.name = name

        float16 = dtype("fp16")
        float32 = dtype("fp32")
    """),
}

# Helpers written against Triton: the text of inductor_helpers_mod.py (tk's
# imports) with its two import lines turned back into Triton's, plus helpers
# reading a tl.constexpr global, a Triton dtype and tl.math.
_EXTRA_HELPERS = textwrap.dedent("""

    _SCALE: tl.constexpr = tl.constexpr(0.5)
    _ACC = tl.float32


    @triton.jit
    def scaled_row_sum(x, dim):
        return tl.sum(x.to(_ACC), dim) * _SCALE


    @triton.jit
    def magnitude(x):
        return tl_math.abs(x)
""")

_KERNELS = textwrap.dedent("""
    import triton
    import triton.language as tl

    import triton_helpers_t as helpers


    @triton.jit
    def relu_rows(in_ptr, out_ptr, sum_ptr, rows, cols, RBLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, RBLOCK)
        mask = offs < cols
        x = tl.load(in_ptr + row * cols + offs, mask, other=0.0)
        zero = tl.full([1], 0, tl.int32)
        y = helpers.maximum(zero.to(tl.float32), x)
        tl.store(out_ptr + row * cols + offs, helpers.magnitude(y), mask)
        tl.store(sum_ptr + row, helpers.scaled_row_sum(y[None, :], 1).sum(0))


    @triton.jit
    def welford_rows(in_ptr, mean_ptr, var_ptr, cols, RBLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, RBLOCK)
        mask = offs < cols
        x = tl.load(in_ptr + row * cols + offs, mask, other=0.0)
        weight = tl.where(mask, 1.0, 0.0)
        mean, m2, w = tl.reduce((x, tl.zeros_like(x), weight), 0, helpers.welford_combine)
        tl.store(mean_ptr + row, mean)
        tl.store(var_ptr + row, m2 / w)
""")


def _write(root, files):
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernel module (Triton's imports), with Triton or the stand-in."""
    root = str(tmp_path_factory.mktemp("triton_objects"))
    try:
        import triton  # noqa: F401
    except ImportError:
        _write(root, _STAND_IN)
    here = os.path.dirname(__file__)
    with open(os.path.join(here, "inductor_helpers_mod.py")) as f:
        helpers = f.read()
    helpers = helpers.replace("import tk as triton\n", "import triton\n")
    helpers = helpers.replace("import tk.language as tl\n",
                              "import triton.language as tl\nimport triton.language.math as tl_math\n")
    assert "import tk" not in helpers
    _write(root, {"triton_helpers_t.py": helpers + _EXTRA_HELPERS,
                  "triton_kernels_t.py": _KERNELS})
    sys.path.insert(0, root)
    saved = {k: v for k, v in sys.modules.items() if k == "triton" or k.startswith("triton.")}
    try:
        module = importlib.import_module("triton_kernels_t")
        assert type(module.relu_rows).__module__.startswith("triton.")
        yield module
    finally:
        sys.path.remove(root)
        for name in [k for k in sys.modules if k == "triton" or k.startswith("triton.")]:
            if name not in saved:
                del sys.modules[name]
        for name in ("triton_kernels_t", "triton_helpers_t"):
            sys.modules.pop(name, None)


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "1")


def test_a_triton_kernel_with_triton_helpers_runs_as_tk(kernels):
    rows, cols = 6, 93
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    x[1, 4] = np.nan
    out = np.empty_like(x)
    sums = np.empty(rows, np.float32)
    kernel = tk.jit(kernels.relu_rows)
    assert kernel.constexprs == [5]  # RBLOCK: tl.constexpr, Triton's class
    kernel[(rows,)](x, out, sums, rows, cols, RBLOCK=128)
    relu = np.where(np.isnan(x), x, np.maximum(x, 0))
    np.testing.assert_array_equal(out, np.abs(relu))
    expected = relu.astype(np.float64).sum(1) * 0.5
    np.testing.assert_allclose(sums[[0, 2, 3, 4, 5]], expected[[0, 2, 3, 4, 5]], rtol=1e-5)
    assert np.isnan(sums[1])


def test_a_triton_helper_as_the_combine_function_of_a_tuple_reduce(kernels):
    rows, cols = 5, 77
    x = (RNG.standard_normal((rows, cols)) * 2 + 3).astype(np.float32)
    mean, var = np.empty(rows, np.float32), np.empty(rows, np.float32)
    tk.jit(kernels.welford_rows)[(rows,)](x, mean, var, cols, RBLOCK=128)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, x.astype(np.float64).var(1), rtol=1e-4, atol=1e-5)


def test_one_tk_function_per_triton_function(kernels):
    assert tk.jit(kernels.relu_rows).fn is kernels.relu_rows.fn
    from tk.runtime import _triton_objects

    helper = sys.modules["triton_helpers_t"].maximum
    assert _triton_objects.to_tk(helper) is _triton_objects.to_tk(helper)
    assert _triton_objects.to_tk(sys.modules["triton.language"]) is sys.modules["tk.language"]
    assert _triton_objects.to_tk(sys.modules["triton_helpers_t"]._ACC) is tk.float32


def test_the_triton_kernel_compiles_to_ptx(kernels, ptx_compile):
    kernel = tk.jit(kernels.welford_rows)
    args = [CudaArray(1 << 20), CudaArray(2 << 20), CudaArray(3 << 20), 77]
    ptx = kernel.warmup(*args, RBLOCK=128, grid=(1,)).asm["ptx"]
    assert ".entry welford_rows" in ptx
