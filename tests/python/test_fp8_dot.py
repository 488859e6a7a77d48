"""tk.dot on fp8 operands (fp8e4nv = e4m3fn, fp8e5 = e5m2, the two formats
may differ): the interpreter against numpy on the decoded values, ragged
M, N, K through a masked K loop; on the GPU (marked gpu) the same kernel
against the interpreter and the decoded float64 product: sm_90a's fp8 wgmma
(the default, TK_FP8_WGMMA=1, since these tests passed on an H100; fp32 and
fp16 results, a pipelined loop of num_stages 3, the cp.async ring of K-major
fp8 tiles, max_num_imprecise_acc) and the widened path (a tile wgmma cannot
take, or the knob off)."""

import numpy as np
import pytest

import tk
from test_fp8 import decode

RNG = np.random.default_rng(2207)


def random_fp8(shape, name, small=False):
    """Random fp8 patterns without NaN or inf; `small` keeps magnitudes
    below 4 (so an fp16 result does not overflow)."""
    bits = RNG.integers(0, 256, shape).astype(np.uint8)
    if small:
        # Exponent field at most 8 (e4m3) or 16 (e5m2): |x| < 4.
        mant = 3 if name == "float8e4nv" else 2
        exp = RNG.integers(0, 9 if mant == 3 else 17, shape).astype(np.uint8)
        bits = (bits & (0x80 | ((1 << mant) - 1))) | (exp << mant).astype(np.uint8)
    special = (bits & 0x7F) == 0x7F if name == "float8e4nv" else (bits & 0x7C) == 0x7C
    bits[special] &= 0xBF  # clear the exponent's top bit: a finite value
    return bits


def value(bits, name):
    return decode(bits.ravel(), name).reshape(bits.shape).astype(np.float64)


@tk.jit
def fp8_mm(a_ptr, b_ptr, c_ptr, M, N, K, A_FMT: tk.constexpr, B_FMT: tk.constexpr,
           BM: tk.constexpr, BN: tk.constexpr, BK: tk.constexpr, OUT16: tk.constexpr,
           IMPRECISE: tk.constexpr):
    rm = tk.program_id(0) * BM + tk.arange(0, BM)
    rn = tk.program_id(1) * BN + tk.arange(0, BN)
    rk = tk.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tk.zeros((BM, BN), dtype=tk.float32)
    for k in range(0, tk.cdiv(K, BK)):
        a = tk.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK),
                    other=0).to(A_FMT, bitcast=True)
        b = tk.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N),
                    other=0).to(B_FMT, bitcast=True)
        if IMPRECISE < 0:
            acc = tk.dot(a, b, acc)
        else:
            acc = tk.dot(a, b, acc, max_num_imprecise_acc=IMPRECISE)
        a_ptrs += BK
        b_ptrs += BK * N
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if OUT16:
        tk.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tk.float16), mask=mask)
    else:
        tk.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


PAIRS = [("float8e4nv", "float8e4nv"), ("float8e5", "float8e5"), ("float8e4nv", "float8e5"),
         ("float8e5", "float8e4nv")]


def launch(a, b, c, fa, fb, BM, BN, BK, out16=False, imprecise=-1, **opts):
    M, K = a.shape
    N = b.shape[1]
    grid = (tk.cdiv(M, BM), tk.cdiv(N, BN))
    return fp8_mm[grid](a, b, c, M, N, K, A_FMT=getattr(tk, fa), B_FMT=getattr(tk, fb), BM=BM,
                        BN=BN, BK=BK, OUT16=out16, IMPRECISE=imprecise, **opts)


@pytest.mark.parametrize("fa,fb", PAIRS)
@pytest.mark.parametrize("M,N,K", [(45, 37, 83), (70, 19, 130)])
def test_interpreter_fp8_dot_matches_numpy(fa, fb, M, N, K):
    a, b = random_fp8((M, K), fa), random_fp8((K, N), fb)
    c = np.full((M, N), 7.0, np.float32)
    launch(a, b, c, fa, fb, 32, 32, 32)
    want = value(a, fa) @ value(b, fb)
    scale = np.abs(value(a, fa)) @ np.abs(value(b, fb))
    # fp32 sums of exact products: within K fp32 roundings of the sum of |ab|.
    assert np.all(np.abs(c - want) <= K * 2.0**-23 * scale + 1e-30)


@pytest.mark.parametrize("imprecise", [0, 32])
def test_interpreter_ignores_max_num_imprecise_acc(imprecise):
    """Off sm_90a's fp8 wgmma every path sums in fp32: the same numbers."""
    M, N, K = 33, 40, 70
    a, b = random_fp8((M, K), "float8e4nv"), random_fp8((K, N), "float8e5")
    c0 = np.zeros((M, N), np.float32)
    c1 = np.zeros((M, N), np.float32)
    launch(a, b, c0, "float8e4nv", "float8e5", 32, 32, 32)
    launch(a, b, c1, "float8e4nv", "float8e5", 32, 32, 32, imprecise=imprecise)
    np.testing.assert_array_equal(c0, c1)
    assert np.any(c0 != 0)


