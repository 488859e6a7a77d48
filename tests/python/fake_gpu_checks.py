"""The GPU launch path of `kernel[grid](...)` against a stand-in CUDA driver
(fake_cuda.c), so that binding, the specialisation key, the kernel map,
argument packing, guards and errors are tested on machines without a GPU.

Run by test_gpu_launch_fake.py in its own process (the stand-in must be
loaded before tk looks for libcuda.so.1):

    python3 fake_gpu_checks.py /path/to/fake/libcuda.so.1

Each check prints "ok NAME"; the first failure raises.
"""

import ctypes
import os
import struct
import sys
import time

from stand_in_driver import load, params, set_sizes  # noqa: E402

fake = load(sys.argv[1])
os.environ.pop("TK_INTERPRET", None)

import numpy as np  # noqa: E402

import tk  # noqa: E402

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


float32, float16, complex64 = FakeDType("torch.float32"), FakeDType("torch.float16"), \
    FakeDType("torch.complex64")


class FakeDevice:
    def __init__(self, type, index):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTensor:
    """What the launcher sees of a torch tensor: data_ptr(), dtype, device,
    get_device(); its module makes the launcher treat it as torch's."""

    __module__ = "torch.fake"

    def __init__(self, ptr, dtype=float32, device=("cuda", 0)):
        self.ptr, self.dtype, self.device = ptr, dtype, FakeDevice(*device)

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return -1 if self.device.type == "cpu" else self.device.index


class FakeCupy:
    """A CuPy-like array: __cuda_array_interface__ only."""

    def __init__(self, ptr, typestr="<f4", n=16):
        self.ptr, self.typestr, self.n = ptr, typestr, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "typestr": self.typestr, "shape": (self.n,),
                "version": 3}


@tk.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


SCALE = 2.0


@tk.jit
def scale_kernel(x_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


@tk.jit
def scalars_kernel(x_ptr, a, flag, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    v = tk.load(x_ptr + offs)
    if flag:
        v = v * a
    tk.store(x_ptr + offs, v)


X, Y, OUT = 0x7000_0000_0000, 0x7000_0010_0000, 0x7000_0020_0000


@check
def launch_passes_pointers_and_scalars():
    before = fake.fake_launch_count()
    set_sizes(8, 8, 8, 4)
    k = add_kernel[(3,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024)
    assert fake.fake_launch_count() == before + 1
    assert [fake.fake_last_grid(i) for i in range(3)] == [3, 1, 1]
    assert fake.fake_last_block(0) == 128  # 4 warps
    assert params(4) == [X, Y, OUT, 3000], params(4)
    assert k.signature == "*fp32:16, *fp32:16, *fp32:16, i32:8", k.signature
    assert ".entry add_kernel" in k.asm["ptx"]
    assert k.n_regs == 40 and k.n_spills == 0 and k.shared == 0


@check
def second_launch_reuses_the_entry():
    set_sizes(8, 8, 8, 4)
    n_entries, n_cache = add_kernel._launcher.num_entries, len(add_kernel.cache)
    add_kernel[(5,)](FakeTensor(X + 64), FakeTensor(Y + 32), FakeTensor(OUT), 3000, BLOCK=1024)
    assert add_kernel._launcher.num_entries == n_entries
    assert len(add_kernel.cache) == n_cache
    assert params(4) == [X + 64, Y + 32, OUT, 3000]
    assert fake.fake_last_grid(0) == 5


@check
def key_separates_alignment_divisibility_and_range():
    set_sizes(8, 8, 8, 4)
    base = add_kernel._launcher.num_entries
    k1 = add_kernel[(1,)](FakeTensor(X + 4), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024)
    assert k1.signature == "*fp32, *fp32:16, *fp32:16, i32:8", k1.signature
    k2 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 4096, BLOCK=1024)
    assert k2.signature.endswith("i32:16"), k2.signature
    k3 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 1, BLOCK=1024)
    assert k3.signature.endswith("i32:1"), k3.signature
    set_sizes(8, 8, 8, 8)
    k4 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 2**40 + 3, BLOCK=1024)
    assert k4.signature.endswith("i64"), k4.signature
    assert params(4)[3] == 2**40 + 3
    k5 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=512)
    assert k5.constants == {"BLOCK": 512}
    # 8 | n but not 16 (":8") and an odd n are two keys, both apart from 16 | n
    set_sizes(8, 8, 8, 4)
    k6 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3001, BLOCK=1024)
    assert k6.signature.endswith(", i32"), k6.signature
    # (3016 takes the entry the first check made for 3000)
    k7 = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3016, BLOCK=1024)
    assert k7.signature == "*fp32:16, *fp32:16, *fp32:16, i32:8" and k7 is not k6, k7.signature
    assert add_kernel._launcher.num_entries == base + 6


