"""Triton's objects in a kernel's globals, read as their tk counterparts.

A program ported by its import lines hands the front end tk's modules. Code
that still imports Triton and is called from a tk kernel hands it Triton's
objects instead: torch Inductor's `triton_helpers` (`@triton.jit` helpers
reading `tl`, `libdevice`, `tl.constexpr` globals), a helper library, an
Inductor kernel given to `tk.jit`. Each such object stands for the tk object
of the same name, the porting rule applied to objects rather than to import
lines:

- the module `triton` is `tk`, `triton.X` is `tk.X` (`triton.language.math`
  is `tk.language.math`);
- a `@triton.jit` function of `triton.language` (Triton writes `tl.sum`,
  `tl.max`, ... that way) is tk's builtin of that name; any other is a tk
  helper compiled from the same Python function;
- a `tl.constexpr` is its value, a Triton dtype the tk dtype of its name.

Nothing here imports Triton: objects are recognised by their modules' names,
so a process without Triton never gets here.
"""

import importlib
import sys
import types

_PORTED = {}  # the Python function of a @triton.jit function -> its tk JITFunction


def _from_triton_module(name):
    return name == "triton" or name.startswith("triton.")


def _tk_module(name):
    """The tk module of a Triton module's name, or None when tk has none."""
    tk_name = "tk" + name[len("triton"):]
    module = sys.modules.get(tk_name)
    if module is not None:
        return module
    try:
        return importlib.import_module(tk_name)
    except ImportError:
        return None


def is_triton_object(value):
    """Whether `value` is one of Triton's modules, functions or values."""
    if isinstance(value, types.ModuleType):
        return _from_triton_module(value.__name__)
    return _from_triton_module(type(value).__module__ or "")


def is_triton_class(cls):
    """Whether a class is one of Triton's (its `tl.constexpr`)."""
    return _from_triton_module(getattr(cls, "__module__", "") or "")


def to_tk(value):
    """The tk counterpart of a Triton object (see the module docstring), or
    `value` itself when it is not Triton's or tk has no counterpart (the front
    end then says what the kernel may read)."""
    if not is_triton_object(value):
        return value
    if isinstance(value, types.ModuleType):
        module = _tk_module(value.__name__)
        return value if module is None else module
    kind = type(value).__name__
    if kind == "constexpr":
        return to_tk(getattr(value, "value", value))
    if kind in ("dtype", "pointer_type", "block_type") and hasattr(value, "name"):
        import tk

        try:
            return tk.dtype(str(value.name))
        except (TypeError, ValueError):
            return value
    fn = getattr(value, "fn", None)
    if isinstance(fn, types.FunctionType):
        return _ported_function(value, fn)
    return value


def _ported_function(value, fn):
    """A @triton.jit function as tk sees it: a builtin of tk.language for
    Triton's own (`triton.language.standard.sum`), else a tk JITFunction of
    the same Python function, made once per function."""
    module = fn.__module__ or ""
    if _from_triton_module(module):
        tk_module = _tk_module(module)
        builtin = getattr(tk_module, fn.__name__, None) if tk_module is not None else None
        if builtin is None:
            import tk

            builtin = getattr(tk, fn.__name__, None)
        return value if builtin is None else builtin
    ported = _PORTED.get(fn)
    if ported is None:
        from .jit import JITFunction

        ported = JITFunction(
            fn,
            do_not_specialize=getattr(value, "do_not_specialize", None) or (),
            noinline=getattr(value, "noinline", None),
        )
        _PORTED[fn] = ported
    return ported
