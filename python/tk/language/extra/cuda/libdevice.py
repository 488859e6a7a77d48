"""tk.language.extra.cuda.libdevice: the same functions as
tk.language.extra.libdevice (Triton's `extra.cuda.libdevice`)."""

from ... import _namespace

globals().update(_namespace.compiler_names("libdevice"))
__getattr__ = _namespace.missing(__name__, "this libdevice function is not in tk yet")
