"""@tk.jit and kernel[grid](...): from a Python function to a launched kernel.

    @tk.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        mask = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask), mask=mask)

    add_kernel[(tk.cdiv(n, 256),)](x, y, out, n, BLOCK=256)   # TK_INTERPRET=1: on numpy arrays

At a launch, the arguments are bound to the parameters and each one that is
not a tk.constexpr is specialised by the rule every launch path shares
(compiler/ArgSpecialization.h, docs/semantics.md): an array becomes a pointer
to its dtype ("*fp32", plus ":16" when its address is 16-byte aligned), an int
becomes "i32" or "i64" by range (":1" when equal to 1, else ":16" when
divisible by 16, else ":8" when divisible by 8), a float "fp32", a bool "i1",
None a constant. The C++ front end then compiles the function's own source
(inspect.getsource, with its file and first line, so errors point into your
.py file) together with the sources of the @tk.jit helpers it reaches through
its globals and the values of the plain globals it reads (ints, floats, bools,
strings, dtypes). There is no second front end in Python: this file only
gathers those inputs.

The compiled kernel is cached in memory under everything that went into it:
the signature, the constexpr values, every source text and global value, the
options. A second launch with the same key does not compile; a changed helper
or global does.
"""

import abc
import collections
import ctypes
import linecache
import numbers
import os
import re
import sys
import textwrap
import threading
import types

from .. import _C
from . import _triton_objects
from ..errors import (CompilationError, DriverError, InterpretedCompilationError, InterpreterError,
                      OutOfResources)
from ..language.core import Builtin, constexpr, dtype
from ..tools import tensor_descriptor as _tensor_descriptor
from ..tools.tensor_descriptor import TensorDescriptor, TensorDescriptorError

# Launch options Triton accepts as keyword arguments; they are not kernel
# parameters. The interpreter ignores them; they are part of the cache key.
# The C++ launcher's own list first (the ones its fast path binds and keys
# on), then those that send a launch to the Python path.
LAUNCH_OPTIONS = tuple(_C.launch_options()) + ("extern_libs", "arch", "target")

# The decorator that replaces the user's own decorators in the text given to
# the compiler (see _FunctionSource), imported under a name no user writes.
_JIT_NAME = "_tk_jit_"

_COMPILER_DTYPE_NAMES = {short for short, *_ in _C.dtypes()}

_NUMPY_KINDS = {
    "f2": "fp16",
    "f4": "fp32",
    "f8": "fp64",
    "i1": "i8",
    "i2": "i16",
    "i4": "i32",
    "i8": "i64",
    "u1": "u8",
    "u2": "u16",
    "u4": "u32",
    "u8": "u64",
    "b1": "i1",
}

_TORCH_DTYPES = {
    "torch.float16": "fp16",
    "torch.bfloat16": "bf16",
    "torch.float32": "fp32",
    "torch.float64": "fp64",
    "torch.int8": "i8",
    "torch.int16": "i16",
    "torch.int32": "i32",
    "torch.int64": "i64",
    "torch.uint8": "u8",
    "torch.uint16": "u16",
    "torch.uint32": "u32",
    "torch.uint64": "u64",
    "torch.bool": "i1",
    "torch.float8_e4m3fn": "fp8e4nv",
    "torch.float8_e5m2": "fp8e5",
}


def _env_flag(name):
    """A boolean TK_ knob, parsed by the knob table's one rule (support/Knobs.def);
    a value it does not take raises ValueError naming the variable."""
    return _C.knob(name)


def _bool_option(name, value, kernel_name, default):
    """A True/False launch option (enable_fp_fusion, enable_reflect_ftz):
    `default()` when not given."""
    if value is None:
        value = default()
    if not isinstance(value, (bool, int)):
        raise ValueError(f"{name} of {kernel_name} must be True or False, not {value!r}")
    return bool(value)


def _default_fp_fusion():
    """tk.knobs.language.default_fp_fusion (True unless set)."""
    from .. import knobs

    return knobs.language.default_fp_fusion


def _code_knobs():
    """The knobs that change generated code (TK_LLVM_OPT, TK_WGMMA_*, ...) as
    they are now: part of the key of every GPU compile, so a kernel compiled
    under other values is compiled again rather than reused."""
    try:
        return _C.code_knobs()
    except ValueError as e:
        raise CompilationError(f"error: {e}") from None


def interpret_mode(jit_function=None):
    """Whether launches run on the CPU interpreter: @tk.jit(interpret=...) when
    given, else TK_INTERPRET, read at every launch."""
    if jit_function is not None and jit_function.interpret is not None:
        return bool(jit_function.interpret)
    return _env_flag("TK_INTERPRET")


_cuda_driver = None


def cuda_driver_available():
    """Whether libcuda can be loaded (looked up once per process)."""
    global _cuda_driver
    if _cuda_driver is None:
        _cuda_driver = False
        for name in ("libcuda.so.1", "libcuda.so"):
            try:
                ctypes.CDLL(name)
                _cuda_driver = True
                break
            except OSError:
                pass
    return _cuda_driver


#
# The text handed to the compiler
#


class _FunctionSource:
    """A function's source as the compiler receives it.

    The text is dedented (a kernel defined inside a function or class then
    reports columns relative to its `def`). Its decorators (@tk.jit(...),
    @tk.autotune(configs=[...]), @tk.heuristics({...: lambda ...})) were
    applied by Python already and may hold Python the kernel language does not
    have, so each decorator line becomes an empty line and the one above `def`
    a plain jit decorator: line numbers stay those of the user's file.
    """

    def __init__(self, fn, given=None):
        """`given`: (file name, text, line of its first line) of a function
        whose text is not where inspect finds it (made by exec, or replaced
        through JITFunction._unsafe_update_src)."""
        import inspect

        name = getattr(fn, "__qualname__", repr(fn))
        if given is not None:
            file_name, text, first_line = given
            lines = text.splitlines(keepends=True)
        else:
            try:
                lines, first_line = inspect.getsourcelines(fn)
                file_name = inspect.getsourcefile(fn) or fn.__code__.co_filename
            except (OSError, TypeError) as e:
                raise CompilationError(
                    f"error: cannot read the source of '{name}' ({e}); a @tk.jit function must "
                    "be defined in a .py file, in text registered with linecache, or by exec() "
                    "of a string the caller of exec() holds in a variable"
                ) from None
        lines = textwrap.dedent("".join(lines)).splitlines(keepends=True)
        def_line = re.compile(r"(async\s+)?def\s+" + re.escape(fn.__name__) + r"\s*\(")
        index = next((i for i, line in enumerate(lines) if def_line.match(line)), None)
        if index is None:
            raise CompilationError(
                f"error: cannot find 'def {fn.__name__}(' in the source of '{name}' "
                f"({file_name}:{first_line})"
            )
        for i in range(index):
            lines[i] = "\n"
        if index == 0:
            # No decorator line to reuse (tk.jit(fn) called directly): the
            # text starts one line early.
            lines.insert(0, "")
            first_line = max(1, first_line - 1)
            index = 1
        lines[index - 1] = f"@{_JIT_NAME}\n"
        self.file_name = file_name
        self.first_line = first_line
        self.text = "".join(lines)
        # Triton's JITFunction.src: the dedented text from `def` on.
        self.src = "".join(lines[index:])
        self.def_line = first_line + index
        # The globals it may read: the names its body loads (co_names; it
        # also lists attribute names, which are harmless extras) and the
        # names in its parameter list (annotations such as `tl.constexpr`,
        # defaults), minus its own parameters and locals. Comments and other
        # functions of the file do not count. A replaced text is read for
        # its own names.
        code = _code_of(self.text, fn.__name__) if given is not None else None
        code = code or fn.__code__
        names = set(code.co_names) | set(code.co_freevars) | _header_names(self.text, index)
        self.global_names = sorted(names - set(code.co_varnames))
        self._attributes = None  # name -> the attributes `name.attr` the text reads

    def attributes_of(self, name):
        """The attributes `name.attr` the text reads, parsed once per source."""
        if self._attributes is None:
            import ast

            self._attributes = {}
            try:
                tree = ast.parse(self.text)
            except SyntaxError:
                tree = None  # the front end reports what is wrong with the text
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    self._attributes.setdefault(node.value.id, set()).add(node.attr)
        return sorted(self._attributes.get(name, ()))

    def as_tuple(self):
        return (self.file_name, self.text, self.first_line)


