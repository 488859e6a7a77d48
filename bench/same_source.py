"""One kernel source, two compilers: loads a Python file written against
`import tk` either as is or with the name `tk` bound to a namespace of
Triton's (triton.language plus triton.jit, autotune, Config, heuristics,
cdiv, next_power_of_2), so that tk and Triton compile the same text. A file
that loads another source through `import tk` at import time (tutorial 13's
.py loading its .tk) gets the same binding for that one too.

    mod_tk = load(path, "tk")
    mod_triton = load(path, "triton")
"""
import importlib.util
import os
import sys
import types


def triton_namespace():
    """A module named tk holding Triton's language and decorators."""
    import triton
    import triton.language as tl

    ns = types.ModuleType("tk")
    for name in dir(tl):
        if not name.startswith("__"):
            setattr(ns, name, getattr(tl, name))
    for name in ("jit", "autotune", "Config", "heuristics", "next_power_of_2"):
        setattr(ns, name, getattr(triton, name))
    ns.cdiv = _host_callable(tl.cdiv, lambda x, y: (x + y - 1) // y)
    return ns


def _host_callable(jit_fn, host):
    """`jit_fn` (a Triton @jit function such as tl.cdiv) that a kernel still
    inlines but that host code may call too, as `host` (tk.cdiv works in both
    places, and sources written for tk use it in both)."""
    import copy

    class HostCallable(type(jit_fn)):
        def __call__(self, *args, **kwargs):
            return host(*args, **kwargs)

    fn = copy.copy(jit_fn)
    fn.__class__ = HostCallable
    return fn


def load(path, backend, prefix="same_source"):
    """The module of the source file at `path`, its kernels compiled by
    `backend` ("tk" or "triton")."""
    if backend not in ("tk", "triton"):
        raise ValueError(f"same_source.load: backend {backend!r} is not 'tk' or 'triton'")
    saved = sys.modules.get("tk")
    if backend == "triton":
        sys.modules["tk"] = triton_namespace()
    try:
        stem = os.path.basename(str(path)).rsplit(".", 1)[0].replace("-", "_")
        spec = importlib.util.spec_from_file_location(f"{prefix}_{backend}_{stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        if backend == "triton":
            if saved is None:
                del sys.modules["tk"]
            else:
                sys.modules["tk"] = saved
    return mod
