"""Attention forward written the plain way a Triton user writes it (online
softmax: S = Q K^T, the row max and sum, P = exp2(S - m), O += P V, in a loop
over key blocks; an optional causal mask), in Triton's syntax and compiled by
both tk and Triton: bench/attention_bench.py loads this file twice, with
BACKEND set to "tk" or "triton" before the body runs, so the two compilers get
the same source, the same meta-parameters and the same launch grid.

Q, K, V, Out: (Z*H, N_CTX, HEAD_DIM), the head dimension contiguous; grid
(cdiv(N_CTX, BLOCK_M), Z*H).
"""

if BACKEND == "tk":  # noqa: F821  (set by the loader before the body runs)
    import tk as tl
    jit = tl.jit
else:
    import triton
    import triton.language as tl
    jit = triton.jit


@jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_qz, stride_qm, stride_kz, stride_kn, stride_vz,
             stride_vn, stride_oz, stride_om, N_CTX, HEAD_DIM: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + offs_m[:, None] * stride_qm + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = N_CTX
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = K + off_z * stride_kz + cols[None, :] * stride_kn + offs_d[:, None]
        k = tl.load(k_ptrs, mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        valid = cols[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v_ptrs = V + off_z * stride_vz + cols[:, None] * stride_vn + offs_d[None, :]
        v = tl.load(v_ptrs, mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = Out + off_z * stride_oz + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)
