"""Submodules of tk.language whose names are compiler builtins (tk.language.math,
tk.language.extra.libdevice, ...): `fill(module_globals, names)` binds each
name the compiler has, and `missing(module_name, what)` is the module's
__getattr__ for the others, an AttributeError that says the name is Triton's
and not tk's yet (rather than a bare "no attribute")."""

from . import core


def compiler_names(prefix):
    """{short name: placeholder} of the builtins named PREFIX.NAME in the
    compiler's table (lang/Builtins.def)."""
    out = {}
    for name, kind, signature, summary in core.builtin_table():
        if name.startswith(prefix + "."):
            out[name[len(prefix) + 1:]] = core.Builtin(name, kind, signature, summary)
    return out


def missing(module_name, what):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"module '{module_name}' has no attribute '{name}': {what}")

    return __getattr__
