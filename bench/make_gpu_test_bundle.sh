#!/usr/bin/env bash
# Gathers tk's GPU tests into one git-ignored folder for the GPU machine
# (gpu-bundle*/ is in .gitignore; the device tool carries it): libtk.so,
# gpu_tests (tutorials, hand-written kernels, the public C++ API's scalar
# kinds and launch-time specialisation), gpu_difftest (the randomized
# GPU-vs-interpreter test of every op and dtype), autotuner_tests and tutorial
# 05 (autotuning and launching from host C++), stripped, plus run.sh, which
# runs them there and leaves gtest JSON and logs in one folder, and COMMIT
# (the commit and whether the tree had local changes).
#
#   ninja -C build libtk.so gpu_tests gpu_difftest autotuner_tests 05-host-autotune  # Release, here
#   bash bench/make_gpu_test_bundle.sh [build-dir [out-dir]]   # defaults: build gpu-bundle-tests
#   # on the GPU machine, from the repository root:
#   bash gpu-bundle-tests/run.sh "$OUT"
#   # back here:
#   python3 bench/summarize.py <fetched OUT>    # bench/results/gpu-tests.json + a history row
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
bundle="${2:-gpu-bundle-tests}"
mkdir -p "$bundle"
for f in libtk.so tests/gpu/gpu_tests tests/gpu/gpu_difftest tests/unit/driver/autotuner_tests \
         tutorials/05-host-autotune; do
  if [ ! -f "$build/$f" ]; then
    echo "missing $build/$f: build it first (ninja -C $build libtk.so gpu_tests gpu_difftest" \
      "autotuner_tests 05-host-autotune)" >&2
    exit 1
  fi
  cp "$build/$f" "$bundle/"
  strip "$bundle/$(basename "$f")"
done
{
  echo "commit $(git rev-parse HEAD)"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "tree: local changes to tracked files (the binaries may differ from the commit)"
  else
    echo "tree: clean"
  fi
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $build"
} >"$bundle/COMMIT"
cat >"$bundle/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs tk's GPU tests on the GPU machine; results (gtest JSON, logs, the
# device, the commit) go to the folder given (default $OUT). Run from the
# repository root, whose tutorials/ gpu_tests reads.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-${OUT:?give an output folder}}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cp "$here/COMMIT" "$out/COMMIT"
nvidia-smi -L >"$out/device.txt" 2>&1 || echo "nvidia-smi failed" >>"$out/device.txt"
status=0
"$here/gpu_tests" --tutorials "$here/../tutorials" --gtest_output="json:$out/gpu_tests.json" \
  >"$out/gpu_tests.log" 2>&1 || status=1
# The differential cases in 16 processes (gtest shards), 4 at a time: a
# kernel that faults poisons its process's CUDA context, so it costs one
# shard (whose later cases skip naming it), not the whole run.
shard() {
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX="$1" timeout 300 "$here/gpu_difftest" --gtest_filter='Gpu/*' \
    --gtest_output="json:$out/gpu_difftest-$1.json" >"$out/gpu_difftest-shard$1.log" 2>&1
}
export -f shard
export here out
seq 0 15 | xargs -P 4 -I{} bash -c 'shard {}' || status=1
for i in $(seq 0 15); do
  cat "$out/gpu_difftest-shard$i.log" 2>/dev/null
done >"$out/gpu_difftest.log"
# The public C++ API: the autotuner's tests, then tutorial 05 twice on one
# fresh cache (1: tunes every key; 2: a second process, from the disk cache).
# The cache lives outside $out (only a few files come back).
"$here/autotuner_tests" >"$out/autotuner_tests.log" 2>&1 || status=1
cache=$(mktemp -d)
for run in 1 2; do
  echo "== tutorial 05, run $run"
  TK_CACHE_DIR="$cache" TK_PRINT_AUTOTUNING=1 timeout 300 "$here/05-host-autotune" \
    --tutorials "$here/../tutorials" 2>&1 || { echo "exit $?"; status=1; }
done >"$out/05-host-autotune.log"
rm -rf "$cache"
tail -n 3 "$out/gpu_tests.log"
grep -E '^\[  FAILED  \] [A-Za-z]' "$out/gpu_tests.log" | sort -u
grep -h -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$out"/gpu_difftest-shard*.log | sort | uniq -c
echo "autotuner_tests: $(grep -E '^\[  (PASSED|FAILED) +\] [0-9]+ test' "$out/autotuner_tests.log" | tr '\n' ' ')"
grep -E '^== |^matmul|^softmax|launch overhead|all results match|MISMATCH|skipped|FAILED|error|exit' "$out/05-host-autotune.log"
exit $status
EOF
chmod +x "$bundle/run.sh"
du -sh "$bundle"
ls -l "$bundle"
