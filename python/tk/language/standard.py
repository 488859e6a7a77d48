"""tk.language.standard: Triton's triton.language.standard, for the helpers
programs import from it by name (`from triton.language.standard import
_log2`, as torch Inductor's sort helpers do). Each is usable on the host and,
folded by the compiler, in a kernel on compile-time values."""

from .core import constexpr


def _log2(i):
    """The base-2 logarithm of a positive integer, rounded down (Triton's
    `_log2`, on compile-time values): _log2(64) == 6."""
    n = i.value if isinstance(i, constexpr) else i
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"_log2 needs a positive integer, got {n!r}")
    return constexpr(n.bit_length() - 1)


_log2._tk_builtin_name = "standard._log2"
