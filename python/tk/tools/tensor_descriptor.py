"""tk.tools.tensor_descriptor: Triton's host-side `TensorDescriptor`.

    desc = TensorDescriptor.from_tensor(x, block_shape=[64, 64])
    kernel[grid](desc, ...)          # in the kernel: desc.load([i, j]), desc.store(...)

A descriptor is made, checked and inspected as in Triton (base, shape,
strides, block_shape, padding), and passed to a kernel as an argument. The
kernel sees the same tensor descriptor `tk.make_tensor_descriptor` makes: the
launch passes the base pointer, the sizes and the strides, and the signature
entry `tensordesc<fp16[64,64]>` names the element type and the block shape,
read at each launch (an autotuner's pre_hook may set `block_shape` after the
descriptor was made). Loads and stores through it are masked pointer
arithmetic (docs/python.md), except under TK_TMA=1 on sm_90 and above: the
launch then also passes the descriptor's CUtensorMap (`tensor_map`, encoded
with the driver's cuTensorMapEncodeTiled and cached per base, shape,
strides, block and padding) and loads and stores go through TMA
(docs/codegen/tma.md).

The checks are Triton's (a base aligned to 16 bytes, every stride but the
last a multiple of 16 bytes, the last stride 1, rank 1 to 5, padding "zero"
or "nan"); a failed one raises TensorDescriptorError, which is both the
ValueError tk raises for bad arguments and the AssertionError Triton's
asserts raise.
"""


import numbers


class TensorDescriptorError(ValueError, AssertionError):
    """A TensorDescriptor that breaks one of the rules above."""


def _elem_bytes(dtype):
    itemsize = getattr(dtype, "itemsize", None)  # torch and numpy dtypes
    if isinstance(itemsize, int):
        return itemsize
    bits = getattr(dtype, "primitive_bitwidth", None)  # tk dtypes (a TensorWrapper's)
    if isinstance(bits, int):
        return max(1, bits // 8)
    import numpy

    return numpy.dtype(dtype).itemsize


def _base_address(base):
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(base, attr, None)
        if isinstance(interface, dict) and isinstance(interface.get("data"), tuple):
            return int(interface["data"][0])
    return None


class TensorDescriptor:
    """A description of a tiled view of a tensor: the base tensor, its shape
    and strides (the last stride must be 1) and the block each load reads."""

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base = base
        self.shape = list(shape)
        self.strides = list(strides)
        self.block_shape = list(block_shape)
        self.padding = padding
        self.validate("TensorDescriptor")

    def validate(self, where):
        """Raises TensorDescriptorError, its message starting with `where`,
        unless the descriptor keeps Triton's rules. Made descriptors are
        checked again at each launch (the launch names the argument), since a
        pre_hook may have changed them since."""

        def bad(what):
            raise TensorDescriptorError(f"{where}: {what}")

        shape, strides, block = list(self.shape), list(self.strides), list(self.block_shape)
        rank = len(shape)
        if not (len(strides) == rank == len(block)):
            bad(f"shape {shape}, strides {strides} and block_shape {block} must have the same "
                "rank")
        if rank < 1 or rank > 5:
            bad(f"rank {rank} is not from 1 to 5")
        for b in block:
            if not isinstance(b, numbers.Integral) or b < 1 or b & (b - 1):
                bad(f"block_shape {block} must be powers of two")
        for n in shape:
            if not isinstance(n, numbers.Integral) or not 0 <= n < 2**31:
                bad(f"shape {shape} must be ints from 0 to 2**31 - 1")
        if strides[-1] != 1:
            bad(f"the last stride must be 1, not {strides[-1]}")
        if self.padding not in ("zero", "nan"):
            bad(f"padding must be 'zero' or 'nan', not {self.padding!r}")
        address = _base_address(self.base)
        if address is not None and address % 16:
            bad(f"the base address {address:#x} is not 16-byte aligned")
        dtype = getattr(self.base, "dtype", None)
        size = _elem_bytes(dtype) if dtype is not None else 1
        for stride in strides[:-1]:
            if not isinstance(stride, numbers.Integral) or stride < 0 or (stride * size) % 16:
                bad(f"strides {strides} must be non-negative ints, each but the last a multiple "
                    f"of 16 bytes ({size}-byte elements)")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """The descriptor of all of `tensor` (its shape and strides)."""
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")


# CUtensorMapDataType (cuda.h) of each dtype name of a signature entry; i1
# has none (bool blocks load through pointers).
_TMA_DATA_TYPES = {
    "u8": 0, "i8": 0, "fp8e4nv": 0, "fp8e5": 0, "fp8e4b15": 0,
    "u16": 1, "i16": 1, "u32": 2, "i32": 3, "u64": 4, "i64": 5,
    "fp16": 6, "fp32": 7, "fp64": 8, "bf16": 9,
}
_TMA_ELEMENT_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2}

