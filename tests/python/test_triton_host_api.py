"""Triton's host API as a ported program meets it (docs/python.md, "Porting
from Triton"): the module paths, dtypes as objects, kernels whose text comes
from exec() or linecache or replaces a JITFunction's, reinterpret, the error
base class, the allocator, knobs, the driver's CPU answers. Kernels run on the
interpreter on numpy arrays (torch, where a case needs it, is optional)."""

import importlib
import linecache
import os
import textwrap

import numpy as np
import pytest

import tk
import tk.language as tl

RNG = np.random.default_rng(18)


@pytest.mark.parametrize("module", [
    "tk.language", "tk.language.core", "tk.language.math", "tk.language.extra",
    "tk.language.extra.libdevice", "tk.language.extra.cuda", "tk.language.extra.cuda.libdevice",
    "tk.testing", "tk.runtime", "tk.runtime.jit", "tk.runtime.errors", "tk.runtime.driver",
    "tk.runtime._allocation", "tk.tools", "tk.tools.tensor_descriptor", "tk.knobs",
])
def test_triton_module_paths_import(module):
    m = importlib.import_module(module)
    assert m.__name__ == module


def test_names_resolve_where_triton_has_them():
    from tk.language.core import constexpr_type
    from tk.runtime.errors import InterpreterError, OutOfResources
    from tk.runtime.jit import JITFunction, TensorWrapper, reinterpret, type_canonicalisation_dict
    from tk.tools.tensor_descriptor import TensorDescriptor

    assert tk.runtime.jit.TensorWrapper is TensorWrapper is tk.TensorWrapper
    assert reinterpret is tk.reinterpret and JITFunction is tk.JITFunction
    assert InterpreterError is tk.InterpreterError and OutOfResources is tk.OutOfResources
    assert constexpr_type(3) == constexpr_type(3) != constexpr_type(4)
    assert type_canonicalisation_dict["bool"] == "u1" and type_canonicalisation_dict["u1"] == "u1"
    assert type_canonicalisation_dict["float8_e4m3fn"] == "fp8e4nv"
    assert TensorDescriptor is tk.tools.tensor_descriptor.TensorDescriptor


def test_libtriton_cublas_checks_shapes():
    # Tutorial 09's `from triton._C.libtriton import nvidia`, ported.
    from tk._C.libtriton import nvidia

    torch = pytest.importorskip("torch")
    lt = nvidia.cublas.CublasLt(torch.empty(16, dtype=torch.uint8))
    a = torch.from_numpy(RNG.standard_normal((5, 7)).astype(np.float32))
    b = torch.from_numpy(RNG.standard_normal((3, 7)).astype(np.float32))
    c = torch.empty((5, 3))
    lt.matmul(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy().T, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="do not make c = a @ b.T"):
        lt.matmul(a, b.T.contiguous(), c)


def test_missing_triton_names_say_so():
    from tk.language.extra import libdevice

    with pytest.raises(AttributeError, match="not in tk yet"):
        libdevice.no_such_function_anywhere
    with pytest.raises(AttributeError, match="not in tk yet"):
        tl.math.no_such_function_anywhere


#
# dtypes
#


def test_dtype_kind_lists_are_tritons():
    assert tl.dtype.SINT_TYPES == ["int8", "int16", "int32", "int64"]
    assert tl.dtype.UINT_TYPES == ["int1", "uint8", "uint16", "uint32", "uint64"]
    assert tl.dtype.STANDARD_FP_TYPES == ["fp16", "bf16", "fp32", "fp64"]
    assert "fp8e4nv" in tl.dtype.FP_TYPES and tl.dtype.OTHER_TYPES == ["void"]
    # test_core builds its dtypes this way: one object per name.
    made = list(map(tl.dtype, tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.STANDARD_FP_TYPES))
    assert made[0] is tl.int8 and made[4] is tl.int1 and made[-1] is tl.float64
    with pytest.raises(ValueError, match="not a dtype name"):
        tl.dtype("int7")


@pytest.mark.parametrize("name, bits, mantissa, bias", [
    ("float16", 16, 10, 15), ("bfloat16", 16, 7, 127), ("float32", 32, 23, 127),
    ("float64", 64, 52, 1023), ("float8e4nv", 8, 3, 7), ("float8e5", 8, 2, 15),
    ("float8e4b15", 8, 3, 15),
])
def test_float_dtype_attributes(name, bits, mantissa, bias):
    dt = getattr(tl, name)
    assert dt.primitive_bitwidth == bits and dt.itemsize == bits // 8
    assert dt.fp_mantissa_width == mantissa and dt.exponent_bias == bias
    assert dt.is_floating() and not dt.is_int() and not dt.is_ptr()


