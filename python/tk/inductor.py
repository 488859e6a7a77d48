"""tk as torch.compile's kernel compiler: `tk.inductor.enable()`.

Inductor keeps writing, caching and autotuning its Triton kernels as it
always does; each kernel's configurations are compiled and launched by tk
instead of Triton (docs/torch.md, "torch.compile with tk's compiler"):

    import tk.inductor
    tk.inductor.enable()
    model = torch.compile(model)

What is swapped is one step of Inductor's CachingAutotuner: the compile of
one configuration (`_precompile_config`), which now returns a compile result
whose launcher calls the tk kernel. The kernel is Inductor's own
`@triton.jit` function given to `tk.jit`; the Triton objects it reads
(`tl`, `triton_helpers`, `libdevice`) are read as tk's
(tk/runtime/_triton_objects.py). A kernel tk cannot compile (an error of its
front end, an option tk lacks) goes to Triton with its reason logged on the
`tk.inductor` logger and kept in `fallbacks()`; a model never fails for
tk's sake, and nothing falls back silently.

Kernels compile in the process that runs the model (Inductor's compile
workers import Triton, not tk): `AsyncCompile.triton` loads each kernel's
module and hands its compile to a pool of threads (tk's compiler releases
the GIL), returning the future Inductor's `wait()` resolves, as its own
process pool does. `disable()` puts back what `enable()` changed.
"""

import hashlib
import logging
import threading

_log = logging.getLogger("tk.inductor")

_state = {"enabled": False, "saved": None}
_fallbacks = []  # (kernel name, reason) of the kernels given to Triton
_compiled = [0]  # configurations compiled by tk
_lock = threading.Lock()

# Inductor's signature types -> torch dtype names (the stand-in pointers of a
# compile ahead of the first launch).
_POINTEE = {
    "fp8e4nv": "torch.float8_e4m3fn", "fp8e5": "torch.float8_e5m2", "fp16": "torch.float16",
    "bf16": "torch.bfloat16", "fp32": "torch.float32", "fp64": "torch.float64",
    "i1": "torch.bool", "i8": "torch.int8", "i16": "torch.int16", "i32": "torch.int32",
    "i64": "torch.int64", "u8": "torch.uint8", "u16": "torch.uint16", "u32": "torch.uint32",
    "u64": "torch.uint64",
}


class Unsupported(Exception):
    """A kernel (or configuration) tk does not take; it goes to Triton."""


class _Pointer:
    """What a GPU compile reads of a tensor argument (its dtype and address),
    standing in for the tensors of the first launch: Inductor compiles every
    configuration before any launch. The address is never dereferenced."""

    def __init__(self, dtype_name, aligned):
        self.dtype = dtype_name
        self._address = 1 << 20 if aligned else (1 << 20) + 4

    def data_ptr(self):
        return self._address


def _stand_in(name, kind, divisible):
    """The stand-in argument for one entry of Inductor's signature."""
    if kind.startswith("*"):
        pointee = _POINTEE.get(kind[1:].lstrip("k"))
        if pointee is None:
            raise Unsupported(f"argument '{name}' has the pointer type '{kind}'")
        return _Pointer(pointee, divisible)
    if kind in ("i32", "u32", "i8", "i16", "u8", "u16"):
        return 16 if divisible else 17
    if kind in ("i64", "u64"):
        return (1 << 33) + (16 if divisible else 17)
    if kind == "i1":
        return True
    if kind in ("fp32", "fp16", "bf16"):
        return 1.5
    raise Unsupported(f"argument '{name}' has the type '{kind}', which tk does not pass")


def _divisible_indices(attrs):
    """The argument indices Inductor marked divisible by 16 ('tt.divisibility'),
    from its attrs {(index,): [['tt.divisibility', 16]], ...}."""
    out = set()
    for key, entries in (attrs or {}).items():
        if any(e and e[0] == "tt.divisibility" for e in entries):
            out.update(key)
    return out


def _tk_kernel(autotuner, interpret=False):
    """The tk JITFunction of an autotuner's Triton kernel, made once; on the
    interpreter for Inductor's CPU Triton kernels."""
    kernel = getattr(autotuner, "_tk_kernel", None)
    if kernel is None:
        from .runtime import jit

        fn = autotuner.fn
        if getattr(fn, "fn", None) is None:
            # compiled in a worker and pickled back without its function
            reload = getattr(autotuner, "_reload_kernel", None)
            if reload is None:
                raise Unsupported("the kernel's Python function is not available")
            fn = reload().fn
        kernel = jit.jit(fn.fn, interpret=True if interpret else None)
        autotuner._tk_kernel = kernel
    return kernel


