"""Front-end constructs that torch Inductor's kernels and Triton's test_core
use, with only the imports changed: one-element tuple scans and reductions,
the "bool" parameter annotation, x.logical_and / x.logical_or, compile-time
helpers of Triton's core and standard modules, hasattr / isinstance, a
run-time `a if c else b` whose arms load or store, storing pointers as
int64, and the errors' `__cause__`. Interpreter and (marked `gpu`) GPU, each
against numpy."""

import numpy as np
import pytest

import tk as triton
import tk as tl
import tk.language.core as tl_core
from lang_compat_util import DEVICES, launch
from tk.language.standard import _log2

RNG = np.random.default_rng(2611)


# --- one-element tuples through tl.associative_scan and tl.reduce ---------


@triton.jit
def _add_fn(a, b):
    return a + b


@triton.jit
def _add_tuple_fn(a, b):
    return (a + b,)


@triton.jit
def one_tuple_scan_kernel(X, S, R, T, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    # Inductor's form: a one-element tuple in, a one-element tuple out.
    tmp3, = tl.associative_scan((x,), 0, _add_fn)
    tl.store(S + offs, tmp3, mask=mask)
    total, = tl.reduce((x,), 0, _add_tuple_fn)
    tl.store(R, total)
    # A bare tensor still gives a bare result.
    tl.store(T + offs, tl.associative_scan(x, 0, _add_fn, reverse=True), mask=mask)


@pytest.mark.parametrize("device", DEVICES)
def test_one_element_tuple_scan_and_reduce_give_tuples(device):
    n = 100  # not the block
    x = RNG.standard_normal(n).astype(np.float32)
    s, r, t = np.zeros(n, np.float32), np.zeros(1, np.float32), np.zeros(n, np.float32)
    launch(one_tuple_scan_kernel, (1,), x, s, r, t, n, 128, device=device)
    np.testing.assert_allclose(s, np.cumsum(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r[0], x.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t, np.cumsum(x[::-1])[::-1], rtol=1e-5, atol=1e-5)


@triton.jit
def _welford(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    weight = weight_1 + weight_2
    w2 = tl.where(weight == 0.0, 0.0, weight_2 / weight)
    return mean_1 + delta * w2, m2_1 + m2_2 + delta * delta * weight_1 * w2, weight


@triton.jit
def var_mean_kernel(X, OUT, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    weight = mask.to(tl.float32)
    sum0, = tl.reduce((x,), 0, _add_fn)
    sum1 = tl.reduce(x, 0, _add_fn)
    mean, m2, w = tl.reduce((x, tl.zeros_like(x), weight), 0, _welford)
    tl.store(OUT + 0, mean)
    tl.store(OUT + 1, m2 / w)
    tl.store(OUT + 2, sum0)
    tl.store(OUT + 3, sum1)


@pytest.mark.parametrize("device", DEVICES)
def test_generic_reduction_of_one_and_three_element_tuples(device):
    n = 300
    x = (RNG.standard_normal(n) * 2 + 0.5).astype(np.float32)
    out = np.zeros(4, np.float32)
    launch(var_mean_kernel, (1,), x, out, n, 512, device=device)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, [x64.mean(), x64.var(), x64.sum(), x64.sum()], rtol=1e-4,
                               atol=1e-4)


@triton.jit
def empty_tuple_reduce_kernel(X):
    r = tl.reduce((), 0, _add_fn)


def test_reduce_of_an_empty_tuple_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: tk.reduce needs at least "
                       r"one tensor, got an empty tuple"):
        empty_tuple_reduce_kernel[(1,)](np.zeros(1, np.float32))


# --- "bool" annotations ----------------------------------------------------


@triton.jit
def bool_annotation_kernel(X, Y, n, flag: "bool", other: "u1", BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.where(flag, x * 2.0, x)
    y = tl.where(other, y + 1.0, y)
    tl.store(Y + offs, y, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("flag,other", [(True, False), (False, True)])
def test_bool_and_u1_annotations_are_i1(device, flag, other):
    n = 50
    x = RNG.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    launch(bool_annotation_kernel, (1,), x, y, n, flag, other, 64, device=device)
    expected = (x * 2 if flag else x) + (1 if other else 0)
    np.testing.assert_array_equal(y, expected.astype(np.float32))


# --- x.logical_and(y), x.logical_or(y) ---------------------------------------


@triton.jit
def logical_kernel(A, B, AND, OR, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=False)
    b = tl.load(B + offs, mask=mask, other=False)
    tl.store(AND + offs, a.logical_and(b), mask=mask)
    tl.store(OR + offs, a.logical_or(b).logical_and(True), mask=mask)


@pytest.mark.parametrize("device", DEVICES)
def test_logical_and_or_methods_on_booleans(device):
    n = 333
    a, b = RNG.random(n) < 0.5, RNG.random(n) < 0.5
    got_and, got_or = np.zeros(n, bool), np.zeros(n, bool)
    launch(logical_kernel, (triton.cdiv(n, 128),), a, b, got_and, got_or, n, 128, device=device)
    np.testing.assert_array_equal(got_and, a & b)
    np.testing.assert_array_equal(got_or, a | b)


@triton.jit
def logical_of_ints_kernel(X):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(X + tl.arange(0, 16), x.logical_and(x > 0))


def test_logical_and_of_integers_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: .logical_and\(\) needs "
                       r"booleans \(int1\), but the receiver is tensor<16xi32>"):
        logical_of_ints_kernel[(1,)](np.zeros(16, np.int32))


# --- compile-time helpers: core.get_int_dtype, standard._log2 ---------------


def _host_log2(n):
    """A plain Python helper: Python runs it where the module is loaded."""
    return n.bit_length() - 1


LOG_BLOCK = tl.constexpr(_host_log2(64))  # a constexpr global made by host code
INT16 = tl_core.get_int_dtype(16, True)


@triton.jit
def int_bits_kernel(X, Y, B, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    # Inductor's sort helpers: an integer dtype of the float's width.
    idtype: tl.constexpr = tl.core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    tl.store(Y + offs, x.to(idtype, bitcast=True), mask=mask)
    n_dims: tl.constexpr = _log2(x.shape[0])
    tl.static_assert(n_dims == LOG_BLOCK)
    tl.static_assert(tl.core.get_int_dtype(1, False) == tl.int1)
    tl.static_assert(INT16 == tl.int16)
    tl.store(B + offs, (x.to(tl.core.get_int_dtype(32, False), bitcast=True) >> 31).to(tl.int32)
             + n_dims, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
def test_get_int_dtype_and_log2_fold_at_compile_time(device):
    n = 40
    x = RNG.standard_normal(n).astype(np.float32)
    y, b = np.zeros(n, np.int32), np.zeros(n, np.int32)
    launch(int_bits_kernel, (1,), x, y, b, n, 64, device=device)
    np.testing.assert_array_equal(y, x.view(np.int32))
    np.testing.assert_array_equal(b, (x.view(np.uint32) >> 31).astype(np.int32) + 6)


def test_get_int_dtype_and_log2_on_the_host():
    assert tl_core.get_int_dtype(16, False) is tl.uint16
    assert tl_core.get_int_dtype(64, True) is tl.int64
    assert tl_core.get_int_dtype(1, True) is tl.int1
    assert _log2(64) == 6 and _log2(tl.constexpr(100)) == 6
    with pytest.raises(ValueError, match="no integer dtype of 12 bits"):
        tl_core.get_int_dtype(12, True)


@triton.jit
def bad_int_dtype_kernel(X):
    d: tl.constexpr = tl.core.get_int_dtype(12, True)


@triton.jit
def host_call_kernel(X):
    n: tl.constexpr = _host_log2(8)


def test_compile_time_helper_errors_are_located():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: get_int_dtype: no "
                       r"integer dtype of 12 bits"):
        bad_int_dtype_kernel[(1,)](np.zeros(1, np.float32))
    # A plain Python function is host code: the kernel cannot call it.
    with pytest.raises(tl.CompilationError) as e:
        host_call_kernel[(1,)](np.zeros(1, np.float32))
    assert "undefined name '_host_log2'" in str(e.value)
    assert "a plain Python function" in str(e.value)


# --- hasattr / isinstance ---------------------------------------------------


@triton.jit
def short_circuit_kernel(x):
    if (x is not None) and hasattr(x, "dtype") and isinstance(
            x.dtype, tl.pointer_type) and (x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
        tl.store(x, 42)


@pytest.mark.parametrize("device", DEVICES)
def test_hasattr_and_isinstance_short_circuit(device):
    for scalar in (None, 1, 2, 7.5):
        launch(short_circuit_kernel, (1,), scalar, device=device)
    cases = [(np.float32, 37.5, 37.5), (np.float32, 84.0, 84.0), (np.int32, -76893, -76893),
             (np.int32, 100000, 42), (np.int64, 100000, 100000)]
    for dt, value, expected in cases:
        x = np.full(1, value, dt)
        launch(short_circuit_kernel, (1,), x, device=device)
        assert x[0] == expected, (dt, value)


@triton.jit
def introspection_kernel(X, OUT, BLOCK: tl.constexpr, C: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    facts = (
        hasattr(x, "shape"), hasattr(x, "T"), hasattr(x, "element_ty"), hasattr(X.dtype,
                                                                                  "element_ty"),
        hasattr(tl, "arange"), hasattr(tl, "no_such_name"), hasattr(tl.PropagateNan, "ALL"),
        hasattr(C, "value"), hasattr(None, "dtype"), isinstance(x, tl.tensor),
        isinstance(C, int), isinstance(C, (float, tl.tensor)), isinstance(x.dtype, tl.dtype),
        isinstance(X.dtype, tl.pointer_type), isinstance(x.dtype, tl.pointer_type),
        isinstance(True, int),
    )
    for i in tl.static_range(len(facts)):
        tl.store(OUT + i, facts[i])


def test_hasattr_and_isinstance_answer_from_what_the_compiler_knows():
    out = np.zeros(16, bool)
    introspection_kernel[(1,)](RNG.standard_normal(8).astype(np.float32), out, 8, 3)
    expected = [True, False, False, True, True, False, True, True, False, True, True, False, True,
                True, False, True]
    assert out.tolist() == expected


@triton.jit
def bad_isinstance_kernel(X):
    tl.static_assert(isinstance(X, tl.load))


def test_isinstance_of_an_unknown_class_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: isinstance\(\) takes "
                       r"tk.tensor, .* got tk.load"):
        bad_isinstance_kernel[(1,)](np.zeros(1, np.float32))


# --- a run-time `a if c else b` ---------------------------------------------


@triton.jit
def if_exp_kernel(XT, XF, X, RET, VALS, n):
    pid = tl.program_id(0)
    # Arms that store: only the taken one runs (were both to run, the
    # second store would win everywhere).
    tl.store(RET + pid, tl.load(XT + pid)) if pid % 2 == 0 else tl.store(RET + pid, tl.load(XF + pid))
    # X has n elements: the programs at n and beyond would read past its end;
    # the interpreter, which checks every access, proves they do not.
    v = tl.load(X + pid) if pid < n else 0.5
    tl.store(VALS + pid, v)


@pytest.mark.parametrize("device", DEVICES)
def test_runtime_if_expression_runs_only_the_taken_arm(device):
    programs, n = 9, 5
    xt, xf = (RNG.standard_normal(programs).astype(np.float32) for _ in range(2))
    x = RNG.standard_normal(n).astype(np.float32)
    ret, vals = np.zeros(programs, np.float32), np.zeros(programs, np.float32)
    launch(if_exp_kernel, (programs,), xt, xf, x, ret, vals, n, device=device)
    even = np.arange(programs) % 2 == 0
    np.testing.assert_array_equal(ret, np.where(even, xt, xf))
    np.testing.assert_array_equal(vals, np.concatenate([x, np.full(programs - n, 0.5, np.float32)]))


@triton.jit
def if_exp_mixed_kernel(X):
    pid = tl.program_id(0)
    v = tl.store(X, 1.0) if pid == 0 else 2.0


def test_if_expression_of_none_and_a_value_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: invalid operand to "
                       r"'if-else': None \(both arms must give a value, or both None\)"):
        if_exp_mixed_kernel[(1,)](np.zeros(1, np.float32))


# --- a helper whose return is never reached gives no value to store ---------


@triton.jit
def _maybe_return(x):
    a = False
    if a:
        return x


@triton.jit
def store_none_kernel(Out):
    tl.store(Out, _maybe_return(0))


def test_storing_none_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"test_lang_compat_gaps.py:\d+:\d+: error: tk.store needs a value "
                       r"to store, got None"):
        store_none_kernel[(1,)](np.zeros(1, np.int32))


# --- pointers selected with tl.where and stored as int64 --------------------


@triton.jit
def where_pointers_kernel(C, A, B, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = tl.load(C + offs, mask=mask)
    a = tl.load(A + offs, mask=mask).to(tl.pi32_t)
    b = tl.load(B + offs, mask=mask).to(tl.pi32_t)
    tl.store(OUT + offs, tl.where(c, a, b), mask=mask)


@pytest.mark.parametrize("device", DEVICES)
def test_pointers_store_as_int64(device):
    n = 1000
    c = RNG.random(n) < 0.5
    a = RNG.integers(-2**40, 2**40, n).astype(np.int64)
    b = RNG.integers(-2**40, 2**40, n).astype(np.int64)
    out = np.zeros(n, np.int64)
    launch(where_pointers_kernel, (triton.cdiv(n, 256),), c, a, b, out, n, 256, device=device)
    np.testing.assert_array_equal(out, np.where(c, a, b))


@triton.jit
def pointer_into_int32_kernel(X, OUT):
    tl.store(OUT, X)


def test_storing_a_pointer_into_int32_is_a_located_error():
    with pytest.raises(tl.CompilationError,
                       match=r"error: cannot store ptr<fp32> through ptr<i32>; a pointer is "
                       r"stored as a 64-bit integer"):
        pointer_into_int32_kernel[(1,)](np.zeros(1, np.float32), np.zeros(1, np.int32))


# --- the first error as the CompilationError's __cause__ --------------------


@triton.jit
def bad_axis_kernel(X, N: tl.constexpr):
    t = tl.expand_dims(tl.arange(0, N), -3)


@triton.jit
def bad_pid_kernel(X):
    pid = tl.program_id(20)


def test_compilation_error_cause_is_the_first_error():
    with pytest.raises(triton.TritonError) as e:
        bad_axis_kernel[(1,)](np.zeros(1, np.float32), 32)
    assert "invalid axis -3" in str(e.value.__cause__)
    assert isinstance(e.value.__cause__, triton.TritonError)
    with pytest.raises(triton.TritonError) as e:
        bad_pid_kernel[(1,)](np.zeros(1, np.float32))
    assert "program_id axis must be 0, 1, or 2 but got 20" in str(e.value.__cause__)


# --- constexpr_type, `.type` of compile-time values, enclosing variables ----


@pytest.mark.parametrize("literal, tensor_ty", [(10, tl.int32), (32.1, tl.float32),
                                                ((5, 6, 7), None), (2**40, tl.int64)])
def test_constexpr_type_and_variables_of_the_enclosing_function(literal, tensor_ty):
    from tk.language.core import constexpr_type

    expected = literal  # read by the kernel from this function's scope

    @triton.jit
    def kernel(Y, input_literal: tl.constexpr, tensor_type: tl.constexpr):
        annotated: tl.constexpr = expected
        tl.static_assert(annotated.type == constexpr_type(expected))
        tl.static_assert(input_literal.type == constexpr_type(expected))
        tl.static_assert(input_literal.type != constexpr_type(3))
        if tensor_type is not None:
            # A number assigned to a plain variable is a tensor in Triton.
            plain = input_literal
            tl.static_assert(plain.type == tensor_type)
            tl.store(Y, plain)

    y = np.zeros(1, np.float64)
    kernel[(1,)](y, literal, tensor_ty)
    if tensor_ty is not None:
        assert y[0] == pytest.approx(literal, rel=1e-6)


@tl.jit
def small_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, acc, input_precision="ieee"))


@pytest.mark.parametrize("m,k,n", [(2, 4, 8), (1, 16, 2), (16, 2, 4), (4, 1, 32)])
def test_dots_below_16_run_on_the_interpreter(m, k, n):
    # As Triton's interpreter computes them (test_core's test_dot3d small
    # blocks); the GPU compile refuses them (lit astir/dot-small.tk).
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    expect = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    small_dot_kernel[(1,)](a, b, c, m, k, n)
    np.testing.assert_allclose(c, expect, rtol=1e-5, atol=1e-5)
