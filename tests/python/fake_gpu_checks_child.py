"""Child of fake_gpu_checks.py's disk-cache checks: one launch in a fresh
process; prints whether the PTX and the cubin came from the compile cache, and
a digest of the PTX."""

import hashlib

import tk


@tk.jit
def cached_kernel(x_ptr, n, BLOCK: tk.constexpr):
    offs = tk.arange(0, BLOCK)
    tk.store(x_ptr + offs, tk.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


class _Tensor:
    __module__ = "torch.fake"
    dtype = "torch.float32"

    def data_ptr(self):
        return 0x7000_0000_0000

    def get_device(self):
        return 0


k = cached_kernel[(1,)](_Tensor(), 100, BLOCK=128)
print(k._compiled.ptx_from_cache, k._compiled.cubin_from_cache,
      hashlib.sha256(k.asm["ptx"].encode()).hexdigest()[:16])
assert "define" in k.asm["llvm"]  # a cached kernel compiles again for its LLVM IR