def _code_of(text, name):
    """The code object of function `name` defined in `text`, or None when the
    text does not compile as Python (the front end then says why)."""
    try:
        module = compile(text, "<tk source>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return next((c for c in module.co_consts if isinstance(c, types.CodeType) and
                 c.co_name == name), None)


def _exec_source(fn):
    """(file name, text, 1) of a function defined by exec() of a string,
    found as the caller of exec() holds it: test_core and other code
    generators write `exec(src, globals(), namespace)` with the text in a
    variable. A string counts only when compiling it gives exactly the code
    being run (the same bytecode and constants at the same line), so a
    similar string never stands in for the real one. None when not found."""
    code = fn.__code__
    frame = sys._getframe(1)
    while frame is not None and not (
        frame.f_code.co_filename == code.co_filename and frame.f_code.co_name == "<module>"
    ):
        frame = frame.f_back
    if frame is None or frame.f_back is None:
        return None
    module_code = frame.f_code
    caller = frame.f_back
    candidates = [v for v in caller.f_locals.values() if isinstance(v, str)]
    candidates += [v for v in caller.f_globals.values() if isinstance(v, str)]
    for text in candidates:
        if f"def {fn.__name__}" not in text:
            continue
        try:
            compiled = compile(text, code.co_filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        if compiled.co_code != module_code.co_code:
            continue
        for c in compiled.co_consts:
            if (isinstance(c, types.CodeType) and c.co_name == code.co_name and
                    c.co_firstlineno == code.co_firstlineno and c.co_code == code.co_code and
                    c.co_consts == code.co_consts):
                return (code.co_filename, text, 1)
    return None


def _header_names(text, def_index):
    """The identifiers of a function's header: from `def` to the ':' that
    ends the parameter list (annotations, defaults, the return annotation)."""
    import io
    import tokenize

    names, depth = set(), 0
    lines = text.splitlines(keepends=True)[def_index:]
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type == tokenize.OP and tok.string == ":" and depth == 0:
                break
            elif tok.type == tokenize.NAME:
                names.add(tok.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the front end reports what is wrong with the text
    return names


# The module of a namespace's builtins (libdevice.asin is
# tk.language.extra.libdevice's asin).
_NAMESPACE_MODULES = {
    "libdevice": "tk.language.extra.libdevice",
    "cuda": "tk.language.extra.cuda",
    "math": "tk.language.math",
    "core": "tk.language.core",
    "standard": "tk.language.standard",
}


class _Closure:
    """Everything one compile depends on besides the arguments: the sources of
    the kernel and of the helpers it reaches, and the globals they read."""

    def __init__(self, root, passed=()):
        """`passed`: @tk.jit functions given as constexpr arguments, compiled
        with the kernel (with the helpers they reach)."""
        import tk

        tk_modules = (tk, sys.modules.get("tk.language"))
        self.functions = [root]
        for f in passed:
            if all(f.fn is not g.fn for g in self.functions):
                self.functions.append(f)
        self.constants = {}  # global name -> value
        self.aliases = set()  # globals bound to the tk module
        self.imports = {}  # global name -> tk builtin name (`from tk import load`)
        # global name -> the tk submodule it is bound to (`from
        # tk.language.extra import libdevice`), for the prelude's imports.
        self.modules = {}
        # global name -> {attribute: @tk.jit function name} of the globals
        # bound to other Python modules (a helper module, Inductor's
        # triton_helpers): their @tk.jit functions the kernel calls as m.f.
        self.user_modules = {}
        self.unusable = {}  # global name -> (type name, function) of other globals
        # (globals dict, name, value) of every global the functions read: the
        # GPU launcher (_C.Launcher) checks these objects are still bound
        # before it reuses a compiled kernel.
        self.guards = []
        owners = {}
        i = 0
        while i < len(self.functions):
            jf = self.functions[i]
            i += 1
            g = jf.fn.__globals__
            cells = _closure_cells(jf.fn)
            for name in jf.source.global_names:
                # A variable of an enclosing function (a kernel defined in a
                # function, reading its locals) shadows a global, as in
                # Python; it is read at each compile, without a guard.
                if name in cells:
                    value = cells[name]
                elif name not in g:
                    continue
                else:
                    value = g[name]
                    self.guards.append((g, name, value))
                value = _triton_objects.to_tk(value)
                if any(value is m for m in tk_modules if m is not None):
                    self.aliases.add(name)
                elif isinstance(value, types.ModuleType) and _C.kernel_module(value.__name__):
                    self.modules[name] = value.__name__
                elif isinstance(value, types.ModuleType):
                    members = self.user_modules.setdefault(name, {})
                    for attr in jf.source.attributes_of(name):
                        member = _triton_objects.to_tk(getattr(value, attr, None))
                        if not isinstance(member, JITFunction):
                            continue  # the front end says what m.attr may be
                        self.guards.append((value.__dict__, attr, value.__dict__.get(attr)))
                        members[attr] = member.fn.__name__
                        if all(member.fn is not f.fn for f in self.functions):
                            self.functions.append(member)
                elif isinstance(value, JITFunction):
                    if value.fn.__name__ != name:
                        raise CompilationError(
                            f"error: '{jf.__name__}' calls the @tk.jit function "
                            f"'{value.fn.__name__}' under the name '{name}'; import or assign it "
                            "under its own name"
                        )
                    # The same Python function is one helper, however many
                    # JITFunctions wrap it (test_core wraps a template's
                    # function again to replace its text).
                    if all(value.fn is not f.fn for f in self.functions):
                        self.functions.append(value)
                elif _is_constant(value):
                    value = value.value if isinstance(value, constexpr) else value
                    if name in self.constants and _tagged(self.constants[name]) != _tagged(value):
                        raise CompilationError(
                            f"error: the global '{name}' is {self.constants[name]!r} for "
                            f"'{owners[name]}' but {value!r} for '{jf.__name__}'; tk compiles "
                            "a kernel and its helpers with one value per global name"
                        )
                    self.constants[name] = value
                    owners[name] = jf.__name__
                elif hasattr(value, "_tk_builtin_name"):
                    self.imports[name] = value._tk_builtin_name
                else:
                    # Not visible to the kernel: if it uses the name, the front
                    # end reports it as undefined, and explain() says why.
                    self.unusable.setdefault(name, (type(value).__name__, jf.__name__))

    def prelude(self):
        """A synthetic source that imports the tk builtins bound to plain
        globals (`from tk import load`; a builtin of a namespace, such as
        libdevice.asin, from its module), the tk submodules bound to globals
        (`import tk.language.extra.libdevice as libdevice`) and the decorator
        name."""
        items = [f"jit as {_JIT_NAME}"]
        lines = []
        for name, builtin in sorted(self.imports.items()):
            if "." in builtin:
                namespace, short = builtin.rsplit(".", 1)
                module = _NAMESPACE_MODULES.get(namespace, "tk." + namespace)
                lines.append(f"from {module} import {short} as {name}\n")
            else:
                items.append(builtin if builtin == name else f"{builtin} as {name}")
        for name, module in sorted(self.modules.items()):
            lines.append(f"import {module} as {name}\n")
        text = "from tk import " + ", ".join(items) + "\n" + "".join(lines)
        return ("<tk prelude>", text, 1)

    def explain(self, errors):
        """Notes for "undefined name" errors about globals a kernel cannot read."""
        notes = []
        for name, (type_name, fn_name) in sorted(self.unusable.items()):
            if f"undefined name '{name}'" not in errors:
                continue
            if type_name in ("function", "builtin_function_or_method"):
                # docs/python.md, "Host functions and compile-time values".
                notes.append(
                    f"note: '{name}' is a plain Python function where '{fn_name}' is defined; "
                    "kernels do not call host code: make it a @tk.jit helper (tk.constexpr "
                    "parameters fold at compile time), or call it in Python and pass or bind "
                    f"the result (a tk.constexpr argument, or a global `N = tk.constexpr("
                    f"{name}(...))`)\n"
                )
            else:
                notes.append(
                    f"note: '{name}' is a global of type {type_name} where '{fn_name}' is "
                    "defined; kernels can read only globals that are ints, floats, bools, "
                    "strings, None, tk dtypes, tk.constexpr values, tuples of those, @tk.jit "
                    "functions and modules (calling their @tk.jit functions)\n"
                )
        return errors + "".join(notes)

    def key(self):
        return (
            tuple(f.source.as_tuple() for f in self.functions),
            tuple(sorted((n, _tagged(v)) for n, v in self.constants.items())),
            tuple(sorted(self.aliases)),
            tuple(sorted(self.imports.items())),
            tuple(sorted(self.modules.items())),
            tuple(sorted((n, tuple(sorted(m.items()))) for n, m in self.user_modules.items())),
        )


def _closure_cells(fn):
    """{name: value} of the enclosing functions' variables `fn` reads (its
    closure cells; an empty cell is left out)."""
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def _is_constant(value):
    if isinstance(value, tuple):  # a shape: a tuple of constants
        return all(_is_constant(v) and not isinstance(v, constexpr) for v in value)
    return (
        value is None
        or isinstance(value, (bool, numbers.Integral, numbers.Real, str, dtype, constexpr))
    )


def _tagged(value):
    """A cache-key form that keeps 1, 1.0 and True apart."""
    if isinstance(value, dtype):
        return ("dtype", value._tk_dtype_name)
    if isinstance(value, Builtin):
        return ("builtin", value._tk_builtin_name)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, tuple):
        return ("tuple", tuple(_tagged(v) for v in value))
    if isinstance(value, numbers.Integral):
        return ("int", int(value))
    if isinstance(value, numbers.Real):
        return ("float", float(value))
    return (type(value).__name__, value)


def _const_for_compiler(name, value):
    value = value.value if isinstance(value, constexpr) else value
    if value is None or isinstance(value, (bool, str, dtype, JITFunction, Builtin)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, tuple):  # Triton's constexpr tuples (a shape)
        return tuple(_const_for_compiler(name, v) for v in value)
    raise TypeError(
        f"constexpr '{name}' must be an int, float, bool, str, None, tk dtype, @tk.jit "
        f"function, tk builtin or a tuple of them, not {type(value).__name__}"
    )


#
# Arguments
#


def _interface_dtype(typestr, value, where):
    """tk's dtype name for an array-interface typestr ("<f4"), or a TypeError
    for what tk cannot take (other kinds, big-endian data)."""
    dt = _NUMPY_KINDS.get(typestr[1:])
    if dt is None or typestr[0] == ">":
        raise TypeError(
            f"{where}: tk cannot take arrays of dtype {getattr(value, 'dtype', typestr)} "
            "(tk takes fp16/32/64, int8-64, uint8-64, bool)"
        )
    return dt


# numpy dtypes of the ml_dtypes package, whose __array_interface__ typestr is
# a plain "<V2" or "<V1" (raw bytes): bfloat16 and fp8 arrays run on the
# interpreter.
_ML_DTYPES = {"bfloat16": "bf16", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def _wrapper_dtype(name, wrapper, kernel_name):
    """The signature dtype of a TensorWrapper (tk.reinterpret) argument."""
    dt = wrapper.dtype
    if not isinstance(dt, dtype) or dt._tk_dtype_name not in _COMPILER_DTYPE_NAMES:
        raise TypeError(
            f"argument '{name}' of {kernel_name}: a tensor reinterpreted as {dt} cannot be "
            f"passed: tk has no {dt} type yet"
            if isinstance(dt, dtype)
            else f"argument '{name}' of {kernel_name}: tk.reinterpret needs a tk dtype, not "
            f"{dt!r}"
        )
    return dt._tk_dtype_name


def _is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


# The largest span of memory an array argument may claim: beyond it no host
# has the memory, and offsets computed from it would overflow.
_MAX_ARRAY_BYTES = 2**62


def _interface_memory(name, kernel_name, ai, cuda=False):
    """(address, read-only flag, byte span, offset of the data pointer) of an
    array interface, checked: a TypeError naming the argument for anything
    that does not describe memory (a NULL address, negative or overflowing
    extents, strides of another rank, a mask). The span is the one of the
    view, whatever the signs of its strides."""
    where = f"argument '{name}' of {kernel_name}"
    kind = "__cuda_array_interface__" if cuda else "__array_interface__"
    if not isinstance(ai, dict):
        raise TypeError(f"{where}: {kind} must be a dict, not {type(ai).__name__}")
    typestr, shape, strides = ai.get("typestr"), ai.get("shape"), ai.get("strides")
    data = ai.get("data")
    if not isinstance(typestr, str) or len(typestr) < 3 or not typestr[2:].isdigit():
        raise TypeError(f"{where}: {kind} has typestr {typestr!r}, not one such as '<f4'")
    itemsize = int(typestr[2:])
    if not isinstance(shape, (tuple, list)) or not all(_is_int(e) for e in shape):
        raise TypeError(f"{where}: {kind} has shape {shape!r}, not a tuple of ints")
    shape = tuple(int(e) for e in shape)
    if any(e < 0 for e in shape):
        raise TypeError(f"{where}: {kind} has shape {shape}, with a negative extent")
    if strides is not None and (not isinstance(strides, (tuple, list))
                                or len(strides) != len(shape)
                                or not all(_is_int(x) for x in strides)):
        raise TypeError(f"{where}: {kind} has strides {strides!r} for shape {shape}; they must "
                        "be None or one int per dimension")
    if ai.get("mask") is not None:
        raise TypeError(f"{where}: {kind} has a mask; tk takes unmasked arrays")
    if not (isinstance(data, tuple) and len(data) == 2 and _is_int(data[0])):
        raise TypeError(f"{where}: {kind} has data {data!r}; tk takes (address, read-only "
                        "flag), as numpy gives")
    address, read_only = int(data[0]), bool(data[1])
    strides = None if strides is None else [int(x) for x in strides]
    if strides is None:
        strides, step = [], itemsize
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
    if any(extent == 0 for extent in shape):
        return address, read_only, 0, 0
    low = sum(min(0, (e - 1) * x) for e, x in zip(shape, strides))
    high = sum(max(0, (e - 1) * x) for e, x in zip(shape, strides)) + itemsize
    span = high - low
    if span > _MAX_ARRAY_BYTES:
        raise TypeError(f"{where}: {kind} describes {span} bytes (shape {shape}, strides "
                        f"{tuple(strides)}), more than any memory (2**62 bytes)")
    if address == 0:
        raise TypeError(f"{where}: {kind} has data address 0 (NULL) for {span} bytes")
    if not (0 < address + low and address + high <= 2**64):
        raise TypeError(f"{where}: {kind}: address {address:#x} with shape {shape} and strides "
                        f"{tuple(strides)} reaches outside the address space")
    return address + low, read_only, span, -low


def _array_info(name, value, kernel_name):
    """(dtype name, lowest byte address, byte span, offset of the data
    pointer, read-only) of an array argument, or None when `value` is not an
    array."""
    if isinstance(value, TensorWrapper):
        _, base, span, offset, read_only = _array_info(name, value.base, kernel_name)
        return _wrapper_dtype(name, value, kernel_name), base, span, offset, read_only
    ai = getattr(value, "__array_interface__", None)
    if ai is not None:
        typestr = ai.get("typestr", "") if isinstance(ai, dict) else ""
        dt = _ML_DTYPES.get(str(getattr(value, "dtype", "")))
        if dt is None:
            dt = _interface_dtype(str(typestr), value, f"argument '{name}' of {kernel_name}")
        base, read_only, span, offset = _interface_memory(name, kernel_name, ai)
        return dt, base, span, offset, read_only
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        dt = _TORCH_DTYPES.get(str(value.dtype))
        if dt is None:
            raise TypeError(
                f"argument '{name}' of {kernel_name}: tk cannot take tensors of dtype {value.dtype}"
            )
        device = getattr(getattr(value, "device", None), "type", "cpu")
        if device != "cpu":
            raise TypeError(
                f"argument '{name}' of {kernel_name} is on device '{device}'; the interpreter "
                "(TK_INTERPRET=1) runs on CPU tensors: pass x.cpu()"
            )
        storage = value.untyped_storage()
        base = storage.data_ptr()
        return dt, base, storage.nbytes(), value.data_ptr() - base, False
    if hasattr(value, "__cuda_array_interface__"):
        raise TypeError(
            f"argument '{name}' of {kernel_name} is a GPU array (it has __cuda_array_interface__); "
            "the interpreter (TK_INTERPRET=1) runs on CPU arrays such as numpy's"
        )
    return None


def _gpu_array_info(name, value, kernel_name):
    """(dtype name, device address) of an array argument of a GPU launch, or
    None when `value` is not an array. A CPU array, or a tensor on a device
    other than cuda:0, is a TypeError naming the argument."""
    where = f"argument '{name}' of {kernel_name}"
    if isinstance(value, TensorWrapper):
        _, address = _gpu_array_info(name, value.base, kernel_name)
        return _wrapper_dtype(name, value, kernel_name), address
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        device = getattr(value, "device", None)
        kind = getattr(device, "type", None)
        # _C._set_stand_in_torch(True): CPU tensors stand in for cuda:0's in
        # the stand-in driver's measurements (python_launch_bench --stand-in).
        if kind is not None and kind != "cuda" and not (kind == "cpu" and _C._stand_in_torch()):
            raise TypeError(
                f"{where} is a tensor on '{device}'; a GPU launch needs CUDA tensors "
                f"({name}.cuda()), or set TK_INTERPRET=1 to run on the CPU interpreter"
            )
        index = getattr(device, "index", 0)
        if kind == "cuda" and index not in (0, None):
            raise TypeError(
                f"{where} is on '{device}', but tk launches on cuda:0 (device 0's primary "
                f"context); move it with {name}.to('cuda:0')"
            )
        dt = _TORCH_DTYPES.get(str(value.dtype))
        if dt is None:
            dt = _NUMPY_KINDS.get(getattr(value.dtype, "str", "")[1:])
        if dt is None:
            raise TypeError(f"{where}: tk cannot take tensors of dtype {value.dtype}")
        return dt, int(value.data_ptr())
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        typestr = cai.get("typestr", "") if isinstance(cai, dict) else ""
        dt = _interface_dtype(str(typestr), value, where)
        base, _, span, offset = _interface_memory(name, kernel_name, cai, cuda=True)
        return dt, base + offset
    if hasattr(value, "__array_interface__"):
        raise TypeError(
            f"{where} is a CPU array ({type(value).__name__}); a GPU launch needs device memory "
            "(a CUDA torch tensor, a CuPy array, anything with __cuda_array_interface__), or set "
            "TK_INTERPRET=1 to run on the CPU interpreter"
        )
    return None


# Scalar types that keep their width as runtime arguments (dtype name ->
# signature type); other numpy scalars are Python ints and floats to tk.
# np.float64 is not one of them: it is a subclass of Python's float, and
# Triton (which checks isinstance(x, float)) makes it fp32 like any float; a
# ported kernel passing one (attention's sm_scale) expects fp32 arithmetic,
# and an fp64 scale would promote its fp32 loop values. An fp64 scalar
# travels as a one-element fp64 array, loaded in the kernel.
_SIZED_SCALARS = {"float16": "fp16", "bfloat16": "bf16", "int8": "i8", "int16": "i16",
                  "uint8": "u8", "uint16": "u16"}


def _is_sized_scalar(value):
    return type(value).__module__ in ("numpy", "ml_dtypes") and getattr(value, "ndim", None) == 0


class ArgumentOverflowError(TypeError, OverflowError):
    """An int argument beyond 64 bits: a TypeError naming the argument, and
    the OverflowError Triton raises for it (test_value_specialization_overflow)."""


def _rule(name, kernel_name, kind, value, specialize, dt=""):
    """_C.specialize_arg, with a value it cannot take (an int beyond 64 bits,
    a negative address) a TypeError naming the argument."""
    try:
        return _C.specialize_arg(kind, value, specialize, dt)
    except ValueError as e:
        error = ArgumentOverflowError if "does not fit in 64 bits" in str(e) else TypeError
        raise error(f"argument '{name}' of {kernel_name}: {e}") from None


def _specialize(name, value, specialize, kernel_name, gpu=False):
    """(signature entry, launch argument or None) for a parameter that is not
    a constexpr. Launch arguments are ("i", int), ("f", float), ("m", the 128
    bytes of a CUtensorMap: _descriptor_args), and for
    arrays ("p", base, span, offset, dtype, name, read-only) on the interpreter or
    ("g", address) on the GPU.

    Only the type dispatch is here (what a Python object is: an int, a numpy
    scalar, a tensor, an array); the entry and its facts come from the C++
    rule every launch path shares (compiler/ArgSpecialization.h, through
    _C.specialize_arg)."""
    if value is None:
        return "None", None
    if isinstance(value, constexpr):
        # A wrapped value is a compile-time constant even for a parameter
        # without the annotation, as in Triton.
        value = value.value
        if isinstance(value, bool):
            return str(value), None
        if isinstance(value, numbers.Integral):
            return str(int(value)), None
        if isinstance(value, numbers.Real):
            return repr(float(value)), None
        if value is None:
            return "None", None
    if isinstance(value, dtype):
        return repr(value), None
    if isinstance(value, str):
        if any(c in value for c in ",'\"\n"):
            raise TypeError(
                f"argument '{name}' of {kernel_name}: the string {value!r} cannot be passed to "
                "a kernel (commas and quotes are not allowed); make the parameter a tk.constexpr"
            )
        return f"'{value}'", None
    if isinstance(value, bool):
        entry, v = _rule(name, kernel_name, "bool", value, specialize)
        return entry, ("i", v)
    scalar = _SIZED_SCALARS.get(str(getattr(value, "dtype", ""))) if _is_sized_scalar(value) else None
    if scalar is not None:
        # A numpy (or ml_dtypes bfloat16) scalar keeps its width: np.float16(x)
        # is an fp16 argument, np.int8(x) an i8. Python's own int and float
        # (np.float64 and np.float32 included) stay i32/i64 and fp32, as in
        # Triton.
        is_float = scalar.startswith("fp") or scalar == "bf16"
        entry, v = _rule(
            name, kernel_name, "scalar", float(value) if is_float else int(value), specialize,
            scalar,
        )
        return entry, ("f" if is_float else "i", v)
    if isinstance(value, numbers.Integral):
        entry, v = _rule(name, kernel_name, "int", int(value), specialize)
        return entry, ("i", v)
    if isinstance(value, numbers.Real):
        entry, v = _rule(name, kernel_name, "float", float(value), specialize)
        return entry, ("f", v)
    if gpu:
        info = _gpu_array_info(name, value, kernel_name)
        if info is not None:
            dt, address = info
            entry, address = _rule(name, kernel_name, "pointer", address, specialize, dt)
            return entry, ("g", address)
    info = _array_info(name, value, kernel_name)
    if info is None:
        raise TypeError(
            f"argument '{name}' of {kernel_name}: tk cannot pass a {type(value).__name__} to a "
            "kernel; pass an array (numpy, torch, anything with __array_interface__), an int, a "
            "float, a bool or None"
        )
    dt, base, span, offset, read_only = info
    entry, _ = _rule(name, kernel_name, "pointer", base + offset, specialize, dt)
    return entry, ("p", base, span, offset, dt, name, read_only)


def _argument_array(values, name):
    """The array behind the kernel argument `name` of a launch whose
    parameters had `values`: the parameter's value, or for the base pointer
    of a TensorDescriptor parameter (the argument named after it) the
    descriptor's base."""
    value = values[name]
    return value.base if isinstance(value, TensorDescriptor) else value


def _tma_arch(arch):
    """Whether a GPU compile for `arch` passes host descriptors as CUtensorMaps
    (TK_TMA=1 and sm_90 or above)."""
    return (arch is not None and arch.startswith("sm_") and int(re.sub(r"\D", "", arch)) >= 90
            and bool(_C.knob("TK_TMA")))


def _descriptor_args(name, value, kernel_name, specialize=True, gpu=False, tma=False,
                     warmup=False):
    """(signature entry, launch arguments, argument names) of a host
    TensorDescriptor argument: the entry `tensordesc<fp16[64,64]{16,1}>`
    (the sizes' divisibility unless `specialize` is off, `,nan` for NaN
    padding) and, as ir/Specialize.h lays them out, the base
    pointer, the sizes and every stride but the last. The block shape is read
    now, at the launch: an autotuner's pre_hook may have set it. With `tma`
    (_tma_arch) a descriptor TMA can move gets `,tma` and one argument more,
    its CUtensorMap's 128 bytes (tensor_descriptor.tensor_map); a `warmup`
    compile, which launches nothing, checks the descriptor but encodes no map
    (it needs no driver)."""
    where = f"argument '{name}' of {kernel_name}"
    entry, base = _specialize(name, value.base, True, kernel_name, gpu=gpu)
    if not entry.startswith("*"):
        raise TypeError(f"{where}: a TensorDescriptor's base must be a tensor, not "
                        f"{type(value.base).__name__}")
    dt = entry[1:].split(":")[0]
    if not entry.endswith(":16"):
        raise TensorDescriptorError(
            f"{where}: a TensorDescriptor's base address must be 16-byte aligned")
    value.validate(where)
    shape, strides, block = list(value.shape), list(value.strides), list(value.block_shape)
    rank = len(shape)
    padding = ",nan" if value.padding == "nan" else ""
    # The sizes' divisibility by 16, as integer arguments are specialised:
    # masks along a dimension whose size is a multiple of 16 stay whole
    # across a vector, so the loads and stores vectorise.
    facts = ",".join("16" if n % 16 == 0 else "1" for n in shape) if specialize else ""
    facts = f"{{{facts}}}" if facts else ""
    entry = f"tensordesc<{dt}[{','.join(str(int(b)) for b in block)}]{facts}{padding}>"
    args = [base] + [("i", int(n)) for n in shape] + [("i", int(st)) for st in strides[:-1]]
    names = ([name] + [f"{name}.shape[{k}]" for k in range(rank)]
             + [f"{name}.strides[{k}]" for k in range(rank - 1)])
    if tma and _tensor_descriptor.tma_data_type(dt) is not None:
        entry = entry[:-1] + ",tma>"
        if warmup:
            _tensor_descriptor.tma_check(value, dt, where)
            args.append(("m", bytes(128)))
        else:
            args.append(("m", _tensor_descriptor.tensor_map(value, dt, base[1], where,
                                                             _C.encode_tensor_map)))
        names.append(f"{name}.tensormap")
    return entry, args, names


#
# The compiled kernel and the decorator
#


class _Asm(dict):
    """CompiledKernel.asm: "ir", "ir-opt" and, for GPU compiles, "ptx" (for
    the amdgcn target instead "amdgcn", the AMDGPU assembly, and "hsaco", the
    code object's bytes, as Triton's AMD back end names them); "llvm" is
    generated on first access (a second trip through the back end)."""

    def __init__(self, compiled, kernel_name):
        super().__init__(ir=compiled.ir)
        self["ir-opt"] = compiled.ir_opt
        if compiled.is_amdgpu:
            self["amdgcn"] = compiled.ptx
            self["hsaco"] = compiled.code_object
        elif compiled.is_gpu:
            self["ptx"] = compiled.ptx
        self._compiled = compiled
        self._kernel_name = kernel_name

    def __missing__(self, key):
        if key == "llvm" and self._compiled.is_gpu:
            text, errors = self._compiled.llvm_ir()
            if errors:
                raise CompilationError(errors, kernel=self._kernel_name)
            self["llvm"] = text
            return text
        raise KeyError(
            f"{key!r}: a {'GPU' if self._compiled.is_gpu else 'interpreter'} compile has "
            f"{sorted(set(self) | ({'llvm'} if self._compiled.is_gpu else set()))}"
        )


class Remark:
    """One optimisation remark (docs/remarks.md): what the compiler decided
    at `file:line:col`, of `kind` ("vectorize", "coalesce", "dot",
    "pipeline", "shared", "barrier", "registers"), `status` ("passed",
    "missed", "analysis"), the `message` (for a missed one: why, and what to
    change) and the `numbers` behind it by name. str() is the rendering tkc
    prints: "file:line:col: remark: message [kind]", the line, a caret."""

    __slots__ = ("file", "line", "col", "kind", "status", "function", "message", "numbers",
                 "_rendered")

    def __init__(self, file, line, col, kind, status, function, message, numbers, rendered):
        self.file, self.line, self.col = file, line, col
        self.kind, self.status, self.function = kind, status, function
        self.message, self.numbers, self._rendered = message, dict(numbers), rendered

    def __str__(self):
        return self._rendered

    def __repr__(self):
        return f"<tk.Remark {self.file}:{self.line}:{self.col} [{self.kind}, {self.status}]>"


_SHARED_OVERFLOW = re.compile(r"too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max")


class CompiledKernel:
    """One compiled specialisation, as Triton's CompiledKernel: `asm["ir"]` is
    the block IR as lowered, `asm["ir-opt"]` after the optimisation pipeline
    (for a GPU compile: after the GPU pipeline too), `asm["ptx"]` and
    `asm["llvm"]` for GPU compiles (for the amdgcn target `asm["amdgcn"]`,
    the AMDGPU assembly, and `asm["hsaco"]`, the code object, instead of
    `asm["ptx"]`; `metadata.target` says which). `n_regs`, `n_spills` (local memory per
    thread / 4, as Triton counts) and `shared` (shared memory per program,
    static and dynamic, bytes; also `metadata.shared`, as Triton's) load the
    kernel on the GPU when first read. `remarks` is the list of the compile's
    remarks (tk.Remark, docs/remarks.md) when it was asked for them
    (`warmup(..., remarks=True)` or TK_REMARKS=1), else None."""

    def __init__(self, compiled, signature, constants, options):
        self._compiled = compiled
        self.name = compiled.name
        recorded = compiled.remarks
        self.remarks = None if recorded is None else [Remark(*r) for r in recorded]
        self.asm = _Asm(compiled, compiled.name)
        self.signature = signature
        self.constants = constants
        self.num_warps = compiled.num_warps if compiled.is_gpu else options.get("num_warps", 4)
        self.num_stages = options.get("num_stages", 3)
        self.metadata = types.SimpleNamespace(
            name=compiled.name,
            **dict(options, num_warps=self.num_warps, num_stages=self.num_stages),
        )
        if compiled.is_gpu:
            self.metadata.target = "amdgcn" if compiled.is_amdgpu else "nvptx"

    def _load(self):
        """Loads the kernel on the GPU (once); DriverError or OutOfResources."""
        if not self._compiled.is_gpu:
            raise DriverError(f"'{self.name}' was compiled for the interpreter, not the GPU")
        if not self._compiled.loaded:
            errors = self._compiled.load()
            if errors:
                failure = self._compiled.failure
                if failure is not None:
                    resource, needed, limit = failure
                    raise OutOfResources(needed, limit, resource)
                m = _SHARED_OVERFLOW.search(errors)
                if m:
                    raise OutOfResources(int(m.group(1), 16), int(m.group(2), 16), "shared memory")
                raise DriverError(f"cannot load '{self.name}' on the GPU: {errors}")
            r = self._compiled.resources
            threads = self._compiled.threads_per_program
            if threads > r["max_threads_per_block"]:
                raise OutOfResources(
                    threads,
                    r["max_threads_per_block"],
                    f"threads per program ({self.num_warps} warps at {r['registers']} registers "
                    "per thread)",
                )
            # Triton's metadata.shared: every byte of shared memory a
            # program uses, the dynamic part (sized at launch) included
            self.metadata.shared = r["static_shared_bytes"] + self._compiled.dynamic_shared
        return self._compiled.resources

    def _init_handles(self):
        """Triton's: loads the kernel (GPU compiles), so that n_regs and
        metadata.shared are known; the softmax tutorial calls it."""
        if self._compiled.is_gpu:
            self._load()

    def __getitem__(self, grid):
        """`compiled[grid](*args)`, as Triton's tutorials launch a warmed-up
        kernel: every argument of the kernel (constexprs included), launched
        with the options this kernel was compiled with."""
        kernel, options = self._kernel, self._options

        def launch(*args, stream=None):
            extra = {} if stream is None else {"stream": stream}
            return kernel[grid](*args, **options, **extra)

        return launch

    @property
    def n_regs(self):
        return self._load()["registers"]

    @property
    def n_spills(self):
        return self._load()["local_bytes"] // 4

    @property
    def shared(self):
        return self._load()["static_shared_bytes"] + self._compiled.dynamic_shared

    def __repr__(self):
        return f"<tk.CompiledKernel {self.name} [{self.signature}]>"


class KernelInterface(metaclass=abc.ABCMeta):
    """`kernel[grid](*args, **kwargs)` for every kind of kernel object.

    JITFunction is registered as a (virtual) subclass rather than deriving
    from it: with this class among its bases, CPython would see two
    `__getitem__` slots (mapping and sequence) and route `kernel[grid]`
    through a Python-level dispatcher instead of the C subscript."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)


class JITFunction(_C.LaunchBase):
    """What @tk.jit returns; see the module docstring.

    `kernel[grid]` is the C subscript of _C.LaunchBase: no Python frame runs
    on the launch path. isinstance(kernel, KernelInterface) holds (it is
    registered below)."""

    def __init__(self, fn, do_not_specialize=(), debug=None, interpret=None, noinline=None,
                 repr=None):
        if _triton_objects.is_triton_object(fn) and hasattr(fn, "fn"):
            fn = fn.fn  # a @triton.jit function (an Inductor kernel): its Python function
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise TypeError(f"@tk.jit decorates a Python function, not {fn!r}")
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.debug = debug
        self.interpret = interpret
        self.noinline = noinline
        # Triton's repr=: the compiled kernel's name from its specialisation.
        self._repr = repr
        self.launch_metadata = None  # tk.profiler's names and metrics of a launch
        import inspect

        self.params = []
        for p in inspect.signature(fn).parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(
                    f"@tk.jit function '{fn.__name__}': parameter '{p.name}' must be a plain "
                    "positional parameter (no *args, **kwargs or keyword-only parameters)"
                )
            self.params.append(p)
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [i for i, p in enumerate(self.params) if _is_constexpr(p.annotation)]
        self.do_not_specialize = sorted(
            {self.arg_names[d] if isinstance(d, int) else d for d in (do_not_specialize or ())}
        )
        unknown = [d for d in self.do_not_specialize if d not in self.arg_names]
        if unknown:
            raise TypeError(
                f"do_not_specialize of '{fn.__name__}' names {unknown}, which are not parameters "
                f"({', '.join(self.arg_names)})"
            )
        self._source = None
        # A function made by exec() has no text inspect can find: it is
        # looked for now, while exec's caller is still on the stack.
        self._given_source = None
        filename = fn.__code__.co_filename
        if filename.startswith("<") and not linecache.getlines(filename):
            self._given_source = _exec_source(fn)
        self.cache = {}
        self._lock = threading.Lock()
        self._compile_locks = {}  # key -> lock: one compile per key at a time
        self._new_launcher()

    def _new_launcher(self):
        # The launch hot path (python/src/GpuLauncher.h): binding, key, map
        # lookup and cuLaunchKernel in one C++ call. It comes back here to
        # compile, to run on the interpreter and to raise argument errors.
        self._launcher = _C.Launcher(
            self,
            self.arg_names,
            [i in self.constexprs for i in range(len(self.params))],
            [p.name not in self.do_not_specialize for p in self.params],
            [_MISSING if p.default is p.empty else p.default for p in self.params],
            _MISSING,
        )
        self._attach_launcher(self._launcher)

    @property
    def _tk_jit_function_name(self):
        """The name a kernel compiled with this function passed as a
        constexpr argument calls it by (tk._C's constants)."""
        return self.fn.__name__

    @property
    def source(self):
        if self._source is None:
            self._source = _FunctionSource(self.fn, self._given_source)
        return self._source

    @property
    def src(self):
        """The function's text from `def` on, dedented (Triton's `src`)."""
        return self.source.src

    @src.setter
    def src(self, value):
        raise AttributeError(
            "JITFunction.src cannot be assigned; use _unsafe_update_src(new_src), as in Triton"
        )

    def _unsafe_update_src(self, new_src):
        """Replaces the function's text with `new_src` (a `def` and its body,
        as `src` gives it), as Triton's JITFunction allows: later launches
        compile the new text, with errors located in it at the lines of the
        original `def`. The parameters stay the Python function's."""
        old = self.source
        self._given_source = (old.file_name, new_src, old.def_line)
        self._source = None
        self.cache = {}
        self._new_launcher()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"'{self.__name__}' is a @tk.jit function: launch it as {self.__name__}[grid](...); "
            "it can be called directly only from inside another kernel"
        )

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    def _bind(self, args, kwargs):
        """The parameters' values by name, in order; TypeError names the
        argument for a wrong count or an unknown keyword."""
        name = self.__name__
        takes = f"{name}({', '.join(self.arg_names)})"
        if len(args) > len(self.params):
            raise TypeError(f"{takes} takes {len(self.params)} arguments but {len(args)} were given")
        values = dict(zip(self.arg_names, args))
        for k, v in kwargs.items():
            if k not in self.arg_names:
                import difflib

                close = difflib.get_close_matches(k, self.arg_names, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise TypeError(f"{takes} got an unexpected keyword argument '{k}'{hint}")
            if k in values:
                raise TypeError(f"{takes} got multiple values for argument '{k}'")
            values[k] = v
        missing = [p.name for p in self.params if p.name not in values and p.default is p.empty]
        if missing:
            raise TypeError(
                f"{takes} is missing {len(missing)} argument{'s' if len(missing) > 1 else ''}: "
                + ", ".join(f"'{m}'" for m in missing)
            )
        return {p.name: values.get(p.name, p.default) for p in self.params}

    def _prepare(self, args, kwargs, gpu=False, remarks=False, warmup=False):
        """Binds and specialises the arguments and compiles (or finds in the
        cache) the kernel, for the interpreter or (`gpu`) for the GPU; with
        `remarks` (or TK_REMARKS=1) a kernel that has its remarks. Returns
        (CompiledKernel, launch args, values, launch options, closure)."""
        remarks = bool(remarks) or _env_flag("TK_REMARKS")
        # A launch option that is also a parameter (Triton's softmax tutorial
        # has `num_stages: tl.constexpr`) binds to the parameter.
        launch = {
            k: kwargs.pop(k) for k in LAUNCH_OPTIONS if k in kwargs and k not in self.arg_names
        }
        values = self._bind(args, kwargs)
        arch = _gpu_arch(launch, self.__name__) if gpu else None
        tma = _tma_arch(arch)
        entries, run_args, arg_names, constants = [], [], [], {}
        for i, p in enumerate(self.params):
            v = values[p.name]
            if i in self.constexprs:
                constants[p.name] = _const_for_compiler(p.name, v)
                continue
            if isinstance(v, TensorDescriptor):
                entry, args, names = _descriptor_args(
                    p.name, v, self.__name__, p.name not in self.do_not_specialize, gpu=gpu,
                    tma=tma, warmup=warmup)
                entries.append(entry)
                run_args.extend(args)
                arg_names.extend(names)
                continue
            entry, arg = _specialize(
                p.name, v, p.name not in self.do_not_specialize, self.__name__, gpu=gpu
            )
            entries.append(entry)
            if arg is not None:
                run_args.append(arg)
                arg_names.append(p.name)
        signature = ", ".join(entries)
        closure = _Closure(self, [v for v in constants.values() if isinstance(v, JITFunction)])
        # The options are checked before they are part of the key (a list or
        # a dict there would be unhashable, not an error about the option).
        options = {}
        if "num_warps" in launch:
            options["num_warps"] = _num_warps(launch["num_warps"], self.__name__)
        if "num_stages" in launch:
            options["num_stages"] = _num_stages(launch["num_stages"], self.__name__)
        if "num_ctas" in launch:
            if not _is_int(launch["num_ctas"]):
                raise ValueError(
                    f"num_ctas of {self.__name__} must be an int, not {launch['num_ctas']!r}"
                )
            options["num_ctas"] = int(launch["num_ctas"])
        if launch.get("extern_libs") is not None:
            options["extern_libs"] = _extern_libs(launch["extern_libs"], self.__name__, gpu)
        if gpu:
            options["enable_fp_fusion"] = _bool_option(
                "enable_fp_fusion", launch.get("enable_fp_fusion"), self.__name__,
                _default_fp_fusion)
            # True, Triton's default, when not given
            ftz = _bool_option("enable_reflect_ftz", launch.get("enable_reflect_ftz"),
                               self.__name__, lambda: True)
            if not ftz:  # the default stays out of the options (and the key's text)
                options["enable_reflect_ftz"] = False
        if gpu and options.get("num_ctas", 1) > 1 and (
                arch in AMD_ARCHS or int(re.sub(r"\D", "", arch)) < 90):
            raise ValueError(
                f"num_ctas > 1 requires NVIDIA SM90+ (Hopper); {self.__name__} compiles for "
                f"{arch}: launch it with num_ctas=1 or for sm_90"
            )
        key = (
            signature,
            tuple(sorted((n, _tagged(v)) for n, v in constants.items())),
            closure.key(),
            tuple(sorted(options.items())),
            self.debug,
            arch,
            _code_knobs() if gpu else None,
        )
        # A kernel compiled without remarks is compiled again for them (the
        # code is the same; the remarks are made only by a compile).
        fresh = _env_flag("TK_ALWAYS_COMPILE")
        kernel = None if fresh else self.cache.get(key)
        if kernel is not None and remarks and kernel.remarks is None:
            kernel = None
        if kernel is None:
            # One compile per key at a time; different keys (an autotuner's
            # configs on its compile threads) compile in parallel, since the
            # C++ compile releases the GIL.
            with self._lock:
                key_lock = self._compile_locks.setdefault(key, threading.Lock())
            with key_lock:
                kernel = None if fresh else self.cache.get(key)
                if kernel is not None and remarks and kernel.remarks is None:
                    kernel = None
                if kernel is None:
                    kernel = self._compile(closure, signature, constants, options, arch, remarks)
                    if self._repr is not None:
                        kernel.name = kernel.metadata.name = self._repr(
                            _specialization(self.params, self.constexprs, entries, values)
                        )
                    self.cache[key] = kernel
        if kernel._compiled.argument_names != arg_names:
            # Python and the front end disagree on which parameters are
            # constexprs (an annotation spelled in a way only one recognises).
            raise CompilationError(
                f"error: '{self.__name__}' takes the run-time arguments "
                f"({', '.join(kernel._compiled.argument_names)}) as compiled, but the launch "
                f"passes ({', '.join(arg_names)}); annotate compile-time parameters as "
                "`NAME: tk.constexpr`",
                kernel=self.__name__,
            )
        return kernel, run_args, values, launch, closure

    def _compile(self, closure, signature, constants, options, arch=None, remarks=False):
        """Compiles for the GPU target `arch`, or for the interpreter (None);
        with `remarks`, the kernel keeps the compile's remarks."""
        gpu = arch is not None
        all_constants = {n: _const_for_compiler(n, v) for n, v in closure.constants.items()}
        # A parameter shadows a global of the same name, as in Python.
        all_constants.update(constants)
        sources = [f.source.as_tuple() for f in closure.functions] + [closure.prelude()]
        compiled, errors = _C.compile(
            sources,
            self.__name__,
            signature,
            all_constants,
            sorted(closure.constants),
            sorted(closure.aliases),
            self.do_not_specialize,
            gpu,
            _num_warps(options.get("num_warps"), self.__name__),
            # Checked on both paths; the interpreter has no cp.async ring.
            _num_stages(options.get("num_stages"), self.__name__) * gpu,
            arch or "sm_90",
            closure.user_modules,
            # extern_libs' libdevice; "" (none given) is TK_LIBDEVICE_PATH's.
            dict(options.get("extern_libs", ())).get("libdevice", ""),
            remarks,
            options.get("enable_fp_fusion", True),
            options.get("enable_reflect_ftz", True),
        )
        if compiled is None:
            error = CompilationError if gpu else InterpretedCompilationError
            raise error(closure.explain(errors), kernel=self.__name__)
        if compiled.pass_log:  # TK_DUMP_IR, TK_TIME_PASSES
            sys.stderr.write(compiled.pass_log)
        kernel = CompiledKernel(compiled, signature, constants, options)
        kernel._kernel, kernel._options = self, dict(options)  # for kernel[grid](...)
        return kernel

    def run(self, *args, grid, warmup=False, **kwargs):
        """kernel[grid](*args, **kwargs) spelled as a call (Triton's)."""
        if warmup:
            gpu = not interpret_mode(self)
            kwargs = dict(kwargs)
            # warmup(..., remarks=True): unless the kernel has a parameter
            # of that name.
            remarks = kwargs.pop("remarks", False) if "remarks" not in self.arg_names else False
            return self._prepare(args, kwargs, gpu=gpu, remarks=remarks, warmup=True)[0]
        return self._launcher.call(grid, args, kwargs)

    def _interpret_run(self, grid, args, kwargs):
        """A launch on the CPU interpreter (TK_INTERPRET=1 or interpret=True)."""
        kernel, run_args, values, launch, _ = self._prepare(args, dict(kwargs))
        if callable(grid):
            grid = grid(dict(values, **launch))
        dims = _C.grid_dims(grid, self.__name__)  # the GPU launch's own check
        if 0 in dims:
            return kernel
        threads = _C.knob("TK_INTERPRET_THREADS")
        max_steps = _C.knob("TK_INTERPRET_MAX_STEPS")
        max_memory = _C.knob("TK_INTERPRET_MAX_MEMORY")
        printed, errors, bad_argument = kernel._compiled.run(
            run_args, dims, max(1, threads), max(0, max_steps), max(0, max_memory))
        if printed:
            sys.stdout.write(printed)
        if bad_argument:
            raise TypeError(errors)
        if errors:
            raise InterpreterError(errors, kernel=self.__name__)
        return kernel

    def _checked_run(self, grid, args, kwargs):
        """A GPU launch under TK_CHECK=1, compared with the interpreter
        (python/tk/check.py)."""
        from .. import check

        return check.checked_launch(self, grid, args, kwargs)

    def _gpu_compile(self, args, kwargs):
        """The launcher's way back for a key it has not seen: compile (or find)
        and load the GPU kernel for these arguments, or raise the error that
        names what is wrong. Returns (CompiledKernel, guards, runtime values,
        meta dict, True)."""
        # The target decides the runtime: HIP for amdgcn, else CUDA.
        chosen = {k: kwargs[k] for k in ("arch", "target")
                  if k in kwargs and k not in self.arg_names}
        arch = _gpu_arch(chosen, self.__name__)
        if arch in AMD_ARCHS:
            hip, why = _C.hip_available()
            if not hip:
                raise DriverError(
                    f"cannot launch '{self.__name__}' on an AMD GPU (amdgcn, {arch}): {why}. "
                    f"Compiling needs no GPU: {self.__name__}.warmup(...) gives "
                    "asm['amdgcn'] and asm['hsaco']; TK_INTERPRET=1 runs it on the CPU "
                    "interpreter."
                )
        elif not cuda_driver_available():
            raise DriverError(
                f"cannot launch '{self.__name__}' on a GPU: no CUDA driver found "
                "(libcuda.so.1 cannot be loaded). Set TK_INTERPRET=1 (or use "
                "@tk.jit(interpret=True)) to run it on the CPU interpreter on numpy arrays."
            )
        kernel, run_args, values, launch, closure = self._prepare(args, dict(kwargs), gpu=True)
        kernel._load()
        runtime = [a[1] for a in run_args]
        return kernel, closure.guards, runtime, dict(values, **launch), True

    @staticmethod
    def _stream_handle(stream):
        """A CUstream handle from an int, a torch.cuda.Stream (cuda_stream) or
        a CuPy stream (ptr)."""
        for attribute in ("cuda_stream", "ptr", "handle"):
            value = getattr(stream, attribute, None)
            if isinstance(value, numbers.Integral):
                return int(value)
        if isinstance(stream, numbers.Integral):
            return int(stream)
        raise TypeError(
            f"stream= takes an int (a CUstream handle), a torch.cuda.Stream or a CuPy stream, "
            f"not {type(stream).__name__}"
        )

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles for these arguments without running; returns the
        CompiledKernel (with .asm["ir"] and .asm["ir-opt"]). `remarks=True`
        keeps the compile's optimisation remarks in its `.remarks`."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def compile(self, *args, **kwargs):
        """Same as warmup()."""
        return self.warmup(*args, **kwargs)


KernelInterface.register(JITFunction)


def _extern_libs(libs, kernel_name, gpu):
    """Triton's extern_libs={name: path} as a sorted tuple (part of the cache
    key). As in Triton, every path must name a file when compiling for the
    GPU (Triton reads each one for its cache key); the interpreter, like
    Triton's, does not look. Only 'libdevice' is linked: tk calls no other
    library's functions. An empty path for 'libdevice' leaves the default."""
    if not isinstance(libs, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, os.PathLike)) for k, v in libs.items()
    ):
        raise TypeError(
            f"extern_libs of {kernel_name} must be a dict of library names to paths, "
            f"like {{'libdevice': '/path/libdevice.10.bc'}}, not {libs!r}"
        )
    libs = tuple(sorted((k, os.fspath(v)) for k, v in libs.items() if os.fspath(v)))
    for name, path in libs if gpu else ():
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"extern_libs['{name}'] of {kernel_name}: no file at {path!r}"
            )
    return libs