_tensor_maps = {}  # (address, data type, shape, strides, block, padding) -> bytes
_MAX_CACHED_MAPS = 4096


def tma_data_type(dtype_name):
    """The CUtensorMapDataType of a signature dtype name, None when TMA cannot
    move it (i1)."""
    return _TMA_DATA_TYPES.get(dtype_name)


def tma_check(desc, dtype_name, where):
    """Raises TensorDescriptorError, naming the rule, unless TMA can load
    `desc`'s blocks: every block dimension at most 256 elements, the
    innermost block row a multiple of 16 bytes, every stride but the last a
    multiple of 16 bytes below 2**40 bytes, sizes below 2**32."""
    size = _TMA_ELEMENT_BYTES[_TMA_DATA_TYPES[dtype_name]]
    block = [int(b) for b in desc.block_shape]
    for b in block:
        if b > 256:
            raise TensorDescriptorError(
                f"{where}: block_shape {block}: TMA takes at most 256 elements per block "
                "dimension")
    if (block[-1] * size) % 16:
        raise TensorDescriptorError(
            f"{where}: block_shape {block}: TMA needs the innermost block dimension to span a "
            f"multiple of 16 bytes ({block[-1]} x {size}-byte elements is {block[-1] * size})")
    for stride in desc.strides[:-1]:
        if int(stride) * size % 16 or int(stride) * size >= 2**40:
            raise TensorDescriptorError(
                f"{where}: strides {list(desc.strides)}: TMA needs every stride but the last to "
                f"be a multiple of 16 bytes below 2**40 ({size}-byte elements)")


def tensor_map(desc, dtype_name, address, where, encode):
    """The 128 bytes of `desc`'s CUtensorMap (tma_check first), made by
    `encode(data_type, address, dims, strides, box, oob_fill)` (the driver's
    cuTensorMapEncodeTiled: dimensions innermost first, strides in bytes)
    once per base address, shape, strides, block and padding."""
    data_type = _TMA_DATA_TYPES[dtype_name]
    key = (int(address), data_type, tuple(int(n) for n in desc.shape),
           tuple(int(s) for s in desc.strides), tuple(int(b) for b in desc.block_shape),
           desc.padding)
    found = _tensor_maps.get(key)
    if found is not None:
        return found
    tma_check(desc, dtype_name, where)
    size = _TMA_ELEMENT_BYTES[data_type]
    dims = [int(n) for n in reversed(desc.shape)]
    strides = [int(s) * size for s in reversed(desc.strides[:-1])]
    box = [int(b) for b in reversed(desc.block_shape)]
    nan = desc.padding == "nan"
    if nan and dtype_name not in ("fp16", "bf16", "fp32", "fp64"):
        raise TensorDescriptorError(f"{where}: padding 'nan' needs a floating-point tensor")
    encoded, error = encode(data_type, int(address), dims, strides, box, 1 if nan else 0)
    if encoded is None:
        raise TensorDescriptorError(f"{where}: cuTensorMapEncodeTiled refused the descriptor "
                                    f"{desc!r}: {error}")
    if len(_tensor_maps) >= _MAX_CACHED_MAPS:
        _tensor_maps.clear()
    _tensor_maps[key] = encoded
    return encoded