def test_integer_dtype_attributes_and_predicates():
    assert str(tl.int32) == tl.int32.name == "int32" and str(tl.float16) == "fp16"
    assert tl.uint16.int_bitwidth == 16 and tl.uint16.get_int_max_value() == 65535
    assert tl.int8.get_int_min_value() == -128 and tl.int8.get_int_max_value() == 127
    assert tl.int1.is_bool() and tl.int1.is_int_unsigned()  # as Triton counts int1
    assert tl.int64.is_int64() and not tl.int64.is_uint64() and tl.float16.is_fp16()
    assert tl.bfloat16.is_bf16() and tl.float8e4nv.is_fp8() and tl.float8e4nv.is_fp8e4nv()
    assert tl.float32.is_standard_floating() and not tl.float8e5.is_standard_floating()
    assert tl.int8.kind() == tl.dtype.KIND.INTEGRAL and tl.int1.kind() == tl.dtype.KIND.BOOLEAN


def test_str_to_ty_pointer_type_and_const():
    assert tl.str_to_ty("fp16") is tl.float16 and tl.str_to_ty("u1") is tl.int1
    assert tl.str_to_ty("i64") is tl.int64 and tl.str_to_ty("bf16") is tl.bfloat16
    p = tl.str_to_ty("*i32")
    assert p.is_ptr() and p.element_ty is tl.int32 and p == tl.pi32_t and not p.is_const()
    assert tl.str_to_ty("*kfp32").is_const()
    assert tl.str_to_ty("constexpr", 5) == tl.core.constexpr_type(5)
    assert tl.str_to_ty(("i32", "fp32")) == (tl.int32, tl.float32)
    with pytest.raises(KeyError, match="not a type name"):
        tl.str_to_ty("int7")
    assert isinstance(tl.const, type)


#
# Kernels whose text is not in a file
#

ADD_TEXT = '''
@tk.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + ADDEND, mask=mask)
'''


def _run_add(kernel, n=100):
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    kernel[(1,)](x, out, n, BLOCK=128)
    return x, out


def test_kernel_made_by_exec_runs_on_the_interpreter():
    # test_core's patch_kernel in interpreter mode: exec of a string the
    # caller holds, into a fresh namespace, with the caller's globals.
    src = ADD_TEXT.replace("ADDEND", "3.5")
    namespace = {}
    exec(src, globals(), namespace)
    x, out = _run_add(namespace["add_one"])
    np.testing.assert_array_equal(out, x + np.float32(3.5))


def test_kernel_made_by_exec_reports_errors_in_its_text():
    src = ADD_TEXT.replace("ADDEND", "undefined_thing")
    namespace = {}
    exec(src, globals(), namespace)
    with pytest.raises(tk.CompilationError) as e:
        _run_add(namespace["add_one"])
    # Line 6 of the text (it starts with a newline), column of the name.
    assert "<string>:6:" in str(e.value) and "undefined name 'undefined_thing'" in str(e.value)
    assert "tk.load(x_ptr + offs, mask=mask) + undefined_thing" in str(e.value)


def test_exec_of_a_string_nobody_holds_is_a_clear_error():
    # A string built inside the exec call is held by no frame: it cannot be
    # found (ADD_TEXT, a global, compiles to other code and does not count).
    namespace = {}
    exec("".join([ADD_TEXT.replace("ADDEND", "2.0")]), globals(), namespace)
    with pytest.raises(tk.CompilationError, match="cannot read the source of 'add_one'"):
        _run_add(namespace["add_one"])


def test_kernel_in_text_registered_with_linecache():
    name = "<generated-add-kernel>"
    text = ADD_TEXT.replace("ADDEND", "ADDEND_VALUE")
    linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)
    try:
        namespace = {"tk": tk, "ADDEND_VALUE": 0.25}
        exec(compile(text, name, "exec"), namespace)
        x, out = _run_add(namespace["add_one"])
        np.testing.assert_array_equal(out, x + np.float32(0.25))
        namespace["ADDEND_VALUE"] = "not a number"
        bad = text.replace("ADDEND_VALUE", "missing_name")
        linecache.cache[name] = (len(bad), None, bad.splitlines(keepends=True), name)
        exec(compile(bad, name, "exec"), namespace)
        with pytest.raises(tk.CompilationError, match=f"{name}:6:"):
            _run_add(namespace["add_one"])
    finally:
        linecache.cache.pop(name, None)


