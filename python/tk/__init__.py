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
"""

import sys as _sys

try:
    from . import _C
except ImportError as _e:
    raise ImportError(
        "tk's compiled extension tk._C cannot be loaded; build it with "
        "`ninja -C build tk_python` and put build/python on PYTHONPATH, or `pip install .` "
        "(docs/python.md)"
    ) from _e
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .core import DTYPES as _DTYPES
from .core import Builtin as _Builtin
from .core import builtin_table as _builtin_table
from .core import cdiv, constexpr, dtype, next_power_of_2
from .errors import CompilationError, DriverError, InterpreterError, OutOfResources
from .runtime import CompiledKernel, JITFunction, KernelInterface, jit
from . import testing
from . import _driver
from . import runtime as _runtime

# Triton's `triton.runtime.driver.active` (the tutorials' DEVICE and device
# properties) is `tk.runtime.driver.active` (python/tk/_driver.py).
_runtime.driver = _driver.driver

__version__ = _C.__version__

# The dtypes, under both spellings: tk.float16 and tk.fp16 are one object.
for _short, _dt in _DTYPES.items():
    globals()[_dt.name] = _dt
    globals()[_short] = _dt

# Every other name the compiler knows (tk.load, tk.arange, tk.sum, ...): a
# placeholder that raises when called outside a kernel.
for _name, _kind, _signature, _summary in _builtin_table():
    if _name not in globals():
        globals()[_name] = _Builtin(_name, _kind, _signature, _summary)

# Triton's `import triton.language as tl` becomes `import tk.language as tl`
# (or `import tk as tl`): both name this module.
language = _sys.modules[__name__]
_sys.modules[__name__ + ".language"] = language

del _short, _dt, _name, _kind, _signature, _summary
