"""Measures how much of Triton's own code runs on tk with only the imports
changed: the upstream tutorials' correctness parts and test_core.py, on tk
and on Triton side by side, case id by case id. README.md beside this file
says what is run, how, and what the result files hold.

    python3 bench/triton_compat/run.py UPSTREAM --mode interpret [--impl tk,triton] \
        [--part test_core,tutorials] [--out bench/results] [-n 2] [--timeout 120] \
        [--triton-cases FILE] [-k EXPR]

UPSTREAM is the folder of unmodified upstream files (python/tutorials/,
python/test/unit/language/test_core.py, python/test/conftest.py,
python/triton/_internal_testing.py). Everything runs in a temporary copy made
outside the repository (tempfile's directory), rewritten by rewrite.py for tk
and left as it is for Triton.
"""

import argparse
import collections
import datetime
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import rewrite  # noqa: E402

TEST_CORE = "python/test/unit/language/test_core.py"
CONFTEST = "python/test/conftest.py"
HELPER = "python/triton/_internal_testing.py"
TUTORIALS = "python/tutorials"

# How each tutorial's correctness part runs: as a script (its module-level
# checks; benchmarks not run), or through pytest on its test function. In
# interpreter mode the attention tests run only at their smallest shape
# (Z=1, H=2, N_CTX=128, HEAD_DIM=64): a CPU runs the others for hours.
TUTORIAL_PYTEST = {"06-fused-attention.py": (
    "test_op", {"interpret": "1-2-128-64 or 64-128-2-1", "gpu": None})}


def _git(*args):
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def prepare(upstream, impl, root):
    """Copies the upstream files into `root`, rewritten for tk; returns the
    number of import lines rewritten per file."""
    changed = {}
    files = [TEST_CORE, CONFTEST] + [
        os.path.join(TUTORIALS, f) for f in sorted(os.listdir(os.path.join(upstream, TUTORIALS)))
        if f.endswith(".py")
    ]
    if impl == "tk":
        files.append(HELPER)
    for rel in files:
        src = os.path.join(upstream, rel)
        dst = os.path.join(root, rel)
        if rel == HELPER:  # beside the tests, as the top-level module rewrite.HELPER
            dst = os.path.join(root, "python", rewrite.HELPER + ".py")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if impl == "tk":
            text, changed[rel] = rewrite.rewrite(text)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
    place_libdevice(root)
    return changed


def place_libdevice(root):
    """Tutorial 07 finds libdevice where a Triton source checkout keeps it
    (python/tutorials/../../third_party/nvidia/backend/lib); the copy gets a
    link there to the installed Triton's (or the CUDA toolkit's) libdevice,
    the same file on both sides, so neither fails on the layout."""
    candidates = []
    spec = importlib.util.find_spec("triton")
    if spec and spec.origin:
        candidates.append(os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "lib",
                                       "libdevice.10.bc"))
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    candidates.append(os.path.join(cuda, "nvvm", "libdevice", "libdevice.10.bc"))
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found:
        lib = os.path.join(root, "third_party", "nvidia", "backend", "lib")
        os.makedirs(lib, exist_ok=True)
        os.symlink(found, os.path.join(lib, "libdevice.10.bc"))


