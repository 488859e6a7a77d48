"""tk against Triton 3.6 and PyTorch, in one run, on kernels in no tutorial and
no test (bench/novel_kernels.py: the same source compiled by both, same
meta-parameters, same grid): an fp16/fp32 -> bf16 elementwise chain, int8
dequantisation per row, fp32 column sums, fp16 row argmax, an fp32
transpose with a bias, RMS norm, a column softmax, a vector sum through an
atomic, a strided (transposed) bias + relu and a row cumsum. Every shape is ragged. Each case checks tk's and
Triton's outputs against torch's, then times tk, Triton and the torch
expression with triton.testing.do_bench (CUDA events, L2 cleared before each
launch, medians), and reports GB/s (bytes read once + written once), tk /
Triton and tk / torch. Writes novel-<date><suffix>.{json,md,png} to --out-dir.

    PYTHONPATH=gpu-bundle/x/py python3 bench/novel_bench.py --out-dir DIR --commit SHA  # run.sh novel
"""
import argparse
import datetime
import importlib.util
import json
import os
import sys

import torch
import triton
import triton.testing

HERE = os.path.dirname(os.path.abspath(__file__))


def load_kernels(backend):
    spec = importlib.util.spec_from_file_location(f"novel_{backend}",
                                                  os.path.join(HERE, "novel_kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    mod.BACKEND = backend
    spec.loader.exec_module(mod)
    return mod


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def gelu_mix(k, x, y, out):
    n = x.numel()
    k.gelu_mix_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)


def case_gelu_mix():
    n = (1 << 26) + 123
    x = torch.randn(n, device="cuda", dtype=torch.float16)
    y = torch.randn(n, device="cuda", dtype=torch.float32)
    out = torch.empty(n, device="cuda", dtype=torch.bfloat16)

    def ref():
        xf = x.float()
        return (xf * torch.sigmoid(1.702 * xf) * y + torch.sqrt(torch.abs(y))).to(torch.bfloat16)

    return dict(name="gelu_mix fp16,fp32->bf16", shape=f"{n}", bytes=nbytes(x, y, out),
                run=lambda k: gelu_mix(k, x, y, out), outputs=lambda: [out], ref=lambda: [ref()],
                tol=[(2e-2, 2e-2)])


def case_dequant():
    m, n = 8191, 8193
    q = torch.randint(-128, 128, (m, n), device="cuda", dtype=torch.int8)
    scale = torch.rand(m, device="cuda", dtype=torch.float32) * 0.1 + 0.01
    zero = torch.randint(-8, 8, (m,), device="cuda", dtype=torch.int32)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)

    def run(k):
        k.dequant_kernel[(m,)](q, scale, zero, out, m, n, q.stride(0), out.stride(0), BLOCK_N=2048)

    def ref():
        return ((q.int() - zero[:, None]).float() * scale[:, None]).half()

    return dict(name="dequant int8->fp16 per-row", shape=f"{m}x{n}",
                bytes=nbytes(q, out, scale, zero), run=run, outputs=lambda: [out],
                ref=lambda: [ref()], tol=[(1e-3, 1e-3)])


def case_col_sum():
    m, n = 8193, 8191
    x = torch.randn(m, n, device="cuda", dtype=torch.float32)
    out = torch.empty(n, device="cuda", dtype=torch.float32)

    def run(k):
        k.col_sum_kernel[(triton.cdiv(n, 64),)](x, out, m, n, x.stride(0), BLOCK_M=64, BLOCK_N=64)

    return dict(name="column sum fp32", shape=f"{m}x{n}", bytes=nbytes(x, out), run=run,
                outputs=lambda: [out], ref=lambda: [x.double().sum(0).float()],
                tol=[(2e-3, 1e-4)])


def case_row_argmax():
    m, n = 16384, 4093
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    val = torch.empty(m, device="cuda", dtype=torch.float16)
    idx = torch.empty(m, device="cuda", dtype=torch.int32)

    def run(k):
        k.row_argmax_kernel[(m,)](x, val, idx, n, x.stride(0), BLOCK_N=4096)

    def ref():
        v, i = x.max(dim=1)
        return [v, i.int()]

    return dict(name="row max+argmax fp16", shape=f"{m}x{n}", bytes=nbytes(x, val, idx), run=run,
                outputs=lambda: [val, idx], ref=ref, tol=[(0, 0), (0, 0)])


