#!/bin/bash
# Compile time on the GPU machine (issue 5: softmax source -> loaded module
# <= 50 ms; issue 8: one matmul config <= 100 ms): copies a Release build's
# compile_bench, gpu_tests and libtk.so (stripped) with the tutorials they
# read into gpu-bundle-compiletime/ (git-ignored), plus the run.sh that runs
# them there and writes $OUT/compile-load.json. PTX files in
# gpu-bundle-compiletime/ptx-before/ (softmax-<BLOCK>.ptx, made by an older
# tkc with bench/make_gpu_bundle.sh's flags) are kept and become
# compile_bench's --baseline-ptx: the driver's JIT time and the kernel of
# that PTX beside this build's, in the same run. run.sh also compares the
# JIT levels and PTX compilers (--compilers) and runs gpu_tests; about 70 s
# on the H200 (bench/results/compile-load-2026-11-30-3.md).
#
#   ninja -C build-drv compile_bench gpu_tests && bash bench/make_compile_bundle.sh build-drv
#   run(command="bash gpu-bundle-compiletime/run.sh", carry=["gpu-bundle-compiletime"],
#       timeout_s=200)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=gpu-bundle-compiletime
mkdir -p "$B/tutorials"
for f in bin/compile_bench tests/gpu/gpu_tests libtk.so; do
  cp "$BUILD/$f" "$B/"
  strip --strip-unneeded "$B/$(basename "$f")"
done
cp tutorials/*.tk "$B/tutorials/"
git rev-parse --short HEAD > "$B/COMMIT"
cat > "$B/run.sh" <<'RUN'
#!/bin/bash
# The compiletime GPU run, from the repository root (the bench reads
# tutorials/ from the working directory): compile_bench --load (softmax at
# BLOCK 1024/4096/16384 and the 128x128x32 matmul: cold source -> loaded
# module, every stage, the kernel's time and error, the baseline PTX when
# there is one), then gpu_tests (the uniform-divisor test and the tutorials
# against the interpreter). Results in $OUT.
set -u
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp}
echo "== $(nproc) CPU cores; bundle $(cat "$B/COMMIT"); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
cd "$B"
base=()
ls ptx-before/softmax-*.ptx >/dev/null 2>&1 && base=(--baseline-ptx ptx-before)
timeout 110 ./compile_bench --load --compilers --repeat 9 "${base[@]}" --json "$OUT/compile-load.json"
echo "== gpu_tests"
timeout 40 ./gpu_tests --tutorials tutorials 2>&1 | tail -25
RUN
chmod +x "$B/run.sh"
ls -la "$B"
