"""tk.extra.cuda.globaltimer, smid and num_threads (Triton's tl.extra.cuda;
test_core.py's test_globaltimer, test_smid, test_num_threads): the PTX a GPU
compile reads (%globaltimer twice around a loop, %smid once), compiled
without a GPU; the interpreter's answers (docs/python.md: a monotonic
nanosecond clock, SM 0, 32 x num_warps threads); and on the GPU the same
kernels against those facts. A builtin passes as a constexpr argument, as
Triton's test passes globaltimer."""

import numpy as np
import pytest

import tk
import tk.language as tl
from ptx_compile_util import CudaArray


@tk.jit
def timed(out, times, n, clock: tl.constexpr):
    start = clock()
    off = tl.arange(0, 128)
    for i in range(n):
        tl.store(out + off, tl.load(out + off) + 1)
    end = clock()
    tl.store(times, start)
    tl.store(times + 1, end)


@tk.jit
def which_sm(out):
    tl.store(out + tl.program_id(0), tl.extra.cuda.smid())


@tk.jit
def every_thread(out):
    num_threads: tl.constexpr = tl.extra.cuda.num_threads()
    offs = tl.arange(0, num_threads)
    tl.store(out + offs, offs + 1)


def test_globaltimer_reads_twice_in_the_ptx(ptx_compile):
    k = timed.warmup(CudaArray(1 << 20, "<i8"), CudaArray(1 << 21, "<i8"), 1000, tl.extra.cuda.globaltimer,
                     grid=(1,))
    assert k.asm["ptx"].count("%globaltimer") == 2


def test_smid_reads_once_in_the_ptx(ptx_compile):
    k = which_sm.warmup(CudaArray(1 << 20, "<i4"), grid=(1,))
    assert k.asm["ptx"].count("%smid") == 1


def test_num_threads_is_the_compile_time_thread_count(ptx_compile):
    k = every_thread.warmup(CudaArray(1 << 20, "<i4"), num_warps=8, grid=(1,))
    assert ".maxntid 256, 1, 1" in k.asm["ptx"]
    assert "make_range {end = 256, start = 0}" in k.asm["ir"]


def test_interpreter_globaltimer_is_a_monotonic_nanosecond_clock():
    out = np.random.default_rng(7).integers(-50, 50, 128).astype(np.int64)
    before = out.copy()
    times = np.zeros(2, np.int64)
    timed[(1,)](out, times, 300, tl.extra.cuda.globaltimer)
    np.testing.assert_array_equal(out, before + 300)
    assert 0 < times[0] < times[1], times


def test_interpreter_smid_is_zero():
    out = np.full(37, -1, np.int32)
    which_sm[(37,)](out)
    np.testing.assert_array_equal(out, 0)


@pytest.mark.parametrize("num_warps", [1, 2, 8])
def test_interpreter_num_threads_follows_num_warps(num_warps):
    out = np.zeros(32 * 8, np.int32)
    every_thread[(1,)](out, num_warps=num_warps)
    n = 32 * num_warps
    np.testing.assert_array_equal(out[:n], np.arange(1, n + 1))
    assert not out[n:].any()


def test_a_builtin_constexpr_is_part_of_the_cache_key():
    out, times = np.zeros(128, np.int64), np.zeros(2, np.int64)
    timed[(1,)](out, times, 2, tl.extra.cuda.globaltimer)
    # smid in the clock's place: a different kernel (an i32 widened on store).
    timed[(1,)](out, times, 2, tl.extra.cuda.smid)
    np.testing.assert_array_equal(times, [0, 0])


@pytest.mark.gpu
def test_globaltimer_on_the_gpu():
    import torch

    out = torch.zeros(128, dtype=torch.int64, device="cuda")
    times = torch.zeros(2, dtype=torch.int64, device="cuda")
    k = timed[(1,)](out, times, 10000, tl.extra.cuda.globaltimer)
    torch.cuda.synchronize()
    assert int(times[1]) - int(times[0]) > 0
    assert int(out.min()) == 10000 == int(out.max())
    assert k.asm["ptx"].count("%globaltimer") == 2


@pytest.mark.gpu
def test_smid_on_the_gpu():
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = torch.full((1024,), -1, dtype=torch.int32, device="cuda")
    which_sm[(1024,)](out)
    torch.cuda.synchronize()
    assert 0 <= int(out.min()) and int(out.max()) < sms


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [2, 8])
def test_num_threads_on_the_gpu(num_warps):
    import torch

    out = torch.zeros(256, dtype=torch.int32, device="cuda")
    every_thread[(1,)](out, num_warps=num_warps)
    torch.cuda.synchronize()
    n = 32 * num_warps
    np.testing.assert_array_equal(out.cpu().numpy()[:n], np.arange(1, n + 1))
    assert not out.cpu().numpy()[n:].any()
