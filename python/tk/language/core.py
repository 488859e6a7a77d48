"""The names of the tk module that are not @tk.jit itself: dtypes,
tk.constexpr, host helpers (cdiv, next_power_of_2) and the builtins.

The builtins (tk.load, tk.arange, ...) only mean something inside a kernel,
where the C++ front end compiles them; here they are placeholders a user can
reference (and read the docstring of) that raise when called, as in Triton.
Their list comes from the compiler's own table (lang/Builtins.def), so the
Python names and the compiler never disagree.
"""

import enum

from .. import _C

# Triton's dtype names (tl.dtype(name), dtype.name, str(dtype)), by kind, as
# Triton 3.6 lists them; int1 counts as unsigned there.
SINT_TYPES = ["int8", "int16", "int32", "int64"]
UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
OTHER_TYPES = ["void"]

# Per floating-point name: (bits, mantissa bits, exponent bias, Python spelling).
_FLOATS = {
    "fp8e4b15": (8, 3, 15, "float8e4b15"),
    "fp8e4nv": (8, 3, 7, "float8e4nv"),
    "fp8e4b8": (8, 3, 8, "float8e4b8"),
    "fp8e5": (8, 2, 15, "float8e5"),
    "fp8e5b16": (8, 2, 16, "float8e5b16"),
    "fp16": (16, 10, 15, "float16"),
    "bf16": (16, 7, 127, "bfloat16"),
    "fp32": (32, 23, 127, "float32"),
    "fp64": (64, 52, 1023, "float64"),
}


def _python_spelling(name):
    return _FLOATS[name][3] if name in _FLOATS else name


# The compiler's dtypes (lang/DTypes.def): Python spelling -> tk's short name
# (signature spelling: "i32", "fp16", "*bf16").
_COMPILER_DTYPES = {py: short for short, py, _bits, _f, _s in _C.dtypes()}


