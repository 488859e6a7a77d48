"""tk.inline_asm_elementwise (Triton's tl.inline_asm_elementwise): PTX run on
every element, or every `pack` elements, of the broadcast args. The kernels
mirror what test_core.py's inline-asm tests exercise (a funnel shift, four
int8 in one register, pointers in an impure asm, two results, packed two
results) on sizes that are not a multiple of the block, checked against
numpy on the GPU. The CPU interpreter cannot run PTX: a located error."""

import re

import numpy as np
import pytest

import tk
import tk as tl

RNG = np.random.default_rng(4859)
gpu = pytest.mark.gpu


def on_gpu(kernel, grid, *args, **kwargs):
    """kernel[grid] on CUDA copies of the numpy arrays, copied back in place."""
    import torch

    moved = [torch.from_numpy(np.ascontiguousarray(a)).cuda() if isinstance(a, np.ndarray) else a
             for a in args]
    kernel[grid](*moved, **kwargs)
    torch.cuda.synchronize()
    for a, t in zip(args, moved):
        if isinstance(a, np.ndarray):
            a[...] = t.cpu().numpy()


@tl.jit
def funnel_shift_kernel(X, Y, Z, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    # The shift is a Python number: broadcast to the block like a tensor.
    z = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r, r, r, r",
                                  [x, y, SHIFT], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Z + offs, z, mask=mask)


@gpu
@pytest.mark.parametrize("shift", [1, 17, 31])
def test_funnel_shift(shift):
    n = 1000
    x = RNG.integers(0, 2**32, n, dtype=np.uint32)
    y = RNG.integers(0, 2**32, n, dtype=np.uint32)
    z = np.zeros(n, np.int32)
    on_gpu(funnel_shift_kernel, (triton_cdiv(n, 256),), x, y, z, n, shift, 256)
    expect = ((y << np.uint32(shift)) | (x >> np.uint32(32 - shift))).view(np.int32)
    np.testing.assert_array_equal(z, expect)


def triton_cdiv(a, b):
    return (a + b - 1) // b


@tl.jit
def packed_bytes_kernel(X, Y, n, BLOCK: tl.constexpr, PACK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    # Four bytes per 32-bit register: mask each to 5 bits, then shift by 3.
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;", "=r,r", [x],
                                  dtype=tl.int8, is_pure=True, pack=PACK)
    tl.store(Y + offs, y, mask=mask)


@gpu
@pytest.mark.parametrize("block", [512, 16])
def test_packed_bytes(block):
    # 16 elements over 128 threads: a thread's one register is padded to a
    # group of four.
    n = 1300
    x = RNG.integers(0, 256, n, dtype=np.uint8)
    y = np.zeros(n, np.uint8)
    on_gpu(packed_bytes_kernel, (triton_cdiv(n, block),), x, y, n, block, 4)
    np.testing.assert_array_equal(y, ((x & 0x1F) << 3).astype(np.uint8))


@tl.jit
def pointer_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # Past the end, the last element again (the asm has no mask).
    offs = tl.minimum(offs, n - 1)
    tl.inline_asm_elementwise("ld.global.b8 $0, [$1]; shl.b32 $0, $0, 3; st.global.b8 [$2], $0;",
                              "=r,l,l", [X + offs, Y + offs], dtype=tl.int8, is_pure=False, pack=1)


@gpu
def test_impure_asm_through_pointers():
    n = 777
    x = RNG.integers(0, 256, n, dtype=np.uint8)
    y = np.zeros(n, np.uint8)
    on_gpu(pointer_kernel, (triton_cdiv(n, 256),), x, y, n, 256)
    np.testing.assert_array_equal(y, (x << 3).astype(np.uint8))


