"""Python launches on the amdgcn target against the stand-in HIP runtime
(tests/unit/driver/HipDriverFake.c), in a process of its own: the stand-in
is loaded before tk looks for libamdhip64.so. Run by
test_amdgpu_target.py with TK_TARGET=amdgcn:

    python3 amdgpu_fake_checks.py /path/to/libamdhip64.so

Checks that the first launch (the Python side) and later ones (the C++ fast
path) write the kernarg bytes the code object's metadata describes, packed
through HIP's `extra` and as kernelParams, on the code object's workgroup;
that scalars of each kind land at their offsets; and that HIP's errors come
back as tk.DriverError with HIP's names."""

import ctypes
import os
import struct
import sys

fake = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
fake.fake_hip_last_kernarg.restype = ctypes.c_size_t
fake.fake_hip_last_stream.restype = ctypes.c_uint64

import tk  # noqa: E402  (after the stand-in is loaded)
from ptx_compile_util import CudaArray  # noqa: E402
from test_amdgpu_target import add  # noqa: E402  (the test's vector add)

ok, name = tk._C.hip_available()
assert ok and name == "Fake AMD Instinct MI300X", (ok, name)


def kernarg():
    buffer = (ctypes.c_ubyte * 4096)()
    n = fake.fake_hip_last_kernarg(buffer, 4096)
    return bytes(buffer[:n])


def set_layout(offsets, sizes):
    fake.fake_hip_set_kernarg_layout((ctypes.c_uint * len(offsets))(*offsets),
                                     (ctypes.c_uint * len(sizes))(*sizes), len(offsets))


x, y, out = CudaArray(0x7F0000010000), CudaArray(0x7F0000020000), CudaArray(0x7F0000030000)
want = struct.pack("<QQQi", 0x7F0000010000, 0x7F0000020000, 0x7F0000030000, 4000)
set_layout([0, 8, 16, 24], [8, 8, 8, 4])
for how in ("packed", "array"):
    tk._C._set_launch_params(how)
    for launch in range(3):  # the first through Python, the others the C++ fast path
        before = fake.fake_hip_launch_count()
        k = add[(5, 2)](x, y, out, 4000, BLOCK=1024, stream=0x5000 + launch)
        assert fake.fake_hip_launch_count() == before + 1
        assert kernarg() == want, (how, launch, kernarg().hex(), want.hex())
        assert fake.fake_hip_last_used_extra() == (how == "packed"), how
        assert [fake.fake_hip_last_grid(i) for i in range(3)] == [5, 2, 1]
        threads = k._compiled.threads_per_program
        assert threads % 64 == 0 and fake.fake_hip_last_block(0) == threads
        assert fake.fake_hip_last_stream() == 0x5000 + launch
tk._C._set_launch_params("packed")
assert k.metadata.target == "amdgcn" and "s_endpgm" in k.asm["amdgcn"]
assert k.n_regs == 34 and k.n_spills == 0  # hipFuncGetAttribute's, the stand-in's


@tk.jit
def scalars(out_ptr, b, i, l, f, d):
    tk.store(out_ptr, f)


# A Python float is fp32 (Triton's rule): two 4-byte slots at 24 and 28.
set_layout([0, 8, 12, 16, 24, 28], [8, 1, 4, 8, 4, 4])
scalars[(1,)](out, True, -7, -(1 << 40), 0.75, 2.5)
assert kernarg() == struct.pack("<Q?xxxiqff", 0x7F0000030000, True, -7, -(1 << 40), 0.75,
                                2.5), kernarg().hex()

os.environ["FAKE_HIP_LAUNCH_ERROR"] = "719"
try:
    add[(1,)](x, y, out, 4000, BLOCK=1024)
    raise AssertionError("the launch should have failed")
except tk.DriverError as e:
    assert "hipModuleLaunchKernel failed: hipErrorLaunchFailure (unspecified launch failure)" in \
        str(e), str(e)
del os.environ["FAKE_HIP_LAUNCH_ERROR"]

print("amdgpu fake checks passed")
