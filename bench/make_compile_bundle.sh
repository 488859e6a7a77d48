#!/bin/bash
# Compile time on the GPU machine (issue 5: softmax source -> loaded module
# <= 50 ms; issue 8: one matmul config <= 100 ms): copies a Release build's
# compile_bench and libtk.so (stripped) with the tutorials it reads into
# gpu-bundle-compiletime/ (git-ignored), writes the PTX the driver's JIT is
# timed on into gpu-bundle-compiletime/jit-files/ (an empty kernel for the
# JIT's fixed cost, the vector add, softmax at 1024/4096/16384, the
# 128x128x32 and 128x128x64 matmuls, and bench/jit_variants.py's hand-edited
# variants of softmax-16384 and the 128x128x32 matmul), plus the run.sh that
# runs them there:
#
#   1. compile_bench --jit-files: the JIT alone on each PTX of jit-files/,
#   2. compile_bench --load with tk's lean LLVM pipeline (the default),
#   3. the same with TK_LLVM_OPT=O3 (LLVM's own O3, as before the lean one),
#   4. the lean run again (the host's speed drifts between minutes),
#
# writing $OUT/compile-load-{lean,O3,lean2}.json and $OUT/jit-files.json;
# about 120 s on the H200 (bench/results/notes/compile-time.md, "2026-11-30 05:04").
#
#   ninja -C build-drv compile_bench tkc && bash bench/make_compile_bundle.sh build-drv
#   run(command="bash gpu-bundle-compiletime/run.sh", carry=["gpu-bundle-compiletime"],
#       timeout_s=240)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=gpu-bundle-compiletime
rm -rf "$B/jit-files"
mkdir -p "$B/tutorials" "$B/jit-files"
for f in bin/compile_bench libtk.so; do
  cp "$BUILD/$f" "$B/"
  strip --strip-unneeded "$B/$(basename "$f")"
done
cp tutorials/*.tk "$B/tutorials/"
git rev-parse --short HEAD > "$B/COMMIT"

# The JIT's inputs: tk's PTX of the bench's kernels, and an empty kernel.
J=$B/jit-files
tkc="$BUILD/bin/tkc"
printf '.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry empty()\n{\n\tret;\n}\n' \
  > "$J/00-empty.ptx"
"$tkc" tutorials/01-vector-add.tk --emit=ptx --num-warps=4 \
  --signature "*fp32:16, *fp32:16, *fp32:16, i32:16" -D BLOCK_SIZE=1024 -o "$J/01-vector-add.ptx"
softmax_sig="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16"
for cfg in "1024 4" "4096 8" "16384 16"; do
  set -- $cfg
  "$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps="$2" --signature "$softmax_sig" \
    -D BLOCK_SIZE="$1" -o "$J/10-softmax-$1.ptx"
done
# Tutorial 2's pick at 16384 since session 4 (10-softmax-16384.ptx above is
# the 16-warp one, which bench/jit_variants.py edits).
"$tkc" tutorials/02-fused-softmax.tk --emit=ptx --num-warps=32 --signature "$softmax_sig" \
  -D BLOCK_SIZE=16384 -o "$J/10-softmax-16384-w32.ptx"
matmul_sig="*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, \
i32:16, i32:1"
for cfg in "32 4 4" "64 4 3"; do
  set -- $cfg
  "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --emit=ptx --num-warps="$2" \
    --num-stages="$3" --signature "$matmul_sig" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 \
    -D BLOCK_SIZE_K="$1" -D GROUP_SIZE_M=8 -D ACTIVATION=plain \
    -o "$J/20-matmul-128x128x$1-w$2-s$3.ptx"
done
# The same tutorial on sm_90a: the dot on wgmma (compile_bench's
# matmul-*-wgmma cases).
for cfg in "128 64 4 4" "256 64 8 4"; do
  set -- $cfg
  "$tkc" tutorials/04-matmul.tk --kernel matmul_kernel --emit=ptx --num-warps="$3" --arch=sm_90a \
    --num-stages="$4" --signature "$matmul_sig" -D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N="$1" \
    -D BLOCK_SIZE_K="$2" -D GROUP_SIZE_M=8 -D ACTIVATION=plain \
    -o "$J/21-matmul-128x$1x$2-w$3-s$4-sm90a.ptx"
done
python3 bench/jit_variants.py "$J"

cat > "$B/run.sh" <<'RUN'
#!/bin/bash
# The compiletime GPU run, from the repository root: compile_bench --load
# (softmax at BLOCK 1024/4096/16384, 16384 on 32 and 16 warps, and the 128x128x32 matmul: cold source
# -> loaded module, every stage, the kernel's time and error) with the lean
# LLVM pipeline, with LLVM's O3, with the lean one again, after the JIT alone
# on jit-files/*.ptx. Results in $OUT, summaries on stdout. Arguments name
# other runs: "O3 lean" (lean, lean2 or a TK_LLVM_OPT level).
set -u
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp}
echo "== $(nproc) CPU cores; bundle $(cat "$B/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
cd "$B"
echo "== compile_bench --jit-files ($(date -u +%H:%M:%S))"
timeout 40 ./compile_bench --jit-files jit-files --json "$OUT/jit-files.json"
for run in ${@:-lean O3 lean2}; do
  echo "== compile_bench --load, pipeline $run ($(date -u +%H:%M:%S))"
  opt=${run%2}
  [ "$opt" = lean ] && opt=
  TK_LLVM_OPT=$opt timeout 60 ./compile_bench --load --repeat 9 --json "$OUT/compile-load-$run.json"
done
RUN
chmod +x "$B/run.sh"
ls -la "$B" "$J"
