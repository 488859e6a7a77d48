"""tk.Config, @tk.autotune and @tk.heuristics, with Triton's semantics.

    @tk.autotune(configs=[tk.Config({"BLOCK": 128}, num_warps=4),
                          tk.Config({"BLOCK": 256}, num_warps=8)], key=["n"])
    @tk.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @tk.jit
    def kernel(x_ptr, n, BLOCK: tk.constexpr, EVEN: tk.constexpr): ...

@tk.heuristics computes constexpr arguments from the others at every launch,
with no benchmarking. @tk.autotune picks one of its configs for each value of
the key and passes the config's values as constexprs and its num_warps /
num_stages as launch options.

The key is the values of the `key` arguments plus the dtype of every tensor
argument. On the first launch of a new key the configs that survive
`prune_configs_by` (early_config_prune, then perf_model + top_k) are each
timed with CUDA events (warm-up, repetitions, median: `warmup` and `rep` in
milliseconds, 25 and 100 by default), and the fastest is used from then on. A
config that fails to compile or launch (out of resources, a compile error)
is unusable; its reason is kept and listed if no config is usable.
`reset_to_zero` names tensor arguments zeroed before each timed launch and
`restore_value` ones saved before tuning and restored after each config, so
in-place kernels tune correctly.

Before timing, the surviving configs compile in parallel (TK_COMPILE_THREADS
threads, by default one per config up to the machine's cores; 1 compiles
each right before its benchmark), as the C++ tuner does.

The tuning itself (pruning bookkeeping, scoring, the disk cache, progress)
is the C++ autotuner of runtime/Autotuner.h, shared with the C++ API and tkc
--aot. Results persist under $TK_CACHE_DIR/autotune/, keyed by the kernel's
source (and its helpers and globals), the key, the config list and the GPU,
so a second process does not tune again; `cache_results=False` turns that off
(as does any config with a pre_hook, as in Triton). While tuning, a progress
line goes to stderr when it is a terminal; TK_PRINT_AUTOTUNING=1 prints the
winner and the time spent.

Every config's output is checked (beyond Triton, as Helion does: some
configs run but compute something else): before its timing, each config
runs once on the arguments as they were before tuning (every argument the
kernel may store to is restored to that), and what it stored is compared
with the first usable config's, within the tolerance of each dtype
(runtime/ResultCheck.h). A config that differs is rejected, with the first
differing element; a config whose kernel spills registers (local memory
after loading) is reported, and rejected with `reject_spills=True`. Both
are warned about (RuntimeWarning) and kept in `rejected` and `reports`.
`check_outputs=False` skips the comparison.

Interpreter mode (TK_INTERPRET=1): configs are not timed unless
TK_AUTOTUNE_INTERPRET=1 asks for it (then each is run on the interpreter and
timed by the wall clock, which says little about a GPU); otherwise the first
config that survives the prune is used.
"""

import concurrent.futures
import ctypes
import sys
import time
import warnings

from . import _C, check
from .runtime.jit import (
    KernelInterface,
    _argument_array,
    _Closure,
    _env_flag,
    cuda_driver_available,
    interpret_mode,
)


class Config:
    """One point of an autotuning space: constexpr values and launch options."""

    _tk_builtin_name = "Config"

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self):
        """The constexprs and the launch options, as keyword arguments."""
        options = {"num_warps": self.num_warps, "num_stages": self.num_stages}
        if self.num_ctas != 1:
            options["num_ctas"] = self.num_ctas
        if self.maxnreg is not None:
            options["maxnreg"] = self.maxnreg
        return {**self.kwargs, **options}

    def __repr__(self):
        items = [f"{k}: {v}" for k, v in self.kwargs.items()]
        items += [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}"]
        return ", ".join(items)


def _innermost(fn):
    while not hasattr(fn, "arg_names"):
        fn = fn.fn
    return fn


def _jit_function(fn):
    while not hasattr(fn, "cache"):
        fn = fn.fn
    return fn


