"""tk.language.extra.cuda.libdevice: the same functions as
tk.language.extra.libdevice (Triton's `extra.cuda.libdevice`), the same
objects."""

from ... import _namespace
from .. import libdevice as _libdevice

globals().update(
    {name: getattr(_libdevice, name) for name in _namespace.compiler_names("libdevice")}
)
__getattr__ = _namespace.missing(__name__, "this libdevice function is not in tk yet")