def _launch_arch(value, kernel_name):
    """Triton's arch= launch option ("sm80", "sm90") as tk's arch: sm_NN, with
    the `a` suffix from 90 on, as Triton compiles for sm_90a; an AMD arch
    (gfx90a, gfx942, gfx1100) as it is."""
    if str(value) in AMD_ARCHS:
        return str(value)
    m = re.fullmatch(r"sm_?(\d+)(a?)", str(value))
    if not m:
        raise ValueError(f"arch of {kernel_name} must have the form sm<NN> (sm80, sm90) or be "
                         f"an AMD arch ({', '.join(AMD_ARCHS)}), not {value!r}")
    number = int(m.group(1))
    return f"sm_{number}{'a' if number >= 90 or m.group(2) else ''}"


def _gpu_arch(launch, kernel_name):
    """The arch a GPU compile is for, which also names its target (an AMD arch:
    amdgcn): the launch options `target=` ("nvptx" or "amdgcn") and `arch=`
    when given, else TK_TARGET and TK_ARCH (target_arch()). `target="amdgcn"`
    alone takes TK_ARCH when that is an AMD arch, else gfx942; `target="nvptx"`
    alone takes TK_ARCH when that is an NVIDIA arch, else device 0's."""
    target, arch = launch.get("target"), launch.get("arch")
    if target is not None and target not in TARGETS:
        raise ValueError(f"target of {kernel_name} must be 'nvptx' or 'amdgcn', not {target!r}")
    if arch is not None:
        arch = _launch_arch(arch, kernel_name)
        if target is not None and (arch in AMD_ARCHS) != (target == "amdgcn"):
            raise ValueError(f"arch {arch!r} of {kernel_name} is not an arch of target "
                             f"{target!r}")
        return arch
    if target is None:
        return target_arch()
    forced = _knob_or_error("TK_ARCH")
    if target == "amdgcn":
        return forced if forced in AMD_ARCHS else DEFAULT_AMD_ARCH
    return forced if forced and forced not in AMD_ARCHS else _nvidia_device_arch()