def _dtype_text(value):
    dtype = getattr(value, "dtype", None)
    return None if dtype is None else str(dtype)


def _print_progress(p):
    """The default progress callback: a line on stderr while tuning when it is
    a terminal; the winner with TK_PRINT_AUTOTUNING=1; a RuntimeWarning for
    each config rejected or reported (another result, spills)."""
    if p["finished"]:
        for line in p.get("reports", ()):
            warnings.warn(f"tk autotune {p['kernel']} [{p['key']}]: {line}", RuntimeWarning,
                          stacklevel=2)
    if sys.stderr.isatty() and not p["from_cache"] and p["total"]:
        sys.stderr.write(
            f"\rtk autotune {p['kernel']} [{p['done']}/{p['total']}] best "
            f"{p['best_ms']:.4f} ms ({p['best_config']}) {p['elapsed']:.1f} s\033[K"
        )
        if p["finished"]:
            sys.stderr.write("\n")
    if _env_flag("TK_PRINT_AUTOTUNING") and p["finished"]:
        spent = "from the cache, no tuning" if p["from_cache"] else f"tuned in {p['elapsed']:.3f} s"
        print(
            f"tk autotuning: {p['kernel']} [{p['key']}]: best {p['best_config']}: "
            f"{p['best_ms']:.4f} ms; {spent}",
            file=sys.stderr,
        )


