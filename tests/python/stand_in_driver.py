"""The stand-in CUDA driver (fake_cuda.c) as the checks scripts
fake_gpu_checks.py and fake_torch_checks.py use it: loaded before tk looks
for libcuda.so.1, then asked what the last launch passed.

    fake = stand_in_driver.load(sys.argv[1])
    stand_in_driver.set_sizes(8, 8, 8, 4)  # the parameter sizes of the next launches
    kernel[grid](x, y, out, n, BLOCK=1024)
    assert stand_in_driver.params(4) == [x_addr, y_addr, out_addr, n]

`build(directory)` compiles it (the `fake_libcuda` fixture of conftest.py
and tests/robustness/conftest.py).
"""

import ctypes
import pathlib
import shutil
import subprocess

fake = None


def build(directory):
    """fake_cuda.c compiled to DIRECTORY/libcuda.so.1: its path, or None
    where there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    out = pathlib.Path(directory) / "libcuda.so.1"
    source = pathlib.Path(__file__).parent / "fake_cuda.c"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o", str(out),
                    str(source)], check=True)
    return out


def load(path):
    global fake
    fake = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    fake.fake_last_param.restype = ctypes.c_uint64
    fake.fake_last_stream.restype = ctypes.c_uint64
    fake.fake_encode_field.restype = ctypes.c_uint64
    return fake


def set_sizes(*sizes):
    fake.fake_set_param_sizes((ctypes.c_int * len(sizes))(*sizes), len(sizes))


def params(n):
    return [fake.fake_last_param(i) for i in range(n)]
