#!/usr/bin/env bash
# Writes the PTX that bench/matmul_bench.py launches into gpu-bundle-dot/ptx
# (git-ignored; carried to the GPU machine by the device tool), with a
# manifest of what each file is. Run after a build.
#
#   bash bench/make_matmul_bundle.sh [build-dir]
#
# - mm_<dtype>_<BM>x<BN>x<BK>_w<W>_s<S>[_g<G>].ptx: tutorials/04-matmul.tk (no
#   activation) with S pipeline stages (--num-stages), GROUP_SIZE_M G (default
#   8), fp16 or bf16 in and out, M, N, K and the leading strides
#   divisible by 16, unit inner strides;
# - bias_<BM>x<BN>x<BK>_w<W>.ptx: the fused bias + leaky_relu kernel of the
#   same tutorial;
# - chk_<dtype>_<BM>x<BN>x<BK>_w<W>_<t>.ptx: bench/dot_check.tk for the
#   correctness sweep; t = nn, tn, nt (A and/or B transposed: its unit stride
#   on the other dimension), sizes and strides unspecialised (ragged edges).
# - names ending in _a: the same for --arch=sm_90a, where the fp16/bf16 dots
#   that fit take Hopper's wgmma (mm and chk; chk_..._a1: --num-stages=1, so
#   the dot stages its operands itself instead of reading the cp.async ring).
#
# Manifest rows: kind name dtype BM BN BK warps [t] smem, smem the dynamic
# shared memory its launch needs (0: static shared memory only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tkc="${1:-build}/bin/tkc"
out=gpu-bundle-dot/ptx
rm -rf "$out"
mkdir -p "$out"
manifest="$out/manifest.txt"
: > "$manifest"

# tkc --emit=ptx -o $out/<name>.ptx, and the GPU IR (for shared_bytes) next
# to it as <name>.ptx.ir (no LLVM: cheap).
emit() {
  local name="$1"
  shift
  "$tkc" "$@" --emit=ptx -o "$out/$name.ptx" &&
    "$tkc" "$@" --emit=ir-gpu -o "$out/$name.ptx.ir"
}
mm_sig() { echo "*$1:16, *$1:16, *$1:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1"; }
# BM BN BK warps stages [GROUP_SIZE_M, default 8; in the name as _g<n>]
# (stages: the cp.async ring's depth). The configs that won a case in the
# runs of 2026-11-30 (the matmul rows of bench/results/history.md) and their close
# neighbours (the 8-warp ones within ~3% of each other, so the best of a run
# varies among them); the rest of the older list never came within 5% of the
# best.
mm_configs() {
  case "$1" in
  fp16)
    printf '%s\n' "128 256 64 8 3" "128 256 64 8 3 16" "128 256 64 8 4" "128 256 32 8 4" \
      "128 256 32 8 4 16" "128 256 32 8 5" "256 128 64 8 3" "256 128 32 8 4" "256 128 32 8 5" \
      "128 128 64 4 3" "128 128 32 4 4" "128 64 64 4 3" "64 128 32 4 4"
    ;;
  bf16)
    printf '%s\n' "128 256 64 8 3" "128 256 64 8 3 16" "128 256 64 8 4" "128 256 32 8 4" \
      "128 256 32 8 5" "256 128 64 8 3" "256 128 32 8 4"
    ;;
  esac
}
for dt in fp16 bf16; do
  while read -r bm bn bk w st gm; do
    gm="${gm:-8}"
    name="mm_${dt}_${bm}x${bn}x${bk}_w${w}_s${st}"
    if [ "$gm" != 8 ]; then name="${name}_g$gm"; fi
    emit "$name" tutorials/04-matmul.tk --kernel matmul_kernel --num-warps="$w" \
      --num-stages="$st" --signature "$(mm_sig $dt)" -D BLOCK_SIZE_M="$bm" -D BLOCK_SIZE_N="$bn" \
      -D BLOCK_SIZE_K="$bk" -D GROUP_SIZE_M="$gm" -D ACTIVATION=plain
    echo "mm $name $dt $bm $bn $bk $w" >> "$manifest"
  done < <(mm_configs $dt)
