"""Issue 8's matmul benchmark and GPU correctness sweep, one run on the GPU machine.

Speed: C = A @ B, fp16 in, fp32 accumulate, fp16 out, square 1024, 4096 and
8192, and bf16 at 4096. Three contenders in one process:

- tk: tutorials/04-matmul.tk (no activation) compiled ahead of time to PTX by
  bench/make_matmul_bundle.sh, one file per tile config and stage count,
  launched through CuPy with the dynamic shared memory the manifest names
  (configs above 48 KiB raise the function's limit); the fastest config is
  reported (as an autotuner would pick);
- Triton 3.6: the same tiled, grouped matmul written with triton.language,
  @triton.autotune over a few configs;
- cuBLAS: torch's a @ b.

TFLOP/s = 2 M N K / median time of triton.testing.do_bench (CUDA events).

Correctness (before any timing): every tk kernel's output is compared with
torch in fp64. The sweep runs bench/dot_check.tk (the manifest's `chk`
variants: fp16, bf16, tf32, int8; tiles 16..256; A or B transposed; ragged
M, N, K not multiples of the tile; the accumulator carried over K) on random
inputs, relative error max|C - ref| / max|ref| against bounds per input
precision: fp16/bf16 1e-2, tf32 3e-3, int8 exact. The fused bias + leaky_relu
kernel is checked the same way.

    bash bench/make_matmul_bundle.sh build-dot     # on the development machine
    python3 -u bench/matmul_bench.py --ptx-dir gpu-bundle-dot/ptx --out-dir $OUT --commit abc1234

writes matmul-<date>.json and matmul-<date>.png to --out-dir and prints tables.
"""
import argparse
import datetime
import json
import os

import cupy as cp
import numpy as np
import torch
import triton
import triton.language as tl

SPEED_CASES = (("fp16", 1024), ("fp16", 4096), ("fp16", 8192), ("bf16", 4096))
TORCH_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
                "i8": torch.int8}
BOUNDS = {"fp16": 1e-2, "bf16": 1e-2, "fp32": 3e-3, "i8": 0.0}
CHECK_SHAPES = ((300, 200, 100), (129, 65, 257), (64, 64, 64), (17, 250, 33))


