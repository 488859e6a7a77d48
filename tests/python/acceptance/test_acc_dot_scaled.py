"""tk.dot_scaled, emulated as on hardware without mx instructions: operands in
e2m1 (two values a uint8 along K, the first in the low nibble), e4m3, e5m2
(uint8 bits), bf16 or fp16, each with an optional e8m0 scale (uint8, one per
32 elements along K, 2^(s - 127); s = 0xFF is NaN unless fast_math), upcast to
bf16 (fp16 when either operand is fp16), then an fp32-accumulated dot. The
reference decodes the formats by table in numpy float64; K = 96 is not a
multiple of the 64-wide K block (the last block is masked: data 0, scale 127)."""

import numpy as np
import pytest

import tk as tl
from acc_common import backend, check_norm  # noqa: F401


def decode(bits, fmt):
    """uint8 codes (e2m1: one nibble each) as float64, by the formats' tables."""
    b = bits.astype(np.int64)
    if fmt == "e2m1":
        mag = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])[b & 7]
        return np.where(b & 8, -mag, mag)
    ebits, mbits = (4, 3) if fmt == "e4m3" else (5, 2)
    bias = (1 << (ebits - 1)) - 1
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = (b & ((1 << mbits) - 1)) / float(1 << mbits)
    mag = np.where(e == 0, m * 2.0**(1 - bias), (1 + m) * 2.0**(e - bias))
    if fmt == "e4m3":
        mag = np.where((b & 0x7F) == 0x7F, np.nan, mag)
    else:
        mag = np.where(e == 31, np.where(m == 0, np.inf, np.nan), mag)
    return np.where(b & 0x80, -mag, mag)


def finite_codes(rng, shape, fmt, positive=False, fp16=False):
    """Random codes of fmt that are finite numbers (e2m1: two a byte); with
    fp16, e5m2 codes below 2^0 so that scaled they stay in fp16's range."""
    if fmt == "e2m1":
        c = rng.integers(0, 256, size=shape)
        if positive:
            c = (c & 0x77) | 0x11  # both nibbles positive, non-zero
        return c.astype(np.uint8)
    c = rng.integers(0, 256, size=shape)
    bad = (c & 0x7F) == 0x7F if fmt == "e4m3" else ((c >> 2) & 31) == 31
    c = np.where(bad, c & 0xF7, c)  # clear an exponent bit
    if fp16 and fmt == "e5m2":
        c = c & 0xBF
    if positive:
        c = (c & 0x6F) | 0x08  # positive, non-zero, never all-ones
    return c.astype(np.uint8)


def operand_values(codes, fmt, k_axis):
    """The float64 values of an operand given as codes (or floats)."""
    if fmt != "e2m1":
        return decode(codes, fmt) if fmt in ("e4m3", "e5m2") else codes.astype(np.float64)
    lo, hi = decode(codes & 15, fmt), decode(codes >> 4, fmt)
    pair = np.stack([lo, hi], axis=k_axis + 1)
    shape = list(codes.shape)
    shape[k_axis] *= 2
    return pair.reshape(shape)


def round_to(x, fmt):
    """float64 -> the compute type (exact for the codes; bf16/fp16 inputs
    given as floats are rounded the kernel's way)."""
    if fmt == "fp16":
        return x.astype(np.float16).astype(np.float64)
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


