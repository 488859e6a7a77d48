"""Host tensor descriptors on TMA (TK_TMA=1, sm_90 and above;
docs/codegen/tma.md): the CUtensorMap the launch encodes (innermost
dimension first, strides in bytes, the block as the box, NaN fill for
padding "nan"), cached per base, shape, strides, block and padding; the
located TensorDescriptorError of a descriptor TMA cannot take; and (marked
`gpu`) TMA loads and stores against torch on ragged shapes (blocks at the
tensor's edge, negative coordinates) and a descriptor matmul whose M, N and
K are not multiples of the block."""

import numpy as np
import pytest

import tk
import tk as triton
import tk.language as tl
from tk.tools import tensor_descriptor as td
from tk.tools.tensor_descriptor import TensorDescriptor, TensorDescriptorError


class FakeBase:
    """A tensor's stand-in for the host checks: a dtype and an address."""

    def __init__(self, dtype, address=0x10000):
        self.dtype = np.dtype(dtype)
        self.address = address

    def data_ptr(self):
        return self.address


class Recorder:
    """An encode function (cuTensorMapEncodeTiled's arguments) that records
    its calls and returns 128 bytes, or (None, error) when told to fail."""

    def __init__(self, error=None):
        self.calls, self.error = [], error

    def __call__(self, data_type, address, dims, strides, box, oob_fill):
        self.calls.append((data_type, address, dims, strides, box, oob_fill))
        if self.error:
            return None, self.error
        return bytes(range(128)), ""


def test_the_map_is_encoded_innermost_first_with_byte_strides():
    td._tensor_maps.clear()
    desc = TensorDescriptor(FakeBase(np.float16, 0x20000), [45, 77, 80], [6400, 80, 1],
                            [2, 16, 32])
    enc = Recorder()
    m = td.tensor_map(desc, "fp16", 0x20000, "argument 'd' of k", enc)
    assert m == bytes(range(128))
    # CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6; strides of dims 1.. in bytes
    assert enc.calls == [(6, 0x20000, [80, 77, 45], [160, 12800], [32, 16, 2], 0)]
    # The same descriptor again: from the cache, no second encode.
    td.tensor_map(desc, "fp16", 0x20000, "argument 'd' of k", enc)
    assert len(enc.calls) == 1
    # Another base address, block or padding: encoded again.
    td.tensor_map(desc, "fp16", 0x30000, "argument 'd' of k", enc)
    nan = TensorDescriptor(FakeBase(np.float16, 0x20000), [45, 77, 80], [6400, 80, 1],
                           [2, 16, 32], padding="nan")
    td.tensor_map(nan, "fp16", 0x20000, "argument 'd' of k", enc)
    assert len(enc.calls) == 3
    assert enc.calls[-1][-1] == 1  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA


@pytest.mark.parametrize("dtype,name,code", [(np.float32, "fp32", 7), (np.int8, "i8", 0),
                                             (np.int32, "i32", 3), (np.float64, "fp64", 8),
                                             (np.uint16, "u16", 1)])
def test_data_types(dtype, name, code):
    td._tensor_maps.clear()
    size = np.dtype(dtype).itemsize
    desc = TensorDescriptor(FakeBase(dtype), [10, 64], [64, 1], [8, 64])
    enc = Recorder()
    td.tensor_map(desc, name, 0x10000, "here", enc)
    assert enc.calls[0][0] == code and enc.calls[0][3] == [64 * size]
    assert td.tma_data_type("i1") is None  # bool blocks load through pointers


@pytest.mark.parametrize("shape,strides,block,dtype,rule", [
    ([64, 1024], [1024, 1], [8, 512], np.float16, "at most 256 elements per block dimension"),
    ([64, 64], [64, 1], [8, 4], np.float16,
     "innermost block dimension to span a multiple of 16 bytes (4 x 2-byte elements is 8)"),
    ([64, 64], [64, 1], [8, 2], np.float32,
     "innermost block dimension to span a multiple of 16 bytes (2 x 4-byte elements is 8)"),
])
def test_blocks_tma_cannot_take_are_located_errors(shape, strides, block, dtype, rule):
    td._tensor_maps.clear()
    name = {np.float16: "fp16", np.float32: "fp32"}[dtype]
    desc = TensorDescriptor(FakeBase(dtype), shape, strides, block)
    with pytest.raises(TensorDescriptorError) as e:
        td.tensor_map(desc, name, 0x10000, "argument 'a_desc' of matmul", Recorder())
    assert str(e.value).startswith("argument 'a_desc' of matmul: block_shape")
    assert rule in str(e.value)