class dtype:
    """An element type, as Triton's tl.dtype: `tk.float16` (also `tk.fp16`),
    `tk.int32`, or `tk.dtype("int32")` by Triton's name (one object per name).

    `name` and `str()` are Triton's names ("int32", "fp16", "bf16"); the
    attributes and predicates are Triton's (`primitive_bitwidth`,
    `fp_mantissa_width`, `exponent_bias`, `int_bitwidth`, `is_fp16()`,
    `is_int_unsigned()`, ...). `SINT_TYPES`, `UINT_TYPES`, `FP_TYPES`,
    `STANDARD_FP_TYPES` and `OTHER_TYPES` list the names of each kind. A dtype
    the compiler has no type for (AMD's float8e4b8 and float8e5b16) exists
    here with its attributes; a kernel that uses it gets the compiler's error.
    """

    SINT_TYPES = SINT_TYPES
    UINT_TYPES = UINT_TYPES
    FP_TYPES = FP_TYPES
    STANDARD_FP_TYPES = STANDARD_FP_TYPES
    OTHER_TYPES = OTHER_TYPES

    class SIGNEDNESS:
        SIGNED = 0
        UNSIGNED = 1

    class KIND:
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    _instances = {}

    def __new__(cls, name):
        name = name.value if isinstance(name, constexpr) else name
        if cls is dtype:
            name = _CANONICAL.get(name, name)
            if name in dtype._instances:
                return dtype._instances[name]
        if not dtype.is_dtype(name) and cls is dtype:
            raise ValueError(
                f"tk.dtype({name!r}): not a dtype name; the names are "
                f"{', '.join(SINT_TYPES + UINT_TYPES + FP_TYPES + OTHER_TYPES)}"
            )
        self = super().__new__(cls)
        if cls is dtype:
            dtype._instances[name] = self
        return self

    def __init__(self, name):
        name = name.value if isinstance(name, constexpr) else name
        name = _CANONICAL.get(name, name)
        if getattr(self, "name", None) == name:
            return  # the one object of this name, already made
        self.name = name
        python = _python_spelling(name)
        self._tk_builtin_name = python
        self._tk_dtype_name = _COMPILER_DTYPES.get(python, name)
        if name in SINT_TYPES or name in UINT_TYPES:
            self.int_bitwidth = 1 if name == "int1" else int(name.lstrip("uint"))
            self.primitive_bitwidth = self.int_bitwidth
            self.int_signedness = (
                dtype.SIGNEDNESS.SIGNED if name in SINT_TYPES else dtype.SIGNEDNESS.UNSIGNED
            )
        elif name in FP_TYPES:
            bits, mantissa, bias, _ = _FLOATS[name]
            self.primitive_bitwidth = bits
            self.fp_mantissa_width = mantissa
            self.exponent_bias = bias
        else:  # void
            self.primitive_bitwidth = 0
        self.itemsize = self.primitive_bitwidth // 8

    # Kinds.
    @staticmethod
    def is_dtype(type_str):
        return type_str in SINT_TYPES + UINT_TYPES + FP_TYPES + OTHER_TYPES

    def is_floating(self):
        return self.name in FP_TYPES

    def is_standard_floating(self):
        return self.name in STANDARD_FP_TYPES

    def is_int_signed(self):
        return self.name in SINT_TYPES

    def is_int_unsigned(self):
        return self.name in UINT_TYPES

    def is_int(self):
        return self.name in SINT_TYPES + UINT_TYPES

    def is_bool(self):
        return self.name == "int1"

    def is_fp8(self):
        return self.name.startswith("fp8")

    def is_void(self):
        return self.name == "void"

    @staticmethod
    def is_block():
        return False

    @staticmethod
    def is_ptr():
        return False

    @staticmethod
    def is_const():
        return False

    def kind(self):
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        return dtype.KIND.INTEGRAL if self.is_int() else dtype.KIND.FLOATING

    def get_int_max_value(self):
        if self.is_int_signed():
            return 2 ** (self.int_bitwidth - 1) - 1
        if self.is_int_unsigned():
            return 2**self.int_bitwidth - 1
        raise TypeError(f"{self.name} is not an integer dtype")

    def get_int_min_value(self):
        if self.is_int_signed():
            return -(2 ** (self.int_bitwidth - 1))
        if self.is_int_unsigned():
            return 0
        raise TypeError(f"{self.name} is not an integer dtype")

    @property
    def scalar(self):
        return self

    def __repr__(self):
        return f"tk.{self._tk_builtin_name}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        other = other.value if isinstance(other, constexpr) else other
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


# One predicate per name, as Triton has them: is_fp16(), is_int8(), is_uint32(), ...
def _predicate(name):
    return lambda self: self.name == name


for _n in SINT_TYPES + UINT_TYPES + FP_TYPES:
    setattr(dtype, f"is_{_n}", _predicate(_n))
del _n

# Other spellings tk.dtype(...) takes: Python's (float16, bfloat16) and tk's
# short ones (i32, u8, i1).
_CANONICAL = {}
for _name in SINT_TYPES + UINT_TYPES + FP_TYPES:
    _CANONICAL[_python_spelling(_name)] = _name
    if _name.startswith(("int", "uint")):
        _CANONICAL[_name.replace("uint", "u").replace("int", "i")] = _name
del _name


class pointer_type(dtype):
    """Triton's pointer type as a host value (`tk.pi32_t`, a pointer to int32):
    `element_ty`, `is_ptr()`, `is_const()`. In a kernel `x.to(tk.pointer_type(
    tk.float16))` is the compiler's."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, element_ty, address_space=1, const=False):
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.name = f"pointer<{element_ty}>" if not const else f"const_pointer<{element_ty}>"
        self._tk_builtin_name = "pointer_type"
        self.primitive_bitwidth = 64
        self.itemsize = 8

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    def is_floating(self):
        return False

    def is_int(self):
        return False

    def __repr__(self):
        return f"tk.pointer_type({self.element_ty!r})"

    def __eq__(self, other):
        return (
            isinstance(other, pointer_type)
            and other.element_ty == self.element_ty
            and other.address_space == self.address_space
            and other.const == self.const
        )

    def __hash__(self):
        return hash((self.name, self.address_space))


class const:
    """The annotation of a pointer parameter whose data the kernel only reads
    (`in_ptr: tk.const`), as in Triton."""

    _tk_builtin_name = "const"


class constexpr:
    """Marks a kernel parameter as a compile-time value (`BLOCK: tk.constexpr`),
    or wraps a global's value (`BLOCK = tk.constexpr(128)`) as Triton does."""

    _tk_builtin_name = "constexpr"

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self):
        return hash(self.value)


