"""The interpreter's budgets against kernels that would take the host down:
a block too big for memory, a loop that never ends, Ctrl-C in the middle of
a run (Python and `tkc run`), and other Python threads running meanwhile.
Each case runs in its own process with its time (and memory) bounded."""

import textwrap
import time

import pytest

from hostile import child_env, interrupt, run_process, run_python, start_python

HUGE_REDUCTION = textwrap.dedent("""
    import numpy as np, tk

    @tk.jit
    def k(out):
        tk.store(out, tk.sum(tk.arange(0, 1073741824)))

    out = np.zeros(1, np.int32)
    try:
        k[(1,)](out)
    except tk.InterpreterError as e:
        print("InterpreterError:", e)
""")


def test_a_block_too_big_for_the_host_is_an_error_at_its_line():
    # A 2^30-element block is 4 GiB: refused before it is allocated, inside
    # an address space of 3 GiB and well within the time bound.
    r = run_python(HUGE_REDUCTION, timeout=60, memory_mb=3072)
    assert r.returncode == 0, r
    assert "InterpreterError:" in r.stdout, r
    assert "makes tensor<1073741824xi32> (4 GiB)" in r.stdout, r
    assert "over the interpreter's memory budget of 1 GiB" in r.stdout, r
    assert "case.py:6:26: error" in r.stdout, "located at the arange: " + r.stdout


def test_the_memory_budget_is_a_knob():
    r = run_python(HUGE_REDUCTION.replace("1073741824", "4194304"), timeout=60,
                   env=child_env(TK_INTERPRET_MAX_MEMORY="8"))
    assert "makes tensor<4194304xi32> (16 MiB)" in r.stdout, r
    assert "budget of 8 MiB" in r.stdout, r
    r = run_python(HUGE_REDUCTION.replace("1073741824", "4194304")
                   + "print('sum', out[0])", timeout=60,
                   env=child_env(TK_INTERPRET_MAX_MEMORY="0"))
    assert "InterpreterError" not in r.stdout, r
    n = 4194304
    wrapped = (n * (n - 1) // 2 + 2**31) % 2**32 - 2**31  # the i32 sum wraps
    assert f"sum {wrapped}" in r.stdout, r
    r = run_python(HUGE_REDUCTION, timeout=60, env=child_env(TK_INTERPRET_MAX_MEMORY="lots"))
    assert "TK_INTERPRET_MAX_MEMORY" in r.stderr, r


# A kernel that never ends (a while loop on a value it never changes) with
# the step budget off: only Ctrl-C stops it.
SPIN = textwrap.dedent("""
    import tk

    @tk.jit
    def spin(flag, out):
        x = tk.load(flag)
        i = 0
        while x > 0:
            i += 1
            x = tk.load(flag)
        tk.store(out, i)
""")

ENDLESS = SPIN + textwrap.dedent("""
    import sys, threading, time
    import numpy as np

    flag, out = np.ones(1, np.int32), np.zeros(1, np.int32)
    ticks = [0]
    def tick():
        while True:
            ticks[0] += 1
            time.sleep(0.001)
    threading.Thread(target=tick, daemon=True).start()
    # Compiled first (a flag of 0 ends the loop at once), so the signal
    # reaches the endless run, not the compile, on a loaded machine too.
    spin[(GRID,)](np.zeros(1, np.int32), out)
    print("running", flush=True)
    start = time.monotonic()
    try:
        spin[(GRID,)](flag, out)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - start:.2f} s; ticks {ticks[0]}")
        sys.exit(3)
""")


@pytest.mark.parametrize("threads,grid", [(1, 1), (4, 8)])
def test_ctrl_c_raises_keyboard_interrupt_promptly(threads, grid):
    code = ENDLESS.replace("GRID", str(grid))
    env = child_env(TK_INTERPRET_MAX_STEPS="0", TK_INTERPRET_THREADS=threads)
    p = start_python(code, env)
    # 1 s is well inside the run (the kernel is compiled before 'running').
    out, err, waited = interrupt(p, after=1.0, ready="running")
    assert p.returncode == 3, (out, err)
    assert "KeyboardInterrupt after" in out, (out, err)
    # Polled every 10 ms; the bound leaves room for a loaded machine.
    assert waited < 10, f"Ctrl-C took {waited:.1f} s to stop the run"
    # Another Python thread ran while the interpreter did (the GIL is
    # released): a millisecond tick over more than a second of run.
    ticks = int(out.rsplit("ticks", 1)[1])
    assert ticks > 100, out


def test_ctrl_c_stops_tkc_run(tkc, tmp_path):
    src = tmp_path / "spin.tk"
    src.write_text(SPIN)
    import subprocess

    p = subprocess.Popen([str(tkc), "run", str(src), "--signature", "*i32, *i32", "--size", "1",
                          "--max-steps", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err, waited = interrupt(p, after=1.5)
    assert p.returncode == 130, (out, err)
    assert "the run was interrupted in program (0, 0, 0) after" in err, err
    assert "spin.tk:" in err, err
    assert waited < 10, f"Ctrl-C took {waited:.1f} s to stop tkc run"


def test_tkc_run_buffers_are_bounded_too(tkc, tmp_path):
    src = tmp_path / "copy.tk"
    src.write_text(textwrap.dedent("""
        import tk

        @tk.jit
        def copy(x, y):
            tk.store(y, tk.load(x))
    """))
    r = run_process([str(tkc), "run", str(src), "--signature", "*fp64, *fp64",
                     "--size", str(2**32)], timeout=30, memory_mb=2048)
    assert r.returncode == 1, r
    assert "the kernel's buffers take 65536 MiB at --size 4294967296, more than --max-memory " \
           "1024 MiB" in r.stderr, r