done
# sm_90a (wgmma), each dot keeping one wgmma group in flight (the
# compiler's default, _a): the configs that won or came within a few % in
# the wgmma runs (bench/results/notes/matmul-wgmma.md; 128x256x64 w8 s4 every large
# case, 128x128x64 w8 s4 at 1024), and two 64-row tiles (one warp group)
# for the small sizes, not yet measured. WGMMA_VARIANTS=1 adds the rest of that
# run's list and, for comparison, _a0: TK_WGMMA_INFLIGHT=0 (wait_group 0 in
# every iteration) and _ax: a hand-edited _a whose wgmma.wait_group 0 after
# the loop is moved to the top of the loop's exit block (what the compiler
# does since 0b56f5a; before it, ptxas serialised the wgmma, warning C7514).
emit_mm_a() { # emit_mm_a SUFFIX DTYPE BM BN BK WARPS STAGES [env...]
  local suffix="$1" dt="$2" bm="$3" bn="$4" bk="$5" w="$6" st="$7"
  shift 7
  local name="mm_${dt}_${bm}x${bn}x${bk}_w${w}_s${st}_$suffix"
  env "$@" "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --num-warps="$w" --arch=sm_90a \
    --num-stages="$st" --signature "$(mm_sig $dt)" -D BLOCK_SIZE_M="$bm" -D BLOCK_SIZE_N="$bn" \
    -D BLOCK_SIZE_K="$bk" -D GROUP_SIZE_M=8 -D ACTIVATION=plain --emit=ptx -o "$out/$name.ptx"
  env "$@" "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --num-warps="$w" --arch=sm_90a \
    --num-stages="$st" --signature "$(mm_sig $dt)" -D BLOCK_SIZE_M="$bm" -D BLOCK_SIZE_N="$bn" \
    -D BLOCK_SIZE_K="$bk" -D GROUP_SIZE_M=8 -D ACTIVATION=plain --emit=ir-gpu -o "$out/$name.ptx.ir"
  echo "mm $name $dt $bm $bn $bk $w" >> "$manifest"
}
mm_a_configs="128 256 64 8 4|256 128 64 8 4|128 256 32 8 4|128 128 64 4 3|128 128 64 8 4"
mm_a_configs="$mm_a_configs|64 256 64 4 4|64 128 64 4 4|128 128 32 8 4"
if [ "${WGMMA_VARIANTS:-0}" = 1 ]; then
  mm_a_configs="$mm_a_configs|128 256 64 8 3|128 128 64 4 4|256 128 64 8 3|128 128 32 4 4"
fi
for dt in fp16 bf16; do
  while read -r cfg; do
    emit_mm_a a $dt $cfg
  done < <(tr '|' '\n' <<< "$mm_a_configs")
done
[ "${WGMMA_VARIANTS:-0}" = 1 ] && for cfg in "128 256 64 8 4" "128 128 64 4 4" "256 128 64 8 4"; do
  emit_mm_a a0 fp16 $cfg TK_WGMMA_INFLIGHT=0
  set -- $cfg
  src="$out/mm_fp16_$1x$2x$3_w$4_s$5_a.ptx" dst="mm_fp16_$1x$2x$3_w$4_s$5_ax"
  python3 - "$src" "$out/$dst.ptx" << 'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
drain = max(i for i, l in enumerate(lines) if "wgmma.wait_group.sync.aligned 0;" in l)
label = max(i for i in range(drain) if re.match(r"^\$L__BB[0-9_]+:$", lines[i]))
lines.insert(label + 1, "\twgmma.wait_group.sync.aligned 0;")
open(sys.argv[2], "w").write("\n".join(lines))
PY
  cp "$out/mm_fp16_$1x$2x$3_w$4_s$5_a.ptx.ir" "$out/$dst.ptx.ir"
  echo "mm $dst fp16 $1 $2 $3 $4" >> "$manifest"
done
for cfg in "128 64 32 4" "64 64 32 4"; do
  set -- $cfg
  name="bias_$1x$2x$3_w$4"
  emit "$name" tutorials/04-matmul.tk --kernel matmul_bias_kernel --num-warps="$4" \
    --signature "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32, i32:1, i32, i32:1, i32, i32:1" \
    -D BLOCK_SIZE_M="$1" -D BLOCK_SIZE_N="$2" -D BLOCK_SIZE_K="$3" -D GROUP_SIZE_M=8
  echo "bias $name fp16 $1 $2 $3 $4" >> "$manifest"
