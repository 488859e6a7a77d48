"""Measures tk on a corpus of Inductor kernels (collect.py writes one).

    python3 bench/inductor/measure.py CORPUS [--run] [--json OUT.jsonl] [--limit N]

For every kernel file, every configuration Inductor's heuristics give it is
compiled by tk for the GPU (TK_ARCH, sm_90 by default), from Inductor's own
signature, constants and divisibility, the way tk.inductor compiles it;
without a GPU that is a compile to PTX. With --run (on a GPU) the kernel
also runs on the inputs of its `get_args()` twice, through Inductor's
launcher with Triton and with tk (tk.inductor), and every tensor argument
afterwards is compared, and each side's launch is timed (`time_us_*`: the
median of CUDA-event timings of 20 launches after the compare, on the
configuration Inductor's own autotuning kept). Where tk's result does not
match, every other configuration of Triton's runs on the same inputs too:
`triton_config_spread` is how far Triton's own results move between block
sizes (another reduction order), the yardstick for tk's `rel_err`. One JSON
line per kernel; a
summary by heuristic at the end, with the ten kernels where tk is slowest.
"""

import argparse
import collections
import importlib.util
import json
import os
import sys
import time


def _load(path, tag):
    """The kernel module at `path`, loaded under a name of its own."""
    name = f"inductor_corpus_{tag}_{os.path.basename(path)[:-3]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_all(autotuner):
    """(configs compiled, configs, first error) of tk on every configuration."""
    import tk.inductor as ti

    kernel = ti._tk_kernel(autotuner)
    done, error = 0, None
    for cfg in autotuner.configs:
        meta = autotuner._create_compile_meta(cfg)
        try:
            ti.compile_inductor_config(kernel, meta, cfg, ti._options(meta))
            done += 1
        except Exception as e:  # noqa: BLE001 - every failure is a corpus row
            error = error or f"{type(e).__name__}: {str(e).strip()}"
    return done, len(autotuner.configs), error


def _compare(before, after_a, after_b):
    """(match, worst relative error) over the tensor arguments: every float
    tensor within 1e-2 (fp16, bf16) or 1e-4 of the largest magnitude, NaNs and
    infinities in the same places, everything else equal."""
    import torch

    match, worst = True, 0.0
    for a, b in zip(after_a, after_b):
        if not isinstance(a, torch.Tensor):
            continue
        if not a.dtype.is_floating_point:
            if not torch.equal(a, b):
                match, worst = False, float("inf")
            continue
        x, y = a.double().flatten(), b.double().flatten()
        if not torch.equal(torch.isnan(x), torch.isnan(y)):
            match, worst = False, float("inf")
            continue
        x, y = x[~torch.isnan(x)], y[~torch.isnan(y)]
        inf = torch.isinf(x)
        if not torch.equal(inf, torch.isinf(y)) or not torch.equal(x[inf], y[inf]):
            match, worst = False, float("inf")
            continue
        x, y = x[~inf], y[~inf]
        if x.numel() == 0:
            continue
        err = (x - y).abs().max().item() / max(x.abs().max().item(), 1e-6)
        worst = max(worst, err)
        if err > (1e-2 if a.dtype in (torch.float16, torch.bfloat16) else 1e-4):
            match = False
    return match, worst


def _config_spread(launchers, args, reference, stream):
    """The worst relative error between the kept configuration's result
    (`reference`) and each of Triton's other configurations on the same
    inputs: how far a change of block sizes alone (another reduction order)
    moves this kernel's outputs, the yardstick for a tk mismatch."""
    import torch

    spread = 0.0
    for launcher in launchers:
        copy = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        launcher(*copy, stream=stream)
        torch.cuda.synchronize()
        spread = max(spread, _compare(args, reference, copy)[1])
    return spread


