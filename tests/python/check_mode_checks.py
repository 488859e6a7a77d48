"""TK_CHECK=1 against the stand-in CUDA driver (fake_cuda.c), whose launches
do what a hook in this script says: what the launched PTX computes (x + y,
or x - y for the PTX compiled with TK_TEST_MISCOMPILE=1, whose float adds
are subtracts), or that with one element wrong. Device memory is host memory under the
stand-in, so numpy arrays behind a __cuda_array_interface__ play the GPU's
tensors. Run by test_check_mode.py in a process of its own:

    python3 check_mode_checks.py /path/to/fake/libcuda.so.1

Each check prints "ok NAME"; the first failure raises.
"""

import ctypes
import os
import re
import sys

from stand_in_driver import load, set_sizes  # noqa: E402

fake = load(sys.argv[1])
os.environ.pop("TK_INTERPRET", None)
os.environ["TK_ARCH"] = "sm_90"
# The stand-in "runs" a kernel by reading the PTX it was loaded from: the
# driver's JIT gets the PTX itself, where ptxas would hand it a cubin.
os.environ["TK_PTX_COMPILER"] = "driver"

import numpy as np  # noqa: E402

import tk  # noqa: E402


@tk.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


STORE_LINE = next(i for i, line in enumerate(open(__file__), 1) if "tk.store(out_ptr" in line)


