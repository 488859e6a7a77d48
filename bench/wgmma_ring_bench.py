"""TK_WGMMA_RING A/B: tk's matmul (tutorial 4), conv (tutorial 13) and plain
attention forward (bench/attention_kernels.py) at the tile configs where the
ring's order changes the shared memory a program takes or whether its wgmma
group stays in flight, with the ring refilled `extra` (S + 1 slots) and `auto` (S slots
refilled late where the extra slot costs a program per SM), each in a fresh
process, and Triton compiling the same source at the same config in the
same run (docs/codegen/dot.md, "TK_WGMMA_RING").

    python3 bench/wgmma_ring_bench.py [--out FILE.json]
    RING_BENCH_ONLY=matmul:128x256x64x8x4,attention:128x64x4x3 python3 bench/wgmma_ring_bench.py

Prints one line per (kernel, shape, config): ms of tk extra, tk auto,
Triton, and the ratios; every output is checked against torch first.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MATMUL = [  # (M, N, K), (BM, BN, BK, warps, stages)
    ((4096, 4096, 4096), (128, 128, 64, 8, 3)),
    ((4096, 4096, 4096), (128, 128, 64, 8, 4)),
    ((4096, 4096, 4096), (128, 256, 64, 8, 3)),
    ((4096, 4096, 4096), (128, 256, 64, 8, 4)),
    ((4096, 4096, 4096), (64, 128, 64, 4, 4)),
    ((8192, 8192, 8192), (128, 128, 64, 8, 3)),
    ((3000, 2000, 1000), (128, 128, 64, 8, 3)),
]
CONV = [  # (N, H, C, K, kernel, stride), (BM, BN, BK, warps, stages)
    ((32, 56, 64, 64, 3, 1), (128, 64, 32, 4, 4)),
    ((32, 56, 64, 64, 3, 1), (128, 128, 64, 8, 3)),
    ((32, 28, 128, 128, 3, 1), (128, 64, 64, 4, 4)),
    ((32, 14, 256, 256, 3, 1), (64, 128, 64, 4, 4)),
]
ATTENTION = [  # (batch * heads, seq, head dim, causal), (BM, BN, warps, stages)
    ((128, 4096, 128, False), (64, 64, 4, 3)),
    ((128, 4096, 128, True), (64, 64, 4, 3)),
    ((128, 4096, 128, False), (128, 64, 8, 3)),
    ((128, 4096, 64, False), (128, 64, 8, 3)),
    ((128, 4096, 64, False), (64, 64, 4, 3)),
    ((128, 4096, 64, False), (128, 64, 4, 3)),
    ((128, 4096, 64, True), (128, 64, 4, 3)),
    ((128, 4096, 128, False), (128, 64, 4, 3)),
    ((128, 1024, 64, True), (64, 64, 4, 3)),
]


def attention_rows(backend, bench):
    import torch
    import torch.nn.functional as F

    import attention_bench

    mod = attention_bench.load_kernels(backend)
    rows = []
    for (zh, n, d, causal), (bm, bn, w, s) in ATTENTION:
        if not wanted("attention", (bm, bn, w, s)):
            continue
        gen = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
        q, k, v = (torch.randn((zh, n, d), device="cuda", dtype=torch.float16, generator=gen)
                   for _ in range(3))
        o = torch.empty_like(q)
        scale = 1.0 / d ** 0.5

        def run():
            attention_bench.launch(mod, q, k, v, o, scale, causal, (bm, bn, w, s))

        run()
        ref = F.scaled_dot_product_attention(q.float()[None], k.float()[None], v.float()[None],
                                             is_causal=causal, scale=scale)[0]
        err = float((o.float() - ref).abs().max())
        ms = bench(run, warmup=25, rep=100)
        rows.append({"kernel": "attention", "shape": [zh, n, d, int(causal)],
                     "config": [bm, bn, w, s], "ms": ms, "max_err": err,
                     "tflops": 4.0 * zh * n * n * d * (0.5 if causal else 1.0) / ms * 1e-9})
    return rows


def wanted(kernel, config):
    only = os.environ.get("RING_BENCH_ONLY", "")
    return not only or any(o == f"{kernel}:{'x'.join(map(str, config))}" for o in only.split(","))


def child(backend):
    import torch

    sys.path.insert(0, HERE)
    import same_source

    mm = same_source.load(os.path.join(ROOT, "tutorials", "04-matmul.py"), backend, "ring")
    cv = same_source.load(os.path.join(ROOT, "tutorials", "13-conv2d-bias-relu.py"), backend,
                          "ring")
    if backend == "tk":
        import tk

        bench = tk.testing.do_bench
    else:
        import triton.testing

        bench = triton.testing.do_bench
    kernel = mm.matmul_kernel.fn
    rows = []
    torch.manual_seed(0)
    for (M, N, K), (bm, bn, bk, w, s) in MATMUL:
        if not wanted("matmul", (bm, bn, bk, w, s)):
            continue
        a = torch.randn((M, K), device="cuda", dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", dtype=torch.float16)
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        grid = ((M + bm - 1) // bm * ((N + bn - 1) // bn),)

        def run():
            kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                         BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="", num_warps=w,
                         num_stages=s)

        run()
        err = float((c.float() - a.float() @ b.float()).abs().max())
        ms = bench(run, warmup=25, rep=100)
        rows.append({"kernel": "matmul", "shape": [M, N, K], "config": [bm, bn, bk, w, s],
                     "ms": ms, "max_err": err, "tflops": 2 * M * N * K / ms * 1e-9})
    for (n, h, cin, k, ks, st), (bm, bn, bk, w, s) in CONV:
        if not wanted("conv", (bm, bn, bk, w, s)):
            continue
        pad = ks // 2
        x, wt, bias, _, _ = cv.layer_tensors(n, h, cin, k, ks, "cuda")
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=w, num_stages=s)
        y = cv.conv2d_bias_relu(x, wt, bias, st, pad, config=cfg)
        want = cv.torch_reference(x, wt, bias, st, pad, 1)
        err = float((y.float() - want).abs().max())
        ms = bench(lambda: cv.conv2d_bias_relu(x, wt, bias, st, pad, config=cfg), warmup=25,
                   rep=100)
        p = (h + 2 * pad - ks) // st + 1
        rows.append({"kernel": "conv", "shape": [n, h, cin, k, ks, st],
                     "config": [bm, bn, bk, w, s], "ms": ms, "max_err": err,
                     "tflops": 2 * n * p * p * k * cin * ks * ks / ms * 1e-9})
    rows += attention_rows(backend, bench)
    print(json.dumps(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child", choices=["tk", "triton"])
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    runs = {}
    for name, backend, ring in (("extra", "tk", "extra"), ("auto", "tk", "auto"),
                                ("triton", "triton", None)):
        env = dict(os.environ)
        if ring:
            env["TK_WGMMA_RING"] = ring
        r = subprocess.run([sys.executable, __file__, "--child", backend], env=env,
                           capture_output=True, text=True, timeout=400)
        if r.returncode:
            print(f"{name}: exit {r.returncode}\n{r.stderr[-2000:]}")
            return 1
        runs[name] = json.loads(r.stdout.strip().splitlines()[-1])
    out = []
    print(f"{'kernel':<10}{'shape':<26}{'config':<22}{'extra':>8}{'auto':>8}{'Triton':>8}"
          f"{'auto/ex':>8}{'ex/Tri':>8}{'auto/Tri':>9}  max err")
    for e, a, t in zip(runs["extra"], runs["auto"], runs["triton"]):
        row = {"kernel": e["kernel"], "shape": e["shape"], "config": e["config"],
               "ms_extra": e["ms"], "ms_auto": a["ms"], "ms_triton": t["ms"],
               "auto_over_extra": e["ms"] / a["ms"], "extra_over_triton": t["ms"] / e["ms"],
               "auto_over_triton": t["ms"] / a["ms"],
               "max_err": max(e["max_err"], a["max_err"], t["max_err"])}
        out.append(row)
        print(f"{e['kernel']:<10}{str(e['shape']):<26}{str(e['config']):<22}{e['ms']:>8.4f}"
              f"{a['ms']:>8.4f}{t['ms']:>8.4f}{row['auto_over_extra']:>8.3f}"
              f"{row['extra_over_triton']:>8.3f}{row['auto_over_triton']:>9.3f}  "
              f"{row['max_err']:.3g}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