def test_interpreter_fp16_result():
    M, N, K = 21, 50, 45
    a, b = random_fp8((M, K), "float8e4nv", small=True), random_fp8((K, N), "float8e5", small=True)
    c = np.zeros((M, N), np.float16)
    launch(a, b, c, "float8e4nv", "float8e5", 32, 64, 32, out16=True)
    want = (value(a, "float8e4nv") @ value(b, "float8e5")).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=1e-3)


def test_max_num_imprecise_acc_over_k_is_an_error():
    a = random_fp8((32, 32), "float8e4nv")
    b = random_fp8((32, 32), "float8e4nv")
    c = np.zeros((32, 32), np.float32)
    with pytest.raises(tk.CompilationError) as e:
        launch(a, b, c, "float8e4nv", "float8e4nv", 32, 32, 32, imprecise=64)
    assert "max_num_imprecise_acc = 64 is more than K = 32" in str(e.value)


# GPU: (BM, BN, BK, num_warps) with num_stages 3; the first three take fp8
# wgmma on sm_90a, the last (BM = 32 < 64 rows a warp group) is widened.
GPU_TILES = [(128, 128, 64, 4), (128, 256, 128, 8), (64, 64, 32, 4), (32, 32, 32, 4)]


def gpu_case(fa, fb, tile, out16, imprecise, monkeypatch, M=200, N=190, K=300, fp8_wgmma=True):
    import torch

    monkeypatch.setenv("TK_FP8_WGMMA", "1" if fp8_wgmma else "0")
    BM, BN, BK, warps = tile
    small = out16
    a, b = random_fp8((M, K), fa, small), random_fp8((K, N), fb, small)
    dt = torch.float16 if out16 else torch.float32
    c = torch.full((M, N), 7.0, dtype=dt, device="cuda")
    ta = torch.from_numpy(a).cuda()
    tb = torch.from_numpy(b).cuda()
    h = launch(ta, tb, c, fa, fb, BM, BN, BK, out16=out16, imprecise=imprecise,
               num_warps=warps, num_stages=3)
    got = c.float().cpu().numpy().astype(np.float64)
    # The interpreter's answer for the same launch.
    monkeypatch.setenv("TK_INTERPRET", "1")
    ref = np.zeros((M, N), np.float16 if out16 else np.float32)
    launch(a, b, ref, fa, fb, BM, BN, BK, out16=out16, imprecise=imprecise)
    monkeypatch.delenv("TK_INTERPRET")
    want = value(a, fa) @ value(b, fb)
    scale = np.abs(value(a, fa)) @ np.abs(value(b, fb))
    return h, got, ref.astype(np.float64), want, scale


GPU_CASES = [(fa, fb, tile, False) for fa, fb in PAIRS[:3] for tile in GPU_TILES[:3]] + \
    [(fa, fb, GPU_TILES[i], True) for (fa, fb), i in zip(PAIRS, (0, 1, 2, 0))] + \
    [("float8e4nv", "float8e5", GPU_TILES[3], False), ("float8e5", "float8e5", GPU_TILES[3], True)]


@pytest.mark.gpu
@pytest.mark.parametrize("fa,fb,tile,out16,fp8_wgmma",
                         [c + (True,) for c in GPU_CASES] +
                         [("float8e4nv", "float8e5", GPU_TILES[0], False, False)])