_Specialization = collections.namedtuple("SpecializationProxy", ["constants", "signature"])


def _specialization(params, constexprs, entries, values):
    """What Triton passes to @jit(repr=...): `signature` maps each parameter
    to its type ("i32", "*fp32", "constexpr" for compile-time values and for
    integers specialised as 1) and `constants` each compile-time one to its
    value. `entries` are the signature entries of the non-constexpr
    parameters, in order."""
    signature, constants, it = {}, {}, iter(entries)
    for i, p in enumerate(params):
        v = values[p.name]
        entry = "constexpr" if i in constexprs else next(it)
        kind, _, fact = entry.partition(":")
        if i in constexprs or fact == "1" or not (kind[:1] in "*iuf" or kind == "bf16"):
            signature[p.name] = "constexpr"
            constants[p.name] = v.value if isinstance(v, constexpr) else (1 if fact == "1" else v)
        else:
            signature[p.name] = kind
    return _Specialization(constants, signature)


def _launch_option(name, value, kernel_name):
    """num_warps or num_stages checked by the compiler's one rule
    (compiler/Compiler.h), on the GPU and the interpreter path alike."""
    if _is_int(value) and -2**62 < value < 2**62 and not _C.launch_option_error(name, int(value)):
        return int(value)
    # 0 is valid for neither, so its answer says what the option must be.
    raise ValueError(f"{name} of {kernel_name} {_C.launch_option_error(name, 0)}, not {value!r}")


