#!/usr/bin/env python3
"""Every kernel tk tests, compiled for AMD GPUs (compile only: no AMD GPU here).

    python3 scripts/amdgpu_kernels.py [--build DIR] [--arch A,B] [--sets S,T] [--jobs N]

The sets (default all three):
  tutorials  each entry of tutorials/kernels.json (its signature, constexprs
             and options, as scripts/tutorials.py compiles it to PTX);
  difftest   each case of the GPU differential test (tests/gpu/DiffCases*.cpp:
             `DIR/tests/gpu/gpu_difftest --dump-cases` writes their kernels
             with the sizes, warps and constexprs of their seeded draw);
  filecheck  each `%tkc ... --emit=ptx|llvm|cubin` RUN line of
             tests/filecheck/codegen/*.tk that expects success (its file,
             kernel, signature, -D values, warps, stages, flags and `env`).
Each goes through `tkc --target=amdgcn --arch=ARCH --emit=hsaco` for each
ARCH (default gfx942 and gfx90a; an NVIDIA --arch is dropped), and
llvm-objdump (LLVM 19) reads every code object, which must hold the kernel.

What the amdgcn target does not lower yet must fail with a located error
that EXPECTED below lists (docs/codegen.md, "AMDGPU"); the kernels that do
are printed, grouped by reason. Any other outcome fails: a crash, an LLVM
error, an error EXPECTED does not list (also a "not supported on amdgcn yet"
one), a code object llvm-objdump cannot read or that lacks the kernel. Exit
status 0 when there is none, 1 otherwise. The three sets are about 1 400
kernels, 2 800 compiles: two to three minutes on two cores.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import tutorials as main_job  # noqa: E402  (load_manifest)

# What amdgcn does not lower yet, each a located error: (why, the error's
# text as a regular expression). A kernel fails with these errors only, or it
# fails the script.
EXPECTED = [
    ("libdevice functions ROCm's device libraries have no equivalent of "
     "(lowering/codegen/ROCmLibdevice.def)",
     r"'extern_elementwise' \(libdevice\.\w+: ROCm's device libraries have no equivalent of "
     r"__nv_\w+\) is not supported on amdgcn yet"),
    ("tk.inline_asm_elementwise: its assembly is PTX",
     r"'inline_asm' \(tk\.inline_asm_elementwise; its assembly is PTX\) is not supported on "
     r"amdgcn yet"),
    ("tk.extra.cuda.globaltimer and smid: PTX special registers",
     r"'special_register' \(tk\.extra\.cuda\.globaltimer and smid read PTX's %globaltimer and "
     r"%smid\) is not supported on amdgcn yet"),
    ("TMA: a `tma` descriptor signature entry (a Python launch's on sm_90 and above under "
     "TK_TMA=1); amdgcn's descriptors load and store through pointers",
     r"'tma_(load|store)' \(TMA; tensor descriptors load and store through pointers on "
     r"amdgcn\) is not supported on amdgcn yet"),
    ("fp8e4nv / fp8e5 conversions (NVIDIA's cvt, sm_89 and newer)",
     r"fp8e\w+ conversions need sm_89 or newer \(NVIDIA\); the target is gfx\w+"),
    # Not features but the hardware's limits, which kernels sized for
    # NVIDIA's (227 KiB of shared memory; 32 warps of 32) pass.
    ("more shared memory than a workgroup's 64 KiB of LDS",
     r"needs \d+ bytes of shared memory, more than the 65536 available per program on gfx\w+"),
    ("more threads than a workgroup's 1024 (num_warps counts 64-lane wavefronts on gfx9)",
     r"num_warps = \d+ of '@\w+' is \d+ threads of 64-lane warps, more than the 1024 a "
     r"program may have"),
]
ERROR = re.compile(r"^(?:.*?:\d+:\d+: )?error: (.*)$")


def find_tool(name):
    for candidate in (f"/usr/lib/llvm-19/bin/{name}", shutil.which(f"{name}-19"),
                      shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Kernel:
    """One compile: `args` are tkc's (file, kernel, signature, -D, options),
    without --emit, --arch and -o."""

    def __init__(self, group, name, args, kernel=None, env=None):
        self.group, self.name, self.args, self.kernel, self.env = group, name, args, kernel, env


def tutorial_kernels():
    out = []
    for e in main_job.load_manifest(os.path.join(ROOT, "tutorials")):
        path = os.path.join(ROOT, "tutorials", os.path.basename(e["file"]))
        args = [path, "--kernel", e["kernel"], "--signature", e["signature"]]
        args += [a for n, v in e.get("constants", {}).items() for a in ("-D", f"{n}={v}")]
        args += [f"--{k.replace('_', '-')}={v}" for k, v in e.get("options", {}).items()
                 if k != "arch"]
        out.append(Kernel("tutorials", f"{os.path.basename(e['file'])}:{e['kernel']}", args,
                          e["kernel"]))
    return out


def difftest_kernels(build, tmp):
    difftest = os.path.join(build, "tests", "gpu", "gpu_difftest")
    folder = os.path.join(tmp, "difftest")
    proc = subprocess.run([difftest, "--dump-cases", folder], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{difftest} --dump-cases failed:\n{proc.stdout}{proc.stderr}")
    with open(os.path.join(folder, "kernels.json")) as f:
        entries = json.load(f)["kernels"]
    out = []
    for e in entries:
        args = [os.path.join(folder, e["file"]), "--kernel", e["kernel"]]
        if e["signature"]:
            args += ["--signature", e["signature"]]
        args += [a for n, v in e["constants"].items() for a in ("-D", f"{n}={v}")]
        args += [f"--{k.replace('_', '-')}={v}" for k, v in e["options"].items()]
        out.append(Kernel("difftest", e["case"], args + e["flags"], e["kernel"]))
    return out


def run_lines(path):
    """The RUN lines of a lit test, continuation lines joined, and its DEFINEs."""
    runs, defines, cur = [], {}, ""
    for line in open(path).read().splitlines():
        m = re.match(r"#\s*DEFINE:\s*(%\{\w+\})\s*=\s*(.*)$", line)
        if m:
            defines[m.group(1)] = m.group(2).strip()
        m = re.match(r"#\s*RUN:\s?(.*)$", line)
        if m:
            text = m.group(1)
            if text.rstrip().endswith("\\"):
                cur += text.rstrip()[:-1] + " "
                continue
            runs.append(cur + text)
            cur = ""
    return runs, defines


def filecheck_kernels():
    out, seen = [], set()
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "filecheck", "codegen", "*.tk"))):
        runs, defines = run_lines(path)
        for run in runs:
            run = re.sub(r"%if \w+ %\{(.*)%\}", r"\1", run)
            for key, value in defines.items():
                run = run.replace(key, value)
            run = run.replace("%S", os.path.dirname(path)).replace("%s", path)
            words = shlex.split(re.split(r"\s(?:\||&&|2>&1)", run)[0])
            env = {}
            while words and words[0] == "env":
                words.pop(0)
                while words and re.match(r"^[A-Z_]+=", words[0]):
                    k, v = words.pop(0).split("=", 1)
                    env[k] = v
            # Only the compiles that are to succeed (`not %tkc` tests an error).
            if not words or words[0] != "%tkc":
                continue
            emit = next((w.split("=", 1)[1] for w in words if w.startswith("--emit=")), None)
            if emit is None and "--emit" in words:
                emit = words[words.index("--emit") + 1]
            if emit not in ("ptx", "llvm", "cubin"):
                continue
            args, kernel, skip = [], None, False
            for w in words[1:]:
                if skip:
                    skip = False
                    continue
                if w in ("-o", "--arch", "--emit"):
                    skip = True
                    continue
                if w.startswith("--arch=") or w.startswith("--emit="):
                    continue
                args.append(w)
            if "--kernel" in args:
                kernel = args[args.index("--kernel") + 1]
            key = (tuple(args), tuple(sorted(env.items())))
            if key in seen:
                continue
            seen.add(key)
            name = f"{os.path.basename(path)}:{kernel or '*'}#{len(seen)}"
            out.append(Kernel("filecheck", name, args, kernel, env or None))
    return out


def compile_one(tkc, kernel, arch, out):
    env = dict(os.environ, **kernel.env) if kernel.env else None
    cmd = [tkc] + kernel.args + ["--target=amdgcn", f"--arch={arch}", "--emit=hsaco", "-o", out]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        return 124, "(stopped after 600 s)"
    return proc.returncode, proc.stderr


def classify(rc, stderr):
    """(expected reasons, None) for an expected failure, else (None, why not)."""
    errors = [m.group(1) for m in map(ERROR.match, stderr.splitlines()) if m]
    if rc != 1 or not errors:
        return None, f"tkc exit {rc}"
    reasons = []
    for e in errors:
        why = next((why for why, pattern in EXPECTED if re.search(pattern, e)), None)
        if why is None:
            return None, f"an error EXPECTED does not list: {e}"
        reasons.append(why)
    return sorted(set(reasons)), None


def objdump_check(objdump, done):
    """The (kernel, path) pairs whose code object llvm-objdump cannot read or
    that lack the kernel, reading many objects per llvm-objdump run."""
    bad = []
    for i in range(0, len(done), 200):
        batch = done[i:i + 200]
        proc = subprocess.run([objdump, "-d"] + [p for _, p in batch], capture_output=True,
                              text=True)
        sections = {}
        current = None
        for line in proc.stdout.splitlines():
            m = re.match(r"^(\S+):\s+file format elf64-amdgpu", line)
            if m:
                current = m.group(1)
                sections[current] = []
            elif current:
                sections[current].append(line)
        for kernel, path in batch:
            text = "\n".join(sections.get(path, []))
            labels = re.findall(r"^[0-9a-f]+ <(\w+)>:$", text, re.M)
            if path not in sections or not labels or (kernel.kernel and
                                                      kernel.kernel not in labels):
                bad.append((kernel, path, proc.stderr.strip()[:300]))
    return bad


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--arch", default="gfx942,gfx90a")
    parser.add_argument("--sets", default="tutorials,difftest,filecheck")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    tkc = os.path.join(build, "bin", "tkc")
    objdump = find_tool("llvm-objdump")
    if not objdump:
        print("llvm-objdump (LLVM 19) not found", file=sys.stderr)
        return 1
    t0 = time.time()
    sets = args.sets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        kernels = []
        if "tutorials" in sets:
            kernels += tutorial_kernels()
        if "difftest" in sets:
            kernels += difftest_kernels(build, tmp)
        if "filecheck" in sets:
            kernels += filecheck_kernels()
        work = [(k, arch, os.path.join(tmp, f"{arch}-{i}.hsaco"))
                for arch in args.arch.split(",") for i, k in enumerate(kernels)]
        failed, unsupported, done = [], {}, []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda w: compile_one(tkc, *w), work)
            for (kernel, arch, path), (rc, stderr) in zip(work, results):
                where = f"{kernel.group} {arch} {kernel.name}"
                if rc == 0:
                    done.append((kernel, path))
                    continue
                reasons, why = classify(rc, stderr)
                if reasons:
                    for r in reasons:
                        unsupported.setdefault(r, {}).setdefault(kernel.name, []).append(arch)
                else:
                    failed.append(where)
                    print(f"  FAIL {where}: {why}\n      tkc {shlex.join(kernel.args)}\n"
                          + "".join(f"      {l}\n" for l in stderr.splitlines()[-12:]))
        for kernel, path, err in objdump_check(objdump, done):
            failed.append(f"{kernel.group} {os.path.basename(path)} {kernel.name} (llvm-objdump)")
            print(f"  FAIL llvm-objdump on {kernel.group} {kernel.name}: no kernel in {path} {err}")
        count = {s: sum(1 for k in kernels if k.group == s) for s in sets}
        print(f"\nExpected located errors (what amdgcn does not lower yet, and the hardware's "
              f"limits), {len(unsupported)} reason(s):")
        for why, names in sorted(unsupported.items()):
            print(f"  {why}: {len(names)} kernel(s)")
            for name, archs in sorted(names.items()):
                print(f"    {name} ({', '.join(archs)})")
        print(f"\namdgcn ({args.arch}): {len(done)} code objects read by llvm-objdump, "
              f"{sum(sum(len(a) for a in n.values()) for n in unsupported.values())}"
              f" expected errors, {len(failed)} failures; "
              + ", ".join(f"{s} {n} kernels" for s, n in count.items())
              + f"; {time.time() - t0:.0f} s"
              + (f"\nFAILED: {', '.join(failed[:20])}" + (" ..." if len(failed) > 20 else "")
                 if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
