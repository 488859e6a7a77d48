"""Issue 21's attention benchmark: the plain attention forward
(bench/attention_kernels.py, one source in Triton's syntax) compiled by tk and
by Triton 3.6 with the same launch parameters, beside torch SDPA, in one run
on the GPU machine.

Rows: seq 1024/4096/16384, head dim 64/128 (the issue's table: (1024, 64),
(4096, 64), (4096, 128), (16384, 128)), causal and not, fp16 and bf16;
batch x heads 128, or 32 at 16384. For each row each compiler runs the four
configs of CONFIGS (BLOCK_M, BLOCK_N, num_warps, num_stages) and its best is
reported (a config that fails to compile or launch is recorded, not fatal).
Before timing, the output of each side's best config is checked against
torch in float32 (max |O - ref| <= 2e-2). TFLOP/s = 4 Z H N^2 D (halved when
causal) / the median time of triton.testing.do_bench (CUDA events). Compile
time: each compiler's first call of each (dtype, head dim, causal, config) on
an empty cache (TK_CACHE_DIR and TRITON_CACHE_DIR are fresh temporary
folders), source -> loaded module -> one launch, synchronised.

    PYTHONPATH=gpu-bundle/x/py python3 bench/attention_bench.py --out-dir DIR --commit SHA
    (bash gpu-bundle/run.sh attention, after bash bench/gpu_bundle.sh --only attention)

writes attention-<date>.json and attention-<date>.md to --out-dir and prints
the table. --quick runs the first row only (a smoke run).
"""
import argparse
import datetime
import importlib.util
import json
import os
import sys
import tempfile
import time

# Fresh caches before either compiler is imported: the compile times are of
# empty caches.
os.environ["TK_CACHE_DIR"] = tempfile.mkdtemp(prefix="tk-cache-")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (seq, head dim, batch * heads)
SHAPES = ((1024, 64, 128), (4096, 64, 128), (4096, 128, 128), (16384, 128, 32))
CONFIGS = ((128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 2), (64, 64, 4, 3))
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
TOLERANCE = 2e-2


