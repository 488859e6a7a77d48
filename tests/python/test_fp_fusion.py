"""enable_fp_fusion (Triton's launch option) and tk.knobs.language.default_fp_fusion:
with fusion a multiply feeding an add is one fma, without it every add and multiply
rounds on its own, so the GPU's result is numpy's float32 one bit for bit."""

import re

import numpy as np
import pytest

import tk
import tk.language as tl
from tk import knobs
from ptx_compile_util import CudaArray

RNG = np.random.default_rng(5733)
FMA = re.compile(r"(mad|fma)\.r[nzmp]\.(ftz\.)?f32")


@pytest.fixture
def default_fusion(monkeypatch):
    # knobs.language.default_fp_fusion is TK_DEFAULT_FP_FUSION: monkeypatch
    # puts the variable back as it was.
    monkeypatch.setenv("TK_DEFAULT_FP_FUSION", "1")


@tk.jit
def axpb(x_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * a + 0.375, mask=mask)


def ptx(**kwargs):
    return axpb.warmup(CudaArray(1 << 20), CudaArray(1 << 21), 1000, 1.5, BLOCK=256, grid=(4,),
                       **kwargs).asm["ptx"]


@pytest.mark.usefixtures("ptx_compile", "default_fusion")
def test_the_option_decides_whether_a_multiply_add_is_one_fma():
    assert FMA.search(ptx())
    assert FMA.search(ptx(enable_fp_fusion=True))
    separate = ptx(enable_fp_fusion=False)
    assert not FMA.search(separate), separate
    assert "mul.rn.f32" in separate and "add.rn.f32" in separate, separate


@pytest.mark.usefixtures("ptx_compile", "default_fusion")
def test_the_knob_sets_the_default_and_the_option_overrides_it():
    knobs.language.default_fp_fusion = False
    assert not FMA.search(ptx())
    assert FMA.search(ptx(enable_fp_fusion=True))
    knobs.language.default_fp_fusion = True
    assert FMA.search(ptx())


@pytest.mark.usefixtures("ptx_compile")
def test_a_value_that_is_not_a_bool_is_an_error_naming_the_kernel():
    with pytest.raises(ValueError) as e:
        ptx(enable_fp_fusion="no")
    assert "enable_fp_fusion of axpb must be True or False, not 'no'" in str(e.value)


def test_the_interpreter_accepts_the_option_and_rounds_every_op():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    axpb[(4,)](x, out, n, 1.7, BLOCK=256, enable_fp_fusion=True)
    np.testing.assert_array_equal(out, x * np.float32(1.7) + np.float32(0.375))


@pytest.mark.gpu
@pytest.mark.usefixtures("default_fusion")
def test_without_fusion_the_gpu_matches_numpy_bit_for_bit():
    import torch

    n = 3001
    x = RNG.standard_normal(n).astype(np.float32)
    a = np.float32(1.7)
    x_d = torch.from_numpy(x).cuda()
    out_d = torch.empty_like(x_d)
    axpb[(tk.cdiv(n, 256),)](x_d, out_d, n, float(a), BLOCK=256, enable_fp_fusion=False)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out_d.cpu().numpy(), x * a + np.float32(0.375))
    axpb[(tk.cdiv(n, 256),)](x_d, out_d, n, float(a), BLOCK=256)
    torch.cuda.synchronize()
    # One rounding of x * a + 0.375 (x * a is exact in float64; the sum may
    # round twice through float64, hence one ulp).
    fused = (x.astype(np.float64) * np.float64(a) + 0.375).astype(np.float32)
    np.testing.assert_array_max_ulp(out_d.cpu().numpy(), fused, maxulp=1)