def test_a_stride_past_tmas_range_is_a_located_error():
    desc = TensorDescriptor(FakeBase(np.float16), [4, 8], [2**40, 1], [4, 8])
    with pytest.raises(TensorDescriptorError, match=r"argument 'x' of k: strides .*multiple of "
                       r"16 bytes below 2\*\*40"):
        td.tensor_map(desc, "fp16", 0x10000, "argument 'x' of k", Recorder())


def test_the_drivers_refusal_is_a_located_error():
    td._tensor_maps.clear()
    desc = TensorDescriptor(FakeBase(np.float16), [4, 8], [8, 1], [4, 8])
    with pytest.raises(TensorDescriptorError, match=r"^argument 'x' of k: cuTensorMapEncodeTiled "
                       r"refused the descriptor .*CUDA_ERROR_INVALID_VALUE"):
        td.tensor_map(desc, "fp16", 0x10000, "argument 'x' of k",
                      Recorder("cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE"))
    assert not td._tensor_maps  # nothing cached


def test_nan_padding_of_integers_is_a_located_error():
    desc = TensorDescriptor(FakeBase(np.int32), [4, 8], [8, 1], [4, 8], padding="nan")
    with pytest.raises(TensorDescriptorError, match="padding 'nan' needs a floating-point"):
        td.tensor_map(desc, "i32", 0x10000, "argument 'x' of k", Recorder())


def test_the_knob_is_off_by_default_and_in_the_code_key(monkeypatch):
    from tk import _C

    monkeypatch.delenv("TK_TMA", raising=False)
    assert _C.knob("TK_TMA") is False or _C.knob("TK_TMA") == 0
    off = _C.code_knobs()
    monkeypatch.setenv("TK_TMA", "1")
    assert _C.code_knobs() != off and "tma=1" in _C.code_knobs()


@triton.jit
def warm_copy(src, dst, off, BM: tl.constexpr, BN: tl.constexpr):
    x = src.load([off, 0])
    dst.store([off, 0], x * 2.0)


def test_warmup_compiles_tma_without_a_driver(ptx_compile, monkeypatch):
    """warmup(...) of a descriptor kernel under TK_TMA=1 for sm_90a: the
    Python path's signature gets `,tma` (checked, no map encoded: nothing
    launches), the PTX loads and stores through TMA; TK_TMA=0 and sm_89 keep
    pointers; a block TMA cannot take is the located error."""
    from ptx_compile_util import CudaArray

    def descs(block):
        a, b = CudaArray(0x100000, "<f2"), CudaArray(0x200000, "<f2")
        return (TensorDescriptor(a, [45, 77], [80, 1], block),
                TensorDescriptor(b, [45, 77], [80, 1], block))

    monkeypatch.setenv("TK_ARCH", "sm_90a")
    monkeypatch.setenv("TK_TMA", "1")
    k = warm_copy.warmup(*descs([16, 32]), 3, 16, 32, grid=(1,))
    assert ",tma>" in k.signature
    ptx = k.asm["ptx"]
    assert ".param .align 64 .b8 warm_copy_param_4[128]" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx
    with pytest.raises(TensorDescriptorError, match="argument 'src' of warm_copy: block_shape "
                       r"\[16, 4\]: TMA needs the innermost block dimension"):
        warm_copy.warmup(*descs([16, 4]), 3, 16, 4, grid=(1,))
    monkeypatch.setenv("TK_TMA", "0")
    assert "cp.async.bulk" not in warm_copy.warmup(*descs([16, 32]), 3, 16, 32,
                                                   grid=(1,)).asm["ptx"]
    monkeypatch.setenv("TK_TMA", "1")
    monkeypatch.setenv("TK_ARCH", "sm_89")
    k = warm_copy.warmup(*descs([16, 32]), 3, 16, 32, grid=(1,))
    assert ",tma" not in k.signature and "cp.async.bulk" not in k.asm["ptx"]


# --- on the GPU


@triton.jit
def tile_copy(in_desc, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, SHIFT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BM - SHIFT, pid_n * BN])
    rows = pid_m * BM + tl.arange(0, BM)[:, None]
    cols = pid_n * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + rows * N + cols, x, mask=(rows < M) & (cols < N))


