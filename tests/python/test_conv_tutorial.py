"""Tutorial 13 (Conv2d + bias + ReLU) beyond its own --small run, which
test_tutorials.py does: the torch path of `conv2d_bias_relu` and of
bench/conv_bench.py on torch CPU tensors through the interpreter, against
F.conv2d + bias + relu in float32 (what the GPU run compares against cuDNN
with), at ResNet-50's layer shapes (batch 1) and on a ragged layer where the
two walks of the reduction must agree."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tk

ROOT = pathlib.Path(__file__).parents[2]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def interpret(monkeypatch):
    monkeypatch.setenv("TK_INTERPRET", "1")


def test_torch_tensors_through_the_launcher(interpret):
    torch = pytest.importorskip("torch")
    tut = load(ROOT / "tutorials" / "13-conv2d-bias-relu.py", "conv_tutorial_torch")
    torch.manual_seed(25)
    for N, H, W, C, K, KH, KW, stride, pad, dil in tut.GPU_LAYERS[:4]:
        x = torch.rand((N, H, W, C), dtype=torch.float16) * 2 - 1
        w = ((torch.rand((KH, KW, C, K)) * 2 - 1) / (KH * KW * C) ** 0.5).half()
        bias = (torch.rand(K) - 0.5).half()
        want = tut.torch_reference(x, w, bias, stride, pad, dil)
        y = tut.conv2d_bias_relu(x, w, bias, stride, pad, dil)
        assert y.dtype == torch.float16 and tuple(y.shape) == tuple(want.shape)
        err = float((y.float() - want).abs().max())
        assert err <= 1e-2, f"layer {(N, H, W, C, K, KH, KW, stride, pad, dil)}: {err}"
        assert float(want.abs().max()) > 0.5  # not a trivially small output


def test_both_walks_agree_on_a_ragged_layer(interpret):
    tut = load(ROOT / "tutorials" / "13-conv2d-bias-relu.py", "conv_tutorial_walks")
    rng = np.random.default_rng(7)
    x, w, bias = tut.random_layer(rng, 2, 13, 11, 19, 21, 3, 5)
    want = tut.reference(x, w, bias, (2, 1), (1, 2), (1, 2))
    for blocks in (False, True):
        config = dict(tut.INTERPRETER_CONFIG)
        N, H, W, C = x.shape
        P, Q = want.shape[1:3]
        y = np.empty((N, P, Q, 21), dtype=np.float16)
        grid = (tk.cdiv(N * P * Q, config["BLOCK_M"]) * tk.cdiv(21, config["BLOCK_N"]),)
        tut.kernels.conv2d_bias_relu_kernel[grid](x, w, bias, y, N, H, W, C, P, Q, 21, 2, 1, 1,
                                                  2, 1, 2, KH=3, KW=5, CHANNEL_BLOCKS=blocks,
                                                  **config)
        np.testing.assert_allclose(y.astype(np.float64), want, atol=1e-2, rtol=1e-2)


def test_bad_shapes_are_refused():
    tut = load(ROOT / "tutorials" / "13-conv2d-bias-relu.py", "conv_tutorial_bad")
    x = np.zeros((1, 8, 8, 4), np.float16)
    with pytest.raises(ValueError, match="4 channels"):
        tut.conv2d_bias_relu(x, np.zeros((3, 3, 5, 8), np.float16), np.zeros(8, np.float16))
    with pytest.raises(ValueError, match="no output"):
        tut.conv2d_bias_relu(x, np.zeros((9, 9, 4, 8), np.float16), np.zeros(8, np.float16))


def test_conv_bench_checks_resnet_layers_on_the_interpreter(capsys):
    pytest.importorskip("torch")
    bench = load(ROOT / "bench" / "conv_bench.py", "conv_bench_interpret")
    assert bench.main(["--interpret", "--only", "conv1,conv3 3x3/2,conv5 1x1/2"]) == 0
    out = capsys.readouterr().out
    assert "checks: 3/3 layers match torch in float32" in out