@triton.autotune(
    configs=[
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "GM": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "GM": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 128, "BN": 128, "BK": 32, "GM": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 64, "BN": 128, "BK": 32, "GM": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 128, "BN": 64, "BK": 32, "GM": 8}, num_stages=4, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def triton_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr,
                  BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    # Grouped tile order, fp32 accumulator over K, one store of the tile.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GM * tiles_n
    first_m = (pid // per_group) * GM
    rows_in_group = min(tiles_m - first_m, GM)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    om = (tile_m * BM + tl.arange(0, BM)) % M
    on = (tile_n * BN + tl.arange(0, BN)) % N
    ok = tl.arange(0, BK)
    pa = a_ptr + om[:, None] * sam + ok[None, :] * sak
    pb = b_ptr + ok[:, None] * sbk + on[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        x = tl.load(pa, mask=ok[None, :] < left, other=0.0)
        y = tl.load(pb, mask=ok[:, None] < left, other=0.0)
        acc = tl.dot(x, y, acc)
        pa += BK * sak
        pb += BK * sbk
    cm = tile_m * BM + tl.arange(0, BM)
    cn = tile_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def ptr(t):
    return np.uint64(t.data_ptr())


def i32(*xs):
    return tuple(np.int32(x) for x in xs)


def read_manifest(ptx_dir):
    rows = []
    with open(os.path.join(ptx_dir, "manifest.txt")) as f:
        for line in f:
            parts = line.split()
            if parts:
                rows.append(parts)
    return rows


class Kernel:
    """A PTX kernel launched through CuPy with the dynamic shared memory the
    manifest names (above 48 KiB the function's limit is raised first)."""

    def __init__(self, ptx_dir, name, entry, smem):
        self.fn = cp.RawModule(path=os.path.join(ptx_dir, name + ".ptx")).get_function(entry)
        self.smem = int(smem)
        if self.smem > 48 * 1024:
            self.fn.max_dynamic_shared_size_bytes = self.smem

    def __call__(self, grid, block, args):
        self.fn(grid, block, args, shared_mem=self.smem)


def load_kernel(ptx_dir, row, entry):
    return Kernel(ptx_dir, row[1], entry, row[-1])


def cdiv(a, b):
    return (a + b - 1) // b


def random_operand(shape, dt, gen):
    if dt == "i8":
        return torch.randint(-100, 100, shape, dtype=torch.int8, device="cuda", generator=gen)
    return torch.randn(shape, device="cuda", generator=gen).to(TORCH_DTYPES[dt])


def rel_error(got, ref):
    return ((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


def check_sweep(ptx_dir, rows):
    gen = torch.Generator(device="cuda").manual_seed(8)
    results = []
    for row in rows:
        if row[0] != "chk":
            continue
        _, name, dt, bm, bn, bk, w, t = row[:8]
        bm, bn, bk, w = int(bm), int(bn), int(bk), int(w)
        kernel = load_kernel(ptx_dir, row, "dot_check")
        print(f"checking {name}", flush=True)  # names the kernel if a launch faults
        for (m, n, k) in CHECK_SHAPES:
            a = random_operand((k, m) if t == "tn" else (m, k), dt, gen)
            b = random_operand((n, k) if t == "nt" else (k, n), dt, gen)
            if t == "tn":
                a = a.t()
            if t == "nt":
                b = b.t()
            out_dt = torch.int32 if dt == "i8" else torch.float32
            c = torch.full((m, n), -7, dtype=out_dt, device="cuda")
            if out_dt == torch.float32:
                c.fill_(float("nan"))
            kernel((cdiv(m, bm), cdiv(n, bn)), (32 * w,),
                   (ptr(a), ptr(b), ptr(c)) + i32(m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                  b.stride(1), c.stride(0), c.stride(1)))
            torch.cuda.synchronize()
            ref = a.double() @ b.double()
            if dt == "i8":
                err = 0.0 if torch.equal(c.long(), ref.long()) else 1.0
            else:
                err = rel_error(c, ref) if not torch.isnan(c).any() else float("inf")
            ok = err <= BOUNDS[dt]
            results.append({"kernel": name, "dtype": dt, "tile": [bm, bn, bk], "warps": w,
                            "trans": t, "shape": [m, n, k], "rel_err": err, "ok": ok})
            if not ok:
                print(f"FAIL {name} {m}x{n}x{k}: rel err {err:.3g} > {BOUNDS[dt]}")
    passed = sum(r["ok"] for r in results)
    print(f"correctness sweep: {passed}/{len(results)} passed")
    return results


def check_bias(ptx_dir, rows):
    gen = torch.Generator(device="cuda").manual_seed(9)
    out = []
    for row in rows:
        if row[0] != "bias":
            continue
        _, name, _, bm, bn, bk, w = row[:7]
        bm, bn, w = int(bm), int(bn), int(w)
        kernel = load_kernel(ptx_dir, row, "matmul_bias_kernel")
        for (m, n, k) in ((1000, 520, 300), (256, 256, 64)):
            a = random_operand((m, k), "fp16", gen)
            b = random_operand((k, n), "fp16", gen)
            bias = random_operand((n,), "fp16", gen)
            c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
            kernel((cdiv(m, bm) * cdiv(n, bn),), (32 * w,),
                   (ptr(a), ptr(b), ptr(bias), ptr(c)) +
                   i32(m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                       c.stride(1)))
            torch.cuda.synchronize()
            ref = torch.nn.functional.leaky_relu(a.double() @ b.double() + bias.double(), 0.01)
            err = rel_error(c, ref) if not torch.isnan(c).any() else float("inf")
            ok = err <= 1e-2
            out.append({"kernel": name, "shape": [m, n, k], "rel_err": err, "ok": ok})
            print(f"bias+leaky_relu {name} {m}x{n}x{k}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
    return out


def bench(ptx_dir, rows):
    results = []
    for dt, s in SPEED_CASES:
        gen = torch.Generator(device="cuda").manual_seed(s)
        a = random_operand((s, s), dt, gen)
        b = random_operand((s, s), dt, gen)
        ref = (a.double() @ b.double())
        flops = 2.0 * s * s * s

        def tflops(ms):
            return flops / (ms * 1e-3) / 1e12

        entry = {"dtype": dt, "size": s}
        ms = triton.testing.do_bench(lambda: a @ b)
        entry["cublas_tflops"] = tflops(ms)
        c_tr = torch.empty((s, s), dtype=a.dtype, device="cuda")

        def run_triton():
            grid = lambda meta: (cdiv(s, meta["BM"]) * cdiv(s, meta["BN"]),)  # noqa: E731
            triton_matmul[grid](a, b, c_tr, s, s, s, a.stride(0), a.stride(1), b.stride(0),
                                b.stride(1), c_tr.stride(0), c_tr.stride(1))

        run_triton()
        entry["triton_rel_err"] = rel_error(c_tr, ref)
        entry["triton_tflops"] = tflops(triton.testing.do_bench(run_triton))
        entry["triton_config"] = str(triton_matmul.best_config)

        configs = []
        for row in rows:
            if row[0] != "mm" or row[2] != dt:
                continue
            _, name, _, bm, bn, bk, w = row[:7]
            bm, bn, w = int(bm), int(bn), int(w)
            kernel = load_kernel(ptx_dir, row, "matmul_kernel")
            c = torch.full((s, s), float("nan"), dtype=a.dtype, device="cuda")
            args = (ptr(a), ptr(b), ptr(c)) + i32(s, s, s, s, 1, s, 1, s, 1)
            grid = (cdiv(s, bm) * cdiv(s, bn),)

            def run(kernel=kernel, grid=grid, w=w, args=args):
                kernel(grid, (32 * w,), args)

            run()
            torch.cuda.synchronize()
            err = rel_error(c, ref) if not torch.isnan(c).any() else float("inf")
            t = tflops(triton.testing.do_bench(run))
            configs.append({"kernel": name, "tflops": t, "rel_err": err, "ok": err <= 1e-2,
                            "dynamic_smem": kernel.smem})
        good = [c for c in configs if c["ok"]]
        best = max(good, key=lambda c: c["tflops"]) if good else None
        entry["tk_configs"] = configs
        entry["tk_tflops"] = best["tflops"] if best else 0.0
        entry["tk_best"] = best["kernel"] if best else None
        entry["tk_vs_cublas"] = entry["tk_tflops"] / entry["cublas_tflops"]
        entry["triton_vs_cublas"] = entry["triton_tflops"] / entry["cublas_tflops"]
        results.append(entry)
        print(f"{dt} {s}^3: tk {entry['tk_tflops']:.1f} ({entry['tk_best']}), triton "
              f"{entry['triton_tflops']:.1f}, cuBLAS {entry['cublas_tflops']:.1f} TFLOP/s; "
              f"tk/cuBLAS {entry['tk_vs_cublas']:.2f}")
        for c in configs:
            print(f"    {c['kernel']}: {c['tflops']:.1f} TFLOP/s, rel err {c['rel_err']:.2e}")
    return results


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['dtype']} {r['size']}" for r in results]
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, (key, name) in enumerate((("tk_tflops", "tk (mma.sync)"),
                                     ("triton_tflops", "Triton 3.6"),
                                     ("cublas_tflops", "cuBLAS"))):
        ax.bar(x + (i - 1) * 0.27, [r[key] for r in results], 0.27, label=name)
    ax.set_xticks(x, labels)
    ax.set_ylabel("TFLOP/s")
    ax.set_title("square matmul on H200")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ptx-dir", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--commit", default="unknown")
    p.add_argument("--skip-bench", action="store_true")
    p.add_argument("--suffix", default="", help="appended to the file names' date")
    args = p.parse_args()
    rows = read_manifest(args.ptx_dir)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": args.commit, "device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "triton": triton.__version__}
    report["check"] = check_sweep(args.ptx_dir, rows)
    report["bias"] = check_bias(args.ptx_dir, rows)
    if not args.skip_bench:
        report["bench"] = bench(args.ptx_dir, rows)
    stamp = datetime.date.today().isoformat() + args.suffix
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, f"matmul-{stamp}.json"), "w") as f:
        json.dump(report, f, indent=1)
    if "bench" in report:
        plot(report["bench"], os.path.join(args.out_dir, f"matmul-{stamp}.png"))


if __name__ == "__main__":
    main()
