"""tk kernels as torch operators (tk.library.custom_op, docs/torch.md): eager,
under torch.compile(fullgraph=True) with no graph break and no recompile for
repeated shapes, with autograd through a tk backward kernel, inside CUDA
graph capture and under mode="reduce-overhead". The profiler shows that the
compiled graph launches tk's kernel, not a fallback. Marked `gpu`: skipped,
with the reason, where there is no GPU (conftest.py); the argument checks
at the end need only torch."""

import pytest

import tk

torch = pytest.importorskip("torch")

N = 3000 + 17  # not a multiple of the block


@tk.jit
def mul_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    x = tk.load(x_ptr + offs, mask=mask)
    w = tk.load(w_ptr + offs, mask=mask)
    tk.store(out_ptr + offs, x * w, mask=mask)


@tk.jit
def mul_backward_kernel(dy_ptr, x_ptr, w_ptr, dx_ptr, dw_ptr, n, BLOCK: tk.constexpr):
    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)
    mask = offs < n
    dy = tk.load(dy_ptr + offs, mask=mask)
    tk.store(dx_ptr + offs, dy * tk.load(w_ptr + offs, mask=mask), mask=mask)
    tk.store(dw_ptr + offs, dy * tk.load(x_ptr + offs, mask=mask), mask=mask)


def _check(x, w):
    torch._check(x.shape == w.shape, lambda: f"tk_test::mul: shapes {x.shape} and {w.shape}")
    torch._check(x.is_contiguous() and w.is_contiguous(), lambda: "tk_test::mul: contiguous only")


def _mul_fake(x, w):
    _check(x, w)
    return torch.empty_like(x)


def _mul_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _mul_backward(ctx, dy):
    x, w = ctx.saved_tensors
    return mul_backward(dy.contiguous(), x, w)


@tk.library.custom_op("tk_test::mul_backward", mutates_args=(),
                      fake=lambda dy, x, w: (torch.empty_like(x), torch.empty_like(w)))
def mul_backward(dy: torch.Tensor, x: torch.Tensor,
                 w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dw = torch.empty_like(x), torch.empty_like(w)
    n = x.numel()
    mul_backward_kernel[(tk.cdiv(n, 1024),)](dy, x, w, dx, dw, n, BLOCK=1024)
    return dx, dw


@tk.library.custom_op("tk_test::mul", mutates_args=(), fake=_mul_fake, backward=_mul_backward,
                      setup_context=_mul_setup)
def mul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    _check(x, w)
    out = torch.empty_like(x)
    n = x.numel()
    mul_kernel[(tk.cdiv(n, 1024),)](x, w, out, n, BLOCK=1024)
    return out


def rand(*shape, dtype=None, requires_grad=False):
    t = torch.randn(*shape, device="cuda", dtype=dtype or torch.float32)
    return t.requires_grad_(requires_grad)


def model(x, w):
    return torch.relu(mul(x, w)) + 1.0


def reference(x, w):
    return torch.relu(x * w) + 1.0


def kernels_launched(fn, *args):
    """The names of the CUDA kernels `fn(*args)` launches, from torch's profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type.name == "CUDA"]


@pytest.mark.gpu
def test_op_eager_matches_torch():
    torch.manual_seed(0)
    x, w = rand(N), rand(N)
    torch.testing.assert_close(mul(x, w), x * w, atol=0, rtol=0)
    torch.testing.assert_close(torch.ops.tk_test.mul(x, w), x * w, atol=0, rtol=0)
    assert any("mul_kernel" in k for k in kernels_launched(mul, x, w))


@pytest.mark.gpu
def test_torch_compile_fullgraph_launches_the_tk_kernel_without_recompiling():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(model, fullgraph=True)  # a graph break raises
    torch.manual_seed(1)
    for _ in range(3):  # the same shapes, new values: one graph, no recompile
        x, w = rand(N), rand(N)
        torch.testing.assert_close(compiled(x, w), reference(x, w), atol=0, rtol=0)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    launched = kernels_launched(compiled, x, w)
    assert any("mul_kernel" in k for k in launched), launched


@pytest.mark.gpu
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_autograd_runs_the_tk_backward_kernel(compiled):
    torch.manual_seed(2)
    x, w = rand(N, requires_grad=True), rand(N, requires_grad=True)
    dy = rand(N)
    fn = torch.compile(model, fullgraph=True) if compiled else model
    fn(x, w).backward(dy)
    xr, wr = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    reference(xr, wr).backward(dy)
    torch.testing.assert_close(x.grad, xr.grad, atol=0, rtol=0)
    torch.testing.assert_close(w.grad, wr.grad, atol=0, rtol=0)

    def step():
        fn(x, w).backward(dy)

    assert any("mul_backward_kernel" in k for k in kernels_launched(step))


@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_tk_kernel_on_new_inputs():
    torch.manual_seed(3)
    x, w = rand(N), rand(N)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up (compiles, loads) outside the capture
        model(x, w)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x, w)
    for seed in (4, 5):
        torch.manual_seed(seed)
        x.copy_(rand(N))
        w.copy_(rand(N))
        graph.replay()
        torch.testing.assert_close(out, reference(x, w), atol=0, rtol=0)


@pytest.mark.gpu
def test_reduce_overhead_mode():
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    torch.manual_seed(6)
    for _ in range(4):  # the first calls record, the later ones replay the graph
        x, w = rand(N), rand(N)
        got = compiled(x, w).clone()
        torch.testing.assert_close(got, reference(x, w), atol=0, rtol=0)


@pytest.mark.gpu
def test_half_precision_and_2d_inputs():
    torch.manual_seed(7)
    x, w = rand(37, 101, dtype=torch.float16), rand(37, 101, dtype=torch.float16)
    torch.testing.assert_close(torch.compile(mul, fullgraph=True)(x, w), x * w, atol=0, rtol=0)


@pytest.mark.gpu
def test_wrong_device_is_tk_s_located_type_error():
    x = torch.randn(10)
    with pytest.raises(TypeError, match=r"argument 'x_ptr' of mul_kernel is a tensor on 'cpu'"):
        mul(x, x)


@pytest.mark.gpu
def test_mismatched_shapes_fail_in_torch_s_check():
    with pytest.raises(RuntimeError, match=r"tk_test::mul: shapes"):
        mul(rand(10), rand(11))


def test_custom_op_name_and_arguments_are_checked():
    with pytest.raises(ValueError, match="namespace::op"):
        tk.library.custom_op("no_namespace")
    with pytest.raises(ValueError, match="setup_context= is given without backward="):
        tk.library.custom_op("tk_test::x", setup_context=lambda *a: None)
    with pytest.raises(TypeError, match="decorates a function"):
        tk.library.custom_op("tk_test::y")(42)
