"""tk kernels as torch operators (docs/torch.md).

    @tk.library.custom_op("mylib::scale", fake=lambda x, w: torch.empty_like(x))
    def scale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        scale_kernel[(tk.cdiv(x.numel(), 1024),)](x, w, out, x.numel(), BLOCK=1024)
        return out

The function launching tk kernels becomes a torch operator through
`torch.library.custom_op`: torch.compile treats it as one opaque node (no
graph break, its shapes from `fake`), CUDA graph capture records the kernels
it launches on torch's current stream, and `backward` (with `setup_context`)
makes it differentiable, as `torch.library.register_autograd` defines them.
"""

import importlib


def _torch():
    try:
        return importlib.import_module("torch")
    except ImportError as e:
        raise ImportError("tk.library.custom_op needs torch (pip install torch)") from e


def custom_op(name, fn=None, *, mutates_args=(), fake=None, backward=None, setup_context=None,
              device_types=None, schema=None):
    """Registers `fn`, a Python function that launches tk kernels, as the torch
    operator `name` ("namespace::op"), and returns torch's op object (call it
    like `fn`; `torch.ops.namespace.op` is the same operator).

    - `fake(*args)` returns tensors of the outputs' shapes, dtypes and devices
      without computing them (torch's fake/meta implementation); torch.compile
      needs it for an op that returns tensors.
    - `backward(ctx, *grads)` and `setup_context(ctx, inputs, output)` make the
      op differentiable (torch.library.register_autograd); `backward` may
      itself call tk kernels or other custom ops.
    - `mutates_args`, `device_types` and `schema` are torch.library.custom_op's.

    Used as a decorator (`@tk.library.custom_op("lib::op", fake=...)`) or
    called with the function."""
    torch = _torch()
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(f"tk.library.custom_op: the name must be 'namespace::op', not {name!r}")
    if setup_context is not None and backward is None:
        raise ValueError(
            f"tk.library.custom_op('{name}'): setup_context= is given without backward=")

    def register(function):
        if not callable(function):
            raise TypeError(
                f"tk.library.custom_op('{name}') decorates a function, not "
                f"{type(function).__name__}")
        op = torch.library.custom_op(name, mutates_args=mutates_args, device_types=device_types,
                                     schema=schema)(function)
        if fake is not None:
            op.register_fake(fake)
        if backward is not None:
            op.register_autograd(backward, setup_context=setup_context)
        return op

    return register if fn is None else register(fn)
