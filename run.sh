#!/usr/bin/env bash
# tk's main job, from a fresh Debian 12 machine: install what is missing,
# build (Release, Ninja, build/), then run scripts/tutorials.py: every kernel
# of every tutorials/*.tk compiled to PTX with its own signature and
# constexprs (tutorials/kernels.json) and assembled by ptxas, the tutorials
# run on the CPU interpreter with their checks, and, where there is a GPU, on
# the GPU with their checks and a table of tk against Triton, torch and
# cuBLAS (those that are installed).
#
#   bash run.sh                  # the main job; its last line is the verdict
#   bash run.sh my.tk other.tk   # summaries of your own files instead
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
# Exit status 0 only when every step passed. test.sh runs the same job as its
# `tutorials` step, so CI proves it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/setup.sh

tk_install_deps || {
  echo "run.sh: installing the dependencies failed (output above)"
  exit 1
}
tk_build build Release || {
  echo "run.sh: the build failed (output above)"
  exit 1
}

if [ $# -gt 0 ]; then
  echo
  echo "== build/bin/tkc --emit=summary $*"
  status=0
  build/bin/tkc --emit=summary "$@" || status=$?
  echo
  if [ $status -eq 0 ]; then
    echo "run.sh: $# file(s) compiled through the front end; summaries above"
  else
    echo "run.sh: tkc failed (exit $status) on $# file(s); diagnostics above"
  fi
  exit $status
fi

exec python3 scripts/tutorials.py --build build
