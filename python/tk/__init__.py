"""tk: a block-level GPU kernel language with Triton's names.

    import tk                     # or: import tk as tl

    @tk.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        mask = offs < n
        x = tk.load(x_ptr + offs, mask=mask)
        tk.store(out_ptr + offs, x + tk.load(y_ptr + offs, mask=mask), mask=mask)

    add_kernel[(tk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

With TK_INTERPRET=1 (or @tk.jit(interpret=True)) kernels run on the CPU
interpreter, on numpy arrays, with bounds checking. docs/python.md has the
whole story.

A Triton program ports by changing its import lines (docs/python.md,
"Porting from Triton"): `import tk as triton`, `import tk.language as tl`,
`from tk.X import Y` for Triton's modules `language` (with `core`, `math`,
`extra.libdevice`, `extra.cuda.libdevice`), `runtime` (`jit`, `errors`,
`driver`, `_allocation`), `testing`, `tools.tensor_descriptor`, `knobs` and
`profiler`.
"""

try:
    from . import _C
except ImportError as _e:
    raise ImportError(
        "tk's compiled extension tk._C cannot be loaded; build it with "
        "`ninja -C build tk_python` and put build/python on PYTHONPATH, or `pip install .` "
        "(docs/python.md)"
    ) from _e

from . import language
from .errors import (
    CheckError,
    CompilationError,
    DriverError,
    InterpreterError,
    OutOfResources,
    TritonError,
)
from . import runtime
from .runtime.jit import (
    CompiledKernel,
    JITFunction,
    KernelInterface,
    TensorWrapper,
    jit,
    reinterpret,
)
from .runtime._allocation import set_allocator
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from . import testing
from . import knobs
from . import tools
from . import library

__version__ = _C.__version__

# `from triton._C.libtriton import nvidia` (tutorial 09's cuBLAS) ports as
# `from tk._C.libtriton import nvidia`: tk._C is an extension module, so its
# submodule is registered by name (tk/_libtriton.py).
import sys as _sys
from . import _libtriton

_C.libtriton = _libtriton
_sys.modules[__name__ + "._C.libtriton"] = _libtriton
del _sys

# The language's names (tk.load, tk.float16, tk.constexpr, ...) are tk's own:
# `import tk as tl` and `import tk.language as tl` give the same objects.
for _name, _value in vars(language).items():
    if not _name.startswith("__") and _name not in globals():
        globals()[_name] = _value
del _name, _value


def __getattr__(name):
    # tk.profiler imports on first use (it needs torch); `import tk.profiler`
    # works as usual.
    if name == "profiler":
        import importlib

        return importlib.import_module(".profiler", __name__)
    raise AttributeError(f"module 'tk' has no attribute '{name}'")
