"""tk.testing: assert_close (anywhere) and do_bench (GPU only)."""

import numpy as np

from .errors import DriverError
from .runtime import cuda_driver_available


def _to_numpy(x):
    if hasattr(x, "detach"):  # torch: bf16 has no numpy dtype, so widen first
        x = x.detach().cpu()
        if x.is_floating_point():
            x = x.double()
        return x.numpy()
    return np.asarray(x)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Asserts |x - y| <= atol + rtol * |y| elementwise (Triton's defaults:
    atol 1e-2, rtol 0), on numpy arrays, torch tensors or scalars."""
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    a, b = _to_numpy(x), _to_numpy(y)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        a, b = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Times `fn` on the GPU (milliseconds). Needs a GPU and tk's GPU launch
    path; in the interpreter there is nothing meaningful to time."""
    if not cuda_driver_available():
        raise DriverError(
            "tk.testing.do_bench times kernels on a GPU, and no CUDA driver was found "
            "(libcuda.so.1 cannot be loaded); it cannot run here"
        )
    raise DriverError(
        "tk.testing.do_bench needs tk's GPU launch path, which is not available from Python yet "
        "(issue 6, second part)"
    )
