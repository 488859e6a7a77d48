"""Helpers of the hostile-input suite (tests/robustness/), imported by its
test files as `from hostile import ...` (a name of its own: test.sh collects
this folder in one pytest session with tests/python, whose conftest would
shadow a `from conftest import`).

Each case feeds tk something a hostile or careless user would (a block too
big for the host, Ctrl-C in the middle of a run, a forged
__array_interface__, a FIFO where a cache entry should be, ...) and asserts
that it ends in a clean, located error or exception within a time bound,
and, where memory is the point, within a memory bound. Cases that could
crash or hang run in a subprocess of their own (`run_python`), with
RLIMIT_AS bounding its memory and a timeout bounding its time, so that a
regression fails the test instead of taking pytest down with it.

test.sh's pytest step collects this folder next to tests/python; by hand:

    PYTHONPATH=build/python python3 -m pytest -q tests/robustness
"""

import os
import pathlib
import resource
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent

# Address space a subprocess may map: tk with LLVM linked in, numpy and a
# kernel's blocks fit well inside; a 4 GiB allocation does not.
DEFAULT_MEMORY_MB = 3072


class Finished:
    """What a subprocess did: returncode, stdout, stderr, seconds."""

    def __init__(self, returncode, stdout, stderr, seconds):
        self.returncode, self.stdout, self.stderr, self.seconds = (
            returncode, stdout, stderr, seconds)

    def __repr__(self):
        return (f"exit {self.returncode} after {self.seconds:.1f} s\n--- stdout\n{self.stdout}"
                f"\n--- stderr\n{self.stderr}")


def _limits(memory_mb):
    def apply():
        if memory_mb:
            limit = memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.setsid()  # its own process group: a timeout kills all of it
    return apply


def child_env(**extra):
    env = dict(os.environ)
    env.setdefault("TK_INTERPRET", "1")
    env["PYTHONUNBUFFERED"] = "1"
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def run_process(argv, timeout, memory_mb=DEFAULT_MEMORY_MB, env=None, cwd=None):
    """Runs argv to completion within `timeout` seconds (else the test fails
    with what it printed so far) under an address-space limit of
    `memory_mb` MiB."""
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env or child_env(), cwd=cwd, preexec_fn=_limits(memory_mb))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"{argv[:3]} did not finish within {timeout} s\n--- stdout\n{out}\n"
                    f"--- stderr\n{err}")
    return Finished(p.returncode, out, err, time.monotonic() - start)


def script(code):
    """`code` written to a file of its own (@tk.jit needs a kernel's source
    file), which lives as long as the process."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="tk-robust-")) / "case.py"
    path.write_text(code)
    return str(path)


def run_python(code, timeout=60, memory_mb=DEFAULT_MEMORY_MB, env=None, cwd=None):
    """`code` in a fresh Python with tk importable (PYTHONPATH as pytest's)."""
    return run_process([sys.executable, script(code)], timeout, memory_mb, env, cwd)


def start_python(code, env=None):
    """`code` in a fresh Python, started and left running (for signals)."""
    return subprocess.Popen([sys.executable, script(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or child_env(),
                            preexec_fn=_limits(DEFAULT_MEMORY_MB))


def interrupt(p, after, ready=None):
    """Sends SIGINT to the running process `p` `after` seconds from now (from
    when it printed the line `ready`, if given): (stdout, stderr, seconds it
    took to end after the signal). `p` does not outlive the call."""
    try:
        if ready is not None:
            assert p.stdout.readline().strip() == ready
        time.sleep(after)
        assert p.poll() is None, p.communicate()
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
        return out, err, time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def tkc_binary():
    """build/bin/tkc next to the tk package pytest imports, or None."""
    import tk

    build = pathlib.Path(tk.__file__).parent.parent.parent  # build/python/tk/__init__.py
    for candidate in (build / "bin" / "tkc", ROOT / "build" / "bin" / "tkc"):
        if candidate.exists():
            return candidate
    return None


