"""Issue 6's Python speed benchmark, one run on the GPU machine.

1. Host time per launch of a 4-argument kernel (x, y, out, n; BLOCK a
   constexpr) from Python, measured as Triton measures it: a loop of N
   launches and one synchronize at the end, the time divided by N; best of
   several repetitions. tk's kernel[grid](...) (both ways of passing the
   parameters) against Triton 3.6's and, for reference, a CuPy RawKernel
   launch of the same work (CUDA C, nvrtc), in --rounds rounds; each round
   ends with bench/launch_bench.cpp's raw C++ loops on the same kernel (a
   subprocess), so tk / raw is measured under the same conditions.
2. First call of a new kernel in a fresh process, compile included: the
   softmax of tutorials/02 (a 1024-wide row) in a subprocess with
   CUDA_CACHE_DISABLE=1 and an empty TK_CACHE_DIR (Triton: an empty
   TRITON_CACHE_DIR), from the launch to the end of the synchronize after it;
   then a second process on the same (now warm) cache directory.
3. The GPU-marked pytest (tests/python -m gpu), pass/fail counts.

    bash bench/gpu_bundle.sh --build build --only python                # here
    PYTHONPATH=gpu-bundle/x/py python3 -u bench/python_launch_bench.py --out-dir $OUT \
        --commit abc1234 --launch-bench gpu-bundle/x/py/launch_bench      # there (run.sh python)

writes python-launch.json and python-launch.md to --out-dir and prints them.

Without a GPU, `--stand-in LIBCUDA` measures tk's own host work per launch
against the stand-in driver of tests/python/fake_cuda.c (no Triton): the
same loop with argument objects whose reads are C calls (a list subclass
with torch's method names, a CuPy-like class) and, where torch imports, with
real torch CPU tensors standing in for CUDA ones (read through libtorch's C
functions, and through torch's Python methods for comparison), minus what
the stand-in's cuLaunchKernel itself costs (timed from C):

    cc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o /tmp/fake/libcuda.so.1 \
        tests/python/fake_cuda.c
    PYTHONPATH=build-py/python python3 bench/python_launch_bench.py --stand-in \
        /tmp/fake/libcuda.so.1
"""

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import statistics
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
    import tk.runtime.jit as rt
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


