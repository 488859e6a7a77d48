"""Array arguments of the interpreter path that do not describe memory tk
may use: a forged __array_interface__ (NULL, negative or overflowing
extents, strides of another rank, a mask, garbage where the data should
be), and read-only arrays (a read-only numpy array, a view of an immutable
`bytes` object) where the kernel stores. Each is a TypeError naming the
argument, in a process of its own (these segfaulted or wrote into
immutable memory before), and nothing is written."""

import textwrap

import pytest

from hostile import run_python

PRELUDE = textwrap.dedent("""
    import numpy as np, tk

    @tk.jit
    def copy(x, y, n, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(y + offs, tk.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)

    class Forged:
        def __init__(self, **ai):
            good = np.zeros(16, np.float32)
            self.keep = good
            self.__array_interface__ = dict(good.__array_interface__, **ai)

    def launch(x, y, n=16):
        try:
            copy[(1,)](x, y, n, BLOCK=16)
            print("RAN")
        except TypeError as e:
            print("TypeError:", e)
""")

FORGED = {
    "null": ("data=(0, False)", "has data address 0 (NULL) for 64 bytes"),
    "negative extent": ("shape=(-16,)", "has shape (-16,), with a negative extent"),
    "overflowing extents": ("shape=(2**62, 4)", "more than any memory"),
    "overflowing strides": ("strides=(2**62,)", "more than any memory"),
    "strides of another rank": ("strides=(4, 4)", "they must be None or one int per dimension"),
    "a mask": ("mask=np.ones(16, bool)", "has a mask"),
    "a buffer for data": ("data=b'x' * 64", "tk takes (address, read-only flag)"),
    "a float address": ("data=(1.5, False)", "tk takes (address, read-only flag)"),
    "a bool extent": ("shape=(True,)", "not a tuple of ints"),
    "garbage typestr": ("typestr=7", "tk cannot take arrays of dtype"),
    "below address 0": ("strides=(-2**50,)", "reaches outside the address space"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
@pytest.mark.parametrize("which", ["x", "y"])
def test_a_forged_array_interface_is_a_type_error_naming_the_argument(case, which):
    change, message = FORGED[case]
    forged = f"Forged({change})"
    args = f"{forged}, np.zeros(16, np.float32)" if which == "x" else \
        f"np.ones(16, np.float32), {forged}"
    r = run_python(PRELUDE + f"launch({args})\n", timeout=60)
    assert r.returncode == 0, r
    assert f"TypeError: argument '{which}' of copy" in r.stdout, r
    assert message in r.stdout, r


def test_a_read_only_output_is_refused_and_left_unwritten():
    r = run_python(PRELUDE + textwrap.dedent("""
        y = np.full(16, 7.0, np.float32)
        y.flags.writeable = False
        launch(np.ones(16, np.float32), y)
        print("unchanged", bool((y == 7.0).all()))
        frozen = bytes(64)
        launch(np.ones(16, np.float32), np.frombuffer(frozen, np.float32))
        print("bytes unchanged", frozen == bytes(64))
        # Read-only inputs are fine.
        x = np.ones(16, np.float32)
        x.flags.writeable = False
        out = np.zeros(16, np.float32)
        launch(x, out)
        print("out", out[:3])
    """), timeout=60)
    assert r.returncode == 0, r
    lines = r.stdout.splitlines()
    assert lines[0].startswith("TypeError:") and "argument 'y' is a read-only array" in lines[0], r
    assert "case.py:7:" in r.stdout, "located at the store: " + r.stdout
    assert "unchanged True" in r.stdout and "bytes unchanged True" in r.stdout, r
    assert "RAN" in r.stdout and "out [2. 2. 2.]" in r.stdout, r


def test_a_store_through_a_loaded_pointer_into_a_read_only_array_is_refused():
    # The pointer comes from memory (a table of addresses), so no analysis
    # can name its argument: the interpreter refuses the store itself.
    r = run_python(textwrap.dedent("""
        import numpy as np, tk

        @tk.jit
        def poke(table, target):
            p = tk.load(table).to(tk.pointer_type(tk.float32))
            tk.store(p, 5.0)
            tk.store(p + 1, tk.load(target))

        target = np.full(4, 3.0, np.float32)
        target.flags.writeable = False
        table = np.array([target.ctypes.data], np.int64)
        try:
            poke[(1,)](table, target)
            print("RAN")
        except TypeError as e:
            print("TypeError:", e)
        print("unchanged", bool((target == 3.0).all()))
    """), timeout=60)
    assert r.returncode == 0, r
    assert "TypeError:" in r.stdout and "store into a read-only buffer" in r.stdout, r
    assert "buffer 'target', which is not writeable" in r.stdout, r
    assert "unchanged True" in r.stdout, r
