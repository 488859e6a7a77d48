#!/usr/bin/env bash
# The README's third command as a user runs it: in a fresh virtual environment
# (python3 -m venv), `pip install .` from the repository root builds the wheel
# (scikit-build-core, pyproject.toml: the tk_python target in build-pip/) and
# installs it; then, from a folder outside the source tree and with no
# PYTHONPATH, `import tk` must come from that environment, and tutorials 01 and
# 02 (copied there) run on the CPU interpreter with their checks.
#
#   bash tests/wheel/pip-install.sh       # test.sh's `wheel` step (TK_SKIP_WHEEL=1 skips it)
#
# The network is needed only for what pip fetches: the build requirements
# (scikit-build-core, pybind11) and numpy. The environment is temporary;
# build-pip/ stays, as pyproject.toml asks, so a second run rebuilds only what
# changed. Exit status 0 when the wheel built, installed, imported and passed
# its checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "pip-install.sh: FAILED: $*"
  exit 1
}

python3 -m venv "$tmp/venv" || fail "python3 -m venv (Debian: apt-get install python3-venv)"
py="$tmp/venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
# The same compiler cache as tk_build (scripts/setup.sh), where installed;
# CMake reads these as the launchers' defaults.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
t0=$SECONDS
echo "== (cd $root && $py -m pip install .)"
(cd "$root" && "$py" -m pip install .) || fail "pip install . (output above)"
echo "== pip install . took $((SECONDS - t0))s"

# Outside the tree: nothing of the checkout on sys.path.
outside="$tmp/outside"
mkdir "$outside"
cp "$root/tutorials/01-vector-add.py" "$root/tutorials/02-fused-softmax.py" "$outside/"
cd "$outside"
run() { env -u PYTHONPATH TK_INTERPRET=1 TK_CACHE_DIR="$tmp/cache" "$py" "$@"; }
run - "$tmp/venv" <<'PY' || fail "import tk from the environment"
import os
import sys

import tk
import tk._C

venv = os.path.realpath(sys.argv[1])
for module in (tk, tk._C):
    where = os.path.realpath(module.__file__)
    assert where.startswith(venv + os.sep), f"{module.__name__} comes from {where}, not {venv}"
print(f"import tk: {tk.__version__} from {os.path.dirname(tk.__file__)}")
PY
for tutorial in 01-vector-add.py 02-fused-softmax.py; do
  out=$(run "$tutorial" 2>&1) || {
    echo "$out"
    fail "$tutorial on the interpreter"
  }
  echo "$out"
  [[ "$out" == *"on the interpreter"*": OK"* ]] || fail "$tutorial printed no passing check"
done
echo "pip-install.sh: the wheel built and installed in a fresh venv, import tk outside the tree," \
  "tutorials 01 and 02 passed on the interpreter ($((SECONDS - t0))s)"
