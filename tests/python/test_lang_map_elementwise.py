"""tk.map_elementwise: a scalar @tk.jit function, with its own control flow,
run on every element (or every `pack` elements) of broadcast tensors
(docs/language.md, "Elementwise functions of your own"). On the interpreter
against numpy, to PTX that ptxas takes without a GPU, and on the GPU
against numpy (skipped visibly without one)."""

import subprocess
import shutil

import numpy as np
import pytest

import tk
import tk.language as tl
from ptx_compile_util import CudaArray

RNG = np.random.default_rng(5063)


@tk.jit
def sign_of_difference(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@tk.jit
def compare_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m)
    y = tl.load(Y + offs, mask=m)
    tl.store(Z + offs, tl.map_elementwise(sign_of_difference, x, y), mask=m)


@tk.jit
def quotient_remainder(a, b):
    return a // b, a % b


@tk.jit
def quotient_remainder_2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@tk.jit
def divmod_kernel(A, B, Q, R, n, BLOCK: tl.constexpr, PACK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(A + offs, mask=m, other=1)
    b = tl.load(B + offs, mask=m, other=1)
    if PACK == 1:
        q, r = tl.map_elementwise(quotient_remainder, a, b)
    else:
        q, r = tl.map_elementwise(quotient_remainder_2, a, b, pack=2)
    tl.store(Q + offs, q, mask=m)
    tl.store(R + offs, r, mask=m)


@tk.jit
def clipped_newton(x, lo):
    # a loop with a data-dependent trip count, and a scalar from outside
    # (lo, broadcast from a Python float)
    r = x
    i = 0
    while i < 4 and r > lo:
        r = 0.5 * (r + x / r)
        i += 1
    return tl.maximum(r, lo)


@tk.jit
def sqrt_kernel(X, Y, n, lo, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    m = (rows * BLOCK_N + cols) < n
    x = tl.load(X + rows * BLOCK_N + cols, mask=m, other=1.0)
    tl.store(Y + rows * BLOCK_N + cols, tl.map_elementwise(clipped_newton, x, lo), mask=m)


def newton_reference(x, lo):
    r = x.astype(np.float64).copy()
    out = np.empty_like(x)
    for k, (xv, rv) in enumerate(zip(x.astype(np.float32), r.astype(np.float32))):
        i = 0
        while i < 4 and rv > np.float32(lo):
            rv = np.float32(0.5) * (rv + xv / rv)
            i += 1
        out[k] = max(rv, np.float32(lo))
    return out


def test_control_flow_per_element():
    n = 300  # not a multiple of the block
    x = RNG.integers(-5, 5, n).astype(np.int32)
    y = RNG.integers(-5, 5, n).astype(np.int32)
    z = np.full(n, 7, np.int32)
    compare_kernel[(3,)](x, y, z, n, BLOCK=128)
    np.testing.assert_array_equal(z, np.sign(x - y))


@pytest.mark.parametrize("pack", [1, 2])
def test_several_results_and_pack(pack):
    n = 1000
    a = RNG.integers(0, 1 << 31, n, dtype=np.uint32)
    b = RNG.integers(1, 5000, n, dtype=np.uint32)
    q, r = np.zeros(n, np.uint32), np.zeros(n, np.uint32)
    divmod_kernel[(4,)](a, b, q, r, n, BLOCK=256, PACK=pack)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)


def test_loop_in_the_function_and_a_broadcast_scalar():
    n = 8 * 32 - 5
    x = RNG.uniform(0.1, 50.0, n).astype(np.float32)
    y = np.zeros(n, np.float32)
    sqrt_kernel[(1,)](x, y, n, 1.5, BLOCK_M=8, BLOCK_N=32)
    np.testing.assert_allclose(y, newton_reference(x, 1.5), rtol=2e-6)


@tk.jit
def one_value(x):
    return x


@tk.jit
def pack_error_kernel(X, BLOCK: tl.constexpr, PACK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.map_elementwise(one_value, x, pack=PACK))


@tk.jit
def not_jit_kernel(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.map_elementwise(3, x))


def test_errors_are_located():
    x = np.ones(8, np.float32)
    with pytest.raises(tk.CompilationError, match="pack must be a compile-time power of two"):
        pack_error_kernel[(1,)](x, BLOCK=8, PACK=3)
    # pack=2 hands one_value two arguments; it takes one
    with pytest.raises(tk.CompilationError, match="one_value"):
        pack_error_kernel[(1,)](x, BLOCK=8, PACK=2)
    with pytest.raises(tk.CompilationError, match="pack \\(16\\) must divide"):
        pack_error_kernel[(1,)](x, BLOCK=8, PACK=16)
    with pytest.raises(tk.CompilationError, match="scalar_fn must be a @tk.jit function") as e:
        not_jit_kernel[(1,)](x, BLOCK=8)
    assert "map_elementwise(3, x)" in str(e.value)


def test_compiles_to_ptx_that_ptxas_takes(ptx_compile, tmp_path):
    ptx = divmod_kernel.warmup(CudaArray(1 << 20, "<u4"), CudaArray(1 << 21, "<u4"),
                               CudaArray(1 << 22, "<u4"), CudaArray(1 << 23, "<u4"), 1000,
                               BLOCK=256, PACK=2, grid=(4,)).asm["ptx"]
    assert ptx.count("div.u32") == 2, ptx  # one per element of the thread (pack=2)
    ptx2 = compare_kernel.warmup(CudaArray(1 << 20, "<i4"), CudaArray(1 << 21, "<i4"),
                                 CudaArray(1 << 22, "<i4"), 300, BLOCK=128,
                                 grid=(3,)).asm["ptx"]
    ptx3 = sqrt_kernel.warmup(CudaArray(1 << 20), CudaArray(1 << 21), 250, 1.5, BLOCK_M=8,
                              BLOCK_N=32, grid=(1,)).asm["ptx"]
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("no ptxas to assemble the PTX")
    for i, text in enumerate((ptx, ptx2, ptx3)):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(text)
        subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / f"k{i}.cubin")],
                       check=True, capture_output=True)


