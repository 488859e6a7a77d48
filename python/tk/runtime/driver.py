"""`tk.runtime.driver`: the host-side device queries of Triton's tutorials.

Triton's tutorials start with

    DEVICE = triton.runtime.driver.active.get_active_torch_device()

and the softmax tutorial sizes its persistent grid from
`driver.active.utils.get_device_properties(DEVICE.index)`. With the imports
changed to tk these lines keep working:

    DEVICE = tk.runtime.driver.active.get_active_torch_device()
    props = tk.runtime.driver.active.utils.get_device_properties(DEVICE.index)
    props["multiprocessor_count"]          # 132 on an H200

Decision: the active torch device is cuda:0 when kernels launch on the GPU
here (tk.testing.gpu_available()) and the CPU otherwise, in particular with
TK_INTERPRET=1: the interpreter runs on CPU tensors, so a tutorial that
allocates on DEVICE runs unchanged on either. tk launches on device 0 only
(docs/python.md), so the current device is always 0. Properties come from
torch's view of the device, with the H200's values for what torch does not
report. In interpreter mode, or where there is no GPU, they are the H200's
(DEFAULT_DEVICE_PROPERTIES, the device tk compiles for by default), and the
target is sm_90: host code that sizes its grid from them runs as it would
there, rather than stopping with an error.
"""

import collections

GPUTarget = collections.namedtuple("GPUTarget", ["backend", "arch", "warp_size"])


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


# The answer of get_device_properties in interpreter mode or without a GPU:
# an H200's (sm_90, tk's default target).
DEFAULT_DEVICE_PROPERTIES = {
    "multiprocessor_count": 132,
    "max_shared_mem": 232448,
    "max_num_regs": 65536,
    "warpSize": 32,
    "max_threads_per_block": 1024,
    "sm_clock_rate": 1980000,
    "mem_clock_rate": 3201000,
    "mem_bus_width": 6144,
}


def interpret_mode():
    from .jit import interpret_mode as mode

    return mode()


class _Utils:
    """`driver.active.utils`: device properties as Triton names them."""

    @staticmethod
    def get_device_properties(device=0):
        torch = _torch()
        if interpret_mode() or torch is None or not torch.cuda.is_available():
            # Interpreter mode, or no GPU: the device tk compiles for by
            # default, so host code that sizes a grid from it makes the grid
            # it would make there.
            return dict(DEFAULT_DEVICE_PROPERTIES)
        p = torch.cuda.get_device_properties(0 if device is None else device)
        return {
            "multiprocessor_count": p.multi_processor_count,
            "max_shared_mem": getattr(p, "shared_memory_per_block_optin", 232448),
            "max_num_regs": getattr(p, "regs_per_multiprocessor", 65536),
            "warpSize": getattr(p, "warp_size", 32),
            "max_threads_per_block": getattr(p, "max_threads_per_block", 1024),
            "sm_clock_rate": getattr(p, "clock_rate", 0),
            "mem_clock_rate": getattr(p, "memory_clock_rate", 0),
            "mem_bus_width": getattr(p, "memory_bus_width", 0),
        }


class _ActiveDriver:
    """`driver.active`: the CUDA driver as tk uses it (device 0)."""

    def __init__(self):
        self.utils = _Utils()
        self.backend = "cuda"

    @staticmethod
    def _gpu():
        from ..testing import gpu_available

        return gpu_available()

    def get_active_torch_device(self):
        torch = _torch()
        if torch is None:
            return "cpu"
        return torch.device("cuda", 0) if self._gpu() else torch.device("cpu")

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        if device != 0:
            raise ValueError(f"tk launches on device 0 only (docs/python.md); got device {device}")

    def get_current_stream(self, device=None):
        torch = _torch()
        if torch is None or not self._gpu():
            return 0
        return torch.cuda.current_stream(0).cuda_stream

    def get_current_target(self):
        arch = 90
        torch = _torch()
        if not interpret_mode() and torch is not None and torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            arch = major * 10 + minor
        return GPUTarget("cuda", arch, 32)

    def is_active(self):
        return True


class _DriverConfig:
    """`tk.runtime.driver`: `.active` is the one driver tk has."""

    def __init__(self):
        self.active = _ActiveDriver()
        self.default = self.active

    def set_active(self, driver):
        raise NotImplementedError("tk has one driver (CUDA, device 0); it cannot be replaced")

    def reset_active(self):
        pass


driver = _DriverConfig()
