"""A randomized sweep over what the argument binder takes (no Hypothesis:
a seeded generator, so a failure reproduces from its seed and case number).

The binder's C++ part (python/src/GpuLauncher.cpp) reads Python objects, so
it cannot be driven without Python; this drives it, and the interpreter
path's binder (python/tk/runtime/jit.py), with random arguments: well-formed
launches with a few parts spoilt, and launches of random parts: arrays of every
numpy dtype (complex, object, big-endian, datetime among them), of random
shapes (0-d, empty, N-d) and strides (slices, transposes, negative steps),
array interfaces with random fields, NaN and infinite floats, ints around and
far past 64 bits, bools, None, strings with commas and quotes, bytes,
containers, numpy scalars of every dtype, and random keyword arguments and
launch options. Every launch must either run or raise one of the clean
exceptions (TypeError or ValueError for arguments, CompilationError,
InterpreterError, DriverError); a TypeError must name what it is about. Any
other exception, a crash or a hang fails the test. Each path runs in a
process of its own, bounded in time and memory."""

import sys
import textwrap

import pytest

from hostile import child_env, run_process, script

FUZZ = textwrap.dedent("""
    import random, sys, traceback
    import numpy as np, tk

    path, seed, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)

    @tk.jit
    def k(x_ptr, y_ptr, n, scale, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        m = offs < n
        tk.store(y_ptr + offs, tk.load(x_ptr + offs, mask=m) * scale, mask=m)

    DTYPES = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1", "c8",
              "c16", "O", ">f4", ">i8", "M8[s]", "m8[s]", "U3", "S2", "V4"]

    def array():
        dt = rng.choice(DTYPES)
        shape = tuple(rng.choice([0, 1, 2, 3, 7, 64, 65]) for _ in range(rng.randint(0, 3)))
        try:
            a = np.zeros(shape, dtype=dt)
            if a.dtype.kind in "fiu":
                a[...] = nrng.uniform(-3, 3, shape).astype(a.dtype)
        except (TypeError, ValueError):
            a = np.zeros(shape, np.float32)
        view = rng.random()
        if a.ndim and view < 0.2:
            a = a[::-1]
        elif a.ndim > 1 and view < 0.4:
            a = a.T
        elif a.ndim and view < 0.55:
            a = a[::2]
        if rng.random() < 0.1:
            a.flags.writeable = False
        return a

    class Interface:
        def __init__(self, name, fields):
            setattr(self, name, fields)

    def forged(name):
        good = np.zeros(16, np.float32)
        fields = dict(good.__array_interface__)
        fields["version"] = 3
        key = rng.choice(["data", "shape", "strides", "typestr", "mask", "drop"])
        junk = rng.choice([None, 0, -1, 2**64, 2**70, 1.5, "x", b"x", (), (1,), (0, True),
                           (-4,), (2**62, 4), [16], {"a": 1}, (16, 16), (True,)])
        if key == "drop":
            fields.pop(rng.choice(list(fields)))
        else:
            fields[key] = junk
        obj = Interface(name, fields)
        obj.keep = good
        return obj

    def scalar():
        return rng.choice([0, 1, -1, 16, 2**31 - 1, 2**31, -2**31 - 1, 2**63 - 1, 2**63, 2**64 - 1,
                           2**64, -2**63, -2**63 - 1, 10**30, -10**30, 0.0, -0.0, 1.5,
                           float("nan"), float("inf"), float("-inf"), 1e308, 5e-324, True,
                           False, None, "", "a,b", "it's", "x\\n", b"bytes", [1], (2,), {},
                           object(), np.float16(2.5), np.float32("nan"), np.float64("inf"),
                           np.int8(-7), np.uint8(200), np.int64(2**62), np.uint64(2**64 - 1),
                           np.bool_(True), np.complex64(1j), np.datetime64(1, "s"),
                           tk.constexpr(3), tk.float32, 3 + 4j])

    def value(where):
        r = rng.random()
        if path == "gpu":
            if r < 0.35:
                return forged("__cuda_array_interface__")
            if r < 0.55:
                return array()  # a CPU array on a GPU launch
        else:
            if r < 0.35:
                return array()
            if r < 0.55:
                return forged("__array_interface__")
        return scalar()

    def good_array(values):
        a = values.astype(np.float32)
        if path == "gpu":  # device memory as far as the stand-in driver knows
            obj = Interface("__cuda_array_interface__", dict(a.__array_interface__, version=3))
            obj.keep = a
            return obj
        return a

    def well_formed():
        # A launch that runs as it is: most cases start from it and spoil a
        # few of its parts, so the sweep reaches launches that run as well
        # as every kind of error.
        n = rng.choice([1, 37, 100])
        x = good_array(nrng.uniform(-1, 1, 100))
        y = good_array(np.zeros(100))
        return [x, y, n, float(nrng.uniform(0.5, 2))], {"BLOCK": rng.choice([16, 32, 64])}

    CLEAN = (TypeError, ValueError, tk.CompilationError, tk.InterpreterError, tk.DriverError)
    unclean = 0
    for case in range(cases):
        if rng.random() < 0.6:
            args, kwargs = well_formed()
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                args[rng.randrange(len(args))] = value(0)
        else:
            args = [value(i) for i in range(rng.randint(0, 5))]
            kwargs = {}
        if rng.random() < 0.5:
            kwargs["BLOCK"] = rng.choice([16, 32, 48, 0, -16, 2**40, 1.5, "16", None, 2**64 - 1])
        for opt in ("num_warps", "num_stages", "n", "scale", "bogus", "y_ptr"):
            if rng.random() < 0.15:
                kwargs[opt] = scalar()
        grid = rng.choice([(1,), (2,), 1, (0,), (1, 1), "1", (2**31,), (1.0,), lambda m: (1,)])
        try:
            k[grid](*args, **kwargs)
            outcome = "ran"
        except CLEAN as e:
            text = str(e)
            outcome = type(e).__name__
            if isinstance(e, TypeError) and not any(
                    w in text for w in ("argument", "grid", "takes", "k(", "constexpr",
                                        "parameter", "dtype", "array", "pointer")):
                outcome = "UNCLEAN TypeError that names nothing: " + text
                unclean += 1
        except Exception as e:  # noqa: BLE001 - exactly what the test looks for
            outcome = "UNCLEAN " + type(e).__name__ + ": " + str(e)[:300]
            unclean += 1
            traceback.print_exc()
        print(f"case {case}: {outcome.splitlines()[0] if outcome else outcome}")
    print(f"{cases} cases, {unclean} unclean")
""")

CASES = 400


@pytest.mark.parametrize("path,seed", [("interpreter", 1), ("interpreter", 2), ("gpu", 3)])
def test_random_arguments_end_in_clean_errors(path, seed, fake_libcuda):
    code = FUZZ
    if path == "gpu":
        code = f"import ctypes; ctypes.CDLL({str(fake_libcuda)!r}, mode=ctypes.RTLD_GLOBAL)\n" + code
    env = child_env(TK_INTERPRET="1" if path == "interpreter" else None, TK_ARCH="sm_90",
                    TK_INTERPRET_MAX_STEPS="1000000")
    r = run_process([sys.executable, script(code), path, str(seed), str(CASES)], timeout=300,
                    env=env)
    assert r.returncode == 0, r
    assert f"{CASES} cases, 0 unclean" in r.stdout, \
        "\n".join(line for line in r.stdout.splitlines() if "UNCLEAN" in line) + r.stderr[-3000:]
    outcomes = [line.split(": ", 1)[1] for line in r.stdout.splitlines() if line.startswith("case")]
    # The sweep reaches both sides: launches that run and each kind of error.
    assert "ran" in outcomes and "TypeError" in outcomes and "ValueError" in outcomes, outcomes
