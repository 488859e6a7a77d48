"""Running one kernel on the interpreter or on the GPU with numpy arrays in
and out, for tests that check a language feature both ways: `device` is
"interp" (numpy arrays straight to the interpreter) or "gpu" (each array
copied to a CUDA tensor, launched, and copied back in place)."""

import numpy as np
import pytest

# The two ways every test runs; the GPU one is marked `gpu` (skipped, with
# the reason, where there is no GPU: conftest.py).
DEVICES = ["interp", pytest.param("gpu", marks=pytest.mark.gpu)]


def launch(kernel, grid, *args, device, **kwargs):
    """kernel[grid](*args, **kwargs) on `device`; numpy array arguments are
    updated in place with what the kernel wrote."""
    if device == "interp":
        return kernel[grid](*args, **kwargs)
    import torch

    copies = []
    moved = []
    on_device = {}  # id(array) -> its CUDA copy: an array passed twice aliases on the GPU too
    for a in args:
        if isinstance(a, np.ndarray):
            t = on_device.get(id(a))
            if t is None:
                t = on_device[id(a)] = torch.from_numpy(np.ascontiguousarray(a)).cuda()
                copies.append((a, t))
            moved.append(t)
        else:
            moved.append(a)
    result = kernel[grid](*moved, **kwargs)
    torch.cuda.synchronize()
    for a, t in copies:
        a[...] = t.cpu().numpy()
    return result
