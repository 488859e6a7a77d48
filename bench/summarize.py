#!/usr/bin/env python3
"""Turns the raw output of a benchmark run into the committed result: a compact
JSON of summaries in bench/results/<benchmark>.json (the current result of that
benchmark, replaced by each new run) and one row of bench/results/history.md
(kept, so a regression shows up as a row).

    python3 bench/summarize.py RAW... [--results bench/results] [--history-only]
                               [--commit C] [--date D] [--command CMD] [--note TEXT]

RAW is what a program of bench/ wrote on the GPU machine (bench/gpu_bundle.sh's
run.sh gathers them under $OUT), each recognised by its content:

    gpu_bench.py          gpu-bench.json          -> softmax-layernorm (and, when
                          it ran them, compile-load and launch from its
                          --compile-bench / --launch-bench)
    matmul_bench.py       matmul-<date>.json      -> matmul
    novel_bench.py        novel-<date>.json       -> novel
    novel_matmul_bench.py novel-matmul-<date>.json-> novel-matmul
    membound_bench.py     membound-<date>.json    -> membound
    python_launch_bench.py python-launch.json     -> python-launch
    compile_bench --load --json F                 -> compile-load
    compile_bench --jit-files DIR --json F        -> jit
    compile_bench --json F (no GPU)               -> compile
    launch_bench --json F                         -> launch
    interp_bench --json F                         -> interp
    gpu_smoke.py          gpu-smoke.json          -> gpu-smoke
    exp_ln_sweep.py       --out FILE              -> layernorm-sweep (an experiment: a
                                                     history row only)
    a folder with gpu_tests.json / gpu_difftest-*.json (the GPU tests' run)
                                                  -> gpu-tests
    autotune-gpu.txt      (the autotuning part's log) -> autotune
    any other folder      every result in it (bench/gpu_bundle.sh's results/: its
                          COMMIT gives the commit where a result has none, and a
                          FILE.command beside a result its exact command)

The summary keeps what a reader compares: date, commit, exact command, device and
versions, the headline figures of each case and the ratios against the anchors
measured in the same run (Triton, torch, cuBLAS, a device copy, a raw
cuLaunchKernel loop), pass counts of the correctness checks; not per-element
errors, per-variant timings or rounds (those stay in the raw file, which is not
committed). --history-only adds the row without replacing the current file (an
experiment, or an older run). Options override what the raw file says (older
outputs lack a commit or a command).
"""
import argparse
import collections
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
HISTORY_HEADER = """# Benchmark history

One row per measurement, grouped by benchmark, oldest first; the current result of each
benchmark is `<benchmark>.json` beside this file (bench/README.md says which program makes
it). `python3 bench/summarize.py RAW...` adds a row and replaces the current file. Ratios
are tk against the anchor named, all measured in the same run on the same machine; compare
rows of one benchmark, not figures across benchmarks.

The raw outputs (every variant, check and round) of the rows up to 2026-11-30 were removed
from the tree on 2026-12-01; `raw` names the commit that added them:
`git show --stat RAW -- bench/results` lists the files, `git show RAW:bench/results/FILE`
prints one. Commands are as recorded (an output-naming `--suffix` left out; the bundles of
those days came from bench/make_*_bundle.sh, now bench/gpu_bundle.sh); `+wip` after a
commit: the tree held uncommitted edits, which the row's note in notes/ describes. Notes on
what a row measured and why are in notes/<topic>.md; they cite a row as
`history.md, <benchmark> <commit>`.

| benchmark | date | commit | headline (tk against the anchors, same run) | command | raw |
|---|---|---|---|---|---|
"""


def f2(x):
    return "-" if x is None else f"{x:.2f}"


def f0(x):
    return "-" if x is None else f"{x:.0f}"


def f1(x):
    return "-" if x is None else f"{x:.1f}"


def short_commit(c):
    if not c:
        return "-"
    m = re.match(r"^([0-9a-f]{7,40})(.*)$", c)
    return m.group(1)[:7] + m.group(2) if m else c


def clean_command(cmd):
    """The command as recorded, less the output-naming --suffix."""
    if not cmd:
        return None
    return re.sub(r"\s+--suffix(=|\s+)\S+", "", cmd).strip()


def base(raw, kind):
    """The fields every summary carries."""
    out = collections.OrderedDict(benchmark=kind)
    for k in ("date", "commit", "command", "device"):
        if raw.get(k) is not None:
            out[k] = clean_command(raw[k]) if k == "command" else raw[k]
    versions = {k: raw[k] for k in ("triton", "torch", "cupy", "python") if raw.get(k)}
    if versions:
        out["versions"] = versions
    return out


# --- softmax / LayerNorm (gpu_bench.py) ---------------------------------------------------

def workload_label(row):
    w = row["workload"]
    name = "softmax" if w.startswith("softmax") else "layernorm" if "layer" in w else w
    return f"{name} {row['m']}x{row['n']}"


def h2h_ratio(h):
    """tk / Triton from alternating head-to-head timings (medians of each side)."""
    if not h or not h.get("tk_ms") or not h.get("triton_ms"):
        return None
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return med(h["triton_ms"]) / med(h["tk_ms"])


