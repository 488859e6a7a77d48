#!/usr/bin/env python3
"""tk's main job: every tutorial through the compiler, then run and checked.
run.sh runs it after building, and test.sh runs it as its `tutorials` step, so
CI (which runs test.sh) proves what run.sh does.

    python3 scripts/tutorials.py [--build DIR] [--tutorials DIR] [--only STAGES]

  --build DIR      the Release tree (default: build): DIR/bin/tkc, DIR/python
                   (put before PYTHONPATH), DIR/tutorials/05-host-autotune
  --tutorials DIR  the tutorials (default: tutorials): *.tk, *.py, kernels.json
  --only STAGES    a comma-separated subset of the stages below, in their order

Stages:
  ptx          each kernel of each DIR/*.tk (the functions nothing else names,
               the `kernel` lines of `tkc --emit=summary`) compiled to PTX with
               its own signature, constexprs and options from DIR/kernels.json,
               and assembled by ptxas for sm_90 or the entry's arch. A kernel
               without an entry, or an entry without its kernel, fails the
               stage. Without ptxas (TK_PTXAS_PATH, PATH, /usr/local/cuda/bin)
               the PTX is not assembled, and the verdict says so.
  interpreter  `tkc run` of vector add and softmax (random inputs, bounds
               checked, outputs never read before written), and each
               DIR/*.py tutorial with TK_INTERPRET=1, which checks its result
               against numpy in float64 and prints the check.
  gpu          where tk's driver finds a GPU: 05-host-autotune (checked against
               a CPU reference), each DIR/*.py on the GPU (checked against
               torch) and one table of tk against Triton, torch and cuBLAS
               from the tutorials' own --bench measurements at their --small
               sizes; the Python part needs torch with CUDA (Triton where
               installed). Where there is no GPU: skipped, with the reason.

Each step prints one line, with the output of the checks under it; the last
line is the verdict. Exit status 0 only when every step passed (a skip is not
a failure), 1 otherwise, 2 on bad usage.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ("ptx", "interpreter", "gpu")

# The two tutorials `tkc run` takes, as run.sh ran them before this script:
# sizes and grids that leave the last program partly masked.
TKC_RUNS = [
    ["01-vector-add.tk", "--kernel", "add_kernel", "--signature", "*fp32, *fp32, *fp32, i32",
     "-D", "BLOCK_SIZE=1024", "--grid", "4", "--size", "4000", "--arg", "n_elements=4000",
     "--out", "output_ptr"],
    ["02-fused-softmax.tk", "--kernel", "softmax_kernel", "--signature",
     "*fp32, *fp32, i32, i32, i32, i32", "-D", "BLOCK_SIZE=1024", "--grid", "8", "--size", "8000",
     "--arg", "input_row_stride=1000", "--arg", "output_row_stride=1000", "--arg", "n_rows=8",
     "--arg", "n_cols=1000", "--out", "output_ptr"],
]


def tkc_args(entry, tk_file):
    """tkc's arguments (after tkc) that compile one kernels.json entry to PTX
    on stdout: the kernel, its signature, -D per constexpr, --OPTION=VALUE per
    option (num_warps -> --num-warps). scripts/ptx_corpus.py uses it too."""
    args = [tk_file, "--kernel", entry["kernel"], "--emit=ptx", "--signature", entry["signature"]]
    for name, value in entry.get("constants", {}).items():
        args += ["-D", f"{name}={value}"]
    args += [f"--{k.replace('_', '-')}={v}" for k, v in entry.get("options", {}).items()]
    return args


def load_manifest(tutorials):
    with open(os.path.join(tutorials, "kernels.json")) as f:
        return json.load(f)["kernels"]


def shown(path):
    """A path as the user would type it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def find_ptxas():
    for candidate in (os.environ.get("TK_PTXAS_PATH"), shutil.which("ptxas"),
                      "/usr/local/cuda/bin/ptxas"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def run(cmd, env=None, timeout=900, cwd=None):
    """(exit status, stdout and stderr together); a timeout is status 124."""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                              cwd=cwd, timeout=timeout, text=True)
        return proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n(stopped after {timeout} s)\n"


