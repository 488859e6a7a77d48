"""The tutorials' Python scripts are tests: each runs its kernel at a small
size on the interpreter and checks itself (Halide's rule: tutorials run in the
suite)."""

import importlib.util
import pathlib

import pytest

TUTORIALS = sorted((pathlib.Path(__file__).parents[2] / "tutorials").glob("[01][0-9]-*.py"))


def load(path):
    spec = importlib.util.spec_from_file_location(f"tutorial_{path.stem.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_python_tutorial_is_here_beside_its_tk_source():
    assert [p.name for p in TUTORIALS] == [
        "01-vector-add.py", "02-fused-softmax.py", "03-layer-norm.py", "04-matmul.py",
        "06-fused-attention.py", "07-layer-norm-backward.py", "08-rms-norm.py",
        "09-softmax-backward.py", "10-cross-entropy.py", "11-dropout-residual-layer-norm.py",
        "12-llama-block.py", "13-conv2d-bias-relu.py"]
    for p in TUTORIALS:
        assert p.with_suffix(".tk").exists(), f"{p.name} has no {p.stem}.tk beside it"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs_and_checks_itself(path, capsys):
    assert load(path).main(["--small"]) == 0
    out = capsys.readouterr().out
    assert ": OK" in out


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_bench_says_it_needs_a_gpu(path, capsys):
    assert load(path).main(["--bench"]) == 0
    assert "GPU" in capsys.readouterr().out