def softmax_layernorm(raw):
    out = base(raw, "softmax-layernorm")
    out["copy_gbps"] = raw.get("copy_gbps")
    out["timing"] = raw.get("timing")
    rows = []
    for r in raw["rows"]:
        s = collections.OrderedDict(case=workload_label(r), bytes=r.get("bytes"))
        s["tk_best"] = r.get("tk_best")
        for k in ("tk_gbps", "triton_gbps", "torch_gbps", "copy_same_gbps"):
            if r.get(k) is not None:
                s[k] = round(r[k], 1)
        s["triton_best"] = r.get("triton_best")
        for k in ("tk_over_triton", "tk_over_copy", "tk_over_copy_same", "triton_over_copy",
                  "tk_default_over_triton"):
            if r.get(k) is not None:
                s[k] = round(r[k], 3)
        if r.get("tk_default"):
            s["tk_default"] = r["tk_default"]
        regs = r.get("tk_registers") or {}
        if r.get("tk_best") in regs:
            s["tk_best_registers"] = regs[r["tk_best"]].get("registers")
        tregs = r.get("triton_registers") or {}
        if r.get("triton_best") in tregs:
            s["triton_best_registers"] = tregs[r["triton_best"]].get("registers")
        s["variants_checked"] = len(r.get("tk_checks") or r.get("tk_variants_ms") or {})
        s["correct"] = r.get("correct")
        rows.append(s)
    out["cases"] = rows
    out["failures"] = len(raw.get("failures") or [])
    return out


def softmax_layernorm_headline(s):
    by = collections.defaultdict(list)
    for c in s["cases"]:
        by[c["case"].split()[0]].append(c)
    parts = []
    for name, cs in by.items():
        ns = "/".join(c["case"].split("x")[-1] for c in cs)
        part = (f"{name} N={ns}: /Triton {' '.join(f2(c.get('tk_over_triton')) for c in cs)}, "
                f"/copy {' '.join(f2(c.get('tk_over_copy')) for c in cs)}")
        if any(c.get("tk_default_over_triton") for c in cs):
            part += f", default /Triton {' '.join(f2(c.get('tk_default_over_triton')) for c in cs)}"
        parts.append(part)
    ok = all(c.get("correct") is not False for c in s["cases"]) and not s.get("failures")
    return "; ".join(parts) + f"; copy {f0(s.get('copy_gbps'))} GB/s; " + \
        ("all outputs correct" if ok else "OUTPUT MISMATCHES")


# --- matmul (matmul_bench.py) ---------------------------------------------------------------

def matmul(raw):
    out = base(raw, "matmul")
    if raw.get("jit_level") is not None:
        out["jit_level"] = raw["jit_level"]
    checks = raw.get("check") or []
    out["dot_checks"] = {"passed": sum(1 for c in checks if c.get("ok")), "total": len(checks),
                         "max_rel_err": max((c.get("rel_err") or 0 for c in checks), default=None)}
    by_dtype = collections.Counter(c["dtype"] for c in checks)
    out["dot_checks"]["by_dtype"] = dict(sorted(by_dtype.items()))
    bias = raw.get("bias") or []
    out["bias_checks"] = {"passed": sum(1 for c in bias if c.get("ok")), "total": len(bias)}
    cases = []
    for b in raw.get("bench") or []:
        s = collections.OrderedDict(case=f"{b['dtype']} {b['size']}")
        for k in ("tk_tflops", "triton_tflops", "cublas_tflops", "cublas_tflops_after",
                  "tk_wgmma_tflops", "tk_mma_sync_tflops"):
            if b.get(k) is not None:
                s[k] = round(b[k], 1)
        s["tk_best"] = b.get("tk_best")
        for k in ("tk_wgmma_best", "tk_mma_sync_best", "triton_config"):
            if b.get(k):
                s[k] = b[k]
        s["tk_vs_cublas"] = round(b["tk_vs_cublas"], 3) if b.get("tk_vs_cublas") else None
        if b.get("tk_tflops") and b.get("triton_tflops"):
            s["tk_vs_triton"] = round(b["tk_tflops"] / b["triton_tflops"], 3)
        if b.get("tk_mma_sync_tflops") and b.get("cublas_tflops"):
            s["mma_sync_vs_cublas"] = round(b["tk_mma_sync_tflops"] / b["cublas_tflops"], 3)
        h = b.get("head_to_head") or {}
        if h.get("tk_vs_cublas"):
            s["head_to_head_vs_cublas"] = round(h["tk_vs_cublas"], 3)
        # Every config's TFLOP/s (a short table; their errors are in the checks).
        s["configs_tflops"] = {c["kernel"]: round(c["tflops"], 1) for c in b.get("tk_configs", [])
                               if c.get("tflops") is not None}
        bad = [c["kernel"] for c in b.get("tk_configs", []) if c.get("ok") is False
               and not c.get("experiment")]
        if bad:
            s["configs_wrong"] = bad
        cases.append(s)
    out["cases"] = cases
    return out