def _num_warps(value, kernel_name):
    return 4 if value is None else _launch_option("num_warps", value, kernel_name)


def _num_stages(value, kernel_name):
    """The cp.async ring's depth for loops feeding tk.dot (1: no pipelining);
    0 leaves the compiler's default (3)."""
    return 0 if value is None else _launch_option("num_stages", value, kernel_name)


# The PTX target of each compute capability tk supports; sm_90a is Hopper's
# arch-specific target, whose wgmma instructions tk.dot uses (Triton also
# compiles for sm_90a there). Newer devices get sm_90 PTX, which their
# driver compiles forward.
_ARCH_OF_CAPABILITY = {80: "sm_80", 86: "sm_86", 89: "sm_89", 90: "sm_90a"}
_device_arch = None
# The targets and the AMD archs (lowering/codegen/TargetOptions.h's
# kAMDGPUArchs); an AMD arch compiles for amdgcn and launches through HIP.
TARGETS = ("nvptx", "amdgcn")
AMD_ARCHS = ("gfx90a", "gfx942", "gfx1100")
DEFAULT_AMD_ARCH = "gfx942"


def _knob_or_error(name):
    """A TK_ knob's value, a value it does not take raised as CompilationError."""
    try:
        return _C.knob(name)
    except ValueError as e:
        raise CompilationError(f"error: {e}") from None


