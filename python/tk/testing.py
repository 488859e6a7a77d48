"""tk.testing: assert_close (anywhere); do_bench, Benchmark and perf_report
(GPU, through torch's CUDA events), with Triton's signatures.

    ms = tk.testing.do_bench(lambda: add(x, y))                 # mean of the timed runs
    lo, med, hi = tk.testing.do_bench(fn, quantiles=[0.2, 0.5, 0.8])

    @tk.testing.perf_report(tk.testing.Benchmark(
        x_names=["N"], x_vals=[2**i for i in range(12, 25)], line_arg="provider",
        line_vals=["tk", "torch"], line_names=["tk", "torch"], ylabel="GB/s",
        plot_name="vector-add", args={}))
    def bench(N, provider): ...
    bench.run(print_data=True, save_path=".")          # a table, and vector-add.png
"""

import numpy as np

from .errors import DriverError
from .runtime.jit import cuda_driver_available


def _to_numpy(x):
    if hasattr(x, "detach"):  # torch: bf16 has no numpy dtype, so widen first
        x = x.detach().cpu()
        if x.is_floating_point():
            x = x.double()
        return x.numpy()
    if hasattr(x, "get") and hasattr(x, "__cuda_array_interface__"):  # CuPy
        x = x.get()
    return np.asarray(x)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Asserts |x - y| <= atol + rtol * |y| elementwise (Triton's defaults:
    atol 1e-2, rtol 0), on numpy arrays, torch tensors (CPU or GPU), CuPy
    arrays or scalars."""
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    a, b = _to_numpy(x), _to_numpy(y)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        a, b = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)


def gpu_available():
    """Whether kernels launch on the GPU here: TK_INTERPRET is not set, torch
    sees a CUDA device and tk's driver loads. The tutorials use it to pick
    torch tensors on the GPU or numpy arrays on the interpreter."""
    from . import _C
    from .runtime.jit import interpret_mode

    if interpret_mode() or not cuda_driver_available():
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available() and _C.gpu_available()[0])


def _torch_cuda():
    if not cuda_driver_available():
        raise DriverError(
            "tk.testing.do_bench times kernels on a GPU, and no CUDA driver was found "
            "(libcuda.so.1 cannot be loaded); it cannot run here"
        )
    try:
        import torch
    except ImportError:
        raise DriverError("tk.testing.do_bench times with torch's CUDA events: install torch")
    if not torch.cuda.is_available():
        raise DriverError("tk.testing.do_bench: torch sees no CUDA device")
    return torch


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Times `fn` on the GPU in milliseconds, as Triton's do_bench does: about
    `warmup` ms of untimed runs, then about `rep` ms of runs, each timed with
    CUDA events and preceded by a 256 MB write that evicts L2. Returns the
    statistic `return_mode` ("mean", "median", "min", "max", "all") or, with
    `quantiles`, those quantiles."""
    torch = _torch_cuda()
    fn()
    torch.cuda.synchronize()
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        cache.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate))
    n_repeat = max(1, int(rep / estimate))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = np.array([s.elapsed_time(e) for s, e in zip(starts, ends)], dtype=np.float64)
    if quantiles is not None:
        q = np.quantile(times, quantiles).tolist()
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return times.tolist()
    return float(getattr(np, return_mode)(times))


class Benchmark:
    """One plot's description, with Triton's fields."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args,
                 xlabel="", ylabel="", x_log=False, y_log=False, styles=None):
        self.x_names, self.x_vals = list(x_names), list(x_vals)
        self.line_arg, self.line_vals, self.line_names = line_arg, list(line_vals), list(line_names)
        self.plot_name, self.args = plot_name, dict(args)
        self.xlabel, self.ylabel = xlabel or x_names[0], ylabel
        self.x_log, self.y_log, self.styles = x_log, y_log, styles


class Mark:
    """What perf_report returns: `.run(print_data=, save_path=, show_plots=)`."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks if isinstance(benchmarks, (list, tuple)) else [benchmarks]

    def run(self, print_data=False, save_path=None, show_plots=False, return_df=False):
        """Runs every point; returns {plot_name: rows}, each row [x, value per
        line] (a value is the middle one of a (mid, lo, hi) result)."""
        results = {}
        for b in self.benchmarks:
            rows = []
            for x in b.x_vals:
                xs = x if isinstance(x, (list, tuple)) else [x] * len(b.x_names)
                kwargs = dict(zip(b.x_names, xs), **b.args)
                row = [xs[0]]
                for line in b.line_vals:
                    value = self.fn(**kwargs, **{b.line_arg: line})
                    row.append(value[0] if isinstance(value, (list, tuple)) else value)
                rows.append(row)
            results[b.plot_name] = rows
            if print_data:
                header = [b.x_names[0]] + list(b.line_names)
                print(b.plot_name + ":")
                print("  ".join(f"{h:>12}" for h in header))
                for row in rows:
                    print("  ".join(f"{v:>12.4g}" if isinstance(v, float) else f"{v:>12}"
                                    for v in row))
            if save_path is not None or show_plots:
                self._plot(b, rows, save_path, show_plots)
        return results

    @staticmethod
    def _plot(b, rows, save_path, show_plots):
        import os

        import matplotlib

        if not show_plots:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = [r[0] for r in rows]
        for i, name in enumerate(b.line_names):
            style = b.styles[i] if b.styles else None
            kwargs = {"color": style[0], "linestyle": style[1]} if style else {}
            ax.plot(xs, [r[i + 1] for r in rows], marker="o", label=name, **kwargs)
        ax.set_xlabel(b.xlabel)
        ax.set_ylabel(b.ylabel)
        ax.set_title(b.plot_name)
        if b.x_log:
            ax.set_xscale("log", base=2)
        if b.y_log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        if save_path is not None:
            os.makedirs(save_path, exist_ok=True)
            fig.savefig(os.path.join(save_path, b.plot_name + ".png"), dpi=110)
        if show_plots:
            plt.show()
        plt.close(fig)


def perf_report(benchmarks):
    """Decorator: `fn(**x, provider=...)` returns a number (or (mid, lo, hi));
    the result has `.run(...)`."""
    return lambda fn: Mark(fn, benchmarks)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Times `fn` as Triton's do_bench_cudagraph does: captured in a CUDA
    graph (torch.cuda.CUDAGraph) on a side stream, the graph replayed so that
    launch overhead is not counted; about `rep` ms of runs. Returns the
    statistic `return_mode` or the `quantiles`, in milliseconds per call."""
    torch = _torch_cuda()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()  # compiles and loads outside the capture
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-6)
        n_repeat = max(1, int(rep / estimate))
        # One graph of n_repeat calls, replayed; each replay's time / n_repeat.
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n_repeat):
                if grad_to_none is not None:
                    for x in grad_to_none:
                        x.grad = None
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_repeat)
    times = np.array(times, dtype=np.float64)
    if quantiles is not None:
        q = np.quantile(times, quantiles).tolist()
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return times.tolist()
    return float(getattr(np, return_mode)(times))
