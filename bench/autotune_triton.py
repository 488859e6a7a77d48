"""The anchor for issue 7's tuning-time target: Triton 3.6 autotuning an fp16
matmul over the same 8 configs as tutorials/05-host-autotune.cpp at 4096^3,
compile included (a fresh TRITON_CACHE_DIR), timed from the first call to its
return. Run on the GPU machine beside the tutorial:

    python3 bench/autotune_triton.py [--size 4096]

Prints one line per phase; the tutorial prints tk's own first-launch time for
the same shape and configs.
"""

import argparse
import os
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton-cache-"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages), as in the tutorial.
CONFIGS = [(128, 128, 32, 4, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4),
           (128, 128, 64, 8, 3), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5), (128, 256, 64, 8, 3)]


@triton.autotune(
    configs=[triton.Config({"BM": m, "BN": n, "BK": k}, num_warps=w, num_stages=s)
             for m, n, k, w, s in CONFIGS],
    key=["M", "N", "K"])
@triton.jit
def mm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
       BK: tl.constexpr):
    # Tiles in groups of 8 rows of tiles, so that neighbouring programs share
    # rows of A and columns of B in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = 8 * tiles_n
    first_m = (pid // per_group) * 8
    rows_in_group = min(tiles_m - first_m, 8)
    tm = first_m + (pid % per_group) % rows_in_group
    tn = (pid % per_group) // rows_in_group
    rm = (tm * BM + tl.arange(0, BM)) % M
    rn = (tn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak, mask=kk[None, :] < K, other=0.0)
        y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn, mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(x, y, acc)
    om = tm * BM + tl.arange(0, BM)
    on = tn * BN + tl.arange(0, BN)
    tl.store(c + om[:, None] * scm + on[None, :] * scn, acc.to(tl.float16),
             mask=(om[:, None] < M) & (on[None, :] < N))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    n = p.parse_args().size
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)

    def grid(meta):
        return (triton.cdiv(n, meta["BM"]) * triton.cdiv(n, meta["BN"]),)

    torch.cuda.synchronize()
    start = time.perf_counter()
    mm[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1)
    torch.cuda.synchronize()
    tuned = time.perf_counter() - start
    err = (c.float() - (a.float() @ b.float())).abs().max().item()
    ms = triton.testing.do_bench(lambda: mm[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1))
    print(f"triton {triton.__version__}: autotune {len(CONFIGS)} configs at {n}^3, compile "
          f"included: {tuned:.2f} s; best {mm.best_config}; {ms:.4f} ms "
          f"({2 * n ** 3 / ms / 1e9:.1f} TFLOP/s); max abs err vs torch {err:.3f}")


if __name__ == "__main__":
    main()
