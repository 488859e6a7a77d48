"""The tk namespace: Triton's names, dtypes, host helpers, builtins as
referenceable placeholders, testing helpers, and the errors of launches that
cannot happen here."""

import numpy as np
import pytest

import tk


def test_triton_names_exist():
    for name in ("jit", "autotune", "heuristics", "Config", "constexpr", "cdiv", "next_power_of_2",
                 "program_id", "num_programs", "arange", "load", "store", "sum", "max", "dot",
                 "where", "exp", "zeros", "full", "static_range", "range", "atomic_add",
                 "CompilationError", "InterpreterError", "OutOfResources", "testing"):
        assert hasattr(tk, name), name
    assert callable(tk.testing.assert_close) and callable(tk.testing.do_bench)


def test_dtypes_have_both_spellings():
    assert tk.float16 is tk.fp16 and tk.bfloat16 is tk.bf16 and tk.float32 is tk.fp32
    assert tk.int32 is tk.i32 and tk.uint8 is tk.u8 and tk.int1 is tk.i1
    assert repr(tk.float16) == "tk.float16" and str(tk.float16) == "fp16"
    assert tk.float32.primitive_bitwidth == 32 and tk.float32.is_floating()
    assert tk.int8.is_int_signed() and tk.uint16.is_int_unsigned() and not tk.int64.is_floating()


def test_language_module_has_tks_names():
    # Triton's `import triton.language as tl`: a module of its own (with the
    # submodules core, math, extra), holding the same objects as tk.
    import tk.language as tl

    assert tl.load is tk.load and tl.float16 is tk.float16 and tl.constexpr is tk.constexpr
    assert tl.math is tk.math and tl.core.dtype is tk.dtype


@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 17, 1000, 1024, 1025])
def test_host_helpers(n):
    p = tk.next_power_of_2(n)
    assert p >= n and p & (p - 1) == 0 and p // 2 < n
    assert tk.cdiv(n, 16) == -(-n // 16)


def test_builtins_raise_outside_kernels():
    with pytest.raises(RuntimeError, match=r"tk\.load can only be called inside a @tk\.jit kernel"):
        tk.load(None)
    assert "mask" in tk.load.__doc__
    with pytest.raises(RuntimeError, match="launch it as"):

        @tk.jit
        def k(x):
            pass

        k(1)


def test_constexpr_wraps_values():
    c = tk.constexpr(128)
    assert c.value == 128 and c == 128 and tk.constexpr(c).value == 128


def test_config_and_repr():
    c = tk.Config({"BLOCK": 128}, num_warps=8, num_stages=2)
    assert c.all_kwargs() == {"BLOCK": 128, "num_warps": 8, "num_stages": 2}
    assert repr(c) == "BLOCK: 128, num_warps: 8, num_stages: 2"


def test_assert_close():
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, 100).astype(np.float32)
    tk.testing.assert_close(a, a.astype(np.float64) + 1e-4)
    with pytest.raises(AssertionError):
        tk.testing.assert_close(a, a + 1.0)


def _has_cuda_driver():
    return tk.runtime.cuda_driver_available()


@pytest.mark.skipif(_has_cuda_driver(), reason="a CUDA driver is present: do_bench can time")
def test_do_bench_needs_a_gpu():
    with pytest.raises(tk.DriverError, match="GPU"):
        tk.testing.do_bench(lambda: None)


@pytest.mark.skipif(_has_cuda_driver(), reason="a CUDA driver is present: launches can run")
def test_gpu_launch_without_interpreter_says_what_to_do(monkeypatch):
    @tk.jit
    def noop_kernel(x_ptr):
        tk.store(x_ptr, 1.0)

    monkeypatch.setenv("TK_INTERPRET", "0")
    x = np.zeros(4, np.float32)
    with pytest.raises(tk.DriverError, match="TK_INTERPRET=1"):
        noop_kernel[(1,)](x)
    # Read at call time: switching it on makes the same kernel run.
    monkeypatch.setenv("TK_INTERPRET", "1")
    noop_kernel[(1,)](x)
    assert x[0] == 1.0


def test_jit_interpret_argument_overrides_environment(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "0")

    @tk.jit(interpret=True)
    def store_kernel(x_ptr, v):
        tk.store(x_ptr, v)

    x = np.zeros(2, np.float32)
    store_kernel[(1,)](x, 2.5)
    assert x[0] == 2.5 and x[1] == 0.0


def test_gpu_launch_of_a_numpy_array_is_a_type_error_naming_it(monkeypatch):
    """Where a driver exists the launch fails on the argument; where none
    does, on the driver. Either way before anything runs."""

    @tk.jit
    def one_kernel(x_ptr):
        tk.store(x_ptr, 1.0)

    monkeypatch.delenv("TK_INTERPRET")
    x = np.zeros(4, np.float32)
    if _has_cuda_driver():
        with pytest.raises(TypeError, match="'x_ptr'.*CPU array"):
            one_kernel[(1,)](x)
    else:
        with pytest.raises(tk.DriverError, match="no CUDA driver"):
            one_kernel[(1,)](x)
    assert x[0] == 0.0