class Autotuner(KernelInterface):
    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None, warmup=None, rep=None,
                 cache_results=None, do_bench=None, check_outputs=True, reject_spills=False):
        self.fn = fn
        self.check_outputs = bool(check_outputs)
        self.reject_spills = bool(reject_spills)
        self.rejected = {}  # Config -> why it was rejected (its output, its spills)
        self.reports = []  # the tuner's report lines of the last tuning
        self.arg_names = _innermost(fn).arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook = pre_hook
        self.post_hook = post_hook
        self.warmup_ms = 25.0 if warmup is None else float(warmup)
        self.rep_ms = 100.0 if rep is None else float(rep)
        self.do_bench = do_bench
        # tk's design persists results by default; Triton's cache_results=False
        # (explicit) and configs with pre_hooks (not part of any key) turn it off.
        self.disk_cache = cache_results is not False and not any(
            c.pre_hook is not None for c in self.configs
        )
        self.cache = {}  # key tuple -> Config
        self._tuned_names = set().union(*(c.kwargs for c in self.configs))
        self.best_config = None
        self.configs_timings = None
        self._tuner = None
        self.__name__ = getattr(fn, "__name__", "kernel")
        # A key naming no parameter is ignored, as Triton ignores it (the
        # grouped-GEMM tutorial upstream has such a typo); the tensors to reset
        # or restore must exist.
        for what, names in (("reset_to_zero", self.reset_to_zero),
                            ("restore_value", self.restore_value)):
            unknown = [k for k in names if k not in self.arg_names]
            if unknown:
                raise TypeError(f"autotune {what} of '{self.__name__}' names {unknown}, which are "
                                f"not parameters ({', '.join(self.arg_names)})")

    # The C++ tuner, made on the first tuning (it needs the kernel's identity).
    def _cpp_tuner(self):
        if self._tuner is None:
            closure = _Closure(_jit_function(self.fn))
            identity = _C.hash_text(repr(closure.key()))
            configs = [(c.kwargs, int(c.num_warps), int(c.num_stages)) for c in self.configs]
            interpreting = interpret_mode(_jit_function(self.fn))
            device = "" if interpreting or not cuda_driver_available() else _C.device_name()
            # Interpreter timings are not worth keeping across processes.
            self._tuner = _C.Autotuner(self.__name__, identity, configs, device or "interpreter",
                                       "", self.disk_cache and not interpreting,
                                       self.reject_spills)
        return self._tuner

    def _key(self, named):
        values = [(k, repr(named[k])) for k in self.keys if k in named]
        dtypes = [(n, _dtype_text(v)) for n, v in named.items() if _dtype_text(v) is not None]
        return tuple(values), tuple(dtypes)

    def _prune(self, named, kwargs):
        """Indices of the configs to try: early_config_prune, then perf_model
        with top_k (Triton's order)."""
        configs = list(self.configs)
        early = self.prune_configs_by.get("early_config_prune")
        if early is not None:
            configs = list(early(configs, named, **kwargs))
            if not configs:
                raise ValueError(f"autotune of '{self.__name__}': early_config_prune returned no "
                                 "configs (it must keep at least one)")
        perf_model = self.prune_configs_by.get("perf_model")
        top_k = self.prune_configs_by.get("top_k")
        if perf_model is not None and top_k is not None:
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            est = [(perf_model(**{**named, **c.all_kwargs()}), i) for i, c in enumerate(configs)]
            configs = [configs[i] for _, i in sorted(est)[:top_k]]
        index = {id(c): i for i, c in enumerate(self.configs)}
        return [index[id(c)] for c in configs if id(c) in index] or [0]

    def _bench(self, args, named, kwargs, grid, config):
        """Milliseconds of one config: CUDA events on the GPU, the wall clock
        in the interpreter."""
        launch_kwargs = {**config.all_kwargs(), **kwargs}

        def zero():
            for name in self.reset_to_zero:
                value = named[name]
                if hasattr(value, "zero_"):
                    value.zero_()  # torch
                else:
                    value.fill(0)  # numpy, cupy

        def call():
            if config.pre_hook is not None:
                config.pre_hook({**named, **launch_kwargs})
            self.fn.run(*args, grid=grid, **launch_kwargs)

        if interpret_mode(_jit_function(self.fn)):
            zero()
            start = time.perf_counter()
            call()
            return (time.perf_counter() - start) * 1000.0
        # Timed launches are not checked (TK_CHECK=1): the time would be the check's.
        with check.suspended():
            if self.do_bench is not None:
                ms = float(self.do_bench(lambda: (zero(), call())))
            else:
                ms = _C.bench_gpu(call, zero if self.reset_to_zero else None, self.warmup_ms,
                                  self.rep_ms)
        # Spills: the local memory per thread of the kernel this config ran.
        kernel = self.fn.warmup(*args, grid=grid, **launch_kwargs)
        local = kernel._load()["local_bytes"] if hasattr(kernel, "_load") else -1
        return ms, int(local)

    def _compile_all(self, args, kwargs, grid, keep):
        """Compiles (and on the GPU loads) the surviving configs on a thread
        pool before any is timed, as the C++ tuner does: TK_COMPILE_THREADS
        threads, else one per config up to the machine's (_C.compile_threads).
        The compiler and the driver's JIT run without the GIL, so the threads
        overlap; a config that fails here is left for its benchmark to score
        (with the same error).

        Ctrl-C reaches only the main thread, waiting here: the KeyboardInterrupt
        (or any exception) cancels the pool's compiles (_C.CompileCancel: each
        ends at its next poll, within 10 ms, and caches nothing) and the ones
        not started, and propagates once every thread has ended."""
        threads = _C.compile_threads(len(keep))
        if threads <= 1 or len(keep) <= 1:
            return
        gpu = not interpret_mode(_jit_function(self.fn))
        cancel = _C.CompileCancel()

        def compile_one(i):
            _C.set_compile_cancel(cancel)
            try:
                launch_kwargs = {**self.configs[i].all_kwargs(), **kwargs}
                return self.fn.warmup(*args, grid=grid, **launch_kwargs)
            except Exception:  # noqa: BLE001 - the benchmark reports it
                return None
            finally:
                _C.set_compile_cancel(None)

        def load_one(kernel):
            try:
                kernel._load()
            except Exception:  # noqa: BLE001 - the benchmark reports it
                pass

        pool = concurrent.futures.ThreadPoolExecutor(threads)
        try:
            kernels = list(pool.map(compile_one, keep))
            if gpu:
                # One load per distinct kernel (two configs may compile to one).
                unique = {id(k): k for k in kernels if k is not None and hasattr(k, "_load")}
                list(pool.map(load_one, unique.values()))
        except BaseException:
            cancel.cancel()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _tune(self, args, named, kwargs, grid, key_text):
        keep = self._prune(named, kwargs)
        tuner = self._cpp_tuner()
        self._compile_all(args, kwargs, grid, keep)
        saved = {}
        for name in self.restore_value:
            value = named[name]
            saved[name] = value.clone() if hasattr(value, "clone") else value.copy()

        def restore():
            for name, copy in saved.items():
                if hasattr(named[name], "copy_"):
                    named[name].copy_(copy)  # torch
                else:
                    named[name][...] = copy  # numpy, cupy

        outputs = _Outputs(self, args, named, kwargs, grid, keep) if self.check_outputs else None

        def bench(i):
            try:
                if outputs is not None:
                    outputs.capture(i)
                return self._bench(args, dict(named), kwargs, grid, self.configs[i])
            finally:
                restore()

        reports = []

        def progress(p):
            if p["finished"]:
                reports[:] = p["reports"]
            _print_progress(p)

        best, trials, seconds, _ = tuner.tune(key_text, bench, keep, progress,
                                              outputs.check if outputs is not None else None)
        self.reports = reports
        self.rejected = {self.configs[i]: t["reason"] for i, t in enumerate(trials)
                         if t["rejected"]}
        self.configs_timings = {self.configs[i]: t["ms"] if t["usable"] else float("inf")
                                for i, t in enumerate(trials)}
        return self.configs[best]

    def _choose(self, args, named, kwargs, grid):
        conflicts = sorted(self._tuned_names & set(kwargs))
        if conflicts:
            raise ValueError(
                f"Conflicting meta-parameters: {', '.join(conflicts)}. Make sure that you don't "
                "re-define auto-tuned symbols."
            )
        values, dtypes = self._key(named)
        cache_key = (values, dtypes)
        config = self.cache.get(cache_key)
        if config is not None:
            return config
        interpreting = interpret_mode(_jit_function(self.fn))
        if len(self.configs) == 1:
            config = self.configs[0]
        elif interpreting and not _env_flag("TK_AUTOTUNE_INTERPRET"):
            config = self.configs[self._prune(named, kwargs)[0]]
            if _env_flag("TK_PRINT_AUTOTUNING"):
                print(f"tk autotuning: {self.__name__} {dict(values)}: {config} (first config: "
                      "the interpreter does not time configs unless TK_AUTOTUNE_INTERPRET=1)",
                      file=sys.stderr)
        elif not interpreting and not cuda_driver_available():
            config = self.configs[0]  # the launch itself raises the DriverError that explains
        else:
            key_text = _C.autotune_key([(k, v) for k, v in values], list(dtypes))
            config = self._tune(args, named, kwargs, grid, key_text)
        self.cache[cache_key] = config
        return config

    def run(self, *args, grid, warmup=False, **kwargs):
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        config = self._choose(args, named, kwargs, grid)
        self.best_config = config
        launch = {**config.all_kwargs(), **kwargs}
        if config.pre_hook is not None and not warmup:
            config.pre_hook({**named, **launch})
        result = self.fn.run(*args, grid=grid, warmup=warmup, **launch)
        if self.post_hook is not None and not warmup:
            self.post_hook({**named, **launch}, None)
        return result

    def warmup(self, *args, grid=None, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


class _Outputs:
    """What each config stores, for the tuner's output check: the memory of
    every argument a config's kernel may store to (analysis/StoredArguments.h),
    saved before tuning, put back before each config's check run, and copied
    after it."""

    def __init__(self, tuner, args, named, kwargs, grid, keep):
        self.tuner, self.args, self.named, self.kwargs, self.grid = tuner, args, named, kwargs, grid
        self.gpu = not interpret_mode(_jit_function(tuner.fn))
        names = set()
        for i in keep:
            try:
                k = tuner.fn.warmup(*args, grid=grid, **{**tuner.configs[i].all_kwargs(), **kwargs})
            except Exception:  # noqa: BLE001 - its benchmark reports it
                continue
            compiled = k._compiled
            names |= {n for n, s in zip(compiled.argument_names, compiled.stored_arguments) if s}
        self.spans = {}  # name -> (dtype, base, span, offset)
        for name in sorted(names):
            self.spans[name] = self._span(name, _argument_array(named, name))
        self.original = {name: self._read(name) for name in self.spans}
        self.stored = {}  # config index -> {name: bytes}

    def _span(self, name, value):
        from .runtime.jit import _array_info, _gpu_array_info

        kernel = self.tuner.__name__
        if self.gpu:
            dt, _ = _gpu_array_info(name, value, kernel)
            base, span, offset = check._memory(name, value, kernel)
            return dt, base, span, offset
        dt, base, span, offset, _ = _array_info(name, value, kernel)
        return dt, base, span, offset

    def _read(self, name):
        _, base, span, _ = self.spans[name]
        out = bytearray(span)
        if not span:
            return out
        host = (ctypes.c_char * span).from_buffer(out)
        if self.gpu:
            _C._copy_from_device(ctypes.addressof(host), base, span)
        else:
            ctypes.memmove(host, base, span)
        return out

    def _write(self, name, data):
        _, base, span, _ = self.spans[name]
        if not span:
            return
        host = (ctypes.c_char * span).from_buffer(data)
        if self.gpu:
            _C._copy_to_device(base, ctypes.addressof(host), span)
        else:
            ctypes.memmove(base, host, span)

    def restore_all(self):
        for name, data in self.original.items():
            self._write(name, data)

    def capture(self, i):
        """Config i once, on the arguments as they were before tuning."""
        self.restore_all()
        for name in self.tuner.reset_to_zero:
            value = self.named[name]
            value.zero_() if hasattr(value, "zero_") else value.fill(0)
        config = self.tuner.configs[i]
        launch = {**config.all_kwargs(), **self.kwargs}
        if config.pre_hook is not None:
            config.pre_hook({**self.named, **launch})
        with check.suspended():
            self.tuner.fn.run(*self.args, grid=self.grid, **launch)
        self.stored[i] = {name: self._read(name) for name in self.spans}

    def check(self, i, reference):
        """'' when config i stored what the reference did, else the first
        difference."""
        mine = self.stored.get(i)
        if i == reference:
            return "" if mine is not None else "its output was not captured"
        theirs = self.stored[reference]
        try:
            for name, (dt, _, _, offset) in self.spans.items():
                d = _C.first_difference(mine[name], theirs[name], dt)
                if d is not None:
                    index, got, expected, why = d
                    size = _C.dtype_bytes(dt)
                    return (f"element {(index * size - offset) // size} of '{name}' is {got}, "
                            f"config [{reference}]'s is {expected} ({why})")
            return ""
        finally:
            self.stored.pop(i, None)


class Heuristics(KernelInterface):
    def __init__(self, fn, values):
        self.fn = fn
        self.values = dict(values)
        self.arg_names = _innermost(fn).arg_names
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, grid, warmup=False, **kwargs):
        for name, heuristic in self.values.items():
            named = dict(zip(self.arg_names, args))
            named.update(kwargs)
            kwargs[name] = heuristic(named)
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    def warmup(self, *args, grid=None, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=None, check_outputs=True, reject_spills=False):
    """@tk.autotune(configs=[tk.Config(...)], key=["n"]): see the module docstring.
    Beyond Triton: check_outputs (compare every config's output with the
    first usable config's) and reject_spills (reject configs that spill)."""

    def decorate(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value,
                         pre_hook, post_hook, warmup, rep, cache_results, do_bench,
                         check_outputs, reject_spills)

    return decorate


def heuristics(values):
    """@tk.heuristics({"NAME": lambda args: ...}): constexprs computed at launch."""

    def decorate(fn):
        return Heuristics(fn, values)

    return decorate


autotune._tk_builtin_name = "autotune"
heuristics._tk_builtin_name = "heuristics"
