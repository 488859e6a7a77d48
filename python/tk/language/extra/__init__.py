"""tk.language.extra: Triton's `extra` namespace: `libdevice` (the backend's
device library, which Triton's `extra.libdevice` dispatches to) and `cuda`
(`extra.cuda.libdevice` and the CUDA-only helpers)."""

from . import cuda, libdevice  # noqa: F401
