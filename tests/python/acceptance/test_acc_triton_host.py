"""The host side of Triton's tutorials, with only the imports changed:
`DEVICE = tk.runtime.driver.active.get_active_torch_device()`, device
properties for a persistent grid, `kernel.warmup(..., grid=(1,))`,
`_init_handles()`, `n_regs`, `metadata.shared` and launching the warmed-up
kernel with `compiled[grid](...)`. On the GPU (marked gpu) DEVICE is cuda:0;
on the interpreter it is the CPU, so the same host code runs on CPU torch
tensors (skipped where torch is not installed)."""

import pytest

import tk
import tk as tl
from tk.runtime import driver

torch = pytest.importorskip("torch")


@pytest.fixture(params=["interp", pytest.param("gpu", marks=pytest.mark.gpu)])
def where(request):
    return request.param


@tl.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) +
             tl.load(y_ptr + offsets, mask=mask), mask=mask)


def test_vector_add_on_the_active_device(where):
    DEVICE = driver.active.get_active_torch_device()
    assert DEVICE.type == ("cuda" if where == "gpu" else "cpu"), DEVICE
    torch.manual_seed(0)
    size = 98432
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (tl.cdiv(n_elements, meta["BLOCK_SIZE"]), )  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    assert torch.max(torch.abs(output - (x + y))).item() == 0
    assert driver.active.get_current_target().backend == "cuda"
    assert driver.active.get_current_device() == 0


@tl.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        softmax_output = numerator / tl.sum(numerator, axis=0)
        tl.store(output_ptr + row_idx * output_row_stride + col_offsets, softmax_output,
                 mask=mask)


@pytest.mark.gpu
@pytest.mark.parametrize("n_rows,n_cols", [(1823, 781), (4096, 4096)])
def test_softmax_tutorial_host_code(n_rows, n_cols):
    DEVICE = driver.active.get_active_torch_device()
    properties = driver.active.utils.get_device_properties(DEVICE.index)
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    assert NUM_SM > 0 and NUM_REGS > 0 and SIZE_SMEM > 0 and WARP_SIZE == 32

    x = torch.randn(n_rows, n_cols, device=DEVICE)
    y = torch.empty_like(x)
    BLOCK_SIZE = tk.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if SIZE_SMEM > 200000 else 2
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                   BLOCK_SIZE=BLOCK_SIZE, num_stages=num_stages,
                                   num_warps=num_warps, grid=(1, ))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    # as the tutorial computes it: the cross-warp reductions (8 warps) use
    # shared memory, so size_smem is not 0 (static here; a kernel whose
    # shared memory is dynamic, as the pipelined dot's ring, counts it too)
    assert size_smem > 0, size_smem
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = min(NUM_SM * occupancy, n_rows)
    kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE,
                                 num_stages)
    tk.testing.assert_close(y, torch.softmax(x, axis=1), atol=1e-6, rtol=1e-5)
