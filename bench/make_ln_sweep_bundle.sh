#!/usr/bin/env bash
# The PTX of bench/exp_ln_sweep.py's LayerNorm variants and its manifest.json,
# in OUT/ (git-ignored when under gpu-bundle*/), with ptxas registers:
#
#   bash bench/make_ln_sweep_bundle.sh BUILD-DIR OUT-DIR [CONTROL-TKC [CONTROL-REV]]
#
# At 1024 columns: tutorial 3's fused kernel at 1, 2 and 4 warps, its
# persistent kernel (ONE_PASS) on grids of 16 and 18 programs per SM,
# bench/exp_layernorm.tk's layer_norm_fwd_tile (ROWS rows per program as one
# 2-D tile) and layer_norm_fwd_ptile (the same on a persistent grid), and two
# of them with L2 evict_first hints; at 4096 the tutorial's pick.
# CONTROL-TKC (optional) is another build's tkc: the tutorial of git revision
# CONTROL-REV (default HEAD) through it is timed beside, labelled old_*
# (before and after in one run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tkc="$1/bin/tkc"
out="$2"
control="${3:-}"
control_rev="${4:-HEAD}"
mkdir -p "$out"
sig="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32"
entries=()
# add LABEL N WARPS PROGRAMS TAKES_M PIN TKC SOURCE KERNEL [-D ...]
add() {
  local label=$1 n=$2 w=$3 programs=$4 takes_m=$5 pin=$6 compiler=$7 src=$8 kernel=$9
  shift 9
  local s="$sig"
  [ "$takes_m" = true ] && s="$sig, i32"
  "$compiler" "$src" --kernel "$kernel" --emit=ptx --num-warps="$w" --signature "$s" \
    -D BLOCK_SIZE="$n" "$@" -o "$out/$label.ptx"
  entries+=("{\"label\": \"$label\", \"file\": \"$label.ptx\", \"entry\": \"$kernel\", \"n\": $n, \
\"warps\": $w, \"programs\": \"$programs\", \"takes_m\": $takes_m, \"pin\": $pin}")
}
tut=tutorials/03-layer-norm.tk
exp=bench/exp_layernorm.tk
for w in 1 2 4; do
  add "1024_fused_w$w" 1024 $w m false false "$tkc" $tut layer_norm_fwd_fused
done
add 1024_fused1p_w2 1024 2 m false false "$tkc" $tut layer_norm_fwd_fused -D ONE_PASS=True
# The tutorial's pick at 1024 (pinned: always in the rounds), and its grid
# with the most programs that fit (18 at 56 registers), and one warp.
for cfg in "2 16 true" "2 18 false" "1 16 false"; do
  set -- $cfg
  add "1024_persist1p_w$1_p$2" 1024 "$1" "k$2" true "$3" "$tkc" $tut \
    layer_norm_fwd_persistent -D ONE_PASS=True
done
for cfg in "2 2" "2 4" "4 4"; do
  set -- $cfg
  add "1024_tile_r$1_w$2" 1024 "$2" "m/$1" true false "$tkc" $exp layer_norm_fwd_tile -D ROWS="$1"
done
add 1024_tile1p_r2_w4 1024 4 m/2 true false "$tkc" $exp layer_norm_fwd_tile -D ROWS=2 \
  -D ONE_PASS=True
# The tile on a persistent grid, the next tile prefetched (K per SM up to
# what fits: 14 at r2 w2, 9 at r2 w4, 6 at r4 w4).
for cfg in "2 2 8" "2 2 14" "2 4 8" "4 4 6"; do
  set -- $cfg
  add "1024_ptile_r$1_w$2_p$3" 1024 "$2" "k$3" true false "$tkc" $exp layer_norm_fwd_ptile \
    -D ROWS="$1"
done
add 4096_fused_w8 4096 8 m false true "$tkc" $tut layer_norm_fwd_fused
# L2 evict_first on the row's loads (l2ef) and on y's stores too (l2efst),
# bench/exp_ln_l2_hints.py's rewrite of the PTX above (pinned).
for label in 1024_persist1p_w2_p16 1024_fused_w2; do
  for hint in l2ef l2efst; do
    python3 - "$out/$label.ptx" "$out/${label}_$hint.ptx" "$hint" <<'PY'
import sys
sys.path.insert(0, "bench")
import exp_ln_l2_hints as h
text, counts = h.rewrite(open(sys.argv[1]).read(), *h.VARIANTS[sys.argv[3]])
assert counts[0] > 0, sys.argv[1]
open(sys.argv[2], "w").write(text)
PY
    last="${entries[-1]}"
    for e in "${entries[@]}"; do
      [[ "$e" == *"\"label\": \"$label\""* ]] && last="$e"
    done
    last="${last//$label/${label}_$hint}"
    entries+=("${last//\"pin\": false/\"pin\": true}")
  done
done
# Before a change: CONTROL-REV's tutorial through CONTROL-TKC.
if [ -n "$control" ]; then
  git show "$control_rev:$tut" >"$out/03-layer-norm-head.tk"
  head="$out/03-layer-norm-head.tk"
  add old_1024_fused_w2 1024 2 m false false "$control" "$head" layer_norm_fwd_fused
  add old_1024_persist1p_w2_p16 1024 2 k16 true true "$control" "$head" \
    layer_norm_fwd_persistent -D ONE_PASS=True
  add old_4096_fused_w8 4096 8 m false true "$control" "$head" layer_norm_fwd_fused
fi
{
  echo "["
  for i in "${!entries[@]}"; do
    ((i == 0)) || echo ","
    echo "${entries[$i]}"
  done
  echo "]"
} >"$out/manifest.json"
python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$out/manifest.json"
bash bench/ptxas_registers.sh "$out"
echo "$(ls "$out"/*.ptx | wc -l) PTX files in $out"
