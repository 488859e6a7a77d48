"""tk.randint4x, randint, rand, rand4x, randn, randn4x and tk.umulhi against
a reference written from the Philox definition, on the interpreter and
(marked `gpu`) on the GPU.

The reference (`philox` below) is checked first against Random123's
known-answer vectors for Philox4x32-10 and Philox4x64-10 (counter, key ->
output; Salmon et al., SC 2011, the Random123 distribution's
kat_vectors). Triton's tl.randint4x(seed, offset) is that generator with
counter (offset, 0, 0, 0) and key (seed mod 2^32, seed >> 32) after the seed
is converted to uint64 (4x64: key (seed, 0)), so agreeing with the reference
bit for bit is agreeing with Triton."""

import numpy as np
import pytest

import tk
import tk as triton
import tk as tl
from lang_compat_util import DEVICES, launch

RNG = np.random.default_rng(2026)

PHILOX = {
    32: (0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85),
    64: (0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B),
}


def philox(counter, key, bits=32, rounds=10):
    """Philox4xBITS on Python ints: (c0, c1, c2, c3), (k0, k1) -> 4 words."""
    mask = (1 << bits) - 1
    a, b, w0, w1 = PHILOX[bits]
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(rounds):
        p0, p1 = a * c0, b * c2
        c0, c1, c2, c3 = ((p1 >> bits) ^ c1 ^ k0) & mask, p1 & mask, \
            ((p0 >> bits) ^ c3 ^ k1) & mask, p0 & mask
        k0, k1 = (k0 + w0) & mask, (k1 + w1) & mask
    return c0, c1, c2, c3


def test_reference_matches_random123_known_answers():
    assert philox((0, 0, 0, 0), (0, 0)) == (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)
    assert philox((0xffffffff,) * 4, (0xffffffff,) * 2) == \
        (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)
    assert philox((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0)) == \
        (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)
    assert philox((0, 0, 0, 0), (0, 0), bits=64) == \
        (0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b)


def reference_words(seed, offsets, bits, rounds=10):
    """Triton's randint4x for a seed and offsets: four uint arrays."""
    s = seed & ((1 << 64) - 1)  # the seed as uint64 (two's complement)
    key = (s & 0xFFFFFFFF, s >> 32) if bits == 32 else (s, 0)
    words = [philox((int(o) & ((1 << bits) - 1), 0, 0, 0), key, bits, rounds) for o in offsets]
    dt = np.uint32 if bits == 32 else np.uint64
    return [np.array([w[i] for w in words], dtype=dt) for i in range(4)]


def reference_uniform(words, bits):
    """Triton's word -> [0, 1): signed, negatives folded, times the scale."""
    signed = words.view(np.int32 if bits == 32 else np.int64)
    folded = np.where(signed < 0, -signed - 1, signed)
    scale = np.float32(4.6566127342e-10 if bits == 32 else 1.0842020432385337e-19)
    return folded.astype(np.float32) * scale