def matmul_headline(s):
    parts = []
    cs = s["cases"]
    if cs:
        names = "/".join(c["case"].replace(" ", "@") for c in cs)
        parts.append(f"{names}: /cuBLAS {' '.join(f2(c.get('tk_vs_cublas')) for c in cs)}, "
                     f"/Triton {' '.join(f2(c.get('tk_vs_triton')) for c in cs)}")
        if any(c.get("head_to_head_vs_cublas") for c in cs):
            parts.append("head to head /cuBLAS "
                         + " ".join(f2(c.get("head_to_head_vs_cublas")) for c in cs))
        if any(c.get("tk_wgmma_tflops") for c in cs):
            parts.append("mma.sync alone /cuBLAS "
                         + " ".join(f2(c.get("mma_sync_vs_cublas")) for c in cs))
        parts.append("TFLOP/s " + " ".join(f0(c.get("tk_tflops")) for c in cs))
    d, b = s["dot_checks"], s["bias_checks"]
    parts.append(f"dot checks {d['passed']}/{d['total']}"
                 + (f", bias {b['passed']}/{b['total']}" if b["total"] else ""))
    return "; ".join(parts)


# --- kernels outside the repository (novel_bench.py, novel_matmul_bench.py) --------------

def novel(raw):
    out = base(raw, "novel")
    rows = []
    for r in raw["rows"]:
        s = collections.OrderedDict(case=r["case"], shape=r.get("shape"))
        for k in ("tk_gbps", "triton_gbps", "torch_gbps"):
            s[k] = round(r[k], 1) if r.get(k) is not None else None
        for k in ("tk_over_triton", "tk_over_torch"):
            s[k] = round(r[k], 3) if r.get(k) is not None else None
        s["tk_error"] = r.get("tk_error")
        s["triton_error"] = r.get("triton_error")
        rows.append(s)
    out["cases"] = rows
    return out


def case_key(name):
    """A short key of a case name: 'gelu_mix fp16,fp32->bf16' -> 'gelu_mix'."""
    return name.split(" fp")[0].split(" int")[0].split(" bf")[0].strip()


def novel_headline(s):
    errs = sum(1 for c in s["cases"] if c.get("tk_error"))
    return "/Triton " + ", ".join(f"{case_key(c['case'])} {f2(c.get('tk_over_triton'))}"
                                  for c in s["cases"]) + \
        (f"; {errs} tk errors" if errs else "; every output matches torch")


def novel_matmul(raw):
    out = base(raw, "novel-matmul")
    rows = []
    for r in raw["rows"]:
        s = collections.OrderedDict(case=r["case"], shape=[r.get("m"), r.get("n"), r.get("k")],
                                    dtype=r.get("dtype"), tile=r.get("tile"))
        for k in ("tk_tflops", "triton_tflops", "torch_tflops"):
            s[k] = round(r[k], 1) if r.get(k) is not None else None
        for k in ("tk_over_triton", "tk_over_torch"):
            s[k] = round(r[k], 3) if r.get(k) is not None else None
        for k in ("tk_rel_error", "triton_rel_error"):
            s[k] = float(f"{r[k]:.2e}") if r.get(k) is not None else None
        if r.get("tk_error"):
            s["tk_error"] = r["tk_error"]
        rows.append(s)
    out["cases"] = rows
    return out


def novel_matmul_headline(s):
    bad = [c["case"] for c in s["cases"] if c.get("tk_error") or (c.get("tk_rel_error") or 0) > 2e-2]
    return "/Triton " + ", ".join(f"{c['case']} {f2(c.get('tk_over_triton'))}" for c in s["cases"]) + \
        (f"; WRONG: {', '.join(bad)}" if bad else "; errors within 2e-2 of torch")


# --- memory-bound kernels from one plain source (membound_bench.py) ----------------------

MEMBOUND_RATIOS = ("tk_over_triton", "tk_over_copy", "tk_over_eager", "tk_over_compile")


def membound(raw):
    out = base(raw, "membound")
    out["seconds"] = raw.get("seconds")
    rows = []
    for r in raw["rows"]:
        s = collections.OrderedDict((k, r.get(k)) for k in ("kernel", "kind", "dtype", "N"))
        if r.get("skipped"):
            s["skipped"] = r["skipped"]
            rows.append(s)
            continue
        for k in ("tk_gbps", "triton_gbps", "copy_gbps", "eager_gbps", "compile_gbps"):
            if r.get(k) is not None:
                s[k] = round(r[k], 1)
        for k in MEMBOUND_RATIOS:
            if r.get(k) is not None:
                s[k] = round(r[k], 3)
        for k in ("tk_regs", "triton_regs", "tk_spills", "triton_spills"):
            if r.get(k) is not None:
                s[k] = r[k]
        for k in ("tk_error", "triton_error", "compile_error", "row_error"):
            if r.get(k):
                s[k] = r[k]
        rows.append(s)
    out["rows"] = rows
    return out


