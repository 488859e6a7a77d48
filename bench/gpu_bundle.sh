#!/usr/bin/env bash
# Builds the bundle that one run on the GPU machine needs, from a build tree of
# this checkout: the binaries (stripped, one libtk.so), the Python package with
# tk._C compiled here for the GPU machine's CPython 3.12, and the PTX the
# benches time, packed into one xz archive beside a run.sh that runs the chosen
# parts there and puts every result under $OUT.
#
#   bash bench/gpu_bundle.sh --build build --out gpu-bundle [--only PARTS] [--commit C]
#   bash bench/gpu_bundle.sh --build build --ptx-only --out DIR     # DIR/ptx/*.ptx only
#
# PARTS (comma-separated; default tests,python,bench,novel,matmul, the full check
# of a commit; `all` for every part):
#   tests    gpu_tests (tutorials, hand-written kernels, the public C++ API),
#            gpu_difftest (GPU against the interpreter, 16 gtest shards), autotuner_tests,
#            tutorial 05 twice on one fresh cache (tuning, then a second process),
#            tutorial 06 from C++ (attention forward and backward, checked),
#            tutorial 13 from C++ (conv2d + bias + relu, checked, ResNet-50 layers timed)
#   python   the package: bench/python_launch_bench.py (launch, first call, the GPU pytest)
#   bench    bench/gpu_bench.py: softmax and LayerNorm PTX variants against Triton and
#            torch, with compile_bench --load and launch_bench folded in
#   smoke    bench/gpu_smoke.py on the bench part's PTX
#   novel    bench/novel_bench.py and bench/novel_matmul_bench.py (needs python)
#   attention bench/attention_bench.py: the plain attention forward, tk against Triton
#            and torch SDPA (needs python; estimated 3-6 minutes, a call of its own)
#   membound bench/membound_bench.py: memory-bound forward and backward kernels from one
#            plain source (tutorials 07-11, bench/membound_kernels.py), tk against Triton,
#            a same-bytes copy, torch eager and torch.compile (needs python; stops
#            itself after MEMBOUND_BUDGET_S seconds, default 280: a call of its own)
#   models   the model pieces of tutorials 12 and 13 and the wgmma ring's A/B:
#            bench/conv_bench.py (conv + bias + relu on ResNet-50's layers, tk against
#            cuDNN and Triton compiling the same source), bench/llama_block_bench.py
#            (the llama block against torch eager and torch.compile) and
#            bench/wgmma_ring_bench.py (TK_WGMMA_RING extra against auto, with Triton);
#            needs python; about 6-8 minutes, a call of its own
#   matmul   bench/matmul_bench.py: the dot correctness sweep and the matmul configs
#            against Triton and cuBLAS (WGMMA_VARIANTS=1, MATMUL_EXPERIMENTS=1 add
#            variants and hand-edited experiments, as their comments below say)
#   compile  compile_bench: --jit-files (the driver's JIT alone on the PTX of jit-files/),
#            --load once per entry of COMPILE_RUNS (default "default O3 default2": a
#            TK_LLVM_OPT value, or default; a trailing 2 repeats a run), and the
#            stages without the GPU
#   autotune tutorial 05 tuning 8 matmul configs at 4096^3 in fresh processes (threads,
#            ptxas), against Triton's autotuner (bench/autotune_triton.py), the
#            second-process start, the AOT test
#   ln-sweep bench/exp_ln_sweep.py on LayerNorm variants (--control-tkc TKC and
#            --control-rev REV add the tutorial of REV through another build's tkc)
#   interp   interp_bench (CPU only)
#
# On the GPU machine, from the repository root, with the bundle carried
# (run(carry=["gpu-bundle"], ...); it is git-ignored):
#
#   bash gpu-bundle/run.sh [PARTS]        # default: every part bundled
#
# Two calls keep each under the 10-minute limit of one command (about 150 s for
# tests,python, 220 s for bench,novel,matmul). Results: $OUT/results-<parts>.tgz
# (results/<part>/..., the bundle's COMMIT, run.log) and $OUT/run.log; back here
#
#   tar -xzf results-*.tgz && python3 bench/summarize.py results
#
# writes bench/results/<benchmark>.json and a row of bench/results/history.md per
# result. Without a GPU, run.sh runs what needs none (the CPU stages of compile
# and interp; the test binaries, which skip their GPU cases visibly) and says
# which parts it skipped.
#
# Limits of the GPU machine tool this keeps to: the working tree that travels is
# at most 64 MiB (libtk.so is ~18 MB stripped: one copy, hard-linked where a
# part needs it beside itself, and the lot xz-compressed), one command at most
# 2000 characters, at most 8 files come back from $OUT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
build=build out=gpu-bundle only=tests,python,bench,novel,matmul ptx_only=0 commit=''
control_tkc='' control_rev=HEAD extra_ptx=''
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build="$2"; shift 2 ;;
  --out) out="$2"; shift 2 ;;
  --only) only="$2"; shift 2 ;;
  --ptx-only) ptx_only=1; shift ;;
  --commit) commit="$2"; shift 2 ;;
  --control-tkc) control_tkc="$2"; shift 2 ;;
  --control-rev) control_rev="$2"; shift 2 ;;
  --extra-ptx) extra_ptx="$2"; shift 2 ;;
  -h | --help) usage ;;
  *) echo "gpu_bundle.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