def _time_us(autotuner, args, stream, repeat=20):
    """Median microseconds of one launch of the autotuner's kept configuration."""
    import torch

    times = []
    for _ in range(repeat + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        autotuner.run(*args, stream=stream)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    times = sorted(times[3:])
    return round(times[len(times) // 2], 2)


def run_both(path, kernel_name):
    """Runs the kernel with Triton and with tk on the same inputs."""
    import torch
    import tk.inductor as ti

    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    triton_mod = _load(path, "triton")
    args = triton_mod.get_args()
    clone = lambda: [a.clone() if isinstance(a, torch.Tensor) else a for a in args]  # noqa: E731
    stream = torch.cuda.current_stream().cuda_stream

    ti.disable()
    at = getattr(triton_mod, kernel_name)
    t0 = time.perf_counter()
    at.precompile()
    triton_s = time.perf_counter() - t0
    triton_launchers = list(at.launchers)
    a1 = clone()
    at.run(*a1, stream=stream)

    ti.enable()
    before = len(ti.fallbacks())
    tk_mod = _load(path, "tk")
    at2 = getattr(tk_mod, kernel_name)
    t0 = time.perf_counter()
    at2.precompile()
    tk_s = time.perf_counter() - t0
    fell_back = ti.fallbacks()[before:]
    a2 = clone()
    at2.run(*a2, stream=stream)
    torch.cuda.synchronize()
    used_tk = all(type(r).__name__ == "TkCompileResult" for r in at2.compile_results or [])
    match, err = _compare(args, a1, a2)
    spread = None
    if not match and len(triton_launchers) > 1:
        spread = _config_spread(triton_launchers, args, a1, stream)
    # Timed after the compare: the timing launches overwrite the copies.
    tk_us = _time_us(at2, a2, stream)
    ti.disable()
    triton_us = _time_us(at, a1, stream)
    return {"ran": True, "match": match, "rel_err": err, "triton_config_spread": spread,
            "tk_launches": used_tk,
            "time_us_triton": triton_us, "time_us_tk": tk_us,
            "fallback": fell_back[0][1] if fell_back else None,
            "compile_s_triton": round(triton_s, 4), "compile_s_tk": round(tk_s, 4)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--run", action="store_true", help="run and compare (GPU)")
    parser.add_argument("--json", help="write one JSON line per kernel here")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("TK_ARCH", "sm_90")
    os.environ.pop("TK_INTERPRET", None)
    import logging

    logging.getLogger("tk.inductor").setLevel(logging.ERROR)

    with open(os.path.join(args.corpus, "manifest.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    seen, kernels = set(), []
    for row in rows:
        if row["file"] not in seen:
            seen.add(row["file"])
            kernels.append(row)
    if args.limit:
        kernels = kernels[:args.limit]
    out = open(args.json, "w") if args.json else None
    by_kind = collections.defaultdict(lambda: collections.Counter())
    errors = collections.Counter()
    results = []
    for row in kernels:
        path = os.path.join(args.corpus, row["file"])
        result = dict(row)
        try:
            module = _load(path, "compile")
            t0 = time.perf_counter()
            done, total, error = compile_all(getattr(module, row["kernel"]))
            result.update(configs=total, compiled=done, compile_s=round(time.perf_counter() - t0, 4),
                          error=error)
        except Exception as e:  # noqa: BLE001
            result.update(configs=0, compiled=0, error=f"{type(e).__name__}: {e}")
        ok = result["compiled"] == result["configs"] and result["configs"] > 0
        if args.run and ok:
            try:
                result.update(run_both(path, row["kernel"]))
            except Exception as e:  # noqa: BLE001
                result.update(ran=False, match=False, run_error=f"{type(e).__name__}: {e}"[:500])
        kind = by_kind[row["heuristic"]]
        kind["kernels"] += 1
        kind["compiled"] += ok
        if args.run:
            kind["matched"] += bool(result.get("match"))
        if not ok:
            errors[(result["error"] or "?").splitlines()[0][:160]] += 1
        results.append(result)
        if out:
            out.write(json.dumps(result) + "\n")
            out.flush()
    total = collections.Counter()
    for kind, c in sorted(by_kind.items()):
        total.update(c)
        print(f"{kind:24s} {dict(c)}")
    print(f"{'all':24s} {dict(total)}")
    for message, n in errors.most_common(25):
        print(f"{n:4d}  {message}")
    for r in results:
        if r.get("ran") and not r.get("match"):
            spread = r.get("triton_config_spread")
            print(f"mismatch {r['file']}: tk vs Triton {r.get('rel_err')}, Triton's configurations "
                  f"among themselves {'-' if spread is None else spread}")
    timed = [r for r in results if r.get("time_us_tk") and r.get("time_us_triton")]
    if timed:
        tk_total = sum(r["time_us_tk"] for r in timed)
        triton_total = sum(r["time_us_triton"] for r in timed)
        print(f"timed {len(timed)} kernels: sum of medians tk {tk_total:.0f} us, "
              f"Triton {triton_total:.0f} us (Triton/tk {triton_total / tk_total:.3f})")
        timed.sort(key=lambda r: r["time_us_triton"] / r["time_us_tk"])
        for r in timed[:10]:
            print(f"  {r['time_us_triton'] / r['time_us_tk']:.3f}  tk {r['time_us_tk']:.1f} us  "
                  f"Triton {r['time_us_triton']:.1f} us  {r['heuristic']}  {r['file']}")


if __name__ == "__main__":
    main()
