"""A code-generation experiment on PTX, not part of the compiler.

Rewrites the cross-warp step of each reduction in one of tk's PTX files
(tutorial softmax or fused LayerNorm, as bench/gpu_bundle.sh emits them) from
what ReduceToLLVM.cpp does today -- every thread reads all `warps` partials
from shared memory (ld.shared.v4.f32 x warps/4) and combines them in warp
order -- to: lane l reads the one partial `l % warps`, then a butterfly of
shfl.sync.bfly over log2(warps) lanes combines them. Every lane ends with the
same bits (each butterfly step combines the same two values on both partner
lanes, and + and max are commutative), and the thread holds one partial
instead of `warps`: at 16384 columns and 16 warps the softmax drops from 71 to
64 registers (ptxas -v), i.e. from one to two programs of 512 threads per SM.

    python3 bench/exp_shfl_reduce.py IN.ptx OUT.ptx WARPS

gpu_bench.py times files named *.exp-NAME.ptx apart from tk's own variants
(bench/results/notes/softmax-layernorm.md, "2026-11-30, 53e7a31"). It matches the PTX tk emitted before
commit 33efeb6 (a st.shared of the warp's partial, bar.sync, then
ld.shared.v4.f32 and max/add); since that commit ReduceToLLVM.cpp emits the
butterfly itself and this script finds nothing to rewrite (exit status 1).
"""
import re
import sys


def rewrite(text, warps):
    smem = re.search(r"mov\.u64 \t(%rd\d+), \S+_smem;\n", text)
    tid = re.search(r"mov\.u32 \t(%r\d+), %tid\.x;", text)
    decl = re.search(r"\t\.reg \.b64 \t%rd<\d+>;\n", text)
    if not (smem and tid and decl):
        return text, 0
    # Registers of our own, and the address of partial `tid % warps` (lane
    # % warps, since 32 is a multiple of warps) right after the array's base.
    text = (text[:decl.end()] + "\t.reg .f32 %xf<64>;\n\t.reg .b32 %xr<2>;\n\t.reg .b64 %xd<3>;\n" +
            text[decl.end():])
    smem = re.search(r"mov\.u64 \t(%rd\d+), \S+_smem;\n", text)
    text = (text[:smem.end()] + f"\tand.b32 %xr1, {tid.group(1)}, {warps - 1};\n"
            f"\tmul.wide.u32 %xd1, %xr1, 4;\n\tadd.s64 %xd2, {smem.group(1)}, %xd1;\n" +
            text[smem.end():])
    lines = text.split("\n")
    out, i, k, count = [], 0, 0, 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].startswith("\tst.shared.f32") and i + 1 < len(lines) and \
                lines[i + 1] == "\tbar.sync \t0;":
            out.append(lines[i + 1])
            j, last, op = i + 2, None, None
            while j < len(lines) and re.match(r"\t(ld\.shared\.v4\.f32|max\.f32|add\.f32)",
                                              lines[j]):
                m = re.match(r"\t(max\.f32|add\.f32) \t(%f\d+),", lines[j])
                if m:
                    op, last = m.group(1), m.group(2)
                j += 1
            if last is None:
                i += 1
                continue
            cur = f"%xf{k}"
            out.append(f"\tld.shared.f32 {cur}, [%xd2];")
            mask = 1
            while mask < warps:
                partner = f"%xf{k + 1}"
                nxt = f"%xf{k + 2}" if mask * 2 < warps else last
                out.append(f"\tshfl.sync.bfly.b32 {partner}, {cur}, {mask}, 31, -1;")
                out.append(f"\t{op} {nxt}, {cur}, {partner};")
                cur, k, mask = nxt, k + 2, mask * 2
            k += 1
            count += 1
            i = j
            continue
        i += 1
    return "\n".join(out), count


def main():
    src, dst, warps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src) as f:
        text, count = rewrite(f.read(), warps)
    if not count:
        print(f"{src}: no reduction to rewrite", file=sys.stderr)
        return 1
    with open(dst, "w") as f:
        f.write(text)
    print(f"{dst}: {count} reductions rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
