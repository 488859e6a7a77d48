"""Kernels that are in no tutorial and no test, written once in Triton's
syntax and compiled by both tk and Triton: bench/novel_bench.py loads this
file twice, with BACKEND set to "tk" or "triton" before the body runs, so the
two compilers get the same source, the same meta-parameters and the same
launch grid. They stand for issue 5's check ("kernels that are not in the
repository: elementwise chains, row and column reductions, masked ragged
edges, mixed dtypes"); every shape is ragged on purpose.

    import importlib.util
    spec = importlib.util.spec_from_file_location("nk_tk", "bench/novel_kernels.py")
    mod = importlib.util.module_from_spec(spec); mod.BACKEND = "tk"
    spec.loader.exec_module(mod)      # mod.gelu_mix_kernel is a @tk.jit kernel
"""

if BACKEND == "tk":  # noqa: F821  (set by the loader before the body runs)
    import tk as tl
    jit = tl.jit
else:
    import triton
    import triton.language as tl
    jit = triton.jit


@jit
def gelu_mix_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # fp16 x, fp32 y -> bf16: a sigmoid-approximated GELU of x scaled by y,
    # plus a square root of |y|; n is not a multiple of BLOCK
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    g = x * tl.sigmoid(1.702 * x)
    tl.store(out_ptr + offs, (g * y + tl.sqrt(tl.abs(y))).to(tl.bfloat16), mask=mask)


@jit
def dequant_kernel(q_ptr, scale_ptr, zero_ptr, out_ptr, M, N, stride_q, stride_o,
                   BLOCK_N: tl.constexpr):
    # int8 rows, one fp32 scale and int32 zero point per row -> fp16, one row
    # per program walking N in BLOCK_N chunks
    row = tl.program_id(0)
    scale = tl.load(scale_ptr + row)
    zero = tl.load(zero_ptr + row)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        q = tl.load(q_ptr + row * stride_q + cols, mask=mask, other=0)
        v = (q.to(tl.int32) - zero).to(tl.float32) * scale
        tl.store(out_ptr + row * stride_o + cols, v.to(tl.float16), mask=mask)


@jit
def col_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # fp32 column sums of an M x N matrix: each program owns BLOCK_N columns
    # and walks all rows in BLOCK_M chunks
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < N)


@jit
def row_argmax_kernel(x_ptr, val_ptr, idx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    # fp16 rows: the maximum (kept in fp16) and its index, one row per program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_m + cols, mask=cols < N, other=-float("inf"))
    v, i = tl.max(x, axis=0, return_indices=True)
    tl.store(val_ptr + row, v)
    tl.store(idx_ptr + row, i)


@jit
def transpose_bias_kernel(x_ptr, b_ptr, out_ptr, M, N, stride_xm, stride_om,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[n, m] = x[m, n] + b[n] for an fp32 M x N x: a tile read along rows,
    # written along columns (a layout change), ragged on both edges
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y = x + b[None, :]
    tl.store(out_ptr + cols[None, :] * stride_om + rows[:, None], y, mask=mask)


@jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, N, stride, eps, BLOCK_N: tl.constexpr):
    # fp16 rows scaled by their reciprocal root mean square (fp32 math) and
    # an fp16 weight, one row per program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(out_ptr + row * stride + cols, (x * r * w).to(tl.float16), mask=mask)


@jit
def col_softmax_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    # fp32 softmax down each column (axis 0): a program owns BLOCK_N columns
    # and all M rows at once
    rows = tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride_m + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0)[None, :])
    tl.store(out_ptr + offs, e / tl.sum(e, axis=0)[None, :], mask=mask)


@jit
def total_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # fp32 sum of a vector: a block sum per program, added with one atomic
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@jit
def strided_bias_relu_kernel(x_ptr, b_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out = relu(x + b[None, :]) in bf16 from an fp16 x read through arbitrary
    # strides (here a transposed view), ragged on both edges
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask,
                other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y = tl.maximum(x.to(tl.float32) + b[None, :], 0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], y.to(tl.bfloat16), mask=mask)


@jit
def row_cumsum_kernel(x_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr):
    # fp32 inclusive prefix sums along each row, one row per program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row * stride + cols, tl.cumsum(x, axis=0), mask=cols < N)


@jit
def mm_epilogue_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                       stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                       GELU: tl.constexpr):
    # C = act(A @ B + bias[None, :]) in C's dtype, grouped tile order, masked
    # ragged M/N/K edges, any strides (a transposed A or B is a stride swap)
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    if GELU:
        acc = acc * tl.sigmoid(1.702 * acc)
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
