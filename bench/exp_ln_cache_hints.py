"""A code-generation experiment on PTX, not part of the compiler: cache hints
on the fused LayerNorm kernel, to see whether tk should emit them.

tk accepts tk.load(..., cache_modifier=, eviction_policy=) and records them on
the op, but LoadStoreToLLVM.cpp emits plain ld.global / st.global. This script
rewrites one layernorm_fused_N_wW.ptx of bench/gpu_bundle.sh into variants
with the qualifiers a hinted kernel would get, so that gpu_bench.py can time
them (files named *.exp-NAME.ptx are timed and checked apart from tk's own
variants, never reported as tk's figure):

- exp-cs: the row's loads `ld.global.cs` and y's stores `st.global.cs`
  (cache streaming: likely accessed once, evicted first from L1 and L2);
- exp-evict: the row's loads `ld.global.L1::evict_first`, w and b
  `ld.global.L1::evict_last` (every program re-reads them), y's stores
  unchanged.

In the fused kernel the row's loads are the global loads before the first
bar.sync (the first reduction), w and b the ones after it; y's stores are the
vector (or b16/b32) global stores, mean and rstd the st.global.f32 ones.

    python3 bench/exp_ln_cache_hints.py PTX_DIR N W [N W ...]

writes PTX_DIR/layernorm_fused_N_wW.exp-cs.ptx and .exp-evict.ptx; exit
status 1 when a file has no loads to rewrite.
"""
import os
import re
import sys

LOAD = re.compile(r"\bld\.global\.")
STORE_Y = re.compile(r"\bst\.global\.(?=v[24]\.b32|b32|b16)")


def rewrite(text, row_load, wb_load, y_store):
    """Inserts the qualifiers after ld.global / st.global; counts each kind."""
    out, seen_bar, counts = [], False, [0, 0, 0]
    for line in text.split("\n"):
        if "bar.sync" in line:
            seen_bar = True
        if LOAD.search(line):
            q = wb_load if seen_bar else row_load
            if q:
                line = LOAD.sub(f"ld.global.{q}.", line)
            counts[1 if seen_bar else 0] += 1
        elif STORE_Y.search(line):
            if y_store:
                line = STORE_Y.sub(f"st.global.{y_store}.", line)
            counts[2] += 1
        out.append(line)
    return "\n".join(out), counts


VARIANTS = {"cs": ("cs", "", "cs"), "evict": ("L1::evict_first", "L1::evict_last", "")}


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    ptx_dir, status = argv[1], 0
    for n, w in zip(argv[2::2], argv[3::2]):
        src = os.path.join(ptx_dir, f"layernorm_fused_{n}_w{w}.ptx")
        with open(src) as f:
            text = f.read()
        for name, quals in VARIANTS.items():
            new, counts = rewrite(text, *quals)
            if counts[0] == 0 or counts[1] == 0:
                print(f"{src}: no row or w/b loads found ({counts})", file=sys.stderr)
                status = 1
                continue
            dst = src[:-len(".ptx")] + f".exp-{name}.ptx"
            with open(dst, "w") as f:
                f.write(new)
            print(f"{dst}: {counts[0]} row loads, {counts[1]} w/b loads, {counts[2]} y stores")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