def indented(text, limit=None):
    lines = text.rstrip("\n").splitlines()
    if limit is not None and len(lines) > limit:
        lines = [f"... ({len(lines) - limit} lines above)"] + lines[-limit:]
    return "".join(f"      {line}\n" for line in lines)


class Job:
    """What every stage reports: per stage, passed and failed step names and
    notes (skips); printed as the verdict."""

    def __init__(self):
        self.passed = {s: [] for s in STAGES}
        self.failed = {s: [] for s in STAGES}
        self.notes = {s: [] for s in STAGES}

    def step(self, stage, name, ok, line, output=""):
        (self.passed if ok else self.failed)[stage].append(name)
        print(f"  {'ok  ' if ok else 'FAIL'} {line}", flush=True)
        if output:
            print(indented(output, None if ok else 40), end="", flush=True)

    def ok(self):
        return not any(self.failed.values())


def python_env(build, interpret):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(build, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("TK_INTERPRET", None)
    if interpret:
        env["TK_INTERPRET"] = "1"
    return env


# ---- ptx --------------------------------------------------------------------

def kernels_of(tkc, tk_file):
    """[(name, line)] of the kernels of one .tk file, or an error text."""
    status, out = run([tkc, "--emit=summary", tk_file])
    if status != 0:
        return None, out
    return [(m.group(1), int(m.group(2)))
            for m in re.finditer(r"^  kernel (\S+) \(line (\d+)\)", out, re.M)], None


def stage_ptx(job, build, tutorials):
    tkc = os.path.join(build, "bin", "tkc")
    entries = load_manifest(tutorials)
    manifest = shown(os.path.join(tutorials, "kernels.json"))
    ptxas = find_ptxas()
    files = sorted(f for f in os.listdir(tutorials) if f.endswith(".tk"))
    print(f"\n== every kernel of {shown(tutorials)}/*.tk to PTX with its {manifest} entry, "
          + (f"assembled by {ptxas}" if ptxas else "not assembled (no ptxas found)"), flush=True)
    if not ptxas:
        job.notes["ptx"].append("PTX not assembled: no ptxas (TK_PTXAS_PATH, PATH, "
                                "/usr/local/cuda/bin)")

    # The manifest against the files: every kernel listed, every entry a kernel.
    listed = {}
    for e in entries:
        listed.setdefault(os.path.basename(e["file"]), []).append(e["kernel"])
    for f in sorted(set(listed) - set(files)):
        job.step("ptx", f"{f} (manifest)", False,
                 f"{manifest} lists {', '.join(listed[f])} of {f}, which is not in "
                 f"{shown(tutorials)}")
    for f in files:
        path = os.path.join(tutorials, f)
        kernels, error = kernels_of(tkc, path)
        if kernels is None:
            job.step("ptx", f"{f} (front end)", False, f"{shown(path)}: tkc --emit=summary "
                     "failed", error)
            continue
        names = [k for k, _ in kernels]
        for name, line in kernels:
            if name not in listed.get(f, []):
                job.step("ptx", f"{f}:{name} (manifest)", False,
                         f"{shown(path)}:{line}: kernel '{name}' has no entry in {manifest}: add "
                         "one with its signature and constexprs")
        for name in listed.get(f, []):
            if name not in names:
                job.step("ptx", f"{f}:{name} (manifest)", False,
                         f"{manifest} lists '{name}' of {f}, which has no kernel of that name "
                         f"(its kernels: {', '.join(names) or 'none'})")

    with tempfile.TemporaryDirectory() as tmp:
        for i, e in enumerate(entries):
            f = os.path.basename(e["file"])
            path = os.path.join(tutorials, f)
            if not os.path.exists(path):
                continue
            name = f"{f}:{e['kernel']}"
            arch = e.get("options", {}).get("arch", "sm_90")
            ptx = os.path.join(tmp, f"{i}.ptx")
            status, out = run([tkc] + tkc_args(e, path) + ["-o", ptx])
            if status != 0:
                job.step("ptx", name, False, f"{name:<42} tkc --emit=ptx failed (exit {status})",
                         out)
                continue
            with open(ptx) as fh:
                lines = sum(1 for _ in fh)
            verdict = f"{name:<42} {arch:<7} PTX {lines:>5} lines"
            if not ptxas:
                job.step("ptx", name, True, verdict)
                continue
            status, out = run([ptxas, f"-arch={arch}", ptx, "-o", os.path.join(tmp, f"{i}.cubin")])
            job.step("ptx", name, status == 0,
                     verdict + (", ptxas ok" if status == 0 else f", ptxas FAILED (exit {status})"),
                     out if status != 0 else "")


# ---- interpreter ------------------------------------------------------------

def stage_interpreter(job, build, tutorials):
    tkc = os.path.join(build, "bin", "tkc")
    print("\n== on the CPU interpreter", flush=True)
    for args in TKC_RUNS:
        path = os.path.join(tutorials, args[0])
        if not os.path.exists(path):
            continue
        status, out = run([tkc, "run", path] + args[1:])
        job.step("interpreter", f"tkc run {args[0]}", status == 0,
                 f"tkc run {shown(path)} (random inputs, bounds checked)", out)
    env = python_env(build, interpret=True)
    for f in sorted(f for f in os.listdir(tutorials) if f.endswith(".py")):
        path = os.path.join(tutorials, f)
        status, out = run([sys.executable, path], env=env)
        job.step("interpreter", f, status == 0,
                 f"TK_INTERPRET=1 python3 {shown(path)}"
                 + ("" if status == 0 else f" (exit {status})"), out)


# ---- gpu --------------------------------------------------------------------

PROBE = """
import json, tk
ok, why = tk._C.gpu_available()
torch_why = None
try:
    import torch
    if not torch.cuda.is_available():
        torch_why = "torch sees no CUDA device"
except ImportError:
    torch_why = "torch is not installed"
print(json.dumps({"gpu": bool(ok), "why": why, "torch": torch_why}))
"""


def stage_gpu(job, build, tutorials):
    env = python_env(build, interpret=False)
    status, out = run([sys.executable, "-c", PROBE], env=env, timeout=120)
    try:
        probe = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        probe = None
    if status != 0 or probe is None:
        print("\n== on the GPU", flush=True)
        job.step("gpu", "probe", False, "looking for a GPU through tk._C failed", out)
        return
    if not probe["gpu"]:
        print(f"\n== on the GPU: skipped ({probe['why']})", flush=True)
        # The verdict keeps the reason, not the loader's message inside it.
        job.notes["gpu"].append(probe["why"].split(" (")[0])
        return
    print("\n== on the GPU", flush=True)
    host = os.path.join(build, "tutorials", "05-host-autotune")
    if os.path.exists(host):
        status, out = run([host, "--tutorials", tutorials], env=env)
        job.step("gpu", "05-host-autotune", status == 0,
                 f"{shown(host)} --tutorials {shown(tutorials)}", out)
    else:
        job.notes["gpu"].append(f"{shown(host)} not built")
    if probe["torch"]:
        print(f"  skip the Python tutorials on the GPU: {probe['torch']}", flush=True)
        job.notes["gpu"].append(f"Python tutorials skipped: {probe['torch']}")
        return
    for f in sorted(f for f in os.listdir(tutorials) if f.endswith(".py")):
        path = os.path.join(tutorials, f)
        status, out = run([sys.executable, path], env=env)
        # A tutorial falls back to the interpreter when it finds no GPU: only
        # a GPU run counts here.
        on_gpu = "on the GPU" in out
        job.step("gpu", f, status == 0 and on_gpu,
                 f"python3 {shown(path)}" + ("" if status == 0 else f" (exit {status})")
                 + ("" if on_gpu or status != 0 else " ran, but not on the GPU"), out)
    status, out = run([sys.executable, os.path.abspath(__file__), "--gpu-table", "--tutorials",
                       tutorials], env=env, timeout=1800)
    job.step("gpu", "table", status == 0,
             "tk against Triton, torch and cuBLAS: the tutorials' --bench at --small sizes", out)


def load_tutorial(path):
    name = "tutorial_" + os.path.basename(path)[:-3].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu_table(tutorials):
    """Prints one table of every tutorial's benchmark(small=True): per point,
    tk, Triton and torch (cuBLAS for the matmul) and tk's ratio to each."""
    providers = ("tk", "triton", "torch")
    print(f"{'tutorial':<17} {'point':<16} {'unit':<8}"
          + "".join(f"{p:>9}" for p in providers) + f"{'tk/triton':>11}{'tk/torch':>10}")
    for f in sorted(f for f in os.listdir(tutorials) if f.endswith(".py")):
        module = load_tutorial(os.path.join(tutorials, f))
        if not hasattr(module, "benchmark"):
            continue
        mark = module.benchmark(True)
        results = mark.run()
        for b in mark.benchmarks:
            for row in results[b.plot_name]:
                value = dict(zip(b.line_vals, row[1:]))
                point = "=".join(b.x_names) + f"={row[0]}"
                cells = "".join(f"{value[p]:>9.4g}" if p in value else f"{'-':>9}"
                                for p in providers)
                ratios = "".join(f"{value['tk'] / value[p]:>{w}.2f}" if p in value else
                                 f"{'-':>{w}}" for p, w in (("triton", 11), ("torch", 10)))
                print(f"{f[:-3]:<17} {point:<16} {b.ylabel:<8}{cells}{ratios}")
    print("(higher is better; torch is cuBLAS for 04-matmul)")
    return 0


# ---- main -------------------------------------------------------------------

def verdict(job, stages, seconds):
    parts = []
    for s in stages:
        n_ok, n_failed = len(job.passed[s]), len(job.failed[s])
        text = f"{s} {n_ok}/{n_ok + n_failed}" if n_ok + n_failed else f"{s} skipped"
        if job.notes[s]:
            text += f" ({'; '.join(job.notes[s])})"
        parts.append(text)
    failed = [name for s in stages for name in job.failed[s]]
    result = "all passed" if not failed else f"FAILED: {', '.join(failed)}"
    return f"tutorials: {result}; {', '.join(parts)}; {seconds:.0f}s"


def main(argv):
    parser = argparse.ArgumentParser(
        description="tk's main job: every tutorial kernel to PTX + ptxas, the tutorials on the "
                    "interpreter and (where there is one) on the GPU, each checked.")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--tutorials", default=os.path.join(ROOT, "tutorials"))
    parser.add_argument("--only", default=",".join(STAGES))
    parser.add_argument("--gpu-table", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tutorials = os.path.abspath(args.tutorials)
    if args.gpu_table:
        return gpu_table(tutorials)
    build = os.path.abspath(args.build)
    stages = [s for s in args.only.split(",") if s]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        parser.error(f"unknown stage {', '.join(unknown)} (the stages: {', '.join(STAGES)})")
    # The gpu stage alone needs no tkc: `import tk` may come from PYTHONPATH
    # (a GPU machine's bundle) instead of DIR/python.
    if set(stages) - {"gpu"} and not os.access(os.path.join(build, "bin", "tkc"), os.X_OK):
        parser.error(f"no {shown(os.path.join(build, 'bin', 'tkc'))}: build first "
                     "(bash run.sh, or --build DIR)")
    start = time.monotonic()
    job = Job()
    run_stage = {"ptx": stage_ptx, "interpreter": stage_interpreter, "gpu": stage_gpu}
    for s in STAGES:
        if s in stages:
            run_stage[s](job, build, tutorials)
    print()
    print(verdict(job, [s for s in STAGES if s in stages], time.monotonic() - start))
    return 0 if job.ok() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