@tk.jit
def scale_template(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


FACTOR = 2.0
FACTOR_LINE = scale_template.fn.__code__.co_firstlineno + 4  # the tk.store line


def test_unsafe_update_src_replaces_the_text():
    # test_core's patch_kernel on the GPU: a fresh JITFunction of the
    # template's function, its src edited, then _unsafe_update_src.
    kernel = tk.JITFunction(scale_template.fn)
    assert kernel.src.startswith("def scale_template(") and "* FACTOR" in kernel.src
    x, out = _run_add(kernel)
    np.testing.assert_array_equal(out, x * np.float32(2.0))
    kernel._unsafe_update_src(kernel.src.replace("* FACTOR", "* FACTOR + 1.0"))
    x, out = _run_add(kernel)  # the same arguments: the new text compiles
    np.testing.assert_array_equal(out, x * np.float32(2.0) + np.float32(1.0))
    with pytest.raises(AttributeError, match="_unsafe_update_src"):
        kernel.src = "def f(): pass"


def test_unsafe_update_src_errors_point_into_the_new_text():
    kernel = tk.JITFunction(scale_template.fn)
    kernel._unsafe_update_src(kernel.src.replace("* FACTOR", "* NOT_DEFINED"))
    with pytest.raises(tk.CompilationError) as e:
        _run_add(kernel)
    assert f"{__file__}:{FACTOR_LINE}:" in str(e.value)
    assert "* NOT_DEFINED" in str(e.value)


#
# reinterpret and TensorWrapper
#


@tk.jit
def widen_kernel(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask).to(tk.int32), mask=mask)


def test_reinterpret_passes_the_memory_as_another_dtype():
    n = 77
    x = RNG.integers(-128, 128, n).astype(np.int8)
    out = np.zeros(n, np.int32)
    # numpy 2 arrays have .device; a TensorWrapper of one runs on the interpreter.
    wrapped = tk.TensorWrapper(x, tk.uint8)
    assert wrapped.dtype is tk.uint8 and wrapped.base is x and wrapped.shape == x.shape
    widen_kernel[(1,)](wrapped, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x.view(np.uint8).astype(np.int32))
    widen_kernel[(1,)](x, out, n, BLOCK=128)  # the same array unwrapped: signed
    np.testing.assert_array_equal(out, x.astype(np.int32))


def test_reinterpret_rules():
    with pytest.raises(TypeError, match="tk.reinterpret takes a tensor with data_ptr"):
        tk.reinterpret(np.zeros(4, np.int8), tk.uint8)

    class FakeTensor:  # what reinterpret needs of a tensor
        dtype, data, device, shape = "torch.int8", b"", "cpu", (4,)

        def data_ptr(self):
            return 0

    t = FakeTensor()
    w = tk.reinterpret(t, tk.uint8)
    assert isinstance(w, tk.TensorWrapper) and w.base is t and w.dtype is tk.uint8
    assert tk.reinterpret(w, tk.float8e5).dtype is tk.float8e5
    assert tk.reinterpret(w, "torch.int8") is t  # back to its own dtype: the base


def test_reinterpret_as_a_dtype_tk_lacks_names_the_argument():
    x = np.zeros(8, np.int8)
    with pytest.raises(TypeError, match="argument 'x_ptr'.*tk has no fp8e4b8 type yet"):
        widen_kernel[(1,)](tk.TensorWrapper(x, tk.float8e4b8), np.zeros(8, np.int32), 8, BLOCK=8)


def test_reinterpret_as_fp8_passes_fp8_memory():
    # int8 memory seen as fp8e4nv (what Triton's tests do with torch tensors):
    # the kernel converts each value (fp8 -> fp32 -> int32, toward zero).
    bits = np.array([0x38, 0x40, 0xC4, 0x4A, 0x7E, 0x01, 0xB8], np.uint8)  # 1 2 -3 5 448 tiny -1
    out = np.zeros(7, np.int32)
    widen_kernel[(1,)](tk.TensorWrapper(bits.view(np.int8), tk.float8e4nv), out, 7, BLOCK=8)
    assert out.tolist() == [1, 2, -3, 5, 448, 0, -1]


