#!/usr/bin/env python3
"""Checks tk's ROCm device-library table and control constants against the
installed bitcode (tests/filecheck/amdgpu/ocml.tk runs it).

    rocm_device_libs.py SOURCE_ROOT BITCODE_DIR TK_LLVM_IR

- Every row of lowering/codegen/ROCmLibdevice.def names a function that
  ocml.bc or ockl.bc defines with the libdevice overload's argument types
  (lang/Libdevice.def) and the row's result type, and that reads no memory
  (tk declares the calls pure).
- Every control constant (@__oclc_*) that TK_LLVM_IR (tk's unoptimised
  LLVM IR of a kernel, linked) defines has the value of one of ROCm's oclc
  control libraries in BITCODE_DIR that define it (gfx90a's ISA version is
  oclc_isa_version_90a.bc's 9010).

Prints one line per check group and exits 1 on any mismatch.
"""
import glob
import os
import re
import subprocess
import sys

LLVM_TYPES = {"F32": "float", "F64": "double", "I32": "i32", "U32": "i32", "I64": "i64",
              "U64": "i64"}


def disassemble(path):
    return subprocess.run(["llvm-dis", "-o", "-", path], check=True, capture_output=True,
                          text=True).stdout


def definitions(ir):
    """name -> (result type, [param types], attribute text) of each define."""
    attrs = dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", ir, re.M))
    out = {}
    pattern = r"^define [^@]*?(\S+) @([\w.]+)\((.*?)\)[^{]*?(#\d+)? \{$"
    for result, name, params, group in re.findall(pattern, ir, re.M):
        types = [p.split()[0] for p in params.split(",") if p.strip()]
        out[name] = (result, types, attrs.get(group, ""))
    return out


def main(root, bitcode, tk_ir_path):
    failures = []
    defs = open(os.path.join(root, "lang/Libdevice.def")).read()
    overloads = {sym: (res, [a.strip() for a in args.split(",")])
                 for sym, res, args in re.findall(
                     r'TK_LIBDEVICE_OVERLOAD\(\w+, "(\w+)", (\w+), ([\w, ]+)\)', defs)}
    table = re.findall(r'TK_ROCM_LIBDEVICE\("(\w+)", "(\w+)", (\w+)\)',
                       open(os.path.join(root, "lowering/codegen/ROCmLibdevice.def")).read())
    rocm = {}
    for lib in ("ocml.bc", "ockl.bc"):
        rocm.update(definitions(disassemble(os.path.join(bitcode, lib))))
    for nv, symbol, result in table:
        if nv not in overloads:
            failures.append(f"{nv}: not a libdevice function")
            continue
        if symbol not in rocm:
            failures.append(f"{nv}: {symbol} is not defined by ocml.bc or ockl.bc")
            continue
        want = (LLVM_TYPES[result], [LLVM_TYPES[a] for a in overloads[nv][1]])
        got_result, got_params, attrs = rocm[symbol]
        if (got_result, got_params) != want:
            failures.append(f"{nv}: {symbol} is {got_result} ({', '.join(got_params)}), "
                            f"tk calls {want[0]} ({', '.join(want[1])})")
        if "memory(none)" not in attrs and "readnone" not in attrs:
            failures.append(f"{nv}: {symbol} is not memory(none): {attrs.strip()}")
    print(f"table: {len(table)} libdevice functions checked against ocml.bc and ockl.bc")

    controls = {}  # global -> {value: library}
    for path in sorted(glob.glob(os.path.join(bitcode, "oclc_*.bc"))):
        for name, value in re.findall(r"^@(__oclc_\w+) = .*constant i\d+ (\d+)",
                                      disassemble(path), re.M):
            controls.setdefault(name, {})[int(value)] = os.path.basename(path)
    tk_ir = open(tk_ir_path).read()
    checked = re.findall(r"^@(__oclc_\w+) = internal .*constant i\d+ (\d+)", tk_ir, re.M)
    if not checked:
        failures.append(f"{tk_ir_path} defines no control constant")
    for name, value in checked:
        library = controls.get(name, {}).get(int(value))
        if not library:
            failures.append(f"tk's {name} = {value} is no oclc library's (they define "
                            f"{sorted(controls.get(name, {}))})")
        else:
            print(f"control: {name} = {value} as {library}")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
