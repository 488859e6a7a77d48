"""fp8 dtypes (tk.float8e4nv, tk.float8e5, tk.float8e4b15): bitcasts from
uint8, widening to fp32 and rounding fp32 down, on the interpreter against
ml_dtypes (an independent implementation) where it is installed and against
the formats' definitions; the same kernels on the GPU (marked gpu) against
the interpreter's answers; fp8 arithmetic as a located error."""

import math

import numpy as np
import pytest

import tk

RNG = np.random.default_rng(18)

# name -> (exponent bias, mantissa bits, largest finite, kind of specials)
FORMATS = {
    "float8e4nv": (7, 3, 448.0, "nan7f"),
    "float8e5": (15, 2, 57344.0, "ieee"),
    "float8e4b15": (15, 3, 1.875, "finite"),
}


def decode(bits, name):
    """The value of each 8-bit pattern, from the format's definition."""
    bias, mant, _, kind = FORMATS[name]
    out = []
    for b in bits.tolist():
        s = -1.0 if b & 0x80 else 1.0
        e, m = (b & 0x7F) >> mant, b & ((1 << mant) - 1)
        if kind == "nan7f" and b & 0x7F == 0x7F:
            out.append(math.nan)
        elif kind == "ieee" and e == (0x7F >> mant):
            out.append(s * math.inf if m == 0 else math.nan)
        elif e == 0:
            out.append(s * m * 2.0 ** (1 - bias - mant))
        else:
            out.append(s * (1 + m / 2**mant) * 2.0 ** (e - bias))
    return np.array(out, dtype=np.float32)


def ml_dtype(name):
    ml = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes for an independent reference")
    return {"float8e4nv": ml.float8_e4m3fn, "float8e5": ml.float8_e5m2}[name]


