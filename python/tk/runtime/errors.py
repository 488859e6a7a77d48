"""tk.runtime.errors: the errors of a launch, where Triton keeps them
(`from triton.runtime.errors import InterpreterError` ports to tk.runtime.errors).
They are tk.errors' classes, so `except tk.InterpreterError` catches them too."""

from ..errors import DriverError, InterpreterError, OutOfResources, TritonError

__all__ = ["DriverError", "InterpreterError", "OutOfResources", "TritonError"]