def load_kernels(backend):
    spec = importlib.util.spec_from_file_location(f"attention_{backend}",
                                                  os.path.join(HERE, "attention_kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    mod.BACKEND = backend
    spec.loader.exec_module(mod)
    return mod


def launch(mod, q, k, v, o, sm_scale, causal, config):
    bm, bn, warps, stages = config
    zh, n, d = q.shape
    grid = (triton.cdiv(n, bm), zh)
    mod.attn_fwd[grid](q, k, v, o, sm_scale, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                       v.stride(0), v.stride(1), o.stride(0), o.stride(1), n, HEAD_DIM=d,
                       BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps,
                       num_stages=stages)


def run_row(backends, dtype, n, d, zh, causal, compile_times):
    gen = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
    q, k, v = (torch.randn((zh, n, d), device="cuda", dtype=DTYPES[dtype], generator=gen)
               for _ in range(3))
    sm_scale = 1.0 / d ** 0.5
    flops = 4.0 * zh * n * n * d * (0.5 if causal else 1.0)
    ref = F.scaled_dot_product_attention(q.float()[None], k.float()[None], v.float()[None],
                                         is_causal=causal, scale=sm_scale)[0]
    row = {"dtype": dtype, "seq": n, "head_dim": d, "batch_heads": zh, "causal": causal}
    for be, mod in backends.items():
        best = None
        configs = {}
        for config in CONFIGS:
            name = "x".join(map(str, config))
            o = torch.empty_like(q)
            key = (be, dtype, d, causal, config)
            try:
                t0 = time.perf_counter()
                launch(mod, q, k, v, o, sm_scale, causal, config)
                torch.cuda.synchronize()
                if key not in compile_times:
                    compile_times[key] = time.perf_counter() - t0
                ms = triton.testing.do_bench(
                    lambda: launch(mod, q, k, v, o, sm_scale, causal, config))
                err = (o.float() - ref).abs().max().item()
                configs[name] = {"tflops": flops / ms / 1e9, "max_error": err}
                if err > TOLERANCE:
                    configs[name]["error"] = f"max |O - ref| = {err:.3g} > {TOLERANCE}"
                elif best is None or ms < best[0]:
                    best = (ms, name)
            except Exception as e:  # a failing config is a result, not the end of the run
                configs[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        row[f"{be}_configs"] = configs
        row[f"{be}_tflops"] = flops / best[0] / 1e9 if best else None
        row[f"{be}_best"] = best[1] if best else None
    ms = triton.testing.do_bench(lambda: F.scaled_dot_product_attention(
        q[None], k[None], v[None], is_causal=causal, scale=sm_scale))
    row["sdpa_tflops"] = flops / ms / 1e9
    if row.get("tk_tflops") and row.get("triton_tflops"):
        row["tk_over_triton"] = row["tk_tflops"] / row["triton_tflops"]
    if row.get("tk_tflops"):
        row["tk_over_sdpa"] = row["tk_tflops"] / row["sdpa_tflops"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--quick", action="store_true", help="the first row only")
    ap.add_argument("--configs", help="only these configs, e.g. 128x64x4x3,64x64x4x3 (A/B runs)")
    ap.add_argument("--backends", default="tk,triton", help="tk, triton or both")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    global CONFIGS
    if args.configs:
        names, known = args.configs.split(","), ["x".join(map(str, c)) for c in CONFIGS]
        if not set(names) <= set(known):
            ap.error(f"--configs takes some of {', '.join(known)}")
        CONFIGS = tuple(c for c, name in zip(CONFIGS, known) if name in names)
    backends = {be: load_kernels(be) for be in args.backends.split(",")}
    rows, compile_times = [], {}
    cases = [(dt, n, d, zh, causal) for dt in DTYPES for (n, d, zh) in SHAPES
             for causal in (False, True)]
    for dt, n, d, zh, causal in cases[:1] if args.quick else cases:
        row = run_row(backends, dt, n, d, zh, causal, compile_times)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("_configs")}),
              flush=True)
    compiles = {}
    for (be, dt, d, causal, config), s in sorted(compile_times.items(), key=str):
        compiles.setdefault(be, []).append(s)
    date = datetime.date.today().isoformat()
    result = {"benchmark": "attention", "date": date, "commit": args.commit, "command": " ".join(sys.argv),
              "device": torch.cuda.get_device_name(), "triton": triton.__version__,
              "torch": torch.__version__, "configs": CONFIGS, "rows": rows,
              "compile_seconds": {be: {"median": sorted(v)[len(v) // 2], "max": max(v),
                                       "count": len(v)} for be, v in compiles.items()}}
    base = os.path.join(args.out_dir, f"attention-{date}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1)

    def fmt(v, spec=".0f"):
        return "-" if v is None else format(v, spec)
    lines = [f"# Plain attention forward: tk vs Triton vs torch SDPA ({date})", "",
             f"commit {args.commit}, {result['device']}, Triton {result['triton']}, torch "
             f"{result['torch']}", "", f"`{result['command']}`", "",
             "TFLOP/s, each compiler's best of "
             f"{len(CONFIGS)} configs (BLOCK_M x BLOCK_N x warps x stages).", "",
             "| dtype | seq | head dim | causal | SDPA | Triton | tk | tk/Triton | tk/SDPA | "
             "tk best | Triton best |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dtype']} | {r['seq']} | {r['head_dim']} | "
                     f"{'yes' if r['causal'] else 'no'} | {fmt(r['sdpa_tflops'])} | "
                     f"{fmt(r.get('triton_tflops'))} | {fmt(r.get('tk_tflops'))} | "
                     f"{fmt(r.get('tk_over_triton'), '.2f')} | "
                     f"{fmt(r.get('tk_over_sdpa'), '.2f')} | {r.get('tk_best')} | "
                     f"{r.get('triton_best')} |")
    lines += ["", "Compile, source -> loaded module -> first launch, empty cache (seconds):", ""]
    for be, c in result["compile_seconds"].items():
        lines.append(f"- {be}: median {c['median']:.2f}, max {c['max']:.2f} over {c['count']} "
                     "compiles")
    errors = [(r["dtype"], r["seq"], r["head_dim"], r["causal"], be, name, c["error"])
              for r in rows for be in backends for name, c in r[f"{be}_configs"].items()
              if "error" in c]
    if errors:
        lines += ["", "Configs that failed:", ""]
        lines += [f"- {e[4]} {e[0]} seq {e[1]} d{e[2]} causal={e[3]} {e[5]}: {e[6]}"
                  for e in errors]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r.get("tk_tflops", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