@check
def do_not_specialize_drops_the_facts():
    @tk.jit(do_not_specialize=["n"])
    def dns_kernel(x_ptr, n, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    set_sizes(8, 4)
    a = dns_kernel[(1,)](FakeTensor(X), 16, BLOCK=64)
    b = dns_kernel[(1,)](FakeTensor(X), 17, BLOCK=64)
    assert a is b and a.signature == "*fp32:16, i32", a.signature
    assert dns_kernel._launcher.num_entries == 1


@check
def callable_grid_sees_the_meta_parameters():
    set_sizes(8, 8, 8, 4)
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (tk.cdiv(meta["n"], meta["BLOCK"]),)

    add_kernel[grid](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 5000, BLOCK=1024,
                     num_warps=8)
    assert fake.fake_last_grid(0) == 5
    assert seen["BLOCK"] == 1024 and seen["n"] == 5000 and seen["num_warps"] == 8
    assert fake.fake_last_block(0) == 256


@check
def streams():
    set_sizes(8, 8, 8, 4)
    add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024,
                     stream=0x1234)
    assert fake.fake_last_stream() == 0x1234

    class TorchLikeStream:
        cuda_stream = 0x5678

    add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024,
                     stream=TorchLikeStream())
    assert fake.fake_last_stream() == 0x5678
    add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024)
    assert fake.fake_last_stream() == 0  # no torch: the default stream


@check
def cuda_array_interface_objects():
    set_sizes(8, 8, 8, 4)
    k = add_kernel[(1,)](FakeCupy(X), FakeCupy(Y), FakeCupy(OUT), 16, BLOCK=16)
    assert params(4) == [X, Y, OUT, 16]
    assert k.signature == "*fp32:16, *fp32:16, *fp32:16, i32:16"
    k = add_kernel[(1,)](FakeCupy(X, "<f2"), FakeCupy(Y, "<f2"), FakeCupy(OUT, "<f2"), 16,
                         BLOCK=16)
    assert k.signature.startswith("*fp16:16"), k.signature


@check
def scalar_kinds():
    set_sizes(8, 4, 1)
    k = scalars_kernel[(1,)](FakeTensor(X), 1.5, True, BLOCK=32)
    assert k.signature == "*fp32:16, fp32, i1", k.signature
    p = params(3)
    assert struct.unpack("<f", struct.pack("<I", p[1]))[0] == 1.5 and p[2] == 1
    scalars_kernel[(1,)](FakeTensor(X), -2.0, False, BLOCK=32)
    p = params(3)
    assert struct.unpack("<f", struct.pack("<I", p[1]))[0] == -2.0 and p[2] == 0


@tk.jit
def sized_scalars_kernel(x_ptr, h, b8, d, s16, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.load(x_ptr + offs) * h + b8 + d + s16)


@check
def sized_scalar_kinds_from_numpy_scalars():
    # np.float16 / np.int8 / np.int16 arguments keep their width: fp16 bits,
    # one byte, two bytes in the parameter buffer. np.float64 is a Python
    # float, so fp32 (4 bytes) as in Triton.
    set_sizes(8, 2, 1, 4, 2)
    for h, b8, d, s16 in ((1.5, -3, 0.1, 300), (-65504.0, 127, -2.5e30, -32768)):
        k = sized_scalars_kernel[(1,)](FakeTensor(X), np.float16(h), np.int8(b8), np.float64(d),
                                       np.int16(s16), BLOCK=32)
        assert k.signature == "*fp32:16, fp16, i8, fp32, i16", k.signature
        p = params(5)
        assert p[1] == int(np.float16(h).view(np.uint16)), (hex(p[1]), h)
        assert p[2] == b8 & 0xFF and p[4] == s16 & 0xFFFF, p
        assert struct.unpack("<f", struct.pack("<I", p[3]))[0] == np.float32(d), (p, d)
    # The C++ launcher keys an np.float64 like a float: one entry for both,
    # and a keyed (fast path) launch.
    set_sizes(8, 4, 1)
    n_entries = scalars_kernel._launcher.num_entries
    for a in (0.75, np.float64(-1.25), np.float64(3.5)):
        k = scalars_kernel[(1,)](FakeTensor(X), a, True, BLOCK=32)
        assert k.signature.split(", ")[1] == "fp32", k.signature
        assert scalars_kernel._launcher.last_key != b""
        assert struct.unpack("<f", struct.pack("<I", params(2)[1]))[0] == a
    assert scalars_kernel._launcher.num_entries <= n_entries + 1


