"""bench/results/ as data: every current result parses and has its history row,
every reference to a result from the docs, the notes and the code resolves,
and bench/summarize.py turns a raw run into a current file and a history row.

No GPU and no tk build needed: these read the tree and run summarize.py on
small raw files written here.
"""

import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
NOTES = os.path.join(RESULTS, "notes")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import summarize  # noqa: E402


def tracked(*patterns):
    out = subprocess.run(["git", "-C", ROOT, "ls-files", *patterns], capture_output=True,
                         text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [p for p in out.stdout.split("\n") if p]


def history_rows():
    rows = []
    for line in open(os.path.join(RESULTS, "history.md")):
        if line.startswith("| ") and not line.startswith("| benchmark |"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows.append(cells)
    return rows


def headings(note):
    return [line[3:].strip() for line in open(os.path.join(NOTES, note)) if line.startswith("## ")]


# Files whose references are checked: every text file that can cite a result.
TEXT = ("*.md", "*.py", "*.tk", "*.tkir", "*.sh", "*.txt", "*.json", "*.cpp", "*.h", "*.def",
        "*.c", "*.cmake")


def test_every_current_result_parses_and_has_its_history_row():
    rows = {(r[0], r[2]) for r in history_rows()}
    currents = [f for f in os.listdir(RESULTS) if f.endswith(".json")]
    assert len(currents) >= 10, currents
    for f in currents:
        with open(os.path.join(RESULTS, f)) as fh:
            s = json.load(fh)
        kind = f[:-len(".json")]
        assert s["benchmark"] == kind, f
        assert s.get("commit") and s.get("date"), f
        assert (kind, summarize.short_commit(s["commit"])) in rows, \
            f"{f}: no history row for commit {s['commit']}"


def test_history_rows_are_grouped_and_complete():
    rows = history_rows()
    assert len(rows) > 100
    seen, last = set(), None
    for r in rows:
        assert len(r) == 6, r
        kind = r[0]
        if kind != last:
            assert kind not in seen, f"rows of {kind} are not together"
            seen.add(kind)
            last = kind
        assert re.match(r"^20\d\d-\d\d-\d\d", r[1]), r
        assert r[2] != "-" and r[3], r


def test_every_path_into_bench_results_exists():
    missing = []
    for path in tracked(*TEXT):
        if path.startswith("bench/results/") and path.endswith(".json"):
            continue
        text = open(os.path.join(ROOT, path), errors="replace").read()
        for m in re.finditer(r"bench/results/([A-Za-z0-9_./-]*[A-Za-z0-9_])", text):
            if m.group(1).split("/")[-1].isupper():
                continue  # a placeholder: bench/results/FILE
            target = os.path.join(RESULTS, m.group(1))
            if not os.path.exists(target):
                missing.append(f"{path}: {m.group(0)}")
    assert not missing, "\n".join(missing)


def test_every_cited_note_section_and_history_row_exists():
    rows = {(r[0], r[2]) for r in history_rows()}
    notes = {n: headings(n) for n in os.listdir(NOTES) if n.endswith(".md")}
    bad = []
    for path in tracked(*TEXT):
        text = open(os.path.join(ROOT, path), errors="replace").read()
        here = os.path.basename(path) if path.startswith("bench/results/notes/") else None
        # notes/<topic>.md, "<section>"   or, inside notes, (<topic>.md, "...") / (above, "...")
        for m in re.finditer(r'(?:notes/)?([a-z0-9-]+\.md|above), "([^"]+)"', text):
            if here is None and not m.group(0).startswith("notes/"):
                continue  # another folder's file (docs/autotune.md, "...")
            note = here if m.group(1) == "above" else m.group(1)
            if note not in notes:
                bad.append(f"{path}: {m.group(0)} (no such note)")
                continue
            key = re.sub(r"\s+", " ", m.group(2))  # a citation may wrap
            if not any(h.startswith(key) for h in notes[note]):
                bad.append(f"{path}: {m.group(0)} (no such section)")
        for m in re.finditer(r"history\.md, ([a-z-]+) ([0-9a-f]{7}[^\s),;]*)", text):
            if (m.group(1), m.group(2)) not in rows:
                bad.append(f"{path}: {m.group(0)} (no such row)")
    assert not bad, "\n".join(bad)


def run_summarize(tmp_path, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "bench", "summarize.py"),
                           "--results", str(tmp_path), *args], capture_output=True, text=True)


