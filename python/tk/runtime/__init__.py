"""tk.runtime: the JIT and what a launch needs, where Triton keeps them.

    from tk.runtime import driver                        # triton.runtime.driver
    from tk.runtime.jit import JITFunction, reinterpret, TensorWrapper
    from tk.runtime.errors import InterpreterError, OutOfResources
    from tk.runtime._allocation import set_allocator, NullAllocator

`jit` (JITFunction, CompiledKernel, the launch path), `driver` (device
queries, python/tk/runtime/driver.py), `errors` and `_allocation` are
submodules, as in Triton; the autotuner's names are re-exported here too.
"""

from . import _allocation, errors, jit
from .driver import driver
from .errors import DriverError, InterpreterError, OutOfResources
from .jit import (
    CompiledKernel,
    JITFunction,
    KernelInterface,
    TensorWrapper,
    _Closure,
    _env_flag,
    _FunctionSource,
    cuda_driver_available,
    interpret_mode,
    reinterpret,
    target_arch,
)
from ..autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: E402
