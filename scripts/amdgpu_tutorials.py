#!/usr/bin/env python3
"""Every tutorial kernel compiled for AMD GPUs (compile only: no AMD GPU here).

    python3 scripts/amdgpu_tutorials.py [--build DIR] [--tutorials DIR] [--arch A,B]

Each entry of DIR/kernels.json (its signature, constexprs and options, as
scripts/tutorials.py compiles it to PTX) goes through
`tkc --target=amdgcn --arch=ARCH --emit=hsaco` for each ARCH (default gfx942
and gfx90a; an entry's NVIDIA `arch` option is dropped), and llvm-objdump
reads each code object. A kernel that uses what the amdgcn target does not
lower yet must fail with the located error "... is not supported on amdgcn
yet"; the list of those is printed (docs/codegen.md, "AMDGPU"). Exit status 0
when every kernel either compiled to a code object llvm-objdump reads or
failed with that error only; 1 otherwise (a crash, another error, an
unreadable code object).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import tutorials as main_job  # noqa: E402  (tkc_args, load_manifest)

UNSUPPORTED = re.compile(r"error: (.* is not supported on amdgcn yet)")


def amdgcn_args(entry, tk_file, arch, out):
    args = main_job.tkc_args(entry, tk_file)
    args = [a for a in args if a != "--emit=ptx" and not a.startswith("--arch=")]
    return args + ["--target=amdgcn", f"--arch={arch}", "--emit=hsaco", "-o", out]


def find_objdump():
    for candidate in ("/usr/lib/llvm-19/bin/llvm-objdump", shutil.which("llvm-objdump-19"),
                      shutil.which("llvm-objdump")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--tutorials", default=os.path.join(ROOT, "tutorials"))
    parser.add_argument("--arch", default="gfx942,gfx90a")
    args = parser.parse_args(argv)
    tkc = os.path.join(os.path.abspath(args.build), "bin", "tkc")
    objdump = find_objdump()
    if not objdump:
        print("llvm-objdump (LLVM 19) not found", file=sys.stderr)
        return 1
    entries = main_job.load_manifest(args.tutorials)
    failed, unsupported, compiled = [], {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch.split(","):
            for i, e in enumerate(entries):
                path = os.path.join(args.tutorials, os.path.basename(e["file"]))
                name = f"{os.path.basename(e['file'])}:{e['kernel']}"
                hsaco = os.path.join(tmp, f"{arch}-{i}.hsaco")
                proc = subprocess.run([tkc] + amdgcn_args(e, path, arch, hsaco),
                                      capture_output=True, text=True, timeout=600)
                if proc.returncode != 0:
                    errors = [l for l in proc.stderr.splitlines() if "error:" in l]
                    reasons = [m.group(1) for l in errors for m in [UNSUPPORTED.search(l)] if m]
                    if proc.returncode == 1 and errors and len(reasons) == len(errors):
                        unsupported.setdefault(name, set()).update(reasons)
                        print(f"  unsupported {arch:<7} {name:<44} {reasons[0]}")
                    else:
                        failed.append(f"{arch} {name}")
                        print(f"  FAIL        {arch:<7} {name:<44} tkc exit {proc.returncode}\n"
                              + proc.stderr)
                    continue
                dump = subprocess.run([objdump, "-d", hsaco], capture_output=True, text=True)
                if dump.returncode != 0 or f"<{e['kernel']}>:" not in dump.stdout:
                    failed.append(f"{arch} {name} (llvm-objdump)")
                    print(f"  FAIL        {arch:<7} {name:<44} llvm-objdump\n" + dump.stderr)
                    continue
                compiled += 1
                lines = dump.stdout.count("\n")
                print(f"  ok          {arch:<7} {name:<44} {lines:>6} lines of disassembly")
    print(f"\namdgcn: {compiled} code objects; {len(unsupported)} kernels not supported yet"
          + "".join(f"\n  {n}: {'; '.join(sorted(r))}" for n, r in sorted(unsupported.items()))
          + (f"\nFAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