def membound_headline(s):
    """Per kernel the range of tk/Triton over its rows; the lowest tk/copy of
    forward kernels at N >= 4096 and of backward kernels; the lowest
    tk/eager and tk/compile of backward kernels; errors and skipped rows."""
    measured = [r for r in s["rows"] if not r.get("skipped")]
    parts = []
    for kernel in dict.fromkeys(r["kernel"] for r in measured):
        v = [r["tk_over_triton"] for r in measured
             if r["kernel"] == kernel and r.get("tk_over_triton") is not None]
        if v:
            parts.append(f"{kernel} {min(v):.2f}-{max(v):.2f}")
    text = "/Triton " + ", ".join(parts)

    def lowest(key, pick):
        v = [r[key] for r in measured if pick(r) and r.get(key) is not None]
        return f"{min(v):.2f}" if v else "-"
    text += (f"; /copy lowest: forward N>=4096 "
             f"{lowest('tk_over_copy', lambda r: r['kind'] == 'fwd' and r['N'] >= 4096)}, "
             f"backward {lowest('tk_over_copy', lambda r: r['kind'] == 'bwd')}; backward "
             f"lowest /eager {lowest('tk_over_eager', lambda r: r['kind'] == 'bwd')}, "
             f"/torch.compile {lowest('tk_over_compile', lambda r: r['kind'] == 'bwd')}")
    errors = sum(1 for r in measured if r.get("tk_error") or r.get("row_error"))
    skipped = len(s["rows"]) - len(measured)
    text += f"; {len(measured)} rows, {errors} with tk errors" if errors else \
        f"; {len(measured)} rows, every tk output matches torch"
    if skipped:
        text += f", {skipped} skipped (time budget)"
    return text


# --- Python launch (python_launch_bench.py) -------------------------------------------------

def python_launch(raw):
    out = base(raw, "python-launch")
    launch = raw.get("launch") or {}
    keep = ("default_params", "torch_abi", "tk_us", "tk_packed_us", "tk_packed_pyreads_us",
            "triton_us", "cupy_rawkernel_us", "cpp_raw_us", "cpp_raw_extra_us", "cpp_tk_us",
            "empty_loop_us", "torch_reads_us", "tk_over_raw", "tk_packed_over_raw", "tk_own_us")
    out["launch_us"] = {k: (round(launch[k], 3) if isinstance(launch[k], float) else launch[k])
                        for k in keep if launch.get(k) is not None}
    first = {}
    for k, v in (raw.get("first_call") or {}).items():
        if isinstance(v, dict) and v.get("first_call_ms") is not None:
            first[k] = round(v["first_call_ms"], 1)
    if first:
        out["first_call_ms"] = first
    py = raw.get("gpu_pytest") or {}
    if py:
        out["gpu_pytest"] = {"summary": py.get("summary"), "counts": py.get("counts"),
                             "failures": [f if isinstance(f, str) else str(f)[:200]
                                          for f in py.get("failures") or []]}
    return out


def python_launch_headline(s):
    l = s.get("launch_us", {})
    tk = l.get("tk_packed_us") if l.get("default_params") == "packed" else l.get("tk_us")
    parts = [f"launch tk {f2(tk)} us, Triton {f2(l.get('triton_us'))} us"]
    if l.get("cpp_raw_us"):
        parts[0] += f", raw C++ {f2(l.get('cpp_raw_us'))} us"
    if l.get("tk_packed_over_raw") or l.get("tk_over_raw"):
        parts.append(f"tk/raw {f2(l.get('tk_packed_over_raw') or l.get('tk_over_raw'))}")
    fc = s.get("first_call_ms") or {}
    if fc:
        parts.append(f"first call tk {f1(fc.get('tk_cold'))} ms (Triton {f0(fc.get('triton_cold'))})"
                     f", warm disk cache {f1(fc.get('tk_warm_cache'))} ms "
                     f"(Triton {f0(fc.get('triton_warm_cache'))})")
    if s.get("gpu_pytest", {}).get("counts"):
        parts.append("GPU pytest " + ", ".join(f"{v} {k}" for k, v in
                                               sorted(s["gpu_pytest"]["counts"].items())))
    return "; ".join(parts)


# --- compile and launch (compile_bench, launch_bench) --------------------------------------

def cold_of(row):
    run = row.get("run") or {}
    return run.get("cold") or row.get("cold") or {}


def compile_load(raw):
    out = base(raw, "compile-load")
    for k in ("repeat", "cuda_cache_disable", "jit_level", "targets_ms", "target_ms"):
        if raw.get(k) is not None:
            out[k] = raw[k]
    rows = []
    for r in raw.get("rows", []):
        c = cold_of(r)
        name = r["kernel"]
        if r.get("block") and not name.endswith(str(r["block"])):
            name += f"-{r['block']}"
        s = collections.OrderedDict(kernel=name)
        for k in ("num_warps", "num_stages"):
            if r.get(k) is not None:
                s[k] = r[k]
        for k in ("total_ms", "min_total_ms", "compile_ms", "jit_ms", "ptx_bytes", "registers"):
            if c.get(k) is not None:
                s[k] = c[k]
        stages = (r.get("run") or {}).get("stages") or {}
        for k in ("llvm_opt_ms", "nvptx_codegen_ms"):
            if stages.get(k) is not None:
                s[k] = stages[k]
        if r.get("warm_disk_ms") is not None:
            s["warm_disk_ms"] = r["warm_disk_ms"]
        kern = (r.get("run") or {}).get("kernel") or {}
        for k in ("tflop_s", "gb_s", "max_rel_err"):
            if kern.get(k) is not None:
                s["kernel_" + k] = kern[k]
        rows.append(s)
    out["kernels"] = rows
    return out