def case_transpose_bias():
    m, n = 8191, 4099
    x = torch.randn(m, n, device="cuda", dtype=torch.float32)
    b = torch.randn(n, device="cuda", dtype=torch.float32)
    out = torch.empty(n, m, device="cuda", dtype=torch.float32)

    def run(k):
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        k.transpose_bias_kernel[grid](x, b, out, m, n, x.stride(0), out.stride(0), BLOCK_M=64,
                                      BLOCK_N=64)

    return dict(name="transpose + bias fp32", shape=f"{m}x{n}", bytes=nbytes(x, b, out), run=run,
                outputs=lambda: [out], ref=lambda: [(x + b[None, :]).t()], tol=[(1e-6, 1e-6)])


def case_rms_norm():
    m, n = 8192, 4000
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.randn(n, device="cuda", dtype=torch.float16)
    out = torch.empty_like(x)

    def run(k):
        k.rms_norm_kernel[(m,)](x, w, out, n, x.stride(0), 1e-6, BLOCK_N=4096)

    def ref():
        xf = x.float()
        return [(xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + 1e-6) * w.float()).half()]

    return dict(name="rms norm fp16", shape=f"{m}x{n}", bytes=nbytes(x, w, out), run=run,
                outputs=lambda: [out], ref=ref, tol=[(1e-2, 1e-2)])


def case_col_softmax():
    m, n = 1000, 32771
    x = torch.randn(m, n, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)

    def run(k):
        k.col_softmax_kernel[(triton.cdiv(n, 8),)](x, out, m, n, x.stride(0), BLOCK_M=1024,
                                                   BLOCK_N=8)

    return dict(name="column softmax fp32", shape=f"{m}x{n}", bytes=nbytes(x, out), run=run,
                outputs=lambda: [out], ref=lambda: [torch.softmax(x, 0)], tol=[(1e-6, 1e-4)])


def case_total_sum():
    n = (1 << 26) - 77
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    out = torch.zeros(1, device="cuda", dtype=torch.float32)

    def run(k):
        out.zero_()
        k.total_sum_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096)

    return dict(name="total sum fp32 (atomic)", shape=f"{n}", bytes=nbytes(x), run=run,
                outputs=lambda: [out], ref=lambda: [x.double().sum().float().reshape(1)],
                tol=[(0, 1e-5)])


def case_strided_bias_relu():
    m, n = 8191, 8190
    base = torch.randn(n, m, device="cuda", dtype=torch.float16)
    x = base.t()  # strides (1, m): read across rows
    b = torch.randn(n, device="cuda", dtype=torch.float32)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

    def run(k):
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        k.strided_bias_relu_kernel[grid](x, b, out, m, n, x.stride(0), x.stride(1), out.stride(0),
                                         BLOCK_M=64, BLOCK_N=64)

    return dict(name="strided bias+relu fp16->bf16", shape=f"{m}x{n}", bytes=nbytes(base, b, out),
                run=run, outputs=lambda: [out],
                ref=lambda: [torch.relu(x.float() + b[None, :]).bfloat16()], tol=[(1e-2, 1e-2)])


def case_row_cumsum():
    m, n = 8192, 2000
    x = torch.randn(m, n, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)

    def run(k):
        k.row_cumsum_kernel[(m,)](x, out, n, x.stride(0), BLOCK_N=2048)

    return dict(name="row cumsum fp32", shape=f"{m}x{n}", bytes=nbytes(x, out), run=run,
                outputs=lambda: [out], ref=lambda: [x.double().cumsum(1).float()],
                tol=[(1e-3, 1e-4)])


CASES = [case_gelu_mix, case_dequant, case_col_sum, case_row_argmax, case_transpose_bias,
         case_rms_norm, case_col_softmax, case_total_sum, case_strided_bias_relu, case_row_cumsum]

