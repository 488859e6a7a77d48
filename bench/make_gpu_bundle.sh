#!/usr/bin/env bash
# Writes the PTX that bench/gpu_smoke.py launches into gpu-bundle/ptx (git-
# ignored; carried to the GPU machine by the device tool). Run after a build.
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
ls -l "$out"