def compile_load_headline(s):
    return "cold source -> module ms, median (JIT): " + ", ".join(
        f"{k['kernel']} {f1(k.get('total_ms'))} ({f1(k.get('jit_ms'))})" for k in s["kernels"])


def jit(raw):
    out = base(raw, "jit")
    out["jit_level"] = raw.get("jit_level")
    out["files"] = [collections.OrderedDict(file=f["file"], jit_ms=f.get("jit_ms"),
                                            min_jit_ms=f.get("min_jit_ms"),
                                            ptx_bytes=f.get("ptx_bytes"),
                                            error=f.get("error") or None)
                    for f in raw.get("files", [])]
    return out


def jit_headline(s):
    return "driver JIT alone, median ms: " + ", ".join(
        f"{os.path.splitext(f['file'])[0]} {f1(f.get('jit_ms'))}" for f in s["files"])


def launch(raw):
    out = base(raw, "launch")
    keep = ("iters", "threads", "raw_us_per_launch", "tk_us_per_launch", "ratio", "target_ratio",
            "raw_extra_us", "raw_ex_us", "tk_kernel_us", "tk_autotuner_us", "autotuner_ratio",
            "stand_in")
    for k in keep:
        if raw.get(k) is not None:
            out[k] = raw[k]
    return out


def launch_headline(s):
    h = f"host time per launch tk {f2(s.get('tk_us_per_launch'))} us, raw cuLaunchKernel " \
        f"{f2(s.get('raw_us_per_launch'))} us: tk/raw {f2(s.get('ratio'))}"
    if s.get("autotuner_ratio"):
        h += f", tk::Autotuner/raw {f2(s['autotuner_ratio'])}"
    return h


def layernorm_sweep(raw):
    """exp_ln_sweep.py: per width, every variant's median per-round ratio to Triton's best."""
    out = base(raw, "layernorm-sweep")
    rows = []
    for r in raw.get("rows", []):
        rounds = r.get("rounds") or {}
        variants = r.get("variants") or {}
        ranked = sorted(rounds.items(), key=lambda kv: -(kv[1].get("over_triton") or 0))
        rows.append(collections.OrderedDict(
            case=f"layernorm {r['m']}x{r['n']}",
            variants=len(variants),
            all_correct=all(v.get("correct") for v in variants.values()) and
            r.get("triton_correct", True),
            rounds={k: {"gbps": round(v["gbps"], 1), "over_triton": round(v["over_triton"], 3),
                        "over_triton_min": round(v["over_triton_min"], 3)}
                    for k, v in ranked if v.get("over_triton") is not None}))
    out["cases"] = rows
    return out


def layernorm_sweep_headline(s):
    parts = []
    for c in s["cases"]:
        top = [(k, v) for k, v in c["rounds"].items() if not k.startswith("triton")][:3]
        parts.append(f"{c['case']}: " + ", ".join(
            f"{k} {f2(v['over_triton'])} (lowest {f2(v['over_triton_min'])})" for k, v in top))
    return "median per-round /Triton, best three: " + "; ".join(parts)


def compile_cpu(raw):
    out = base(raw, "compile")
    out["repeat"] = raw.get("repeat")
    out["with_llvm"] = raw.get("with_llvm")
    out["kernels"] = raw.get("rows", [])
    return out


def compile_cpu_headline(s):
    return "source -> PTX ms, median (min): " + ", ".join(
        f"{r['kernel']} {f1(r.get('total_ms'))} ({f1(r.get('min_total_ms'))})" for r in s["kernels"])


def interp(raw):
    out = base(raw, "interp")
    for k, v in raw.items():
        if isinstance(v, dict) and ("softmax" in k or "matmul" in k):
            out[k] = v
    for k in ("machine", "note"):
        if raw.get(k):
            out[k] = raw[k]
    return out


def interp_headline(s):
    sm = s.get("softmax_4096x1024_fp32", {})
    mm = s.get("matmul_512x512x512_fp16", {})
    return f"softmax 4096x1024 {sm.get('elements_per_second', 0) / 1e6:.0f} M elements/s " \
           f"(target {sm.get('target_elements_per_second', 0) / 1e6:.0f}); matmul 512^3 " \
           f"{mm.get('gflops')} GFLOP/s"


