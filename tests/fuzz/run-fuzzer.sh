#!/usr/bin/env bash
# Runs one of tk's fuzzers for a bounded time (test.sh's "fuzz" step runs
# both, splitting its time between them).
#
#   bash tests/fuzz/run-fuzzer.sh build-asan/bin/tk-frontend-fuzzer [SECONDS]
#   bash tests/fuzz/run-fuzzer.sh build-asan/bin/tk-ir-parser-fuzzer [SECONDS]
#
# Seeds, read but never written. The front-end fuzzer (.tk source):
# tests/fuzz/corpus (small snippets, one idea each), tutorials/ and
# tests/filecheck/ (every parser and diagnostics test, so new tests become
# seeds without being copied here). The IR fuzzer (.tkir): tests/fuzz/ir-corpus
# and every .tkir file under tests/ (filecheck, robustness), gathered into a
# temporary seed folder at each run. New inputs go to a temp working corpus
# that is thrown away, so the committed corpora do not grow. A crash, leak or
# timeout is kept under build-asan/fuzz-findings/ (named after the fuzzer)
# and reproduces with: build-asan/bin/tk-<name>-fuzzer FILE
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fuzzer="${1:?usage: run-fuzzer.sh FUZZER [SECONDS]}"
seconds="${2:-60}"
findings="$root/build-asan/fuzz-findings"
mkdir -p "$findings"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"

name="$(basename "$fuzzer")"
name="${name#tk-}"
name="${name%-fuzzer}"
case "$name" in
  frontend)
    dict="$root/tests/fuzz/tk.dict"
    seeds=("$root/tests/fuzz/corpus")
    for d in "$root/tutorials" "$root/tests/filecheck"; do
      [ -d "$d" ] && seeds+=("$d")
    done
    ;;
  ir-parser)
    dict="$root/tests/fuzz/ir.dict"
    # libFuzzer takes folders (a file argument means "run this input only"),
    # so the .tkir tests are gathered into one, under names that keep their
    # paths apart.
    mkdir -p "$work/tkir-tests"
    while IFS= read -r f; do
      cp "$f" "$work/tkir-tests/$(echo "${f#"$root"/tests/}" | tr / _)"
    done < <(find "$root/tests" -name '*.tkir' -not -path '*/fuzz/*')
    seeds=("$root/tests/fuzz/ir-corpus" "$work/tkir-tests")
    ;;
  *)
    echo "run-fuzzer.sh: unknown fuzzer '$fuzzer' (tk-frontend-fuzzer, tk-ir-parser-fuzzer)"
    exit 2
    ;;
esac

rc=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -dict="$dict" -artifact_prefix="$findings/$name-" -print_final_stats=1 \
  "$work/corpus" "${seeds[@]}" >"$work/log" 2>&1 || rc=$?

if [ $rc -ne 0 ]; then
  tail -n 80 "$work/log"
  echo "fuzz ($name): FAILED (exit $rc); inputs that reproduce it are in $findings"
  exit 1
fi
grep -E '^(INFO: seed corpus|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' \
  "$work/log"
echo "fuzz ($name): no crash, leak or timeout in ${seconds}s" \
  "($(ls "$work/corpus" | wc -l) new inputs discarded)"
