"""The launcher's torch path (python/src/TorchAbi.h: tensors and the stream
read through libtorch's exported C functions) on real torch tensors against
the stand-in CUDA driver (fake_cuda.c). CPU tensors stand in for cuda:0's
through tk._C._set_stand_in_torch(True); everything else is the GPU launch
path as it runs on the GPU machine.

Run by test_gpu_launch_fake.py in its own process when torch is installed:

    python3 fake_torch_checks.py /path/to/fake/libcuda.so.1

Each check prints "ok NAME"; the first failure raises.
"""

import os
import sys

from stand_in_driver import load, params, set_sizes  # noqa: E402

fake = load(sys.argv[1])
os.environ.pop("TK_INTERPRET", None)
os.environ.pop("TK_TORCH_ABI", None)

try:
    import torch
except ImportError as e:  # installed but not loadable here (a CUDA wheel without its libraries)
    print("SKIP torch does not import:", e)
    sys.exit(0)

import tk  # noqa: E402

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


@tk.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


def raises(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError(f"no {exc.__name__}")


x, y, out = (torch.rand(4096) for _ in range(3))
GRID = (2,)


@check
def cpu_tensors_are_refused_outside_the_stand_in_mode():
    tk._C._set_stand_in_torch(False)
    raises(TypeError, lambda: add_kernel[GRID](x, y, out, 4096, BLOCK=1024), "x_ptr", "cpu")
    # The refusal came through the C reads: the probe agreed and they ran.
    assert tk._C._torch_abi().startswith("on"), tk._C._torch_abi()
    assert tk._C._torch_abi_reads() > 0


@check
def tensors_are_read_through_libtorch():
    tk._C._set_stand_in_torch(True)
    set_sizes(8, 8, 8, 4)
    view = y[3:]  # a storage offset: data_ptr() includes it, and it is not 16-aligned
    before = tk._C._torch_abi_reads()
    k = add_kernel[GRID](x, view, out, 4093, BLOCK=1024)
    assert tk._C._torch_abi_reads() == before + 3
    assert params(4) == [x.data_ptr(), view.data_ptr(), out.data_ptr(), 4093], params(4)
    assert k.signature == "*fp32:16, *fp32, *fp32:16, i32", k.signature
    for _ in range(10):  # the same key again: found, not compiled
        add_kernel[GRID](x, view, out, 4093, BLOCK=1024)
    assert tk._C._torch_abi_reads() == before + 33


@check
def the_key_is_the_same_through_python_reads():
    set_sizes(8, 8, 8, 4)
    add_kernel[GRID](x, y, out, 4096, BLOCK=1024)
    key, entries = add_kernel._launcher.last_key, add_kernel._launcher.num_entries
    tk._C._set_torch_abi(False)
    try:
        before = tk._C._torch_abi_reads()
        add_kernel[GRID](x, y, out, 4096, BLOCK=1024)
        assert tk._C._torch_abi_reads() == before  # the descriptors this time
        assert add_kernel._launcher.last_key == key
        assert add_kernel._launcher.num_entries == entries
        assert params(4) == [x.data_ptr(), y.data_ptr(), out.data_ptr(), 4096]
    finally:
        tk._C._set_torch_abi(True)
    assert tk._C._torch_abi().startswith("on")


@check
def dtypes_parameters_and_subclasses():
    set_sizes(8, 8, 8, 4)
    entries = add_kernel._launcher.num_entries
    h = [torch.rand(1024).half() for _ in range(3)]
    k = add_kernel[GRID](*h, 1024, BLOCK=1024)
    assert k.signature == "*fp16:16, *fp16:16, *fp16:16, i32:16", k.signature
    assert add_kernel._launcher.num_entries == entries + 1
    assert params(3) == [t.data_ptr() for t in h]
    i64 = torch.arange(1024)
    k = add_kernel[GRID](i64, i64, i64, 1024, BLOCK=1024)
    assert k.signature.startswith("*i64:16"), k.signature

    # nn.Parameter is read in C too; a subclass goes through its methods.
    p = torch.nn.Parameter(torch.rand(1024))

    class Sub(torch.Tensor):
        pass

    s = torch.rand(1024).as_subclass(Sub)
    before = tk._C._torch_abi_reads()
    add_kernel[GRID](p, s, out, 1024, BLOCK=1024)
    assert tk._C._torch_abi_reads() == before + 2  # p and out, not s
    assert params(3) == [p.data_ptr(), s.data_ptr(), out.data_ptr()]


@check
def other_devices_and_empty_tensors():
    set_sizes(8, 8, 8, 4)
    meta = torch.empty(1024, device="meta")
    raises(TypeError, lambda: add_kernel[GRID](meta, y, out, 1024, BLOCK=1024), "x_ptr", "meta")
    empty = torch.empty(0)
    add_kernel[GRID](empty, y, out, 0, BLOCK=1024)
    assert params(1) == [empty.data_ptr()]


@check
def sparse_tensors_are_refused_without_torch_logging():
    # read() checks the layout first: asking libtorch for a sparse tensor's
    # data pointer would make its shim log the exception to stderr.
    import tempfile

    sparse = torch.rand(8, 8).to_sparse()
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            raises(RuntimeError, lambda: add_kernel[GRID](sparse, y, out, 64, BLOCK=64),
                   "storage")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        logged = err.read().decode()
    assert "aoti_torch" not in logged, logged


@check
def a_launch_allocates_no_python_objects():
    import gc

    set_sizes(8, 8, 8, 4)
    launch = add_kernel[GRID]
    launch(x, y, out, 4096, BLOCK=1024)
    gc.collect()
    blocks = sys.getallocatedblocks()
    for _ in range(1000):
        launch(x, y, out, 4096, BLOCK=1024)
    grown = sys.getallocatedblocks() - blocks
    assert grown < 50, grown


for fn in CHECKS:
    fn()
    print("ok", fn.__name__, flush=True)
tk._C._set_stand_in_torch(False)
print("all", len(CHECKS), "checks passed;", "torch ABI:", tk._C._torch_abi())
