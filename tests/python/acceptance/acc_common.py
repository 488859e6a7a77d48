"""Shared helpers of the acceptance tests: one kernel, two places to run it.

Every acceptance test takes the `backend` fixture, which is "interp" (the
CPU interpreter on numpy arrays, or CPU torch tensors for bfloat16; runs in
CI) or "gpu" (torch CUDA tensors, marked `gpu`, skipped visibly without a
GPU by tests/python/conftest.py). A test builds its inputs on the host in
numpy, moves them with `backend.put`, launches, and reads results back with
`backend.get`; the reference is numpy in float64 on the same (already
rounded) input values, so the bound in each test is the kernel's own error.

    def test_x(backend):
        x, x64 = backend.rand((100, 37), "fp16")     # device array, float64 copy
        out = backend.empty((100, 37), "fp32")
        kernel[(1,)](x, out, ...)
        check(backend.get(out), ref(x64), rtol=1e-3)

On the GPU, `backend.interp(kernel, grid, *args, **kw)` runs the same launch
on the interpreter (on host copies) for GPU-vs-interpreter comparisons.
"""

import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

import tk

NP = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "i8": np.int8,
      "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "i1": np.bool_}


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def torch_dtype(name):
    torch = _torch()
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
            "fp64": torch.float64, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
            "i64": torch.int64, "u8": torch.uint8, "i1": torch.bool}[name]


class Backend:
    """Where a test's arrays live and its kernels run ("interp" or "gpu")."""

    def __init__(self, name, seed):
        self.name = name
        self.gpu = name == "gpu"
        self.rng = np.random.default_rng(seed)

    # -- arrays -------------------------------------------------------------
    def put(self, host, dtype):
        """`host` (numpy) converted to `dtype` on this backend, and the float64
        (or int64) host copy of exactly the values the kernel sees."""
        torch = _torch()
        if dtype == "bf16":
            if torch is None:
                pytest.skip("bfloat16 on the interpreter needs torch (numpy has no bfloat16)")
            t = torch.from_numpy(np.ascontiguousarray(host, dtype=np.float32)).to(torch.bfloat16)
            exact = t.to(torch.float64).numpy()
            return (t.cuda() if self.gpu else t), exact
        a = np.ascontiguousarray(host).astype(NP[dtype])
        exact = a.astype(np.float64) if a.dtype.kind == "f" else a.astype(np.int64)
        if self.gpu:
            return torch.from_numpy(a).cuda(), exact
        return a, exact

    def rand(self, shape, dtype, lo=-2.0, hi=2.0):
        """Random values (never all zero) of `dtype`: uniform in [lo, hi) for
        floats, integers in [lo, hi) for integer dtypes."""
        if dtype.startswith("i") or dtype.startswith("u"):
            host = self.rng.integers(int(lo), int(hi), size=shape)
        else:
            host = self.rng.uniform(lo, hi, size=shape)
        return self.put(host, dtype)

    def empty(self, shape, dtype):
        """An output array filled with NaN (floats) or a sentinel, so that an
        element the kernel forgets to write shows up."""
        fill = np.nan if dtype in ("fp16", "bf16", "fp32", "fp64") else 77
        return self.put(np.full(shape, fill), dtype)[0]

    def zeros(self, shape, dtype):
        return self.put(np.zeros(shape), dtype)[0]

    def get(self, x):
        """A float64 (or int64) numpy copy of a backend array."""
        torch = _torch()
        if torch is not None and isinstance(x, torch.Tensor):
            if self.gpu:
                torch.cuda.synchronize()
            x = x.detach().cpu()
            return x.to(torch.float64 if x.is_floating_point() else torch.int64).numpy()
        return x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)

    def strides(self, x):
        if isinstance(x, np.ndarray):
            return tuple(s // x.itemsize for s in x.strides)
        return tuple(x.stride())

    def interp(self, kernel, grid, *args, **kw):
        """Runs the launch on the interpreter on host copies of the array
        arguments and returns those copies (None for non-arrays)."""
        torch = _torch()
        copies = []
        for a in args:
            if torch is not None and isinstance(a, torch.Tensor):
                torch.cuda.synchronize()
                copies.append(a.detach().cpu().clone())
            else:
                copies.append(a)
        old = os.environ.get("TK_INTERPRET")
        os.environ["TK_INTERPRET"] = "1"
        try:
            kernel[grid](*copies, **kw)
        finally:
            if old is None:
                del os.environ["TK_INTERPRET"]
            else:
                os.environ["TK_INTERPRET"] = old
        return [c if hasattr(c, "shape") else None for c in copies]


@pytest.fixture(params=["interp", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request):
    seed = zlib.crc32(request.node.name.encode())
    return Backend(request.param, seed)


def check(got, want, atol=0.0, rtol=0.0, what=""):
    """Elementwise |got - want| <= atol + rtol * |want|, with the worst
    element named on failure. NaN where `want` is finite fails."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    bad = ~(err <= bound)
    if bad.any():
        idx = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(err - bound, nan=np.inf),
                                                  -np.inf)), got.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {got.size} elements out of tolerance "
            f"(atol={atol}, rtol={rtol}); worst at {tuple(int(i) for i in idx)}: "
            f"got {got[idx]!r}, want {want[idx]!r}")


def check_norm(got, want, rel, what=""):
    """max |got - want| <= rel * max |want|: the bound for matmuls, whose
    per-element error scales with the row norms rather than the element."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.isfinite(got).all(), f"{what}: {int((~np.isfinite(got)).sum())} non-finite values"
    scale = np.abs(want).max()
    err = np.abs(got - want).max()
    assert err <= rel * scale, f"{what}: max error {err:.3g} > {rel} * max |want| {scale:.3g}"


def run_in_child(module, function):
    """Runs `module.function(Backend("gpu", 5))` in a process of its own and
    fails with its output unless it prints "ok": for GPU cases not yet seen
    on a GPU, since a kernel that faults poisons its process's CUDA context
    and with it every later GPU test of the run."""
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    code = (f"import {module} as m, acc_common as c; m.{function}(c.Backend('gpu', 5)); "
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(__file__), env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.stdout[-2000:] +
                                                                   r.stderr[-3000:])
