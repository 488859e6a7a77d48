#!/usr/bin/env python3
"""Turns one run of tk's GPU tests (bench/gpu_bundle.sh's tests part: results/tests/ with
gpu_tests.json, gpu_difftest.json, COMMIT, device.txt in one folder) into
a readable Markdown report (stdout, or -o FILE): date, commit, device, the command, pass /
fail / skip counts per binary, every failing case with its message (the
differential test's messages carry the case's seed, sizes and kernel), and
the skipped differential cases counted by op family (kNotYetOnGpu).

    python3 bench/gpu_test_report.py results/tests --command "bash gpu-bundle/run.sh tests" \\
        [--date 2026-11-30] [-o report.md]

The committed result of such a run is bench/results/gpu-tests.json and a row of
bench/results/history.md: `python3 bench/summarize.py OUTDIR`.
"""
import argparse
import collections
import datetime
import glob
import json
import os
import re
import sys


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def load_all(outdir, binary):
    """BINARY.json, or the shards BINARY-<i>.json merged into one report."""
    whole = load(os.path.join(outdir, binary + ".json"))
    if whole is not None:
        return whole
    shards = sorted(glob.glob(os.path.join(outdir, binary + "-*.json")))
    if not shards:
        return None
    merged = {"testsuites": []}
    for path in shards:
        merged["testsuites"] += load(path).get("testsuites", [])
    return merged


def cases(report):
    """(suite, name, status, messages) for every test of a gtest JSON report."""
    for suite in report.get("testsuites", []):
        for t in suite.get("testsuite", []):
            failures = [f.get("failure", "") for f in t.get("failures", [])]
            if failures:
                status = "failed"
            elif t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                status = "skipped"
            else:
                status = "passed"
            yield suite["name"], t["name"], status, failures, t.get("skipped", {})


def short(name):
    """A test's name without its suite: 'Gpu/Gpu.Case/binary_add_i8' -> 'binary_add_i8'."""
    return re.split(r"[./]", name)[-1]


def family(name):
    # Gpu/Gpu.Case/binary_add_i32 -> the case name's first two parts.
    parts = name.split("_")
    return "_".join(parts[:2]) if parts else name


def summarize(title, report, log, lines, max_failures):
    if report is None:
        lines += [f"## {title}: no result file", ""]
        return 0
    rows = list(cases(report))
    count = collections.Counter(status for _, _, status, _, _ in rows)
    lines += [f"## {title}: {count['passed']} passed, {count['failed']} failed, "
              f"{count['skipped']} skipped", ""]
    failed = [(s, n, m) for s, n, status, m, _ in rows if status == "failed"]
    if failed:
        lines += ["### Failures", ""]
        for suite, name, messages in failed[:max_failures]:
            lines.append(f"- `{suite}.{name}`")
            text = "\n".join(messages)
            # The first lines carry the comparison; the kernel follows the trace.
            body = text.strip().splitlines()[:24]
            lines += ["", "```"] + body + ["```", ""]
        if len(failed) > max_failures:
            lines += [f"... and {len(failed) - max_failures} more failures (see the log)", ""]
    skipped = [n for _, n, status, _, _ in rows if status == "skipped"]
    if skipped:
        # gtest's JSON has no skip message: the log has it after "Skipped".
        reasons = skip_reasons(log)
        groups = collections.defaultdict(list)
        for n in skipped:
            groups[reasons.get(short(n), "(reason not in the log)")].append(n)
        lines += ["Skipped:", ""]
        for reason, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            fams = collections.Counter(family(short(n)) for n in names)
            which = (", ".join(f"{k} {v}" for k, v in sorted(fams.items()))
                     if len(fams) <= 30 else f"{len(fams)} families")
            lines.append(f"- {len(names)}: {reason} — {which}")
        lines.append("")
    return count["failed"]


def skip_reasons(log):
    """Test name (after the last '/') -> the first line of its skip message."""
    reasons, current, expect = {}, None, False
    for line in log.splitlines():
        m = re.match(r"\[ RUN      \] (\S+)", line)
        if m:
            current, expect = short(m.group(1)), False
        elif line.endswith(": Skipped"):
            expect = True
        elif expect and current:
            reasons[current] = line.strip()
            expect = False
    return reasons


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--command", default="bash gpu-bundle/run.sh tests")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("-o", "--output")
    ap.add_argument("--max-failures", type=int, default=40)
    args = ap.parse_args()

    def text(name):
        p = os.path.join(args.outdir, name)
        return open(p).read().strip() if os.path.exists(p) else "(missing)"

    lines = [f"# GPU tests — {args.date}", "",
             "```", text("COMMIT"), "device: " + text("device.txt"), "```", "",
             "Command on the GPU machine, from the repository root:", "",
             f"    {args.command}", "",
             "Bundle: `bash bench/gpu_bundle.sh --build build --only tests` "
             "(libtk.so, gpu_tests, gpu_difftest, stripped); report: "
             "`python3 bench/gpu_test_report.py OUTDIR`.", ""]
    missing = [os.path.basename(p) for p in
               sorted(glob.glob(os.path.join(args.outdir, "gpu_difftest-shard*.log")))
               if not os.path.exists(p.replace("-shard", "-").replace(".log", ".json"))]
    if missing:
        lines += [f"**{len(missing)} differential-test shards wrote no JSON** (crashed or "
                  f"timed out; their cases are not counted below): " + ", ".join(missing), ""]
    bad = len(missing)
    for binary, title in [("gpu_tests", "gpu_tests"),
                          ("gpu_difftest", "gpu_difftest (Gpu/*: GPU against the interpreter)")]:
        bad += summarize(title, load_all(args.outdir, binary), text(binary + ".log"), lines,
                         args.max_failures)
    text = "\n".join(lines).rstrip() + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
        print(f"wrote {args.output}: {bad} failing tests")
    else:
        sys.stdout.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