class constexpr_type:
    """The type of a compile-time value (Triton's `constexpr_type(5)`)."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"constexpr_type[{self.value}]"


def cdiv(x, y):
    """Ceiling division: cdiv(1000, 256) == 4."""
    return (x + y - 1) // y


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), as the compiler folds it."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def get_int_dtype(bitwidth, signed):
    """The integer dtype of `bitwidth` bits (1, 8, 16, 32, 64) and the
    signedness `signed` (int1 for 1 bit), as Triton's core.get_int_dtype; in
    a kernel the compiler folds it (`tl.core.get_int_dtype(x.dtype.primitive_bitwidth,
    signed=True)`)."""
    bitwidth = bitwidth.value if isinstance(bitwidth, constexpr) else bitwidth
    signed = signed.value if isinstance(signed, constexpr) else signed
    if bitwidth == 1:
        return ALL_DTYPES["int1"]
    if bitwidth in (8, 16, 32, 64):
        return ALL_DTYPES[f"{'' if signed else 'u'}int{bitwidth}"]
    raise ValueError(f"get_int_dtype: no integer dtype of {bitwidth} bits (1, 8, 16, 32 or 64)")


cdiv._tk_builtin_name = "cdiv"
constexpr_type._tk_builtin_name = "constexpr_type"
get_int_dtype._tk_builtin_name = "core.get_int_dtype"
next_power_of_2._tk_builtin_name = "next_power_of_2"


class Builtin:
    """A tk builtin seen from host code: referenceable, documented, and an
    error to call outside a kernel."""

    def __init__(self, name, kind, signature, summary):
        self._tk_builtin_name = name
        self.__name__ = name
        self.__qualname__ = name
        self.kind = kind
        self.signature = signature
        self.__doc__ = f"{signature}\n\n{summary}" if signature else summary

    def __call__(self, *args, **kwargs):
        if self.kind == "unsupported":
            raise NotImplementedError(f"tk.{self.__name__} is not supported: {self.__doc__}")
        raise RuntimeError(
            f"tk.{self.__name__} can only be called inside a @tk.jit kernel "
            "(launch the kernel as kernel[grid](...))"
        )

    def __repr__(self):
        return f"<tk builtin {self.signature or self.__name__}>"


def builtin_table():
    """(name, kind, signature, summary) for every tk.NAME the compiler knows."""
    return _C.builtins()


# tk's short name -> its dtype (the compiler's dtypes, each once).
DTYPES = {short: dtype(_CANONICAL.get(py, py)) for short, py, _b, _f, _s in _C.dtypes()}

# Every Triton dtype, by its Python spelling (float16, float8e4nv, int1, ...).
ALL_DTYPES = {_python_spelling(n): dtype(n) for n in SINT_TYPES + UINT_TYPES + FP_TYPES}
ALL_DTYPES["void"] = dtype("void")

pi32_t = pointer_type(ALL_DTYPES["int32"])


def _enums():
    """The language's enums (tk.PropagateNan), from the compiler's table: each
    an IntEnum whose members are the constants a kernel sees, so
    tk.PropagateNan.ALL passes to a kernel as a constexpr too."""
    members = {}
    for owner, name, value, _summary in _C.enum_members():
        members.setdefault(owner, {})[name] = value
    out = {}
    for owner, values in members.items():
        e = enum.IntEnum(owner, values, module="tk.language")
        e._tk_builtin_name = owner
        out[owner] = e
    return out


ENUMS = _enums()