def raises(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), f"{w!r} not in {e}"
        return e
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


@check
def argument_errors_name_the_argument():
    t = FakeTensor(X)
    raises(TypeError, lambda: add_kernel[(1,)](t, t, t, 10, 20, 30, BLOCK=4), "takes 5 arguments")
    raises(TypeError, lambda: add_kernel[(1,)](t, t, t, 10, BLOK=4), "BLOK", "did you mean 'BLOCK'")
    raises(TypeError, lambda: add_kernel[(1,)](t, t, t, BLOCK=4), "missing 1 argument", "'n'")
    raises(TypeError, lambda: add_kernel[(1,)](t, FakeTensor(Y, device=("cpu", None)), t, 10,
                                              BLOCK=4), "'y_ptr'", "CPU", "cuda()")
    raises(TypeError, lambda: add_kernel[(1,)](t, t, FakeTensor(OUT, device=("cuda", 1)), 10,
                                              BLOCK=4), "'out_ptr'", "cuda:1", "cuda:0")
    raises(TypeError, lambda: add_kernel[(1,)](np.zeros(4, np.float32), t, t, 10, BLOCK=4),
           "'x_ptr'", "CPU array")
    raises(TypeError, lambda: add_kernel[(1,)](FakeTensor(X, complex64), t, t, 10, BLOCK=4),
           "'x_ptr'", "complex64")
    # A string is a compile-time constant, as in Triton: the kernel says
    # where it cannot use one.
    raises(tk.CompilationError, lambda: add_kernel[(1,)](t, t, t, "ten", BLOCK=4), "'ten'",
           "offs < n")
    raises(TypeError, lambda: add_kernel[(1,)](t, t, t, object(), BLOCK=4), "'n'", "object")
    raises(ValueError, lambda: add_kernel[(1, 70000)](t, t, t, 10, BLOCK=4), "grid")
    raises(TypeError, lambda: add_kernel["x"](t, t, t, 10, BLOCK=4), "grid")
    raises(ValueError, lambda: add_kernel[(1,)](t, t, t, 10, BLOCK=4, num_warps=3), "num_warps")


@check
def a_changed_global_recompiles():
    global SCALE
    set_sizes(8, 4)
    a = scale_kernel[(1,)](FakeTensor(X), 100, BLOCK=128)
    assert "2.0" in a.asm["ir"] or "2.000000e+00" in a.asm["ir"], a.asm["ir"]
    SCALE = 3.0
    b = scale_kernel[(1,)](FakeTensor(X), 100, BLOCK=128)
    assert b is not a and "3.0" in b.asm["ir"] or "3.000000e+00" in b.asm["ir"]
    SCALE = 2.0
    c = scale_kernel[(1,)](FakeTensor(X), 100, BLOCK=128)
    assert c is a  # the Python cache still has the first compile


