"""Tutorial 12: a Llama-style decoder block from tk kernels, from Python.

    h   = x + Attention(RoPE(RMSNorm(x) @ W_qkv)) @ W_o          (causal, KV cache)
    out = h + (silu(RMSNorm(h) @ W_gate) * (RMSNorm(h) @ W_up)) @ W_down

Every kernel is in tutorials/12-llama-block.tk (its header explains them),
loaded from that file, so this script and its kernels read on their own:
RMSNorm, the QKV projection, RoPE writing Q and the KV cache, causal
attention (prefill) or split-KV attention (a decode step), the output
projection with the residual add in its epilogue, RMSNorm, the gate/up
projection with SiLU-multiply in its epilogue, and the down projection with
the residual add. Eight launches per prefill block; a decode step (a few
rows) splits each matmul's K and sums the partials in a second small kernel
that applies the epilogue (thirteen launches).

- `block(x, weights, cache, start_pos)` runs the block on x of shape
  (batch, seq, hidden): a prefill when seq > 1 (queries start_pos ..
  start_pos + seq - 1), a decode step when seq == 1. It appends the new keys
  and values to `cache` (`Cache`: (batch, heads, max_len, head_dim) K and
  V) and returns the block's output.
- `reference(x, weights, k_past, v_past, start_pos)` is the same block in
  float32 (torch or numpy, as x is).
- `custom_ops()` registers the block's five steps as torch operators
  (`tk.library.custom_op`, namespace `tk_llama`); `block(..., ops=custom_ops())`
  calls them, which is what runs under `torch.compile(fullgraph=True)`.

The matmuls are autotuned on the GPU (`tk.autotune`, keyed by M, N, K; one
list of tiles for prefill and one for M <= 64; the decode step's GEMVs, M <= 16,
split K and tune the partial's tiles); on the interpreter they use small fixed tiles.

    python3 tutorials/12-llama-block.py [--small] [--bench]

On a machine with a GPU (torch with CUDA) it checks the block against the
float32 torch reference at hidden 4096 (fp16 and bf16; prefill and decode)
and once under torch.compile(fullgraph=True); elsewhere, or with
TK_INTERPRET=1, it runs a tiny block (hidden 64, 4 heads, ragged sequence)
on the CPU interpreter on numpy arrays (torch CPU tensors work as well) and
checks it against the float32 reference. bench/llama_block_bench.py times
it against torch eager and torch.compile. The GPU check and the bench have
not yet run on a GPU (tutorials/README.md says what is verified without one).
"""

import functools
import importlib.machinery
import importlib.util
import math
import os
import pathlib
import sys
from dataclasses import dataclass

import numpy as np

import tk


def _load_kernels():
    path = pathlib.Path(__file__).resolve().with_name("12-llama-block.tk")
    loader = importlib.machinery.SourceFileLoader("llama_block_tk", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


kernels = _load_kernels()


@dataclass(frozen=True)
class Config:
    hidden: int = 4096
    heads: int = 32
    intermediate: int = 11008
    max_len: int = 2048
    eps: float = 1e-5
    rope_theta: float = 10000.0

    @property
    def head_dim(self):
        return self.hidden // self.heads


LLAMA_7B = Config()
TINY = Config(hidden=64, heads=4, intermediate=176, max_len=32)


# -- tiles -------------------------------------------------------------------

def _tiles(rows):
    return [tk.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_warps=w,
                      num_stages=s) for m, n, k, w, s in rows]


# Prefill (M in the thousands): 128x256 on two warp groups is tutorial 4's
# large-matrix winner on sm_90a; the others for N that 256 divides badly.
PREFILL_TILES = _tiles([(128, 256, 64, 8, 4), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4),
                        (64, 128, 64, 4, 4)])
