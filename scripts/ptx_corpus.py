#!/usr/bin/env python3
"""The PTX of every kernel the project compiles, collected into one folder, so a
change that should not alter generated code can be checked to leave it
byte-identical.

    python3 scripts/ptx_corpus.py collect build /tmp/ptx-before
    ... change, rebuild ...
    python3 scripts/ptx_corpus.py collect build /tmp/ptx-after
    python3 scripts/ptx_corpus.py compare /tmp/ptx-before /tmp/ptx-after

Sources of kernels:
  lit       every tkc run of the FileCheck suite that emits PTX or LLVM IR
            (lit runs with %tkc replaced by this script's `record` command,
            which runs the real tkc and keeps a copy of what it wrote);
  tutorials every kernel of tutorials/kernels.json, as the main job compiles it;
  bundle    the tutorial configurations the GPU bench times (bench/gpu_bundle.sh
            --ptx-only).

Each file is named after what produced it (the tkc arguments with paths reduced
to file names, hashed), so the same command in two trees maps to the same name.
`compare` lists files that differ, and files only one side has; exit status 1
when anything differs. The source tree's path, which kernels with asserts embed
(as text in LLVM IR, as a byte array in PTX), is replaced by a placeholder on
both sides first, so two checkouts compare equal.
"""
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tutorials  # noqa: E402 (scripts/tutorials.py, the main job)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMITS = ("ptx", "llvm")


def _emit_kind(args):
    for i, a in enumerate(args):
        if a.startswith("--emit="):
            return a.split("=", 1)[1]
        if a == "--emit" and i + 1 < len(args):
            return args[i + 1]
    return None


def _normalised(args):
    """The arguments with every path reduced to its last component, so that two
    build trees (or temporary folders) give the same name."""
    out = []
    skip_next = False
    for i, a in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if a == "-o":
            skip_next = True
            continue
        if a.startswith("-o") and len(a) > 2:
            continue
        out.append(os.path.basename(a) if "/" in a else a)
    return out


def record(argv):
    """`record CORPUS TKC ARGS...`: runs TKC ARGS, and if it emits PTX or LLVM IR
    keeps a copy under CORPUS. Output and exit status are tkc's."""
    corpus, tkc, args = argv[0], argv[1], argv[2:]
    kind = _emit_kind(args)
    if kind not in EMITS:
        os.execv(tkc, [tkc] + args)
    out_path = None
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            out_path = args[i + 1]
    proc = subprocess.run([tkc] + args, stdout=subprocess.PIPE, stdin=sys.stdin)
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    if proc.returncode == 0:
        text = proc.stdout
        if out_path and out_path != "-" and os.path.exists(out_path):
            with open(out_path, "rb") as f:
                text = f.read()
        env = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("TK_")
               and k != "TK_CACHE_DIR"]
        inputs = [a for a in args if a.endswith((".tk", ".tkir")) and os.path.exists(a)]
        h = hashlib.sha256()
        h.update(" ".join(env + _normalised(args)).encode())
        for path in inputs:  # the same command on an edited input is another kernel
            with open(path, "rb") as f:
                h.update(f.read())
        name = f"lit-{os.path.basename(inputs[0]) if inputs else 'stdin'}-{h.hexdigest()[:12]}.{kind}"
        os.makedirs(corpus, exist_ok=True)
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(text)
    sys.exit(proc.returncode)


def _lit():
    if shutil.which("lit"):
        return ["lit"]
    return [sys.executable, "/usr/lib/llvm-19/build/utils/lit/lit.py"]


def collect_lit(build, corpus):
    tkc = os.path.join(build, "bin", "tkc")
    wrapper = f"{shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} record " \
              f"{shlex.quote(corpus)} {shlex.quote(tkc)}"
    cmd = _lit() + ["-q", "--param", f"tkc_wrapper={wrapper}",
                    os.path.join(build, "tests", "filecheck")]
    subprocess.run(cmd, check=False)


