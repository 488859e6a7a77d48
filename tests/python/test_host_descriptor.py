"""Host tensor descriptors (tk.tools.tensor_descriptor.TensorDescriptor) as
kernel arguments, written as a Triton user writes them: made on the host,
loaded and stored through in the kernel (desc.load / desc.store), chosen
between a descriptor argument and a pointer by isinstance(x,
tl.tensor_descriptor), their block shape set by an autotuner's pre_hook; on
the interpreter and (marked `gpu`) on the GPU, against numpy on random data
whose shapes are not multiples of the block; and the located errors of bad
descriptors."""

import numpy as np
import pytest

import tk
import tk as triton
import tk.language as tl
from tk.tools.tensor_descriptor import TensorDescriptor, TensorDescriptorError
from lang_compat_util import DEVICES

RNG = np.random.default_rng(7)


def to_device(a, device):
    """`a` as the kernel takes it on `device`: the numpy array itself on the
    interpreter, a CUDA torch tensor on the GPU."""
    if device == "interp":
        return a
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def to_numpy(t):
    if isinstance(t, np.ndarray):
        return t
    import torch

    torch.cuda.synchronize()
    return t.cpu().numpy()


def descriptor(t, block_shape, padding="zero"):
    """TensorDescriptor.from_tensor for torch tensors, and the same by hand
    for numpy arrays (strides in elements)."""
    if isinstance(t, np.ndarray):
        strides = [s // t.itemsize for s in t.strides]
        return TensorDescriptor(t, list(t.shape), strides, block_shape, padding)
    return TensorDescriptor.from_tensor(t, block_shape, padding)


@triton.jit
def scale_copy(in_desc, out_desc, M, N, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x * alpha)


def storage(m, n, fill=None):
    """An (m, n) fp32 view of row-major storage whose rows are 16-byte
    multiples (as descriptors need), the padding columns set to 9."""
    pad = -(-n // 4) * 4
    base = np.full((m, pad), 9.0, np.float32)
    base[:, :n] = RNG.standard_normal((m, n)) if fill is None else fill
    return base


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m,n,bm,bn", [(45, 77, 16, 32), (33, 24, 32, 8), (8, 64, 8, 64)])
def test_load_store_ragged(device, m, n, bm, bn):
    x, y = storage(m, n), storage(m, n, 3.25)
    xd, yd = to_device(x, device), to_device(y, device)
    pad = x.shape[1]
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    scale_copy[grid](TensorDescriptor(xd, [m, n], [pad, 1], [bm, bn]),
                     TensorDescriptor(yd, [m, n], [pad, 1], [bm, bn]), m, n, 1.5, bm, bn)
    got = to_numpy(yd)
    np.testing.assert_allclose(got[:, :n], x[:, :n] * 1.5, rtol=1e-6)
    assert (got[:, n:] == 9.0).all()  # nothing stored past the descriptor's shape


@triton.jit
def window_kernel(in_desc, out_ptr, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr):
    x = in_desc.load([off_m, off_n])
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(out_ptr + rows * BN + cols, x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding,fill", [("zero", 0.0), ("nan", np.nan)])
def test_padding_at_the_edge(device, padding, fill):
    m, n, bm, bn = 27, 41, 16, 16
    x = storage(m, n)
    out = np.full((bm, bn), 5.0, np.float32)
    xd, od = to_device(x, device), to_device(out, device)
    desc = TensorDescriptor(xd, [m, n], [x.shape[1], 1], [bm, bn], padding)
    window_kernel[(1,)](desc, od, 20, 30, bm, bn)
    expect = np.full((bm, bn), fill, np.float32)
    expect[: m - 20, : n - 30] = x[20:, 30:n]
    np.testing.assert_array_equal(to_numpy(od), expect)


@triton.jit
def _desc_or_make(x, M, N, BM: tl.constexpr, BN: tl.constexpr):
    if isinstance(x, tl.tensor_descriptor):
        return x
    else:
        return tl.make_tensor_descriptor(x, [M, N], [N, 1], [BM, BN])


@triton.jit
def either_kernel(x, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = _desc_or_make(x, M, N, BM, BN)
    pid = tl.program_id(0)
    v = d.load([pid * BM, 0])
    offs = pid * BM + tl.arange(0, BM)
    # one row sum per row of the block
    tl.store(out_ptr + offs, tl.sum(v, axis=1), mask=offs < M)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("as_descriptor", [True, False])
def test_isinstance_chooses_the_path(device, as_descriptor):
    m, n, bm, bn = 50, 32, 16, 32  # a block as wide as the rows: the sums are whole
    x = RNG.standard_normal((m, n)).astype(np.float32)
    out = np.zeros(m, np.float32)
    xd, od = to_device(x, device), to_device(out, device)
    arg = descriptor(xd, [bm, bn]) if as_descriptor else xd
    either_kernel[(triton.cdiv(m, bm),)](arg, od, m, n, bm, bn)
    np.testing.assert_allclose(to_numpy(od), x.sum(axis=1), rtol=1e-5, atol=1e-5)


@triton.jit
def isinstance_kernel(x_ptr, out_ptr, K: tl.constexpr):
    v = tl.load(x_ptr)
    a = isinstance(v, tl.tensor)
    b = isinstance(K, int)
    c = isinstance(K, (float, tl.tensor))
    d = isinstance(2.5, float)
    e = isinstance(v, tl.tensor_descriptor)
    tl.store(out_ptr, a * 1 + b * 2 + c * 4 + d * 8 + e * 16)


def test_isinstance_values():
    out = np.zeros(1, np.int32)
    isinstance_kernel[(1,)](np.ones(1, np.float32), out, 3)
    assert out[0] == 1 + 2 + 8


@triton.autotune(
    configs=[triton.Config({"BM": 16, "BN": 16}), triton.Config({"BM": 32, "BN": 8})],
    key=["M", "N"],
    pre_hook=None,
)
@triton.jit
def tuned_copy(in_desc, out_desc, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    out_desc.store([pid_m * BM, pid_n * BN], in_desc.load([pid_m * BM, pid_n * BN]) + 1.0)


def _set_blocks(nargs):
    # What tutorial 06's pre_hook does: the block shape follows the config.
    nargs["in_desc"].block_shape = [nargs["BM"], nargs["BN"]]
    nargs["out_desc"].block_shape = [nargs["BM"], nargs["BN"]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("timed", [False, True])
def test_pre_hook_sets_block_shape(device, timed, monkeypatch):
    # timed: the interpreter times the configs too (TK_AUTOTUNE_INTERPRET=1),
    # so the tuner's output check restores and compares what each config
    # stores through the descriptors, as it does on the GPU.
    if timed:
        monkeypatch.setenv("TK_AUTOTUNE_INTERPRET", "1")
    m, n = (37, 29) if not timed else (41, 27)  # 32-column storage: rows of 16-byte multiples
    for config in tuned_copy.configs:
        config.pre_hook = _set_blocks
    x = np.zeros((m, 32), np.float32)
    x[:, :n] = RNG.standard_normal((m, n))
    xd, yd = to_device(x, device), to_device(np.zeros((m, 32), np.float32), device)
    in_desc = TensorDescriptor(xd, [m, n], [32, 1], [1, 1])
    out_desc = TensorDescriptor(yd, [m, n], [32, 1], [1, 1])

    def grid(meta):
        return (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))

    tuned_copy[grid](in_desc, out_desc, m, n)
    got = to_numpy(yd)
    np.testing.assert_allclose(got[:, :n], x[:, :n] + 1.0, rtol=1e-6)
    assert (got[:, n:] == 0).all()
    assert in_desc.block_shape in ([16, 16], [32, 8])


def test_descriptor_host_checks():
    x = np.zeros((8, 10), np.float32)  # a row of 40 bytes is not a multiple of 16
    with pytest.raises(TensorDescriptorError, match="multiple of 16 bytes"):
        TensorDescriptor(x, [8, 10], [10, 1], [8, 8])
    with pytest.raises(AssertionError):  # what Triton's asserts raise
        TensorDescriptor(x, [8, 10], [10, 2], [8, 8])
    with pytest.raises(ValueError, match="same rank"):
        TensorDescriptor(x, [8, 10], [10, 1], [8])
    with pytest.raises(TensorDescriptorError, match="padding"):
        TensorDescriptor(np.zeros((8, 16), np.float32), [8, 16], [16, 1], [8, 8], "inf")


def test_bad_block_shape_at_construction_and_at_launch():
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(TensorDescriptorError, match="TensorDescriptor: block_shape .* powers of two"):
        TensorDescriptor(x, [16, 16], [16, 1], [16, 12])
    # A pre_hook may change a made descriptor; the launch checks it again and
    # names the argument.
    d = TensorDescriptor(x, [16, 16], [16, 1], [16, 16])
    d.block_shape = [16, 12]
    y = np.zeros((16, 16), np.float32)
    with pytest.raises(TensorDescriptorError, match="argument 'in_desc' of scale_copy: block_shape"):
        scale_copy[(1, 1)](d, TensorDescriptor(y, [16, 16], [16, 1], [16, 16]), 16, 16, 1.0,
                           16, 16)


@triton.jit
def rank_mismatch(in_desc):
    in_desc.load([0])


def test_rank_mismatch_is_located():
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(tk.CompilationError) as e:
        rank_mismatch[(1,)](TensorDescriptor(x, [16, 16], [16, 1], [16, 16]))
    assert "offsets has 1 elements but the tensor descriptor is 2-D" in str(e.value)
    assert "test_host_descriptor.py:" in str(e.value)


def test_signature_spelling():
    x = np.zeros((16, 16), np.float16)
    y = np.zeros((24, 8), np.float16)
    k = scale_copy.warmup(TensorDescriptor(x, [16, 16], [16, 1], [8, 16], "nan"),
                          TensorDescriptor(y, [24, 8], [8, 1], [8, 16]), 16, 16, 1.0, 8, 16,
                          grid=(1,))
    # the sizes' divisibility by 16, as integer arguments are specialised
    assert k.signature.startswith("tensordesc<fp16[8,16]{16,16},nan>, tensordesc<fp16[8,16]{1,1}>")
    # the base, the sizes and the first stride of each descriptor
    assert "%arg0: ptr<fp16> {divisibility = 16}, %arg1: i32 {divisibility = 16}" in k.asm["ir"]


@triton.jit(do_not_specialize=["out_desc"])
def copy_unspecialized(in_desc, out_desc):
    out_desc.store([0, 0], in_desc.load([0, 0]))


def test_do_not_specialize_drops_the_sizes_facts():
    x = np.zeros((16, 16), np.float16)
    k = copy_unspecialized.warmup(TensorDescriptor(x, [16, 16], [16, 1], [16, 16]),
                                  TensorDescriptor(x, [16, 16], [16, 1], [16, 16]), grid=(1,))
    assert k.signature == "tensordesc<fp16[16,16]{16,16}>, tensordesc<fp16[16,16]>"