def _padded(torch, m, n, dtype):
    """An (m, n) view of row-major storage with 16-byte multiple rows."""
    per16 = 16 // torch.empty((), dtype=dtype).element_size()
    pad = -(-n // per16) * per16
    if dtype.is_floating_point:
        base = torch.randn((m, pad), device="cuda").to(dtype)
    else:
        base = torch.randint(-100, 100, (m, pad), device="cuda", dtype=dtype)
    return base, pad


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["float16", "float32", "bfloat16", "int8"])
@pytest.mark.parametrize("m,n,bm,bn,shift", [(45, 77, 16, 32, 0), (33, 200, 32, 64, 0),
                                             (70, 96, 64, 32, 5)])
def test_tma_loads_match_torch_on_ragged_shapes(monkeypatch, dtype_name, m, n, bm, bn, shift):
    import torch

    monkeypatch.setenv("TK_TMA", "1")
    dtype = getattr(torch, dtype_name)
    base, pad = _padded(torch, m, n, dtype)
    if bn * base.element_size() % 16:
        bn = 16 // base.element_size()
    desc = TensorDescriptor(base, [m, n], [pad, 1], [bm, bn])
    out = torch.full((m, n), 7, device="cuda", dtype=dtype)
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    k = tile_copy[grid](desc, out, m, n, bm, bn, shift)
    assert "cp.async.bulk.tensor.2d" in k.asm["ptx"]
    # Row r of the output holds row r - shift of the input: zeros above the
    # tensor (negative coordinates), and the columns past n are the fill.
    want = torch.zeros((m, n), device="cuda", dtype=dtype)
    want[shift:] = base[:m - shift, :n]
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.gpu
def test_nan_padding_fills_outside_the_tensor(monkeypatch):
    import torch

    monkeypatch.setenv("TK_TMA", "1")
    m, n = 20, 24
    base, pad = _padded(torch, m, n, torch.float32)
    desc = TensorDescriptor(base, [m, n], [pad, 1], [16, 16], padding="nan")
    out = torch.zeros((32, 32), device="cuda", dtype=torch.float32)
    tile_copy[(2, 2)](desc, out, 32, 32, 16, 16, 0)
    got = out.cpu()
    torch.testing.assert_close(got[:m, :n], base[:, :n].cpu())
    assert torch.isnan(got[m:, :]).all() and torch.isnan(got[:, n:]).all()


@triton.jit
def desc_scale(in_desc, out_desc, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x * alpha)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["float16", "float32"])
@pytest.mark.parametrize("m,n,bm,bn", [(45, 77, 16, 32), (130, 40, 64, 16)])
def test_tma_stores_write_only_inside_the_tensor(monkeypatch, dtype_name, m, n, bm, bn):
    import torch

    monkeypatch.setenv("TK_TMA", "1")
    dtype = getattr(torch, dtype_name)
    x, pad = _padded(torch, m, n, dtype)
    y = torch.full((m, pad), 9, device="cuda", dtype=dtype)
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    k = desc_scale[grid](TensorDescriptor(x, [m, n], [pad, 1], [bm, bn]),
                         TensorDescriptor(y, [m, n], [pad, 1], [bm, bn]), 1.5, bm, bn)
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in k.asm["ptx"]
    torch.testing.assert_close(y[:, :n], (x[:, :n].float() * 1.5).to(dtype))
    assert (y[:, n:] == 9).all()  # nothing stored past the descriptor's shape


@triton.jit
def desc_matmul(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    rows = pid_m * BM + tl.arange(0, BM)[:, None]
    cols = pid_n * BN + tl.arange(0, BN)[None, :]
    tl.store(c_ptr + rows * N + cols, acc, mask=(rows < M) & (cols < N))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_descriptor_matmul_matches_torch(monkeypatch, dtype_name):
    import torch

    monkeypatch.setenv("TK_TMA", "1")
    dtype = getattr(torch, dtype_name)
    M, N, K = 300, 200, 184
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((K, N), device="cuda").to(dtype)
    c = torch.empty((M, N), device="cuda", dtype=torch.float32)
    BM, BN, BK = 64, 64, 32
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK])
    b_desc = TensorDescriptor.from_tensor(b, [BK, BN])
    k = desc_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_desc, b_desc, c, M, N, K, BM, BN,
                                                               BK)
    assert "cp.async.bulk.tensor.2d" in k.asm["ptx"]
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=2e-2, atol=2e-2)