#
# Errors, allocator, knobs, driver, descriptors, testing
#


def test_triton_error_is_the_base_of_tks_errors():
    for cls in (tk.CompilationError, tk.InterpreterError, tk.OutOfResources, tk.DriverError):
        assert issubclass(cls, tk.TritonError), cls
    assert issubclass(tk.InterpreterError, RuntimeError)  # as before
    kernel = tk.JITFunction(scale_template.fn)
    kernel._unsafe_update_src(kernel.src.replace("* FACTOR", "* 1 +"))
    with pytest.raises(tk.TritonError):
        _run_add(kernel)


def test_set_allocator():
    from tk.runtime import _allocation

    assert isinstance(_allocation.get_allocator(), _allocation.NullAllocator)
    with pytest.raises(RuntimeError, match="no allocator is set"):
        _allocation.get_allocator()(128, 16, None)
    calls = []
    try:
        tk.set_allocator(lambda size, align, stream: calls.append((size, align)) or bytearray(size))
        assert len(_allocation.get_allocator()(64, 16, None)) == 64 and calls == [(64, 16)]
        with pytest.raises(TypeError, match="takes a callable"):
            tk.set_allocator(42)
    finally:
        tk.set_allocator(_allocation.NullAllocator())


def test_knobs_are_tks_environment_variables(monkeypatch):
    from tk import knobs

    monkeypatch.delenv("TK_ARCH", raising=False)
    assert knobs.runtime.knob_descriptors["interpret"].key == "TK_INTERPRET"
    assert knobs.runtime.interpret is True  # conftest sets TK_INTERPRET=1
    with knobs.runtime.scope():
        knobs.runtime.override_arch = "sm80"  # Triton's spelling
        assert os.environ["TK_ARCH"] == "sm_80" and knobs.runtime.override_arch == "sm_80"
        knobs.runtime.interpret = False
        assert os.environ["TK_INTERPRET"] == "0" and tk._C.knob("TK_INTERPRET") is False
    assert "TK_ARCH" not in os.environ and os.environ["TK_INTERPRET"] == "1"
    monkeypatch.setenv("TK_CACHE_DIR", "/tmp/somewhere")
    assert knobs.cache.dir == "/tmp/somewhere"
    monkeypatch.setenv("TK_PRINT_AUTOTUNING", "maybe")
    with pytest.raises(ValueError, match="TK_PRINT_AUTOTUNING"):
        knobs.autotuning.print


def test_knobs_without_a_variable_keep_their_value_per_set():
    from tk import knobs

    assert knobs.runtime.debug is False
    fresh = knobs.runtime.copy().reset()
    fresh.debug = True
    assert fresh.debug is True and knobs.runtime.debug is False
    assert fresh.reset().debug is False
    with pytest.raises(AttributeError, match="has no knob 'no_such_knob'"):
        knobs.language.no_such_knob = 1
    assert isinstance(knobs.runtime, knobs.base_knobs)


def test_driver_answers_on_the_cpu():
    from tk.runtime import driver

    active = driver.active
    if tk.testing.gpu_available():
        pytest.skip("a GPU is here: the CPU answers are for interpreter mode")
    assert str(active.get_active_torch_device()) == "cpu"
    # The device tk compiles for by default (an H200), so that host code
    # sizing grids from it makes the grid it would make on the GPU.
    props = active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 232448
    assert props["warpSize"] == 32 and props["max_num_regs"] == 65536
    assert active.get_current_target() == ("cuda", 90, 32)


def test_tensor_descriptor_where_a_pointer_is_expected():
    from tk.tools.tensor_descriptor import TensorDescriptor

    x = np.zeros((64, 32), np.float16)
    desc = TensorDescriptor(x, [64, 32], [32, 1], [16, 16])
    assert desc.block_shape == [16, 16] and desc.base is x
    with pytest.raises(ValueError, match="last stride must be 1"):
        TensorDescriptor(x, [64, 32], [1, 64], [16, 16])
    # A descriptor is a kernel argument (test_host_descriptor.py), but not a
    # pointer: arithmetic on it is a located error.
    with pytest.raises(tk.CompilationError, match="invalid operand to '\\+': tensor_descriptor"):
        widen_kernel[(1,)](desc, np.zeros(8, np.int32), 8, BLOCK=8)


