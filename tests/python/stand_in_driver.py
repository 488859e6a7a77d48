"""The stand-in CUDA driver (fake_cuda.c) as the checks scripts
fake_gpu_checks.py and fake_torch_checks.py use it: loaded before tk looks
for libcuda.so.1, then asked what the last launch passed.

    fake = stand_in_driver.load(sys.argv[1])
    stand_in_driver.set_sizes(8, 8, 8, 4)  # the parameter sizes of the next launches
    kernel[grid](x, y, out, n, BLOCK=1024)
    assert stand_in_driver.params(4) == [x_addr, y_addr, out_addr, n]
"""

import ctypes

fake = None


def load(path):
    global fake
    fake = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    fake.fake_last_param.restype = ctypes.c_uint64
    fake.fake_last_stream.restype = ctypes.c_uint64
    return fake


def set_sizes(*sizes):
    fake.fake_set_param_sizes((ctypes.c_int * len(sizes))(*sizes), len(sizes))


def params(n):
    return [fake.fake_last_param(i) for i in range(n)]