def _nvidia_device_arch():
    """Device 0's arch (sm_90a on an H100/H200; sm_90 without a GPU)."""
    global _device_arch
    if _device_arch is None:
        _device_arch = _ARCH_OF_CAPABILITY.get(_C.device_capability(), "sm_90")
    return _device_arch


def target_arch():
    """The arch GPU kernels compile for, which also names the target: TK_ARCH
    when set (sm_80, sm_86, sm_89, sm_90, sm_90a; an AMD arch gfx90a, gfx942
    or gfx1100 selects amdgcn), else with TK_TARGET=amdgcn gfx942, else device
    0's (sm_90a on an H100/H200). TK_TARGET and TK_ARCH naming different
    targets is an error."""
    forced = _knob_or_error("TK_ARCH")
    target = _knob_or_error("TK_TARGET")
    if target and forced and (forced in AMD_ARCHS) != (target == "amdgcn"):
        raise CompilationError(
            f"error: TK_ARCH={forced} is not an arch of TK_TARGET={target} (amdgcn: "
            f"{', '.join(AMD_ARCHS)}; nvptx: sm_80, sm_86, sm_89, sm_90, sm_90a)")
    if forced:
        return forced
    if target == "amdgcn":
        return DEFAULT_AMD_ARCH
    return _nvidia_device_arch()


