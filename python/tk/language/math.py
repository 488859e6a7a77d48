"""tk.language.math: Triton's math module (`tl.math.exp2(x)` is `tl.exp2(x)`).

Each name is the same object as tk.language's; Triton's math names tk does
not have yet raise an AttributeError that says so.
"""

from . import _namespace

# Triton 3.6's triton.language.math.
_TRITON_NAMES = ("abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma",
                 "log", "log2", "rsqrt", "sin", "sqrt", "sqrt_rn", "umulhi")


def _bind():
    from .. import language

    for name in _TRITON_NAMES:
        value = getattr(language, name, None)
        if value is not None and getattr(value, "kind", None) != "unsupported":
            globals()[name] = value
    globals().update(_namespace.compiler_names("math"))


_bind()
__getattr__ = _namespace.missing(__name__, "Triton's math function is not in tk yet")
