"""Turns one run_gpu.sh result folder into bench/results/inductor.json and a
row of bench/results/history.md.

    python3 bench/inductor/summarize.py DIR --command "..." [--results bench/results]

DIR holds what run_gpu.sh wrote (env.txt, cold.jsonl, measure.jsonl,
pytest.log, out.<compiler>.<model>.<mode>.pt). The models' outputs of the
tk and Triton runs are compared here (needs torch).
"""

import argparse
import collections
import datetime
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _env(directory):
    with open(os.path.join(directory, "env.txt")) as f:
        text = f.read().splitlines()
    env = {"date": text[0][:10], "commit": text[1].split()[-1]}
    env["device"] = next((t for t in text if t.startswith("NVIDIA")), "?")
    for t in text:
        for name in ("torch", "triton", "torchvision", "transformers"):
            m = re.search(rf"\b{name} (\S+)", t)
            if m and name not in env:
                env[name] = m.group(1)
    return env


def _output_error(directory, model, mode):
    """max |tk - Triton| / max |Triton| of a model's output, or None."""
    paths = [os.path.join(directory, f"out.{c}.{model}.{mode}.pt") for c in ("tk", "triton")]
    if not all(os.path.exists(p) for p in paths):
        return None
    import torch

    tk_out, triton_out = (torch.load(p).double() for p in paths)
    if tk_out.shape != triton_out.shape:
        return float("inf")
    scale = triton_out.abs().max().item() or 1.0
    return round((tk_out - triton_out).abs().max().item() / scale, 6)


def _models(directory):
    runs = collections.defaultdict(dict)
    for r in _lines(os.path.join(directory, "cold.jsonl")):
        key = (r["model"], r["mode"])
        runs[key][f"{r['compiler']}_{r.get('start', 'cold')}"] = r
    rows = []
    for (model, mode), by in runs.items():
        row = {"model": model, "mode": mode}
        for name, r in sorted(by.items()):
            if "error" in r:
                row[f"{name}_error"] = r["error"].splitlines()[-1][:300]
                continue
            row[f"{name}_first_call_s"] = r["first_call_s"]
            row.setdefault("kernels", r.get("kernels"))
            if name.endswith("_cold"):
                row[f"{name.split('_')[0]}_step_ms"] = r.get("step_ms")
                m = r.get("metrics", {})
                row[f"{name}_kernel_compile_s"] = round(
                    m.get("async_compile.precompile", 0) + m.get("async_compile.wait", 0), 3)
            if name.startswith("tk"):
                row[f"{name}_fallbacks"] = len(r.get("fallbacks", []))
        tk_first, triton_first = row.get("tk_cold_first_call_s"), row.get("triton_cold_first_call_s")
        if tk_first and triton_first:
            row["cold_start_triton_over_tk"] = round(triton_first / tk_first, 2)
        if row.get("tk_step_ms") and row.get("triton_step_ms"):
            row["step_tk_speed_vs_triton"] = round(row["triton_step_ms"] / row["tk_step_ms"], 3)
        row["output_rel_err_tk_vs_triton"] = _output_error(directory, model, mode)
        rows.append(row)
    return rows


def _corpus(directory):
    rows = _lines(os.path.join(directory, "measure.jsonl"))
    if not rows:
        return None
    by_kind = collections.defaultdict(collections.Counter)
    errors = collections.Counter()
    compile_tk = compile_triton = 0.0
    for r in rows:
        c = by_kind[r["heuristic"]]
        c["kernels"] += 1
        ok = r["configs"] > 0 and r["compiled"] == r["configs"]
        c["compiled"] += ok
        c["ran"] += bool(r.get("ran"))
        c["matched"] += bool(r.get("match"))
        c["tk_launched"] += bool(r.get("tk_launches"))
        if not ok:
            errors[(r.get("error") or "?").splitlines()[0][:200]] += 1
        elif r.get("ran") and not r.get("match"):
            errors["mismatch: " + r["kernel"]] += 1
        elif r.get("run_error"):
            errors[r["run_error"].splitlines()[0][:200]] += 1
        compile_tk += r.get("compile_s_tk", 0) or 0
        compile_triton += r.get("compile_s_triton", 0) or 0
    total = collections.Counter()
    for c in by_kind.values():
        total.update(c)
    return {"kernels": total["kernels"], "compiled": total["compiled"], "ran": total["ran"],
            "matched": total["matched"], "tk_launched": total["tk_launched"],
            "by_heuristic": {k: dict(v) for k, v in sorted(by_kind.items())},
            "precompile_s_tk": round(compile_tk, 2), "precompile_s_triton": round(compile_triton, 2),
            "problems": dict(errors.most_common(15))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--command", required=True)
    parser.add_argument("--results", default=os.path.join(HERE, "..", "results"))
    args = parser.parse_args()
    env = _env(args.directory)
    pytest_tail = ""
    log = os.path.join(args.directory, "pytest.log")
    if os.path.exists(log):
        with open(log) as f:
            summary = [line for line in f if re.search(r"\d+ (passed|failed)", line)]
        pytest_tail = summary[-1].strip() if summary else ""
    result = {"benchmark": "inductor", **env, "command": args.command,
              "note": "with Triton, Inductor compiles kernels in its worker processes (compile_threads, "
                      "one per CPU); with tk, on a pool of threads of the model's process",
              "gpu_pytest": pytest_tail, "models": _models(args.directory),
              "corpus": _corpus(args.directory)}
    with open(os.path.join(args.results, "inductor.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    headline = []
    for m in result["models"]:
        part = f"{m['model']} {m['mode']}"
        if "cold_start_triton_over_tk" in m:
            part += f" cold x{m['cold_start_triton_over_tk']}"
        if "step_tk_speed_vs_triton" in m:
            part += f" step {m['step_tk_speed_vs_triton']}"
        if m.get("output_rel_err_tk_vs_triton") is not None:
            part += f" err {m['output_rel_err_tk_vs_triton']:.0e}"
        headline.append(part)
    c = result["corpus"]
    if c:
        headline.append(f"corpus {c['compiled']}/{c['kernels']} compile, {c['matched']}/{c['ran']} "
                        "match Triton")
    row = (f"| inductor | {env['date']} | {env['commit'][:7]} | torch.compile with tk vs Triton "
           f"on an {env['device']} (Triton/tk first call, tk/Triton step speed, tk-Triton "
           f"output error): {'; '.join(headline)} | `{args.command}` | - |\n")
    with open(os.path.join(args.results, "history.md"), "a") as f:
        f.write(row)
    print(row, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
