"""tk._C.libtriton: the one piece of Triton's compiled module that ported
programs use, `nvidia.cublas.CublasLt` (upstream tutorial 09 times its
kernels against it). tk has no cuBLAS binding of its own: `matmul(a, b, c)`
computes c = a @ b.T through torch, which calls cuBLAS(Lt) for these shapes,
and `fp8_scaled_matmul` through torch._scaled_mm. tk/__init__.py registers
this module as `tk._C.libtriton`, so that `from tk._C.libtriton import nvidia`
works although tk._C is an extension module, not a package.
"""

import types


class CublasLt:
    """Triton's cuBLASLt handle: matmuls of row-major a [M, K] and b [N, K]
    into c [M, N] (c = a @ b.T), the workspace kept as Triton keeps it."""

    def __init__(self, workspace):
        self.workspace = workspace

    @staticmethod
    def _check(a, b, c):
        if a.dim() != 2 or b.dim() != 2 or c.dim() != 2:
            raise ValueError("CublasLt.matmul takes 2-D a [M, K], b [N, K] and c [M, N]")
        if a.shape[1] != b.shape[1] or c.shape[0] != a.shape[0] or c.shape[1] != b.shape[0]:
            raise ValueError(
                f"CublasLt.matmul: a {tuple(a.shape)}, b {tuple(b.shape)} and c "
                f"{tuple(c.shape)} do not make c = a @ b.T"
            )

    def matmul(self, a, b, c):
        self._check(a, b, c)
        import torch

        if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            one = torch.ones((), device=a.device, dtype=torch.float32)
            c.copy_(torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=c.dtype))
        else:
            torch.matmul(a, b.T, out=c)
        return c

    def fp8_scaled_matmul(self, a, b, c, scale_a, scale_b):
        self._check(a, b, c)
        import torch

        c.copy_(torch._scaled_mm(a, b.T, scale_a=scale_a, scale_b=scale_b, out_dtype=c.dtype))
        return c


nvidia = types.SimpleNamespace(cublas=types.SimpleNamespace(CublasLt=CublasLt))
