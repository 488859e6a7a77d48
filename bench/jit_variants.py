#!/usr/bin/env python3
"""Hand-edited variants of tk's PTX, for `compile_bench --jit-files`: which
part of a kernel's PTX the driver's JIT spends its time on. Not kernels to
run (most change the results); each removes or rewrites one thing:

  softmax-16384: ex2-plain   exp as a bare ex2.approx.f32 (what tk emitted
                             before writing the subnormal range out; same SASS)
                 ex2-ftz     the flushing ex2.approx.ftz.f32 alone
                 no-ex2      no exponential at all (a move)
                 load-plain  the masked loads without predicate and defaults
  matmul 128x128x32: no-final-stores  the epilogue's global stores dropped
                     no-rem           the % M / % N of the offsets as moves
                     store-unpredicated  the epilogue's stores without masks

    python3 bench/jit_variants.py DIR   # reads DIR/10-softmax-16384.ptx and
                                        # DIR/20-matmul-128x128x32-w4-s4.ptx
"""
import re
import sys

EX2 = re.compile(
    r"\{ \.reg \.pred p; \.reg \.f32 t; setp\.lt\.f32 p, (%f\d+), 0fC2FC0000; "
    r"mov\.f32 t, %f\d+; @p mul\.rn\.f32 t, t, 0f3F000000; ex2\.approx\.ftz\.f32 (%f\d+), t; "
    r"@p mul\.rn\.f32 %f\d+, %f\d+, %f\d+; \}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main(folder):
    softmax = open(f"{folder}/10-softmax-16384.ptx").read()
    one = lambda op: lambda m: f"{op} {m.group(2)}, {m.group(1)};"
    plain, n = EX2.subn(one("ex2.approx.f32"), softmax)
    if n == 0:
        sys.exit("jit_variants.py: no written-out ex2 in the softmax PTX")
    write(f"{folder}/11-softmax-16384-ex2-plain.ptx", plain)
    write(f"{folder}/11-softmax-16384-ex2-ftz.ptx", EX2.sub(one("ex2.approx.ftz.f32"), softmax))
    write(f"{folder}/11-softmax-16384-no-ex2.ptx", EX2.sub(one("mov.f32"), softmax))
    loads = re.sub(r"\tmov\.f32 %f\d+, %f\d+;\n(?=(\tmov\.f32 %f\d+, %f\d+;\n)*\t@%p\d+ ld\.global)",
                   "", softmax)
    write(f"{folder}/11-softmax-16384-load-plain.ptx",
          re.sub(r"@%p\d+ ld\.global", "ld.global", loads))
    matmul = open(f"{folder}/20-matmul-128x128x32-w4-s4.ptx").read()
    write(f"{folder}/21-matmul-128x128x32-no-final-stores.ptx",
          re.sub(r"\t@%p\d+ st\.global[^\n]*\n", "", matmul))
    write(f"{folder}/21-matmul-128x128x32-no-rem.ptx",
          re.sub(r"rem\.s32 \t(%r\d+), (%r\d+), (%r\d+);", r"mov.b32 \t\1, \2;", matmul))
    write(f"{folder}/21-matmul-128x128x32-store-unpredicated.ptx",
          re.sub(r"@%p\d+ st\.global", "st.global", matmul))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 bench/jit_variants.py DIR")
    main(sys.argv[1])
