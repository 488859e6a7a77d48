#!/usr/bin/env bash
# tk's main job, from a fresh Debian 12 machine: install what is missing,
# build (Release, Ninja, build/), then compile every tutorial as far as the
# compiler goes and print a summary per kernel (`tkc --emit=summary`).
#
#   bash run.sh                  # the tutorials (the embedded default)
#   bash run.sh my.tk other.tk   # your own files instead
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/setup.sh

tk_install_deps
tk_build build Release

if [ $# -gt 0 ]; then
  inputs=("$@")
else
  inputs=(tutorials/*.tk)
fi

echo
echo "== build/bin/tkc --emit=summary ${inputs[*]}"
status=0
build/bin/tkc --emit=summary "${inputs[@]}" || status=$?
echo
if [ $status -eq 0 ]; then
  echo "run.sh: ${#inputs[@]} file(s) compiled through the front end; summaries above"
else
  echo "run.sh: tkc failed (exit $status) on ${#inputs[@]} file(s); diagnostics above"
fi
exit $status
