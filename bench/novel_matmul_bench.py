"""tk against Triton 3.6 and cuBLAS (torch), in one run, on matmuls with a
fused epilogue that are in no tutorial and no test (issue 8's check: odd
shapes, transposed inputs, bf16, tf32): bench/novel_kernels.py's
mm_epilogue_kernel, one source compiled by both with the same tile config
and grid, C = act(A @ B + bias). Each case checks tk's and Triton's C
against torch's in fp32 (relative to the largest |C|), then times tk, Triton
and torch's own expression (cuBLAS matmul + bias + activation) with
triton.testing.do_bench, and reports TFLOP/s and the ratios. tk compiles for
the device's arch (sm_90a on the H200: wgmma; docs/python.md). The fp8
e4m3 rows (C in fp16) run on tk's fp8 wgmma (TK_FP8_WGMMA=1, the default;
docs/codegen/dot.md); their torch anchor is
torch._scaled_mm (scales 1, B column-major) plus the epilogue. Writes
novel-matmul-<date><suffix>.{json,md} to --out-dir.

    PYTHONPATH=gpu-bundle/x/py python3 bench/novel_matmul_bench.py --out-dir DIR --commit SHA  # run.sh novel
"""
import argparse
import json
import os
import sys

import torch
import triton
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from novel_bench import load_kernels, measure, write_json  # noqa: E402

DT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
      "fp8e4m3": torch.float8_e4m3fn}
# name, M, N, K, dtype, A transposed, B transposed, GELU, tile (BM, BN, BK, warps, stages)
CASES = [
    ("fp16 square + bias", 4096, 4096, 4096, "fp16", False, False, False, (128, 256, 64, 8, 3)),
    ("fp16 odd + bias + gelu", 3000, 5000, 4001, "fp16", False, False, True, (128, 256, 64, 8, 3)),
    ("fp16 A^T + bias", 4096, 4096, 4096, "fp16", True, False, False, (128, 256, 64, 8, 3)),
    ("fp16 B^T + bias + gelu", 4096, 4096, 4096, "fp16", False, True, True, (128, 256, 64, 8, 3)),
    ("bf16 odd + bias", 5000, 3000, 2999, "bf16", False, False, False, (128, 256, 64, 8, 3)),
    ("tf32 + bias", 4096, 4096, 4096, "fp32", False, False, False, (128, 128, 32, 8, 3)),
    ("fp16 small odd", 1000, 1000, 1000, "fp16", False, False, True, (128, 128, 64, 4, 3)),
    # fp8: B^T is the K-major B fp8 wgmma reads (Triton's tutorial 09 passes
    # b.T.contiguous()); the row-major B is transposed by the dot's staging.
    ("fp8 B^T + bias", 4096, 4096, 4096, "fp8e4m3", False, True, False, (128, 256, 128, 8, 3)),
    ("fp8 B^T + bias", 8192, 8192, 8192, "fp8e4m3", False, True, False, (128, 256, 128, 8, 3)),
    ("fp8 + bias", 4096, 4096, 4096, "fp8e4m3", False, False, False, (128, 256, 128, 8, 3)),
]


def operand(rows, cols, dtype, transposed):
    """A rows x cols view, stored transposed when asked (its strides swapped)."""
    shape = (cols, rows) if transposed else (rows, cols)
    if dtype == "fp8e4m3":  # no randn in fp8: N(0, 1/4) rounded to e4m3
        x = (torch.randn(*shape, device="cuda") * 0.5).to(DT[dtype])
    else:
        x = torch.randn(*shape, device="cuda", dtype=DT[dtype])
    return x.t() if transposed else x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--suffix", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    os.environ.setdefault("TK_FP8_WGMMA", "1")  # tk's fp8 wgmma (the default)
    backends = {"tk": load_kernels("tk"), "triton": load_kernels("triton")}
    rows = []
    for name, m, n, k, dtype, at, bt, gelu, (bm, bn, bk, w, s) in CASES:
        a, b = operand(m, k, dtype, at), operand(k, n, dtype, bt)
        bias = torch.randn(n, device="cuda", dtype=torch.float32)
        fp8 = dtype == "fp8e4m3"
        out_dtype = torch.float16 if fp8 else DT[dtype] if dtype != "fp32" else torch.float32
        c = torch.empty(m, n, device="cuda", dtype=out_dtype)
        one = torch.tensor(1.0, device="cuda")
        b_cols = b if bt else b.t().contiguous().t()  # _scaled_mm's column-major B

        def product():
            if fp8:
                return torch._scaled_mm(a, b_cols, scale_a=one, scale_b=one,
                                        out_dtype=torch.float16)
            return torch.matmul(a, b)

        def ref():
            x = product().float() + bias[None, :]
            return (x * torch.sigmoid(1.702 * x) if gelu else x).to(out_dtype)

        want = ((a.float() @ b.float()) + bias[None, :]) if fp8 else ref().float()
        scale = want.abs().max().item()
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        row = {"case": name, "m": m, "n": n, "k": k, "dtype": dtype, "tile": [bm, bn, bk, w, s]}

        def run(mod):
            mod.mm_epilogue_kernel[grid](a, b, bias, c, m, n, k, a.stride(0), a.stride(1),
                                         b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                         BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, GELU=gelu,
                                         num_warps=w, num_stages=s)

        measure(row, backends, run, lambda: (c.float() - want).abs().max().item() / scale,
                "rel_error", ref, "tflops", lambda ms: 2 * m * n * k / ms * 1e-9,
                before=lambda: c.fill_(float("nan")))
        rows.append(row)
        print(json.dumps(row), flush=True)
    base, lines = write_json(args, rows, "novel-matmul", "tk vs Triton vs cuBLAS: fused-epilogue "
                             "matmuls outside the repository", "torch: `torch.matmul` (cuBLAS; "
                             "fp8: `torch._scaled_mm`) then the bias and activation as separate "
                             "ops.")
    lines += ["| case | M x N x K | tile | tk TFLOP/s | Triton | torch | tk/Triton | tk/torch "
              "| tk err | Triton err |", "|---|---|---|---|---|---|---|---|---|---|"]

    def f(v, spec=".0f"):
        return "-" if v is None else format(v, spec)
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['m']}x{r['n']}x{r['k']} | {'x'.join(map(str, r['tile'][:3]))} "
            f"w{r['tile'][3]} s{r['tile'][4]} | {f(r.get('tk_tflops'))} "
            f"| {f(r.get('triton_tflops'))} | {f(r['torch_tflops'])} "
            f"| {f(r.get('tk_over_triton'), '.3f')} | {f(r.get('tk_over_torch'), '.3f')} "
            f"| {r.get('tk_error') or f(r.get('tk_rel_error'), '.1e')} "
            f"| {r.get('triton_error') or f(r.get('triton_rel_error'), '.1e')} |")
    with open(base + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    bad = [r for r in rows if r.get("tk_error") or r.get("tk_rel_error", 1) > 2e-2]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