@check
def zero_grid_launches_nothing():
    set_sizes(8, 8, 8, 4)
    before = fake.fake_launch_count()
    add_kernel[(0,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024)
    add_kernel[lambda m: (0, 1)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=1024)
    assert fake.fake_launch_count() == before


@check
def out_of_resources_and_driver_errors():
    @tk.jit
    def big_kernel(x_ptr, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.load(x_ptr + offs) + 1)

    os.environ["FAKE_CUDA_LOAD_ERROR"] = (
        "ptxas error   : Entry function 'big_kernel' uses too much shared data (0x20000 bytes, "
        "0xc000 max)")
    try:
        e = raises(tk.OutOfResources, lambda: big_kernel[(1,)](FakeTensor(X), BLOCK=64),
                   "shared memory")
        assert e.required == 0x20000 and e.limit == 0xC000
    finally:
        del os.environ["FAKE_CUDA_LOAD_ERROR"]
    os.environ["FAKE_CUDA_MAX_THREADS"] = "64"
    try:
        e = raises(tk.OutOfResources, lambda: big_kernel[(1,)](FakeTensor(X), BLOCK=128),
                   "threads")
        assert e.required == e.needed == 128 and e.limit == 64 and e.resource == "threads"
    finally:
        del os.environ["FAKE_CUDA_MAX_THREADS"]
    set_sizes(8)
    big_kernel[(1,)](FakeTensor(X), BLOCK=256)
    os.environ["FAKE_CUDA_LAUNCH_ERROR"] = "1"
    try:
        raises(tk.DriverError, lambda: big_kernel[(1,)](FakeTensor(X), BLOCK=256),
               "big_kernel", "CUDA_ERROR_ILLEGAL_ADDRESS")
    finally:
        del os.environ["FAKE_CUDA_LAUNCH_ERROR"]


@check
def compilation_errors_point_at_the_source():
    @tk.jit
    def broken_kernel(x_ptr, BLOCK: tk.constexpr):
        offs = tk.arange(0, BLOCK)
        tk.store(x_ptr + offz, 1.0)  # noqa: F821

    e = raises(tk.CompilationError, lambda: broken_kernel[(1,)](FakeTensor(X), BLOCK=4),
               "undefined name 'offz'", "tk.store(x_ptr + offz, 1.0)", "^")
    assert os.path.basename(__file__) in str(e)


@check
def interpreter_mode_still_switches_per_launch():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    os.environ["TK_INTERPRET"] = "1"
    try:
        before = fake.fake_launch_count()
        add_kernel[(1,)](x, x, out, 8, BLOCK=8)
        assert fake.fake_launch_count() == before
        assert (out == 2 * x).all()
    finally:
        del os.environ["TK_INTERPRET"]


@check
def warmup_compiles_for_the_gpu_without_launching():
    before = fake.fake_launch_count()
    k = add_kernel.warmup(FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 100, BLOCK=256,
                          num_warps=2, grid=(1,))
    assert fake.fake_launch_count() == before
    assert k.num_warps == 2 and k.metadata.num_warps == 2
    assert "define" in k.asm["llvm"] and ".entry add_kernel" in k.asm["ptx"]


def run_cache_child(**knobs):
    """fake_gpu_checks_child.py in a fresh process with these knobs set (None:
    unset): (PTX from the cache, cubin from the cache, PTX digest)."""
    import subprocess

    code = ("import ctypes, sys; ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL); "
            "sys.argv = sys.argv[:1]; import fake_gpu_checks_child")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for name, value in knobs.items():
        env.pop(name, None)
        if value is not None:
            env[name] = value
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", code, sys.argv[1]], cwd=here, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    ptx_cached, cubin_cached, digest = r.stdout.split()
    return ptx_cached == "True", cubin_cached == "True", digest


@check
def a_second_process_reads_ptx_and_cubin_from_the_disk_cache():
    first, second = run_cache_child(), run_cache_child()
    assert first[:2] == (False, False), first  # compiled, then JIT-linked
    assert second[:2] == (True, True), second  # both from TK_CACHE_DIR
    assert first[2] == second[2]


@check
def the_fp_fusion_default_is_in_the_launchers_key():
    # tk.knobs.language.default_fp_fusion is TK_DEFAULT_FP_FUSION, a code
    # knob: a launch after it changes (no enable_fp_fusion given) compiles
    # again instead of running the kernel the fast path keyed before.
    from tk import knobs

    set_sizes(8, 8, 8, 4)
    args = (FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000)
    try:
        fused = add_kernel[(1,)](*args, BLOCK=512)
        assert "add.rn.f32" not in fused.asm["ptx"]
        assert add_kernel[(1,)](*args, BLOCK=512) is fused  # the keyed fast path
        knobs.language.default_fp_fusion = False
        separate = add_kernel[(1,)](*args, BLOCK=512)
        assert "add.rn.f32" in separate.asm["ptx"], "the launch ran the kernel compiled with fusion"
        knobs.language.default_fp_fusion = True
        assert add_kernel[(1,)](*args, BLOCK=512).asm["ptx"] == fused.asm["ptx"]
    finally:
        os.environ.pop("TK_DEFAULT_FP_FUSION", None)


@check
def code_knobs_are_in_every_cache_key():
    # A knob that changes the code (support/Knobs.def, Effect Code) is part of
    # the key of the in-process table and of the disk cache: flipping it with
    # a warm cache compiles again and never returns the other value's PTX.
    saved = os.environ.pop("TK_LLVM_OPT", None)
    try:
        args = (FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 100)
        tk_ptx = add_kernel.warmup(*args, BLOCK=256, grid=(1,)).asm["ptx"]
        os.environ["TK_LLVM_OPT"] = "O0"
        o0_ptx = add_kernel.warmup(*args, BLOCK=256, grid=(1,)).asm["ptx"]
        assert o0_ptx != tk_ptx, "TK_LLVM_OPT=O0 returned the cached PTX"
        os.environ.pop("TK_LLVM_OPT")
        assert add_kernel.warmup(*args, BLOCK=256, grid=(1,)).asm["ptx"] == tk_ptx
        os.environ["TK_LLVM_OPT"] = "lean"
        raises(tk.CompilationError, lambda: add_kernel.warmup(*args, BLOCK=256, grid=(1,)),
               'TK_LLVM_OPT="lean" is not one of O0,O1,O2,O3')
    finally:
        os.environ.pop("TK_LLVM_OPT", None)
        if saved is not None:
            os.environ["TK_LLVM_OPT"] = saved
    # Across processes: the disk cache already holds the default's entry.
    default = run_cache_child(TK_LLVM_OPT=None)
    o0 = run_cache_child(TK_LLVM_OPT="O0")
    assert o0[0] is False and o0[2] != default[2], (default, o0)
    assert run_cache_child(TK_LLVM_OPT="O0") == (True, True, o0[2])
    assert run_cache_child(TK_LLVM_OPT=None)[2] == default[2]


@check
def bound_launches_by_subscript_vectorcall_and_call():
    # kernel[grid] reuses its bound callable while the grid object is the
    # same one; a new grid object binds anew; the three ways in (the bound
    # callable, Launcher[grid], Launcher.call) launch the same kernel.
    set_sizes(8, 8, 8, 4)
    t = FakeTensor(X)
    grid = (5,)
    assert add_kernel[grid] is add_kernel[grid]
    assert isinstance(add_kernel, tk.KernelInterface)  # registered, not a base (runtime/jit.py)
    assert type(add_kernel).__mro__[1] is tk._C.LaunchBase
    six = 6
    assert add_kernel[(six,)] is not add_kernel[(six,)]  # two tuple objects
    before = fake.fake_launch_count()
    k1 = add_kernel[grid](t, t, t, 48, BLOCK=16)
    k2 = add_kernel._launcher[(7,)](t, t, t, 48, BLOCK=16)
    k3 = add_kernel._launcher.call((2, 3), (t, t, t), {"n": 48, "BLOCK": 16})
    k4 = add_kernel[grid](t, t, out_ptr=t, n=48, BLOCK=16, num_warps=4)
    assert fake.fake_launch_count() == before + 4
    assert k1 is k2 is k3
    assert k4.num_warps == 4
    assert [fake.fake_last_grid(i) for i in range(3)] == [5, 1, 1]
    assert params(4) == [X, X, X, 48], params(4)
    raises(TypeError, lambda: add_kernel[grid](t, t, t, 48, t, BLOCK=16), "multiple values",
           "BLOCK")


@tk.jit
def padded_kernel(x_ptr, flag, big, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    if flag:
        tk.store(x_ptr + offs, tk.load(x_ptr + offs) + big)


@check
def packed_parameters_equal_the_pointer_array():
    # The same launches through kernelParams and through one packed buffer
    # (`extra`): the driver must read the same values. i1 then i64 puts 7
    # bytes of padding into the packed layout.
    cases = [((8, 8, 8, 4), lambda: add_kernel[(2,)](FakeTensor(X), FakeTensor(Y),
                                                     FakeTensor(OUT), 3000, BLOCK=1024)),
             ((8, 4, 1), lambda: scalars_kernel[(1,)](FakeTensor(X), 2.5, True, BLOCK=16)),
             ((8, 1, 8), lambda: padded_kernel[(1,)](FakeTensor(X), True, 2**40 + 3, BLOCK=16))]
    initial = tk._C._launch_params()
    try:
        for sizes, launch in cases:
            set_sizes(*sizes)
            seen = {}
            for how in ("array", "packed", "array", "packed"):
                tk._C._set_launch_params(how)
                launch()
                assert fake.fake_last_used_extra() == (how == "packed"), how
                seen.setdefault(how, params(len(sizes)))
            assert seen["array"] == seen["packed"], seen
        assert seen["array"][2] == 2**40 + 3 and seen["array"][1] == 1, seen
        raises(ValueError, lambda: tk._C._set_launch_params("both"), "packed", "array")
    finally:
        tk._C._set_launch_params(initial)


@check
def tk_ptx_compiler_picks_the_assembler():
    # TK_PTX_COMPILER=ptxas runs the program TK_PTXAS_PATH names (here a
    # script that records its arguments and writes a stand-in cubin); one
    # that fails hands over to the driver's JIT.
    import tempfile

    tmp = tempfile.mkdtemp()
    log = os.path.join(tmp, "ptxas.log")
    good, bad = os.path.join(tmp, "ptxas"), os.path.join(tmp, "ptxas-broken")
    with open(good, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> {log}\nfor a; do out="$a"; done\n'
                'printf FAKECUBIN > "$out"\n')
    with open(bad, "w") as f:
        f.write("#!/bin/sh\necho 'ptxas fatal: stand-in failure' >&2\nexit 3\n")
    for path in (good, bad):
        os.chmod(path, 0o755)
    set_sizes(8, 8, 8, 4)
    saved = {k: os.environ.get(k) for k in ("TK_PTX_COMPILER", "TK_PTXAS_PATH")}
    try:
        os.environ["TK_PTX_COMPILER"] = "ptxas"
        os.environ["TK_PTXAS_PATH"] = good
        k = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=2048)
        assert k._compiled.ptx_compiler == "ptxas", k._compiled.ptx_compiler
        with open(log) as f:
            args = f.read()
        assert "-arch=sm_90" in args and "-o" in args, args
        os.environ["TK_PTXAS_PATH"] = bad
        k = add_kernel[(1,)](FakeTensor(X), FakeTensor(Y), FakeTensor(OUT), 3000, BLOCK=4096)
        assert k._compiled.ptx_compiler == "driver", k._compiled.ptx_compiler
        assert params(4) == [X, Y, OUT, 3000], params(4)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@check
def host_overhead_with_the_stand_in_driver():
    set_sizes(8, 8, 8, 4)
    x, y, out = FakeTensor(X), FakeTensor(Y), FakeTensor(OUT)
    grid = (4,)
    add_kernel[grid](x, y, out, 3000, BLOCK=1024)
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        add_kernel[grid](x, y, out, 3000, BLOCK=1024)
    us = (time.perf_counter() - t0) / n * 1e6
    print(f"host time per launch (stand-in driver, 4 args + 1 constexpr): {us:.2f} us")
    assert us < 20, us


def make_kernel():
    # A kernel made at run time, as a factory or a test parametrisation does.
    @tk.jit
    def made_at_run_time(x_ptr, n, BLOCK: tk.constexpr):
        offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
        tk.store(x_ptr + offs, tk.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)

    return made_at_run_time


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@check
def kernels_made_at_run_time_are_freed():
    # The JITFunction holds its tk._C.Launcher and the launcher holds the
    # JITFunction (and, per compiled key, the CompiledKernel and the guarded
    # globals); the collector must see through both C types, and through the
    # bound launch the function caches for its last grid. Before they took
    # part in collection each kernel kept ~13 KiB and its loaded module for
    # good.
    import gc
    import weakref

    set_sizes(8, 4)

    def cycle(count):
        refs = []
        for i in range(count):
            k = make_kernel()
            grid = (i % 3 + 1,)
            k[grid](FakeTensor(X), 1000 + i, BLOCK=128)  # compiles: an entry with guards
            k[grid](FakeTensor(X), 1000 + i, BLOCK=128)  # the cached bound launch
            refs.append(weakref.ref(k))
            del k
        gc.collect()
        return sum(r() is not None for r in refs)

    k = make_kernel()
    k[(1,)](FakeTensor(X), 1000, BLOCK=128)
    held = gc.get_referents(k._launcher)
    assert any(o is k for o in held) and any(type(o).__name__ == "CompiledKernel" for o in held)
    loaded = fake.fake_loaded_modules()
    del k, held
    gc.collect()
    assert fake.fake_loaded_modules() == loaded - 1, (fake.fake_loaded_modules(), loaded)
    assert cycle(200) == 0  # warm-up: allocator pools, caches
    before = rss_kib()
    launches, modules = fake.fake_launch_count(), fake.fake_loaded_modules()
    assert cycle(2000) == 0
    grown = rss_kib() - before
    assert fake.fake_launch_count() == launches + 4000
    # Each compiled kernel loaded a module, unloaded when it was collected.
    assert fake.fake_loaded_modules() == modules, (fake.fake_loaded_modules(), modules)
    print(f"2000 kernels made, launched and dropped: RSS {grown:+d} KiB")
    assert grown < 4096, grown


def mm_body(a_ptr, b_ptr, c_ptr, K, BM: tk.constexpr, BN: tk.constexpr, BK: tk.constexpr):
    rm, rn, rk = tk.arange(0, BM), tk.arange(0, BN), tk.arange(0, BK)
    acc = tk.zeros((BM, BN), dtype=tk.float32)
    for k in range(0, K, BK):
        a = tk.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tk.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tk.dot(a, b)
    tk.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tk.float16))