def test_do_bench_cudagraph_needs_a_gpu():
    if tk.testing.gpu_available():
        pytest.skip("a GPU is here")
    with pytest.raises(tk.DriverError):
        tk.testing.do_bench_cudagraph(lambda: None)


def test_autotune_key_naming_no_parameter_is_ignored():
    # Tutorial 08 upstream has key=[..., 'gropup_c_ptrs', ...]; Triton ignores it.
    @tk.autotune(configs=[tk.Config({"BLOCK": 128})], key=["n", "no_such_parameter"])
    @tk.jit
    def add_one_tuned(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        mask = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)

    x = RNG.standard_normal(100).astype(np.float32)
    out = np.zeros_like(x)
    add_one_tuned[(1,)](x, out, 100)
    np.testing.assert_array_equal(out, x + np.float32(1.0))
    with pytest.raises(TypeError, match="reset_to_zero.*no_such"):
        tk.autotune(configs=[tk.Config({})], key=[], reset_to_zero=["no_such"])(add_one_tuned.fn)


def test_numpy_bfloat16_arrays_run_on_the_interpreter():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    n = 50
    x = RNG.standard_normal(n).astype(ml_dtypes.bfloat16)
    out = np.zeros(n, np.float32)

    @tk.jit
    def to_fp32(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        mask = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask).to(tk.float32), mask=mask)

    to_fp32[(1,)](x, out, n, BLOCK=64)
    np.testing.assert_array_equal(out, x.astype(np.float32))


def _flops_metadata(grid, kernel, args):
    return {"name": f"{kernel.name} [n={args['n']}]", "flops32": 2.0 * args["n"], "bytes": 8 * args["n"]}