@triton.jit
def randint4x_kernel(seed, out, n, BLOCK: tl.constexpr, OFFSET_DTYPE: tl.constexpr,
                     ROUNDS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r0, r1, r2, r3 = tl.randint4x(seed, offs.to(OFFSET_DTYPE) * 3 + 1, ROUNDS)
    tl.store(out + offs, r0, mask=mask)
    tl.store(out + n + offs, r1, mask=mask)
    tl.store(out + 2 * n + offs, r2, mask=mask)
    tl.store(out + 3 * n + offs, r3, mask=mask)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("seed", [0, 123, -5, 2**40 + 7])
def test_randint4x_matches_philox_bit_for_bit(device, bits, seed):
    n, rounds = 300, 10 if seed != 123 else 7
    dt = np.uint32 if bits == 32 else np.uint64
    out = np.zeros(4 * n, dt)
    launch(randint4x_kernel, (tk.cdiv(n, 128),), seed, out, n, 128,
           tl.int32 if bits == 32 else tl.int64, rounds, device=device)
    want = reference_words(seed, np.arange(n) * 3 + 1, bits, rounds)
    for i in range(4):
        np.testing.assert_array_equal(out[i * n:(i + 1) * n], want[i], err_msg=f"word {i}")


@triton.jit
def rand_kernel(seed, out_int, out_u, out_n, out_n4, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_int + offs, tl.randint(seed, offs), mask=mask)
    tl.store(out_u + offs, tl.rand(seed, offs), mask=mask)
    tl.store(out_n + offs, tl.randn(seed, offs), mask=mask)
    a, b, c, d = tl.randn4x(seed, offs)
    u1, u2, u3, u4 = tl.rand4x(seed, offs)
    tl.store(out_n4 + offs, a + b * 2 + c * 4 + d * 8 + (u1 + u2 + u3 + u4) * 100, mask=mask)


def reference_normals(u1, u2):
    u1 = np.maximum(np.float32(1e-7), u1)
    r = np.sqrt(np.float32(-2.0) * np.log(u1))
    th = np.float32(6.283185307179586) * u2
    return r * np.cos(th), r * np.sin(th)


@pytest.mark.parametrize("device", DEVICES)
def test_rand_randn_match_triton_definitions(device):
    n, seed = 1000, 987654321
    out_int = np.zeros(n, np.uint32)
    out_u, out_n, out_n4 = (np.zeros(n, np.float32) for _ in range(3))
    launch(rand_kernel, (tk.cdiv(n, 256),), seed, out_int, out_u, out_n, out_n4, n, 256,
           device=device)
    words = reference_words(seed, np.arange(n), 32)
    np.testing.assert_array_equal(out_int, words[0])
    u = [reference_uniform(w, 32) for w in words]
    np.testing.assert_array_equal(out_u, u[0])  # exact: one conversion, one product
    assert 0.0 <= out_u.min() and out_u.max() < 1.0
    n1, n2 = reference_normals(u[0], u[1])
    n3, n4 = reference_normals(u[2], u[3])
    # log, sqrt, cos and sin round differently in numpy, the interpreter and
    # the GPU's approximate instructions: a few fp32 ulp.
    np.testing.assert_allclose(out_n, n1, rtol=2e-5, atol=2e-6)
    mix = n1 + n2 * 2 + n3 * 4 + n4 * 8 + (u[0] + u[1] + u[2] + u[3]) * 100
    np.testing.assert_allclose(out_n4, mix, rtol=2e-5, atol=2e-4)
    assert abs(out_n.mean()) < 0.15 and 0.85 < out_n.std() < 1.15


@triton.jit
def umulhi_kernel(X, Y, Z, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(Z + offs, tl.umulhi(tl.load(X + offs), tl.load(Y + offs)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_umulhi_is_the_unsigned_high_half(device, dtype):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, 128, dtype=dtype, endpoint=True)
    y = RNG.integers(info.min, info.max, 128, dtype=dtype, endpoint=True)
    x[:4] = [info.max, info.min, -1 if info.min < 0 else 1, 0]
    y[:4] = [info.max, info.max, 2, 5]
    z = np.zeros(128, dtype)
    launch(umulhi_kernel, (1,), x, y, z, 128, device=device)
    mask = (1 << bits) - 1
    want = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
    np.testing.assert_array_equal(z.astype(np.uint64 if bits == 64 else np.uint32).astype(object),
                                  np.array(want, dtype=object))


# The low-memory dropout tutorial's seeded dropout, as a Triton user writes
# it: the mask comes from tl.rand(seed, offsets), so no mask is stored.
@triton.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x, p, seed, device):
    out = np.zeros_like(x)
    n = x.size
    launch(seeded_dropout_kernel, (tk.cdiv(n, 1024),), x, out, n, p, seed, BLOCK_SIZE=1024,
           device=device)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_seeded_dropout(device):
    n, p = 3000, 0.5
    x = RNG.uniform(0.5, 2.0, n).astype(np.float32)
    a = seeded_dropout(x, p, 123, device)
    b = seeded_dropout(x, p, 123, device)
    c = seeded_dropout(x, p, 512, device)
    np.testing.assert_array_equal(a, b)  # the same seed gives the same mask
    assert (a != c).any()
    keep = reference_uniform(reference_words(123, np.arange(n), 32)[0], 32) > np.float32(p)
    np.testing.assert_array_equal(a != 0, keep)
    np.testing.assert_allclose(a[keep], x[keep] / np.float32(1 - p), rtol=1e-6)
    assert 0.45 < keep.mean() < 0.55


@triton.jit
def bad_seed_kernel(out, SEED: tl.constexpr):
    offs = tl.arange(0, 16)
    tl.store(out + offs, tl.rand(SEED, offs))


@triton.jit
def bad_offset_kernel(out):
    offs = tl.arange(0, 16)
    tl.store(out + offs, tl.rand(7, offs.to(tl.int16)))


def test_misuse_is_a_located_error():
    out = np.zeros(16, np.float32)
    with pytest.raises(tk.CompilationError) as e:
        bad_seed_kernel[(1,)](out, 1.5)
    assert "tk.rand: seed must be an integer (a scalar or a tensor of integers), got fp32" \
        in str(e.value)
    assert "test_lang_random.py:" in str(e.value)
    with pytest.raises(tk.CompilationError) as e:
        bad_offset_kernel[(1,)](out)
    assert "tk.rand: offset must be 32- or 64-bit integers, got tensor<16xi16>" in str(e.value)