def launch_overhead(n_launches, repeats, rounds, launch_bench):
    """Rounds of: tk (both ways of passing parameters), Triton, CuPy, torch's
    own reads, then the raw C++ loops of bench/launch_bench.cpp (same kernel)
    in a subprocess, so drift on the machine hits every launcher alike."""
    import cupy as cp
    import torch
    import triton
    import triton.language as tl

    import tk

    # Kernels are defined in a file (Triton reads the source): this one.
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

    def tk_launch():
        tk_add[grid](x, y, out, 1024, BLOCK=1024)

    def checked(params):
        # Each way of passing parameters must compute x + y.
        tk._C._set_launch_params(params)
        out.zero_()
        tk_launch()
        tk.testing.assert_close(out, x + y, atol=0, rtol=0)
        return timed(tk_launch)

    initial_params = tk._C._launch_params()
    raw = cp.RawKernel(r'''
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}''', "add")
    cx, cy, cout = (cp.asarray(t) for t in (x, y, out))
    n = cp.int32(1024)
    # What any launcher pays to read three torch tensors and the stream, the
    # floor of the Python-side work (tk's launcher makes these calls in C).
    raw_stream = torch._C._cuda_getCurrentRawStream
    data_ptr, get_device = torch.Tensor.data_ptr, torch.Tensor.get_device
    reads = {
        "all (3x data_ptr/get_device/dtype, raw stream)": lambda: (
            x.data_ptr(), y.data_ptr(), out.data_ptr(), x.get_device(), y.get_device(),
            out.get_device(), x.dtype, y.dtype, out.dtype, raw_stream(0)),
        "x.data_ptr()": lambda: x.data_ptr(),
        "torch.Tensor.data_ptr(x)": lambda: data_ptr(x),
        "x.__cuda_array_interface__": lambda: x.__cuda_array_interface__,
        "x.get_device()": lambda: x.get_device(),
        "torch.Tensor.get_device(x)": lambda: get_device(x),
        "x.is_cuda": lambda: x.is_cuda,
        "x.dtype": lambda: x.dtype,
        "_cuda_getCurrentRawStream(0)": lambda: raw_stream(0),
        "empty loop": lambda: None,
    }
    per_round = []
    for r in range(rounds):
        row = {"tk_us": checked("array"), "tk_packed_us": checked("packed")}
        # The default launch again with the tensors and the stream read through
        # torch's Python methods (TK_TORCH_ABI=0), not libtorch's C functions.
        tk._C._set_torch_abi(False)
        row["tk_packed_pyreads_us"] = checked("packed")
        tk._C._set_torch_abi(True)
        tk._C._set_launch_params(initial_params)
        row["triton_us"] = timed(lambda: triton_add[grid](x, y, out, 1024, BLOCK=1024))
        row["cupy_rawkernel_us"] = timed(lambda: raw((1,), (1024,), (cx, cy, cout, n)))
        row["torch_reads_us"] = timed(reads["all (3x data_ptr/get_device/dtype, raw stream)"])
        row["empty_loop_us"] = timed(reads["empty loop"])
        if launch_bench:
            cpp = run_launch_bench(launch_bench, n_launches)
            row.update({f"cpp_{k}": v for k, v in cpp.items()})
        print(f"round {r}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in row.items()), flush=True)
        per_round.append(row)
    results = {"rounds": per_round, "default_params": initial_params,
               "torch_abi": tk._C._torch_abi()}
    for key in per_round[0]:
        values = [row[key] for row in per_round if isinstance(row.get(key), float)]
        if values:
            results[key] = statistics.median(values)
    if "cpp_raw_us" in results:
        ratios = [row["tk_us"] / row["cpp_raw_us"] for row in per_round if "cpp_raw_us" in row]
        results["tk_over_raw"] = statistics.median(ratios)
        results["tk_over_raw_rounds"] = ratios
        results["tk_packed_over_raw"] = statistics.median(
            [row["tk_packed_us"] / row["cpp_raw_us"] for row in per_round if "cpp_raw_us" in row])
    if "cpp_raw_extra_us" in results:
        # tk's own host work per launch: the default (packed) launch from Python
        # less the raw packed cuLaunchKernel loop from C++ of the same round.
        results["tk_own_us"] = statistics.median(
            [row["tk_packed_us"] - row["cpp_raw_extra_us"] for row in per_round
             if isinstance(row.get("cpp_raw_extra_us"), float)])
    results["torch_read_costs_us"] = {k: timed(f) for k, f in reads.items()}
    del tl, triton
    return results


def run_launch_bench(path, iters):
    """One round of bench/launch_bench.cpp: us per launch of each raw way."""
    here = os.path.dirname(os.path.abspath(path))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join([here, os.path.join(here, "tk"),
                                       env.get("LD_LIBRARY_PATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "launch.json")
        r = subprocess.run([path, "--iters", str(iters), "--rounds", "1", "--json", out], env=env,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return {"error": (r.stdout + r.stderr)[-500:]}
        data = json.loads(pathlib.Path(out).read_text())
    return {k: v for k, v in data.items() if k.endswith("_us") and isinstance(v, float)}


def make_tk_add():
    """The 4-argument kernel every launcher here runs, as a tk kernel."""
    import tk

    globals()["tk"] = tk  # the kernel reads tk as a global of this module

    @tk.jit
    def tk_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        mask = offs < n
        tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs,
                                                                           mask=mask), mask=mask)

    return tk_add


def stand_in_host_cost(libcuda, n_launches, repeats):
    """tk's host work per launch with the stand-in driver, in ns."""
    import ctypes

    fake = ctypes.CDLL(libcuda, mode=ctypes.RTLD_GLOBAL)  # before tk loads libcuda.so.1
    fake.fake_replay_launches.restype = ctypes.c_double
    fake.fake_replay_launches.argtypes = [ctypes.c_long]
    os.environ.pop("TK_INTERPRET", None)

    class Float32:
        def __str__(self):
            return "torch.float32"

    f32 = Float32()

    class Device:
        type, index = "cuda", 0

    # torch's names, C calls only: data_ptr() is list.__len__ (the "address"
    # is the length), get_device() is int() (0), dtype and device class
    # attributes.
    class TorchLike(list):
        __module__ = "torch.stand_in"
        data_ptr = list.__len__
        get_device = staticmethod(int)
        dtype = f32
        device = Device()

    class CaiLike:
        pass

    def cai(ptr):
        cls = type("CaiLike", (CaiLike,), {"__cuda_array_interface__": {
            "data": (ptr, False), "typestr": "<f4", "shape": (1024,), "version": 3}})
        return cls()

    add = make_tk_add()
    grid = (1,)

    def timed(launch):
        launch()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n_launches):
                launch()
            best = min(best, (time.perf_counter() - t0) / n_launches * 1e9)
        return best

    results = {}
    tx, ty, tout = (TorchLike([0] * n) for n in (4096, 8192, 12288))
    results["torch_like_ns"] = timed(lambda: add[grid](tx, ty, tout, 1024, BLOCK=1024))
    fake.fake_set_param_sizes((ctypes.c_int * 4)(8, 8, 8, 4), 4)
    add[grid](tx, ty, tout, 1024, BLOCK=1024)
    results["stand_in_launch_ns"] = min(fake.fake_replay_launches(n_launches)
                                        for _ in range(repeats))
    cx, cy, cout = cai(0x10000), cai(0x20000), cai(0x30000)
    results["cai_like_ns"] = timed(lambda: add[grid](cx, cy, cout, 1024, BLOCK=1024))
    results["new_grid_tuple_ns"] = timed(lambda: add[(1,)](tx, ty, tout, 1024, BLOCK=1024))
    results["argument_reads_ns"] = timed(lambda: (
        tx.data_ptr(), ty.data_ptr(), tout.data_ptr(), tx.get_device(), ty.get_device(),
        tout.get_device(), tx.dtype, ty.dtype, tout.dtype))
    results["empty_loop_ns"] = timed(lambda: None)
    results["tk_own_ns"] = (results["torch_like_ns"] - results["stand_in_launch_ns"]
                            - results["empty_loop_ns"])
    results.update(stand_in_torch_cost(add, timed, results["stand_in_launch_ns"]
                                       + results["empty_loop_ns"]))
    return results


def stand_in_torch_cost(add, timed, floor_ns):
    """With torch installed: the same launch on real torch tensors (CPU ones,
    standing in for cuda:0's: tk._C._set_stand_in_torch), read through
    libtorch's C functions (the default) and through torch's Python methods
    (TK_TORCH_ABI=0's path). tk_own_torch_ns is tk's own work per launch: the
    first less the stand-in's cuLaunchKernel and the empty loop. torch's
    current stream is not read in this mode (there is no CUDA)."""
    try:
        import torch
    except ImportError as e:
        return {"torch": f"not measured: {e}"}
    import tk

    tk._C._set_stand_in_torch(True)
    try:
        x, y, out = (torch.rand(1024) for _ in range(3))
        grid = (1,)
        reads = tk._C._torch_abi_reads()
        r = {"torch_ns": timed(lambda: add[grid](x, y, out, 1024, BLOCK=1024))}
        if tk._C._torch_abi_reads() == reads:
            r["torch_abi"] = "not used: " + tk._C._torch_abi()
        tk._C._set_torch_abi(False)
        r["torch_python_reads_ns"] = timed(lambda: add[grid](x, y, out, 1024, BLOCK=1024))
        tk._C._set_torch_abi(True)
        r["torch_method_reads_ns"] = timed(lambda: (
            x.data_ptr(), y.data_ptr(), out.data_ptr(), x.get_device(), y.get_device(),
            out.get_device(), x.dtype, y.dtype, out.dtype))
        r["tk_own_torch_ns"] = r["torch_ns"] - floor_ns
    finally:
        tk._C._set_stand_in_torch(False)
    return r


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
                       text=True, timeout=240, cwd=str(ROOT))  # ~90 s with tests/python/acceptance
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
    ap.add_argument("--rounds", type=int, default=5,
                    help="launch timing rounds, each with every launcher and the C++ loops")
    default_launch_bench = ROOT / "gpu-bundle" / "x" / "py" / "launch_bench"
    ap.add_argument("--launch-bench", metavar="PATH",
                    default=str(default_launch_bench) if default_launch_bench.exists() else None,
                    help="bench/launch_bench.cpp's binary: its raw driver loops run in each round "
                    "(default: gpu-bundle/x/py/launch_bench when bench/gpu_bundle.sh's run.sh "
                    "unpacked it there)")
    ap.add_argument("--skip-pytest", action="store_true")
    ap.add_argument("--skip-first-call", action="store_true")
    ap.add_argument("--stand-in", metavar="LIBCUDA",
                    help="no GPU: tk's host work per launch against tests/python/fake_cuda.c")
    args = ap.parse_args()
    if args.stand_in:
        r = stand_in_host_cost(args.stand_in, args.launches, args.repeats)
        for k, v in r.items():
            print(f"{k:22s} {v:8.1f} ns" if isinstance(v, float) else f"{k:22s} {v}")
        return
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
        report["launch"] = launch_overhead(args.launches, args.repeats, args.rounds,
                                           args.launch_bench)
    except Exception as e:  # keep the rest of the run
        report["launch"] = {"error": repr(e)}
    print(json.dumps(report["launch"], indent=1), flush=True)
    cold = {}
    for which in () if args.skip_first_call else ("tk", "triton"):
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
            report["gpu_pytest"] = {"summary": "timed out after 240 s", "counts": {},
                                    "returncode": None, "failures": out.splitlines()[-20:]}
        print(json.dumps(report["gpu_pytest"], indent=1), flush=True)
    (out_dir / "python-launch.json").write_text(json.dumps(report, indent=1) + "\n")
    (out_dir / "python-launch.md").write_text(markdown(report))
    print(markdown(report))


def fmt(d, key, unit, digits=2):
    v = d.get(key)
    return f"{v:.{digits}f} {unit}" if isinstance(v, (int, float)) else str(d.get("error", "-"))


def verdict(launch):
    # The way tk launches by default (the packed buffer) is what counts.
    key = "tk_packed_us" if launch.get("default_params") == "packed" else "tk_us"
    tk_us = launch.get(key)
    if not isinstance(tk_us, float) or not isinstance(launch.get("triton_us"), float):
        return "not measured"
    ok = tk_us <= 5.0 and tk_us < launch["triton_us"]
    return f"{'met' if ok else 'NOT met'} ({tk_us:.2f} us, Triton {launch['triton_us']:.2f} us)"


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
        "Medians over the rounds; in each round every launcher ran (best of the repeats),",
        "then the raw C++ loops of bench/launch_bench.cpp on the same kernel in a subprocess.",
        "",
        "| launcher | us per launch |",
        "| --- | --- |",
        f"| tk `kernel[grid](...)` (kernelParams array) | {fmt(launch, 'tk_us', 'us')} |",
        f"| tk `kernel[grid](...)` (packed, `extra`; the default) | "
        f"{fmt(launch, 'tk_packed_us', 'us')} |",
        f"| tk packed, torch read through Python methods (TK_TORCH_ABI=0) | "
        f"{fmt(launch, 'tk_packed_pyreads_us', 'us')} |",
        f"| Triton `kernel[grid](...)` | {fmt(launch, 'triton_us', 'us')} |",
        f"| CuPy RawKernel (reference) | {fmt(launch, 'cupy_rawkernel_us', 'us')} |",
        f"| C++ raw cuLaunchKernel, kernelParams | {fmt(launch, 'cpp_raw_us', 'us')} |",
        f"| C++ raw cuLaunchKernel, packed `extra` | {fmt(launch, 'cpp_raw_extra_us', 'us')} |",
        f"| C++ raw cuLaunchKernelEx | {fmt(launch, 'cpp_raw_ex_us', 'us')} |",
        f"| C++ tk GpuKernel::launch | {fmt(launch, 'cpp_tk_us', 'us')} |",
        f"| empty Python loop | {fmt(launch, 'empty_loop_us', 'us', 3)} |",
        f"| torch reads only (3x data_ptr/get_device/dtype, raw stream) | "
        f"{fmt(launch, 'torch_reads_us', 'us', 3)} |",
        "",
        f"tk / raw C++ (median of the rounds' ratios): "
        f"{fmt(launch, 'tk_over_raw', '', 3).strip()}; packed: "
        f"{fmt(launch, 'tk_packed_over_raw', '', 3).strip()}. Issue 6's target, <= 5 us and "
        f"below Triton: {verdict(launch)}.",
        "",
        f"tk's own host work per launch (packed tk minus the raw packed C++ loop, median of "
        f"the rounds): {fmt(launch, 'tk_own_us', 'us', 3)}. Torch reads: "
        f"{launch.get('torch_abi', '-')}.",
        "",
    ]
    rounds = launch.get("rounds", [])
    if rounds:
        keys = [k for k in rounds[0] if isinstance(rounds[0][k], float)]
        lines += ["| round | " + " | ".join(keys) + " |",
                  "| --- | " + " | ".join("---" for _ in keys) + " |"]
        for i, row in enumerate(rounds):
            lines.append(f"| {i} | " + " | ".join(
                f"{row[k]:.3f}" if isinstance(row.get(k), float) else "-" for k in keys) + " |")
        lines.append("")
    costs = launch.get("torch_read_costs_us", {})
    if costs:
        lines += ["Python-level cost of each read (us per call, loop included):", "",
                  "| read | us |", "| --- | --- |"]
        lines += [f"| `{k}` | {v:.3f} |" for k, v in costs.items()]
        lines.append("")
    if cold:
        lines += [
            "## First call of a new kernel in a fresh process (softmax, 4096x1000 fp32)",
            "",
            "CUDA_CACHE_DISABLE=1; a fresh cache directory, then a second process on it.",
            "",
            "| | first call (compile + launch + sync) | import |",
            "| --- | --- | --- |",
        ]
    for key in ("tk_cold", "tk_warm_cache", "tk_warm_cache_driver_first", "triton_cold",
                "triton_warm_cache") if cold else ():
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


if __name__ == "__main__" and {"--stand-in", "-h", "--help"} & set(sys.argv):
    main()
elif __name__ == "__main__":
    import triton
    import triton.language as tl

    tk_add = make_tk_add()

    @triton.jit
    def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs,
                                                                           mask=mask), mask=mask)

    main()
