#!/usr/bin/env bash
# Gathers what bench/gpu_smoke.py and bench/gpu_bench.py need on the GPU
# machine into one git-ignored folder of the checkout (gpu-bundle*/ is in
# .gitignore; the device tool carries it): the tutorials' PTX in ptx/, each
# file's registers per thread by `ptxas -v` in ptx/ptxas-registers.json (when
# ptxas is here), and, when built, the stripped C++ benches and libtk.so in
# drv/. Run after a Release build.
#
#   bash bench/make_gpu_bundle.sh [build-dir [out-dir]]     # defaults: build gpu-bundle
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
bundle="${2:-gpu-bundle}"
tkc="$build/bin/tkc"
out="$bundle/ptx"
mkdir -p "$out"
softmax_sig="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16"
ln_sig="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32"
"$tkc" tutorials/01-vector-add.tk --emit=ptx --num-warps=4 \
  --signature "*fp32:16, *fp32:16, *fp32:16, i32:16" -D BLOCK_SIZE=1024 -o "$out/add_1024.ptx"
# gpu_smoke.py's softmax files.
for cfg in "1024 4" "4096 8" "8192 16" "16384 16"; do
  set -- $cfg
  "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$2" --signature "$softmax_sig" \
    -D BLOCK_SIZE="$1" -o "$out/softmax_$1.ptx"
done
# gpu_bench.py tries 2, 4, 8, 16 and 32 warps, at most 128 elements per thread
# and 32 warps only from 8192 columns (its warps_for), and reports the fastest.
warps_for() {
  for w in 2 4 8 16 32; do
    (($1 <= 128 * 32 * w && (w < 32 || $1 >= 8192))) && echo "$w"
  done
  return 0
}
for n in 1024 4096 8192 16384; do
  for w in $(warps_for "$n"); do
    "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$w" --signature "$softmax_sig" \
      -D BLOCK_SIZE="$n" -o "$out/softmax_${n}_w$w.ptx"
    # LayerNorm forward (X, Y, W, B fp16; Mean, Rstd fp32; stride, N, eps):
    # the fused kernel with the whole row in one block ...
    "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_fused --emit=ptx --num-warps="$w" \
      --signature "$ln_sig" -D BLOCK_SIZE="$n" -o "$out/layernorm_fused_${n}_w$w.ptx"
    # ... the same with both statistics from one walk of the row (ONE_PASS) ...
    "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_fused --emit=ptx --num-warps="$w" \
      --signature "$ln_sig" -D BLOCK_SIZE="$n" -D ONE_PASS=True \
      -o "$out/layernorm_fused1p_${n}_w$w.ptx"
    # ... and the persistent kernel (a few programs per SM striding over the
    # rows, the next row loaded before this one is reduced), both statistics
    # forms; its parameters end with M.
    for form in persist persist1p; do
      onepass=False
      [ "$form" = persist1p ] && onepass=True
      "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd_persistent --emit=ptx \
        --num-warps="$w" --signature "$ln_sig, i32" -D BLOCK_SIZE="$n" -D ONE_PASS=$onepass \
        -o "$out/layernorm_${form}_${n}_w$w.ptx"
    done
  done
done
# ... and the chunked kernel walking wider rows with 1024- and 4096-wide blocks.
for b in 1024 4096; do
  for w in 2 4 8 16; do
    "$tkc" tutorials/03-layer-norm.tk --kernel layer_norm_fwd --emit=ptx --num-warps="$w" \
      --signature "$ln_sig" -D BLOCK_SIZE="$b" -o "$out/layernorm_${b}_w$w.ptx"
  done
done
# Hand-edited experiments (*.exp-NAME.ptx, timed apart by gpu_bench.py) are
# copied into $out by hand before this point; bench/exp_shfl_reduce.py made
# the 2026-11-30 ones from PTX before commit 33efeb6, which does the same in
# the compiler.
# Registers per thread (and spill bytes) of every file, as ptxas sees them.
bash bench/ptxas_registers.sh "$out"
# The C++ benches and the library they load, stripped (gpu_bench.py's
# --compile-bench and --launch-bench put their folder on LD_LIBRARY_PATH).
mkdir -p "$bundle/drv"
for f in bin/compile_bench bin/launch_bench libtk.so; do
  if [ -f "$build/$f" ]; then
    cp "$build/$f" "$bundle/drv/"
    strip "$bundle/drv/$(basename "$f")" 2>/dev/null || true
  fi
done
ls -l "$out" "$bundle/drv"
