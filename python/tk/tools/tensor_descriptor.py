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
arithmetic on every target (docs/python.md); TMA is not used yet.

The checks are Triton's (a base aligned to 16 bytes, every stride but the
last a multiple of 16 bytes, the last stride 1, rank 1 to 5, padding "zero"
or "nan"); a failed one raises TensorDescriptorError, which is both the
ValueError tk raises for bad arguments and the AssertionError Triton's
asserts raise.
"""


class TensorDescriptorError(ValueError, AssertionError):
    """A TensorDescriptor that breaks one of the rules above."""


def _elem_bytes(dtype):
    itemsize = getattr(dtype, "itemsize", None)
    if isinstance(itemsize, int):
        return itemsize
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
        rank = len(self.shape)
        if not (len(self.strides) == rank == len(self.block_shape)):
            raise TensorDescriptorError(
                f"TensorDescriptor: shape {self.shape}, strides {self.strides} and block_shape "
                f"{self.block_shape} must have the same rank"
            )
        if rank < 1 or rank > 5:
            raise TensorDescriptorError(f"TensorDescriptor: rank {rank} is not from 1 to 5")
        if self.strides[-1] != 1:
            raise TensorDescriptorError(
                f"TensorDescriptor: the last stride must be 1, not {self.strides[-1]}")
        if padding not in ("zero", "nan"):
            raise TensorDescriptorError(
                f"TensorDescriptor: padding must be 'zero' or 'nan', not {padding!r}")
        address = _base_address(base)
        if address is not None and address % 16:
            raise TensorDescriptorError(
                f"TensorDescriptor: the base address {address:#x} is not 16-byte aligned")
        dtype = getattr(base, "dtype", None)
        if dtype is not None:
            size = _elem_bytes(dtype)
            for stride in self.strides[:-1]:
                if (stride * size) % 16:
                    raise TensorDescriptorError(
                        f"TensorDescriptor: stride {stride} of {size}-byte elements is not a "
                        f"multiple of 16 bytes (strides {self.strides})"
                    )

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """The descriptor of all of `tensor` (its shape and strides)."""
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")
