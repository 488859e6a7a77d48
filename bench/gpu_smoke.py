"""GPU smoke test of tk's PTX, before tk has its own CUDA driver layer.

tk's GPU backend (issue 5) emits PTX today, but the driver that loads and
launches it from C++ and Python is not written yet. This script closes the
gap for an early check on the GPU machine: it loads the PTX that `tkc
--emit=ptx` wrote (bench/gpu_bundle.sh's bench part) with CuPy, launches it on
torch tensors, checks the results against torch, and times tk, Triton and
torch side by side in the same run (medians of triton.testing.do_bench).

    python3 -u bench/gpu_smoke.py --ptx-dir gpu-bundle/x/ptx --out results.json   # run.sh smoke

The figures are preliminary: they measure tk's code generation, not its
launch path, which does not exist yet.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import cupy as cp
import numpy as np
import torch
import triton

# The Triton reference, CuPy's PTX loading and the timing are gpu_bench.py's
# (this script's directory is on sys.path when it runs).
from gpu_bench import bench, load_kernel, triton_row_softmax


def vector_add(ptx_dir, n=1 << 26):
    kernel = load_kernel(ptx_dir, "add_1024.ptx", "add_kernel")
    x = torch.rand(n, device="cuda") + 0.5
    y = torch.rand(n, device="cuda") - 2.0
    out = torch.empty_like(x)
    grid = ((n + 1023) // 1024,)

    def run_tk():
        kernel(grid, (128,), (np.uint64(x.data_ptr()), np.uint64(y.data_ptr()),
                              np.uint64(out.data_ptr()), np.int32(n)))

    run_tk()
    torch.cuda.synchronize()
    err = (out - (x + y)).abs().max().item()
    nbytes = 3 * 4 * n
    ms_tk = bench(run_tk)
    ms_torch = bench(lambda: torch.add(x, y, out=out))
    return {"workload": "vector_add_fp32", "n": n, "max_abs_err": err,
            "tk_gbps": nbytes / ms_tk * 1e-6, "torch_gbps": nbytes / ms_torch * 1e-6}


def softmax(ptx_dir, m, n, num_warps):
    kernel = load_kernel(ptx_dir, f"softmax_{n}.ptx", "softmax_kernel")
    x = torch.randn(m, n, device="cuda") * 3.0
    out = torch.empty_like(x)

    def run_tk():
        kernel((m,), (32 * num_warps,), (np.uint64(out.data_ptr()), np.uint64(x.data_ptr()),
                                         np.int32(n), np.int32(n), np.int32(m), np.int32(n)))

    run_tk()
    torch.cuda.synchronize()
    ref = torch.softmax(x.double(), dim=-1)
    err = (out.double() - ref).abs().max().item()
    nbytes = 2 * 4 * m * n
    ms_tk = bench(run_tk)
    best_triton = None
    tri_out = torch.empty_like(x)
    for w in (4, 8, 16):
        def run_triton(w=w):
            triton_row_softmax[(m,)](tri_out, x, n, n, n, BLOCK=n, num_warps=w)
        run_triton()
        ms = bench(run_triton)
        if best_triton is None or ms < best_triton[0]:
            best_triton = (ms, w)
    triton_err = (tri_out.double() - ref).abs().max().item()
    ms_torch = bench(lambda: torch.softmax(x, dim=-1))
    return {"workload": "softmax_fp32", "m": m, "n": n, "tk_num_warps": num_warps,
            "max_abs_err": err, "triton_max_abs_err": triton_err,
            "tk_gbps": nbytes / ms_tk * 1e-6,
            "triton_gbps": nbytes / best_triton[0] * 1e-6, "triton_num_warps": best_triton[1],
            "torch_gbps": nbytes / ms_torch * 1e-6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptx-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", default="unknown")
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = [vector_add(args.ptx_dir)]
    for m, n, w in ((8192, 1024, 4), (8192, 4096, 8), (4096, 8192, 16), (4096, 16384, 16)):
        rows.append(softmax(args.ptx_dir, m, n, w))
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": args.commit,
        "command": "python3 -u " + " ".join(sys.argv),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "triton": triton.__version__, "cupy": cp.__version__,
        "host": platform.node(),
        "note": "tk PTX launched through CuPy (tk's driver layer is not written yet)",
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"{'workload':<14} {'shape':<14} {'err':>9} {'tk GB/s':>9} {'triton':>9} {'torch':>9} {'tk/triton':>9}")
    for r in rows:
        shape = f"{r.get('m', '')}x{r.get('n')}" if "m" in r else str(r["n"])
        tri = r.get("triton_gbps")
        print(f"{r['workload']:<14} {shape:<14} {r['max_abs_err']:>9.2e} {r['tk_gbps']:>9.0f} "
              f"{(tri or 0):>9.0f} {r['torch_gbps']:>9.0f} "
              f"{(r['tk_gbps'] / tri if tri else float('nan')):>9.2f}")


if __name__ == "__main__":
    main()
