"""TK_CHECK=1: every GPU launch checked against the interpreter.

    TK_CHECK=1 python3 my_script.py

With the knob set, each `kernel[grid](...)` on the GPU (the C++ launcher
routes it here: python/src/GpuLauncher.h) does this:

1. binds and compiles as any launch does (the kernel is the one a plain
   launch would run), and compiles the same source, signature and constexprs
   for the interpreter once per compiled kernel;
2. copies every buffer the launch's pointers reach (a torch tensor's
   storage, a __cuda_array_interface__ view's span) to the host, once the
   device is idle;
3. launches on the GPU, waits for it and copies back the buffers the kernel
   may store to (analysis/StoredArguments.h);
4. runs a sample of the grid's programs (all of them up to 64, else 64 spread
   over the grid, the first and the last among them) on the interpreter on
   the first copies, logging every element their stores write, and compares
   each of those elements with the GPU's within the tolerance of its dtype
   (python/src/LaunchCheck.h has the table).

The first element that differs raises tk.CheckError, rendered at the store
that wrote it: the program, the element's index from the argument's
pointer, both values, and the tolerance it broke. The GPU's results stay in
the caller's tensors either way. A passing check leaves its summary in the
CompiledKernel's `last_check` (one line of text).

Launches made by the autotuner while it times configs are not checked (their
timings would measure the check); the launches after it are.
"""

import contextlib
import threading

from . import _C
from .errors import CheckError, InterpreterError

_local = threading.local()


@contextlib.contextmanager
def suspended():
    """Launches inside are not checked (the autotuner's timed launches)."""
    depth = getattr(_local, "suspended", 0)
    _local.suspended = depth + 1
    try:
        yield
    finally:
        _local.suspended = depth


def _memory(name, value, kernel_name):
    """(lowest device address, byte span, offset of the data pointer) of a
    GPU array argument: what TK_CHECK copies."""
    from .runtime.jit import _interface_memory

    storage = getattr(value, "untyped_storage", None)
    if callable(storage) and hasattr(value, "data_ptr"):
        s = storage()
        base = int(s.data_ptr())
        return base, int(s.nbytes()), int(value.data_ptr()) - base
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        base, _, span, offset = _interface_memory(name, kernel_name, cai, cuda=True)
        return base, span, offset
    raise CheckError(
        f"TK_CHECK: argument '{name}' of {kernel_name} is a {type(value).__name__}, whose memory "
        "tk cannot size (it reads torch tensors' storage and __cuda_array_interface__); pass "
        "one of those, or unset TK_CHECK",
        kernel=kernel_name,
    )


def _reference(jit, kernel, closure):
    """The interpreter compile of `kernel` (a GPU CompiledKernel): the same
    sources, signature and constexprs, made once."""
    ref = getattr(kernel, "_check_reference", None)
    if ref is None:
        # A `tma` descriptor loads through pointers on the interpreter.
        signature = kernel.signature.replace(",tma>", ">")
        ref = jit._compile(closure, signature, kernel.constants, kernel._options, None)
        kernel._check_reference = ref
    return ref


def checked_launch(jit, grid, args, kwargs):
    """One GPU launch of `jit` under TK_CHECK=1 (see the module docstring);
    returns the CompiledKernel, as a launch does."""
    import numpy as np

    from .runtime.jit import _argument_array, _gpu_array_info

    if getattr(_local, "suspended", 0):
        return jit._launcher.call_unchecked(grid, args, kwargs)
    name = jit.__name__
    kernel, run_args, values, launch, closure = jit._prepare(args, dict(kwargs), gpu=True)
    kernel._load()
    g = grid(dict(values, **launch)) if callable(grid) else grid
    dims = _C.grid_dims(g, name)
    if 0 in dims:
        return jit._launcher.call_unchecked(grid, args, kwargs)
    ref = _reference(jit, kernel, closure)
    stored = kernel._compiled.stored_arguments
    # One host copy per distinct span: arguments that alias share it.
    copies, interp_args, spans = {}, [], []
    for i, (arg_name, arg) in enumerate(zip(kernel._compiled.argument_names, run_args)):
        if arg[0] == "m":  # a CUtensorMap: the reference has no such argument
            continue
        if arg[0] != "g":
            interp_args.append(arg)
            spans.append(None)
            continue
        value = _argument_array(values, arg_name)
        dt, _ = _gpu_array_info(arg_name, value, name)
        base, span, offset = _memory(arg_name, value, name)
        key = (base, span)
        if key not in copies:
            before = np.empty(max(span, 1), np.uint8)
            if span:
                _C._copy_from_device(before.ctypes.data, base, span)
            copies[key] = before
        before = copies[key]
        interp_args.append(("p", before.ctypes.data, span, offset, dt, arg_name, False))
        spans.append((key, i < len(stored) and stored[i]))
    # The interpreter's run writes into the copies, so the GPU's results go
    # to buffers of their own.
    result = jit._launcher.call_unchecked(grid, args, kwargs)
    after, gpu_after = {}, []
    for entry in spans:
        if entry is None or not entry[1]:
            gpu_after.append(0)
            continue
        (base, span), _ = entry
        if (base, span) not in after:
            buf = np.empty(max(span, 1), np.uint8)
            if span:
                _C._copy_from_device(buf.ctypes.data, base, span)
            after[(base, span)] = buf
        gpu_after.append(after[(base, span)].ctypes.data)
    max_steps = _C.knob("TK_INTERPRET_MAX_STEPS")
    max_memory = _C.knob("TK_INTERPRET_MAX_MEMORY")
    _, report, outcome = ref._compiled.check(interp_args, gpu_after, dims, max_steps, max_memory)
    # The copies stay alive until the check has read them.
    del copies, after
    if outcome == "mismatch":
        raise CheckError(report, kernel=name)
    if outcome in ("failed", "argument"):
        raise InterpreterError(
            f"TK_CHECK: the interpreter's run of the launch of {name} failed:\n{report}",
            kernel=name,
        )
    kernel.last_check = report
    return result
