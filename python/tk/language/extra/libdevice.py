"""tk.language.extra.libdevice: the CUDA libdevice functions, by Triton's names
(`from tk.language.extra import libdevice; libdevice.asin(x)`).

The functions are compiler builtins named `libdevice.NAME` (lang/Builtins.def);
each one the compiler has is bound here. tk.language.extra.cuda.libdevice has
the same objects.
"""

from .. import _namespace

globals().update(_namespace.compiler_names("libdevice"))
__getattr__ = _namespace.missing(__name__, "this libdevice function is not in tk yet")