@tk.jit(launch_metadata=_flops_metadata)
def profiled_add(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def test_profiler_times_scopes_and_launches(tmp_path, monkeypatch, capsys):
    import json

    import tk.profiler as proton
    import tk.profiler.viewer as viewer

    monkeypatch.chdir(tmp_path)
    x = RNG.standard_normal(100).astype(np.float32)
    out = np.zeros_like(x)
    proton.start("prof", hook="triton")
    proton.deactivate()
    profiled_add[(1,)](x, out, 100, BLOCK=128)  # not recorded
    proton.activate(0)
    with proton.scope("outer", {"flops16": 1000.0}):
        for _ in range(3):
            profiled_add[(1,)](x, out, 100, BLOCK=128)
    profiled_add[(1,)](x, out, 50, BLOCK=128)
    proton.finalize()
    np.testing.assert_array_equal(out[:50], x[:50] + np.float32(1.0))
    tree = json.load(open(tmp_path / "prof.hatchet"))
    root = tree[0]
    names = {c["frame"]["name"]: c for c in root["children"]}
    assert set(names) == {"outer", "profiled_add [n=50]"}
    inner = names["outer"]["children"][0]
    assert inner["frame"]["name"] == "profiled_add [n=100]" and inner["metrics"]["count"] == 3
    assert inner["metrics"]["flops32"] == 600.0 and inner["metrics"]["time (ns)"] > 0
    assert names["outer"]["metrics"]["count"] == 1 and names["outer"]["metrics"]["flops16"] == 1000
    printed = capsys.readouterr().out
    assert "prof.hatchet" in printed and "profiled_add [n=100]" in printed
    tree, metrics = viewer.parse(["time/ms", "gflop32/s"], str(tmp_path / "prof.hatchet"))
    viewer.print_tree(tree, metrics)
    assert "gflop32/s" in capsys.readouterr().out
    assert "__getitem__" not in vars(tk.JITFunction)  # the launch path is C again
    with pytest.raises(ValueError, match="unknown metric"):
        viewer.parse(["furlongs"], str(tmp_path / "prof.hatchet"))


#
# @jit functions as constexpr arguments; messages test_core matches on
#


@tk.jit
def silu(x):
    return x / (1.0 + tk.exp(-x))


@tk.jit
def square(x):
    return x * x


@tk.jit
def activation_kernel(x_ptr, out_ptr, n, BLOCK: tk.constexpr, ACT: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, ACT(tk.load(x_ptr + offs, mask=mask)), mask=mask)


def test_jit_function_passed_as_a_constexpr():
    n = 100
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    activation_kernel[(1,)](x, out, n, BLOCK=128, ACT=silu)
    np.testing.assert_allclose(out, x / (1.0 + np.exp(-x)), rtol=1e-5, atol=1e-6)
    activation_kernel[(1,)](x, out, n, BLOCK=128, ACT=square)  # another function: recompiled
    np.testing.assert_array_equal(out, x * x)
    assert len(activation_kernel.cache) == 2
    with pytest.raises(TypeError, match="constexpr 'ACT' must be .* @tk.jit function, tk "
                                        "builtin or a tuple of them"):
        activation_kernel[(1,)](x, out, n, BLOCK=128, ACT=np.exp)


@tk.jit
def divide_kernel(a_ptr, b_ptr, out_ptr, s, BLOCK: tk.constexpr, OP: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    a = tk.load(a_ptr + offs)
    b = tk.load(b_ptr + offs)
    if OP == "mod":
        r = a % b
    elif OP == "floordiv_scalar":
        r = a // s
    else:
        r = a % 7
    tk.store(out_ptr + offs, r)


def test_division_of_mixed_signedness_is_refused_as_in_triton():
    a = RNG.integers(1, 1000, 16).astype(np.uint32)
    b = RNG.integers(1, 50, 16).astype(np.int32)
    out = np.zeros(16, np.uint32)
    for op, s in (("mod", 3), ("floordiv_scalar", -3)):
        with pytest.raises(tk.TritonError, match="Cannot use .* because they have different "
                           "signedness"):
            divide_kernel[(1,)](a, b, out, s, BLOCK=16, OP=op)
    divide_kernel[(1,)](a, b, out, 3, BLOCK=16, OP="literal")  # a Python int takes a's type
    np.testing.assert_array_equal(out, a % 7)


@tk.jit
def bitwise_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(out_ptr + offs, tk.load(x_ptr + offs) ^ tk.load(y_ptr + offs))


def test_bitwise_on_floats_says_invalid_operands_of_type():
    x = RNG.standard_normal(16).astype(np.float32)
    with pytest.raises(tk.TritonError, match="invalid operands of type"):
        bitwise_kernel[(1,)](x, x, np.zeros(16, np.float32), BLOCK=16)


@tk.jit
def select_pointer_kernel(cond_ptr, a_ptr, b_ptr, out_ptr, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    # Addresses held as int64 become int32 pointers (test_core's test_where).
    a = tk.load(a_ptr + offs).to(tk.pi32_t)
    b = tk.load(b_ptr + offs).to(tk.pi32_t)
    chosen = tk.where(tk.load(cond_ptr + offs) != 0, a, b)
    tk.store(out_ptr + offs, tk.load(chosen))


def test_pi32_t_in_a_kernel():
    # The interpreter follows no host addresses (docs/python.md), so this
    # compiles and reads the IR: the int64 addresses become int32 pointers.
    a = np.zeros(16, np.int64)
    cond = np.zeros(16, np.int32)
    k = select_pointer_kernel.warmup(cond, a, a, np.zeros(16, np.int32), BLOCK=16)
    assert "inttoptr" in k.asm["ir"] and "tensor<16xptr<i32>>" in k.asm["ir"]
    assert tk.pi32_t == tk.pointer_type(tk.int32)  # the host object


class _DeviceArray:
    """Device memory as far as a GPU compile looks (warmup launches nothing)."""

    def __init__(self, address, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4",
                                         "data": (address, False), "version": 3}


@tk.jit
def _asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.extra.libdevice.asin(x), mask=mask)


def _toolkit_libdevice():
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        path = os.path.join(home or "", "nvvm", "libdevice", "libdevice.10.bc")
        if home and os.path.isfile(path):
            return path
    return None


def test_extern_libs_libdevice_is_the_file_linked(monkeypatch, tmp_path):
    # Tutorial 07: extern_libs={'libdevice': path} links that file (and the
    # path, with the file's contents, is part of the cache key); a path that
    # names no file is an error on the GPU path, as in Triton.
    monkeypatch.delenv("TK_INTERPRET", raising=False)
    x, y = _DeviceArray(1 << 20, 100), _DeviceArray(2 << 20, 100)
    with pytest.raises(FileNotFoundError, match=r"extern_libs\['libdevice'\] of _asin_kernel"):
        _asin_kernel.warmup(x, y, 100, 128, grid=(1,),
                            extern_libs={"libdevice": str(tmp_path / "libdevice.10.bc")})
    bad = tmp_path / "bad.bc"
    bad.write_text("not bitcode")
    with pytest.raises(tk.CompilationError, match=f"libdevice '{bad}' is not valid bitcode"):
        _asin_kernel.warmup(x, y, 100, 128, grid=(1,), extern_libs={"libdevice": str(bad)})
    with pytest.raises(TypeError, match="extern_libs of _asin_kernel must be a dict"):
        _asin_kernel.warmup(x, y, 100, 128, grid=(1,), extern_libs=["libdevice"])
    lib = _toolkit_libdevice()
    if lib is None:
        pytest.skip("no CUDA toolkit libdevice here: the linked-file half needs one")
    chosen = _asin_kernel.warmup(x, y, 100, 128, grid=(1,), extern_libs={"libdevice": lib})
    plain = _asin_kernel.warmup(x, y, 100, 128, grid=(1,))
    assert chosen is not plain  # another cache entry
    assert chosen.asm["ptx"] == plain.asm["ptx"]


def test_extern_libs_is_ignored_by_the_interpreter():
    # Triton's interpreter takes the launch option and does not read the file.
    x = RNG.random(100).astype(np.float32)
    y = np.zeros_like(x)
    _asin_kernel[(1,)](x, y, 100, 128, extern_libs={"libdevice": "/no/such/libdevice.10.bc"})
    np.testing.assert_allclose(y, np.arcsin(x), rtol=1e-6, atol=1e-7)


@tk.jit
def _scale_kernel(x_ptr, y_ptr):
    offs = tl.arange(0, 128)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 1.5 + 1.0)


def test_arch_launch_option(monkeypatch):
    # Triton's arch= (test_override_arch, test_num_ctas_pre_sm90): the target
    # of a GPU compile, in Triton's spelling.
    monkeypatch.delenv("TK_INTERPRET", raising=False)
    x, y = _DeviceArray(1 << 20, 128), _DeviceArray(2 << 20, 128)
    for arch, target in [("sm80", "sm_80"), ("sm90", "sm_90a"), ("sm_86", "sm_86")]:
        h = _scale_kernel.warmup(x, y, grid=(1,), arch=arch)
        assert f".target {target}" in h.asm["ptx"], arch
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        _scale_kernel.warmup(x, y, grid=(1,), num_ctas=2, arch="sm80")
    with pytest.raises(ValueError, match="arch of _scale_kernel must have the form sm<NN>"):
        _scale_kernel.warmup(x, y, grid=(1,), arch="hopper")
    with pytest.raises(tk.CompilationError, match="sm_70"):
        _scale_kernel.warmup(x, y, grid=(1,), arch="sm70")


@tk.jit
def _value_kernel(VALUE, X):
    tl.store(X, VALUE.to(tl.float32))


@pytest.mark.parametrize("value", [-2**63 - 1, 2**64])
def test_int_argument_beyond_64_bits_is_an_overflow_error(value):
    # test_value_specialization_overflow expects OverflowError; tk's error is
    # also the TypeError naming the argument.
    x = np.zeros(1, np.float32)
    with pytest.raises(OverflowError, match="argument 'VALUE' of _value_kernel"):
        _value_kernel[(1,)](value, x)
    with pytest.raises(TypeError, match="does not fit in 64 bits"):
        _value_kernel[(1,)](value, x)
    _value_kernel[(1,)](2**62, x)  # fits
    assert x[0] == np.float32(2**62)


@tk.jit
def _u64_kernel(VALUE, OUT):
    tl.store(OUT, VALUE)


@pytest.mark.parametrize("value", [2**64 - 1, 2**63, 2**63 + 12345])
def test_u64_argument_above_int64_max_runs(value):
    # test_value_specialization_overflow's 2**64 - 1 case: the argument is a
    # u64 and its bits reach the kernel unchanged.
    out = np.zeros(1, np.uint64)
    _u64_kernel[(1,)](value, out)
    assert int(out[0]) == value


@tk.jit
def _bad_axis_kernel(X):
    tl.program_id(20)


def test_an_interpreter_compile_error_is_also_an_interpreter_error():
    # Triton's interpreter raises its front end's errors as InterpreterError
    # (test_core's test_tma_*_block_shape_err under TRITON_INTERPRET); on
    # tk's interpreter they are compile errors, and both kinds catch them.
    x = np.zeros(4, np.float32)
    for kind in (tk.CompilationError, tk.InterpreterError):
        with pytest.raises(kind) as e:
            _bad_axis_kernel[(1,)](x)
        assert "program_id axis must be 0, 1, or 2 but got 20" in str(e.value.__cause__)
