"""tk.language.extra.cuda: `libdevice` and the CUDA-only helpers Triton has
there (globaltimer, smid, num_threads, ...), those the compiler has as
builtins named `cuda.NAME`."""

from ... import _namespace
from . import libdevice  # noqa: F401

globals().update(_namespace.compiler_names("cuda"))
__getattr__ = _namespace.missing(__name__, "this CUDA helper is not in tk yet")
