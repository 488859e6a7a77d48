"""Issue 6's Python speed benchmark, one run on the GPU machine.

1. Host time per launch of a 4-argument kernel (x, y, out, n; BLOCK a
   constexpr) from Python, measured as Triton measures it: a loop of N
   launches and one synchronize at the end, the time divided by N; best of
   several repetitions. tk's kernel[grid](...) against Triton 3.6's and, for
   reference, a CuPy RawKernel launch of the same work (CUDA C, nvrtc).
2. First call of a new kernel in a fresh process, compile included: the
   softmax of tutorials/02 (a 1024-wide row) in a subprocess with
   CUDA_CACHE_DISABLE=1 and an empty TK_CACHE_DIR (Triton: an empty
   TRITON_CACHE_DIR), from the launch to the end of the synchronize after it;
   then a second process on the same (now warm) cache directory.
3. The GPU-marked pytest (tests/python -m gpu), pass/fail counts.

    PYTHONPATH=gpu-bundle-py python3 -u bench/python_launch_bench.py --out-dir $OUT \
        --commit abc1234

writes python-launch.json and python-launch.md to --out-dir and prints them.
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The child of part 2: one softmax launch, timed from the call to the end of
# the synchronize after it.
COLD_CHILD = r'''
import os, sys, time, json
t_start = time.perf_counter()
import torch
which = sys.argv[1]
x = torch.randn(4096, 1000, device="cuda")
y = torch.empty_like(x)
torch.cuda.synchronize()
t_imported = time.perf_counter()
parts = {}
if which == "tk":
    import tk
    import tk.runtime as rt
    t_imported = time.perf_counter()

    # Where the first call's time goes: each step timed where tk does it.
    def timed(owner, name, label):
        inner = getattr(owner, name)

        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                parts[label] = parts.get(label, 0.0) + (time.perf_counter() - t) * 1e3
        setattr(owner, name, wrapper)

    timed(rt, "cuda_driver_available", "find libcuda (ctypes)")
    timed(rt._FunctionSource, "__init__", "read source (inspect)")
    timed(rt._Closure, "__init__", "globals and helpers")
    timed(tk._C, "compile", "compile or disk cache (_C.compile)")
    timed(rt.CompiledKernel, "_load", "load: driver init, cubin, module")
    timed(rt.JITFunction, "_gpu_compile", "python side in total")
    if os.environ.get("TK_BENCH_DRIVER_FIRST"):
        # tk's driver set-up (dlopen libcuda, cuInit, primary context,
        # device limits) before the timed call, to see its share.
        t = time.perf_counter()
        tk._C.gpu_available()
        parts["driver set-up before the call (_C.gpu_available)"] = (time.perf_counter() - t) * 1e3

    @tk.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tk.constexpr):
        r = tk.program_id(0)
        c = tk.arange(0, BLOCK)
        v = tk.load(in_ptr + r * in_stride + c, mask=c < n_cols, other=-float("inf"))
        e = tk.exp(v - tk.max(v, axis=0))
        tk.store(out_ptr + r * out_stride + c, e / tk.sum(e, axis=0), mask=c < n_cols)
else:
    import triton
    import triton.language as tl
    t_imported = time.perf_counter()

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(in_ptr + r * in_stride + c, mask=c < n_cols, other=-float("inf"))
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + r * out_stride + c, e / tl.sum(e, axis=0), mask=c < n_cols)
t0 = time.perf_counter()
softmax_kernel[(4096,)](y, x, x.stride(0), y.stride(0), 1000, BLOCK=1024)
torch.cuda.synchronize()
t1 = time.perf_counter()
err = float((y - torch.softmax(x, dim=1)).abs().max())
if which == "tk":
    t2 = time.perf_counter()
    softmax_kernel[(4096,)](y, x, x.stride(0), y.stride(0), 1000, BLOCK=1024)
    torch.cuda.synchronize()
    parts["second call + sync"] = (time.perf_counter() - t2) * 1e3
print(json.dumps({"first_call_ms": (t1 - t0) * 1e3, "import_ms": (t_imported - t_start) * 1e3,
                  "max_err": err, "parts_ms": parts}))
'''


def launch_overhead(n_launches, repeats):
    import cupy as cp
    import torch
    import triton
    import triton.language as tl

    import tk

    # Kernels are defined in a file (Triton reads the source): this one.
    results = {}
    x = torch.rand(1024, device="cuda")
    y = torch.rand(1024, device="cuda")
    out = torch.empty_like(x)
    grid = (1,)

    def timed(launch):
        launch()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n_launches):
                launch()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / n_launches * 1e6)
        return best

    results["tk_us"] = timed(lambda: tk_add[grid](x, y, out, 1024, BLOCK=1024))
    # What any launcher pays to read three torch tensors and the stream, the
    # floor of the Python-side work (tk's launcher makes these calls in C).
    raw_stream = torch._C._cuda_getCurrentRawStream
    results["torch_reads_us"] = timed(lambda: (
        x.data_ptr(), y.data_ptr(), out.data_ptr(), x.get_device(), y.get_device(),
        out.get_device(), x.dtype, y.dtype, out.dtype, raw_stream(0)))
    tk.testing.assert_close(out, x + y, atol=0, rtol=0)
    results["triton_us"] = timed(lambda: triton_add[grid](x, y, out, 1024, BLOCK=1024))
    raw = cp.RawKernel(r'''
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}''', "add")
    cx, cy, cout = (cp.asarray(t) for t in (x, y, out))
    n = cp.int32(1024)
    results["cupy_rawkernel_us"] = timed(lambda: raw((1,), (1024,), (cx, cy, cout, n)))
    # Empty loop floor: what the Python loop itself costs.
    results["empty_loop_us"] = timed(lambda: None)
    del tl
    return results


def cold_start(which, cache_dir, **extra_env):
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", TK_CACHE_DIR=str(cache_dir),
               TRITON_CACHE_DIR=str(cache_dir), **extra_env)
    env.pop("TK_INTERPRET", None)
    # The child's file keeps one path for every process on this cache: tk's
    # cache key holds the kernel's file name (it is in the PTX's line info),
    # so a new temporary name per process would miss the cache every time
    # (the runs before 2026-11-30 01:00 did, which is why their "warm cache"
    # first call was as slow as the cold one).
    child = pathlib.Path(cache_dir) / "src" / f"cold_child_{which}.py"
    child.parent.mkdir(exist_ok=True)
    child.write_text(COLD_CHILD)
    r = subprocess.run([sys.executable, str(child), which], env=env, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        return {"error": (r.stdout + r.stderr)[-2000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def gpu_pytest():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "tests/python"), "-m", "gpu",
                        "-q", "-rfEs", "-p", "no:cacheprovider"], env=env, capture_output=True,
                       text=True, timeout=120, cwd=str(ROOT))
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", tail)}
    return {"summary": tail, "counts": counts, "returncode": r.returncode,
            "failures": [line for line in r.stdout.splitlines()
                         if line.startswith(("FAILED", "ERROR"))][:40]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-pytest", action="store_true")
    args = ap.parse_args()
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    import torch

    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": args.commit,
        "device": torch.cuda.get_device_name(0),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
    }
    try:
        import triton

        report["triton"] = triton.__version__
    except ImportError:
        pass
    try:
        report["launch"] = launch_overhead(args.launches, args.repeats)
    except Exception as e:  # keep the rest of the run
        report["launch"] = {"error": repr(e)}
    print(json.dumps(report["launch"], indent=1), flush=True)
    cold = {}
    for which in ("tk", "triton"):
        with tempfile.TemporaryDirectory() as cache:
            cold[which + "_cold"] = cold_start(which, cache)
            cold[which + "_warm_cache"] = cold_start(which, cache)
            if which == "tk":
                cold["tk_warm_cache_driver_first"] = cold_start(which, cache,
                                                                TK_BENCH_DRIVER_FIRST="1")
    report["first_call"] = cold
    print(json.dumps(cold, indent=1), flush=True)
    if not args.skip_pytest:
        try:
            report["gpu_pytest"] = gpu_pytest()
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            report["gpu_pytest"] = {"summary": "timed out after 120 s", "counts": {},
                                    "returncode": None, "failures": out.splitlines()[-20:]}
        print(json.dumps(report["gpu_pytest"], indent=1), flush=True)
    (out_dir / "python-launch.json").write_text(json.dumps(report, indent=1) + "\n")
    (out_dir / "python-launch.md").write_text(markdown(report))
    print(markdown(report))


def fmt(d, key, unit, digits=2):
    v = d.get(key)
    return f"{v:.{digits}f} {unit}" if isinstance(v, (int, float)) else str(d.get("error", "-"))


def markdown(r):
    launch, cold = r.get("launch", {}), r.get("first_call", {})
    lines = [
        f"# Python launch benchmark ({r['date']}, commit {r['commit']})",
        "",
        f"{r['device']}, Python {r['python']}, torch {r['torch']}, Triton {r.get('triton', '-')}."
        f" Command: `{r['command']}`.",
        "",
        "## Host time per launch, 4-argument kernel (loop of launches, one synchronize)",
        "",
        "| launcher | us per launch |",
        "| --- | --- |",
        f"| tk `kernel[grid](...)` | {fmt(launch, 'tk_us', 'us')} |",
        f"| Triton `kernel[grid](...)` | {fmt(launch, 'triton_us', 'us')} |",
        f"| CuPy RawKernel (reference) | {fmt(launch, 'cupy_rawkernel_us', 'us')} |",
        f"| empty Python loop | {fmt(launch, 'empty_loop_us', 'us', 3)} |",
        f"| torch reads only (3x data_ptr/get_device/dtype, raw stream) | "
        f"{fmt(launch, 'torch_reads_us', 'us', 3)} |",
        "",
        "## First call of a new kernel in a fresh process (softmax, 4096x1000 fp32)",
        "",
        "CUDA_CACHE_DISABLE=1; a fresh cache directory, then a second process on it.",
        "",
        "| | first call (compile + launch + sync) | import |",
        "| --- | --- | --- |",
    ]
    for key in ("tk_cold", "tk_warm_cache", "tk_warm_cache_driver_first", "triton_cold",
                "triton_warm_cache"):
        d = cold.get(key, {})
        lines.append(f"| {key} | {fmt(d, 'first_call_ms', 'ms', 1)} | "
                     f"{fmt(d, 'import_ms', 'ms', 1)} |")
    for key in ("tk_warm_cache", "tk_warm_cache_driver_first"):
        parts = cold.get(key, {}).get("parts_ms")
        if not parts:
            continue
        lines += ["", f"## Where tk's first call goes: {key}", "",
                  "Steps nest: the Python side's total holds reading the source, globals, "
                  "the compile (a disk-cache read here) and the load.", "",
                  "| step | ms |", "| --- | --- |"]
        lines += [f"| {k} | {v:.2f} |" for k, v in parts.items()]
    p = r.get("gpu_pytest")
    if p:
        lines += ["", "## GPU-marked pytest", "", f"`{p['summary']}`", ""]
        lines += [f"- {f}" for f in p["failures"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tk
    import triton
    import triton.language as tl

    @tk.jit
    def tk_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        mask = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs,
                                                                           mask=mask), mask=mask)

    @triton.jit
    def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs,
                                                                           mask=mask), mask=mask)

    main()
