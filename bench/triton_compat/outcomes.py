"""A pytest plugin that writes one JSON line per test case: its id, its
outcome and, when it did not pass, why (the exception's type and first line,
or the skip reason). The runner loads it with `-p outcomes` and
TRITON_COMPAT_OUTCOMES=FILE; under pytest-xdist the reports reach the
controller, which writes them all.

    {"id": "test_bin_op[int8-int8-+]", "outcome": "failed", "reason": "CompilationError: ..."}

Outcomes: passed, failed (the test body), error (setup or teardown), skipped,
xfailed, xpassed. Collection errors are written with the id "<collection>".
"""

import json
import re
import os
import threading

_lock = threading.Lock()
_seen = {}
_worker = False  # an xdist worker: its reports reach the controller, which writes


def pytest_configure(config):
    global _worker
    _worker = hasattr(config, "workerinput")


def _write(record):
    path = os.environ.get("TRITON_COMPAT_OUTCOMES")
    if not path or _worker:
        return
    with _lock, open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _case_id(nodeid):
    return nodeid.split("::", 1)[-1]


def _reason(report):
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, reason)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        message = crash.message
    else:
        message = str(longrepr).strip().splitlines()[-1] if str(longrepr).strip() else ""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0].split(":", 1)[0]
    kind = head if re.fullmatch(r"[\w.]+", head) else ""
    # A compile error: the message is what follows "error:", not the location.
    for line in lines:
        if "error:" in line:
            text = line[line.index("error:"):]
            return f"{kind}: {text}" if kind else text
    return lines[0]


def pytest_runtest_logreport(report):
    case = _case_id(report.nodeid)
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.skipped:
            outcome = "skipped"
        elif report.failed:
            outcome = "failed" if report.when == "call" else "error"
        else:
            outcome = "passed"
        if case in _seen:
            return
        _seen[case] = outcome
        record = {"id": case, "outcome": outcome}
        if outcome != "passed":
            record["reason"] = _reason(report)[:300]
        record["duration"] = round(report.duration, 3)
        _write(record)
    elif report.when == "teardown" and report.failed and _seen.get(case) == "passed":
        _seen[case] = "error"
        _write({"id": case, "outcome": "error", "reason": "teardown: " + _reason(report)[:300]})


def pytest_collectreport(report):
    if report.failed:
        _write({"id": "<collection>", "outcome": "error", "reason": _reason(report)[:300],
                "where": report.nodeid})
