"""Specialisation, the in-memory cache, recompilation on changed helpers and
globals, warmup's IR, and errors that point into the user's file."""

import importlib
import inspect
import re
import sys
import textwrap

import numpy as np
import pytest

import bad_kernels
import tk
import tk.runtime.jit as tkjit

RNG = np.random.default_rng(777)


@pytest.fixture
def compiles(monkeypatch):
    """Counts the compiles that reach the C++ compiler."""
    calls = []
    real = tkjit._C.compile

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(tkjit._C, "compile", counting)
    return calls


@tk.jit
def axpy(x_ptr, y_ptr, a, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(y_ptr + offs, a * tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


def run_axpy(n, a=2.0, dtype=np.float32, block=128, x=None):
    x = RNG.uniform(1, 2, n).astype(dtype) if x is None else x
    y = RNG.uniform(1, 2, n).astype(dtype)
    expected = a * x.astype(np.float64) + y
    k = axpy[(tk.cdiv(n, block),)](x, y, a, n, BLOCK=block)
    tk.testing.assert_close(y, expected, atol=1e-2, rtol=1e-3)
    return k


def test_same_specialisation_compiles_once(compiles):
    axpy.cache.clear()
    run_axpy(1024)
    run_axpy(999)  # 999 % 16 != 0: a different specialisation
    run_axpy(1003)  # same as 999: from the cache
    run_axpy(1024, a=3.0)  # scalars' values are not part of the key
    assert compiles == ["axpy", "axpy"]


def test_specialisation_facts():
    k = run_axpy(64)
    assert k.signature == "*fp32:16, *fp32:16, fp32, i32:16"
    assert "divisibility = 16" in k.asm["ir"]
    k = run_axpy(1)
    assert k.signature == "*fp32:16, *fp32:16, fp32, i32:1"
    k = run_axpy(50, dtype=np.float16)
    assert k.signature == "*fp16:16, *fp16:16, fp32, i32"
    # 8 | n, 16 does not: ":8" (an fp16 row of n elements is 16-byte aligned)
    k = run_axpy(40, dtype=np.float16)
    assert k.signature == "*fp16:16, *fp16:16, fp32, i32:8"
    assert "divisibility = 8" in k.asm["ir"]
    # A pointer 4 bytes past a 16-byte boundary is not specialised.
    base = RNG.uniform(1, 2, 65).astype(np.float32)
    if base.ctypes.data % 16 == 0:
        k = run_axpy(64, x=base[1:])
        assert k.signature.startswith("*fp32, ")


def test_constexpr_values_are_in_the_key(compiles):
    axpy.cache.clear()
    run_axpy(100, block=64)
    run_axpy(100, block=128)
    run_axpy(100, block=64)
    assert len(compiles) == 2


@tk.jit(do_not_specialize=["n"])
def axpy_nospec(x_ptr, y_ptr, a, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(y_ptr + offs, a * tk.load(x_ptr + offs, mask=mask), mask=mask)


def test_do_not_specialize(compiles):
    x = RNG.uniform(1, 2, 64).astype(np.float32)
    y = np.zeros_like(x)
    k1 = axpy_nospec[(1,)](x, y, 1.0, 32, BLOCK=64)
    k2 = axpy_nospec[(1,)](x, y, 1.0, 1, BLOCK=64)
    assert k1.signature == "*fp32:16, *fp32:16, fp32, i32"
    assert k1 is k2 and len(compiles) == 1
    assert y[0] == x[0] and (y[1:32] == x[1:32]).all()


def test_warmup_returns_ir_without_running():
    x = np.ones(16, np.float32)
    y = np.full(16, 5.0, np.float32)
    k = axpy.warmup(x, y, 1.0, 16, BLOCK=16, grid=(1,))
    assert (y == 5.0).all()
    assert "func @axpy" in k.asm["ir"] and "load" in k.asm["ir-opt"]
    assert k.constants == {"BLOCK": 16}
    assert axpy.compile(x, y, 1.0, 16, BLOCK=16) is k


def write_module(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


KERNEL_MODULE = """
    import tk
    from {helper} import helper

    OFFSET = 10

    @tk.jit
    def kernel(x_ptr, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, helper(tk.load(x_ptr + offs)) + OFFSET)
"""


def test_changed_helper_or_global_recompiles(tmp_path, compiles):
    helper_v1 = write_module(tmp_path, "tk_test_helper_a", """
        import tk

        @tk.jit
        def helper(x):
            return x * 2
    """)
    mod = write_module(tmp_path, "tk_test_kernel_mod", KERNEL_MODULE.format(helper="tk_test_helper_a"))
    x = np.arange(1, 9, dtype=np.float32)
    mod.kernel[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(1, 9) * 2 + 10)
    mod.kernel[(1,)](x, BLOCK=8)
    assert len(compiles) == 1

    mod.OFFSET = 100  # a global the kernel reads
    x = np.arange(1, 9, dtype=np.float32)
    mod.kernel[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(1, 9) * 2 + 100)
    assert len(compiles) == 2

    helper_v2 = write_module(tmp_path, "tk_test_helper_b", """
        import tk

        @tk.jit
        def helper(x):
            return x * 3
    """)
    assert helper_v1.helper.src != helper_v2.helper.src
    mod.helper = helper_v2.helper  # a helper with another source
    x = np.arange(1, 9, dtype=np.float32)
    mod.kernel[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(1, 9) * 3 + 100)
    assert len(compiles) == 3


def line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn.fn)
    for i, line in enumerate(lines):
        if marker in line:
            return first + i, line
    raise AssertionError(marker)


def test_compilation_error_points_into_the_users_file():
    x = np.zeros(8, np.float32)
    with pytest.raises(tk.CompilationError) as e:
        bad_kernels.undefined_name_kernel[(1,)](x, 8, BLOCK=8)
    line, text = line_of(bad_kernels.undefined_name_kernel, "MISTAKE: offz")
    col = text.index("offz") + 1
    msg = str(e.value)
    assert f"bad_kernels.py:{line}:{col}: error: undefined name 'offz'" in msg
    assert "did you mean 'offs'" in msg
    assert text.rstrip("\n") in msg  # the source line, then a caret under offz
    caret_line = msg.split(text.rstrip("\n"), 1)[1].splitlines()[1]
    assert caret_line.index("^") == col - 1


def test_shape_error_names_the_shapes():
    with pytest.raises(tk.CompilationError) as e:
        bad_kernels.shape_mismatch_kernel[(1,)](np.zeros(8, np.float32), BLOCK=8)
    line, _ = line_of(bad_kernels.shape_mismatch_kernel, "MISTAKE: shapes")
    assert f"bad_kernels.py:{line}:" in str(e.value)
    assert "[8]" in str(e.value) and "[16]" in str(e.value)


def test_element_count_past_the_bound_is_a_compilation_error():
    # 2^62 x 4 elements: the product overflows int64; the front end refuses
    # the shape where it is written, before the interpreter allocates.
    with pytest.raises(tk.CompilationError) as e:
        bad_kernels.huge_tile_kernel[(1,)](np.ones(4, np.float32), ROWS=2**62)
    line, _ = line_of(bad_kernels.huge_tile_kernel, "MISTAKE: elements")
    assert f"bad_kernels.py:{line}:" in str(e.value)
    assert "has more than 2^63 elements; a tensor holds at most 2^31" in str(e.value)


def test_out_of_bounds_is_an_exception_with_the_location():
    x = RNG.uniform(1, 2, 10).astype(np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(tk.InterpreterError) as e:
        bad_kernels.out_of_bounds_kernel[(1,)](x, y, BLOCK=16)
    line, _ = line_of(bad_kernels.out_of_bounds_kernel, "no mask")
    msg = str(e.value)
    assert f"bad_kernels.py:{line}:" in msg and "out-of-bounds load" in msg
    assert "'x_ptr'" in msg
    assert isinstance(e.value, RuntimeError)


def test_argument_errors_name_the_argument():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"axpy\(x_ptr, y_ptr, a, n, BLOCK\) is missing 1 argument: 'n'"):
        axpy[(1,)](x, x, 1.0, BLOCK=8)
    with pytest.raises(TypeError, match="takes 5 arguments but 6 were given"):
        axpy[(1,)](x, x, 1.0, 8, 8, 9)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'; did you mean 'BLOCK'"):
        axpy[(1,)](x, x, 1.0, 8, BLOK=8)
    with pytest.raises(TypeError, match="argument 'x_ptr' of axpy: tk cannot pass a dict"):
        axpy[(1,)]({}, x, 1.0, 8, BLOCK=8)
    with pytest.raises(TypeError, match="argument 'y_ptr' of axpy: tk cannot take arrays of dtype complex64"):
        axpy[(1,)](x, np.zeros(8, np.complex64), 1.0, 8, BLOCK=8)
    class FakeCudaArray:
        __cuda_array_interface__ = {"shape": (8,), "typestr": "<f4", "data": (0, False)}

    with pytest.raises(TypeError, match="argument 'x_ptr' of axpy is a GPU array"):
        axpy[(1,)](FakeCudaArray(), x, 1.0, 8, BLOCK=8)
    with pytest.raises(TypeError, match="does not fit in 64 bits"):
        axpy[(1,)](x, x, 1.0, 2**70, BLOCK=8)
    with pytest.raises(TypeError, match="constexpr 'BLOCK' must be"):
        axpy[(1,)](x, x, 1.0, 8, BLOCK=[8])
    with pytest.raises(TypeError, match="grid of axpy"):
        axpy["x"](x, x, 1.0, 8, BLOCK=8)
    with pytest.raises(ValueError, match="grid dimension 0 is 1180591620717411303424; it must "
                       "be from 0 to 2147483647"):
        axpy[(2**70,)](x, x, 1.0, 8, BLOCK=8)
    with pytest.raises(ValueError, match="it has 4 dimensions; a grid has 1 to 3"):
        axpy[(1, 1, 1, 1)](x, x, 1.0, 8, BLOCK=8)


def test_kernel_not_taking_the_dtype_is_a_compilation_error():
    # tk.dot of int32 x float: lowering rejects it with the types named.
    @tk.jit
    def needs_float(x_ptr, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.sqrt(tk.load(x_ptr + offs)))

    with pytest.raises(tk.CompilationError, match="needs_float|sqrt"):
        needs_float[(1,)](np.zeros(16, np.int32), BLOCK=16)


class _Opaque:
    pass


OPAQUE = _Opaque()


@tk.jit
def reads_opaque(x_ptr):
    tk.store(x_ptr, OPAQUE)


def test_unusable_global_is_explained():
    with pytest.raises(tk.CompilationError) as e:
        reads_opaque[(1,)](np.zeros(1, np.float32))
    assert "undefined name 'OPAQUE'" in str(e.value)
    assert "note: 'OPAQUE' is a global of type _Opaque" in str(e.value)


@tk.jit
def spins(x_ptr, n):
    i = 0
    while i < n:
        i += 1
    tk.store(x_ptr, i.to(tk.float32))


def test_runaway_loops_hit_the_step_budget(monkeypatch):
    x = np.zeros(1, np.float32)
    monkeypatch.setenv("TK_INTERPRET_MAX_STEPS", "10000")
    with pytest.raises(tk.InterpreterError, match="budget of 10000 operations"):
        spins[(1,)](x, 10**7)
    monkeypatch.delenv("TK_INTERPRET_MAX_STEPS")
    spins[(1,)](x, 123)
    assert x[0] == 123


@pytest.mark.parametrize("value", ["lots", "-5", "1.5"])
def test_a_knob_value_it_does_not_take_names_the_variable(monkeypatch, value):
    # Every TK_ variable is parsed by the knob table's one rule
    # (support/Knobs.def): -5 is no longer "no limit", "lots" no bare error.
    x = np.zeros(1, np.float32)
    monkeypatch.setenv("TK_INTERPRET_MAX_STEPS", value)
    with pytest.raises(ValueError, match=f'TK_INTERPRET_MAX_STEPS="{re.escape(value)}" is not a '
                                         "whole number"):
        spins[(1,)](x, 3)
    monkeypatch.setenv("TK_INTERPRET", "maybe")
    with pytest.raises(ValueError, match='TK_INTERPRET="maybe" is not a boolean'):
        spins[(1,)](x, 3)


def test_the_knob_table_is_visible_from_python():
    names = [k[0] for k in tk._C.knobs()]
    assert "TK_DUMP_IR" in names and "TK_LLVM_OPT" in names
    effects = {k[0]: k[4] for k in tk._C.knobs()}
    assert effects["TK_WGMMA_NATIVE"] == "code" and effects["TK_CACHE_DIR"] == "nothing"
    with pytest.raises(KeyError, match="no knob named 'TK_NOPE'"):
        tk._C.knob("TK_NOPE")


DEFAULT_BLOCK = 32


@tk.jit
def default_from_global(x_ptr, BLOCK: tk.constexpr = DEFAULT_BLOCK):
    # Mentioning reads_opaque in a comment does not pull it (and its error) in.
    offs = tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.full((BLOCK,), 1.5, tk.float32))


def test_globals_in_defaults_and_comments():
    x = np.zeros(40, np.float32)
    k = default_from_global[(1,)](x)
    assert (x[:32] == 1.5).all() and (x[32:] == 0).all()
    assert k.constants == {"BLOCK": 32}


def test_always_compile_skips_the_cache(compiles, monkeypatch):
    axpy.cache.clear()
    run_axpy(32)
    run_axpy(32)
    assert len(compiles) == 1
    monkeypatch.setenv("TK_ALWAYS_COMPILE", "1")
    run_axpy(32)
    assert len(compiles) == 2