def measure(row, backends, run, verify, verify_key, reference, unit, rate, before=None):
    """Fills `row` for one case: for each backend (tk, Triton), `before()`
    (if given), one `run(module)`, `verify()` stored as <backend>_<verify_key>,
    then the do_bench time as <backend>_<unit> = rate(ms); a backend that
    raises gets <backend>_error and no rate (a failure is a row, not the end
    of the run). Then torch's `reference` timed the same way and the ratios
    tk_over_triton and tk_over_torch."""
    for be, mod in backends.items():
        try:
            if before:
                before()
            run(mod)
            torch.cuda.synchronize()
            row[f"{be}_{verify_key}"] = verify()
            row[f"{be}_{unit}"] = rate(triton.testing.do_bench(lambda: run(mod)))
        except Exception as e:
            row[f"{be}_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            row[f"{be}_{unit}"] = None
    row[f"torch_{unit}"] = rate(triton.testing.do_bench(reference))
    if row.get(f"tk_{unit}") and row.get(f"triton_{unit}"):
        row["tk_over_triton"] = row[f"tk_{unit}"] / row[f"triton_{unit}"]
        row["tk_over_torch"] = row[f"tk_{unit}"] / row[f"torch_{unit}"]


def write_json(args, rows, stem, title, note):
    """Writes <out-dir>/<stem>-<date><suffix>.json (the rows with the date,
    commit, command and versions); returns that path less ".json" and the
    opening lines of the Markdown summary."""
    date = datetime.date.today().isoformat()
    result = {"date": date, "commit": args.commit, "command": " ".join(sys.argv),
              "device": torch.cuda.get_device_name(), "triton": triton.__version__,
              "torch": torch.__version__, "rows": rows}
    base = os.path.join(args.out_dir, f"{stem}-{date}{args.suffix}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1)
    return base, [f"# {title} ({date})", "", f"commit {args.commit}, {result['device']}, Triton "
                  f"{result['triton']}, torch {result['torch']}", "", f"`{result['command']}`",
                  "", note, ""]


def check(outs, refs, tols):
    """The largest violation of |out - ref| <= atol + rtol |ref|, or None."""
    for o, r, (atol, rtol) in zip(outs, refs, tols):
        o64, r64 = o.double(), r.double()
        bad = (o64 - r64).abs() > atol + rtol * r64.abs()
        if bool(bad.any()):
            j = int(bad.flatten().nonzero()[0])
            return f"{int(bad.sum())} mismatches, first at {j}: {o64.flatten()[j].item()} " \
                   f"vs {r64.flatten()[j].item()}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--suffix", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    backends = {"tk": load_kernels("tk"), "triton": load_kernels("triton")}
    rows = []
    for make in CASES:
        case = make()
        row = {"case": case["name"], "shape": case["shape"], "bytes": case["bytes"]}
        refs = case["ref"]()
        measure(row, backends, case["run"], lambda: check(case["outputs"](), refs, case["tol"]),
                "error", case["ref"], "gbps", lambda ms: case["bytes"] / ms / 1e6)
        rows.append(row)
        print(json.dumps(row), flush=True)
    base, lines = write_json(args, rows, "novel", "tk vs Triton vs torch on kernels outside the "
                             "repository", "torch runs its own expression of the same "
                             "computation (not a fused kernel).")
    lines += ["| case | shape | tk GB/s | Triton GB/s | torch GB/s | tk/Triton | tk/torch | errors |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def f(v):
            return "-" if v is None else f"{v:.0f}"
        errs = "; ".join(f"{b}: {r[b + '_error']}" for b in ("tk", "triton") if r[b + "_error"])
        lines.append(f"| {r['case']} | {r['shape']} | {f(r['tk_gbps'])} | {f(r['triton_gbps'])} "
                     f"| {f(r['torch_gbps'])} | {r.get('tk_over_triton', 0):.3f} "
                     f"| {r.get('tk_over_torch', 0):.3f} | {errs or 'none'} |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(10, 4))
        xs = range(len(rows))
        for j, key in enumerate(("tk_gbps", "triton_gbps", "torch_gbps")):
            ax.bar([x + 0.27 * (j - 1) for x in xs], [r[key] or 0 for r in rows], width=0.27,
                   label=key.split("_")[0])
        ax.set_xticks(list(xs), [r["case"] for r in rows], rotation=15, fontsize=8)
        ax.set_ylabel("GB/s")
        ax.legend()
        fig.tight_layout()
        fig.savefig(base + ".png", dpi=110)
    except ImportError:
        pass
    print("\n".join(lines))
    failed = [r for r in rows if r["tk_error"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
