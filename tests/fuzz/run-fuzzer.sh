#!/usr/bin/env bash
# Runs the front-end fuzzer for a bounded time (test.sh's "fuzz" step).
#
#   bash tests/fuzz/run-fuzzer.sh build-asan/bin/tk-frontend-fuzzer [SECONDS]
#
# Seeds, read but never written: tests/fuzz/corpus (small snippets, one idea
# each), tutorials/ and tests/filecheck/ (every parser and diagnostics test, so
# new tests become seeds without being copied here). New inputs go to a temp
# working corpus that is thrown away, so the committed corpus does not grow.
# A crash, leak or timeout is kept under build-asan/fuzz-findings/ and
# reproduces with: build-asan/bin/tk-frontend-fuzzer FILE
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fuzzer="${1:?usage: run-fuzzer.sh FUZZER [SECONDS]}"
seconds="${2:-60}"
findings="$root/build-asan/fuzz-findings"
mkdir -p "$findings"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

seeds=("$root/tests/fuzz/corpus")
for d in "$root/tutorials" "$root/tests/filecheck"; do
  [ -d "$d" ] && seeds+=("$d")
done

rc=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -dict="$root/tests/fuzz/tk.dict" -artifact_prefix="$findings/" -print_final_stats=1 \
  "$work" "${seeds[@]}" >"$work/log" 2>&1 || rc=$?

if [ $rc -ne 0 ]; then
  tail -n 80 "$work/log"
  echo "fuzz: FAILED (exit $rc); inputs that reproduce it are in $findings"
  exit 1
fi
grep -E '^(INFO: seed corpus|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' \
  "$work/log"
echo "fuzz: no crash, leak or timeout in ${seconds}s ($(ls "$work" | wc -l) new inputs discarded)"
