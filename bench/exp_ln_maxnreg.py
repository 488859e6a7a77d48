"""A code-generation experiment on PTX, not part of the compiler: a register
cap on a LayerNorm kernel (`.maxnreg R` after `.maxntid`), so that more of
its programs fit on an SM at once. The persistent kernel keeps the next row
in registers and needs 64 at 4096 x 8 warps where the one-row kernel needs
40 (4 programs per SM instead of 6); ptxas fits it in 48 without spilling.
Whether the extra programs pay is what gpu_bench.py measures: the files
are named layernorm_KIND_N_wW.exp-regR.ptx and timed apart from tk's own
variants (on the persistent grids for KIND persist / persist1p).

    python3 bench/exp_ln_maxnreg.py PTX_DIR KIND N W R [KIND N W R ...]
"""
import os
import re
import sys


def main(argv):
    if len(argv) < 6 or (len(argv) - 2) % 4:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    ptx_dir, status = argv[1], 0
    for kind, n, w, regs in zip(argv[2::4], argv[3::4], argv[4::4], argv[5::4]):
        src = os.path.join(ptx_dir, f"layernorm_{kind}_{n}_w{w}.ptx")
        with open(src) as f:
            text = f.read()
        new, count = re.subn(r"^(\.maxntid .*)$", rf"\1\n.maxnreg {int(regs)}", text,
                             flags=re.M)
        if count != 1:
            print(f"{src}: {count} .maxntid lines, expected 1", file=sys.stderr)
            status = 1
            continue
        dst = src[:-len(".ptx")] + f".exp-reg{regs}.ptx"
        with open(dst, "w") as f:
            f.write(new)
        print(dst)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