def gpu_smoke(raw):
    out = base(raw, "gpu-smoke")
    out["cases"] = [collections.OrderedDict(
        case=r["workload"], n=r.get("n"), tk_gbps=round(r["tk_gbps"], 1),
        torch_gbps=round(r["torch_gbps"], 1), tk_over_torch=round(r["tk_gbps"] / r["torch_gbps"], 3),
        max_abs_err=r.get("max_abs_err")) for r in raw["rows"]]
    return out


def gpu_smoke_headline(s):
    return "/torch " + ", ".join(f"{c['case']} {f2(c['tk_over_torch'])}" for c in s["cases"])


def gpu_tests(folder):
    sys.path.insert(0, HERE)
    import gpu_test_report as g
    out = collections.OrderedDict(benchmark="gpu-tests")
    commit_file = os.path.join(folder, "COMMIT")
    if os.path.exists(commit_file):
        text = open(commit_file).read()
        m = re.search(r"commit ([0-9a-f]+)", text)
        if m:
            out["commit"] = m.group(1)
        m = re.search(r"^ran (\S+)", text, re.M) or re.search(r"built (\S+)", text)
        if m:
            out["date"] = m.group(1)
        out["tree"] = "clean" if "tree: clean" in text else "local changes"
    dev = os.path.join(folder, "device.txt")
    if os.path.exists(dev):
        out["device"] = open(dev).read().strip().split("(UUID")[0].split(": ", 1)[-1].strip()
    suites = collections.OrderedDict()
    for binary in ("gpu_tests", "gpu_difftest"):
        report = g.load_all(folder, binary)
        if report is None:
            continue
        rows = list(g.cases(report))
        count = collections.Counter(status for _, _, status, _, _ in rows)
        suites[binary] = {"passed": count["passed"], "failed": count["failed"],
                          "skipped": count["skipped"],
                          "failures": [f"{s}.{n}" for s, n, st, _, _ in rows if st == "failed"]}
    for binary in ("autotuner_tests",):
        log = os.path.join(folder, binary + ".log")
        if os.path.exists(log):
            text = open(log).read()
            p = re.search(r"\[  PASSED  \] (\d+) test", text)
            f = re.search(r"\[  FAILED  \] (\d+) test", text)
            suites[binary] = {"passed": int(p.group(1)) if p else 0,
                              "failed": int(f.group(1)) if f else 0}
    log = os.path.join(folder, "05-host-autotune.log")
    if os.path.exists(log):
        text = open(log).read()
        suites["05-host-autotune"] = {"runs": text.count("== tutorial 05, run"),
                                      "mismatches": text.count("MISMATCH"),
                                      "failed_exits": len(re.findall(r"^exit \d+", text, re.M))}
    out["suites"] = suites
    return out


def gpu_tests_headline(s):
    parts = []
    for name, c in s.get("suites", {}).items():
        if "passed" in c:
            total = c["passed"] + c.get("failed", 0)
            parts.append(f"{name} {c['passed']}/{total}"
                         + (f" ({c['skipped']} skipped)" if c.get("skipped") else ""))
        else:
            ok = not c["mismatches"] and not c["failed_exits"]
            parts.append(f"{name} {'matches the CPU reference' if ok else 'FAILED'}")
    return ", ".join(parts)


def autotune(text, path=""):
    """The autotuning run's log (bench/gpu_bundle.sh's autotune part: $OUT/autotune-gpu.txt)."""
    out = collections.OrderedDict(benchmark="autotune")
    m = re.search(r"bundle (\S+);", text)
    if m:
        out["commit"] = m.group(1)
    m = re.search(r"^(NVIDIA [^,\n]+), ([0-9.]+)$", text, re.M)
    if m:
        out["device"] = f"{m.group(1)}, driver {m.group(2)}"
    tuning = collections.OrderedDict()
    for label, body in re.findall(r"^== (.*?)\n(.*?)(?=^== |\Z)", text, re.M | re.S):
        t = re.search(r"^tk: autotune .*?: ([0-9.]+) s; best (\{.*?\}); launch\+sync [0-9.]+ ms "
                      r"\(([0-9.]+) TFLOP/s\)", body, re.M)
        if t:
            tuning[label] = {"seconds": float(t.group(1)), "best": t.group(2),
                             "tflops": float(t.group(3))}
        t = re.search(r"^triton (\S+): autotune .*?: ([0-9.]+) s; best (.*?); [0-9.]+ ms "
                      r"\(([0-9.]+) TFLOP/s\)", body, re.M)
        if t:
            tuning[label] = {"seconds": float(t.group(2)), "best": t.group(3),
                             "tflops": float(t.group(4))}
            out.setdefault("versions", {})["triton"] = t.group(1)
    out["tuning"] = tuning
    out["launch_overhead"] = [
        {"raw_us": float(a), "kernel": float(b), "aot": float(c), "autotuner": float(d)}
        for a, b, c, d in re.findall(r"raw cuLaunchKernel ([0-9.]+), tk::Kernel [0-9.]+ "
                                     r"\(([0-9.]+)x\), image/AOT kernel [0-9.]+ \(([0-9.]+)x\), "
                                     r"tk::Autotuner [0-9.]+ \(([0-9.]+)x\)", text)]
    out["second_process_first_launch_ms"] = [
        {"after_tuner": float(a), "after_main": float(b)} for a, b in
        re.findall(r"first launch ([0-9.]+) ms after the tuner was created, ([0-9.]+) ms after "
                   r"main\(\) began", text)]
    out["reference_matches"] = text.count("all results match the CPU reference")
    out["retuned_in_second_process"] = "from the cache, no tuning" not in text
    return out


