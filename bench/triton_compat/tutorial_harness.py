"""Runs one upstream tutorial's correctness part, as the runner's subprocess.

    python3 tutorial_harness.py IMPL FILE      # IMPL: tk or triton; cwd: the temporary copy

The tutorial runs as `__main__` (runpy), so its module-level checks run as
they do for a user: each prints its comparison or asserts. Its benchmarks do
not: every `perf_report(...)` object's `.run()` prints one line saying it was
not run and returns. That is the only change, and it is made to the testing
module of the implementation under test (tk.testing or triton.testing) in
this process, never to the tutorial's text. Exit status 0 when the tutorial
ran to its end, 1 when it raised (the traceback on stderr).
"""

import importlib
import runpy
import sys
import traceback


def skipped_run(self, *args, **kwargs):
    """Mark.run of a perf_report object: says which benchmarks were not run."""
    # Triton's perf_report takes one Benchmark or a list of them.
    benches = getattr(self, "benchmarks", [])
    if not isinstance(benches, (list, tuple)):
        benches = [benches]
    names = [getattr(b, "plot_name", "?") for b in benches]
    print(f"[triton_compat] benchmark {', '.join(names) or '?'} not run (correctness only)")


class BenchmarksBegin(Exception):
    """Raised by the profiler's start(): the tutorial's checks are behind it."""


def stopped_start(*args, **kwargs):
    print("[triton_compat] profiled benchmarks not run (correctness only)")
    raise BenchmarksBegin


def main():
    impl, path = sys.argv[1], sys.argv[2]
    testing = importlib.import_module(f"{impl}.testing")

    testing.Mark.run = skipped_run
    try:
        profiler = importlib.import_module(f"{impl}.profiler")
    except ImportError:
        profiler = None
    if profiler is not None:
        profiler.start = stopped_start
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except BenchmarksBegin:
        return 0
    except SystemExit as e:
        return 0 if e.code in (None, 0) else 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