# matmul_swiglu keeps two accumulators: half the columns for the same registers.
SWIGLU_TILES = _tiles([(128, 128, 64, 8, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
                       (128, 128, 64, 8, 3)])
# The decode step (M = batch <= 64): streaming the weights is the work; narrow
# tiles give enough programs to cover the SMs.
DECODE_TILES = _tiles([(16, 64, 128, 4, 4), (16, 32, 256, 4, 3), (16, 32, 128, 4, 6),
                       (16, 16, 256, 4, 4), (16, 128, 128, 4, 4), (64, 64, 64, 4, 4)])


def _by_m(prefill, decode):
    def prune(configs, named, **kwargs):
        want = decode if named["M"] <= 64 else prefill
        return [c for c in configs if any(c is w for w in want)]

    return {"early_config_prune": prune}


matmul_tuned = tk.autotune(PREFILL_TILES + DECODE_TILES, key=["M", "N", "K"],
                           prune_configs_by=_by_m(PREFILL_TILES, DECODE_TILES))(kernels.matmul)
swiglu_tuned = tk.autotune(SWIGLU_TILES + DECODE_TILES, key=["M", "N", "K"],
                           prune_configs_by=_by_m(SWIGLU_TILES, DECODE_TILES))(
                               kernels.matmul_swiglu)
# The decode step's matmuls split K (matmul_partial + matmul_finish) when M
# is at most SPLIT_K_ROWS (0: never; a larger M up to 64 takes DECODE_TILES);
# the partial's tiles are tuned.
SPLIT_K_ROWS = 16
PARTIAL_TILES = [tk.Config({"BLOCK_M": 16, "BLOCK_N": n, "BLOCK_K": k}, num_warps=4, num_stages=s)
                 for n, k, s in ((64, 128, 4), (128, 128, 4), (64, 256, 3), (32, 256, 4))]
partial_tuned = tk.autotune(PARTIAL_TILES, key=["M", "N", "K", "k_chunk"])(
    kernels.matmul_partial)
# On the interpreter: small fixed tiles (ragged against the tiny shapes).
INTERP_TILE = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=32, GROUP_M=4)


# -- arrays: numpy (the interpreter) or torch --------------------------------

def _is_numpy(a):
    return isinstance(a, np.ndarray)


def _on_gpu(a):
    return not _is_numpy(a) and a.is_cuda and os.environ.get("TK_INTERPRET") != "1"


def _empty(like, shape, float32=False):
    if _is_numpy(like):
        return np.empty(shape, dtype=np.float32 if float32 else like.dtype)
    import torch

    return torch.empty(shape, dtype=torch.float32 if float32 else like.dtype, device=like.device)


# -- the block's steps -------------------------------------------------------