@tl.jit
def two_results_kernel(A, B, C, D, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    (c, d) = tl.inline_asm_elementwise(
        asm="sub.u32 $0, $2, $3;\n sub.u32 $1, $3, $2;",
        constraints="=r,=r,r,r",
        args=[a, b],
        dtype=(tl.uint32, tl.uint32),
        is_pure=True,
        pack=1,
    )
    tl.store(C + offs, c, mask=mask)
    tl.store(D + offs, d, mask=mask)


@gpu
def test_two_results():
    n = 900
    a = RNG.integers(0, 2**32, n, dtype=np.uint32)
    b = RNG.integers(0, 2**32, n, dtype=np.uint32)
    c = np.zeros(n, np.uint32)
    d = np.zeros(n, np.uint32)
    on_gpu(two_results_kernel, (triton_cdiv(n, 512),), a, b, c, d, n, 512)
    np.testing.assert_array_equal(c, a - b)
    np.testing.assert_array_equal(d, b - a)


@tl.jit
def packed_two_results_kernel(A, B, C, D, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    # Per four elements: the bytes of `a` widened to int32 ($0..$3), and the
    # max of each as a float with the four floats of `b` ($4..$7). $8 is `a`'s
    # one register, $9..$12 `b`'s four.
    (c, d) = tl.inline_asm_elementwise(
        """
        {
            .reg .b8 q<4>;
            mov.b32 {q0, q1, q2, q3}, $8;
            cvt.u32.u8 $0, q0;
            cvt.u32.u8 $1, q1;
            cvt.u32.u8 $2, q2;
            cvt.u32.u8 $3, q3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        "=r,=r,=r,=r,=r,=r,=r,=r," "r,r,r,r,r",
        [a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(C + offs, c, mask=mask)
    tl.store(D + offs, d, mask=mask)


@gpu
def test_packed_two_results():
    n = 1100
    a = RNG.integers(0, 256, n, dtype=np.uint8)
    b = (RNG.random(n) * 300).astype(np.float32)
    c = np.zeros(n, np.int32)
    d = np.zeros(n, np.float32)
    on_gpu(packed_two_results_kernel, (triton_cdiv(n, 512),), a, b, c, d, n, 512)
    np.testing.assert_array_equal(c, a.astype(np.int32))
    np.testing.assert_array_equal(d, np.maximum(a.astype(np.float32), b))


@tl.jit
def half_pairs_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    # Two fp16 per 32-bit register: one add.f16x2 per pair.
    z = tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [x, y],
                                  dtype=tl.float16, is_pure=True, pack=2)
    tl.store(Z + offs, z, mask=mask)


@gpu
def test_half_pairs():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float16)
    y = RNG.standard_normal(n).astype(np.float16)
    z = np.zeros(n, np.float16)
    on_gpu(half_pairs_kernel, (triton_cdiv(n, 256),), x, y, z, n, 256)
    np.testing.assert_array_equal(z, x + y)


def test_interpreter_refuses_inline_asm_at_the_call():
    n = 100
    x = RNG.integers(0, 2**32, n, dtype=np.uint32)
    y = RNG.integers(0, 2**32, n, dtype=np.uint32)
    z = np.zeros(n, np.int32)
    with pytest.raises(tk.InterpreterError) as e:
        funnel_shift_kernel[(1,)](x, y, z, n, 3, 128)
    msg = str(e.value)
    assert "the CPU interpreter cannot run tk.inline_asm_elementwise" in msg, msg
    # Located at the call's line in this file.
    line = funnel_shift_kernel.fn.__code__.co_firstlineno + 7
    assert re.search(rf"test_lang_inline_asm\.py:{line}:\d+", msg), msg


def test_compile_errors_name_the_argument():
    x = np.zeros(64, np.int32)
    with pytest.raises(tk.CompilationError, match=r"constraints \"=r,r\" name 1 output and 1 "
                                                  r"input register\(s\)"):
        bad_count_kernel[(1,)](x)


@tl.jit
def bad_count_kernel(X):
    x = tl.load(X + tl.arange(0, 64))
    y = tl.inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r", [x, x], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(X + tl.arange(0, 64), y)
