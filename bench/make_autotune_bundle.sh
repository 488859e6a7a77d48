#!/bin/bash
# Issue 7's GPU run (autotuning from host C++, AOT, second-process start,
# tuning time against Triton's): copies a Release build's tutorial 05,
# aot_softmax_test and autotuner_tests (stripped) with the .tk files they read
# and bench/autotune_triton.py into gpu-bundle-autotune/ (git-ignored), plus
# the run.sh that runs them on the GPU machine and writes
# $OUT/autotune-gpu.txt. libtk.so is not copied (the bundle stays small): it
# comes from gpu-bundle-tests/ (bench/make_gpu_bundle.sh), which must be built
# from the same commit or later.
#
#   bash bench/make_autotune_bundle.sh [BUILD_DIR]      # default build
#   run(command="LD_LIBRARY_PATH=$PWD/gpu-bundle-tests bash gpu-bundle-autotune/run.sh",
#       carry=["gpu-bundle-autotune", "gpu-bundle-tests"])
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=gpu-bundle-autotune
rm -rf "$B"
mkdir -p "$B"
for f in tutorials/05-host-autotune tests/aot/aot_softmax_test \
         tests/unit/driver/autotuner_tests; do
  cp "$BUILD/$f" "$B/"
  strip --strip-unneeded "$B/$(basename "$f")"
done
cp tutorials/02-fused-softmax.tk tutorials/04-matmul.tk bench/autotune_triton.py "$B/"
git rev-parse --short HEAD > "$B/COMMIT"
cat > "$B/run.sh" <<'RUN'
#!/bin/bash
# The autotune helper's GPU run: issue 7's tuning-time figure beside Triton's
# (8 matmul configs at 4096^3, a fresh process with an empty cache, compile
# included; then a second process), tutorial 05 twice (tuning, then from the
# disk cache), the second-process time to first launch, the AOT test.
# Run from the repository root on the GPU machine; results go to $OUT.
# libtk.so: $LD_LIBRARY_PATH, else ../gpu-bundle-tests.
set -u
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:$B/../gpu-bundle-tests
{
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "== $(nproc) CPU cores; bundle $(cat "$B/COMMIT"); libtk: $(ldd "$B/05-host-autotune" |
    grep libtk)"
  grep -q TK_COMPILE_THREADS "$(ldd "$B/05-host-autotune" | awk '/libtk/ {print $3}')" ||
    echo "WARNING: this libtk.so predates parallel config compilation (e4692e5)"
  # Issue 7: each tk run in a fresh process; an empty cache directory unless
  # the run says otherwise.
  tune() { # cache-dir label [env...]
    local dir=$OUT/$1; shift
    echo "== $1"; shift
    s=$(date +%s%N)
    env TK_CACHE_DIR="$dir" TK_PRINT_AUTOTUNING=1 "$@" "$B/05-host-autotune" --tutorials "$B" \
      --tune-matmul 4096 2>&1
    echo "exit $?; whole process $(( ($(date +%s%N) - s) / 1000000 )) ms"
  }
  tune cache-mm "tk, 8 matmul configs at 4096^3, fresh process, empty cache (parallel compiles)"
  tune cache-mm "tk, the same again: a second process (choice and cubins from the disk cache)"
  echo "== Triton 3.6 tuning the same 8 matmul configs at 4096^3 (bench/autotune_triton.py)"
  python3 "$B/autotune_triton.py" --size 4096 2>&1 | tail -5
  tune cache-mm-serial "tk, fresh process, empty cache, TK_COMPILE_THREADS=1 (serial compiles)" \
    TK_COMPILE_THREADS=1
  tune cache-mm-4 "tk, fresh process, empty cache, TK_COMPILE_THREADS=4" TK_COMPILE_THREADS=4
  # The driver's JIT may serialise concurrent PTX compiles inside libcuda;
  # ptxas (Triton's copy) runs as separate processes.
  ptxas=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__),
          "backends/nvidia/bin/ptxas"))' 2>/dev/null)
  if [ -x "$ptxas" ]; then
    tune cache-mm-ptxas "tk, fresh process, empty cache, PTX -> cubin by ptxas ($ptxas)" \
      TK_PTX_COMPILER=ptxas TK_PTXAS_PATH="$ptxas"
  fi
  export TK_CACHE_DIR=$OUT/cache
  mkdir -p "$TK_CACHE_DIR"
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
