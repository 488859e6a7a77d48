"""Front-end rules of Triton that test_core.py relies on, with only the
imports changed: a compile-time number's `.dtype`, Python's float(str),
getattr on tk's namespaces and enums, divmod. Interpreter and (marked `gpu`)
GPU, each against a numpy reference."""

import math

import numpy as np
import pytest

import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(1802)


@triton.jit
def constant_dtype_kernel(X, Y, N, BLOCK: tl.constexpr, VALUE: tl.constexpr,
                          EXPECT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    value = VALUE
    tl.static_assert(value.dtype == EXPECT)
    c = tl.full([BLOCK], value, dtype=value.dtype)
    tl.store(Y + offs, tl.load(X + offs, mask=mask) + c, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("value,np_dtype,expect", [
    (3, np.int32, tl.int32), (2**31 + 5, np.uint32, tl.uint32), (2**40 + 3, np.int64, tl.int64),
    (1.5, np.float32, tl.float32), (1e300, np.float64, tl.float64),
    (1e-300, np.float64, tl.float64), (True, np.int32, tl.int1)])
def test_constant_dtype_is_triton_to_tensor_dtype(device, value, np_dtype, expect):
    # Triton's to_tensor rule: an int is the first of int32, uint32, int64 that
    # holds it; a float fp32 unless outside fp32's normal range; a bool int1.
    n = 100
    x = (RNG.integers(0, 50, n) if expect.is_int() else RNG.random(n)).astype(np_dtype)
    y = np.zeros(n, np_dtype)
    launch(constant_dtype_kernel, (2,), x, y, n, 64, value, expect, device=device)
    np.testing.assert_array_equal(y, x + np.asarray(value).astype(np_dtype))


@triton.jit
def float_of_string_kernel(Y, S: tl.constexpr):
    val = float(S)
    tl.store(Y.to(tl.pointer_type(val.dtype)), val)


@pytest.mark.parametrize("text,expect", [("-nan", math.nan), ("nan", math.nan), (" inf ", math.inf),
                                          ("-Infinity", -math.inf), ("2.5e3", 2500.0)])
def test_float_of_string_follows_python(text, expect):
    y = np.zeros(1, np.float32)
    float_of_string_kernel[(1,)](y, text)
    if math.isnan(expect):
        assert np.isnan(y[0])
        assert np.signbit(y[0]) == text.startswith("-")
    else:
        assert y[0] == expect


def test_float_of_bad_string_is_located_error():
    with pytest.raises(triton.CompilationError, match="could not convert string to float: 'one'"):
        float_of_string_kernel[(1,)](np.zeros(1, np.float32), "one")


@triton.jit
def getattr_kernel(A, B, C, N, BLOCK: tl.constexpr, FUNC: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    if FUNC == "clamp":
        c = getattr(tl, FUNC)(a, -tl.abs(b), tl.abs(b),
                              propagate_nan=getattr(tl.PropagateNan, NAN))
    else:
        c = getattr(tl, FUNC)(a, b, propagate_nan=getattr(getattr(tl, "PropagateNan"), NAN))
    tl.store(C + offs, c.to(getattr(tl, "float32")), mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("func", ["maximum", "minimum", "clamp"])
@pytest.mark.parametrize("nan", ["ALL", "NONE"])
def test_getattr_names_builtins_and_enum_members(device, func, nan):
    n = 50
    a = RNG.standard_normal(n).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    a[::7] = np.nan
    c = np.zeros(n, np.float32)
    launch(getattr_kernel, (1,), a, b, c, n, 64, func, nan, device=device)
    if func == "clamp":
        ref = np.minimum(np.maximum(a, -np.abs(b)), np.abs(b))
        number = -np.abs(b)  # fmax(NaN, lo) is lo, and lo <= hi
    else:
        ref = (np.maximum if func == "maximum" else np.minimum)(a, b)
        number = b
    if nan == "NONE":
        ref = np.where(np.isnan(a), number, ref)
    # Only ALL lets a NaN operand through, as test_propagate_nan checks.
    np.testing.assert_array_equal(np.isnan(c), np.isnan(a) if nan == "ALL" else np.zeros(n, bool))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(c[ok], ref[ok])


@triton.jit
def getattr_default_kernel(Y, NAME: tl.constexpr):
    x = tl.arange(0, 4)
    tl.store(Y + x, x + getattr(tl, NAME, 7) + getattr(x, "shape")[0])


def test_getattr_default_and_properties():
    y = np.zeros(4, np.int32)
    getattr_default_kernel[(1,)](y, "no_such_name")
    np.testing.assert_array_equal(y, np.arange(4) + 11)


@triton.jit
def getattr_missing_kernel(Y, NAME: tl.constexpr):
    tl.store(Y, getattr(tl.PropagateNan, NAME))


def test_getattr_missing_name_is_located_error():
    with pytest.raises(triton.CompilationError) as e:
        getattr_missing_kernel[(1,)](np.zeros(1, np.int32), "SOME")
    assert "tk.PropagateNan has no attribute 'SOME'" in str(e.value)
    assert "getattr(tl.PropagateNan, NAME)" in str(e.value)


@triton.jit
def divmod_kernel(X, Q, R, N, D: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    q, r = divmod(tl.load(X + offs, mask=mask), D)
    tl.store(Q + offs, q, mask=mask)
    tl.store(R + offs, r, mask=mask)
    cq, cr = divmod(-7, D)
    tl.store(Q + N, cq)
    tl.store(R + N, cr)


@pytest.mark.parametrize("device", DEVICES)
def test_divmod(device):
    # On tensors // and % are Triton's (C's: truncating); on constants Python's.
    n, d = 37, 5
    x = RNG.integers(-100, 100, n).astype(np.int32)
    q = np.zeros(n + 1, np.int32)
    r = np.zeros(n + 1, np.int32)
    launch(divmod_kernel, (1,), x, q, r, n, d, 64, device=device)
    np.testing.assert_array_equal(q[:n], np.trunc(x / d).astype(np.int32))
    np.testing.assert_array_equal(r[:n], x - np.trunc(x / d).astype(np.int32) * d)
    assert (q[n], r[n]) == divmod(-7, d)


@triton.jit
def shift_kernel(X, Y, Z, W, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Z + offs, x >> y, mask=mask)
    tl.store(W + offs, -64 >> y, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dx,dy", [(np.int16, np.uint16), (np.int8, np.uint32),
                                   (np.int32, np.uint64), (np.uint16, np.int16)])
def test_right_shift_follows_the_left_operand_signedness(device, dx, dy):
    # Triton: `>>` is arithmetic when the left tensor is signed, although the
    # promoted type of int16 and uint16 is uint16 (test_shift_op).
    n = 77
    bits = 8 * max(np.dtype(dx).itemsize, np.dtype(dy).itemsize)
    x = RNG.integers(np.iinfo(dx).min, np.iinfo(dx).max, n).astype(dx)
    y = RNG.integers(0, 8 * np.dtype(dx).itemsize, n).astype(dy)
    wide = np.dtype(f"int{bits}") if np.issubdtype(dx, np.signedinteger) else np.dtype(f"uint{bits}")
    z = np.zeros(n, wide)
    w = np.zeros(n, np.dtype(f"int{8 * np.dtype(dy).itemsize}"))
    launch(shift_kernel, (1,), x, y, z, w, n, 128, device=device)
    np.testing.assert_array_equal(z, x.astype(wide) >> y.astype(wide))
    # A number on the left: the right tensor's signedness decides.
    ref = (np.asarray(-64).astype(dy) >> y) if np.issubdtype(dy, np.unsignedinteger) else -64 >> y
    np.testing.assert_array_equal(w, ref.astype(w.dtype))


def test_repr_names_the_compiled_kernel_from_its_specialization():
    # test_value_specialization's repr: Triton passes the parameter types
    # ("constexpr" for an int specialised as 1) and the compile-time values.
    seen = []

    def name_of(spec):
        seen.append((dict(spec.signature), dict(spec.constants)))
        ones = "_".join(k for k, v in spec.constants.items() if v == 1)
        return f"kernel_{spec.signature['value1']}_{ones}"

    @triton.jit(repr=name_of)
    def kernel(value1, is_one, X, B: tl.constexpr):
        tl.store(X, value1 + is_one + B)

    x = np.zeros(1, np.float32)
    for value, ty in [(-1, "i32"), (2**31, "i64"), (2**64 - 1, "u64"), (7, "i32")]:
        h = kernel.warmup(value, 1, x, 3, grid=(1,))
        assert h.name == f"kernel_{ty}_is_one"
    assert seen[0] == ({"value1": "i32", "is_one": "constexpr", "X": "*fp32", "B": "constexpr"},
                       {"is_one": 1, "B": 3})


@triton.jit
def bad_store_kernel(X):
    tl.store(X, tl.zeros([4], dtype=tl.float32) + tl.arange(0, 3))


def test_compilation_error_has_error_message():
    with pytest.raises(triton.CompilationError) as e:
        bad_store_kernel[(1,)](np.zeros(4, np.float32))
    assert e.value.error_message is not None
    assert e.value.error_message in str(e.value)
    assert not e.value.error_message.startswith("error:")
    assert "test_lang_compat_frontend.py" not in e.value.error_message


@triton.jit
def reshape_kernel(Z, X, IN: tl.constexpr, OUT: tl.constexpr):
    n: tl.constexpr = IN[0] * IN[1]
    x = tl.load(X + tl.arange(0, n))
    z = tl.reshape(x, OUT)
    offs = tl.arange(0, OUT[0])[:, None] * OUT[1] + tl.arange(0, OUT[1])[None, :]
    tl.store(Z + offs, z + len(OUT))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape_in,shape_out", [((8, 8), (16, 4)), ((2, 32), (4, 16))])
def test_tuple_constexpr_argument(device, shape_in, shape_out):
    # test_reshape passes the target shape as a constexpr tuple.
    x = RNG.integers(-1000, 1000, shape_in).astype(np.int32)
    z = np.zeros(shape_out, np.int32)
    launch(reshape_kernel, (1,), z, x, shape_in, shape_out, device=device)
    np.testing.assert_array_equal(z, x.reshape(shape_out) + 2)
    # A new tuple object with the same values is the same specialisation.
    compiled = len(reshape_kernel.cache)
    launch(reshape_kernel, (1,), z, x, tuple(list(shape_in)), tuple(list(shape_out)),
           device=device)
    assert len(reshape_kernel.cache) == compiled


@triton.jit
def scalar_index_kernel(Z, X, KEEP3: tl.constexpr):
    x = tl.load(X + tl.arange(0, 4))
    s = tl.sum(x, axis=None, keep_dims=True)
    if KEEP3:
        s3 = tl.sum(tl.reshape(x, (1, 2, 2)), axis=None, keep_dims=True)
        tl.store(Z[None, None, None, :], s3)
    else:
        tl.store(Z[None, None, :], s)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("keep3", [False, True])
def test_scalar_pointer_index_adds_unit_dims(device, keep3):
    # test_reduce's keep_dims store: z_ptr[None, None, :] on a scalar pointer.
    x = RNG.integers(-50, 50, 4).astype(np.int32)
    z = np.zeros(1, np.int32)
    launch(scalar_index_kernel, (1,), z, x, keep3, device=device)
    assert z[0] == x.sum()


@triton.jit
def nested_return_kernel(C1, C2, C3, V, Out):
    val = 0
    if tl.load(C1):
        if tl.load(C2):
            val = tl.load(V)
        else:
            return
    else:
        if tl.load(C3):
            val = tl.load(V + 1)
        else:
            val = tl.load(V + 2)
    tl.store(Out, val)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("c1,c2,c3", [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)])
def test_return_inside_nested_dynamic_if(device, c1, c2, c3):
    v = RNG.integers(10, 100, 3).astype(np.int32)
    out = np.full(1, -1, np.int32)
    launch(nested_return_kernel, (1,), np.array([c1], np.int32), np.array([c2], np.int32),
           np.array([c3], np.int32), v, out, device=device)
    expect = (v[0] if c2 else -1) if c1 else (v[1] if c3 else v[2])
    assert out[0] == expect


@triton.jit
def _store_unless(P, flag):
    if flag:
        return
    tl.store(P, 7)


@triton.jit
def static_then_dynamic_return_kernel(Exit, Out, X, N, MODE: tl.constexpr):
    offs = tl.arange(0, 64)
    mask = offs < N
    if MODE == "dynamic":
        if tl.load(Exit):
            tl.store(Out + offs, tl.load(X + offs, mask=mask) * 2, mask=mask)
            return
    _store_unless(Out + 63, tl.load(Exit))
    tl.store(Out + offs, tl.load(X + offs, mask=mask) + 1, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("exit_early", [0, 1])
def test_return_inside_dynamic_if_under_a_static_if(device, exit_early):
    # test_if_return: the dynamic early exit sits inside a compile-time if;
    # a helper returns early from inside a dynamic if too.
    n = 50
    x = RNG.integers(-100, 100, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    launch(static_then_dynamic_return_kernel, (1,), np.array([exit_early], np.int32), out, x,
           n, "dynamic", device=device)
    expect = np.zeros(64, np.int32)
    expect[:n] = x[:n] * 2 if exit_early else x[:n] + 1
    if not exit_early:
        expect[63] = 7
    np.testing.assert_array_equal(out, expect)


@triton.jit
def return_in_loop_kernel(Out, N):
    for i in range(N):
        if i == 3:
            return
        tl.store(Out + i, i)


def test_return_inside_a_loop_is_still_a_located_error():
    with pytest.raises(triton.CompilationError, match="'return' inside a dynamic for or while "
                                                      "loop"):
        return_in_loop_kernel[(1,)](np.zeros(8, np.int32), 8)


@triton.jit
def unsplat_kernel(X, EXPLICIT: tl.constexpr):
    condition = tl.load(X + tl.arange(0, 1)) > 42
    if EXPLICIT:
        condition = condition.item()
    if condition:
        tl.store(X, 42)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("value", [41, 43])
def test_one_element_tensor_as_if_condition(device, explicit, value):
    x = np.full(1, value, np.int32)
    launch(unsplat_kernel, (1,), x, explicit, device=device)
    assert x[0] == min(value, 42)


@triton.jit
def two_element_condition_kernel(X):
    if tl.load(X + tl.arange(0, 2)) > 0:
        tl.store(X, 1)


def test_if_condition_of_more_elements_is_a_located_error():
    with pytest.raises(triton.CompilationError, match="the condition of 'if' must be a scalar"):
        two_element_condition_kernel[(1,)](np.zeros(2, np.int32))


@triton.jit
def repeated_shape_kernel(Z, X, RANK: tl.constexpr, REPEAT_FIRST: tl.constexpr):
    # test_dot_multidim builds its shape as `[2] * (RANK - 2) + [32, 32]`.
    if REPEAT_FIRST:
        shape = (RANK - 2) * [2] + [4, 8]
    else:
        shape = [2] * (RANK - 2) + (4, 8)
    offs = tl.arange(0, 32 << (RANK - 2))
    x = tl.load(X + offs).reshape(shape)
    tl.store(Z + offs, tl.reshape(x * len(shape), [32 << (RANK - 2)]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rank,repeat_first", [(2, False), (3, True), (4, False), (5, True)])
def test_tuple_times_int_repeats(device, rank, repeat_first):
    n = 32 << (rank - 2)
    x = RNG.integers(-1000, 1000, n).astype(np.int32)
    z = np.zeros(n, np.int32)
    launch(repeated_shape_kernel, (1,), z, x, rank, repeat_first, device=device)
    np.testing.assert_array_equal(z, x * rank)


def test_tuple_repeated_too_often_is_located_error():
    @triton.jit
    def kernel(Z):
        shape = (1,) * 100000
        tl.store(Z, len(shape))

    z = np.zeros(1, np.int32)
    with pytest.raises(triton.CompilationError, match=r"repeating a tuple of 1 elements 100000"):
        launch(kernel, (1,), z, device="interp")


@triton.jit
def expand_dims_tuple_kernel(Z, X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    # (0, -1) on a 1-D tensor: the result has rank 3, so the axes are 0 and 2.
    y = tl.expand_dims(x, (0, -1))
    tl.static_assert(y.shape == (1, N, 1))
    tl.store(Z + tl.arange(0, N)[None, :, None], y * 3)


@pytest.mark.parametrize("device", DEVICES)
def test_expand_dims_takes_a_tuple_of_axes(device):
    x = RNG.integers(-1000, 1000, 32).astype(np.int32)
    z = np.zeros(32, np.int32)
    launch(expand_dims_tuple_kernel, (1,), z, x, 32, device=device)
    np.testing.assert_array_equal(z, x * 3)


@triton.jit
def expand_dims_axis_kernel(Z, AXIS: tl.constexpr):
    x = tl.arange(0, 32)
    y = tl.expand_dims(x, AXIS)


@pytest.mark.parametrize("axis,message", [
    (-3, r"invalid axis -3 for expand_dims of tensor<32xi32>: the result has rank 2"),
    (2, r"invalid axis 2 for expand_dims"),
    ((0, 0), r"duplicate axes, normalized axes = \[0, 0\]"),
    ((0, -3), r"duplicate axes, normalized axes = \[0, 0\]"),
])
def test_expand_dims_bad_axis_is_located_error(axis, message):
    with pytest.raises(triton.CompilationError, match=message) as info:
        expand_dims_axis_kernel[(1,)](np.zeros(1, np.int32), axis)
    assert "tl.expand_dims(x, AXIS)" in str(info.value)


def test_program_id_axis_and_scalar_slice_messages_follow_triton():
    @triton.jit
    def pid_kernel(Z):
        tl.store(Z, tl.program_id(20))

    @triton.jit
    def slice_kernel(Z):
        Z[10:]

    z = np.zeros(4, np.float32)
    with pytest.raises(triton.CompilationError, match=r"program_id axis must be 0, 1, or 2 but got 20"):
        pid_kernel[(1,)](z)
    with pytest.raises(triton.CompilationError, match=r"unsupported tensor index"):
        slice_kernel[(1,)](z)


@triton.jit
def constant_beside_int_kernel(X, Y, N, C: tl.constexpr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask)
    if OP == "and":
        y = x & C
    elif OP == "xor":
        y = x ^ C
    elif OP == "add":
        y = x + C
    elif OP == "where":
        y = tl.where(x > 0, x, C)
    elif OP == "max":
        y = tl.maximum(x, C)
    else:
        y = (x < C).to(x.dtype)
    tl.store(Y + offs, y, mask=mask)


@triton.jit
def scalar_overflow_kernel(Y, C: tl.constexpr):
    x = tl.full((), 32, dtype=tl.int32)
    tl.store(Y, x + C)


@pytest.mark.parametrize("dtype,op,c", [
    (np.int32, "add", 0xFFFFFFFFFFFFFF), (np.int32, "xor", 0x9E3779B9), (np.int8, "add", 200),
    (np.int16, "where", 40000), (np.uint8, "max", 256), (np.int32, "less", 2**40),
    (np.uint16, "and", -40000)])
def test_an_int_constant_out_of_range_of_its_operand_is_an_error(dtype, op, c):
    # Triton: a Python int beside an integer operand takes its type and must
    # fit it (test_scalar_overflow), for arithmetic, bitwise, comparisons,
    # where and maximum alike; tk used to wrap it silently.
    x = RNG.integers(0, 100, 50).astype(dtype)
    with pytest.raises(triton.TritonError, match="out of range") as e:
        constant_beside_int_kernel[(1,)](x, np.zeros_like(x), 50, c, op, 64)
    assert f"the constant {c} is out of range for type {np.dtype(dtype).name}" in str(e.value)
    assert "test_lang_compat_frontend.py:" in str(e.value)


def test_scalar_overflow_is_located_at_the_operator():
    with pytest.raises(triton.CompilationError, match="out of range for type int32") as e:
        scalar_overflow_kernel[(1,)](np.zeros(1, np.int32), 0xFFFFFFFFFFFFFF)
    assert "tl.store(Y, x + C)" in str(e.value)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,op,c", [
    (np.uint32, "and", 0xFFFFFFF0), (np.uint32, "xor", 0x9E3779B9), (np.int32, "xor", -0x61C88647),
    (np.int8, "add", -128), (np.uint8, "add", 255), (np.int16, "where", -32768),
    (np.int64, "and", 0x7FFFFFFFFFFF), (np.uint16, "add", -1)])
def test_an_int_constant_in_range_takes_the_operand_type(device, dtype, op, c):
    # In range: the int takes the operand's type (no widening); a negative
    # int beside an unsigned operand is its two's-complement pattern (tk
    # keeps it; Triton refuses it, docs/python.md).
    n = 77
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, n, dtype=np.int64, endpoint=True).astype(dtype)
    y = np.zeros(n, dtype)
    launch(constant_beside_int_kernel, (2,), x, y, n, c, op, 64, device=device)
    k = np.asarray(c).astype(np.int64).astype(dtype)
    expect = {"and": lambda: x & k, "xor": lambda: x ^ k, "add": lambda: x + k,
              "where": lambda: np.where(x > 0, x, k)}[op]()
    np.testing.assert_array_equal(y, expect.astype(dtype))


@triton.jit
def lifted_constant_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    key = 0x9E3779B9  # a plain variable: Triton makes it a uint32 tensor
    tl.store(Y + offs, tl.load(X + offs, mask=mask) ^ key, mask=mask)


def test_a_number_in_a_plain_variable_is_not_range_checked():
    x = RNG.integers(-2**31, 2**31, 40, dtype=np.int64).astype(np.int32)
    y = np.zeros(40, np.int32)
    lifted_constant_kernel[(1,)](x, y, 40, 64)
    np.testing.assert_array_equal(y, x ^ np.int32(-0x61C88647))
