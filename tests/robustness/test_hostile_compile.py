"""Ctrl-C while a kernel compiles (before anything runs): the compile polls
for it (CompileHooks::interrupted, docs/compiler.md), so Python raises
KeyboardInterrupt within milliseconds, where it used to wait for the compile
to end; tkc ends at once. The kernel is 16.7M unrolled bodies with the
compile's budget of operations turned off (TK_MAX_OPS=0): minutes of
compile, and the signal comes a second into it."""

import subprocess
import textwrap

from hostile import child_env, interrupt, start_python, tkc_binary

SLOW = textwrap.dedent("""
    import tk

    @tk.jit
    def slow(p):
        acc = tk.load(p)
        for i in tk.static_range(4096):
            for j in tk.static_range(4096):
                acc += tk.load(p + j)
        tk.store(p, acc)
""")

COMPILE = SLOW + textwrap.dedent("""
    import sys, time
    import numpy as np

    print("compiling", flush=True)
    start = time.monotonic()
    try:
        slow[(1,)](np.zeros(4096, np.float32))
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - start:.2f} s")
        sys.exit(3)
    print("compiled")
""")


def test_ctrl_c_during_a_compile_raises_keyboard_interrupt_promptly():
    p = start_python(COMPILE, child_env(TK_MAX_OPS="0"))
    out, err, waited = interrupt(p, after=1.0, ready="compiling")
    assert p.returncode == 3, (out, err)
    assert "KeyboardInterrupt after" in out, (out, err)
    # Polled every 10 ms. `waited` runs until the process has ended, which
    # includes freeing what the compile had built of the 16.7M bodies: 12 s
    # on a 2-core CI machine busy with a sanitizer build, against minutes for
    # the whole compile; the bound leaves room for such a machine.
    assert waited < 30, f"Ctrl-C took {waited:.1f} s to stop the compile"


def test_ctrl_c_during_a_compile_ends_tkc(tmp_path):
    src = tmp_path / "slow.tk"
    src.write_text(SLOW)
    p = subprocess.Popen([str(tkc_binary()), str(src), "--emit=ptx", "--signature", "*fp32"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=child_env(TK_MAX_OPS="0"))
    out, err, waited = interrupt(p, after=1.0)
    assert p.returncode != 0, (out, err)
    assert waited < 10, f"Ctrl-C took {waited:.1f} s to end tkc"
