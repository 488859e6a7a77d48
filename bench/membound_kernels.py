"""The plain forward kernels of bench/membound_bench.py: softmax and LayerNorm
written as a user writes them (one program per row, the whole row in one
block, BLOCK_N = the next power of two >= N, statistics in fp32), and
LayerNorm once more as three loops over column blocks. The
benchmark compiles this same file with tk and with Triton (it binds the name
`tk` to Triton's language for the second load), beside the kernels of
tutorials 07-11; RMSNorm's forward is tutorial 8's.
"""
import tk


@tk.jit
def softmax_fwd(Y, X, stride, N, BLOCK_N: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    x = tk.load(X + row * stride + cols, mask=mask, other=-float("inf")).to(tk.float32)
    e = tk.exp(x - tk.max(x, axis=0))
    tk.store(Y + row * stride + cols, e / tk.sum(e, axis=0), mask=mask)


@tk.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_N: tk.constexpr):
    row = tk.program_id(0)
    cols = tk.arange(0, BLOCK_N)
    mask = cols < N
    x = tk.load(X + row * stride + cols, mask=mask, other=0.0).to(tk.float32)
    mean = tk.sum(x, axis=0) / N
    xc = tk.where(mask, x - mean, 0.0)
    var = tk.sum(xc * xc, axis=0) / N
    rstd = 1 / tk.sqrt(var + eps)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    w = tk.load(W + cols, mask=mask)
    b = tk.load(B + cols, mask=mask)
    tk.store(Y + row * stride + cols, xc * rstd * w + b, mask=mask)


@tk.jit
def layer_norm_fwd_loop(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_N: tk.constexpr):
    # The same, as a loop over BLOCK_N columns three times (mean, variance,
    # normalise): the form that works for any N, launched with BLOCK_N = the
    # next power of two >= N (capped at 64 KiB of the row) so that each loop
    # runs once, the x of the second and third walks coming from L2.
    row = tk.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tk.zeros([BLOCK_N], dtype=tk.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tk.arange(0, BLOCK_N)
        acc += tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
    mean = tk.sum(acc, axis=0) / N
    acc = tk.zeros([BLOCK_N], dtype=tk.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tk.arange(0, BLOCK_N)
        x = tk.load(X + cols, mask=cols < N, other=0.0).to(tk.float32)
        x = tk.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tk.sqrt(tk.sum(acc, axis=0) / N + eps)
    tk.store(Mean + row, mean)
    tk.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_N):
        cols = off + tk.arange(0, BLOCK_N)
        mask = cols < N
        w = tk.load(W + cols, mask=mask)
        b = tk.load(B + cols, mask=mask)
        x = tk.load(X + cols, mask=mask, other=0.0).to(tk.float32)
        tk.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)
