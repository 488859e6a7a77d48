"""A code-generation experiment on PTX, not part of the compiler: L2 hints on
the whole-row LayerNorm kernels, to see whether tk should emit them for
tk.load / tk.store's eviction_policy (accepted today, emitted as plain
ld.global / st.global; bench/exp_ln_cache_hints.py tried the L1 and .cs ones).

The question behind it: triton.testing.do_bench clears L2 before every timed
launch by zeroing 256 MiB, so each launch starts with L2 full of dirty lines
that the kernel's own traffic evicts, i.e. writes back, inside its timing. A
kernel that moves 128 MiB (LayerNorm at 8192 x 4096) pays that write-back on
~1/3 of its own bytes; the 1 GiB copy the issue compares with, on 1/20. An
evict_first policy on the row's loads (each x byte is read once) makes L2
replace those lines first, instead of the dirty ones; on the stores it does
the same for y. A prefetch-size hint (.L2::256B) asks L2 for 256-byte
sectors per miss, which can raise DRAM efficiency on streams.

Variants, for layernorm_KIND_N_wW.ptx (KIND fused, fused1p, persist,
persist1p of bench/gpu_bundle.sh):

- exp-l2ef: the row's loads `ld.global.L2::cache_hint ..., policy` with
  policy = `createpolicy.fractional.L2::evict_first.b64 policy, 1.0`;
- exp-l2efst: the same and y's stores with that policy too;
- exp-l2pf: the row's loads `ld.global.L2::256B`.

The row's loads are the global loads before the first bar.sync in the text
(in the persistent kernel: the prologue's and the loop's prefetch), w and b
the ones after it; y's stores the vector / b16 global stores.

    python3 bench/exp_ln_l2_hints.py PTX_DIR KIND N W [KIND N W ...]

writes PTX_DIR/layernorm_KIND_N_wW.exp-NAME.ptx; exit status 1 when a file
has no row loads to rewrite.
"""
import os
import re
import sys

LOAD = re.compile(r"\bld\.global\.")
STORE_Y = re.compile(r"\bst\.global\.(?=v[24]\.b32|b32|b16)")
POLICY = "%rdl2pol"


def rewrite(text, load_q, with_policy_load, with_policy_store):
    """The rewritten PTX and (row loads, y stores) rewritten."""
    out, seen_bar, counts, declared = [], False, [0, 0], False
    for line in text.split("\n"):
        if "bar.sync" in line:
            seen_bar = True
        if LOAD.search(line) and not seen_bar and load_q:
            line = LOAD.sub(f"ld.global.{load_q}.", line)
            if with_policy_load:
                line = line.rstrip().rstrip(";") + f", {POLICY};"
            counts[0] += 1
        elif STORE_Y.search(line) and with_policy_store:
            line = STORE_Y.sub("st.global.L2::cache_hint.", line)
            line = line.rstrip().rstrip(";") + f", {POLICY};"
            counts[1] += 1
        out.append(line)
        if line.strip() == "{" and not declared and (with_policy_load or with_policy_store):
            out.append(f"\t.reg .b64 \t{POLICY};")
            out.append(f"\tcreatepolicy.fractional.L2::evict_first.b64 \t{POLICY}, 1.0;")
            declared = True
    return "\n".join(out), counts


VARIANTS = {"l2ef": ("L2::cache_hint", True, False),
            "l2efst": ("L2::cache_hint", True, True),
            "l2pf": ("L2::256B", False, False)}


def main(argv):
    if len(argv) < 5 or (len(argv) - 2) % 3:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    ptx_dir, status = argv[1], 0
    for kind, n, w in zip(argv[2::3], argv[3::3], argv[4::3]):
        src = os.path.join(ptx_dir, f"layernorm_{kind}_{n}_w{w}.ptx")
        with open(src) as f:
            text = f.read()
        for name, quals in VARIANTS.items():
            new, counts = rewrite(text, *quals)
            if counts[0] == 0:
                print(f"{src}: no row loads found", file=sys.stderr)
                status = 1
                continue
            dst = src[:-len(".ptx")] + f".exp-{name}.ptx"
            with open(dst, "w") as f:
                f.write(new)
            print(f"{dst}: {counts[0]} row loads, {counts[1]} y stores")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