def autotune_headline(s):
    t = s.get("tuning", {})
    tk = next((v for k, v in t.items() if k.startswith("tk,") and "empty cache" in k), None)
    tr = next((v for k, v in t.items() if k.startswith("Triton")), None)
    parts = []
    if tk and tr:
        parts.append(f"tuning 8 matmul configs at 4096^3, compile included: tk {tk['seconds']:.2f} s, "
                     f"Triton {tr['seconds']:.2f} s ({tk['seconds'] / tr['seconds']:.2f}x)")
    lo = s.get("launch_overhead") or []
    if lo:
        rng = lambda k: f"{min(x[k] for x in lo):.2f}-{max(x[k] for x in lo):.2f}x"
        parts.append(f"launches tk::Kernel {rng('kernel')}, AOT {rng('aot')}, "
                     f"tk::Autotuner {rng('autotuner')} raw")
    fl = s.get("second_process_first_launch_ms") or []
    if fl:
        parts.append(f"second process: tuner -> first launch "
                     f"{min(x['after_tuner'] for x in fl):.2f}-{max(x['after_tuner'] for x in fl):.2f} ms")
    parts.append(f"{s.get('reference_matches', 0)} runs match the CPU reference")
    return "; ".join(parts)


KINDS = {
    "softmax-layernorm": (softmax_layernorm, softmax_layernorm_headline),
    "matmul": (matmul, matmul_headline),
    "novel": (novel, novel_headline),
    "novel-matmul": (novel_matmul, novel_matmul_headline),
    "membound": (membound, membound_headline),
    "python-launch": (python_launch, python_launch_headline),
    "compile-load": (compile_load, compile_load_headline),
    "jit": (jit, jit_headline),
    "launch": (launch, launch_headline),
    "compile": (compile_cpu, compile_cpu_headline),
    "interp": (interp, interp_headline),
    "gpu-smoke": (gpu_smoke, gpu_smoke_headline),
    "gpu-tests": (gpu_tests, gpu_tests_headline),
    "layernorm-sweep": (layernorm_sweep, layernorm_sweep_headline),
    "autotune": (autotune, autotune_headline),
}


# Experiments beside a benchmark: a history row, never a current file.
EXPERIMENTS = {"layernorm-sweep"}


def detect(raw):
    """The benchmark a raw JSON comes from, by its content."""
    rows = raw.get("rows") or []
    r0 = rows[0] if rows and isinstance(rows[0], dict) else {}
    if "bench" in raw or "check" in raw:
        return "matmul"
    if "launch" in raw and ("first_call" in raw or "gpu_pytest" in raw):
        return "python-launch"
    if "rounds" in r0 and "variants" in r0:
        return "layernorm-sweep"
    if "workload" in r0 and "tk_over_triton" in r0:
        return "softmax-layernorm"
    if "workload" in r0 and "torch_gbps" in r0:
        return "gpu-smoke"
    if "kernel" in r0 and "kind" in r0:
        return "membound"
    if "case" in r0 and "tk_gbps" in r0:
        return "novel"
    if "case" in r0 and "tk_tflops" in r0:
        return "novel-matmul"
    if "populate" in r0 or "run" in r0 or "cold" in r0:
        return "compile-load"
    if "front_end_ms" in r0:
        return "compile"
    if "files" in raw and raw["files"] and "jit_ms" in raw["files"][0]:
        return "jit"
    if "tk_us_per_launch" in raw:
        return "launch"
    if "softmax_4096x1024_fp32" in raw:
        return "interp"
    return None


SKIP = (".md", ".png", ".log", ".command", ".partial.json", ".tgz")


def is_gpu_tests(path):
    return os.path.exists(os.path.join(path, "gpu_tests.json")) or \
        bool(glob.glob(os.path.join(path, "gpu_difftest-*.json")))


def walk(path, overrides):
    """Every result under a folder of bench/gpu_bundle.sh's run.sh (results/<part>/...):
    the bundle's COMMIT gives the commit where a result has none."""
    commit_file = os.path.join(path, "COMMIT")
    if os.path.exists(commit_file) and not overrides.get("commit"):
        m = re.search(r"^commit (\S+)", open(commit_file).read(), re.M)
        if m:
            overrides = dict(overrides, default_commit=m.group(1))
    found = []
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        if os.path.isdir(p):
            found += summaries(p, overrides) if is_gpu_tests(p) else walk(p, overrides)
        elif name.endswith(".json") and not name.endswith(SKIP) or name == "autotune-gpu.txt":
            try:
                found += summaries(p, overrides)
            except SystemExit as e:
                print(f"skipped {p}: {e}", file=sys.stderr)
    return found