@pytest.mark.gpu
def test_on_the_gpu():
    torch = pytest.importorskip("torch")
    n = 1000
    a = RNG.integers(0, 1 << 31, n, dtype=np.uint32)
    b = RNG.integers(1, 5000, n, dtype=np.uint32)
    for pack in (1, 2):
        ta = torch.from_numpy(a.view(np.int32)).cuda()
        tb = torch.from_numpy(b.view(np.int32)).cuda()
        q = torch.zeros(n, dtype=torch.int32, device="cuda")
        r = torch.zeros(n, dtype=torch.int32, device="cuda")
        divmod_kernel[(4,)](ta.view(torch.uint32), tb.view(torch.uint32), q.view(torch.uint32),
                            r.view(torch.uint32), n, BLOCK=256, PACK=pack)
        np.testing.assert_array_equal(q.cpu().numpy().view(np.uint32), a // b)
        np.testing.assert_array_equal(r.cpu().numpy().view(np.uint32), a % b)
    x = RNG.integers(-5, 5, 300).astype(np.int32)
    y = RNG.integers(-5, 5, 300).astype(np.int32)
    z = torch.zeros(300, dtype=torch.int32, device="cuda")
    compare_kernel[(3,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), z, 300, BLOCK=128)
    np.testing.assert_array_equal(z.cpu().numpy(), np.sign(x - y))
    xf = RNG.uniform(0.1, 50.0, 251).astype(np.float32)
    yf = torch.zeros(251, device="cuda")
    sqrt_kernel[(1,)](torch.from_numpy(xf).cuda(), yf, 251, 1.5, BLOCK_M=8, BLOCK_N=32)
    np.testing.assert_allclose(yf.cpu().numpy(), newton_reference(xf, 1.5), rtol=2e-6)