def test_gpu_fp8_dot_matches_the_interpreter(fa, fb, tile, out16, fp8_wgmma, monkeypatch):
    import torch

    h, got, ref, want, scale = gpu_case(fa, fb, tile, out16, -1, monkeypatch, fp8_wgmma=fp8_wgmma)
    wgmma = torch.cuda.get_device_capability() == (9, 0) and tile[0] >= 64 and fp8_wgmma
    ptx = h.asm["ptx"]
    if ptx:
        assert ("k32.f32.e" in ptx) == wgmma, "fp8 wgmma expected exactly on sm_90a tiles"
    # wgmma's fp8 accumulation is not fp32's (Triton's default on Hopper,
    # max_num_imprecise_acc = None): within 1e-2 of the sum of |ab|; the
    # widened path sums exact products in fp32. An fp16 result adds its
    # rounding.
    tol = (1e-2 if wgmma else 1e-5) * scale + (np.abs(want) * 2.0**-10 if out16 else 0)
    assert np.all(np.abs(got - want) <= tol + 1e-6)
    assert np.all(np.abs(got - ref) <= tol + np.abs(ref) * (2.0**-10 if out16 else 0) + 1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("imprecise", [0, 32, 64])
def test_gpu_fp8_dot_max_num_imprecise_acc(imprecise, monkeypatch):
    import torch

    tile = (128, 128, 64, 4)
    h, got, ref, want, scale = gpu_case("float8e4nv", "float8e5", tile, False, imprecise,
                                        monkeypatch)
    # Partial sums of at most `imprecise` K elements added in fp32.
    assert np.all(np.abs(got - want) <= 1e-2 * scale + 1e-6)
    ptx = h.asm["ptx"]
    if torch.cuda.get_device_capability() == (9, 0):
        # One fp32 add per accumulator register and chunk (Triton's count):
        # BM * BN / (32 * num_warps) registers, BK / max(imprecise, 32) chunks.
        chunks = tile[2] // max(imprecise, 32)
        adds = ptx.count("add.f32") + ptx.count("add.rn.f32")
        assert adds >= tile[0] * tile[1] // (32 * tile[3]) * chunks


@tk.jit
def fp8_mm_strided(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   BM: tk.constexpr, BN: tk.constexpr, BK: tk.constexpr):
    # fp8 pointers loaded directly (no bitcast): the tiles may ride the
    # cp.async ring when K-major (B as a transposed [N, K] tensor).
    rm = tk.program_id(0) * BM + tk.arange(0, BM)
    rn = tk.program_id(1) * BN + tk.arange(0, BN)
    rk = tk.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tk.zeros((BM, BN), dtype=tk.float32)
    for k in range(0, tk.cdiv(K, BK)):
        a = tk.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tk.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tk.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tk.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.gpu
@pytest.mark.parametrize("fa,fb,b_k_major,tile,K", [
    ("float8e4nv", "float8e4nv", True, (128, 256, 128, 8), 320),
    ("float8e5", "float8e5", True, (128, 128, 64, 4), 320),
    ("float8e4nv", "float8e5", True, (128, 128, 64, 4), 333),
    ("float8e5", "float8e4nv", False, (128, 256, 128, 8), 320),
    ("float8e4nv", "float8e4nv", False, (128, 128, 64, 4), 333),
])
def test_gpu_fp8_pointers_and_k_major_b(fa, fb, b_k_major, tile, K, monkeypatch):
    import torch

    monkeypatch.setenv("TK_FP8_WGMMA", "1")
    torch_fp8 = {"float8e4nv": torch.float8_e4m3fn, "float8e5": torch.float8_e5m2}
    M, N = 300, 200
    BM, BN, BK, warps = tile
    a = random_fp8((M, K), fa)
    bt = random_fp8((N, K), fb)  # B^T, [N, K]
    ta = torch.from_numpy(a).cuda().view(torch_fp8[fa])
    tbt = torch.from_numpy(bt).cuda().view(torch_fp8[fb])
    tb = tbt.t() if b_k_major else tbt.t().contiguous()
    c = torch.full((M, N), 7.0, device="cuda")
    grid = (tk.cdiv(M, BM), tk.cdiv(N, BN))
    h = fp8_mm_strided[grid](ta, tb, c, M, N, K, ta.stride(0), ta.stride(1), tb.stride(0),
                             tb.stride(1), BM=BM, BN=BN, BK=BK, num_warps=warps, num_stages=3)
    want = value(a, fa) @ value(bt, fb).T
    scale = np.abs(value(a, fa)) @ np.abs(value(bt, fb)).T
    got = c.cpu().numpy().astype(np.float64)
    assert np.all(np.abs(got - want) <= 1e-2 * scale + 1e-6)
    if torch.cuda.get_device_capability() == (9, 0):
        ptx = h.asm["ptx"]
        assert "k32.f32.e" in ptx
        # K-major B: both tiles ride the cp.async ring, when their rows (K
        # bytes apart) are 16-byte aligned; K = 333 keeps them in registers.
        ring = "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
        assert ring == (b_k_major and K % 16 == 0)


@pytest.mark.usefixtures("ptx_compile")
def test_the_knob_reaches_python_compiles(monkeypatch):
    """TK_FP8_WGMMA reaches a Python GPU compile (and its cache key): fp8
    wgmma with it, fp16 wgmma of the widened operands without (no GPU
    needed: PTX only)."""
    from ptx_compile_util import CudaArray

    monkeypatch.setenv("TK_ARCH", "sm_90a")

    def ptx():
        return fp8_mm.warmup(CudaArray(1 << 20, "|u1"), CudaArray(1 << 21, "|u1"),
                             CudaArray(1 << 22), 200, 190, 300, A_FMT=tk.float8e4nv,
                             B_FMT=tk.float8e5, BM=128, BN=128, BK=64, OUT16=False,
                             IMPRECISE=-1, grid=(2, 2)).asm["ptx"]
    monkeypatch.setenv("TK_FP8_WGMMA", "1")
    on = ptx()
    monkeypatch.setenv("TK_FP8_WGMMA", "0")
    off = ptx()
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2" in on
    assert "k32.f32.e4m3" not in off
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in off