def summaries(path, overrides):
    """(kind, summary) for each benchmark a raw file or folder holds."""
    overrides = dict(overrides)
    default_commit = overrides.pop("default_commit", None)
    if os.path.isdir(path) and not is_gpu_tests(path):
        return walk(path, dict(overrides, default_commit=default_commit))
    sidecar = path + ".command"
    if not overrides.get("command") and os.path.exists(sidecar):
        overrides["command"] = open(sidecar).read().strip()
    found = summaries_of(path, overrides)
    for _, s in found:
        if not s.get("commit") and default_commit:
            s["commit"] = default_commit
    return found


def summaries_of(path, overrides):
    if os.path.isdir(path):
        s = gpu_tests(path)
        s.update({k: v for k, v in overrides.items() if v is not None})
        return [("gpu-tests", s)]
    if path.endswith(".txt"):
        s = autotune(open(path).read(), path)
        s.update({k: v for k, v in overrides.items() if v is not None})
        return [("autotune", s)]
    with open(path) as f:
        raw = json.load(f)
    kind = detect(raw)
    if kind is None:
        raise SystemExit(f"{path}: not a result this script knows")
    raw = dict(raw)
    raw.update({k: v for k, v in overrides.items() if v is not None})
    found = [(kind, KINDS[kind][0](raw))]
    if kind == "softmax-layernorm":
        # gpu_bench.py's --compile-bench / --launch-bench: their JSON inside.
        for key, sub in (("compile_bench", "compile-load"), ("launch_bench", "launch")):
            inner = raw.get(key)
            if isinstance(inner, dict) and isinstance(inner.get("json"), dict):
                j = dict(inner["json"])
                for k in ("commit", "device"):
                    j.setdefault(k, raw.get(k))
                j["date"] = raw.get("date")
                env = " ".join(f"{k}={v}" for k, v in (inner.get("env") or {}).items())
                j["command"] = (env + " " if env else "") + re.sub(
                    r"--json \S+", "--json F", inner.get("command", ""))
                found.append((sub, KINDS[sub][0](j)))
    return found


def history_row(kind, s, raw_commit="-"):
    date = str(s.get("date", "-"))
    date = date.replace("T", " ")[:16].rstrip("Z")
    cmd = s.get("command") or "-"
    cmd = cmd.replace("|", "\\|")
    headline = KINDS[kind][1](s).replace("|", "\\|")
    note = s.get("note_for_history")
    if note:
        headline += f" ({note})"
    return f"| {kind} | {date} | {short_commit(s.get('commit'))} | {headline} | `{cmd}` | {raw_commit} |"


def add_rows(history_path, rows):
    """Inserts rows after the last row of their benchmark (or at the end)."""
    if os.path.exists(history_path):
        text = open(history_path).read()
    else:
        text = HISTORY_HEADER
    lines = text.rstrip("\n").split("\n")
    for row in rows:
        kind = row.split("|")[1].strip()
        if row in lines:
            continue
        last = None
        for i, line in enumerate(lines):
            if line.startswith(f"| {kind} |"):
                last = i
        if last is None:
            lines.append(row)
        else:
            lines.insert(last + 1, row)
    with open(history_path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_current(results, kind, s):
    path = os.path.join(results, f"{kind}.json")
    s = {k: v for k, v in s.items() if k != "note_for_history"}
    with open(path, "w") as f:
        f.write(compact_json(s) + "\n")
    return path


def compact_json(obj, indent=0):
    """JSON with one line per case / kernel / config: short and diffable."""
    pad = " " * indent
    if isinstance(obj, dict):
        simple = all(not isinstance(v, (dict, list)) or len(json.dumps(v)) < 60
                     for v in obj.values())
        line = json.dumps(obj)
        if simple and len(line) + indent < 100 or not obj:
            return line
        items = [f'{pad} {json.dumps(k)}: {compact_json(v, indent + 1).lstrip()}'
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        line = json.dumps(obj)
        if len(line) + indent < 100 or not obj:
            return line
        items = [pad + " " + compact_json(v, indent + 1).lstrip() for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", nargs="+", help="raw result files, or the GPU tests' output folder")
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--history-only", action="store_true",
                    help="add the history row, keep the current <benchmark>.json")
    ap.add_argument("--commit")
    ap.add_argument("--date")
    ap.add_argument("--command")
    ap.add_argument("--note", help="appended to the history row's headline")
    ap.add_argument("--raw-commit", default="-", help="the history row's raw column")
    args = ap.parse_args(argv)
    overrides = {"commit": args.commit, "date": args.date, "command": args.command}
    rows = []
    for path in args.raw:
        for kind, s in summaries(path, overrides):
            if args.note:
                s["note_for_history"] = args.note
            rows.append(history_row(kind, s, args.raw_commit))
            if not args.history_only and kind not in EXPERIMENTS:
                print(f"wrote {write_current(args.results, kind, s)}")
    add_rows(os.path.join(args.results, "history.md"), rows)
    for r in rows:
        print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