def collect_tutorials(build, corpus):
    manifest = os.path.join(ROOT, "tutorials", "kernels.json")
    if not os.path.exists(manifest):
        return
    tkc = os.path.join(build, "bin", "tkc")
    with open(manifest) as f:
        entries = json.load(f)["kernels"]
    for e in entries:
        # The arguments the main job compiles the entry with (scripts/tutorials.py).
        args = tutorials.tkc_args(e, os.path.join(ROOT, e["file"]))
        proc = subprocess.run([tkc] + args, capture_output=True)
        name = f"tutorial-{e['kernel']}-{hashlib.sha256(' '.join(_normalised(args)).encode()).hexdigest()[:12]}.ptx"
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(proc.stdout if proc.returncode == 0 else b"FAILED\n" + proc.stderr)


def collect_bundle(build, corpus):
    script = os.path.join(ROOT, "bench", "gpu_bundle.sh")
    with tempfile.TemporaryDirectory() as tmp:
        if not os.path.exists(script):
            return
        cmd = ["bash", script, "--build", build, "--ptx-only", "--out", tmp]
        subprocess.run(cmd, check=False, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        ptx_dir = os.path.join(tmp, "ptx")
        for name in sorted(os.listdir(ptx_dir)) if os.path.isdir(ptx_dir) else []:
            if name.endswith(".ptx"):
                shutil.copy(os.path.join(ptx_dir, name), os.path.join(corpus, "bundle-" + name))


def _source_root(build):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return line.split("=", 1)[1].strip()
    return ROOT


def collect(build, corpus):
    build = os.path.abspath(build)
    if os.path.exists(corpus):
        shutil.rmtree(corpus)
    os.makedirs(corpus)
    with open(os.path.join(corpus, ".root"), "w") as f:
        f.write(_source_root(build))
    collect_lit(build, corpus)
    collect_tutorials(build, corpus)
    collect_bundle(build, corpus)
    n = len([name for name in os.listdir(corpus) if not name.startswith(".")])
    print(f"ptx_corpus: {n} files in {corpus}")


def _normalised_text(corpus, name):
    with open(os.path.join(corpus, name), "rb") as f:
        data = f.read()
    root_file = os.path.join(corpus, ".root")
    if not os.path.exists(root_file):
        return data
    with open(root_file) as f:
        root = f.read().strip().encode()
    # PTX spells a string as `.b8 name[N] = {47, 119, ...}`, LLVM IR as
    # `[N x i8] c"..."`: the root as text or bytes, and the array's length,
    # which the root's length changes.
    as_bytes = ", ".join(str(c) for c in root).encode()
    lines = []
    for line in data.split(b"\n"):
        if root in line or as_bytes in line:
            line = line.replace(root, b"<root>").replace(as_bytes, b"<root>")
            line = re.sub(rb"\[\d+( x i8)?\]", b"[N]", line)
        lines.append(line)
    return b"\n".join(lines)


def compare(a, b):
    left = {n for n in os.listdir(a) if not n.startswith(".")}
    right = {n for n in os.listdir(b) if not n.startswith(".")}
    differ = []
    for name in sorted(left & right):
        if _normalised_text(a, name) != _normalised_text(b, name):
            differ.append(name)
    for name in differ:
        print(f"differs: {name}")
    for name in sorted(left - right):
        print(f"only in {a}: {name}")
    for name in sorted(right - left):
        print(f"only in {b}: {name}")
    same = len(left & right) - len(differ)
    print(f"ptx_corpus: {same} identical, {len(differ)} differ, {len(left - right)} + "
          f"{len(right - left)} on one side only")
    return 0 if not differ and left == right else 1


def main(argv):
    if len(argv) >= 3 and argv[0] == "record":
        record(argv[1:])
    if len(argv) == 3 and argv[0] == "collect":
        collect(argv[1], os.path.abspath(argv[2]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
