"""The exceptions tk raises.

Every message is meant to be acted on: a CompilationError carries the
rendered diagnostics (file:line:col into your own .py file, the source line
and a caret), an InterpreterError what the CPU interpreter caught (an
out-of-bounds access names the element, the address and the nearest buffer).
"""

import re


class TritonError(Exception):
    """The base of every error tk raises about a kernel (Triton's name, so
    `except triton.TritonError` keeps working with the imports changed)."""


class CompilationError(TritonError):
    """A kernel failed to compile; str(e) is the rendered diagnostics.
    `error_message` is the first error's text without its location, source
    line and caret (Triton's attribute of the same name), or None when the
    text has no "error: " line."""

    def __init__(self, message, kernel=None):
        super().__init__(message.rstrip("\n"))
        self.kernel = kernel
        self.error_message = _first_error(message)
        # Triton chains the front end's own exception as the cause, and
        # programs (test_core) read the first error from str(e.__cause__).
        if self.error_message is not None:
            self.__cause__ = CompilationErrorCause(self.error_message)


class CompilationErrorCause(TritonError):
    """The `__cause__` of a CompilationError: its first error's text
    (`error_message`), where Triton puts the exception its front end raised."""


def _first_error(text):
    for line in text.splitlines():
        m = re.match(r"(?:.*?:\d+:\d+: )?error: (.*)", line)
        if m:
            return m.group(1)
    return None


class InterpreterError(TritonError, RuntimeError):
    """A kernel run in the interpreter stopped: out-of-bounds or uninitialised
    memory, a failed tk.device_assert, the step budget."""

    def __init__(self, message, kernel=None):
        super().__init__(message.rstrip("\n"))
        self.kernel = kernel


class InterpretedCompilationError(CompilationError, InterpreterError):
    """A kernel failed to compile for the CPU interpreter (TK_INTERPRET=1).
    Both a CompilationError and an InterpreterError: Triton's interpreter
    has no compile step and reports the same front-end errors as
    InterpreterError while it runs, so a ported `pytest.raises` of either
    catches it."""


class CheckError(TritonError, RuntimeError):
    """TK_CHECK=1: a GPU launch stored a value the interpreter does not, on
    copies of the same inputs. str(e) is rendered at the store that wrote
    the element: the program, the element, both values, the tolerance."""

    def __init__(self, message, kernel=None):
        super().__init__(message.rstrip("\n"))
        self.kernel = kernel


class DriverError(TritonError, RuntimeError):
    """A GPU launch failed or cannot happen here: no CUDA driver or device, a
    module the driver cannot load (the JIT's log included), a failed
    cuLaunchKernel (the CUDA error)."""


class OutOfResources(TritonError):
    """A kernel needs more of a GPU resource than the device has. Triton's
    signature (required, limit, name); `resource` and `needed` are the same
    facts under the names issue 6 uses."""

    def __init__(self, required, limit, name):
        super().__init__(f"out of resource: {name}; required: {required}, hardware limit: {limit}")
        self.required = self.needed = required
        self.limit = limit
        self.name = self.resource = name
