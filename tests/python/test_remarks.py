"""kernel.remarks (docs/remarks.md) on a compile to PTX, no GPU needed:
warmup(..., remarks=True) and TK_REMARKS=1 give the records (location in
this file, kind, status, message, numbers), and the PTX is the same as
without remarks. On a GPU (skipped visibly without one), the registers
remark is the loaded kernel's."""

import pytest

import tk
import tk.runtime.jit as tkjit
from ptx_compile_util import CudaArray


@tk.jit
def strided_copy(x_ptr, y_ptr, stride, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    x = tk.load(x_ptr + offs * stride, mask=offs < n)
    tk.store(y_ptr + offs, x, mask=offs < n)


LOAD_LINE = next(i for i, line in enumerate(open(__file__), 1) if "x = tk.load(x_ptr + offs" in line)


def compile_strided(**kwargs):
    return strided_copy.warmup(CudaArray(1 << 20), CudaArray(1 << 21), 3, 4096, BLOCK=512,
                               **kwargs)


def test_warmup_remarks(ptx_compile):
    strided_copy.cache.clear()
    k = compile_strided(remarks=True)
    assert k.remarks, "a compile with remarks has some"
    kinds = {r.kind for r in k.remarks}
    assert {"vectorize", "coalesce"} <= kinds, kinds
    load = [r for r in k.remarks if r.kind == "vectorize" and r.line == LOAD_LINE]
    assert len(load) == 1, [str(r) for r in k.remarks]
    r = load[0]
    assert r.file == __file__ and r.col == 9 and r.status == "missed"
    assert r.function == "strided_copy"
    # The run-time stride: 4-byte accesses, runs of 1 element, and the fix.
    assert r.numbers["vector_bytes"] == 4 and r.numbers["contiguity"] == 1, r.numbers
    assert "tk.constexpr" in r.message
    text = str(r)
    assert text.startswith(f"{__file__}:{LOAD_LINE}:9: remark: load of fp32: 4-byte") and \
        text.rstrip().endswith("^"), text
    assert "[vectorize]" in text.splitlines()[0]
    # The stored tile is contiguous and aligned: 16-byte stores would need
    # the bound n divisible by 4 (4096 is specialised divisible by 16).
    store = [r for r in k.remarks if r.kind == "vectorize" and r.line == LOAD_LINE + 1]
    assert store and store[0].status == "passed" and store[0].numbers["vector_bytes"] == 16


def test_remarks_do_not_change_the_ptx_and_are_off_by_default(ptx_compile, monkeypatch):
    monkeypatch.delenv("TK_REMARKS", raising=False)
    strided_copy.cache.clear()
    plain = compile_strided()
    assert plain.remarks is None
    with_remarks = compile_strided(remarks=True)  # compiled again, for its remarks
    assert with_remarks.remarks
    assert with_remarks.asm["ptx"] == plain.asm["ptx"]


def test_knob_turns_them_on(ptx_compile, monkeypatch):
    monkeypatch.setenv("TK_REMARKS", "1")
    strided_copy.cache.clear()
    k = compile_strided()
    assert any(r.kind == "coalesce" and r.status == "missed" for r in k.remarks), \
        [str(r) for r in k.remarks]


def test_remark_repr():
    r = tkjit.Remark("k.py", 3, 9, "dot", "missed", "k", "m", {"m": 16}, "k.py:3:9: remark: m [dot]")
    assert repr(r) == "<tk.Remark k.py:3:9 [dot, missed]>" and r.numbers == {"m": 16}


@pytest.mark.gpu
def test_the_registers_remark_describes_the_loaded_kernel(monkeypatch):
    """On the GPU, the kernel compiled with remarks is loaded from the cubin
    the registers remark's ptxas run made: the remark's registers are the
    loaded kernel's, and the kernel computes the right thing."""
    import torch

    monkeypatch.setenv("TK_REMARKS", "1")
    strided_copy.cache.clear()
    n, stride = 5000, 3
    x = torch.randn(n * stride, device="cuda")
    y = torch.empty(n, device="cuda")
    strided_copy[((n + 511) // 512,)](x, y, stride, n, BLOCK=512)
    torch.testing.assert_close(y, x[::stride])
    k = strided_copy.warmup(x, y, stride, n, BLOCK=512, grid=(1,))
    regs = [r for r in k.remarks if r.kind == "registers"]
    assert len(regs) == 1, [str(r) for r in k.remarks]
    if "registers" not in regs[0].numbers:
        pytest.skip(f"no ptxas on this machine: {regs[0].message}")
    assert regs[0].numbers["registers"] == k.n_regs, (str(regs[0]), k.n_regs)
    assert regs[0].numbers["spill_stores"] == 0 and k.n_spills == 0