@tl.jit
def dot_scaled_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr,
                      SCALE_A: tl.constexpr, SCALE_B: tl.constexpr, FAST: tl.constexpr):
    DA: tl.constexpr = 2 if FA == "e2m1" else 1
    DB: tl.constexpr = 2 if FB == "e2m1" else 1
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rka = tl.arange(0, BK // DA)
    rkb = tl.arange(0, BK // DB)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ka = k // DA + rka
        kb = k // DB + rkb
        a = tl.load(a_ptr + rm[:, None] * (K // DA) + ka[None, :],
                    mask=(rm[:, None] < M) & (ka[None, :] < K // DA), other=0)
        b = tl.load(b_ptr + kb[:, None] * N + rn[None, :],
                    mask=(kb[:, None] < K // DB) & (rn[None, :] < N), other=0)
        if FA == "bf16":
            a = a.to(tl.bfloat16)
        elif FA == "fp16":
            a = a.to(tl.float16)
        if FB == "bf16":
            b = b.to(tl.bfloat16)
        elif FB == "fp16":
            b = b.to(tl.float16)
        ks = k // 32 + rs
        if SCALE_A:
            sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + ks[None, :],
                         mask=(rm[:, None] < M) & (ks[None, :] < K // 32), other=127)
        else:
            sa = None
        if SCALE_B:
            sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + ks[None, :],
                         mask=(rn[:, None] < N) & (ks[None, :] < K // 32), other=127)
        else:
            sb = None
        acc = tl.dot_scaled(a, sa, FA, b, sb, FB, acc, fast_math=FAST)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def make_operand(backend, rng, fmt, shape, k_axis, comp, positive=False):
    """Device data of one operand (codes, or fp32 values for bf16/fp16) and
    its exact float64 value in the compute type."""
    if fmt in ("bf16", "fp16"):
        host = rng.uniform(0.25 if positive else -2, 2, size=shape).astype(np.float32)
        dev, _ = backend.put(host, "fp32")
        return dev, round_to(round_to(host.astype(np.float64), fmt), comp)
    packed = list(shape)
    if fmt == "e2m1":
        packed[k_axis] //= 2
    codes = finite_codes(rng, tuple(packed), fmt, positive, comp == "fp16")
    dev, _ = backend.put(codes, "u8")
    return dev, operand_values(codes, fmt, k_axis)


def run(backend, fa, fb, scale_a, scale_b, M=40, N=24, K=96, fast=False, sa=None, sb=None,
        positive=False, seed=0):
    rng = np.random.default_rng(seed)
    comp = "fp16" if "fp16" in (fa, fb) else "bf16"
    lo, hi = (124, 131) if comp == "fp16" else (117, 137)
    a, a64 = make_operand(backend, rng, fa, (M, K), 1, comp, positive)
    b, b64 = make_operand(backend, rng, fb, (K, N), 0, comp, positive)
    if scale_a and sa is None:
        sa = rng.integers(lo, hi + 1, size=(M, K // 32)).astype(np.uint8)
    if scale_b and sb is None:
        sb = rng.integers(lo, hi + 1, size=(N, K // 32)).astype(np.uint8)
    ref_a, ref_b = a64, b64
    if scale_a:
        f = np.where(sa == 255, np.nan, np.where(sa == 0, 0.0, 2.0**(sa.astype(np.float64) - 127)))
        ref_a = round_to(a64 * np.repeat(f, 32, axis=1), comp)
    if scale_b:
        f = np.where(sb == 255, np.nan, np.where(sb == 0, 0.0, 2.0**(sb.astype(np.float64) - 127)))
        ref_b = round_to(b64 * np.repeat(f, 32, axis=1).T, comp)
    c = backend.empty((M, N), "fp32")
    dsa = backend.put(sa, "u8")[0] if scale_a else None
    dsb = backend.put(sb, "u8")[0] if scale_b else None
    dot_scaled_kernel[(1,)](a, dsa, b, dsb, c, M, N, K, BM=64, BN=32, BK=64, FA=fa, FB=fb,
                            SCALE_A=scale_a, SCALE_B=scale_b, FAST=fast)
    return backend.get(c).astype(np.float64), ref_a @ ref_b


CASES = [(mx, normal, rhs_scale) for mx in ["e2m1", "e4m3", "e5m2"]
         for normal in ["e4m3", "e5m2", "bf16", "fp16"] for rhs_scale in [False, True]]


@pytest.mark.parametrize("mx,normal,rhs_scale", CASES)
def test_dot_scaled_formats(backend, mx, normal, rhs_scale):
    # as Triton's test: one operand microscaled, the other plain
    fa, fb = (normal, mx) if rhs_scale else (mx, normal)
    got, ref = run(backend, fa, fb, not rhs_scale, rhs_scale)
    check_norm(got, ref, 1e-5, what=f"dot_scaled({fa}, {fb})")
    # the scales matter: without them the product is far off
    unscaled, _ = run(backend, fa, fb, False, False)
    assert np.abs(unscaled - ref).max() > 1e-2 * np.abs(ref).max()


def test_dot_scaled_both_scaled(backend):
    got, ref = run(backend, "e2m1", "e4m3", True, True)
    check_norm(got, ref, 1e-5, what="dot_scaled(e2m1, e4m3), both scaled")


@pytest.mark.parametrize("fast", [False, True])
def test_dot_scaled_nan_scale(backend, fast):
    """A 0xFF scale is NaN: row 0's first K group makes row 0 NaN; with
    fast_math it is 2^128 (inf in bf16), so positive operands give +inf."""
    M, K = 40, 96
    sa = np.full((M, K // 32), 127, dtype=np.uint8)
    sa[0, 0] = 255
    got, ref = run(backend, "e4m3", "bf16", True, False, fast=fast, sa=sa, positive=True)
    if fast:
        assert np.isposinf(got[0]).all(), got[0]
    else:
        assert np.isnan(got[0]).all(), got[0]
    check_norm(got[1:], ref[1:], 1e-5, what="rows with finite scales")
