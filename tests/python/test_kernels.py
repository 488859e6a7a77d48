"""Kernels launched through the interpreter: results against numpy (float64
references), a Triton-style kernel written with `import tk as tl`, helpers
from another module, grids, constexprs and argument kinds."""

import numpy as np
import pytest

import tk
import tk as tl
from helpers_mod import scale_and_shift, square

RNG = np.random.default_rng(12345)


def uniform(shape, dtype, lo=-2.0, hi=2.0):
    x = RNG.uniform(lo, hi, shape)
    x[x == 0] = 0.5  # never zeros
    return x.astype(dtype)


@tk.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 100, 1000, 4096])
def test_vector_add(dtype, n):
    x = uniform(n, dtype, -100, 100)
    y = uniform(n, dtype, -100, 100)
    out = np.full(n, 7, dtype)
    add_kernel[(tk.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(out, expected)


@tl.jit
def triton_style_softmax(Y, X, stride_ym, stride_xm, N, BLOCK_N: tl.constexpr):
    # Written as for Triton, with `import tk as tl`.
    m = tl.program_id(0)
    n = tl.arange(0, BLOCK_N)
    x = tl.load(X + m * stride_xm + n, mask=n < N, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(Y + m * stride_ym + n, num / tl.sum(num, axis=0), mask=n < N)


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 17), (33, 128), (8, 1000)])
def test_softmax_triton_style(rows, cols):
    x = uniform((rows, cols), np.float32, -5, 5)
    y = np.empty_like(x)
    triton_style_softmax[(rows,)](y, x, y.strides[0] // 4, x.strides[0] // 4, cols,
                                  BLOCK_N=tl.next_power_of_2(cols))
    ref = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    tk.testing.assert_close(y, ref, atol=1e-6, rtol=1e-5)


@tk.jit
def layernorm_kernel(X, Y, W, B, stride, N, eps, BLOCK: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK)
    mask = cols < N
    x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    mean = tk.sum(x, axis=0) / N
    d = tk.where(mask, x - mean, 0.0)
    rstd = 1 / tk.sqrt(tk.sum(d * d, axis=0) / N + eps)
    w = tk.load(W + cols, mask=mask)
    b = tk.load(B + cols, mask=mask)
    tk.store(Y + row * stride + cols, d * rstd * w + b, mask=mask)


def test_layernorm():
    M, N = 9, 300
    x = uniform((M, N), np.float32, -3, 5)
    w, b = uniform(N, np.float32), uniform(N, np.float32)
    y = np.empty_like(x)
    layernorm_kernel[(M,)](x, y, w, b, N, N, 1e-5, BLOCK=512)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=1, keepdims=True)
    ref = (xd - mean) / np.sqrt(((xd - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w + b
    tk.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)


@tk.jit
def matmul_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tk.constexpr,
                  BN: tk.constexpr, BK: tk.constexpr):
    pid_m = tk.program_id(0)
    pid_n = tk.program_id(1)
    rm = pid_m * BM + tk.arange(0, BM)
    rn = pid_n * BN + tk.arange(0, BN)
    rk = tk.arange(0, BK)
    acc = tk.zeros((BM, BN), dtype=tk.float32)
    for k in range(0, K, BK):
        a = tk.load(A + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tk.load(B + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tk.dot(a, b)
    tk.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (37, 50, 70)])
def test_matmul(M, N, K):
    a = uniform((M, K), np.float32, -1, 1)
    b = uniform((K, N), np.float32, -1, 1)
    c = np.empty((M, N), np.float32)
    grid = lambda meta: (tk.cdiv(M, meta["BM"]), tk.cdiv(N, meta["BN"]))  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=16, BN=32, BK=16)
    # tk.dot on fp32 may use tf32 on a GPU; the interpreter rounds like it.
    tk.testing.assert_close(c, a.astype(np.float64) @ b.astype(np.float64), atol=2e-2, rtol=1e-2)


