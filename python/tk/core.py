"""The names of the tk module that are not @tk.jit itself: dtypes,
tk.constexpr, host helpers (cdiv, next_power_of_2) and the builtins.

The builtins (tk.load, tk.arange, ...) only mean something inside a kernel,
where the C++ front end compiles them; here they are placeholders a user can
reference (and read the docstring of) that raise when called, as in Triton.
Their list comes from the compiler's own table (lang/Builtins.def), so the
Python names and the compiler never disagree.
"""

from . import _C


class dtype:
    """A tk element type: tk.float16 (also tk.fp16), tk.int32, ..."""

    def __init__(self, short_name, python_name, bits, is_float, is_signed):
        self._tk_dtype_name = short_name
        self._tk_builtin_name = python_name
        self.name = python_name
        self.primitive_bitwidth = bits
        self._is_float = is_float
        self._is_signed = is_signed

    def is_floating(self):
        return self._is_float

    def is_int(self):
        return not self._is_float

    def is_int_signed(self):
        return self._is_signed

    def is_int_unsigned(self):
        return not self._is_float and not self._is_signed and self.primitive_bitwidth > 1

    def __repr__(self):
        return f"tk.{self.name}"

    def __str__(self):
        return self._tk_dtype_name

    def __eq__(self, other):
        return isinstance(other, dtype) and other._tk_dtype_name == self._tk_dtype_name

    def __hash__(self):
        return hash(self._tk_dtype_name)


# One object per dtype, reachable under both spellings (float16 and fp16).
DTYPES = {}
for _short, _py, _bits, _is_float, _is_signed in _C.dtypes():
    DTYPES[_short] = dtype(_short, _py, _bits, _is_float, _is_signed)


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


def cdiv(x, y):
    """Ceiling division: cdiv(1000, 256) == 4."""
    return (x + y - 1) // y


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), as the compiler folds it."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


cdiv._tk_builtin_name = "cdiv"
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
