"""tk.runtime._allocation: Triton's global scratch allocator
(`triton.set_allocator(fn)`, `NullAllocator`).

Triton kernels that need global scratch memory (on-device tensor
descriptors, some profiling) get it from the allocator set here: a callable
`alloc_fn(size: int, alignment: int, stream: int | None)` returning a buffer
(a torch tensor). tk keeps the allocator a program sets, so the tutorials'
and tests' `set_allocator` calls work, and `get_allocator()` returns it; the
compiler asks for no scratch memory yet (tensor descriptors on the device are
not supported), so nothing calls it. `NullAllocator`, the default, raises
when called, as Triton's does.
"""

import contextvars


class Allocator:
    """The protocol: `allocator(size, alignment, stream)` -> a buffer."""

    def __call__(self, size, alignment, stream):
        raise NotImplementedError


class NullAllocator(Allocator):
    """The default: a kernel that needs scratch memory fails, saying to set one."""

    def __call__(self, size, alignment, stream):
        raise RuntimeError(
            f"a kernel asked for {size} bytes of global scratch memory and no allocator is "
            "set: call tk.set_allocator(fn) with fn(size, alignment, stream) returning a buffer"
        )


_allocator = contextvars.ContextVar("_allocator", default=NullAllocator())


def set_allocator(allocator):
    """Sets the allocator of global scratch memory (this context's: a
    contextvar, as in Triton)."""
    if not callable(allocator):
        raise TypeError(f"set_allocator takes a callable (size, alignment, stream), not "
                        f"{type(allocator).__name__}")
    _allocator.set(allocator)


def get_allocator():
    return _allocator.get()