def compile_config(kernel, signature, constants, attrs, num_warps, num_stages, options=()):
    """Compiles one configuration of an Inductor kernel for the GPU (tk's
    default target, TK_ARCH): `signature` is Inductor's {name: type}
    ('*fp32', 'i32', 'constexpr'), `constants` the constexpr values (the
    config's XBLOCK, ... included). Returns the CompiledKernel; a compile
    error is tk's CompilationError."""
    divisible = _divisible_indices(attrs)
    args = []
    for i, name in enumerate(kernel.arg_names):
        if name in constants:
            args.append(constants[name])
            continue
        kind = signature.get(name)
        if kind is None:
            raise Unsupported(f"argument '{name}' is neither in the signature nor a constant")
        if kind == "constexpr":
            raise Unsupported(f"the constexpr '{name}' has no value")
        args.append(_stand_in(name, kind, i in divisible))
    return kernel.warmup(*args, grid=(1,), num_warps=num_warps, num_stages=num_stages,
                         **dict(options))


def compile_inductor_config(kernel, compile_meta, cfg, options):
    """compile_config from what Inductor's CachingAutotuner holds for
    configuration `cfg`: its compile_meta (signature, constants with cfg's
    block sizes, divisibility) and the options _options() took from it."""
    return compile_config(kernel, compile_meta["signature"], compile_meta["constants"],
                          (compile_meta.get("configs") or [{}])[0], cfg.num_warps,
                          cfg.num_stages, options)


def _options(compile_meta):
    """The compile options of Inductor's compile_meta that tk takes, or
    Unsupported for one it does not."""
    options = {}
    if "enable_fp_fusion" in compile_meta:
        options["enable_fp_fusion"] = bool(compile_meta["enable_fp_fusion"])
    for name in ("launch_cooperative_grid", "launch_pdl"):
        if compile_meta.get(name):
            raise Unsupported(f"the option {name}=True")
    return options


def _compile_result_class():
    from torch._inductor.runtime.triton_heuristics import CompileResult

    class TkCompileResult(CompileResult):
        """One configuration compiled by tk; its launcher calls the tk kernel
        on Inductor's grid and stream."""

        def __init__(self, kernel, compiled, config, compile_meta, inductor_meta, options):
            super().__init__(compiled, config, compile_meta, inductor_meta)
            self.tk_kernel = kernel
            self.compiled = compiled  # None on the interpreter
            self.options = options  # _options(compile_meta)
            # Inductor's name for a binary (its autotune cache and bundler
            # read kernel.hash): tk's kernel (its code-cache file, named by
            # the source's hash, and name), options and configuration.
            code = kernel.fn.__code__
            text = repr((code.co_filename, kernel.fn.__qualname__, sorted(config.kwargs.items()),
                         config.num_warps, config.num_stages, sorted(options.items())))
            # Hex digits, as Triton's hashes are (Inductor re-encodes them).
            self.cache_hash = hashlib.sha256(("tk" + text).encode()).hexdigest()
            (compiled if compiled is not None else self).hash = self.cache_hash
            if compiled is None:
                self.kernel = self  # Inductor reads result.kernel.hash

        def make_launcher(self):
            compiled = self.compiled
            kernel = self.tk_kernel
            call_args, def_args, _ = self._get_arg_lists(kernel.arg_names, kernel.constexprs)
            options = dict(self.options, num_warps=self.config.num_warps,
                           num_stages=self.config.num_stages)

            if compiled is None:  # the interpreter: no stream

                def runner(grid_0, grid_1, grid_2, stream, *args):
                    kernel[(grid_0, grid_1, grid_2)](*args, **options)
            else:

                def runner(grid_0, grid_1, grid_2, stream, *args):
                    kernel[(grid_0, grid_1, grid_2)](*args, stream=stream, **options)

            scope = {"runner": runner}
            launcher = self._gen_launcher_code(
                scope, def_args, ["grid_0", "grid_1", "grid_2", "stream", *call_args]
            )
            launcher.config = self.config
            gpu = compiled is not None
            launcher.n_regs = compiled.n_regs if gpu else 0
            launcher.n_spills = compiled.n_spills if gpu else 0
            launcher.shared = compiled.shared if gpu else 0
            launcher.cache_hash = self.cache_hash
            launcher.store_cubin = False
            return launcher

    return TkCompileResult