class Gpu:
    """A numpy array as a GPU array: its host address is the stand-in's
    device memory."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"data": (a.ctypes.data, False), "typestr": "<f4",
                                         "shape": a.shape, "strides": None, "version": 3}


# Which element the "GPU" gets wrong at each launch: set by each check.
behaviour = {"wrong": None}


def array_at(address, n):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(address))


@ctypes.CFUNCTYPE(None, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                  ctypes.POINTER(ctypes.c_uint64))
def hook(gx, gy, gz, params):
    if behaviour.get("tma"):
        return tma_hook(params)
    x_addr, y_addr, out_addr, n = params[0], params[1], params[2], params[3] & 0xFFFFFFFF
    n = min(n, gx * 128)
    x, y, out = array_at(x_addr, n), array_at(y_addr, n), array_at(out_addr, n)
    # What the launched kernel's PTX computes: the stand-in keeps the text
    # of the module it was loaded from.
    ptx = fake.fake_last_image().decode()
    assert ("add.f32" in ptx) != ("sub.f32" in ptx), ptx
    out[:] = x + y if "add.f32" in ptx else x - y
    if behaviour["wrong"] is not None:
        out[behaviour["wrong"]] += 0.5


def tma_hook(params):
    """What tma_rows computes (TK_TMA=1): params are the descriptor's base,
    sizes and row stride, its CUtensorMap (the first 8 bytes here), the
    output and the row offset."""
    base, m, n, stride = params[0], params[1] & 0xFFFFFFFF, params[2] & 0xFFFFFFFF, params[3]
    out_addr, off = params[5], params[6] & 0xFFFFFFFF
    ptx = fake.fake_last_image().decode()
    assert "cp.async.bulk.tensor.2d" in ptx and "tma_rows_param_4[128]" in ptx, ptx
    src = array_at(base, m * stride).reshape(m, stride)[:, :n]
    out = array_at(out_addr, 8 * 16).reshape(8, 16)
    block = np.zeros((8, 16), np.float32)
    rows = src[off:off + 8, :16]
    block[:rows.shape[0], :rows.shape[1]] = rows
    out[:] = block
    if behaviour["wrong"] is not None:
        out.flat[behaviour["wrong"]] += 0.5


fake.fake_last_image.restype = ctypes.c_char_p
fake.fake_set_launch_hook(hook)
set_sizes(8, 8, 8, 4)
rng = np.random.default_rng(7)

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def arrays(n):
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = rng.uniform(-2, 2, n).astype(np.float32)
    return x, y, np.zeros(n, np.float32)


def launch(x, y, out, n):
    return add_kernel[(tk.cdiv(n, 128),)](Gpu(x), Gpu(y), Gpu(out), n, BLOCK=128)


@check
def a_right_launch_passes_and_keeps_its_summary():
    behaviour.update(wrong=None)
    x, y, out = arrays(1000)
    k = launch(x, y, out, 1000)
    assert np.array_equal(out, x + y)
    assert k.last_check == "TK_CHECK: 'add_kernel': 8 of 8 programs, 1000 stored elements as on " \
                           "the GPU", k.last_check


@check
def one_wrong_element_is_reported_at_its_store():
    behaviour.update(wrong=900)
    x, y, out = arrays(1000)
    try:
        launch(x, y, out, 1000)
    except tk.CheckError as e:
        text = str(e)
    else:
        raise AssertionError("no CheckError")
    assert f"check_mode_checks.py:{STORE_LINE}:5: error: TK_CHECK: 'add_kernel' stored " \
           "different values on the GPU and on the interpreter in program (7, 0, 0): element 900 " \
           "of 'out_ptr' (byte 3600 of its buffer) is" in text, text
    right = float(x[900] + y[900])
    m = re.search(r"is (\S+) on the GPU and (\S+) on the interpreter \(fp32: ", text)
    assert m and abs(float(m[1]) - (right + 0.5)) < 1e-6 and abs(float(m[2]) - right) < 1e-6, text
    assert "tk.store(out_ptr + offs" in text, text
    assert out[900] == np.float32(right + 0.5), "the GPU's results stay in the caller's tensors"


@check
def large_grids_are_sampled_and_their_last_program_checked():
    behaviour.update(wrong=None)
    n = 128 * 1000 - 3
    x, y, out = arrays(n)
    k = launch(x, y, out, n)
    assert k.last_check.startswith("TK_CHECK: 'add_kernel': 64 of 1000 programs, 8189 stored "), \
        k.last_check
    behaviour["wrong"] = n - 1
    try:
        launch(x, y, out, n)
        raise AssertionError("no CheckError")
    except tk.CheckError as e:
        assert "in program (999, 0, 0)" in str(e), e


@check
def an_in_place_kernel_is_checked_on_the_inputs_before_the_launch():
    behaviour.update(wrong=None)
    x, y, _ = arrays(300)
    before = x.copy()
    k = add_kernel[(3,)](Gpu(x), Gpu(y), Gpu(x), 300, BLOCK=128)
    assert np.array_equal(x, before + y)
    assert "300 stored elements as on the GPU" in k.last_check, k.last_check


@check
def the_miscompile_knob_changes_the_code_and_the_check_catches_it():
    behaviour.update(wrong=None)
    x, y, out = arrays(1000)
    plain = launch(x, y, out, 1000).asm["ptx"]
    os.environ["TK_TEST_MISCOMPILE"] = "1"
    try:
        k = add_kernel.warmup(Gpu(x), Gpu(y), Gpu(out), 1000, BLOCK=128)
        miscompiled = k.asm["ptx"]
        assert "add.f32" in plain and "sub.f32" not in plain
        assert "sub.f32" in miscompiled and "add.f32" not in miscompiled, miscompiled
        # The launch after the knob changed runs the miscompiled PTX (the
        # launcher's key has the code knobs), which the stand-in computes.
        try:
            launch(x, y, out, 1000)
            raise AssertionError("no CheckError: the launch ran the kernel compiled before")
        except tk.CheckError as e:
            assert "in program (0, 0, 0): element 0 of 'out_ptr'" in str(e), e
        assert np.array_equal(out, x - y)
    finally:
        del os.environ["TK_TEST_MISCOMPILE"]
    assert launch(x, y, out, 1000).asm["ptx"] == plain, "the knob is in the key"
    assert np.array_equal(out, x + y)


@check
def a_code_knob_set_between_launches_reaches_the_next_launch():
    # Without TK_CHECK too: the launcher's fast path keys on the code knobs.
    behaviour.update(wrong=None)
    x, y, out = arrays(1000)
    os.environ.pop("TK_CHECK")
    try:
        launch(x, y, out, 1000)
        assert np.array_equal(out, x + y)
        os.environ["TK_TEST_MISCOMPILE"] = "1"
        launch(x, y, out, 1000)
        assert np.array_equal(out, x - y), "the launch ran the kernel compiled before the knob"
        del os.environ["TK_TEST_MISCOMPILE"]
        launch(x, y, out, 1000)
        assert np.array_equal(out, x + y)
    finally:
        os.environ.pop("TK_TEST_MISCOMPILE", None)
        os.environ["TK_CHECK"] = "1"


@check
def without_the_knob_nothing_is_checked():
    behaviour.update(wrong=5)
    os.environ.pop("TK_CHECK")
    try:
        x, y, out = arrays(1000)
        launch(x, y, out, 1000)  # wrong, and not noticed
        assert out[5] == np.float32(x[5] + y[5] + np.float32(0.5))
    finally:
        os.environ["TK_CHECK"] = "1"


@check
def an_empty_grid_launches_nothing():
    behaviour.update(wrong=None)
    x, y, out = arrays(16)
    before = fake.fake_launch_count()
    add_kernel[(0,)](Gpu(x), Gpu(y), Gpu(out), 16, BLOCK=128)
    assert fake.fake_launch_count() == before


@tk.jit
def tma_rows(src, out_ptr, off):
    x = src.load([off, 0])
    tk.store(out_ptr + tk.arange(0, 8)[:, None] * 16 + tk.arange(0, 16)[None, :], x)


@check
def a_tma_descriptor_is_checked_against_the_pointer_path():
    # TK_TMA=1: the GPU kernel takes the CUtensorMap and loads through TMA;
    # the interpreter's reference loads the same block through pointers
    # (rows past the tensor zero), and a wrong element is still caught.
    from tk.tools.tensor_descriptor import TensorDescriptor

    class GpuTensor:
        """A 2-D fp32 numpy array as a GPU tensor a descriptor can take."""

        def __init__(self, a):
            self.a, self.dtype = a, np.dtype(np.float32)

        @property
        def __cuda_array_interface__(self):
            return {"data": (self.a.ctypes.data, False), "typestr": "<f4",
                    "shape": (self.a.size,), "strides": None, "version": 3}

    os.environ["TK_TMA"], os.environ["TK_ARCH"] = "1", "sm_90a"
    set_sizes(8, 4, 4, 8, 128, 8, 4)
    try:
        src = rng.uniform(-2, 2, (13, 20)).astype(np.float32)  # 13 x 12 of it, rows of 20
        out = np.zeros((8, 16), np.float32)
        desc = TensorDescriptor(GpuTensor(src), [13, 12], [20, 1], [8, 16])
        behaviour.update(wrong=None, tma=True)
        k = tma_rows[(1,)](desc, Gpu(out), 9)
        assert ",tma>" in k.signature, k.signature
        want = np.zeros((8, 16), np.float32)
        want[:4, :12] = src[9:13, :12]
        # The hook plays TMA with the descriptor's sizes (the box's zero fill).
        assert np.array_equal(out[:4, :12], want[:4, :12]), out
        assert k.last_check.startswith("TK_CHECK: 'tma_rows': 1 of 1 programs"), k.last_check
        behaviour.update(wrong=5)
        try:
            tma_rows[(1,)](desc, Gpu(out), 9)
        except tk.CheckError as e:
            assert "element 5 of 'out_ptr'" in str(e), e
        else:
            raise AssertionError("no CheckError")
    finally:
        behaviour.update(wrong=None, tma=False)
        os.environ.pop("TK_TMA")
        os.environ["TK_ARCH"] = "sm_90"
        set_sizes(8, 8, 8, 4)


os.environ["TK_CHECK"] = "1"
for fn in CHECKS:
    fn()
    print("ok", fn.__name__)
print(f"{len(CHECKS)} checks passed")
