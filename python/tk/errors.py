"""The exceptions tk raises.

Every message is meant to be acted on: a CompilationError carries the
rendered diagnostics (file:line:col into your own .py file, the source line
and a caret), an InterpreterError what the CPU interpreter caught (an
out-of-bounds access names the element, the address and the nearest buffer).
"""


class CompilationError(Exception):
    """A kernel failed to compile; str(e) is the rendered diagnostics."""

    def __init__(self, message, kernel=None):
        super().__init__(message.rstrip("\n"))
        self.kernel = kernel


class InterpreterError(RuntimeError):
    """A kernel run in the interpreter stopped: out-of-bounds or uninitialised
    memory, a failed tk.device_assert, the step budget."""

    def __init__(self, message, kernel=None):
        super().__init__(message.rstrip("\n"))
        self.kernel = kernel


class DriverError(RuntimeError):
    """A GPU launch is not possible here (no CUDA driver, or not built yet)."""


class OutOfResources(Exception):
    """A kernel needs more of a GPU resource than the device has."""

    def __init__(self, required, limit, name):
        super().__init__(f"out of resource: {name}; required: {required}, hardware limit: {limit}")
        self.required = required
        self.limit = limit
        self.name = name
