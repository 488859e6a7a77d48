"""TK_CHECK=1, the checking mode (python/tk/check.py): GPU launches compared
with the interpreter, and TK_TEST_MISCOMPILE=1, the test-only knob that
breaks one lowering (float adds become subtracts) so there is something to
catch.

- Against the stand-in driver (fake_cuda.c), everywhere: the launches do
  what check_mode_checks.py's hook says (right, one element wrong, or what
  the miscompiled PTX computes), in a process of its own.
- On a GPU (marked gpu; skipped visibly elsewhere): the miscompiled kernel
  really runs and is caught; the right one passes.
"""

import os
import pathlib
import subprocess
import sys

import pytest

import tk

HERE = pathlib.Path(__file__).parent


def test_check_mode_against_a_stand_in_driver(fake_libcuda, tmp_path):
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    env["TK_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(HERE / "check_mode_checks.py"), str(fake_libcuda)],
                       env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "9 checks passed" in r.stdout


@tk.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    tk.store(out_ptr + offs, tk.load(x_ptr + offs, mask=mask) + tk.load(y_ptr + offs, mask=mask),
             mask=mask)


@pytest.mark.gpu
def test_check_mode_catches_a_miscompiled_kernel_on_the_gpu(monkeypatch):
    import torch

    n = 100_003  # 782 programs of 128: 64 sampled, the ragged last one among them
    gen = torch.Generator().manual_seed(11)
    x = torch.rand(n, generator=gen).cuda() - 0.5
    y = torch.rand(n, generator=gen).cuda() + 0.25
    out = torch.empty_like(x)
    grid = (tk.cdiv(n, 128),)
    monkeypatch.setenv("TK_CHECK", "1")
    k = _add[grid](x, y, out, n, BLOCK=128)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    assert k.last_check.startswith("TK_CHECK: '_add': 64 of 782 programs, "), k.last_check
    monkeypatch.setenv("TK_TEST_MISCOMPILE", "1")
    with pytest.raises(tk.CheckError) as e:
        _add[grid](x, y, out, n, BLOCK=128)
    text = str(e.value)
    assert "stored different values on the GPU and on the interpreter in program (0, 0, 0): " \
           "element 0 of 'out_ptr'" in text, text
    assert "tk.store(out_ptr + offs" in text, text
    torch.cuda.synchronize()
    assert torch.allclose(out, x - y), "the miscompiled kernel ran: it subtracts"
    monkeypatch.delenv("TK_TEST_MISCOMPILE")
    _add[grid](x, y, out, n, BLOCK=128)  # right again: passes
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