def environment(impl, mode, root, tk_path):
    env = dict(os.environ)
    paths = [HERE]
    if impl == "tk":
        paths += [os.path.join(root, "python"), tk_path]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("TRITON_INTERPRET", None)
    env.pop("TK_INTERPRET", None)
    if mode == "interpret":
        # test_core and its helper read TRITON_INTERPRET (is_interpreter());
        # tk reads its own knob.
        env["TRITON_INTERPRET"] = "1"
        if impl == "tk":
            env["TK_INTERPRET"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_test_core(args, impl, root, env, log):
    """{case id: (outcome, reason)} of test_core.py under `impl`."""
    outcomes = os.path.join(root, "outcomes.jsonl")
    if os.path.exists(outcomes):
        os.remove(outcomes)
    env = dict(env, TRITON_COMPAT_OUTCOMES=outcomes)
    cmd = [args.python, "-m", "pytest", os.path.join(root, TEST_CORE), "-p", "outcomes",
           "-p", "no:cacheprovider", "-q", "--no-header", "-rN", "--tb=no",
           "--rootdir", os.path.join(root, "python", "test"),
           "--device", "cpu" if args.mode == "interpret" else "cuda",
           f"--timeout={args.timeout}", "--timeout-method=thread"]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs)]
    if args.k:
        cmd += ["-k", args.k]
    t0 = time.time()
    stopped = False
    with open(log, "w", encoding="utf-8") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        proc = subprocess.Popen(cmd, cwd=os.path.join(root, "python", "test"), env=env,
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=_left(args))
        except subprocess.TimeoutExpired:
            # The deadline: what ran is kept, the rest counts as not run.
            stopped = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    cases, collection = {}, []
    if os.path.exists(outcomes):
        with open(outcomes, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r["id"] == "<collection>":
                    collection.append(r["reason"])
                    continue
                cases[r["id"]] = (r["outcome"], r.get("reason", ""))
    return {"cases": cases, "collection_errors": collection, "exit": proc.returncode,
            "seconds": round(time.time() - t0), "stopped_at_deadline": stopped}


def _left(args):
    """Seconds left before --deadline (None: no deadline)."""
    if not args.deadline:
        return None
    return max(1.0, args.deadline - (time.time() - args.started))


def run_tutorials(args, impl, root, env, logdir):
    results = {}
    tdir = os.path.join(root, TUTORIALS)
    for name in sorted(os.listdir(tdir)):
        if not name.endswith(".py") or (args.tutorials and name[:2] not in args.tutorials):
            continue
        path = os.path.join(tdir, name)
        if name in TUTORIAL_PYTEST:
            test, selection = TUTORIAL_PYTEST[name]
            cmd = [args.python, "-m", "pytest", f"{path}::{test}", "-q", "--no-header",
                   "-p", "no:cacheprovider", "--tb=line", f"--timeout={args.tutorial_timeout}",
                   "--timeout-method=thread"]
            if selection.get(args.mode):
                cmd += ["-k", selection[args.mode]]
        else:
            cmd = [args.python, os.path.join(HERE, "tutorial_harness.py"), impl, path]
        t0 = time.time()
        limit = args.tutorial_timeout if _left(args) is None else min(args.tutorial_timeout,
                                                                     _left(args))
        try:
            proc = subprocess.run(cmd, cwd=tdir, env=env, capture_output=True, text=True,
                                  timeout=limit)
            out, code = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (
                e.stdout or "")
            out += f"\n[triton_compat] timed out after {limit:.0f} s"
            code = "timeout"
        with open(os.path.join(logdir, f"{impl}-{name}.log"), "w", encoding="utf-8") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n" + out)
        mismatch = "❌" in out
        passed = code == 0 and not mismatch
        reason = ""
        if not passed:
            reason = "a check printed ❌" if code == 0 else _last_error(out)
        results[name] = {"passed": passed, "seconds": round(time.time() - t0, 1),
                         "reason": reason[:300]}
        print(f"  {impl} {name}: {'pass' if passed else 'FAIL ' + reason[:120]}", flush=True)
    return results


def _last_error(out):
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Interrupt|Exit)\b", line) or "error:" in line:
            return line
    for line in reversed(lines):
        if line.startswith("FAILED") or "failed" in line:
            return line
    return lines[-1] if lines else "no output"


#
# Comparison
#


def _function(case):
    return case.split("[", 1)[0]


_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?")
_PATH = re.compile(r"(/[^\s:'\"]+)+\.py(:\d+)*")
_ADDRESS = re.compile(r"0x[0-9a-f]+")


def reason_group(reason):
    """A reason with what differs from case to case (numbers, paths,
    addresses, tensor values) taken out, so cases with one cause group."""
    text = reason.split("\n", 1)[0]
    text = _PATH.sub("FILE", text)
    text = _ADDRESS.sub("ADDR", text)
    text = re.sub(r"tensor\(.*", "tensor(...)", text)
    text = re.sub(r"array\(.*", "array(...)", text)
    text = re.sub(r"Mismatched elements: .*", "Mismatched elements: ...", text)
    text = _NUMBER.sub("N", text)
    return text[:160]


