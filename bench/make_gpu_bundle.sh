#!/usr/bin/env bash
# Writes the PTX that bench/gpu_smoke.py and bench/gpu_bench.py launch into
# gpu-bundle/ptx (git-ignored; carried to the GPU machine by the device tool).
# Run after a build.
#
#   bash bench/make_gpu_bundle.sh [build-dir]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tkc="${1:-build}/bin/tkc"
out=gpu-bundle/ptx
mkdir -p "$out"
"$tkc" tutorials/01-vector-add.tk --emit=ptx --num-warps=4 \
  --signature "*fp32:16, *fp32:16, *fp32:16, i32:16" -D BLOCK_SIZE=1024 -o "$out/add_1024.ptx"
for cfg in "1024 4" "4096 8" "8192 16" "16384 16"; do
  set -- $cfg
  "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$2" \
    --signature "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16" -D BLOCK_SIZE="$1" \
    -o "$out/softmax_$1.ptx"
done
# gpu_bench.py: every softmax size at 4, 8 and 16 warps (it reports the best).
for n in 1024 4096 8192 16384; do
  for w in 4 8 16; do
    "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$w" \
      --signature "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16" -D BLOCK_SIZE="$n" \
      -o "$out/softmax_${n}_w$w.ptx"
  done
done
# LayerNorm forward (X, Y, W, B fp16; Mean, Rstd fp32; stride, N, eps): a
# block as wide as the row (each loop runs once) and, for wide rows, a
# 4096-wide block that walks the row; 4, 8 and 16 warps each.
for b in 1024 4096 8192 16384; do
  for w in 4 8 16; do
    "$tkc" tutorials/03-layer-norm.tk --emit=ptx --num-warps="$w" \
      --signature "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32" \
      -D BLOCK_SIZE="$b" -o "$out/layernorm_${b}_w$w.ptx"
  done
done
ls -l "$out"
