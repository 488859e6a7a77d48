#!/usr/bin/env bash
# One bundle for the whole GPU check of a commit: the GPU tests (gpu_tests,
# gpu_difftest, autotuner_tests, tutorial 05), the Python package with its GPU
# tests and launch bench, and the speed benches (softmax/LayerNorm with the C++
# compile_bench --load, which times the matmul's compile too, and
# launch_bench; bench/novel_bench.py's kernels outside the repository; matmul
# against Triton and cuBLAS). The device tool
# carries at most 64 MiB, so every bundle's libtk.so is one hard-linked file
# and the lot travels as one xz archive, gpu-bundle-final/bundle.tar.xz
# (git-ignored), with run.sh beside it.
#
#   ninja -C build libtk.so tkc gpu_tests gpu_difftest autotuner_tests \
#       05-host-autotune compile_bench launch_bench
#   bash bench/make_final_bundle.sh [build-dir]        # default: build
#   # on the GPU machine, from the repository root (two calls fit the
#   # 10-minute limit of one command):
#   bash gpu-bundle-final/run.sh tests      # -> $OUT/final-tests.tgz
#   bash gpu-bundle-final/run.sh bench      # -> $OUT/final-bench.tgz
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
bash bench/make_gpu_test_bundle.sh "$build" gpu-bundle-tests >/dev/null
bash python/make_gpu_bundle.sh "$build" >/dev/null
bash bench/make_gpu_bundle.sh "$build" gpu-bundle-perf >/dev/null
bash bench/make_matmul_bundle.sh "$build" >/dev/null
# One libtk.so for all (the same build).
lib=gpu-bundle-tests/libtk.so
for copy in gpu-bundle-py/tk/libtk.so gpu-bundle-perf/drv/libtk.so; do
  ln -f "$lib" "$copy"
done
mkdir -p gpu-bundle-final
git rev-parse HEAD >gpu-bundle-final/COMMIT
tar -cJf gpu-bundle-final/bundle.tar.xz gpu-bundle-tests gpu-bundle-py gpu-bundle-perf \
  gpu-bundle-dot
cat >gpu-bundle-final/run.sh <<'RUN'
#!/usr/bin/env bash
# The final GPU check; see bench/make_final_bundle.sh. Summaries go to
# stdout, every result file into one archive in $OUT.
set -u
cd "$(dirname "$0")/.."
commit=$(cat gpu-bundle-final/COMMIT)
[ -d gpu-bundle-tests ] || tar -xJf gpu-bundle-final/bundle.tar.xz
res=/tmp/final-$1
rm -rf "$res"
mkdir -p "$res"
export PYTHONUNBUFFERED=1 CUDA_CACHE_DISABLE=1
nvidia-smi -L
case "$1" in
tests)
  echo "== GPU tests"
  bash gpu-bundle-tests/run.sh "$res/tests"
  echo "== Python: launch bench, first call, GPU pytest (acceptance included)"
  PYTHONPATH=$PWD/gpu-bundle-py python3 -u bench/python_launch_bench.py --out-dir "$res" \
    --commit "$commit" --repeats 3 --rounds 5 --launch-bench gpu-bundle-py/launch_bench \
    2>&1 | tail -n 60
  ;;
bench)
  echo "== softmax / LayerNorm, C++ compile and launch"
  python3 -u bench/gpu_bench.py --ptx-dir gpu-bundle-perf/ptx --out-dir "$res" --commit "$commit" \
    --compile-bench gpu-bundle-perf/drv/compile_bench --launch-bench gpu-bundle-perf/drv/launch_bench \
    2>&1 | tail -n 40
  echo "== kernels outside the repository: tk vs Triton vs torch"
  PYTHONPATH=$PWD/gpu-bundle-py python3 -u bench/novel_bench.py --out-dir "$res" --commit "$commit" \
    --suffix=-final 2>&1 | tail -n 14
  PYTHONPATH=$PWD/gpu-bundle-py python3 -u bench/novel_matmul_bench.py --out-dir "$res" \
    --commit "$commit" --suffix=-final 2>&1 | tail -n 10
  echo "== matmul"
  python3 -u bench/matmul_bench.py --ptx-dir gpu-bundle-dot/ptx --out-dir "$res" --commit "$commit" \
    --suffix=-final 2>&1 | tail -n 40
  ;;
esac
tar -czf "$OUT/final-$1.tgz" -C /tmp "final-$1"
RUN
chmod +x gpu-bundle-final/run.sh
ls -l gpu-bundle-final