mm_kernel = tk.jit(mm_body)


@check
def num_stages_and_the_device_arch_reach_the_compiler():
    # The stand-in reports compute capability 9.0: kernels compile for sm_90a
    # (tk.dot on wgmma), TK_ARCH=sm_90 forces mma.sync, and num_stages sets
    # the cp.async ring's depth (the wait before each iteration's wgmma lets
    # S - 2 stages stay in flight with one wgmma group outstanding).
    set_sizes(200, 8, 8, 4)
    a, b, c = (FakeTensor(p, float16) for p in (X, Y, OUT))
    saved = os.environ.pop("TK_ARCH", None)
    try:
        k3 = mm_kernel[(1,)](a, b, c, 1024, BM=128, BN=128, BK=64, num_warps=4, num_stages=3)
        k4 = mm_kernel[(1,)](a, b, c, 1024, BM=128, BN=128, BK=64, num_warps=4, num_stages=4)
        assert ".target sm_90a" in k3.asm["ptx"] and "wgmma.mma_async" in k3.asm["ptx"]
        assert k3.asm["ptx"] != k4.asm["ptx"] and k4.shared > k3.shared, (k3.shared, k4.shared)
        # TK_ARCH applies to compiles from then on: a kernel object whose
        # launches are not bound yet (launches already bound keep theirs).
        os.environ["TK_ARCH"] = "sm_90"
        k = tk.jit(mm_body)[(1,)](a, b, c, 1024, BM=128, BN=128, BK=64, num_warps=4,
                                  num_stages=3)
        assert ".target sm_90\n" in k.asm["ptx"] and "mma.sync" in k.asm["ptx"], "sm_90"
        assert "wgmma" not in k.asm["ptx"]
        os.environ["TK_ARCH"] = "sm_75"
        try:
            tk.jit(mm_body)[(1,)](a, b, c, 1024, BM=128, BN=128, BK=64)
            raise AssertionError("TK_ARCH=sm_75 accepted")
        except tk.CompilationError as e:
            assert 'TK_ARCH="sm_75" is not one of sm_80,sm_86,sm_89,sm_90,sm_90a' in str(e), e
        os.environ.pop("TK_ARCH")
        try:
            mm_kernel[(1,)](a, b, c, 1024, BM=128, BN=128, BK=64, num_stages=0)
            raise AssertionError("num_stages=0 accepted")
        except ValueError as e:
            assert "num_stages of mm_body must be an integer from 1 to 16" in str(e), e
    finally:
        os.environ.pop("TK_ARCH", None)
        if saved is not None:
            os.environ["TK_ARCH"] = saved