def compare(tk, triton):
    """Per test function: cases, and each side's outcome counts; the cases
    Triton passes that tk does not, grouped by tk's reason."""
    functions = collections.OrderedDict()
    ids = sorted(set(triton["cases"]) | set(tk["cases"]), key=lambda c: (_function(c), c))
    missing_reason = "not collected: " + (tk["collection_errors"] or ["(no outcome)"])[0]
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    examples = {}
    for case in ids:
        fn = _function(case)
        row = functions.setdefault(fn, {"cases": 0, "triton": collections.Counter(),
                                        "tk": collections.Counter(), "both_pass": 0})
        row["cases"] += 1
        t_out = triton["cases"].get(case, ("absent", ""))[0]
        k_out, k_reason = tk["cases"].get(case, ("absent", missing_reason))
        row["triton"][t_out] += 1
        row["tk"][k_out] += 1
        if t_out == "passed" and k_out == "passed":
            row["both_pass"] += 1
        elif t_out == "passed":
            key = reason_group(k_reason) if k_reason else k_out
            groups[key][fn].append(case[len(fn):].strip("[]") or case)
            examples.setdefault(key, k_reason)
    failing = sorted(
        ({"reason": key, "example": examples[key], "count": sum(map(len, fns.values())),
          "cases": {fn: ids for fn, ids in sorted(fns.items())}}
         for key, fns in groups.items()), key=lambda g: -g["count"])
    totals = {"cases": len(ids),
              "triton": collections.Counter(), "tk": collections.Counter(), "both_pass": 0}
    for row in functions.values():
        totals["triton"].update(row["triton"])
        totals["tk"].update(row["tk"])
        totals["both_pass"] += row["both_pass"]
    for row in list(functions.values()) + [totals]:
        row["triton"], row["tk"] = dict(row["triton"]), dict(row["tk"])
    return functions, totals, failing


def _counts(c):
    return f"{c.get('passed', 0)}/{c.get('failed', 0) + c.get('error', 0)}/{c.get('skipped', 0)}"


