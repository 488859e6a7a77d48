"""Ctrl-C while a kernel compiles (before anything runs): the compile polls
for it (CompileHooks::interrupted, docs/compiler.md), so Python raises
KeyboardInterrupt within milliseconds, where it used to wait for the compile
to end; tkc ends at once. The kernel is 16.7M unrolled bodies with the
compile's budget of operations turned off (TK_MAX_OPS=0): minutes of
compile, and the signal comes a second into it.

The autotuner compiles its configs on a thread pool first, where Python
runs no signal handlers: the KeyboardInterrupt in the waiting main thread
cancels them (_C.CompileCancel). Without a GPU that pool runs when the
interpreter times configs (TK_AUTOTUNE_INTERPRET=1), the path tested here."""

import re
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


TUNE = textwrap.dedent("""
    import os, re, sys, threading, time
    import numpy as np
    import tk

    @tk.autotune(configs=[tk.Config({"N": 4096}), tk.Config({"N": 4095}),
                          tk.Config({"N": 4094})], key=[])
    @tk.jit
    def slow(p, N: tk.constexpr):
        acc = tk.load(p)
        for i in tk.static_range(4096):
            for j in tk.static_range(N):
                acc += tk.load(p + j)
        tk.store(p, acc)

    print("tuning", flush=True)
    start = time.monotonic()
    try:
        slow[(1,)](np.random.rand(4096).astype(np.float32))
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - start:.2f} s")
        print("threads", threading.active_count())
        print("compiled", len(slow.fn.cache))
        sys.exit(3)
    print("tuned")
""")


def test_ctrl_c_while_the_autotuner_compiles_its_configs_stops_every_thread(tmp_path):
    cache = tmp_path / "cache"
    # Three configs on three threads, each minutes of compile.
    p = start_python(TUNE, child_env(TK_MAX_OPS="0", TK_AUTOTUNE_INTERPRET="1",
                                     TK_COMPILE_THREADS="3", TK_CACHE_DIR=str(cache)))
    out, err, waited = interrupt(p, after=1.0, ready="tuning")
    assert p.returncode == 3, (out, err)
    assert "KeyboardInterrupt after" in out, (out, err)
    # The pool's threads have ended before the exception propagated, and no
    # interrupted compile was kept as a kernel.
    assert "threads 1\n" in out, out
    assert "compiled 0\n" in out, out
    # As for one compile, the bound is mostly freeing what three compiles
    # built, on a loaded 2-core machine; without the cancel it is minutes.
    assert waited < 30, f"Ctrl-C took {waited:.1f} s to stop the autotuner's compiles"
    # Nothing half-written: every file in the cache is a whole entry's name.
    leftovers = [str(f.relative_to(cache)) for f in cache.rglob("*") if f.is_file() and
                 not re.fullmatch(r"[0-9a-f]{64}\.\w+", f.name)]
    assert not leftovers, leftovers