_MISSING = object()  # a parameter without a default (for the launcher)


def _is_constexpr(annotation):
    if annotation is constexpr:
        return True
    if isinstance(annotation, type) and _triton_objects.is_triton_class(annotation):
        return annotation.__name__ == "constexpr"  # Triton's tl.constexpr
    if isinstance(annotation, str):
        return annotation.split(".")[-1].strip() == "constexpr"
    return False


def jit(fn=None, *, do_not_specialize=None, debug=None, interpret=None, noinline=None,
        launch_metadata=None, repr=None, **unused):
    """@tk.jit or @tk.jit(do_not_specialize=["n"], debug=True, interpret=True).
    `launch_metadata(grid, kernel, args)` names and measures launches for
    tk.profiler; Triton's other options are accepted and ignored."""

    def decorate(f):
        kernel = JITFunction(
            f,
            do_not_specialize=do_not_specialize,
            debug=debug,
            interpret=interpret,
            noinline=noinline,
            repr=repr,
        )
        kernel.launch_metadata = launch_metadata
        return kernel

    return decorate(fn) if fn is not None else decorate


jit._tk_builtin_name = "jit"


#
# Reinterpreted tensors
#


class TensorWrapper:
    """A tensor's memory seen as another dtype (what `tk.reinterpret` makes):
    a kernel receives a pointer to `dtype` at the tensor's address, as in
    Triton; `base` is the tensor itself. Triton's test suite passes unsigned
    and fp8 data this way, in torch tensors of the signed or int8 type of the
    same width."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = base.data
        self.device = base.device
        self.shape = base.shape

    def data_ptr(self):
        return self.base.data_ptr()

    def stride(self, *args):
        return self.base.stride(*args)

    def numel(self):
        return self.base.numel()

    def element_size(self):
        return self.base.element_size()

    def cpu(self):
        return TensorWrapper(self.base.cpu(), self.dtype)

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def __str__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor, dtype):
    """`tensor`'s memory as `dtype` (a tk dtype of the same width, e.g.
    tk.uint8 for an int8 torch tensor), as Triton's: a TensorWrapper, or the
    base tensor itself when `dtype` is its own torch dtype again."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(
        f"tk.reinterpret takes a tensor with data_ptr() (torch, or a TensorWrapper), not a "
        f"{type(tensor).__name__}; for a numpy array use array.view(dtype)"
    )


# Triton's canonical dtype spellings (the keys a program may write, each to
# the signature spelling str_to_ty reads): bool and int1 are "u1", as Triton
# canonicalises every boolean to unsigned.
type_canonicalisation_dict = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8_e4m3fn": "fp8e4nv", "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32",
    "double": "fp64", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "void": "void",
}
for _v in list(type_canonicalisation_dict.values()):
    type_canonicalisation_dict[_v] = _v
del _v