def test_summarize_makes_the_current_file_and_a_row(tmp_path):
    raw = {"date": "2026-12-01", "commit": "abcdef0123", "device": "NVIDIA H200",
           "command": "bench/novel_bench.py --out-dir /tmp/x --commit abcdef0 --suffix=-final",
           "triton": "3.6.0", "torch": "2.11",
           "rows": [{"case": "gelu_mix fp16,fp32->bf16", "shape": "7", "bytes": 10,
                     "tk_gbps": 3000.0, "triton_gbps": 2400.0, "torch_gbps": 400.0,
                     "tk_over_triton": 1.25, "tk_over_torch": 7.5, "tk_error": None,
                     "triton_error": None},
                    {"case": "row cumsum fp32", "shape": "9", "bytes": 10, "tk_gbps": 10.0,
                     "triton_gbps": 20.0, "torch_gbps": 5.0, "tk_over_triton": 0.5,
                     "tk_over_torch": 2.0, "tk_error": "1 mismatches", "triton_error": None}]}
    src = tmp_path / "novel-2026-12-01.json"
    src.write_text(json.dumps(raw))
    out = run_summarize(tmp_path, str(src))
    assert out.returncode == 0, out.stderr
    cur = json.loads((tmp_path / "novel.json").read_text())
    assert cur["commit"] == "abcdef0123" and cur["cases"][0]["tk_over_triton"] == 1.25
    assert "--suffix" not in cur["command"]
    hist = (tmp_path / "history.md").read_text()
    row = [l for l in hist.split("\n") if l.startswith("| novel |")]
    assert len(row) == 1
    assert "gelu_mix 1.25" in row[0] and "row cumsum 0.50" in row[0]
    assert "1 tk errors" in row[0]  # a wrong output is said in the row, not hidden
    # The same run again adds no second row; another commit adds one after it.
    assert run_summarize(tmp_path, str(src)).returncode == 0
    raw["commit"] = "1234567"
    src.write_text(json.dumps(raw))
    assert run_summarize(tmp_path, "--history-only", str(src)).returncode == 0
    rows = [l for l in (tmp_path / "history.md").read_text().split("\n") if l.startswith("| novel |")]
    assert [r.split(" | ")[2] for r in rows] == ["abcdef0", "1234567"]
    assert json.loads((tmp_path / "novel.json").read_text())["commit"] == "abcdef0123"


def test_summarize_refuses_what_it_does_not_know(tmp_path):
    src = tmp_path / "x.json"
    src.write_text(json.dumps({"rows": [{"something": 1}]}))
    out = run_summarize(tmp_path, str(src))
    assert out.returncode != 0 and "not a result this script knows" in out.stderr


def test_summarize_walks_a_bundle_results_folder(tmp_path):
    """bench/gpu_bundle.sh's run.sh leaves results/<part>/...: the bundle's COMMIT gives
    the commit a result lacks, FILE.command the exact command, other files are skipped."""
    res = tmp_path / "results"
    (res / "compile").mkdir(parents=True)
    (res / "COMMIT").write_text("commit 89abcdef0123\ntree: clean\nparts compile\n")
    stages = {"date": "2026-12-01T10:00:00Z", "repeat": 20, "with_llvm": True,
              "rows": [{"kernel": "softmax-1024", "front_end_ms": 0.1, "ast_to_ir_ms": 0.1,
                        "ir_pipeline_ms": 0.02, "gpu_and_ptx_ms": 5.0, "total_ms": 5.3,
                        "min_total_ms": 4.9}]}
    (res / "compile" / "stages.json").write_text(json.dumps(stages))
    (res / "compile" / "stages.json.command").write_text("compile_bench --repeat 20 --json F\n")
    (res / "compile" / "notes.md").write_text("not a result\n")
    (res / "run.log").write_text("== compile\n")
    out = run_summarize(tmp_path, str(res))
    assert out.returncode == 0, out.stderr
    cur = json.loads((tmp_path / "compile.json").read_text())
    assert cur["commit"] == "89abcdef0123"
    assert cur["command"] == "compile_bench --repeat 20 --json F"
    row = [l for l in (tmp_path / "history.md").read_text().split("\n") if l.startswith("| compile |")]
    assert len(row) == 1 and "softmax-1024 5.3 (4.9)" in row[0] and "| 89abcde |" in row[0]


def test_summarize_membound_rows_ratios_errors_and_skips(tmp_path):
    """membound_bench.py's rows: per kernel the range of tk/Triton, the lowest
    tk/copy (forward at N >= 4096, backward), /eager and /torch.compile of the
    backward rows, and a tk error or a row skipped by the time guard said."""
    row = {"kind": "fwd", "dtype": "fp16", "bytes": 1, "tk_error": None, "triton_error": None}
    rows = [dict(row, kernel="layer_norm_fwd", N=1024, tk_over_triton=0.97, tk_over_copy=0.5),
            dict(row, kernel="layer_norm_fwd", N=16384, tk_over_triton=0.63,
                 tk_over_copy=0.61, tk_gbps=2400.04, tk_regs=128),
            dict(row, kernel="softmax_bwd", kind="bwd", N=4096, tk_over_triton=1.02,
                 tk_over_copy=0.85, tk_over_eager=1.7, tk_over_compile=1.1,
                 tk_error="output 0: 3 mismatches"),
            {"kernel": "softmax_bwd", "kind": "bwd", "dtype": "fp32", "N": 4096,
             "skipped": "time budget of 280 s spent"}]
    raw = {"date": "2026-12-02", "commit": "fedcba9876", "device": "NVIDIA H200",
           "command": "bench/membound_bench.py --out-dir X", "seconds": 281.0, "rows": rows}
    src = tmp_path / "membound-2026-12-02.json"
    src.write_text(json.dumps(raw))
    out = run_summarize(tmp_path, str(src))
    assert out.returncode == 0, out.stderr
    cur = json.loads((tmp_path / "membound.json").read_text())
    assert cur["rows"][1]["tk_gbps"] == 2400.0 and cur["rows"][1]["tk_regs"] == 128
    assert cur["rows"][3]["skipped"].startswith("time budget")
    row = [l for l in (tmp_path / "history.md").read_text().split("\n")
           if l.startswith("| membound |")]
    assert len(row) == 1
    assert "layer_norm_fwd 0.63-0.97" in row[0] and "softmax_bwd 1.02-1.02" in row[0]
    assert "forward N>=4096 0.61, backward 0.85" in row[0]
    assert "/eager 1.70, /torch.compile 1.10" in row[0]
    assert "1 with tk errors" in row[0] and "1 skipped" in row[0]
