"""tk.inductor: torch.compile with Inductor's Triton kernels compiled and
launched by tk. Needs torch (skipped visibly without it). Without a GPU,
Inductor's Triton CPU back end writes the kernels and tk runs them on its
interpreter; on a GPU (marked gpu) they compile and launch on the GPU, and a
kernel tk refuses goes to Triton with its reason kept."""

import logging

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import tk.inductor  # noqa: E402


class Block(torch.nn.Module):
    """Linear, relu, LayerNorm, scaled softmax, a column sum: pointwise,
    persistent and looped reductions in Inductor's kernels."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.linear = torch.nn.Linear(n_in, n_out)
        self.norm = torch.nn.LayerNorm(n_out)

    def forward(self, x):
        y = self.norm(torch.relu(self.linear(x)))
        return torch.softmax(y * 2, -1).sum(0) + y.amax(1).mean()


@pytest.fixture
def inductor_with_tk(monkeypatch):
    """tk.inductor on, with empty Inductor caches (every kernel compiles)."""
    import torch._dynamo
    from torch._inductor.utils import fresh_cache

    torch._dynamo.reset()
    tk.inductor.enable()
    with fresh_cache():
        yield
    tk.inductor.disable()
    torch._dynamo.reset()


@pytest.fixture
def cpu_triton(monkeypatch):
    """Inductor writes Triton kernels for CPU tensors; Triton's back-end hash
    (a cache key) needs a driver this machine may not have."""
    import torch._inductor.config as config
    import torch.utils._triton as torch_triton

    monkeypatch.setattr(torch_triton, "triton_hash_with_backend", lambda: "tk-test")
    monkeypatch.setattr(torch_triton, "triton_backend", lambda: None)
    with config.patch(cpu_backend="triton"):  # torch's config: patch, not setattr
        yield


def test_enable_and_disable_swap_only_the_compile_steps():
    from torch._inductor.async_compile import AsyncCompile
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    original = CachingAutotuner._precompile_config, AsyncCompile.triton
    tk.inductor.enable()
    tk.inductor.enable()  # twice is once
    assert tk.inductor.enabled()
    assert (CachingAutotuner._precompile_config, AsyncCompile.triton) != original
    tk.inductor.disable()
    assert not tk.inductor.enabled()
    assert (CachingAutotuner._precompile_config, AsyncCompile.triton) == original


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_triton_kernels_run_on_the_interpreter(cpu_triton, inductor_with_tk, threads,
                                                   monkeypatch):
    # 1: Inductor compiles each kernel where it is defined; 2: tk's thread
    # pool compiles them and Inductor's wait() collects the futures.
    import torch._inductor.config as config

    torch.manual_seed(0)
    model = Block(37, 50)  # not multiples of any block
    x = torch.randn(19, 37)
    before, fell_back = tk.inductor.compiled_configs(), len(tk.inductor.fallbacks())
    with config.patch(compile_threads=threads):
        out = torch.compile(model)(x)
    torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
    assert tk.inductor.compiled_configs() > before
    assert len(tk.inductor.fallbacks()) == fell_back


@pytest.mark.gpu
def test_a_model_compiles_with_tk_on_the_gpu(inductor_with_tk):
    torch.manual_seed(0)
    model = Block(300, 257).cuda()
    x = torch.randn(129, 300, device="cuda")
    before, fell_back = tk.inductor.compiled_configs(), len(tk.inductor.fallbacks())
    compiled = torch.compile(model, fullgraph=True)
    out = compiled(x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
    assert tk.inductor.compiled_configs() > before
    assert tk.inductor.fallbacks()[fell_back:] == []
    # a second call reuses everything: no new configuration is compiled
    n = tk.inductor.compiled_configs()
    torch.testing.assert_close(compiled(x + 1), model(x + 1), rtol=1e-4, atol=1e-4)
    assert tk.inductor.compiled_configs() == n


@pytest.mark.gpu
def test_a_training_step_in_bf16_matches_eager(inductor_with_tk):
    torch.manual_seed(1)
    model = Block(128, 200).cuda()
    twin = Block(128, 200).cuda()
    twin.load_state_dict(model.state_dict())
    x = torch.randn(65, 128, device="cuda")
    compiled = torch.compile(model)
    for m, f in ((model, compiled), (twin, twin)):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = f(x).float().square().sum()
        loss.backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=5e-2, atol=5e-2)


@pytest.mark.gpu
def test_a_kernel_tk_refuses_runs_with_triton_and_says_why(inductor_with_tk, monkeypatch, caplog):
    def refuse(*args, **kwargs):
        raise tk.inductor.Unsupported("refused by the test")

    monkeypatch.setattr(tk.inductor, "compile_config", refuse)
    model = Block(64, 96).cuda()
    x = torch.randn(33, 64, device="cuda")
    fell_back = len(tk.inductor.fallbacks())
    with caplog.at_level(logging.WARNING, logger="tk.inductor"):
        out = torch.compile(model)(x)
    torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
    reasons = tk.inductor.fallbacks()[fell_back:]
    assert reasons and all("refused by the test" in r for _, r in reasons)
    assert "compiles with Triton: Unsupported: refused by the test" in caplog.text
