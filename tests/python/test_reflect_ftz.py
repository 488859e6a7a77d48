"""enable_reflect_ftz, as Triton's (test_core's test_enable_reflect_ftz):
on by default, tk.exp2 on fp32 is ex2.approx.ftz.f32 and libdevice's fp32
functions take their flushing paths; False keeps subnormal results. Checked
on the PTX of a warmup without a GPU; the interpreter ignores the option."""

import re

import numpy as np
import pytest

import tk
from ptx_compile_util import CudaArray


@tk.jit
def exp2_kernel(data):
    ptrs = data + tk.arange(0, 128)
    tk.store(ptrs, tk.math.exp2(tk.load(ptrs)))


@tk.jit
def libdevice_kernel(data):
    ptrs = data + tk.arange(0, 128)
    tk.store(ptrs, tk.extra.libdevice.fma_rz(tk.load(ptrs), 2.0, 1.0))


@pytest.mark.parametrize("ftz", [False, True, None])
def test_exp2_flushes_only_with_the_option(ftz, ptx_compile):
    options = {} if ftz is None else {"enable_reflect_ftz": ftz}
    ptx = exp2_kernel.warmup(CudaArray(1 << 20), grid=(1,), **options).asm["ptx"]
    assert (re.search(r"ex2\.approx\.ftz\.f32", ptx) is not None) == (ftz is not False)


@pytest.mark.parametrize("ftz", [False, True])
def test_libdevice_takes_its_flushing_path_with_the_option(ftz, ptx_compile):
    ptx = libdevice_kernel.warmup(CudaArray(1 << 20), grid=(1,),
                                  enable_reflect_ftz=ftz).asm["ptx"]
    assert ("fma.rz.ftz.f32" in ptx) == ftz
    assert "fma.rz" in ptx


def test_a_value_that_is_not_a_bool_is_an_error(ptx_compile):
    with pytest.raises(ValueError, match="enable_reflect_ftz of exp2_kernel must be True or False"):
        exp2_kernel.warmup(CudaArray(1 << 20), grid=(1,), enable_reflect_ftz="yes")


def test_the_interpreter_ignores_it(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "1")
    x = np.full(128, -127.5, np.float32)  # 2**x is subnormal
    exp2_kernel[(1,)](x, enable_reflect_ftz=True)
    np.testing.assert_allclose(x, np.exp2(np.float32(-127.5)), rtol=1e-6)