@tk.jit
def upcast(u8_ptr, out_ptr, n, FMT: tk.constexpr, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(u8_ptr + offs, mask=mask).to(FMT, bitcast=True)
    tk.store(out_ptr + offs, x.to(tk.float32), mask=mask)


@tk.jit
def downcast(x_ptr, u8_ptr, n, FMT: tk.constexpr, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    y = tk.load(x_ptr + offs, mask=mask).to(FMT)
    tk.store(u8_ptr + offs, y.to(tk.uint8, bitcast=True), mask=mask)


def run_upcast(bits, name):
    out = np.full(bits.size, 7.0, np.float32)
    upcast[(tk.cdiv(bits.size, 128),)](bits, out, bits.size, FMT=getattr(tk, name), BLOCK=128)
    return out


def run_downcast(x, name):
    out = np.zeros(x.size, np.uint8)
    downcast[(tk.cdiv(x.size, 128),)](x, out, x.size, FMT=getattr(tk, name), BLOCK=128)
    return out


def patterns():
    # Every pattern, in a random order, 300 of them: not a multiple of the block.
    return RNG.permutation(np.concatenate([np.arange(256), np.arange(44)])).astype(np.uint8)


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_pattern_widens_exactly(name):
    bits = patterns()
    np.testing.assert_array_equal(run_upcast(bits, name), decode(bits, name))


@pytest.mark.parametrize("name", ["float8e4nv", "float8e5"])
def test_widening_agrees_with_ml_dtypes(name):
    bits = patterns()
    np.testing.assert_array_equal(run_upcast(bits, name), bits.view(ml_dtype(name)).astype(np.float32))


def random_floats(name, n=1000):
    bias, mant, top, _ = FORMATS[name]
    x = RNG.uniform(-1, 1, n) * np.exp2(RNG.uniform(2 - bias - mant - 2, math.log2(top) + 1, n))
    # Exact midpoints between neighbouring values: the ties.
    vals = decode(np.arange(0x7F, dtype=np.uint8), name).astype(np.float64)
    vals = vals[np.isfinite(vals)]
    mids = (vals[:-1] + vals[1:]) / 2
    x[: mids.size] = mids * RNG.choice([-1, 1], mids.size)
    return RNG.permutation(x).astype(np.float32)


@pytest.mark.parametrize("name", ["float8e4nv", "float8e5"])
def test_rounding_agrees_with_ml_dtypes(name):
    x = random_floats(name)
    top = FORMATS[name][2]
    # ml_dtypes overflows to NaN or infinity where the GPU's cvt.rn.satfinite
    # saturates: compare in range, check the saturation on its own below.
    ref = np.clip(x, -top, top).astype(ml_dtype(name)).view(np.uint8)
    np.testing.assert_array_equal(run_downcast(x, name), ref)


def nearest_even(x, name):
    """The pattern of the finite value nearest to each x, ties to the even
    pattern, past the largest value the largest (saturation); NaN 0x7F."""
    vals = decode(np.arange(0x80, dtype=np.uint8), name).astype(np.float64)
    finite = np.flatnonzero(np.isfinite(vals))
    out = []
    for xi in x.tolist():
        if math.isnan(xi):
            out.append(0x7F)
            continue
        if abs(xi) >= vals[finite].max():  # inf and huge values too: their errors all tie
            out.append(int(finite[np.argmax(vals[finite])]) | (0x80 if xi < 0 else 0))
            continue
        err = np.abs(vals[finite] - abs(xi))
        best = finite[err == err.min()]
        out.append(int(best[best % 2 == 0][0] if best.size > 1 else best[0]) | (0x80 if xi < 0 else 0))
    return np.array(out, np.uint8)


@pytest.mark.parametrize("name", list(FORMATS))
def test_rounding_is_to_the_nearest_even(name):
    x = random_floats(name)
    np.testing.assert_array_equal(run_downcast(x, name), nearest_even(x, name))


def test_special_values_saturate():
    x = np.array([448, 464, 1e9, np.inf, -np.inf, np.nan, 2.0**-9, 2.0**-10, -0.0, 1.0625],
                 np.float32)
    assert run_downcast(x, "float8e4nv").tolist() == [
        0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0x01, 0x00, 0x80, 0x38]
    x = np.array([57344, 61440, np.inf, -np.inf, np.nan, 2.0**-16, 1.0], np.float32)
    assert run_downcast(x, "float8e5").tolist() == [0x7B, 0x7B, 0x7B, 0xFB, 0x7F, 0x01, 0x3C]
    x = np.array([1.875, 2.0, -100.0, 2.0**-17, 1.0], np.float32)
    assert run_downcast(x, "float8e4b15").tolist() == [0x7F, 0x7F, 0xFF, 0x01, 0x78]


@tk.jit
def fp8_to_fp16(x_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask).to(tk.float16), mask=mask)


@pytest.mark.parametrize("name", ["float8e4nv", "float8e5"])
def test_ml_dtypes_arrays_are_fp8_arguments(name):
    bits = patterns()
    bits[(bits & 0x7F) >= 0x7C] = 0x10  # finite values only: NaN payloads differ
    x = bits.view(ml_dtype(name))
    out = np.zeros(bits.size, np.float16)
    fp8_to_fp16[(tk.cdiv(x.size, 128),)](x, out, x.size, BLOCK=128)
    np.testing.assert_array_equal(out, x.astype(np.float16))


@tk.jit
def fp8_add(u8_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    x = tk.load(u8_ptr + offs, mask=offs < n).to(tk.float8e5, bitcast=True)
    y = x + x
    tk.store(u8_ptr + offs, y.to(tk.uint8, bitcast=True), mask=offs < n)


def test_arithmetic_on_fp8_is_a_located_error():
    with pytest.raises(tk.CompilationError) as e:
        fp8_add[(1,)](np.zeros(10, np.uint8), 10, BLOCK=16)
    msg = str(e.value)
    assert "'add' on fp8e5: fp8 values only load, store, bitcast and convert" in msg
    assert "y = x + x" in msg or "test_fp8.py:" in msg


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["float8e4nv", "float8e5"])
def test_gpu_conversions_match_the_definitions(name):
    import torch

    bits = patterns()
    x = np.concatenate([random_floats(name), np.array([np.inf, -np.inf, 1e30], np.float32)])
    up_want = decode(bits, name)
    b = torch.from_numpy(bits).cuda()
    out = torch.full((bits.size,), 7.0, device="cuda")
    upcast[(tk.cdiv(bits.size, 128),)](b, out, bits.size, FMT=getattr(tk, name), BLOCK=128)
    np.testing.assert_array_equal(out.cpu().numpy(), up_want)
    xt = torch.from_numpy(x).cuda()
    got = torch.zeros(x.size, dtype=torch.uint8, device="cuda")
    downcast[(tk.cdiv(x.size, 128),)](xt, got, x.size, FMT=getattr(tk, name), BLOCK=128)
    np.testing.assert_array_equal(got.cpu().numpy(), nearest_even(x, name))
    # torch's own fp8 tensors are fp8 arguments.
    torch_name = {"float8e4nv": "float8_e4m3fn", "float8e5": "float8_e5m2"}[name]
    t = torch.from_numpy(bits).cuda().view(getattr(torch, torch_name))
    h = torch.zeros(bits.size, dtype=torch.float16, device="cuda")
    fp8_to_fp16[(tk.cdiv(bits.size, 128),)](t, h, bits.size, BLOCK=128)
    finite = np.isfinite(up_want)
    np.testing.assert_array_equal(h.cpu().numpy()[finite],
                                  t.to(torch.float16).cpu().numpy()[finite])


@tk.jit
def fp8_abs(u8_ptr, out_ptr, n, FMT: tk.constexpr, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(u8_ptr + offs, mask=mask).to(FMT, bitcast=True)
    tk.store(out_ptr + offs, tk.abs(x).to(tk.float32), mask=mask)


@pytest.mark.parametrize("name", list(FORMATS))
def test_abs_clears_the_sign(name):
    bits = patterns()
    out = np.zeros(bits.size, np.float32)
    fp8_abs[(tk.cdiv(bits.size, 128),)](bits, out, bits.size, FMT=getattr(tk, name), BLOCK=128)
    np.testing.assert_array_equal(out, np.abs(decode(bits, name)))


@tk.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M, N, K, A_FMT: tk.constexpr, B_FMT: tk.constexpr,
            BM: tk.constexpr, BN: tk.constexpr, BK: tk.constexpr):
    rm = tk.arange(0, BM)
    rn = tk.arange(0, BN)
    rk = tk.arange(0, BK)
    a = tk.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K),
                other=0).to(A_FMT, bitcast=True)
    b = tk.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N),
                other=0).to(B_FMT, bitcast=True)
    c = tk.dot(a, b)
    tk.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("fa,fb", [("float8e5", "float8e5"), ("float8e4nv", "float8e4nv"),
                                   ("float8e5", "float8e4nv")])
def test_dot_widens_fp8_operands(fa, fb):
    M, N, K = 27, 45, 37
    a = RNG.integers(0, 256, (M, K)).astype(np.uint8)
    b = RNG.integers(0, 256, (K, N)).astype(np.uint8)
    # Finite operands of moderate size: no NaN/inf patterns, exponent fields small.
    a &= 0xB7
    b &= 0xB7
    c = np.zeros((M, N), np.float32)
    fp8_dot[(1,)](a, b, c, M, N, K, A_FMT=getattr(tk, fa), B_FMT=getattr(tk, fb), BM=32, BN=64,
                  BK=64)
    ref = decode(a.ravel(), fa).reshape(M, K).astype(np.float64) @ \
        decode(b.ravel(), fb).reshape(K, N).astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6)
