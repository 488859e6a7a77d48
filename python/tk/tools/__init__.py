"""tk.tools: Triton's `triton.tools` (`tensor_descriptor`)."""

from . import tensor_descriptor  # noqa: F401
