# Shared set-up for run.sh and test.sh (sourced, not run): installs what is
# missing on a Debian 12 machine and builds a tree. Everything here is
# idempotent: a second run installs nothing and rebuilds only what changed.
#
#   source scripts/setup.sh
#   tk_install_deps                      # apt + pip, only what is missing
#   tk_build build Release               # configure (Ninja) and build build/
#   tk_build build-asan Debug -DTK_SANITIZE=ON ...
#
# Knobs: TK_JOBS (ninja -j, default: ninja's own choice), TK_SKIP_INSTALL=1
# (trust the machine, install nothing).

TK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TK_LLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm
TK_LLVM_BIN=/usr/lib/llvm-19/bin

# Debian packages: LLVM 19 (+ FileCheck, not, lit's Python sources), the
# libraries tk links, the build tools, clang + compiler-rt for the sanitizer
# tree and libFuzzer (clang-14 is Debian 12's default clang), and python3-venv
# for the wheel test's fresh environment (tests/wheel/pip-install.sh),
# lld-19, whose ld.lld links AMDGPU code objects (tkc --emit=hsaco), and
# rocm-device-libs, ROCm's ocml/ockl bitcode that amdgcn's fp64 math and
# libdevice functions link (lowering/codegen/ROCmDeviceLibs.h).
TK_APT_PACKAGES=(
  llvm-19-dev llvm-19-tools libfmt-dev libgtest-dev libzstd-dev zlib1g-dev
  cmake ninja-build g++ clang libclang-rt-14-dev clang-format git python3 python3-dev
  python3-venv lld-19 rocm-device-libs
)
# PyPI packages: the Python bindings (pybind11), the Python tests (pytest,
# numpy), the FileCheck test runner (lit) and what lit needs to enforce the
# hostile-input suite's time limit per test (psutil). python3-dev above gives
# pybind11 the headers of Debian's Python.
TK_PIP_PACKAGES=(pybind11 pytest numpy lit psutil)

tk_log() { echo "[tk] $*"; }

tk_as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "[tk] error: need root to run: $*" >&2
    return 1
  fi
}

tk_install_apt() {
  local missing=() pkg
  for pkg in "${TK_APT_PACKAGES[@]}"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" != installed ]; then
      missing+=("$pkg")
    fi
  done
  # pip may come from Debian or from another Python on PATH; only ask apt for
  # it when `python3 -m pip` does not work.
  if ! python3 -m pip --version >/dev/null 2>&1; then
    missing+=(python3-pip)
  fi
  if [ ${#missing[@]} -eq 0 ]; then
    tk_log "apt: nothing to install"
    return 0
  fi
  tk_log "apt: installing ${missing[*]}"
  tk_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    tk_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}"
}

tk_install_pip() {
  local missing=() pkg
  for pkg in "${TK_PIP_PACKAGES[@]}"; do
    python3 -m pip show -q "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    tk_log "pip: nothing to install"
    return 0
  fi
  tk_log "pip: installing ${missing[*]}"
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
  # Debian's own python3 refuses global installs (PEP 668); on this machine
  # that is what we want, so retry with the explicit override.
  python3 -m pip install -q "${missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${missing[@]}"
}

tk_install_deps() {
  if [ "${TK_SKIP_INSTALL:-0}" = 1 ]; then
    tk_log "TK_SKIP_INSTALL=1: installing nothing"
    return 0
  fi
  tk_install_apt && tk_install_pip && tk_setup_path
}

# Tools the tests look for: ptxas (later PTX tests) from the CUDA toolkit,
# and lit's scripts wherever pip put them.
tk_setup_path() {
  [ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
  [ -d "$HOME/.local/bin" ] && PATH="$PATH:$HOME/.local/bin"
  export PATH
}

# The lit runner: pip's `lit`, else the copy llvm-19-tools ships.
tk_lit() {
  if command -v lit >/dev/null 2>&1; then
    lit "$@"
  else
    python3 /usr/lib/llvm-19/build/utils/lit/lit.py "$@"
  fi
}

# tk_build DIR BUILD_TYPE [cmake args...]: configure DIR with Ninja (output
# kept in DIR/configure.log, shown on failure) and build everything in it.
tk_build() {
  local dir="$1" type="$2"
  shift 2
  mkdir -p "$TK_ROOT/$dir"
  tk_log "configuring $dir ($type)"
  # ccache, where installed, makes a second tree (a worktree, the sanitizer
  # tree's shared sources) cost a fraction of the first; nothing needs it.
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  if ! cmake -S "$TK_ROOT" -B "$TK_ROOT/$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" \
      -DLLVM_DIR="$TK_LLVM_DIR" "${launcher[@]}" "$@" >"$TK_ROOT/$dir/configure.log" 2>&1; then
    cat "$TK_ROOT/$dir/configure.log"
    echo "[tk] error: configuring $dir failed" >&2
    return 1
  fi
  tk_log "building $dir"
  local t0=$SECONDS
  # -k 0: on a failure, still build everything that does not depend on it, so
  # one broken test file does not hide the state of the rest.
  ninja -C "$TK_ROOT/$dir" -k 0 ${TK_JOBS:+-j"$TK_JOBS"} || return 1
  tk_log "built $dir in $((SECONDS - t0))s"
}

tk_setup_path
