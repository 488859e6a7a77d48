"""Grids and launch options a kernel cannot run with, on both launch paths.

The GPU launcher's grid check (python/src/GpuLauncher.cpp, readGrid: a
tuple or list of 1 to 3 ints, or an int; x below 2^31, y and z at most
65535) is the interpreter's too (tk._C.grid_dims), so a string, a float, a
bool or a y extent over 65535 is the same error on either path. num_warps
and num_stages follow the compiler's one rule (compiler/Compiler.h) on both
paths. Each batch runs in a process of its own, the GPU path against the
stand-in driver (tests/python/fake_cuda.c)."""

import sys
import textwrap

from hostile import child_env, run_process, script

CASES = textwrap.dedent("""
    import sys, numpy as np, tk

    @tk.jit
    def k(x, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(x + offs, tk.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)

    class Gpu:
        __cuda_array_interface__ = {"data": (4096, False), "typestr": "<f4", "shape": (64,),
                                    "version": 3}

    x = np.zeros(64, np.float32) if sys.argv[1] == "interpreter" else Gpu()
    GRIDS = ["12", (1.5,), (True,), (np.True_,), (1, 65536), (2**31,), (-1,), (1, 2, 3, 4),
             (), None, lambda meta: "12", (1, 1, 70000), [1.0]]
    OPTIONS = [("num_stages", v) for v in (0, -5, 100, "abc", 2.5, True)] + \\
              [("num_warps", v) for v in (0, 3, 64, "4", 4.0, False)]
    for grid in GRIDS:
        try:
            k[grid](x, 64, BLOCK=64)
            print("grid", repr(grid), "RAN")
        except (TypeError, ValueError) as e:
            print("grid", repr(grid) if not callable(grid) else "callable", type(e).__name__, e)
    for name, value in OPTIONS:
        try:
            k[(1,)](x, 64, BLOCK=64, **{name: value})
            print(name, repr(value), "RAN")
        except (TypeError, ValueError) as e:
            print(name, repr(value), type(e).__name__, e)
    for grid in [(1,), [2], 3, np.int64(2), (1, 65535), lambda meta: (1,)]:
        k[grid](x, 64, BLOCK=64)
    k[(1,)](x, 64, BLOCK=64, num_warps=8, num_stages=2)
    print("valid ones ran")
""")


def outcomes(path, stand_in=None):
    code = CASES
    if stand_in is not None:
        code = f"import ctypes; ctypes.CDLL({str(stand_in)!r}, mode=ctypes.RTLD_GLOBAL)\n" + code
    env = child_env(TK_INTERPRET="1" if path == "interpreter" else None, TK_ARCH="sm_90")
    r = run_process([sys.executable, script(code), path], timeout=120, env=env)
    assert r.returncode == 0, r
    assert "valid ones ran" in r.stdout, r
    return [line for line in r.stdout.splitlines() if line != "valid ones ran"]


def test_bad_grids_and_options_are_the_same_errors_on_both_paths(fake_libcuda):
    interpreter = outcomes("interpreter")
    gpu = outcomes("gpu", fake_libcuda)
    assert interpreter == gpu
    assert not [line for line in interpreter if line.endswith("RAN")], interpreter
    text = "\n".join(interpreter)
    assert "grid '12' TypeError the grid of k must be a tuple of 1 to 3 ints" in text
    assert "grid (True,) TypeError" in text and "grid (1.5,) TypeError" in text
    assert "grid (1, 65536) ValueError the grid of k: grid dimension 1 is 65536; it must be from " \
           "0 to 65535" in text
    assert "grid (2147483648,) ValueError" in text
    assert "num_stages 100 ValueError num_stages of k must be an integer from 1 to 16, not 100" \
        in text
    assert "num_stages 'abc' ValueError" in text and "num_stages 2.5 ValueError" in text
    assert "num_warps 3 ValueError num_warps of k must be a power of two from 1 to 32, not 3" \
        in text