done

# Correctness sweep: tiles 16..256, every dtype, transposed operands.
chk_sig() {
  local ab="*$1" c="*$2" am ak bk bn
  case "$3" in
    nn) am="i32" ak="i32:1" bk="i32" bn="i32:1" ;;
    tn) am="i32:1" ak="i32" bk="i32" bn="i32:1" ;;
    nt) am="i32" ak="i32:1" bk="i32:1" bn="i32" ;;
  esac
  echo "$ab, $ab, $c, i32, i32, i32, $am, $ak, $bk, $bn, i32, i32:1"
}
# emit_chk NAME DTYPE BM BN BK WARPS TRANS C ACC_INT [tkc options...]: one
# dot_check variant and its manifest row (a compile failure is reported and
# left out).
emit_chk() {
  local name="$1" dt="$2" bm="$3" bn="$4" bk="$5" w="$6" t="$7" c="$8" acc="$9"
  shift 9
  if emit "$name" bench/dot_check.tk --num-warps="$w" --signature "$(chk_sig $dt $c $t)" \
      -D BM="$bm" -D BN="$bn" -D BK="$bk" -D ACC_INT=$acc "$@" 2> "$out/$name.err"; then
    rm -f "$out/$name.err"
    echo "chk $name $dt $bm $bn $bk $w $t" >> "$manifest"
  else
    echo "FAILED to compile $name:" >&2
    head -5 "$out/$name.err" >&2
  fi
}
for dt in fp16 bf16 fp32 i8; do
  c=fp32 acc=0
  if [ "$dt" = i8 ]; then c=i32 acc=1; fi
  for cfg in "16 16 16 1" "16 16 16 4" "32 32 32 4" "64 64 32 4" "128 128 32 4" "128 64 64 8" \
             "64 256 32 8" "256 64 16 8" "32 16 64 2"; do
    set -- $cfg
    for t in nn tn nt; do
      emit_chk "chk_${dt}_$1x$2x$3_w$4_$t" $dt $1 $2 $3 $4 $t $c $acc
    done
  done
done
# The same on sm_90a (wgmma where the tile fits: M a multiple of 64 per warp
# group), plus tiles that take its other layouts (N = 16, 32; K = 128), and
# with the pipeline off (_a1: the dot stages A and B itself).
for dt in fp16 bf16; do
  for cfg in "16 16 16 4" "64 64 32 4" "128 128 32 4" "128 64 64 8" "64 256 32 8" "256 64 16 8" \
             "64 16 64 4" "64 32 16 4" "128 256 64 8" "128 128 128 8" "256 128 64 8"; do
    set -- $cfg
    for t in nn tn nt; do
      emit_chk "chk_${dt}_$1x$2x$3_w$4_${t}_a" $dt $1 $2 $3 $4 $t fp32 0 --arch=sm_90a
      emit_chk "chk_${dt}_$1x$2x$3_w$4_${t}_a1" $dt $1 $2 $3 $4 $t fp32 0 --arch=sm_90a \
        --num-stages=1
    done
  done
done
# Keep only what ptxas (when present) accepts for sm_90, so one bad variant
# does not stop the run on the GPU machine.
if command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  px=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  while read -r kind name rest; do
    arch=sm_90
    case "$name" in *_a | *_a0 | *_a1 | *_ax) arch=sm_90a ;; esac
    if "$px" -arch=$arch "$out/$name.ptx" -o /dev/null 2> "$out/$name.ptxas"; then
      rm -f "$out/$name.ptxas"
      echo "$kind $name $rest"
    else
      echo "ptxas rejected $name: $(head -1 "$out/$name.ptxas")" >&2
    fi
  done < "$manifest" > "$manifest.ok"
  mv "$manifest.ok" "$manifest"
fi
# The last column: the dynamic shared memory a launch must pass, the
# kernel's shared_bytes when it is above 48 KiB (`.extern .shared`), else 0.
while read -r kind name rest; do
  smem=0
  if grep -q '^\.extern \.shared' "$out/$name.ptx"; then
    smem=$(grep -o 'shared_bytes = [0-9]*' "$out/$name.ptx.ir" 2> /dev/null | head -1 | grep -o '[0-9]*$' || true)
  fi
  echo "$kind $name $rest ${smem:-0}"
