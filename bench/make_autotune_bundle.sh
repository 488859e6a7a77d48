#!/bin/bash
# Issue 7's GPU run (autotuning from host C++, AOT, second-process start):
# copies a Release build's libtk.so, tutorial 05, aot_softmax_test and
# autotuner_tests (stripped) with the .tk files they read and
# bench/autotune_triton.py into gpu-bundle-autotune/ (git-ignored), plus the
# run.sh that runs them on the GPU machine and writes $OUT/autotune-gpu.txt.
#
#   bash bench/make_autotune_bundle.sh [BUILD_DIR]      # default build
#   run(command="bash gpu-bundle-autotune/run.sh", carry=["gpu-bundle-autotune"])
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=gpu-bundle-autotune
rm -rf "$B"
mkdir -p "$B"
for f in libtk.so tutorials/05-host-autotune tests/aot/aot_softmax_test \
         tests/unit/driver/autotuner_tests; do
  cp "$BUILD/$f" "$B/"
  strip --strip-unneeded "$B/$(basename "$f")"
done
cp tutorials/02-fused-softmax.tk tutorials/04-matmul.tk bench/autotune_triton.py "$B/"
git rev-parse --short HEAD > "$B/COMMIT"
cat > "$B/run.sh" <<'RUN'
#!/bin/bash
# The autotune helper's GPU run: tutorial 05 twice (tuning, then from the disk
# cache), the second-process time to first launch, the AOT test.
# Run from the repository root on the GPU machine; results go to $OUT.
set -u
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
export TK_CACHE_DIR=$OUT/cache
mkdir -p "$TK_CACHE_DIR"
{
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version --format=csv
  for run in 1 2; do
    echo "== run $run (1: tunes every key, disk cache empty; 2: a second process, from the cache)"
    s=$(date +%s%N)
    TK_PRINT_AUTOTUNING=1 "$B/05-host-autotune" --tutorials "$B" 2>&1
    echo "exit $?; wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
  for i in 1 2 3; do
    echo "== second-process first launch ($i): process start to the first softmax launch done"
    s=$(date +%s%N)
    TK_PRINT_AUTOTUNING=1 "$B/05-host-autotune" --tutorials "$B" --first-launch 2>&1
    e=$(date +%s%N)
    echo "whole process: $(( (e - s) / 1000000 )) ms"
  done
  echo "== Triton 3.6 tuning the same 8 matmul configs at 4096^3 (bench/autotune_triton.py)"
  python3 "$B/autotune_triton.py" --size 4096 2>&1 | tail -5
  echo "== aot_softmax_test"
  "$B/aot_softmax_test" 2>&1
  echo "== autotuner_tests"
  "$B/autotuner_tests" --gtest_brief=1 2>&1 | tail -3
  echo "== cache files"; ls -la "$TK_CACHE_DIR"/autotune | head -20
} > "$OUT/autotune-gpu.txt" 2>&1
cp -r "$TK_CACHE_DIR/autotune" "$OUT/autotune-entries" 2>/dev/null
tail -c 11000 "$OUT/autotune-gpu.txt"
RUN
chmod +x "$B/run.sh"
du -sh "$B"