@tk.jit
def uses_helpers(x_ptr, out_ptr, n, factor, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(x_ptr + offs, mask=mask)
    tk.store(out_ptr + offs, square(scale_and_shift(x, factor)), mask=mask)


def test_helpers_from_another_module():
    x = uniform(50, np.float32)
    out = np.empty_like(x)
    uses_helpers[(1,)](x, out, 50, 1.5, BLOCK=64)
    tk.testing.assert_close(out, (x.astype(np.float64) * 1.5 + 3) ** 2, atol=1e-4, rtol=1e-5)


@tk.jit
def strided_copy(src, dst, n, stride, BLOCK: tk.constexpr = 64):
    offs = tk.arange(0, BLOCK)
    tk.store(dst + offs, tk.load(src + offs * stride, mask=offs < n), mask=offs < n)


def test_defaults_views_and_negative_strides():
    base = uniform(200, np.float32)
    view = base[10:150:2]  # a view: pointer arithmetic is in elements of the memory
    out = np.empty(64, np.float32)
    strided_copy[(1,)](view, out, 64, 2)  # BLOCK from its default
    np.testing.assert_array_equal(out, base[10:138:2])
    rev = base[::-1]  # negative strides: the span starts before the data pointer
    strided_copy[(1,)](rev, out, 50, -1)
    np.testing.assert_array_equal(out[:50], base[199:149:-1])
    # The view's span ends at base[148]: reaching base[199] through it is
    # out of bounds, even though base itself is longer.
    with pytest.raises(tk.InterpreterError, match="out-of-bounds load"):
        strided_copy[(1,)](view, out, 64, 3)


def test_grid_of_zero_runs_nothing():
    x = uniform(8, np.float32)
    out = np.full(8, 3.0, np.float32)
    add_kernel[(0,)](x, x, out, 8, BLOCK=8)
    assert (out == 3.0).all()


@tk.jit
def scalar_kinds(out_ptr, i, f, b, BIG):
    tk.store(out_ptr + 0, i.to(tk.float64))
    tk.store(out_ptr + 1, f.to(tk.float64))
    tk.store(out_ptr + 2, b.to(tk.float64))
    tk.store(out_ptr + 3, BIG.to(tk.float64))


def test_scalar_argument_kinds():
    out = np.zeros(4, np.float64)
    k = scalar_kinds[(1,)](out, -7, 0.25, True, 2**40 + 3)
    assert k.signature == "*fp64:16, i32, fp32, i1, i64"
    np.testing.assert_array_equal(out, [-7, 0.25, 1, 2**40 + 3])


def test_in_place_same_array_twice():
    x = uniform(64, np.float32)
    expected = x.astype(np.float64) * 2
    add_kernel[(1,)](x, x, x, 64, BLOCK=64)
    tk.testing.assert_close(x, expected, atol=0, rtol=0)


def test_object_with_array_interface():
    class Wrapper:
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    x = uniform(32, np.float32)
    out = np.empty_like(x)
    add_kernel[(1,)](Wrapper(x), Wrapper(x), Wrapper(out), 32, BLOCK=32)
    tk.testing.assert_close(out, 2 * x.astype(np.float64), atol=0, rtol=0)


def test_cpu_torch_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    x = torch.rand(100) + 0.5
    out = torch.empty(100)
    add_kernel[(1,)](x, x, out, 100, BLOCK=128)
    tk.testing.assert_close(out, 2 * x, atol=0, rtol=0)


@tk.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tk.jit
def heuristic_kernel(x_ptr, n, BLOCK: tk.constexpr, EVEN: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    if EVEN:
        tk.store(x_ptr + offs, tk.full((BLOCK,), 1.0, tk.float32))
    else:
        tk.store(x_ptr + offs, tk.full((BLOCK,), 2.0, tk.float32), mask=offs < n)


def test_heuristics_compute_constexprs():
    x = np.zeros(32, np.float32)
    heuristic_kernel[(1,)](x, 32, BLOCK=32)
    assert (x == 1).all()
    x = np.zeros(32, np.float32)
    heuristic_kernel[(1,)](x, 20, BLOCK=32)
    assert (x[:20] == 2).all() and (x[20:] == 0).all()


@tk.autotune(configs=[tk.Config({"BLOCK": 32}, num_warps=2), tk.Config({"BLOCK": 64})],
             key=["n"])
@tk.jit
def tuned_fill(x_ptr, n, v, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.full((BLOCK,), v, tk.float32), mask=offs < n)


def test_autotune_takes_the_first_config_in_the_interpreter():
    x = np.zeros(100, np.float32)
    tuned_fill[lambda meta: (tk.cdiv(100, meta["BLOCK"]),)](x, 100, 4.5)
    assert (x == 4.5).all()
    assert tuned_fill.best_config.kwargs == {"BLOCK": 32}
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        tuned_fill[(1,)](x, 100, 1.0, BLOCK=64)


@tk.jit
def printing_kernel(x_ptr):
    tk.device_print("value", tk.load(x_ptr))


def test_device_print_reaches_stdout(capsys):
    printing_kernel[(1,)](np.array([2.5], np.float32))
    assert "2.5" in capsys.readouterr().out


@tk.jit
def constant_kinds(x_ptr, DT, MODE, maybe):
    v = tk.load(x_ptr).to(DT)
    if MODE == "double":
        v = v * 2
    if maybe is None:
        v = v + 1
    tk.store(x_ptr, v.to(tk.float32))


def test_dtypes_strings_and_none_become_constants():
    x = np.array([3.0], np.float32)
    k = constant_kinds[(1,)](x, tk.float16, "double", None)
    assert k.signature == "*fp32:16, tk.float16, 'double', None" and x[0] == 7.0
    x = np.array([3.0], np.float32)
    k = constant_kinds[(1,)](x, tk.constexpr(tk.float32), tk.constexpr("plain"), 0.5)
    assert k.signature == "*fp32:16, tk.float32, 'plain', fp32" and x[0] == 3.0


@tk.jit
def sized_scalars_kernel(x_ptr, out_ptr, h, b8, d, s16, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(out_ptr + offs, tk.load(x_ptr + offs) * h + b8 + d + s16)


def test_numpy_scalars_keep_their_width():
    # np.float16, np.int8, np.int16 keep their width; np.float64 is a Python
    # float and so fp32, as in Triton: `d` reaches the kernel rounded to fp32.
    rng = np.random.default_rng(11)
    x = rng.uniform(-4, 4, 16)
    for _ in range(3):
        h, d = np.float16(rng.uniform(-8, 8)), np.float64(rng.uniform(-1e3, 1e3))
        b8, s16 = np.int8(rng.integers(-128, 128)), np.int16(rng.integers(-32768, 32768))
        out = np.zeros(16)
        k = sized_scalars_kernel[(1,)](x, out, h, b8, d, s16, BLOCK=16)
        assert k.signature == "*fp64:16, *fp64:16, fp16, i8, fp32, i16", k.signature
        d32 = float(np.float32(d))
        assert d32 != float(d)  # the test can tell fp32 from fp64
        np.testing.assert_allclose(out, x * float(h) + int(b8) + d32 + int(s16), rtol=1e-12)


@tk.jit
def scaled_running_sum(x_ptr, out_ptr, scale, n_steps, BLOCK: tk.constexpr):
    # attention's sm_scale pattern: an fp32 loop-carried value times a scalar.
    offs = tk.arange(0, BLOCK)
    acc = tk.zeros([BLOCK], dtype=tk.float32)
    for i in range(n_steps):
        acc = acc * scale + tk.load(x_ptr + i * BLOCK + offs)
    tk.store(out_ptr + offs, acc)


@tk.jit
def fp64_scalar_through_an_array(x_ptr, out_ptr, d_ptr, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(out_ptr + offs, tk.load(x_ptr + offs) + tk.load(d_ptr))


@tk.jit
def fp64_scalar_as_a_constexpr(x_ptr, out_ptr, D: tk.constexpr, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(out_ptr + offs, tk.load(x_ptr + offs) + D)


def test_float_scalars_are_fp32_like_triton():
    rng = np.random.default_rng(12)
    x = rng.uniform(-1, 1, (5, 32)).astype(np.float32)
    scale = rng.uniform(0.1, 0.9)
    want = np.zeros(32, np.float32)
    for row in x:
        want = want * np.float32(scale) + row
    for s in (scale, np.float64(scale), np.float32(scale)):
        out = np.zeros(32, np.float32)
        k = scaled_running_sum[(1,)](x, out, s, 5, BLOCK=32)
        assert k.signature.split(", ")[2] == "fp32", (type(s), k.signature)
        np.testing.assert_allclose(out, want, rtol=1e-6)
    # An fp64 scalar is a one-element fp64 array, loaded in the kernel.
    x64 = rng.uniform(-1, 1, 16)
    d = np.array([rng.uniform(-1e3, 1e3)])
    out = np.zeros(16)
    k = fp64_scalar_through_an_array[(1,)](x64, out, d, BLOCK=16)
    assert k.signature == "*fp64:16, *fp64:16, *fp64:16", k.signature
    np.testing.assert_array_equal(out, x64 + d[0])
    # ... or a constexpr, fixed per compile.
    out = np.zeros(16)
    fp64_scalar_as_a_constexpr[(1,)](x64, out, np.float64(d[0]), BLOCK=16)
    np.testing.assert_array_equal(out, x64 + d[0])


def _make_kernel():
    @tk.jit
    def made_at_run_time(x_ptr, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.load(x_ptr + offs) * 2)

    return made_at_run_time


def test_kernels_made_at_run_time_are_collected():
    # JITFunction <-> tk._C.Launcher is a reference cycle the collector must
    # see through (the launch path on the GPU: fake_gpu_checks.py).
    import gc
    import weakref

    x = np.arange(8, dtype=np.float32)
    refs = []
    for i in range(50):
        k = _make_kernel()
        if i % 2:
            k[(1,)](x, BLOCK=8)
        else:  # a grid that reaches the kernel (the bound launch it caches holds it)
            k[lambda meta, k=k: (1,)](x, BLOCK=8)
        refs.append(weakref.ref(k))
        del k
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32) * 2**50)