all_parts="tests python bench smoke novel attention membound models matmul compile autotune ln-sweep interp"
[ "$only" = all ] && only=${all_parts// /,}
if [ "$ptx_only" = 1 ] && [ "$only" = tests,python,bench,novel,matmul ]; then only=bench; fi
parts=()
for p in ${only//,/ }; do
  [[ " $all_parts " == *" $p "* ]] || { echo "gpu_bundle.sh: unknown part '$p' (parts: $all_parts)" >&2; exit 2; }
  parts+=("$p")
done
has() { [[ " ${parts[*]} " == *" $1 "* ]]; }
if has novel && ! has python; then parts+=(python); fi
if has attention && ! has python; then parts+=(python); fi
if has membound && ! has python; then parts+=(python); fi
if has models && ! has python; then parts+=(python); fi
if has smoke && ! has bench; then parts+=(bench); fi
[ -d "$build" ] || { echo "gpu_bundle.sh: no build tree at '$build' (bash run.sh makes build/)" >&2; exit 1; }
build=$(cd "$build" && pwd)
tkc="$build/bin/tkc"
[ -x "$tkc" ] || { echo "gpu_bundle.sh: no $tkc: build first (ninja -C $build tkc)" >&2; exit 1; }

# What the parts need from the build tree, found by name (the tree's layout
# moves; the names do not).
find_built() {
  local name="$1" f
  for f in "$build/$name" "$build/bin/$name"; do
    [ -f "$f" ] && { echo "$f"; return; }
  done
  # The newest, should a moved target have left an old copy behind.
  f=$(find "$build" -name "$name" -type f -perm -u+x -not -path '*/CMakeFiles/*' -printf '%T@ %p\n' \
    2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-)
  [ -z "$f" ] || echo "$f"
}
need=()
has tests && need+=(libtk.so gpu_tests gpu_difftest autotuner_tests 05-host-autotune 06-fused-attention
                    12-llama-block 13-conv2d-bias-relu)
has python && need+=(libtk.so)
has bench && need+=(libtk.so compile_bench launch_bench)
has compile && need+=(libtk.so compile_bench)
has autotune && need+=(libtk.so 05-host-autotune aot_softmax_test autotuner_tests)
has interp && need+=(interp_bench)
declare -A built=() tried=()
missing=()
if [ "$ptx_only" = 0 ]; then
  for n in "${need[@]}"; do
    [ -n "${tried[$n]:-}" ] && continue
    tried[$n]=1
    f=$(find_built "$n")
    if [ -z "$f" ]; then missing+=("$n"); else built[$n]="$f"; fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    targets=$(printf '%s\n' "${missing[@]}" | sed 's/^libtk\.so$/tk/' | tr '\n' ' ')
    echo "gpu_bundle.sh: not built in $build: ${missing[*]} (ninja -C $build ${targets% })" >&2
    exit 1
  fi
fi

# The bundle is put together in a staging folder and packed; only the archive,
# run.sh and COMMIT travel. With --ptx-only the PTX goes straight to $out.
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ "$ptx_only" = 1 ]; then
  stage="$out"
else
  if ! git -C "$root" check-ignore -q "$out" 2>/dev/null; then
    echo "gpu_bundle.sh: warning: $out is not git-ignored; the device tool carries only" \
      "ignored paths named in carry (gpu-bundle*/ is ignored)" >&2
  fi
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
fi

strip_copy() { # strip_copy FILE DEST: a stripped copy
  mkdir -p "$(dirname "$2")"
  strip --strip-unneeded -o "$2" "$1" 2>/dev/null || cp "$1" "$2"
}
lib() { # one libtk.so for every part, hard-linked where a part needs it beside itself
  if [ ! -f "$stage/lib/libtk.so" ]; then strip_copy "${built[libtk.so]}" "$stage/lib/libtk.so"; fi
  [ $# -eq 0 ] || { mkdir -p "$(dirname "$1")"; ln -f "$stage/lib/libtk.so" "$1"; }
}

# --- bench: the tutorials' PTX that gpu_bench.py (and gpu_smoke.py) time -------------------
bench_ptx() {
  local out="$1"
  mkdir -p "$out"
  local softmax_sig="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16"
  local ln_sig="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32"
  "$tkc" tutorials/01-vector-add.tk --emit=ptx --num-warps=4 \
    --signature "*fp32:16, *fp32:16, *fp32:16, i32:16" -D BLOCK_SIZE=1024 -o "$out/add_1024.ptx"
  # gpu_smoke.py's softmax files.
  local cfg n w b form onepass
  for cfg in "1024 4" "4096 8" "8192 16" "16384 16"; do
    set -- $cfg
    "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$2" --signature "$softmax_sig" \
      -D BLOCK_SIZE="$1" -o "$out/softmax_$1.ptx"
  done
  # gpu_bench.py tries 2, 4, 8, 16 and 32 warps, at most 128 elements per
  # thread and 32 warps only from 8192 columns (its warps_for), and reports the
  # fastest.
  for n in 1024 4096 8192 16384; do
    for w in 2 4 8 16 32; do
      ((n <= 128 * 32 * w && (w < 32 || n >= 8192))) || continue
      "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$w" --signature "$softmax_sig" \
        -D BLOCK_SIZE="$n" -o "$out/softmax_${n}_w$w.ptx"
      # LayerNorm forward (X, Y, W, B fp16; Mean, Rstd fp32; stride, N, eps):
      # the fused kernel with the whole row in one block, the same with both
      # statistics from one walk of the row (ONE_PASS), and the persistent
      # kernel (a few programs per SM striding over the rows, the next row
      # loaded before this one is reduced) in both forms; its parameters end
      # with M.
      "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_fused --emit=ptx --num-warps="$w" \
        --signature "$ln_sig" -D BLOCK_SIZE="$n" -o "$out/layernorm_fused_${n}_w$w.ptx"
      "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_fused --emit=ptx --num-warps="$w" \
        --signature "$ln_sig" -D BLOCK_SIZE="$n" -D ONE_PASS=True \
        -o "$out/layernorm_fused1p_${n}_w$w.ptx"
      for form in persist persist1p; do
        onepass=False
        [ "$form" = persist1p ] && onepass=True
        "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_persistent --emit=ptx \
          --num-warps="$w" --signature "$ln_sig, i32" -D BLOCK_SIZE="$n" -D ONE_PASS=$onepass \
          -o "$out/layernorm_${form}_${n}_w$w.ptx"
      done
    done
  done
  # The chunked kernel walking wider rows with 1024- and 4096-wide blocks.
  for b in 1024 4096; do
    for w in 2 4 8 16; do
      "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd --emit=ptx --num-warps="$w" \
        --signature "$ln_sig" -D BLOCK_SIZE="$b" -o "$out/layernorm_${b}_w$w.ptx"
    done
  done
  # Hand-made experiments (*.exp-NAME.ptx, timed apart by gpu_bench.py, e.g.
  # bench/exp_ln_cache_hints.py's rewrites): --extra-ptx DIR.
  if [ -n "$extra_ptx" ]; then cp "$extra_ptx"/*.ptx "$out/"; fi
  # Registers per thread (and spill bytes) of every file, as ptxas sees them.
  bash bench/ptxas_registers.sh "$out"
}

# --- matmul: what bench/matmul_bench.py launches, with a manifest ---------------------------
# - mm_<dtype>_<BM>x<BN>x<BK>_w<W>_s<S>[_g<G>].ptx: tutorials/04-matmul.tk (no
#   activation) with S pipeline stages (--num-stages), GROUP_SIZE_M G (default 8),
#   fp16 or bf16 in and out, M, N, K and the leading strides divisible by 16, unit
#   inner strides;
# - bias_<BM>x<BN>x<BK>_w<W>.ptx: the fused bias + leaky_relu kernel of the same
#   tutorial;
# - chk_<dtype>_<BM>x<BN>x<BK>_w<W>_<t>.ptx: bench/dot_check.tk for the
#   correctness sweep; t = nn, tn, nt (A and/or B transposed: its unit stride on the
#   other dimension), sizes and strides unspecialised (ragged edges);
# - names ending in _a: the same for --arch=sm_90a, where the fp16/bf16 dots that fit
#   take Hopper's wgmma (mm and chk; chk_..._a1: --num-stages=1, so the dot stages its
#   operands itself instead of reading the cp.async ring).
# Manifest rows: kind name dtype BM BN BK warps [t] smem, smem the dynamic shared
# memory its launch needs (0: static shared memory only).
matmul_ptx() {
  local out="$1"
  mkdir -p "$out"
  local manifest="$out/manifest.txt"
  : >"$manifest"
  # tkc --emit=ptx -o $out/<name>.ptx, and the GPU IR (for shared_bytes) beside it
  # as <name>.ptx.ir (no LLVM: cheap).
  emit() {
    local name="$1"
    shift
    "$tkc" "$@" --emit=ptx -o "$out/$name.ptx" && "$tkc" "$@" --emit=ir-gpu -o "$out/$name.ptx.ir"
  }
  mm_sig() { echo "*$1:16, *$1:16, *$1:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1"; }
  # BM BN BK warps stages [GROUP_SIZE_M, default 8; in the name as _g<n>]: the
  # configs that won a case in the runs of 2026-11-30 (bench/results/history.md,
  # matmul) and their close neighbours (the 8-warp ones within ~3% of each other,
  # so the best of a run varies among them).
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
  local dt bm bn bk w st gm name cfg t c acc
  for dt in fp16 bf16; do
    while read -r bm bn bk w st gm; do
      gm="${gm:-8}"
      name="mm_${dt}_${bm}x${bn}x${bk}_w${w}_s${st}"
      if [ "$gm" != 8 ]; then name="${name}_g$gm"; fi
      emit "$name" tutorials/04-matmul.tk --kernel matmul_kernel --num-warps="$w" \
        --num-stages="$st" --signature "$(mm_sig $dt)" -D BLOCK_SIZE_M="$bm" -D BLOCK_SIZE_N="$bn" \
        -D BLOCK_SIZE_K="$bk" -D GROUP_SIZE_M="$gm" -D ACTIVATION=plain
      echo "mm $name $dt $bm $bn $bk $w" >>"$manifest"
    done < <(mm_configs $dt)
  done
  # sm_90a (wgmma), each dot keeping one wgmma group in flight (the compiler's
  # default, _a): the configs that won or came within a few % in the wgmma runs
  # (bench/results/notes/matmul-wgmma.md; 128x256x64 w8 s4 every large case,
  # 128x128x64 w8 s4 at 1024) and two 64-row tiles (one warp group) for the small
  # sizes. WGMMA_VARIANTS=1 adds the rest of that run's list and, for comparison,
  # _a0: TK_WGMMA_INFLIGHT=0 (wait_group 0 in every iteration) and _ax: a
  # hand-edited _a whose wgmma.wait_group 0 after the loop is moved to the top of the
  # loop's exit block (what the compiler does since 0b56f5a; before it, ptxas
  # serialised the wgmma, warning C7514).
  emit_mm_a() { # emit_mm_a SUFFIX DTYPE BM BN BK WARPS STAGES [env...]
    local suffix="$1" dt="$2" bm="$3" bn="$4" bk="$5" w="$6" st="$7" kind
    shift 7
    local name="mm_${dt}_${bm}x${bn}x${bk}_w${w}_s${st}_$suffix"
    for kind in ptx ir-gpu; do
      env "$@" "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --num-warps="$w" --arch=sm_90a \
        --num-stages="$st" --signature "$(mm_sig $dt)" -D BLOCK_SIZE_M="$bm" -D BLOCK_SIZE_N="$bn" \
        -D BLOCK_SIZE_K="$bk" -D GROUP_SIZE_M=8 -D ACTIVATION=plain --emit=$kind \
        -o "$out/$name.ptx$([ $kind = ptx ] || echo .ir)"
    done
    echo "mm $name $dt $bm $bn $bk $w" >>"$manifest"
  }
  local mm_a_configs="128 256 64 8 4|256 128 64 8 4|128 256 32 8 4|128 128 64 4 3|128 128 64 8 4"
  mm_a_configs="$mm_a_configs|64 256 64 4 4|64 128 64 4 4|128 128 32 8 4"
  if [ "${WGMMA_VARIANTS:-0}" = 1 ]; then
    mm_a_configs="$mm_a_configs|128 256 64 8 3|128 128 64 4 4|256 128 64 8 3|128 128 32 4 4"
  fi
  for dt in fp16 bf16; do
    while read -r cfg; do
      emit_mm_a a $dt $cfg
    done < <(tr '|' '\n' <<<"$mm_a_configs")
  done
  if [ "${WGMMA_VARIANTS:-0}" = 1 ]; then
    for cfg in "128 256 64 8 4" "128 128 64 4 4" "256 128 64 8 4"; do
      emit_mm_a a0 fp16 $cfg TK_WGMMA_INFLIGHT=0
      set -- $cfg
      local src="$out/mm_fp16_$1x$2x$3_w$4_s$5_a.ptx" dst="mm_fp16_$1x$2x$3_w$4_s$5_ax"
      python3 - "$src" "$out/$dst.ptx" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
drain = max(i for i, l in enumerate(lines) if "wgmma.wait_group.sync.aligned 0;" in l)
label = max(i for i in range(drain) if re.match(r"^\$L__BB[0-9_]+:$", lines[i]))
lines.insert(label + 1, "\twgmma.wait_group.sync.aligned 0;")
open(sys.argv[2], "w").write("\n".join(lines))
PY
      cp "$out/mm_fp16_$1x$2x$3_w$4_s$5_a.ptx.ir" "$out/$dst.ptx.ir"
      echo "mm $dst fp16 $1 $2 $3 $4" >>"$manifest"
    done
  fi
  for cfg in "128 64 32 4" "64 64 32 4"; do
    set -- $cfg
    name="bias_$1x$2x$3_w$4"
    emit "$name" tutorials/04-matmul.tk --kernel matmul_bias_kernel --num-warps="$4" \
      --signature "*fp16:16, *fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32, i32:1, i32, i32:1, i32, i32:1" \
      -D BLOCK_SIZE_M="$1" -D BLOCK_SIZE_N="$2" -D BLOCK_SIZE_K="$3" -D GROUP_SIZE_M=8
    echo "bias $name fp16 $1 $2 $3 $4" >>"$manifest"
  done
  # The correctness sweep: tiles 16..256, every dtype, transposed operands.
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
  # dot_check variant and its manifest row (a compile failure is reported and left out).
  emit_chk() {
    local name="$1" dt="$2" bm="$3" bn="$4" bk="$5" w="$6" t="$7" c="$8" acc="$9"
    shift 9
    if emit "$name" bench/dot_check.tk --num-warps="$w" --signature "$(chk_sig $dt $c $t)" \
      -D BM="$bm" -D BN="$bn" -D BK="$bk" -D ACC_INT=$acc "$@" 2>"$out/$name.err"; then
      rm -f "$out/$name.err"
      echo "chk $name $dt $bm $bn $bk $w $t" >>"$manifest"
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
  # group), plus tiles that take its other layouts (N = 16, 32; K = 128), and with
  # the pipeline off (_a1: the dot stages A and B itself).
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
  # Keep only what ptxas (when present) accepts, so one bad variant does not stop
  # the run on the GPU machine.
  local px kind rest arch smem
  px=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
  if [ -x "$px" ]; then
    while read -r kind name rest; do
      arch=sm_90
      case "$name" in *_a | *_a0 | *_a1 | *_ax) arch=sm_90a ;; esac
      if "$px" -arch=$arch "$out/$name.ptx" -o /dev/null 2>"$out/$name.ptxas"; then
        rm -f "$out/$name.ptxas"
        echo "$kind $name $rest"
      else
        echo "ptxas rejected $name: $(head -1 "$out/$name.ptxas")" >&2
      fi
    done <"$manifest" >"$manifest.ok"
    mv "$manifest.ok" "$manifest"
  fi
  # The last column: the dynamic shared memory a launch must pass, the kernel's
  # shared_bytes when it is above 48 KiB (`.extern .shared`), else 0.
  while read -r kind name rest; do
    smem=0
    if grep -q '^\.extern \.shared' "$out/$name.ptx"; then
      smem=$(grep -o 'shared_bytes = [0-9]*' "$out/$name.ptx.ir" 2>/dev/null | head -1 | grep -o '[0-9]*$' || true)
    fi
    echo "$kind $name $rest ${smem:-0}"
  done <"$manifest" >"$manifest.ok"
  mv "$manifest.ok" "$manifest"
  # MATMUL_EXPERIMENTS=1: hand-edited copies of the 128x256 fp16 PTX that split the
  # main loop's cost (manifest kind mmx: timed, never the best, and most compute a
  # wrong C on purpose): x_noload (every cp.async's src-size 0: no global reads),
  # x_nomma (no mma.sync; ptxas then drops the ldmatrix too), x_l2pf (cp.async with
  # .L2::256B; C still correct), x_mmaonly (the main loop's mma.sync alone: its
  # tensor-core ceiling), x_nobar (no bar.sync in the main loop, racy). The main loop
  # is the backward branch's range with the most mma.sync (the barriers outside it
  # publish index tensors converted through shared memory: removing those breaks the
  # addresses).
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
    local src row x
    for src in mm_fp16_128x256x64_w8_s3 mm_fp16_128x256x32_w8_s4; do
      row=$(grep " $src " "$manifest")
      sed -E 's/^(\s*cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 16), %r[0-9]+;/\1, 0;/' \
        "$out/$src.ptx" >"$out/x_noload_$src.ptx"
      grep -v 'mma\.sync' "$out/$src.ptx" >"$out/x_nomma_$src.ptx"
      sed 's/cp\.async\.cg\.shared\.global /cp.async.cg.shared.global.L2::256B /' "$out/$src.ptx" \
        >"$out/x_l2pf_$src.ptx"
      grep -vE 'ldmatrix|cp\.async' "$out/$src.ptx" >"$out/x_mmaonly_$src.ptx.tmp"
      drop_in_loop 'bar\.sync' "$out/x_mmaonly_$src.ptx.tmp" >"$out/x_mmaonly_$src.ptx"
      rm "$out/x_mmaonly_$src.ptx.tmp"
      drop_in_loop 'bar\.sync' "$out/$src.ptx" >"$out/x_nobar_$src.ptx"
      for x in noload nomma l2pf mmaonly nobar; do
        echo "$row" | sed "s/^mm $src /mmx x_${x}_$src /" >>"$manifest"
      done
    done
  fi
  echo "matmul: $(wc -l <"$manifest") kernels in the manifest" >&2
}

# --- compile: the PTX the driver's JIT is timed on alone ------------------------------------
# An empty kernel (the JIT's fixed cost), the vector add, softmax at 1024/4096/16384
# (16384 on 16 warps, which bench/jit_variants.py edits, and on tutorial 2's 32), the
# 128x128x32 and 128x128x64 matmuls, the sm_90a (wgmma) matmuls of compile_bench's
# cases, and jit_variants.py's hand-edited variants.
jit_files() {
  local J="$1" cfg
  mkdir -p "$J"
  printf '.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry empty()\n{\n\tret;\n}\n' \
    >"$J/00-empty.ptx"
  "$tkc" tutorials/01-vector-add.tk --emit=ptx --num-warps=4 \
    --signature "*fp32:16, *fp32:16, *fp32:16, i32:16" -D BLOCK_SIZE=1024 -o "$J/01-vector-add.ptx"
  local softmax_sig="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16"
  for cfg in "1024 4" "4096 8" "16384 16"; do
    set -- $cfg
    "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$2" --signature "$softmax_sig" \
      -D BLOCK_SIZE="$1" -o "$J/10-softmax-$1.ptx"
  done
  "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps=32 --signature "$softmax_sig" \
    -D BLOCK_SIZE=16384 -o "$J/10-softmax-16384-w32.ptx"
  local mm_sig="*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1"
  for cfg in "32 4 4" "64 4 3"; do
    set -- $cfg
    "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --emit=ptx --num-warps="$2" \
      --num-stages="$3" --signature "$mm_sig" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 \
      -D BLOCK_SIZE_K="$1" -D GROUP_SIZE_M=8 -D ACTIVATION=plain \
      -o "$J/20-matmul-128x128x$1-w$2-s$3.ptx"
  done
  for cfg in "128 64 4 4" "256 64 8 4"; do
    set -- $cfg
    "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --emit=ptx --num-warps="$3" --arch=sm_90a \
      --num-stages="$4" --signature "$mm_sig" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N="$1" \
      -D BLOCK_SIZE_K="$2" -D GROUP_SIZE_M=8 -D ACTIVATION=plain \
      -o "$J/21-matmul-128x$1x$2-w$3-s$4-sm90a.ptx"
  done
  python3 bench/jit_variants.py "$J"
}

# --- ln-sweep: bench/exp_ln_sweep.py's LayerNorm variants and their manifest.json -----------
# At 1024 columns: tutorial 3's fused kernel at 1, 2 and 4 warps, its persistent
# kernel (ONE_PASS) on grids of 16 and 18 programs per SM, bench/exp_layernorm.tk's
# layer_norm_fwd_tile (ROWS rows per program as one 2-D tile) and layer_norm_fwd_ptile
# (the same on a persistent grid), two of them with L2 evict_first hints; at 4096 the
# tutorial's pick. --control-tkc: the tutorial of --control-rev through that tkc,
# labelled old_* (before and after in one run).
ln_sweep_ptx() {
  local out="$1"
  mkdir -p "$out"
  local sig="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32"
  local entries=() cfg w label hint e last
  add() { # add LABEL N WARPS PROGRAMS TAKES_M PIN TKC SOURCE KERNEL [-D ...]
    local label=$1 n=$2 w=$3 programs=$4 takes_m=$5 pin=$6 compiler=$7 src=$8 kernel=$9
    shift 9
    local s="$sig"
    [ "$takes_m" = true ] && s="$sig, i32"
    "$compiler" "$src" --kernel "$kernel" --emit=ptx --num-warps="$w" --signature "$s" \
      -D BLOCK_SIZE="$n" "$@" -o "$out/$label.ptx"
    entries+=("{\"label\": \"$label\", \"file\": \"$label.ptx\", \"entry\": \"$kernel\", \"n\": $n, \
\"warps\": $w, \"programs\": \"$programs\", \"takes_m\": $takes_m, \"pin\": $pin}")
  }
  local tut=tutorials/03-layer-norm.tk exp=bench/exp_layernorm.tk
  for w in 1 2 4; do
    add "1024_fused_w$w" 1024 $w m false false "$tkc" $tut layer_norm_fwd_fused
  done
  add 1024_fused1p_w2 1024 2 m false false "$tkc" $tut layer_norm_fwd_fused -D ONE_PASS=True
  # The tutorial's pick at 1024 (pinned: always in the rounds), its grid with the
  # most programs that fit (18 at 56 registers), and one warp.
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
  # The tile on a persistent grid, the next tile prefetched (K per SM up to what
  # fits: 14 at r2 w2, 9 at r2 w4, 6 at r4 w4).
  for cfg in "2 2 8" "2 2 14" "2 4 8" "4 4 6"; do
    set -- $cfg
    add "1024_ptile_r$1_w$2_p$3" 1024 "$2" "k$3" true false "$tkc" $exp layer_norm_fwd_ptile \
      -D ROWS="$1"
  done
  add 4096_fused_w8 4096 8 m false true "$tkc" $tut layer_norm_fwd_fused
  # L2 evict_first on the row's loads (l2ef) and on y's stores too (l2efst):
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
  if [ -n "$control_tkc" ]; then
    git show "$control_rev:$tut" >"$out/03-layer-norm-control.tk"
    local head="$out/03-layer-norm-control.tk"
    add old_1024_fused_w2 1024 2 m false false "$control_tkc" "$head" layer_norm_fwd_fused
    add old_1024_persist1p_w2_p16 1024 2 k16 true true "$control_tkc" "$head" \
      layer_norm_fwd_persistent -D ONE_PASS=True
    add old_4096_fused_w8 4096 8 m false true "$control_tkc" "$head" layer_norm_fwd_fused
  fi
  {
    echo "["
    local i
    for i in "${!entries[@]}"; do
      ((i == 0)) || echo ","
      echo "${entries[$i]}"
    done
    echo "]"
  } >"$out/manifest.json"
  python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$out/manifest.json"
  bash bench/ptxas_registers.sh "$out"
}

# --- python: the package, with tk._C compiled here for CPython 3.12 -------------------------
# The same sources and flags as python/CMakeLists.txt's tk_python, against the
# headers of /work/shared/device/py312-include.tar.xz (TK_PY312_INCLUDE) and
# this machine's pybind11; libtk.so beside it ($ORIGIN). Nothing is built there.
python_pkg() {
  local dst="$1" inc pybind
  local headers="${TK_PY312_INCLUDE:-/work/shared/device/py312-include.tar.xz}"
  [ -f "$headers" ] || { echo "gpu_bundle.sh: python: no $headers (CPython 3.12 headers)" >&2; exit 1; }
  pybind="$(python3 -c 'import pybind11; print(pybind11.get_include())')"
  inc=$(mktemp -d)
  tar xJf "$headers" -C "$inc"
  mkdir -p "$dst/tk"
  (cd python && find tk -name '*.py' -exec cp --parents {} "$dst/" \;)
  lib "$dst/tk/libtk.so"
  g++ -std=c++20 -O2 -DNDEBUG -DFMT_HEADER_ONLY=1 -fPIC -fvisibility=hidden -shared \
    -Ipython/src -I. -Iinclude -I"$build" -isystem "$inc/python3.12" -isystem "$inc" \
    -isystem "$pybind" python/src/*.cpp \
    -o "$dst/tk/_C.cpython-312-x86_64-linux-gnu.so" -L"$dst/tk" -ltk -ldl -Wl,-rpath,'$ORIGIN' -s
  rm -rf "$inc"
}

# --- assemble --------------------------------------------------------------------------------
if [ "$ptx_only" = 1 ]; then
  has bench && bench_ptx "$out/ptx"
  has matmul && matmul_ptx "$out/dot"
  has compile && jit_files "$out/jit-files"
  has ln-sweep && ln_sweep_ptx "$out/ln-sweep"
  echo "gpu_bundle.sh: PTX of ${parts[*]} in $out"
  exit 0
fi
for p in "${parts[@]}"; do
  case "$p" in
  tests)
    lib
    for n in gpu_tests gpu_difftest autotuner_tests 05-host-autotune 06-fused-attention \
      12-llama-block 13-conv2d-bias-relu; do
      strip_copy "${built[$n]}" "$stage/tests/$n"
    done
    ;;
  python)
    python_pkg "$stage/py"
    if [ -n "$(find_built launch_bench)" ]; then
      strip_copy "$(find_built launch_bench)" "$stage/py/launch_bench"
    fi
    ;;
  bench)
    bench_ptx "$stage/ptx"
    lib
    strip_copy "${built[compile_bench]}" "$stage/drv/compile_bench"
    strip_copy "${built[launch_bench]}" "$stage/drv/launch_bench"
    ;;
  matmul) matmul_ptx "$stage/dot" ;;
  compile)
    lib
    strip_copy "${built[compile_bench]}" "$stage/compile/compile_bench"
    mkdir -p "$stage/compile/tutorials"
    cp tutorials/*.tk "$stage/compile/tutorials/"
    jit_files "$stage/compile/jit-files"
    ;;
  autotune)
    lib
    for n in 05-host-autotune aot_softmax_test autotuner_tests; do
      strip_copy "${built[$n]}" "$stage/autotune/$n"
    done
    cp tutorials/02-fused-softmax.tk tutorials/04-matmul.tk bench/autotune_triton.py "$stage/autotune/"
    ;;
  ln-sweep) ln_sweep_ptx "$stage/ln-sweep" ;;
  interp) strip_copy "${built[interp_bench]}" "$stage/interp/interp_bench" ;;
  smoke) ;; # the bench part's ptx/
  attention | membound) ;; # the python part's package
  esac
done
if [ -z "$commit" ]; then
  commit=$(git rev-parse HEAD)
fi
{
  echo "commit $commit"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "tree: local changes to tracked files (the binaries may differ from the commit)"
  else
    echo "tree: clean"
  fi
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $build"
  echo "parts ${parts[*]}"
} >"$stage/COMMIT"
rm -f "$out/bundle.tar.xz" "$out/run.sh" "$out/COMMIT"
cp "$stage/COMMIT" "$out/COMMIT"
# -h is not given: hard links stay links, so libtk.so is in the archive once.
tar -cJf "$out/bundle.tar.xz" -C "$stage" .
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPU machine's side of a bundle made by bench/gpu_bundle.sh (its header says
# what each part runs). From the repository root, the bundle carried:
#
#   bash gpu-bundle/run.sh [PARTS]      # comma-separated; default: every part bundled
#
# Unpacks the archive once (beside itself, in x/), runs the parts, prints their
# summaries, and leaves $OUT/results-<parts>.tgz (results/<part>/..., COMMIT,
# device.txt, run.log) and $OUT/run.log. Without a GPU it runs what needs none and
# says what it skipped. Exit status 1 when a part failed.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/.." || exit 1
commit=$(sed -n 's/^commit //p' "$here/COMMIT")
bundled=$(sed -n 's/^parts //p' "$here/COMMIT")
want=${1:-$bundled}
want=${want//,/ }
for p in $want; do
  [[ " $bundled " == *" $p "* ]] || { echo "run.sh: part '$p' is not in this bundle ($bundled)" >&2; exit 2; }
done
x="$here/x"
if ! cmp -s "$x/COMMIT" "$here/COMMIT" 2>/dev/null; then
  rm -rf "$x" && mkdir -p "$x" && tar -xJf "$here/bundle.tar.xz" -C "$x" || exit 1
fi
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
tmp=$(mktemp -d)
res="$tmp/results"
mkdir -p "$res"
cp "$here/COMMIT" "$res/COMMIT"
export PYTHONUNBUFFERED=1 CUDA_CACHE_DISABLE=1
export LD_LIBRARY_PATH="$x/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpu=0
if nvidia-smi -L >"$res/device.txt" 2>/dev/null; then
  gpu=1
else
  echo "no GPU: nvidia-smi -L failed or is not installed" >"$res/device.txt"
fi
echo "ran $(date -u +%Y-%m-%dT%H:%MZ)" >>"$res/COMMIT"
status=0
skip() { echo "== $1: SKIPPED, no GPU here ($(head -1 "$res/device.txt"))"; }
# note FILE COMMAND...: the exact command beside its result (bench/summarize.py reads it)
note() { local f="$1"; shift; echo "$*" >"$f.command"; }

run_part() {
  local p="$1" o="$res/$1"
  mkdir -p "$o"
  case "$p" in
  tests)
    echo "== tests: gpu_tests, gpu_difftest (16 shards, 4 at a time), autotuner_tests, tutorial 05"
    cp "$res/COMMIT" "$o/COMMIT"
    note "$o" "bash gpu-bundle/run.sh tests"
    cp "$res/device.txt" "$o/device.txt"
    "$x/tests/gpu_tests" --tutorials "$PWD/tutorials" --gtest_output="json:$o/gpu_tests.json" \
      >"$o/gpu_tests.log" 2>&1 || status=1
    # A kernel that faults poisons its process's CUDA context, so the differential
    # cases run as 16 processes (gtest shards): a fault costs one shard, whose later
    # cases skip naming it.
    shard() {
      GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX="$1" timeout 300 "$x/tests/gpu_difftest" \
        --gtest_filter='Gpu/*' --gtest_output="json:$o/gpu_difftest-$1.json" \
        >"$o/gpu_difftest-shard$1.log" 2>&1
    }
    export -f shard
    export x o
    seq 0 15 | xargs -P 4 -I{} bash -c 'shard {}' || status=1
    local i
    for i in $(seq 0 15); do cat "$o/gpu_difftest-shard$i.log" 2>/dev/null; done >"$o/gpu_difftest.log"
    rm -f "$o"/gpu_difftest-shard*.log
    "$x/tests/autotuner_tests" >"$o/autotuner_tests.log" 2>&1 || status=1
    if [ $gpu = 1 ]; then
      # Twice on one fresh cache: 1 tunes every key, 2 is a second process from the
      # disk cache. The cache stays out of the results.
      local cache run
      cache=$(mktemp -d)
      for run in 1 2; do
        echo "== tutorial 05, run $run"
        TK_CACHE_DIR="$cache" TK_PRINT_AUTOTUNING=1 timeout 300 "$x/tests/05-host-autotune" \
          --tutorials "$PWD/tutorials" 2>&1 || { echo "exit $?"; status=1; }
      done >"$o/05-host-autotune.log"
      rm -rf "$cache"
      echo "== tutorial 06 (attention from C++)" >"$o/06-fused-attention.log"
      timeout 300 "$x/tests/06-fused-attention" --tutorials "$PWD/tutorials" \
        >>"$o/06-fused-attention.log" 2>&1 || { echo "exit $?" >>"$o/06-fused-attention.log"; status=1; }
      echo "== tutorial 12 (llama block from C++, CUDA graph)" >"$o/12-llama-block.log"
      timeout 600 "$x/tests/12-llama-block" --tutorials "$PWD/tutorials" \
        >>"$o/12-llama-block.log" 2>&1 || { echo "exit $?" >>"$o/12-llama-block.log"; status=1; }
      echo "== tutorial 13 (conv2d + bias + relu from C++)" >"$o/13-conv2d-bias-relu.log"
      timeout 300 "$x/tests/13-conv2d-bias-relu" --tutorials "$PWD/tutorials" \
        >>"$o/13-conv2d-bias-relu.log" 2>&1 || { echo "exit $?" >>"$o/13-conv2d-bias-relu.log"; status=1; }
    else
      skip "tests: tutorial 05"
    fi
    tail -n 3 "$o/gpu_tests.log"
    grep -E '^\[  FAILED  \] [A-Za-z]' "$o/gpu_tests.log" | sort -u
    grep -h -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$o/gpu_difftest.log" | sort | uniq -c
    echo "autotuner_tests: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$o/autotuner_tests.log" | tr '\n' ' ')"
    [ -f "$o/05-host-autotune.log" ] && grep -E '^== |^matmul|^softmax|launch overhead|all results match|MISMATCH|skipped|FAILED|error|exit' "$o/05-host-autotune.log"
    [ -f "$o/06-fused-attention.log" ] && cat "$o/06-fused-attention.log"
    [ -f "$o/12-llama-block.log" ] && cat "$o/12-llama-block.log"
    [ -f "$o/13-conv2d-bias-relu.log" ] && cat "$o/13-conv2d-bias-relu.log"
    ;;
  python)
    [ $gpu = 1 ] || { skip "python (launch bench, first call, GPU pytest)"; return; }
    echo "== python: launch bench, first call, GPU pytest (acceptance included)"
    PYTHONPATH="$x/py" python3 -u bench/python_launch_bench.py --out-dir "$o" --commit "$commit" \
      --repeats 3 --rounds 5 --launch-bench "$x/py/launch_bench" 2>&1 | tail -n 60
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  bench)
    [ $gpu = 1 ] || { skip "bench (softmax / LayerNorm, compile_bench --load, launch_bench)"; return; }
    echo "== bench: softmax / LayerNorm against Triton and torch, C++ compile and launch"
    python3 -u bench/gpu_bench.py --ptx-dir "$x/ptx" --out-dir "$o" --commit "$commit" \
      --compile-bench "$x/drv/compile_bench" --launch-bench "$x/drv/launch_bench" 2>&1 | tail -n 40
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  smoke)
    [ $gpu = 1 ] || { skip "smoke"; return; }
    echo "== smoke: the tutorials' PTX through CuPy"
    python3 -u bench/gpu_smoke.py --ptx-dir "$x/ptx" --out "$o/gpu-smoke.json" --commit "$commit" \
      2>&1 | tail -n 12
    ;;
  novel)
    [ $gpu = 1 ] || { skip "novel"; return; }
    echo "== novel: kernels outside the repository, tk vs Triton vs torch"
    PYTHONPATH="$x/py" python3 -u bench/novel_bench.py --out-dir "$o" --commit "$commit" 2>&1 | tail -n 14
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    PYTHONPATH="$x/py" python3 -u bench/novel_matmul_bench.py --out-dir "$o" --commit "$commit" \
      2>&1 | tail -n 10
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  attention)
    [ $gpu = 1 ] || { skip "attention"; return; }
    echo "== attention: the plain attention forward, tk vs Triton vs torch SDPA"
    PYTHONPATH="$x/py" python3 -u bench/attention_bench.py --out-dir "$o" --commit "$commit" \
      2>&1 | tail -n 30
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  models)
    [ $gpu = 1 ] || { skip "models"; return; }
    echo "== models: conv vs cuDNN and Triton, the llama block vs torch, the wgmma ring A/B"
    PYTHONPATH="$x/py" timeout 200 python3 -u bench/conv_bench.py --rep 30 --out-dir "$o" \
      --commit "$commit" 2>&1 | tail -n 34
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    note "$o/llama" "python3 -u bench/llama_block_bench.py --json llama-block.json --compile-cap 60"
    PYTHONPATH="$x/py" timeout 200 python3 -u bench/llama_block_bench.py --json "$o/llama-block.json" \
      --compile-cap 60 2>&1 | tail -n 30
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    PYTHONPATH="$x/py" timeout 150 python3 -u bench/wgmma_ring_bench.py --out "$o/wgmma-ring.json" \
      2>&1 | tail -n 24
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  membound)
    [ $gpu = 1 ] || { skip "membound"; return; }
    echo "== membound: memory-bound kernels from one plain source, tk vs Triton vs copy vs torch"
    PYTHONPATH="$x/py" python3 -u bench/membound_bench.py --out-dir "$o" --commit "$commit" \
      --budget-s "${MEMBOUND_BUDGET_S:-280}" 2>&1 | tail -n 100
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  matmul)
    [ $gpu = 1 ] || { skip "matmul"; return; }
    echo "== matmul: dot checks, then tk against Triton and cuBLAS"
    python3 -u bench/matmul_bench.py --ptx-dir "$x/dot" --out-dir "$o" --commit "$commit" \
      ${MATMUL_BENCH_ARGS:-} 2>&1 | tail -n 40
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  compile)
    echo "== compile: compile_bench's stages (no GPU needed)"
    (cd "$x/compile" && note "$o/stages.json" "compile_bench --repeat 20 --json F" &&
      timeout 120 ./compile_bench --repeat 20 --json "$o/stages.json") || status=1
    [ $gpu = 1 ] || { skip "compile: --jit-files and --load"; return; }
    echo "== compile: the driver's JIT alone on jit-files/ ($(date -u +%H:%M:%S))"
    (cd "$x/compile" && note "$o/jit-files.json" "CUDA_CACHE_DISABLE=1 compile_bench --jit-files jit-files --json F" &&
      timeout 60 ./compile_bench --jit-files jit-files --json "$o/jit-files.json") || status=1
    local run opt
    for run in ${COMPILE_RUNS:-default O3 default2}; do
      opt=${run%2}
      [ "$opt" = default ] && opt=
      echo "== compile: compile_bench --load, TK_LLVM_OPT=${opt:-(default)} ($(date -u +%H:%M:%S))"
      (cd "$x/compile" && note "$o/load-$run.json" "CUDA_CACHE_DISABLE=1 ${opt:+TK_LLVM_OPT=$opt }compile_bench --load --repeat 9 --json F" &&
        TK_LLVM_OPT=$opt timeout 90 ./compile_bench --load --repeat 9 --json "$o/load-$run.json") || status=1
    done
    ;;
  autotune)
    [ $gpu = 1 ] || { skip "autotune"; return; }
    echo "== autotune: tutorial 05 tuning 4096^3 against Triton, second process, AOT"
    local A="$x/autotune"
    {
      echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version --format=csv
      echo "== $(nproc) CPU cores; bundle $commit"
      # Each tk run in a fresh process, with an empty cache directory unless the
      # run says otherwise.
      tune() { # cache-dir label [env...]
        local dir=$tmp/cache-$1 s
        shift
        echo "== $1"
        shift
        s=$(date +%s%N)
        env TK_CACHE_DIR="$dir" TK_PRINT_AUTOTUNING=1 "$@" "$A/05-host-autotune" --tutorials "$A" \
          --tune-matmul 4096 2>&1
        echo "exit $?; whole process $((($(date +%s%N) - s) / 1000000)) ms"
      }
      tune mm "tk, 8 matmul configs at 4096^3, fresh process, empty cache (parallel compiles)"
      tune mm "tk, the same again: a second process (choice and cubins from the disk cache)"
      echo "== Triton 3.6 tuning the same 8 matmul configs at 4096^3 (bench/autotune_triton.py)"
      python3 "$A/autotune_triton.py" --size 4096 2>&1 | tail -5
      tune mm-serial "tk, fresh process, empty cache, TK_COMPILE_THREADS=1 (serial compiles)" \
        TK_COMPILE_THREADS=1
      tune mm-4 "tk, fresh process, empty cache, TK_COMPILE_THREADS=4" TK_COMPILE_THREADS=4
      # The driver's JIT may serialise concurrent PTX compiles inside libcuda;
      # ptxas (Triton's copy) runs as separate processes.
      local ptxas
      ptxas=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas"))' 2>/dev/null)
      if [ -x "$ptxas" ]; then
        tune mm-ptxas "tk, fresh process, empty cache, PTX -> cubin by ptxas ($ptxas)" \
          TK_PTX_COMPILER=ptxas TK_PTXAS_PATH="$ptxas"
      fi
      export TK_CACHE_DIR=$tmp/cache
      mkdir -p "$TK_CACHE_DIR"
      local run i s e
      for run in 1 2; do
        echo "== run $run (1: tunes every key, disk cache empty; 2: a second process, from the cache)"
        s=$(date +%s%N)
        TK_PRINT_AUTOTUNING=1 "$A/05-host-autotune" --tutorials "$A" 2>&1
        echo "exit $?; wall $((($(date +%s%N) - s) / 1000000)) ms"
      done
      for i in 1 2 3; do
        echo "== second-process first launch ($i): process start to the first softmax launch done"
        s=$(date +%s%N)
        TK_PRINT_AUTOTUNING=1 "$A/05-host-autotune" --tutorials "$A" --first-launch 2>&1
        e=$(date +%s%N)
        echo "whole process: $(((e - s) / 1000000)) ms"
      done
      echo "== aot_softmax_test"
      "$A/aot_softmax_test" 2>&1
      echo "== autotuner_tests"
      "$A/autotuner_tests" --gtest_brief=1 2>&1 | tail -3
      echo "== cache files"
      ls -la "$TK_CACHE_DIR"/autotune | head -20
      unset TK_CACHE_DIR
    } >"$o/autotune-gpu.txt" 2>&1
    note "$o/autotune-gpu.txt" "bash gpu-bundle/run.sh autotune"
    tail -c 6000 "$o/autotune-gpu.txt"
    ;;
  ln-sweep)
    [ $gpu = 1 ] || { skip "ln-sweep"; return; }
    echo "== ln-sweep: LayerNorm variants against Triton in alternating rounds"
    python3 -u bench/exp_ln_sweep.py --ptx-dir "$x/ln-sweep" --out "$o/sweep.json" \
      --rounds "${SWEEP_ROUNDS:-8}" --top "${SWEEP_TOP:-5}" 2>&1 | tail -n 40
    ;;
  interp)
    echo "== interp: interp_bench (CPU)"
    note "$o/interp.json" "interp_bench --repeat 5 --json F"
    timeout 300 "$x/interp/interp_bench" --repeat 5 --json "$o/interp.json" || status=1
    ;;
  esac
}

{
  echo "== bundle: $(head -2 "$here/COMMIT" | tr '\n' ' '); $(nproc) CPU cores; $(head -1 "$res/device.txt")"
  for p in $want; do run_part "$p"; done
  echo $status >"$tmp/status"
} 2>&1 | tee "$res/run.log"
status=$(cat "$tmp/status" 2>/dev/null || echo 1)
name="results-${want// /-}"
tar -czf "$OUT/$name.tgz" -C "$tmp" results
cp "$res/run.log" "$OUT/run.log"
rm -rf "$tmp"
echo "== $OUT/$name.tgz ($(du -h "$OUT/$name.tgz" | cut -f1)); exit $status"
exit $status
RUN
chmod +x "$out/run.sh"
echo "gpu_bundle.sh: $(du -sh "$out/bundle.tar.xz" | cut -f1) archive of ${parts[*]} in $out"
echo "on the GPU machine, from the repository root: bash $(realpath --relative-to="$root" "$out")/run.sh [PARTS]"