@tk.jit
def tma_copy(src, out_ptr, off, BM: tk.constexpr, BN: tk.constexpr):
    x = src.load([off, 0])
    r = tk.arange(0, BM)[:, None] * BN + tk.arange(0, BN)[None, :]
    tk.store(out_ptr + r, x)


@check
def tma_descriptors_pass_their_encoded_tensor_map():
    # TK_TMA=1 on sm_90a: the descriptor's CUtensorMap, encoded once per
    # (base, shape, strides, block, padding), is a 128-byte parameter aligned
    # to 64 after the base, sizes and stride (the PTX's layout).
    from tk.tools.tensor_descriptor import TensorDescriptor, TensorDescriptorError

    half = FakeDType("torch.float16")
    half.itemsize = 2
    base = FakeTensor(X, half)
    os.environ["TK_TMA"], os.environ["TK_ARCH"] = "1", "sm_90a"
    try:
        # base, shape[0], shape[1], strides[0], map, out_ptr, off
        set_sizes(8, 4, 4, 8, 128, 8, 4)
        before = fake.fake_encode_count()
        desc = TensorDescriptor(base, [45, 77], [80, 1], [16, 32])
        k = tma_copy[(1,)](desc, FakeTensor(OUT, half), 7, BM=16, BN=32)
        assert ".param .align 64 .b8 tma_copy_param_4[128]" in k.asm["ptx"]
        assert "cp.async.bulk.tensor.2d" in k.asm["ptx"]
        field = fake.fake_encode_field
        assert fake.fake_encode_count() == before + 1
        assert (field(0, 0), field(1, 0), field(2, 0)) == (6, 2, X)  # FLOAT16, rank 2, base
        assert [field(3, i) for i in range(2)] == [77, 45]  # innermost first
        assert field(4, 0) == 160  # the row stride in bytes
        assert [field(5, i) for i in range(2)] == [32, 16]  # the box
        assert [field(6, i) for i in range(2)] == [1, 1]
        assert [field(w, 0) for w in (7, 8, 9, 10)] == [0, 0, 2, 0]  # no swizzle, L2 128B, zeros
        assert [fake.fake_last_map_byte(i) for i in range(128)] == [i ^ 6 for i in range(128)]
        assert params(7)[:4] == [X, 45, 77, 80] and params(7)[5:] == [OUT, 7]
        # The same descriptor again: the cached map.
        tma_copy[(1,)](TensorDescriptor(base, [45, 77], [80, 1], [16, 32]),
                       FakeTensor(OUT, half), 7, BM=16, BN=32)
        assert fake.fake_encode_count() == before + 1
        # NaN padding: the NaN fill.
        tma_copy[(1,)](TensorDescriptor(base, [45, 77], [80, 1], [16, 32], padding="nan"),
                       FakeTensor(OUT, half), 7, BM=16, BN=32)
        assert fake.fake_encode_count() == before + 2 and field(10, 0) == 1
        # What TMA cannot take is a located error before anything launches.
        launches = fake.fake_launch_count()
        raises(TensorDescriptorError,
               lambda: tma_copy[(1,)](TensorDescriptor(base, [45, 77], [80, 1], [16, 4]),
                                      FakeTensor(OUT, half), 7, BM=16, BN=4),
               "argument 'src' of tma_copy", "multiple of 16 bytes")
        os.environ["FAKE_CUDA_ENCODE_ERROR"] = "1"
        raises(TensorDescriptorError,
               lambda: tma_copy[(1,)](TensorDescriptor(base, [44, 77], [80, 1], [16, 32]),
                                      FakeTensor(OUT, half), 7, BM=16, BN=32),
               "argument 'src' of tma_copy: cuTensorMapEncodeTiled refused")
        assert fake.fake_launch_count() == launches
        # TK_TMA=0: base, sizes and stride only, loaded through pointers.
        os.environ["TK_TMA"] = "0"
        set_sizes(8, 4, 4, 8, 8, 4)
        k = tma_copy[(1,)](desc, FakeTensor(OUT, half), 7, BM=16, BN=32)
        assert "cp.async.bulk" not in k.asm["ptx"] and params(6) == [X, 45, 77, 80, OUT, 7]
    finally:
        for name in ("TK_TMA", "TK_ARCH", "FAKE_CUDA_ENCODE_ERROR"):
            os.environ.pop(name, None)


for fn in CHECKS:
    fn()
    print("ok", fn.__name__, flush=True)
print("all", len(CHECKS), "checks passed")