def rms_norm(x, w, eps):
    """RMSNorm of each row of x (M, N)."""
    M, N = x.shape
    y = _empty(x, (M, N))
    block = tk.next_power_of_2(N)
    warps = max(1, min(16, block // 256)) if _on_gpu(x) else 4
    kernels.rms_norm[(M,)](x, w, y, N, N, N, eps, BLOCK_N=block, num_warps=warps)
    return y


def _sm_count(a):
    return _sm_count_of(a.device.index) if _on_gpu(a) else 4


@functools.lru_cache(maxsize=None)
def _sm_count_of(index):
    import torch

    index = torch.cuda.current_device() if index is None else index
    return torch.cuda.get_device_properties(index).multi_processor_count


def _matmul_split(a, b, residual, epilogue, n_out):
    """Split-K: fp32 partials of a @ b, then matmul_finish's epilogue."""
    M, K = a.shape
    N = b.shape[1]
    gpu = _on_gpu(a)
    # About two programs per SM over (64-column tiles) x splits; chunks of
    # K a multiple of every BLOCK_K.
    align = 256 if gpu else 32
    splits = max(1, min(8, (2 * _sm_count(a)) // tk.cdiv(N, 64 if gpu else 32)))
    k_chunk = tk.cdiv(tk.cdiv(K, splits), align) * align
    splits = tk.cdiv(K, k_chunk)
    part = _empty(a, (splits, M, N), float32=True)
    if gpu:
        grid = lambda meta: (tk.cdiv(N, meta["BLOCK_N"]), splits,  # noqa: E731
                             tk.cdiv(M, meta["BLOCK_M"]))
        partial_tuned[grid](a, b, part, M, N, K, k_chunk, K, N)
    else:
        t = INTERP_TILE
        kernels.matmul_partial[(tk.cdiv(N, t["BLOCK_N"]), splits, tk.cdiv(M, t["BLOCK_M"]))](
            a, b, part, M, N, K, k_chunk, K, N, BLOCK_M=t["BLOCK_M"], BLOCK_N=t["BLOCK_N"],
            BLOCK_K=t["BLOCK_K"])
    c = _empty(a, (M, n_out))
    block_n = 256 if gpu else 32
    kernels.matmul_finish[(M, tk.cdiv(n_out, block_n))](
        part, c if residual is None else residual, c, M, n_out, splits, EPILOGUE=epilogue,
        BLOCK_S=max(2, tk.next_power_of_2(splits)), BLOCK_N=block_n, num_warps=2)
    return c


def matmul(a, b, residual=None):
    """a (M, K) @ b (K, N) (+ residual (M, N)), fp32 accumulation."""
    M, K = a.shape
    N = b.shape[1]
    if M <= SPLIT_K_ROWS:
        return _matmul_split(a, b, residual, "none" if residual is None else "residual", N)
    c = _empty(a, (M, N))
    r = c if residual is None else residual
    args = (a, b, c, r, M, N, K, K, N, N, N)
    if _on_gpu(a):
        grid = lambda meta: (  # noqa: E731
            tk.cdiv(M, meta["BLOCK_M"]) * tk.cdiv(N, meta["BLOCK_N"]),)
        matmul_tuned[grid](*args, RESIDUAL=residual is not None)
    else:
        t = INTERP_TILE
        grid = (tk.cdiv(M, t["BLOCK_M"]) * tk.cdiv(N, t["BLOCK_N"]),)
        kernels.matmul[grid](*args, RESIDUAL=residual is not None, **t)
    return c


def matmul_swiglu(a, b):
    """silu(a @ b[:, :N]) * (a @ b[:, N:]) for b (K, 2N)."""
    M, K = a.shape
    N = b.shape[1] // 2
    if M <= SPLIT_K_ROWS:
        return _matmul_split(a, b, None, "swiglu", N)
    c = _empty(a, (M, N))
    args = (a, b, c, M, N, K, K, 2 * N, N)
    if _on_gpu(a):
        grid = lambda meta: (  # noqa: E731
            tk.cdiv(M, meta["BLOCK_M"]) * tk.cdiv(N, meta["BLOCK_N"]),)
        swiglu_tuned[grid](*args)
    else:
        t = INTERP_TILE
        kernels.matmul_swiglu[(tk.cdiv(M, t["BLOCK_M"]) * tk.cdiv(N, t["BLOCK_N"]),)](*args, **t)
    return c


def rope_qkv(qkv, cos, sin, k_cache, v_cache, batch, start_pos):
    """Rotates Q and K of qkv (batch * seq, 3 * hidden), returns Q (batch,
    heads, seq, head_dim) and writes K, V to the caches at start_pos.."""
    _, heads, max_len, head_dim = k_cache.shape
    seq = qkv.shape[0] // batch
    q = _empty(qkv, (batch, heads, seq, head_dim))
    kernels.rope_qkv[(batch * seq,)](
        qkv, cos, sin, q, k_cache, v_cache, seq, start_pos, qkv.shape[1],
        heads * max_len * head_dim, max_len * head_dim, H=heads, HEAD_DIM=head_dim,
        BLOCK_H=tk.next_power_of_2(heads), num_warps=4)
    return q


def attention(q, k_cache, v_cache, start_pos):
    """Causal attention of q (batch, heads, seq, head_dim), at positions
    start_pos.., against the cache's first start_pos + seq keys; returns
    (batch * seq, heads * head_dim)."""
    batch, heads, seq, head_dim = q.shape
    max_len = k_cache.shape[2]
    o = _empty(q, (batch * seq, heads * head_dim))
    scale = 1.0 / math.sqrt(head_dim)
    cz, ch = heads * max_len * head_dim, max_len * head_dim
    gpu = _on_gpu(q)
    if seq > 1:
        bm, bn, w, s = (128, 64, 8 if head_dim >= 128 else 4, 3) if gpu else (16, 8, 4, 1)
        kernels.attn_prefill[(tk.cdiv(seq, bm), batch * heads)](
            q, k_cache, v_cache, o, scale, seq, start_pos, cz, ch, heads, HEAD_DIM=head_dim,
            BLOCK_M=bm, BLOCK_N=bn, num_warps=w, num_stages=s)
        return o
    # Decode: split the cache so that about two programs per SM run.
    n_keys = start_pos + 1
    bn = 64 if gpu else 8
    want = max(1, 2 * _sm_count(q) // (batch * heads)) if gpu else 3
    splits = max(1, min(want, tk.cdiv(n_keys, bn)))
    chunk = tk.cdiv(tk.cdiv(n_keys, splits), bn) * bn
    splits = tk.cdiv(n_keys, chunk)
    part = _empty(q, (batch * heads * splits, head_dim), float32=True)
    part_ml = _empty(q, (batch * heads * splits, 2), float32=True)
    kernels.attn_decode[(batch * heads, splits)](
        q, k_cache, v_cache, part, part_ml, scale, n_keys, chunk, cz, ch, heads,
        HEAD_DIM=head_dim, BLOCK_N=bn, num_warps=4)
    kernels.attn_decode_combine[(batch * heads,)](
        part, part_ml, o, splits, HEAD_DIM=head_dim,
        BLOCK_S=max(2, tk.next_power_of_2(splits)), num_warps=4)
    return o


class PlainOps:
    """The steps as plain Python functions (any arrays tk launches on)."""
    rms_norm = staticmethod(rms_norm)
    matmul = staticmethod(matmul)
    matmul_swiglu = staticmethod(matmul_swiglu)
    rope_qkv = staticmethod(rope_qkv)
    attention = staticmethod(attention)


_custom_ops = None


def custom_ops():
    """The same steps as torch operators tk_llama::*, for torch.compile."""
    global _custom_ops
    if _custom_ops is not None:
        return _custom_ops
    from typing import Optional

    import torch

    lib = tk.library

    def fake_rope(qkv, cos, sin, k_cache, v_cache, batch, start_pos):
        _, heads, _, head_dim = k_cache.shape
        return qkv.new_empty((batch, heads, qkv.shape[0] // batch, head_dim))

    def fake_attention(q, k_cache, v_cache, start_pos):
        b, h, s, d = q.shape
        return q.new_empty((b * s, h * d))

    def op_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
        return rms_norm(x, w, eps)

    def op_matmul(a: torch.Tensor, b: torch.Tensor,
                  residual: Optional[torch.Tensor] = None) -> torch.Tensor:
        return matmul(a, b, residual)

    def op_swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul_swiglu(a, b)

    def op_rope(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, k_cache: torch.Tensor,
                v_cache: torch.Tensor, batch: int, start_pos: int) -> torch.Tensor:
        return rope_qkv(qkv, cos, sin, k_cache, v_cache, batch, start_pos)

    def op_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     start_pos: int) -> torch.Tensor:
        return attention(q, k_cache, v_cache, start_pos)

    class Ops:
        rms_norm = lib.custom_op("tk_llama::rms_norm", op_rms_norm,
                                 fake=lambda x, w, eps: torch.empty_like(x))
        matmul = lib.custom_op(
            "tk_llama::matmul", op_matmul,
            fake=lambda a, b, residual=None: a.new_empty((a.shape[0], b.shape[1])))
        matmul_swiglu = lib.custom_op(
            "tk_llama::matmul_swiglu", op_swiglu,
            fake=lambda a, b: a.new_empty((a.shape[0], b.shape[1] // 2)))
        rope_qkv = lib.custom_op("tk_llama::rope_qkv", op_rope,
                                 mutates_args=("k_cache", "v_cache"), fake=fake_rope)
        attention = lib.custom_op("tk_llama::attention", op_attention, fake=fake_attention)

    _custom_ops = Ops
    return Ops


# -- the block ---------------------------------------------------------------

@dataclass
class Weights:
    attn_norm: object   # (hidden,)
    w_qkv: object       # (hidden, 3 * hidden): Q, K, V
    w_o: object         # (hidden, hidden)
    mlp_norm: object    # (hidden,)
    w_gate_up: object   # (hidden, 2 * intermediate): gate, up
    w_down: object      # (intermediate, hidden)
    cos: object         # (max_len, head_dim) float32
    sin: object         # (max_len, head_dim) float32
    cfg: Config


@dataclass
class Cache:
    k: object  # (batch, heads, max_len, head_dim)
    v: object


def rope_tables(cfg):
    """cos and sin (max_len, head_dim) in float32, Llama's rotate-half form."""
    d = cfg.head_dim
    inv = 1.0 / cfg.rope_theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.outer(np.arange(cfg.max_len, dtype=np.float64), inv)
    ang = np.concatenate([ang, ang], axis=1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def random_weights(cfg, dtype="float16", device=None, seed=0):
    """Random weights scaled as a trained model's (std 1/sqrt(fan_in));
    numpy arrays when device is None, else torch tensors there."""
    rng = np.random.default_rng(seed)
    h, i = cfg.hidden, cfg.intermediate

    def mat(k, n):
        return rng.standard_normal((k, n), dtype=np.float32) / np.float32(math.sqrt(k))

    arrays = dict(attn_norm=rng.uniform(0.5, 1.5, h).astype(np.float32), w_qkv=mat(h, 3 * h),
                  w_o=mat(h, h), mlp_norm=rng.uniform(0.5, 1.5, h).astype(np.float32),
                  w_gate_up=mat(h, 2 * i), w_down=mat(i, h))
    cos, sin = rope_tables(cfg)
    if device is None:
        np_dtype = np.float16 if dtype == "float16" else np.dtype(dtype)
        arrays = {k: v.astype(np_dtype) for k, v in arrays.items()}
        return Weights(**arrays, cos=cos, sin=sin, cfg=cfg)
    import torch

    t_dtype = getattr(torch, dtype)
    arrays = {k: torch.from_numpy(v).to(device=device, dtype=t_dtype) for k, v in arrays.items()}
    return Weights(**arrays, cos=torch.from_numpy(cos).to(device),
                   sin=torch.from_numpy(sin).to(device), cfg=cfg)


def empty_cache(x, cfg, batch):
    shape = (batch, cfg.heads, cfg.max_len, cfg.head_dim)
    if _is_numpy(x):
        return Cache(np.zeros(shape, dtype=x.dtype), np.zeros(shape, dtype=x.dtype))
    import torch

    return Cache(torch.zeros(shape, dtype=x.dtype, device=x.device),
                 torch.zeros(shape, dtype=x.dtype, device=x.device))


def block(x, w, cache, start_pos, ops=PlainOps):
    """The decoder block on x (batch, seq, hidden); appends to cache."""
    cfg = w.cfg
    batch, seq, hidden = x.shape
    if hidden != cfg.hidden or tuple(w.w_qkv.shape) != (cfg.hidden, 3 * cfg.hidden):
        raise ValueError(f"block: x has hidden size {hidden} and W_qkv is "
                         f"{tuple(w.w_qkv.shape)}; the config says hidden {cfg.hidden}")
    if start_pos + seq > cfg.max_len:
        raise ValueError(f"block: positions up to {start_pos + seq} do not fit max_len "
                         f"{cfg.max_len}")
    x2 = x.reshape(batch * seq, hidden)
    xn = ops.rms_norm(x2, w.attn_norm, cfg.eps)
    qkv = ops.matmul(xn, w.w_qkv)
    q = ops.rope_qkv(qkv, w.cos, w.sin, cache.k, cache.v, batch, start_pos)
    o = ops.attention(q, cache.k, cache.v, start_pos)
    h = ops.matmul(o, w.w_o, x2)
    hn = ops.rms_norm(h, w.mlp_norm, cfg.eps)
    a = ops.matmul_swiglu(hn, w.w_gate_up)
    out = ops.matmul(a, w.w_down, h)
    return out.reshape(batch, seq, hidden)


# -- the float32 reference ---------------------------------------------------

def reference(x, w, k_past, v_past, start_pos):
    """The block in float32: torch if x is a torch tensor, else numpy.
    k_past / v_past: the cache's (batch, heads, start_pos, head_dim) keys and
    values before this step. Returns (out, k_new, v_new), the new entries."""
    if _is_numpy(x):
        return _reference_numpy(x, w, k_past, v_past, start_pos)
    import torch
    import torch.nn.functional as F

    cfg = w.cfg
    b, s, hd = x.shape
    nh, d = cfg.heads, cfg.head_dim
    f = lambda t: t.float()  # noqa: E731

    def norm(t, g):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + cfg.eps) * f(g)

    def rope(t):  # (b, nh, s, d)
        cos, sin = w.cos[start_pos:start_pos + s], w.sin[start_pos:start_pos + s]
        rot = torch.cat([-t[..., d // 2:], t[..., :d // 2]], dim=-1)
        return t * cos + rot * sin

    x = f(x)
    qkv = norm(x, w.attn_norm) @ f(w.w_qkv)
    q, k, v = (t.reshape(b, s, nh, d).transpose(1, 2) for t in qkv.split(hd, dim=-1))
    q, k = rope(q), rope(k)
    keys = torch.cat([f(k_past), k], dim=2)
    values = torch.cat([f(v_past), v], dim=2)
    n = start_pos + s
    mask = torch.arange(n, device=x.device)[None, :] <= (start_pos + torch.arange(
        s, device=x.device))[:, None]
    o = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
    h = x + o.transpose(1, 2).reshape(b, s, hd) @ f(w.w_o)
    gu = norm(h, w.mlp_norm) @ f(w.w_gate_up)
    g, u = gu.split(cfg.intermediate, dim=-1)
    return h + (F.silu(g) * u) @ f(w.w_down), k, v


def _reference_numpy(x, w, k_past, v_past, start_pos):
    cfg = w.cfg
    b, s, hd = x.shape
    nh, d = cfg.heads, cfg.head_dim
    f = lambda t: np.asarray(t, dtype=np.float32)  # noqa: E731

    def norm(t, g):
        return t / np.sqrt((t * t).mean(-1, keepdims=True) + cfg.eps) * f(g)

    def rope(t):
        cos, sin = w.cos[start_pos:start_pos + s], w.sin[start_pos:start_pos + s]
        rot = np.concatenate([-t[..., d // 2:], t[..., :d // 2]], axis=-1)
        return t * cos + rot * sin

    x = f(x)
    qkv = norm(x, w.attn_norm) @ f(w.w_qkv)
    q, k, v = (qkv[..., i * hd:(i + 1) * hd].reshape(b, s, nh, d).transpose(0, 2, 1, 3)
               for i in range(3))
    q, k = rope(q), rope(k)
    keys = np.concatenate([f(k_past), k], axis=2)
    values = np.concatenate([f(v_past), v], axis=2)
    n = start_pos + s
    scores = q @ keys.transpose(0, 1, 3, 2) / np.float32(math.sqrt(d))
    visible = np.arange(n)[None, :] <= (start_pos + np.arange(s))[:, None]
    scores = np.where(visible, scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ values).transpose(0, 2, 1, 3).reshape(b, s, hd)
    h = x + o @ f(w.w_o)
    gu = norm(h, w.mlp_norm) @ f(w.w_gate_up)
    g, u = gu[..., :cfg.intermediate], gu[..., cfg.intermediate:]
    return h + (g / (1 + np.exp(-g)) * u) @ f(w.w_down), k, v


# -- checks ------------------------------------------------------------------

def _max_err(got, want):
    if _is_numpy(got):
        return float(np.abs(got.astype(np.float32) - want).max()), float(np.abs(want).max())
    return float((got.float() - want).abs().max()), float(want.abs().max())


def check(x_prefill, x_decode, w, cache, tol, label, run=None):
    """Prefill x_prefill at position 0, then decode x_decode: both against the
    reference, and the cache's new entries against the reference's K and V.
    `run(x, cache, start_pos)` runs the block (default: `block` with w)."""
    run = run or (lambda x, c, start: block(x, w, c, start))
    seq = x_prefill.shape[1]
    steps = [("prefill", x_prefill, 0), ("decode", x_decode, seq)]
    for name, x, start in steps:
        n = x.shape[1]
        k_past, v_past = cache.k[:, :, :start], cache.v[:, :, :start]
        want, k_new, v_new = reference(x, w, k_past, v_past, start)
        got = run(x, cache, start)
        err, scale = _max_err(got, want)
        k_err, _ = _max_err(cache.k[:, :, start:start + n], k_new)
        v_err, _ = _max_err(cache.v[:, :, start:start + n], v_new)
        bound = tol * max(1.0, scale)
        ok = err <= bound and k_err <= bound and v_err <= bound
        shape = "x".join(str(v) for v in x.shape)
        print(f"{label} {name} {shape} (start {start}): max |tk - float32 reference| = "
              f"{err:.3g} (output up to {scale:.3g}), cache K {k_err:.3g} V {v_err:.3g}"
              + (": OK" if ok else f": FAILED (bound {bound:.3g})"))
        if not ok:
            return False
    return True


def check_interpreter(small, use_torch=False):
    cfg = TINY
    rng = np.random.default_rng(12)
    w = random_weights(cfg, "float16")
    ok = True
    for batch, seq in ((2, 13), (1, 16)) if not small else ((2, 13),):
        xp = rng.standard_normal((batch, seq, cfg.hidden)).astype(np.float16)
        xd = rng.standard_normal((batch, 1, cfg.hidden)).astype(np.float16)
        cache = empty_cache(xp, cfg, batch)
        wt = w
        if use_torch:
            import torch

            xp, xd = torch.from_numpy(xp), torch.from_numpy(xd)
            wt = Weights(**{k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v)
                            for k, v in w.__dict__.items()})
            cache = Cache(torch.from_numpy(cache.k), torch.from_numpy(cache.v))
        # fp16 intermediates rounded once per kernel: a few fp16 epsilons of
        # the largest output.
        ok &= check(xp, xd, wt, cache, 16 * 2.0**-11,
                    f"llama block on the interpreter ({'torch CPU' if use_torch else 'numpy'}, "
                    f"hidden {cfg.hidden}, {cfg.heads} heads, fp16)")
    return ok


def check_gpu(small):
    import torch

    torch.manual_seed(12)
    ok = True
    cfg = Config(hidden=1024, heads=8, intermediate=2816, max_len=512) if small else LLAMA_7B
    shapes = ((2, 77),) if small else ((1, 300), (2, 129))
    for dtype in ("float16", "bfloat16"):
        w = random_weights(cfg, dtype, "cuda")
        t_dtype = getattr(torch, dtype)
        eps = 2.0**-8 if dtype == "bfloat16" else 2.0**-11
        for batch, seq in shapes:
            xp = torch.randn(batch, seq, cfg.hidden, device="cuda", dtype=t_dtype)
            xd = torch.randn(batch, 1, cfg.hidden, device="cuda", dtype=t_dtype)
            cache = empty_cache(xp, cfg, batch)
            ok &= check(xp, xd, w, cache, 16 * eps,
                        f"llama block on the GPU ({dtype}, hidden {cfg.hidden})")
    # Under torch.compile(fullgraph=True), through the custom operators.
    w = random_weights(cfg, "float16", "cuda")
    ops = custom_ops()
    compiled = torch.compile(lambda x, cache, start: block(x, w, cache, start, ops),
                             fullgraph=True)
    xp = torch.randn(2, 77, cfg.hidden, device="cuda", dtype=torch.float16)
    xd = torch.randn(2, 1, cfg.hidden, device="cuda", dtype=torch.float16)
    cache = empty_cache(xp, cfg, 2)
    ok &= check(xp, xd, w, cache, 16 * 2.0**-11,
                "llama block under torch.compile(fullgraph=True)", run=compiled)
    return ok


def main(argv):
    gpu = tk.testing.gpu_available()
    small = "--small" in argv
    if "--bench" in argv:
        if not gpu:
            print("--bench: the block is timed by bench/llama_block_bench.py on a GPU; there is "
                  "no GPU launch here (no CUDA device, or TK_INTERPRET=1), so nothing to time.")
            return 0
        print("--bench: run bench/llama_block_bench.py (tk against torch eager and "
              "torch.compile, ms per block on the GPU)")
        return 0
    if gpu:
        return 0 if check_gpu(small) else 1
    os.environ["TK_INTERPRET"] = "1"  # no GPU here: the CPU interpreter
    ok = check_interpreter(small)
    if "--torch" in argv:
        ok &= check_interpreter(small, use_torch=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