def _precompile_config(self, cfg):
    """CachingAutotuner._precompile_config with tk: one configuration compiled
    by tk, or by Triton (original) with the reason logged."""
    original = _state["saved"]["precompile"]
    compile_meta = self._create_compile_meta(cfg)
    name = self.inductor_meta.get("kernel_name", getattr(self.fn, "__name__", "?"))
    try:
        device = compile_meta.get("device_type")
        if device not in ("cuda", "cpu"):
            raise Unsupported(f"the device type '{device}'")
        if self.inductor_meta.get("store_cubin"):
            # AOTInductor packs Triton's cubins into its library
            raise Unsupported("a kernel whose cubin Inductor stores (store_cubin)")
        kernel = _tk_kernel(self, interpret=device == "cpu")
        options = _options(compile_meta)
        if device == "cuda":
            compiled = compile_inductor_config(kernel, compile_meta, cfg, options)
            compiled._init_handles()  # loads it: registers and shared memory for Inductor
        else:
            compiled = None  # the interpreter compiles at the launch
        cls = _state["saved"]["result_class"]
        result = cls(kernel, compiled, cfg, compile_meta, self.inductor_meta, options)
        with _lock:
            _compiled[0] += 1
        return result
    except Exception as e:  # noqa: BLE001 - any failure hands this kernel to Triton
        reason = f"{type(e).__name__}: {e}".strip()
        with _lock:
            _fallbacks.append((name, reason))
        _log.warning("tk.inductor: %s compiles with Triton: %s", name, reason.splitlines()[0])
        return original(self, cfg)


def _threads():
    import os

    return max(1, min(32, os.cpu_count() or 1))


def _async_triton(self, kernel_name, source_code, device_str="cuda"):
    """AsyncCompile.triton with tk: the kernel's module loaded here, its
    configurations compiled on tk's thread pool; a future of the
    CachingAutotuner (Inductor's wait() resolves it), or the autotuner itself
    where Inductor would not wait (compile_threads 1)."""
    from torch._inductor import async_compile
    from torch._inductor.codecache import LambdaFuture, _load_triton_kernel_from_source

    original = _state["saved"]["async_triton"]
    if async_compile.get_compile_threads() <= 1 or device_str not in ("cuda", "cpu"):
        return original(self, kernel_name, source_code, device_str)
    cache = async_compile.CompiledTritonKernels
    future = cache.get(source_code)
    if future is not None:
        return future
    import torch

    compile_id = torch._guards.CompileContext.current_compile_id()
    is_backward = getattr(async_compile.V.graph, "is_backward", False)
    kernel = _load_triton_kernel_from_source(kernel_name, source_code)
    kernel.set_compile_info(compile_id, is_backward)
    task = _state["pool"].submit(kernel.precompile, warm_cache_only=False)

    def result():
        task.result()
        cache.remove_future(source_code)
        return kernel

    future = LambdaFuture(result, future=task)
    cache.save(source_code, future)
    return future


def enable():
    """Makes torch.compile's Inductor compile and launch its Triton kernels
    with tk from now on in this process (see the module docstring)."""
    with _lock:
        if _state["enabled"]:
            return
        from concurrent.futures import ThreadPoolExecutor

        from torch._inductor import async_compile
        from torch._inductor.runtime import triton_heuristics

        _state["saved"] = {
            "precompile": triton_heuristics.CachingAutotuner._precompile_config,
            "async_triton": async_compile.AsyncCompile.triton,
            "result_class": _compile_result_class(),
        }
        if _state.get("pool") is None:
            _state["pool"] = ThreadPoolExecutor(_threads(), thread_name_prefix="tk-inductor")
        triton_heuristics.CachingAutotuner._precompile_config = _precompile_config
        async_compile.AsyncCompile.triton = _async_triton
        _state["enabled"] = True


def disable():
    """Puts back what enable() changed; kernels compiled meanwhile keep
    launching with tk."""
    with _lock:
        if not _state["enabled"]:
            return
        from torch._inductor import async_compile
        from torch._inductor.runtime import triton_heuristics

        saved = _state["saved"]
        triton_heuristics.CachingAutotuner._precompile_config = saved["precompile"]
        async_compile.AsyncCompile.triton = saved["async_triton"]
        _state["enabled"] = False


def enabled():
    return _state["enabled"]


def fallbacks():
    """[(kernel name, reason)] of every configuration given to Triton since
    the process started."""
    with _lock:
        return list(_fallbacks)


def compiled_configs():
    """How many kernel configurations tk has compiled for Inductor in this
    process."""
    with _lock:
        return _compiled[0]
