"""The GPU launch path against a stand-in CUDA driver (fake_cuda.c), so it is
tested on every machine, CI included: binding and the specialisation key in
C++ (python/src/GpuLauncher.h), the kernel map, argument packing into the
driver's parameter array, streams, globals guards, and the errors. The checks
live in fake_gpu_checks.py and run in a process of their own, since the
stand-in must be loaded before tk looks for libcuda.so.1."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent


def test_gpu_launch_path_against_a_stand_in_driver(fake_libcuda, tmp_path):
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    env["TK_CACHE_DIR"] = str(tmp_path / "cache")  # no user cache: every kernel compiles
    r = subprocess.run([sys.executable, str(HERE / "fake_gpu_checks.py"), str(fake_libcuda)],
                       env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed" in r.stdout
    assert "host time per launch" in r.stdout


def test_torch_tensors_through_libtorch_against_a_stand_in_driver(fake_libcuda, tmp_path):
    """fake_torch_checks.py: torch tensors read through libtorch's C
    functions (python/src/TorchAbi.h) on the launch path; needs torch."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    env["TK_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(HERE / "fake_torch_checks.py"), str(fake_libcuda)],
                       env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout)
    if r.returncode == 0 and r.stdout.startswith("SKIP"):
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed" in r.stdout and "torch ABI: on" in r.stdout
