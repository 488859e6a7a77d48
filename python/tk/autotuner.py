"""tk.Config, @tk.autotune and @tk.heuristics, with Triton's signatures.

    @tk.autotune(configs=[tk.Config({"BLOCK": 128}, num_warps=4),
                          tk.Config({"BLOCK": 256}, num_warps=8)], key=["n"])
    @tk.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
    @tk.jit
    def kernel(x_ptr, n, BLOCK: tk.constexpr, EVEN: tk.constexpr): ...

@tk.heuristics computes constexpr arguments from the others at every launch.
@tk.autotune picks one of its configs and passes its values as constexprs
and launch options. Timing configs needs a GPU; until the GPU launch path
exists (and always in interpreter mode) the tuner takes the first config that
survives prune_configs_by's early_config_prune, and says so with
TK_PRINT_AUTOTUNING=1.
"""

import sys

from .runtime import KernelInterface, _env_flag


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


class Autotuner(KernelInterface):
    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None):
        self.fn = fn
        self.arg_names = _innermost(fn).arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook = pre_hook
        self.post_hook = post_hook
        self.best_config = None
        self.__name__ = getattr(fn, "__name__", "kernel")
        unknown = [k for k in self.keys if k not in self.arg_names]
        if unknown:
            raise TypeError(f"autotune key of '{self.__name__}' names {unknown}, which are not "
                            f"parameters ({', '.join(self.arg_names)})")

    def _choose(self, named, kwargs):
        configs = self.configs
        prune = self.prune_configs_by.get("early_config_prune")
        if prune is not None:
            configs = list(prune(configs, named, **kwargs)) or configs
        return configs[0]

    def run(self, *args, grid, warmup=False, **kwargs):
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        config = self._choose(named, kwargs)
        conflicts = sorted(set(config.kwargs) & set(kwargs))
        if conflicts:
            raise ValueError(
                f"Conflicting meta-parameters: {', '.join(conflicts)}. Make sure that you don't "
                "re-define auto-tuned symbols."
            )
        self.best_config = config
        if _env_flag("TK_PRINT_AUTOTUNING"):
            key = {k: named.get(k) for k in self.keys}
            print(f"tk autotuning: {self.__name__} {key}: {config} (first config; timing needs a "
                  "GPU)", file=sys.stderr)
        launch = {**config.all_kwargs(), **kwargs}
        if config.pre_hook is not None and not warmup:
            config.pre_hook({**named, **launch})
        return self.fn.run(*args, grid=grid, warmup=warmup, **launch)

    def warmup(self, *args, grid=None, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


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
             do_bench=None, cache_results=False):
    """@tk.autotune(configs=[tk.Config(...)], key=["n"]): see the module docstring."""

    def decorate(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value,
                         pre_hook, post_hook)

    return decorate


def heuristics(values):
    """@tk.heuristics({"NAME": lambda args: ...}): constexprs computed at launch."""

    def decorate(fn):
        return Heuristics(fn, values)

    return decorate


autotune._tk_builtin_name = "autotune"
heuristics._tk_builtin_name = "heuristics"
