"""cache_modifier and eviction_policy on tk.load / tk.store: the PTX a GPU
compile emits for each (docs/codegen/loads-stores.md, "Cache modifiers and
eviction policies"; test_core.py's test_load_cache_modifier, test_store_cache_modifier
and test_store_eviction_policy check the same strings), compiled to PTX
without a GPU; the interpreter runs them as plain accesses; on the GPU the
hinted copy gives the numbers numpy gives."""

import numpy as np
import pytest

import tk
from ptx_compile_util import CudaArray

RNG = np.random.default_rng(6211)


@tk.jit
def load_hinted(dst, src, CACHE: tk.constexpr):
    offsets = tk.arange(0, 128)
    x = tk.load(src + offsets, cache_modifier=CACHE)
    tk.store(dst + offsets, x)


@tk.jit
def store_hinted(dst, src, CACHE: tk.constexpr, POLICY: tk.constexpr):
    offsets = tk.arange(0, 128)
    x = tk.load(src + offsets)
    tk.store(dst + offsets, x, cache_modifier=CACHE, eviction_policy=POLICY)


@tk.jit
def masked_copy(dst, src, n, LOAD_CACHE: tk.constexpr, STORE_CACHE: tk.constexpr,
                LOAD_POLICY: tk.constexpr, STORE_POLICY: tk.constexpr, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    x = tk.load(src + offs, mask=offs < n, other=-2.0, cache_modifier=LOAD_CACHE,
                eviction_policy=LOAD_POLICY)
    tk.store(dst + offs, x * 3.0 + 1.0, mask=offs < n, cache_modifier=STORE_CACHE,
             eviction_policy=STORE_POLICY)


def global_accesses(ptx, op):
    return [line.strip() for line in ptx.splitlines() if f"{op}.global" in line or
            f"{op}.volatile.global" in line]


@pytest.mark.parametrize("cache", ["", ".ca", ".cg", ".cv"])
def test_load_cache_modifier_reaches_the_ptx(ptx_compile, cache):
    ptx = load_hinted.warmup(CudaArray(1 << 20), CudaArray(1 << 21), CACHE=cache,
                             grid=(1,)).asm["ptx"]
    loads = global_accesses(ptx, "ld")
    assert loads, ptx
    for other in {".ca", ".cg", ".cv"} - {cache}:
        assert f"ld.global{other}" not in ptx, (cache, loads)
    if cache:
        assert all(f"ld.global{cache}." in ld for ld in loads), loads
    assert "createpolicy" not in ptx


@pytest.mark.parametrize("cache", ["", ".wb", ".cg", ".cs", ".wt"])
def test_store_cache_modifier_reaches_the_ptx(ptx_compile, cache):
    ptx = store_hinted.warmup(CudaArray(1 << 20), CudaArray(1 << 21), CACHE=cache, POLICY="",
                              grid=(1,)).asm["ptx"]
    stores = global_accesses(ptx, "st")
    assert stores, ptx
    for other in {".wb", ".cg", ".cs", ".wt"} - {cache}:
        assert f"st.global{other}" not in ptx, (cache, stores)
    if cache:
        assert all(f"st.global{cache}." in st for st in stores), stores


@pytest.mark.parametrize("policy", ["", "evict_last", "evict_first"])
def test_store_eviction_policy_reaches_the_ptx(ptx_compile, policy):
    ptx = store_hinted.warmup(CudaArray(1 << 20), CudaArray(1 << 21), CACHE="", POLICY=policy,
                              grid=(1,)).asm["ptx"]
    for other in {"evict_last", "evict_first"} - {policy}:
        assert other not in ptx
    if policy:
        assert f"createpolicy.fractional.L2::{policy}.b64" in ptx
        stores = global_accesses(ptx, "st")
        assert stores and all(f"st.global.L1::{policy}.L2::cache_hint." in st for st in stores)
    else:
        assert "cache_hint" not in ptx


def test_masked_vector_accesses_keep_operator_and_policy(ptx_compile):
    # n divisible by 16 (specialised): 16-byte predicated vectors.
    k = masked_copy.warmup(CudaArray(1 << 20), CudaArray(1 << 21), 4096, LOAD_CACHE=".cg",
                           STORE_CACHE=".cs", LOAD_POLICY="evict_first",
                           STORE_POLICY="evict_last", BLOCK=1024, grid=(4,))
    ptx = k.asm["ptx"]
    loads, stores = global_accesses(ptx, "ld"), global_accesses(ptx, "st")
    assert loads and all(ld.startswith("@%p") and "ld.global.cg.L2::cache_hint.v4.b32" in ld
                         for ld in loads), loads
    assert stores and all(st.startswith("@%p") and "st.global.cs.L2::cache_hint.v4.b32" in st
                          for st in stores), stores
    # A cache operator leaves no room for an L1 priority in PTX.
    assert "L1::" not in ptx


def test_a_bad_cache_modifier_is_a_located_error(ptx_compile):
    @tk.jit
    def bad(dst, src):
        offsets = tk.arange(0, 128)
        tk.store(dst + offsets, tk.load(src + offsets), cache_modifier=".ca")

    with pytest.raises(tk.CompilationError) as e:
        bad.warmup(CudaArray(1 << 20), CudaArray(1 << 21), grid=(1,))
    assert "cache_modifier must be '', '.wb', '.cg', '.cs', '.wt' or None" in str(e.value)
    assert "test_cache_hints.py:" in str(e.value)


HINTS = [("", "", "", ""), (".ca", ".wb", "", ""), (".cg", ".cs", "evict_first", "evict_last"),
         (".cv", ".wt", "evict_last", "evict_first")]


@pytest.mark.parametrize("hints", HINTS)
def test_hints_do_not_change_what_the_interpreter_computes(hints):
    n = 3000
    src = RNG.standard_normal(n).astype(np.float32)
    dst = np.full(n, np.nan, np.float32)
    masked_copy[(tk.cdiv(n, 1024),)](dst, src, n, *hints, BLOCK=1024)
    np.testing.assert_array_equal(dst, src * np.float32(3.0) + np.float32(1.0))


@pytest.mark.gpu
@pytest.mark.parametrize("hints", HINTS)
def test_hinted_copy_on_the_gpu(hints):
    import torch

    n = 3000
    src = RNG.standard_normal(n).astype(np.float32)
    src_d = torch.from_numpy(src).cuda()
    dst_d = torch.full((n,), float("nan"), device="cuda")
    masked_copy[(tk.cdiv(n, 1024),)](dst_d, src_d, n, *hints, BLOCK=1024)
    torch.cuda.synchronize()
    # The GPU contracts x * 3 + 1 into one fma (one rounding, not two).
    np.testing.assert_allclose(dst_d.cpu().numpy(), src.astype(np.float64) * 3.0 + 1.0,
                               rtol=1e-6, atol=1e-6)