def write_results(args, meta, tk, triton, tutorials, out_dir):
    """triton-compat-<mode>.json and .md in the results folder."""
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"triton-compat-{args.mode}")
    result = dict(meta)
    md = [f"# Triton compatibility, {args.mode} mode", "",
          f"- date: {meta['date']}", f"- commit: {meta['commit']}",
          f"- command: `{meta['command']}`", f"- machine: {meta['machine']}",
          f"- upstream: {meta['upstream']}",
          f"- versions: tk {meta.get('tk_version', '-')}, Triton {meta.get('triton_version', '-')}"
          f", torch {meta.get('torch_version', '-')}"
          + (f", device {meta['device']}" if meta.get("device") else ""),
          ""]
    if meta.get("triton_cases_from"):
        md.insert(-1, f"- Triton's outcomes: from an earlier run's {meta['triton_cases_from']}"
                  + (f" ({meta['triton_cases_note']})" if meta.get("triton_cases_note") else ""))
    if tutorials:
        result["tutorials"] = tutorials
        md += ["## Tutorials (correctness parts, imports rewritten)", "",
               "| tutorial | " + " | ".join(tutorials) + " |",
               "|---|" + "---|" * len(tutorials)]
        names = sorted({n for r in tutorials.values() for n in r})
        for n in names:
            cells = []
            for impl in tutorials:
                r = tutorials[impl].get(n)
                cells.append("" if r is None else ("pass" if r["passed"] else
                                                   "FAIL: " + r["reason"].replace("|", "\\|")[:100]))
            md.append(f"| {n} | " + " | ".join(cells) + " |")
        md.append("")
    if tk is not None and triton is not None:
        functions, totals, failing = compare(tk, triton)
        tp = totals["triton"].get("passed", 0)
        share = 100.0 * totals["both_pass"] / tp if tp else 0.0
        result["test_core"] = {
            "totals": totals, "share_of_triton_passes": round(share, 1),
            "seconds": {"tk": tk["seconds"], "triton": triton["seconds"]},
            "stopped_at_deadline": {"tk": tk.get("stopped_at_deadline", False),
                                    "triton": triton.get("stopped_at_deadline", False)},
            "collection_errors": {"tk": tk["collection_errors"],
                                  "triton": triton["collection_errors"]},
            "functions": functions, "failing": failing}
        md += ["## test_core.py", "",
               f"tk passes {totals['both_pass']} of the {tp} cases Triton passes ({share:.1f}%); "
               f"{totals['cases']} cases in all. Counts are passed/failed/skipped "
               f"(failed includes errors; 'absent': not collected on that side).", ""]
        for impl, run in (("tk", tk), ("Triton", triton)):
            if run.get("stopped_at_deadline"):
                md += [f"{impl}'s run was stopped at the deadline (--deadline): the cases it had "
                       "not reached count as absent.", ""]
        if tk["collection_errors"]:
            md += [f"tk's collection stopped: `{tk['collection_errors'][0][:200]}`", ""]
        md += ["| test function | cases | Triton | tk | tk passes of Triton's |",
               "|---|---|---|---|---|"]
        for fn, row in functions.items():
            md.append(f"| {fn} | {row['cases']} | {_counts(row['triton'])} | {_counts(row['tk'])}"
                      f" | {row['both_pass']}/{row['triton'].get('passed', 0)} |")
        md += ["", "## Cases Triton passes and tk does not, by reason", "",
               "Every case is listed in the JSON file beside this one (`test_core.failing`).", "",
               "| cases | reason (normalised) | test functions |", "|---|---|---|"]
        for g in failing:
            fns = ", ".join(f"{fn} ({len(ids)})" for fn, ids in
                            sorted(g["cases"].items(), key=lambda kv: -len(kv[1]))[:6])
            more = "" if len(g["cases"]) <= 6 else f", +{len(g['cases']) - 6} more"
            md.append(f"| {g['count']} | `{g['reason'].replace('|', '/')}` | {fns}{more} |")
        md.append("")
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(result, f, separators=(",", ":"), sort_keys=False)
        f.write("\n")
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    return stem


def save_cases(path, run):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(run, f, separators=(",", ":"))