done < "$manifest" > "$manifest.ok"
mv "$manifest.ok" "$manifest"

# MATMUL_EXPERIMENTS=1: hand-edited copies of the 128x256x64 fp16 PTX that
# split the main loop's cost (manifest kind mmx: timed, never the best, and
# most compute a wrong C on purpose):
# - x_noload: every cp.async's src-size is 0 (zero fill, no global reads):
#   the loop without its L2 traffic;
# - x_nomma: no mma.sync (ptxas then drops the ldmatrix too): the copies,
#   waits and barriers alone;
# - x_l2pf: cp.async with the .L2::256B prefetch hint (C still correct);
# - x_mmaonly: the main loop's mma.sync alone (no ldmatrix, cp.async or
#   waits anywhere, no bar.sync in the loop): its tensor-core ceiling;
# - x_nobar: no bar.sync in the main loop (racy): what its barrier costs.
# The main loop is the backward branch's range with the most mma.sync (the
# barriers outside it publish index tensors converted through shared memory:
# removing those breaks the addresses).
drop_in_loop() { # drop_in_loop REGEX PTX: the PTX without REGEX's lines in the main loop
  awk -v re="$1" '
    NR == FNR {
      if ($0 ~ /^\$L__BB[0-9_]+:/) { lab = $0; sub(/:.*/, "", lab); at[lab] = FNR }
      if ($0 ~ /mma\.sync/) mma[FNR] = 1
      if ($0 ~ /bra/) { t = $NF; sub(/;$/, "", t)
        if ((t in at) && at[t] < FNR) { n = 0; for (i = at[t]; i <= FNR; i++) n += (i in mma)
          if (n > best) { best = n; lo = at[t]; hi = FNR } } }
      next }
    !(FNR >= lo && FNR <= hi && $0 ~ re)' "$2" "$2"
}
if [ "${MATMUL_EXPERIMENTS:-0}" = 1 ]; then
  for src in mm_fp16_128x256x64_w8_s3 mm_fp16_128x256x32_w8_s4; do
    row=$(grep " $src " "$manifest")
    sed -E 's/^(\s*cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 16), %r[0-9]+;/\1, 0;/' \
      "$out/$src.ptx" > "$out/x_noload_$src.ptx"
    grep -v 'mma\.sync' "$out/$src.ptx" > "$out/x_nomma_$src.ptx"
    sed 's/cp\.async\.cg\.shared\.global /cp.async.cg.shared.global.L2::256B /' "$out/$src.ptx" \
      > "$out/x_l2pf_$src.ptx"
    grep -vE 'ldmatrix|cp\.async' "$out/$src.ptx" > "$out/x_mmaonly_$src.ptx.tmp"
    drop_in_loop 'bar\.sync' "$out/x_mmaonly_$src.ptx.tmp" > "$out/x_mmaonly_$src.ptx"
    rm "$out/x_mmaonly_$src.ptx.tmp"
    drop_in_loop 'bar\.sync' "$out/$src.ptx" > "$out/x_nobar_$src.ptx"
    for x in noload nomma l2pf mmaonly nobar; do
      echo "$row" | sed "s/^mm $src /mmx x_${x}_$src /" >> "$manifest"
    done
  done
fi
wc -l "$manifest"

# The GPU machine's one command (the bundle carried as gpu-bundle-dot):
#   bash gpu-bundle-dot/run.sh <commit> [suffix [matmul_bench options...]]
# runs the correctness sweep and the speed run, results in $OUT as
# matmul-<date><suffix>.{json,png} and bench.log.
cat > gpu-bundle-dot/run.sh << 'RUN'
#!/usr/bin/env bash
cd "$(dirname "$0")/.."
python3 -u bench/matmul_bench.py --ptx-dir gpu-bundle-dot/ptx --out-dir "$OUT" --commit "$1" \
  --suffix="${2:-}" "${@:3}" 2>&1 | tee "$OUT/bench.log"
RUN
echo "on the GPU machine: bash gpu-bundle-dot/run.sh <commit> [suffix]"
