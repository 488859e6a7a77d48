"""tk.language: the kernel language's names, as `triton.language` has them.

    import tk.language as tl          # Triton's `import triton.language as tl`
    import tk as tl                   # the same names: tk re-exports this module

Every builtin the compiler knows (tk.load, tk.arange, tk.sum, ...) is here as
a placeholder that documents itself and raises when called outside a kernel
(the compiler's own table, lang/Builtins.def, so the two never disagree);
the dtypes under both spellings (tk.float16 and tk.fp16 are one object), and
Triton's host-side names: `dtype` (with `SINT_TYPES` and friends),
`pointer_type`, `pi32_t`, `const`, `constexpr`, `str_to_ty`, and the
submodules `core`, `math` and `extra` (`extra.libdevice`,
`extra.cuda.libdevice`).
"""

from . import core
from .core import (
    ALL_DTYPES as _ALL_DTYPES,
    DTYPES as _DTYPES,
    ENUMS as _ENUMS,
    Builtin as _Builtin,
    builtin_table as _builtin_table,
    cdiv,
    const,
    constexpr,
    constexpr_type,
    dtype,
    next_power_of_2,
    pi32_t,
    pointer_type,
)

# The dtypes: every Triton dtype under its Python spelling (float16,
# float8e4nv, int1), and the compiler's under tk's short one too (fp16, i32).
for _py, _dt in _ALL_DTYPES.items():
    globals()[_py] = _dt
for _short, _dt in _DTYPES.items():
    globals()[_short] = _dt
void = _ALL_DTYPES["void"]

# Triton's names of the signature spellings (str_to_ty): "*fp16", "i32",
# "u1", "constexpr".
_SIGNATURE_NAMES = {
    "fp8e4nv": "float8e4nv", "fp8e4b8": "float8e4b8", "fp8e5": "float8e5",
    "fp8e5b16": "float8e5b16", "fp8e4b15": "float8e4b15", "fp16": "float16", "bf16": "bfloat16",
    "fp32": "float32", "fp64": "float64", "i1": "int1", "u1": "int1", "B": "int1", "i8": "int8",
    "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "void": "void",
}


def str_to_ty(name, c=None):
    """The dtype a signature string names, as Triton's: "fp16" -> tk.float16,
    "*i32" -> pointer_type(tk.int32), "*ki32" a const pointer, "constexpr" ->
    constexpr_type(c), a tuple of names -> a tuple of types."""
    if isinstance(name, tuple):
        return tuple(str_to_ty(n, c) for n in name)
    if name.startswith("*"):
        const_pointer = name.startswith("*k")
        return pointer_type(str_to_ty(name[2 if const_pointer else 1:], c), const=const_pointer)
    if name.startswith("constexpr"):
        return constexpr_type(c)
    if name not in _SIGNATURE_NAMES:
        raise KeyError(
            f"str_to_ty: {name!r} is not a type name (one of {', '.join(_SIGNATURE_NAMES)}, "
            "'*' before a pointer's element type, or 'constexpr')"
        )
    return _ALL_DTYPES[_SIGNATURE_NAMES[name]]


# The enums (PropagateNan), members as the compiler numbers them.
globals().update(_ENUMS)

# Every other name the compiler knows: a placeholder that raises when called
# outside a kernel. `math`, `extra` and `language` are modules here (the front
# end resolves `tl.math.exp2` and the other dotted names itself).
for _name, _kind, _signature, _summary in _builtin_table():
    if "." not in _name and _name not in globals() and _name not in (
        "math", "extra", "language", "core", "standard"
    ):
        globals()[_name] = _Builtin(_name, _kind, _signature, _summary)

from . import math  # noqa: E402  (after the builtins: it picks them up)
from . import standard  # noqa: E402
from . import extra  # noqa: E402

del _py, _dt, _short, _name, _kind, _signature, _summary