def load_cases(path):
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    run["cases"] = {k: tuple(v) for k, v in run["cases"].items()}
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("upstream", help="the folder of unmodified upstream files")
    p.add_argument("--mode", choices=["interpret", "gpu"], required=True)
    p.add_argument("--impl", default="tk,triton", help="tk, triton or both (comma-separated)")
    p.add_argument("--part", default="test_core,tutorials")
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results"),
                   help="where the result files go")
    p.add_argument("--raw", default=None,
                   help="where each side's per-case outcomes and the logs go (default: the "
                   "temporary directory, which is kept)")
    p.add_argument("--tk-path", default=os.path.join(REPO, "build", "python"),
                   help="the folder that holds the tk package")
    p.add_argument("--tk-commit", default=None,
                   help="the commit the package at --tk-path was built from (default: this "
                   "checkout's HEAD, +dirty when python/ or bench/ has uncommitted changes)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("-n", "--jobs", type=int, default=2, help="pytest-xdist workers")
    p.add_argument("--timeout", type=int, default=120, help="seconds per test case")
    p.add_argument("--tutorial-timeout", type=int, default=540)
    p.add_argument("--tutorials", default="", help="which tutorials, by number (01,02)")
    p.add_argument("-k", default="", help="pytest -k for test_core (a subset)")
    p.add_argument("--parallel", action="store_true",
                   help="run the two sides, and each side's tutorials and test_core, at the "
                   "same time (test_core with -n workers per side)")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds from the start after which running tests are stopped and the "
                   "results so far written (cases not run count as absent)")
    p.add_argument("--triton-cases", default=None,
                   help="Triton's per-case outcomes from an earlier run (its raw "
                   "triton-cases.json) instead of running Triton's test_core again")
    args = p.parse_args()
    args.tutorials = [t for t in args.tutorials.split(",") if t]
    upstream = os.path.abspath(args.upstream)
    impls = [i for i in args.impl.split(",") if i]
    parts = [x for x in args.part.split(",") if x]
    work = tempfile.mkdtemp(prefix="triton-compat-")
    raw = os.path.abspath(args.raw or work)
    os.makedirs(raw, exist_ok=True)
    print(f"[triton_compat] temporary copies under {work}; raw outcomes and logs in {raw}",
          flush=True)
    meta = {
        "benchmark": f"triton-compat-{args.mode}",
        "date": datetime.date.today().isoformat(),
        "commit": args.tk_commit or _git("rev-parse", "--short=12", "HEAD") + ("+dirty" if _git(
            "status", "--porcelain", "--untracked-files=no", "python", "bench") else ""),
        "command": "python3 bench/triton_compat/run.py " + " ".join(
            shlex.quote(a) for a in sys.argv[1:]),
        "machine": f"{os.uname().machine}, {os.cpu_count()} cores",
        "upstream": "Triton 3.6 cut, 004d7f5f58c2 (the upstream folder's MANIFEST.md)",
        "mode": args.mode,
    }
    runs, tutorials = {}, {}
    args.started = time.time()

    def side(impl):
        root = os.path.join(work, impl)
        changed = prepare(upstream, impl, root)
        if impl == "tk":
            meta["rewritten_import_lines"] = sum(changed.values())
        env = environment(impl, args.mode, root, os.path.abspath(args.tk_path))
        versions = subprocess.run(
            [args.python, "-c", f"import {impl}, torch; print({impl}.__version__, "
             "torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))"],
            env=env, capture_output=True, text=True).stdout.split(maxsplit=2)
        meta[f"{impl}_version"] = versions[0] if versions else "?"
        if versions[1:]:
            meta["torch_version"] = versions[1]
        if versions[2:] and versions[2].strip() != "False":
            meta["device"] = versions[2].strip()
        def tutorial_part():
            print(f"[triton_compat] {impl}: tutorials", flush=True)
            tutorials[impl] = run_tutorials(args, impl, root, env, raw)

        worker = None
        if "tutorials" in parts:
            if args.parallel:  # beside test_core, so the deadline leaves room for both
                worker = threading.Thread(target=tutorial_part)
                worker.start()
            else:
                tutorial_part()
        if "test_core" in parts and not (impl == "triton" and args.triton_cases):
            print(f"[triton_compat] {impl}: test_core.py ({args.mode})", flush=True)
            runs[impl] = run_test_core(args, impl, root, env,
                                       os.path.join(raw, f"{impl}-test_core.log"))
            runs[impl]["note"] = f"{meta['date']}, {meta['command']}"
            if impl == "triton":
                runs[impl]["triton_version"] = meta.get("triton_version", "-")
            save_cases(os.path.join(raw, f"{impl}-cases.json"), runs[impl])
            c = collections.Counter(o for o, _ in runs[impl]["cases"].values())
            print(f"[triton_compat] {impl}: {dict(c)} in {runs[impl]['seconds']} s"
                  + (" (stopped at the deadline)" if runs[impl]["stopped_at_deadline"] else ""),
                  flush=True)
        if worker is not None:
            worker.join()

    sides = [i for i in ["tk", "triton"] if i in impls]
    if args.parallel:
        threads = [threading.Thread(target=side, args=(i,)) for i in sides]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for i in sides:
            side(i)
    if "test_core" in parts and "triton" not in runs and args.triton_cases:
        runs["triton"] = load_cases(args.triton_cases)
        meta["triton_cases_from"] = os.path.basename(args.triton_cases)
        meta["triton_cases_note"] = runs["triton"].get("note", "")
        meta["triton_version"] = runs["triton"].get("triton_version", "-")
    stem = write_results(args, meta, runs.get("tk"), runs.get("triton"), tutorials, args.out)
    print(f"[triton_compat] wrote {stem}.json and {stem}.md", flush=True)


if __name__ == "__main__":
    main()
