#!/usr/bin/env bash
# Gathers what a run of tk's Python package on the GPU machine needs into
# gpu-bundle-py/ (git-ignored; carried there by the device tool): the package
# sources, libtk.so from a Release build here (stripped), and the extension
# tk._C compiled here for CPython 3.12 (the GPU machine's Python) against the
# headers in /work/shared/device/py312-include.tar.xz. Nothing is built there.
#
#   ninja -C build-py tk_python launch_bench
#   bash python/make_gpu_bundle.sh [build-dir]      # default build-py
#   # on the GPU machine: PYTHONPATH=gpu-bundle-py python3 -c "import tk"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build-py}"
out=gpu-bundle-py
inc="$(mktemp -d)"
trap 'rm -rf "$inc"' EXIT
tar xJf /work/shared/device/py312-include.tar.xz -C "$inc"
pybind="$(python3 -c 'import pybind11; print(pybind11.get_include())')"
rm -rf "$out/tk"
mkdir -p "$out/tk"
cp python/tk/*.py "$out/tk/"
strip -o "$out/tk/libtk.so" "$build/libtk.so"
# The extension: the same sources and flags as python/CMakeLists.txt's
# tk_python, for cp312. libtk.so sits beside it ($ORIGIN).
g++ -std=c++20 -O2 -DNDEBUG -DFMT_HEADER_ONLY=1 -fPIC -fvisibility=hidden -shared \
  -Ipython/src -I. -Iinclude -I"$build" -isystem "$inc/python3.12" -isystem "$inc" -isystem "$pybind" \
  python/src/*.cpp \
  -o "$out/tk/_C.cpython-312-x86_64-linux-gnu.so" -L"$out/tk" -ltk -Wl,-rpath,'$ORIGIN' -s
# bench/launch_bench.cpp's binary when built (python_launch_bench.py
# --launch-bench gpu-bundle-py/launch_bench runs it between its rounds; it
# finds libtk.so in tk/ through LD_LIBRARY_PATH, which the bench sets).
rm -f "$out/launch_bench"
if [ -x "$build/bin/launch_bench" ]; then
  strip -o "$out/launch_bench" "$build/bin/launch_bench"
fi
du -sh "$out"
