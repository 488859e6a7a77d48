"""tutorials/12-llama-block.py's decoder block on the CPU interpreter
(conftest sets TK_INTERPRET=1) against its float32 reference: numpy arrays
(no torch needed), torch CPU tensors, and the block's torch custom operators
under torch.compile(fullgraph=True) (those two skip without torch), and the GPU launch path against the
stand-in CUDA driver (fake_cuda.c; needs torch). Tiny
configs: hidden 64 or 256, ragged sequences (13, 37: not multiples of the
tiles), a prefill then a decode step against the KV cache it filled. A
GPU-marked test runs the tutorial's own GPU check (hidden 1024, fp16 and
bf16, eager and compiled)."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

PATH = pathlib.Path(__file__).parents[2] / "tutorials" / "12-llama-block.py"
TOL = 16 * 2.0**-11  # a few fp16 roundings of the largest output


@pytest.fixture(scope="module")
def lb():
    spec = importlib.util.spec_from_file_location("tutorial_12_llama_block", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(lb, cfg, batch, seq, seed):
    rng = np.random.default_rng(seed)
    xp = rng.standard_normal((batch, seq, cfg.hidden)).astype(np.float16)
    xd = rng.standard_normal((batch, 1, cfg.hidden)).astype(np.float16)
    return xp, xd, lb.empty_cache(xp, cfg, batch)


@pytest.mark.parametrize("batch,seq", [(2, 13), (1, 16), (3, 37)])
def test_block_on_numpy_matches_the_float32_reference(lb, batch, seq, capsys):
    cfg = lb.TINY if seq < 32 else lb.Config(hidden=256, heads=2, intermediate=300, max_len=64)
    w = lb.random_weights(cfg, "float16", seed=batch)
    xp, xd, cache = _inputs(lb, cfg, batch, seq, seq)
    assert lb.check(xp, xd, w, cache, TOL, "numpy")
    out = capsys.readouterr().out
    assert out.count(": OK") == 2, out


def test_a_second_prefill_chunk_attends_to_the_cache(lb):
    # Chunked prefill: 13 tokens, then 7 more at positions 13..19 (the causal
    # diagonal off the key blocks' grid) against the cache the first wrote.
    cfg = lb.TINY
    w = lb.random_weights(cfg, "float16", seed=5)
    rng = np.random.default_rng(5)
    x1, x2 = (rng.standard_normal((2, n, cfg.hidden)).astype(np.float16) for n in (13, 7))
    cache = lb.empty_cache(x1, cfg, 2)
    lb.block(x1, w, cache, 0)
    want, k, v = lb.reference(x2, w, cache.k[:, :, :13], cache.v[:, :, :13], 13)
    got = lb.block(x2, w, cache, 13)
    bound = TOL * float(np.abs(want).max())
    assert float(np.abs(got.astype(np.float32) - want).max()) <= bound
    assert float(np.abs(cache.k[:, :, 13:20].astype(np.float32) - k).max()) <= bound
    assert float(np.abs(cache.v[:, :, 13:20].astype(np.float32) - v).max()) <= bound


def test_the_check_fails_on_a_wrong_block(lb, capsys):
    # The same check against a block whose MLP residual is dropped: it must fail.
    cfg = lb.TINY
    w = lb.random_weights(cfg, "float16")
    xp, xd, cache = _inputs(lb, cfg, 2, 13, 1)

    def wrong(x, c, start):
        return lb.block(x, w, c, start) - x

    assert not lb.check(xp, xd, w, cache, TOL, "wrong", run=wrong)
    assert "FAILED" in capsys.readouterr().out


def test_block_refuses_mismatched_weights(lb):
    w = lb.random_weights(lb.TINY, "float16")
    x = np.ones((1, 4, 32), dtype=np.float16)
    with pytest.raises(ValueError, match="hidden size 32"):
        lb.block(x, w, lb.empty_cache(x, lb.TINY, 1), 0)
    x = np.ones((1, 4, 64), dtype=np.float16)
    with pytest.raises(ValueError, match="max_len 32"):
        lb.block(x, w, lb.empty_cache(x, lb.TINY, 1), 30)


def _torch_inputs(lb, torch, cfg, batch, seq, dtype="float16"):
    xp, xd, cache = _inputs(lb, cfg, batch, seq, 7)
    w = lb.random_weights(cfg, dtype, "cpu")
    t = getattr(torch, dtype)
    return (w, torch.from_numpy(xp).to(t), torch.from_numpy(xd).to(t),
            lb.Cache(torch.from_numpy(cache.k).to(t), torch.from_numpy(cache.v).to(t)))


@pytest.mark.parametrize("dtype,eps", [("float16", 2.0**-11), ("bfloat16", 2.0**-8)])
def test_block_on_torch_cpu_tensors(lb, dtype, eps):
    torch = pytest.importorskip("torch")
    w, xp, xd, cache = _torch_inputs(lb, torch, lb.TINY, 2, 13, dtype)
    assert lb.check(xp, xd, w, cache, 16 * eps, f"torch CPU {dtype}")


def test_block_as_custom_ops_under_torch_compile_fullgraph(lb):
    torch = pytest.importorskip("torch")
    w, xp, xd, cache = _torch_inputs(lb, torch, lb.TINY, 2, 13)
    ops = lb.custom_ops()
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, c, start: lb.block(x, w, c, start, ops), fullgraph=True,
                             backend="aot_eager")
    assert lb.check(xp, xd, w, cache, TOL, "compiled", run=compiled)
    # The operators are the ones registered (namespace tk_llama).
    assert hasattr(torch.ops.tk_llama, "attention") and hasattr(torch.ops.tk_llama, "rope_qkv")


def test_gpu_launch_path_against_a_stand_in_driver(fake_libcuda, tmp_path):
    """llama_block_fake_checks.py: the block's GPU path (autotuned and split-K
    matmuls, grids, launch arguments) compiled and launched on the stand-in
    driver; needs torch (CPU tensors stand in for CUDA ones)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    env = dict(os.environ)
    env.pop("TK_INTERPRET", None)
    env["TK_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name(
        "llama_block_fake_checks.py")), str(fake_libcuda)], env=env, capture_output=True,
        text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "llama block fake checks passed" in r.stdout or "SKIP" in r.stdout, r.stdout


@pytest.mark.gpu
def test_tutorial_checks_itself_on_the_gpu(lb, capsys):
    assert lb.main(["--small"]) == 0
    out = capsys.readouterr().out
    assert "FAILED" not in out and "under torch.compile" in out
