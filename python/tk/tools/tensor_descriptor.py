"""tk.tools.tensor_descriptor: Triton's host-side `TensorDescriptor`.

    desc = TensorDescriptor.from_tensor(x, block_shape=[64, 64])

A descriptor can be made and inspected as in Triton (base, shape, strides,
block_shape, padding), so programs that build them at module level or in an
autotuner's pre_hook run. Passing one to a kernel is not supported yet: the
device side (tensor descriptors lowered to TMA) is a later issue's, and the
launch raises a TypeError that says so and names the argument. Until then,
pass the tensor and index it with a tensor of pointers.
"""


class TensorDescriptor:
    """A description of a tiled view of a tensor: the base tensor, its shape
    and strides (the last stride must be 1) and the block each load reads."""

    _tk_unsupported_argument = (
        "tensor descriptors (tk.tools.tensor_descriptor.TensorDescriptor) are not supported "
        "yet as kernel arguments; pass the tensor itself and load through a tensor of pointers"
    )

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base = base
        self.shape = list(shape)
        self.strides = list(strides)
        self.block_shape = list(block_shape)
        self.padding = padding
        rank = len(self.shape)
        if not (len(self.strides) == rank == len(self.block_shape)):
            raise ValueError(
                f"TensorDescriptor: shape {self.shape}, strides {self.strides} and block_shape "
                f"{self.block_shape} must have the same rank"
            )
        if rank < 1 or rank > 5:
            raise ValueError(f"TensorDescriptor: rank {rank} is not from 1 to 5")
        if self.strides[-1] != 1:
            raise ValueError(f"TensorDescriptor: the last stride must be 1, not {self.strides[-1]}")
        if padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', not {padding!r}")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """The descriptor of all of `tensor` (its shape and strides)."""
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")
