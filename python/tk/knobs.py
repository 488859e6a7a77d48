"""tk.knobs: Triton's `triton.knobs`, backed by tk's knob table.

    from tk import knobs
    knobs.runtime.interpret = True        # the same as TK_INTERPRET=1
    knobs.cache.dir                       # TK_CACHE_DIR, parsed as the C++ side parses it
    with knobs.runtime.scope():           # changes inside are undone on exit
        knobs.runtime.override_arch = "sm80"    # TK_ARCH=sm_80 (Triton's spelling accepted)

Each knob set (`cache`, `compilation`, `runtime`, `language`, `autotuning`,
`nvidia`, `amd`, `build`, `proton`) is a `base_knobs` with Triton's fields.
A field backed by a TK_ variable of support/Knobs.def reads it through
`tk._C.knob` (one parser for C++ and Python) and, when set, writes the
variable into `os.environ`, which tk reads at each compile and launch; its
`knob_descriptors` entry names the variable (`.key`), so Triton's test
fixtures that clear knobs by their variables clear tk's. A field with no TK_
variable (Triton options tk has no use for, such as `runtime.debug`
or the runtime hooks) keeps its value in the knob set only; docs/python.md
lists them.
"""

import contextlib
import copy as _copy
import os
import re
import shutil
import subprocess

from . import _C

_MISSING = object()
propagate_env = True  # tk's knobs always live in the environment (see above)


class env_knob:
    """A field backed by a TK_ variable: `key` is its name. `to_env` turns a
    value set from Python into the variable's text; `from_python` maps
    Triton's spellings onto tk's (override_arch "sm80" -> "sm_80")."""

    def __init__(self, key, to_env=str, from_env=None):
        self.key = key
        self.to_env = to_env
        self.from_env = from_env

    def get(self):
        value = _C.knob(self.key)
        return self.from_env(value) if self.from_env else value

    def set(self, value):
        if value is None:
            os.environ.pop(self.key, None)
        else:
            os.environ[self.key] = self.to_env(value)


def _bool_env(value):
    return "1" if value else "0"


def _arch_env(value):
    """Triton's arch spellings ("sm90", "90", "sm_90a") as TK_ARCH's ("sm_90")."""
    text = str(value)
    m = re.fullmatch(r"(?:sm_?)?(\d+)(a?)", text)
    return f"sm_{m.group(1)}{m.group(2)}" if m else text


class base_knobs:
    """One set of knobs. Fields are class attributes: an `env_knob` for those
    backed by a TK_ variable, a plain default for the others."""

    def __init__(self):
        self._values = {}

    @property
    def knob_descriptors(self):
        """{field: env_knob} of the fields backed by TK_ variables."""
        return {
            name: value
            for klass in reversed(type(self).__mro__)
            for name, value in vars(klass).items()
            if isinstance(value, env_knob)
        }

    def _defaults(self):
        out = {}
        for klass in reversed(type(self).__mro__):
            for name, value in vars(klass).items():
                if not name.startswith("_") and not callable(value) and not isinstance(
                        value, (env_knob, property, staticmethod, classmethod)):
                    out[name] = value
        return out

    @classmethod
    def _field(cls, name):
        """The class attribute `name` (an env_knob or a default), or a miss."""
        for klass in cls.__mro__:
            if name in vars(klass):
                return vars(klass)[name]
        return _MISSING

    def __getattribute__(self, name):
        if not name.startswith("_"):
            field = type(self)._field(name)
            if isinstance(field, env_knob):
                return field.get()
            values = object.__getattribute__(self, "_values")
            if name in values:
                return values[name]
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        field = type(self)._field(name)
        if isinstance(field, env_knob):
            field.set(value)
            return
        if field is _MISSING or callable(field) or isinstance(field, property):
            raise AttributeError(
                f"knobs.{type(self).__name__.removesuffix('_knobs')} has no knob '{name}' "
                f"(tk has: {', '.join(sorted(set(self._defaults()) | set(self.knob_descriptors)))})"
            )
        self._values[name] = value

    def copy(self):
        other = _copy.copy(self)
        object.__setattr__(other, "_values", dict(self._values))
        return other

    def reset(self):
        """Back to the defaults (the environment, for TK_ fields); returns self."""
        self._values.clear()
        return self

    @contextlib.contextmanager
    def scope(self):
        """Undoes every change made to this knob set (and its TK_ variables)
        inside the `with` block."""
        values = dict(self._values)
        env = {d.key: os.environ.get(d.key) for d in self.knob_descriptors.values()}
        try:
            yield self
        finally:
            self._values = values
            for key, value in env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


class cache_knobs(base_knobs):
    dir = env_knob("TK_CACHE_DIR")
    dump_dir = None
    override_dir = None
    home_dir = None


class compilation_knobs(base_knobs):
    always_compile = env_knob("TK_ALWAYS_COMPILE", _bool_env)
    dump_ir = None
    override = False
    use_ir_loc = None
    disable_line_info = False
    front_end_debugging = False
    allow_non_constexpr_globals = False


class runtime_knobs(base_knobs):
    interpret = env_knob("TK_INTERPRET", _bool_env)
    override_arch = env_knob("TK_ARCH", _arch_env, lambda v: v or None)
    target = env_knob("TK_TARGET", str, lambda v: v or None)  # "nvptx", "amdgcn" or None
    debug = False
    launch_enter_hook = None
    launch_exit_hook = None
    jit_cache_hook = None
    jit_post_compile_hook = None
    add_stages_inspection_hook = None


class language_knobs(base_knobs):
    fp32_default = None
    default_fp_fusion = env_knob("TK_DEFAULT_FP_FUSION", _bool_env)


class autotuning_knobs(base_knobs):
    print = env_knob("TK_PRINT_AUTOTUNING", _bool_env)
    cache = env_knob("TK_AUTOTUNE_CACHE", _bool_env)


class _ptxas:
    """knobs.nvidia.ptxas: the ptxas tk uses (TK_PTXAS_PATH, else
    $CUDA_HOME/bin, /usr/local/cuda/bin, PATH), its `path` and `version`
    ("13.0"), or None for both where there is none."""

    @property
    def path(self):
        forced = _C.knob("TK_PTXAS_PATH")
        if forced:
            return forced
        for folder in (os.path.join(os.environ.get("CUDA_HOME", ""), "bin"), "/usr/local/cuda/bin"):
            candidate = os.path.join(folder, "ptxas")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return shutil.which("ptxas")

    @property
    def version(self):
        path = self.path
        if path is None:
            return None
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        m = re.search(r"release (\d+\.\d+)", out)
        return m.group(1) if m else None


class nvidia_knobs(base_knobs):
    libdevice_path = env_knob("TK_LIBDEVICE_PATH")
    ptxas = _ptxas()
    dump_ptxas_log = False
    mock_ptx_version = None


class amd_knobs(base_knobs):
    pass


class build_knobs(base_knobs):
    pass


class proton_knobs(base_knobs):
    pass


cache = cache_knobs()
compilation = compilation_knobs()
runtime = runtime_knobs()
language = language_knobs()
autotuning = autotuning_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
build = build_knobs()
proton = proton_knobs()
