"""Issue 20's benchmark: memory-bound kernels, forward and backward, each
compiled from ONE plain source by tk and by Triton 3.6 with the same launch
(meta-parameters, num_warps, grid), in one run on the GPU machine.

The sources: the kernels of tutorials/07-11 (LayerNorm backward, RMSNorm
forward and backward, softmax backward, cross-entropy forward and backward,
dropout + residual + LayerNorm forward) and bench/membound_kernels.py (the
plain softmax and LayerNorm forward, the latter also as Triton's LayerNorm
tutorial writes it: three loops over column blocks, BLOCK_N = the next power
of two >= N capped at 64 KiB, min(max(BLOCK_N / 256, 1), 8) warps). Each file
is loaded twice: once as is (`import tk`), once with the name `tk` bound to a
namespace of Triton's (triton.language plus triton.jit, autotune, Config), so
both compilers read the same text. Each kernel runs with its tutorial's
untuned default (BLOCK_N = the next power of two >= N and the tutorial's
default_warps; cross-entropy BLOCK_V 4096 on 8 warps); the backward norms'
first stage runs on the tutorials' default_programs (up to 4 per SM, 32 rows
or more each where the SMs are busy anyway) and their second stage (the column
sums) on 32 x 128 blocks. The plain forwards: softmax on min(32, max(4,
BLOCK_N / 512)) warps, LayerNorm on 8 (issue 20's launch; 32 at 65536).

Rows: N = 1024, 4096, 16384, 65536 in fp16 and bf16, and fp32 at N = 4096;
cross-entropy over V = 32768, 131072, 262144 classes instead. M makes each M x
N matrix 2^26 elements (128 MiB of fp16; 65536 rows at N = 1024), with at
least 4096 rows (2^28 elements at 65536 columns); cross-entropy at least 1024
rows (2^28 at 262144 classes).

Per row, after each backend's outputs (poisoned with NaN first) are checked
against torch in float64: GB/s of tk, Triton, a device copy of the same bytes,
torch eager, and for backward kernels torch.compile, and the ratios tk/Triton,
tk/copy, tk/eager, tk/compile. Bytes: every tensor the kernel must read, read
once, and every tensor it writes, written once, at their dtypes (inputs,
outputs, weights, per-row statistics, targets; not the backward norms' P x N
fp32 partial sums, written and read once more, an implementation choice whose
bytes each row records as partial_bytes: 1-9% more at these M with the
tutorials' default_programs). The copy is a torch copy_ of a uint8 buffer of
half those bytes into another (read + write = the same bytes), timed the same
way. torch eager is the library's own: F.softmax / layer_norm / rms_norm /
cross_entropy / dropout + add + layer_norm forward, and for backward rows
torch.autograd.grad through the eager forward's graph (retain_graph); the
torch.compile figure is the same autograd.grad through the graph of
torch.compile(forward) (inductor's fused backward).

Timing: triton.testing.do_bench (CUDA events, L2 cleared before each launch,
median of rep 40 ms after 10 ms warmup), tk and Triton re-timed alternately
ROUNDS times and the medians reported. Registers per thread of both, from each
compiler's kernel object. A time guard (--budget-s, default 280 s) skips the
rows left once it is spent, saying so in each (the rows run size by size
across the kernels, fp16 then bf16 then fp32, so a short run loses the last
sizes, not whole kernels); --budget-s 540 is the whole plan in one 10-minute
call.

    PYTHONPATH=gpu-bundle/x/py python3 -u bench/membound_bench.py --out-dir DIR --commit SHA
    (bash gpu-bundle/run.sh membound, after bash bench/gpu_bundle.sh --only membound)

writes membound-<date>.json and .md to --out-dir and prints the table.
--quick: one N per kernel (a smoke run); --only NAME,...: those kernels."""
import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch._dynamo
import torch.nn.functional as F
import triton
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import same_source  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCES = {"fwd": os.path.join(HERE, "membound_kernels.py"),
           "ln_bwd": os.path.join(ROOT, "tutorials", "07-layer-norm-backward.py"),
           "rms": os.path.join(ROOT, "tutorials", "08-rms-norm.py"),
           "softmax_bwd": os.path.join(ROOT, "tutorials", "09-softmax-backward.py"),
           "ce": os.path.join(ROOT, "tutorials", "10-cross-entropy.py"),
           "dropout_ln": os.path.join(ROOT, "tutorials", "11-dropout-residual-layer-norm.py")}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
ROUNDS = 3
EPS = 1e-5
# The tk-loaded source modules (their launch defaults: default_programs) and
# the SM count, filled by main().
DEFAULTS = {}


def load(path, backend):
    """The module of one source file, its kernels compiled by `backend`."""
    return same_source.load(path, backend, prefix="membound")


def bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def copy_ms(total):
    src = torch.empty(total // 2, device="cuda", dtype=torch.uint8).random_()
    dst = torch.empty_like(src)
    return bench(lambda: dst.copy_(src))


def next_pow2(n):
    return 1 << (n - 1).bit_length()


# Each case builds its tensors for (dtype, N) and returns: bytes; main(mods)
# (mods: the source modules of one backend), the kernel whose registers are
# recorded, its grid, arguments and meta-parameters; second(mods), a second
# stage launched after it, if any; outputs(); reference() (float64, the same
# order; with reference_after_launch, computed after each backend's launch
# from what it wrote, e.g. dropout's keep mask); tolerances (atol, rtol) per output; the torch eager fn; the
# torch.compile fn (backward kernels) or None.

def rows_for(n, dtype):
    return max(4096, (1 << 26) // n)


def case_softmax_fwd(dt, n):
    m = rows_for(n, dt)
    x = torch.randn(m, n, device="cuda", dtype=dt) * 3
    y = torch.empty_like(x)
    block = next_pow2(n)
    warps = min(32, max(4, block // 512))

    def main(mods):
        return (mods["fwd"].softmax_fwd, (m,), (y, x, x.stride(0), n),
                dict(BLOCK_N=block, num_warps=warps))

    return dict(m=m, bytes=nbytes(x, y), main=main, outputs=lambda: [y],
                reference=lambda: [torch.softmax(x.double(), 1)], tol=[(2e-3, 1e-2)],
                eager=lambda: torch.softmax(x, -1), compiled=None)


def ln_inputs(dt, m, n):
    x = torch.randn(m, n, device="cuda", dtype=dt) * 2 + 0.5
    w = (torch.rand(n, device="cuda") + 0.5).to(dt)
    b = (torch.rand(n, device="cuda") - 0.5).to(dt)
    return x, w, b


def _layer_norm_fwd_case(dt, n, kernel, block, warps):
    """A LayerNorm forward row: `kernel` of the fwd sources with BLOCK_N=block."""
    m = rows_for(n, dt)
    x, w, b = ln_inputs(dt, m, n)
    y = torch.empty_like(x)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")

    def main(mods):
        return (getattr(mods["fwd"], kernel), (m,),
                (x, y, w, b, mean, rstd, x.stride(0), n, EPS), dict(BLOCK_N=block, num_warps=warps))

    return dict(m=m, bytes=nbytes(x, y, w, b, mean, rstd), main=main, outputs=lambda: [y],
                reference=lambda: [F.layer_norm(x.double(), (n,), w.double(), b.double(), EPS)],
                tol=[(2e-2, 1e-2)], eager=lambda: F.layer_norm(x, (n,), w, b, EPS),
                compiled=None)


def case_layer_norm_fwd(dt, n):
    block = next_pow2(n)
    # 8 warps, the launch issue 20 reports (0.63 of Triton at 16384); 32 at
    # 65536, where 8 would hold 256 fp32 values per thread.
    return _layer_norm_fwd_case(dt, n, "layer_norm_fwd", block, 8 if block <= 16384 else 32)


def case_layer_norm_fwd_loop(dt, n):
    block = min(next_pow2(n), 65536 // dt.itemsize)
    return _layer_norm_fwd_case(dt, n, "layer_norm_fwd_loop", block,
                                min(max(block // 256, 1), 8))


def case_rms_norm_fwd(dt, n):
    m = rows_for(n, dt)
    x, w, _ = ln_inputs(dt, m, n)
    y = torch.empty_like(x)
    rstd = torch.empty(m, device="cuda")
    block = next_pow2(n)

    def main(mods):
        return (mods["rms"].rms_norm_fwd, (m,), (x, y, w, rstd, x.stride(0), n, EPS),
                dict(BLOCK_N=block, num_warps=mods["rms"].default_warps(block, False)))

    def ref():
        x64 = x.double()
        return [x64 * torch.rsqrt((x64 * x64).mean(1, keepdim=True) + EPS) * w.double()]

    return dict(m=m, bytes=nbytes(x, y, w, rstd), main=main, outputs=lambda: [y], reference=ref,
                tol=[(2e-2, 1e-2)], eager=lambda: F.rms_norm(x, (n,), w, EPS), compiled=None)


def case_dropout_ln_fwd(dt, n):
    m = rows_for(n, dt)
    x, w, b = ln_inputs(dt, m, n)
    r = torch.randn_like(x)
    h, y = torch.empty_like(x), torch.empty_like(x)
    keep = torch.empty(m, n, device="cuda", dtype=torch.int8)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")
    block = next_pow2(n)
    p = 0.1

    def main(mods):
        mod = mods["dropout_ln"]
        return (mod.dropout_add_layer_norm_fwd, (m,),
                (x, r, h, y, w, b, keep, mean, rstd, x.stride(0), n, p, 1234, EPS),
                dict(BLOCK_N=block, num_warps=mod.default_warps(block)))

    def ref():
        # The kernel's own keep mask (each compiler draws its own random
        # numbers), so this is computed after each launch; the kept fraction
        # must be 1 - p.
        kept = float((keep != 0).double().mean())
        if abs(kept - (1 - p)) > 0.01:
            raise AssertionError(f"kept fraction {kept:.4f}, not {1 - p}")
        h64 = torch.where(keep != 0, x.double() / (1 - p), 0.0) + r.double()
        return [h64, F.layer_norm(h64, (n,), w.double(), b.double(), EPS)]

    return dict(m=m, bytes=nbytes(x, r, h, y, keep, w, b, mean, rstd), main=main,
                outputs=lambda: [h, y], reference=ref, reference_after_launch=True,
                tol=[(2e-2, 1e-2), (3e-2, 1e-2)],
                eager=lambda: F.layer_norm(F.dropout(x, p) + r, (n,), w, b, EPS), compiled=None)


def ce_inputs(dt, v):
    m = max(1024, (1 << 26) // v)
    x = torch.randn(m, v, device="cuda", dtype=dt) * 4
    t = torch.randint(0, v, (m,), device="cuda")
    return m, x, t


def case_cross_entropy_fwd(dt, v):
    m, x, t = ce_inputs(dt, v)
    loss = torch.empty(m, device="cuda")
    lse = torch.empty(m, device="cuda")

    def main(mods):
        return (mods["ce"].cross_entropy_fwd, (m,), (x, t, loss, lse, x.stride(0), v, -100),
                mods["ce"].DEFAULT)

    return dict(m=m, bytes=nbytes(x, t, loss, lse), main=main, outputs=lambda: [loss, lse],
                reference=lambda: [F.cross_entropy(x.double(), t, reduction="none"),
                                   torch.logsumexp(x.double(), 1)],
                tol=[(1e-3, 1e-4), (1e-3, 1e-4)],
                eager=lambda: F.cross_entropy(x, t, reduction="none"), compiled=None)


def autograd_pair(forward, inputs, grad_out):
    """(eager, compiled) backward timers: torch.autograd.grad through the graph
    of forward(*inputs), and through that of torch.compile(forward)(*inputs),
    compiled at its first call (so that a failure there is the row's
    compile_error, not the end of the row)."""
    leaves = [a.detach().requires_grad_() for a in inputs]
    out = forward(*leaves)
    grad_out = grad_out.to(out.dtype)  # cross-entropy's loss has the logits' dtype
    state = {}

    def eager():
        return torch.autograd.grad(out, leaves, grad_out, retain_graph=True)

    def compiled():
        if not state:
            # The timing loop runs backward through one graph again and again
            # (retain_graph); AOT autograd's donated buffers forbid that.
            import torch._functorch.config as functorch_config

            if hasattr(functorch_config, "donated_buffer"):
                functorch_config.donated_buffer = False
            state["leaves"] = [a.detach().requires_grad_() for a in inputs]
            state["out"] = torch.compile(forward)(*state["leaves"])
        return torch.autograd.grad(state["out"], state["leaves"], grad_out, retain_graph=True)

    return eager, compiled


def case_cross_entropy_bwd(dt, v):
    m, x, t = ce_inputs(dt, v)
    t[::7] = -100
    lse = torch.logsumexp(x.float(), 1)
    dloss = torch.rand(m, device="cuda") + 0.5
    dx = torch.empty_like(x)

    def main(mods):
        return (mods["ce"].cross_entropy_bwd, (m,), (dx, x, t, lse, dloss, x.stride(0), v, -100),
                mods["ce"].DEFAULT)

    def ref():
        x64 = x.double()
        g = torch.softmax(x64, 1)
        rows = torch.arange(m, device="cuda")
        counted = t != -100
        g[rows[counted], t[counted]] -= 1
        return [g * torch.where(counted, dloss.double(), 0.0)[:, None]]

    eager, compiled = autograd_pair(
        lambda a: F.cross_entropy(a, t, reduction="none", ignore_index=-100), [x], dloss)
    return dict(m=m, bytes=nbytes(x, dx, t, lse, dloss), main=main, outputs=lambda: [dx],
                reference=ref, tol=[(2e-3, 1e-2)], eager=eager, compiled=compiled)


def norm_stats(x, rms):
    x64 = x.double()
    if rms:
        return None, torch.rsqrt((x64 * x64).mean(1) + EPS).float()
    return x64.mean(1).float(), torch.rsqrt(x64.var(1, unbiased=False) + EPS).float()


def case_layer_norm_bwd(dt, n):
    m = rows_for(n, dt)
    x, w, b = ln_inputs(dt, m, n)
    dy = torch.randn_like(x)
    mean, rstd = norm_stats(x, False)
    dx = torch.empty_like(x)
    programs = DEFAULTS["ln_bwd"].default_programs(m, DEFAULTS["sms"])
    part = torch.empty(2, programs, n, device="cuda")
    dw = torch.empty(n, device="cuda")
    db = torch.empty(n, device="cuda")
    block = next_pow2(n)

    def main(mods):
        mod = mods["ln_bwd"]
        return (mod.layer_norm_bwd_dx, (programs,),
                (x, dy, dx, w, mean, rstd, part[0], part[1], x.stride(0), m, n),
                dict(BLOCK_N=block, num_warps=mod.default_warps(block)))

    def second(mods):
        mods["ln_bwd"].layer_norm_bwd_dwdb[(triton.cdiv(n, 128),)](
            part[0], part[1], dw, db, programs, n, BLOCK_M=32, BLOCK_N=128, num_warps=4)

    def ref():
        x64, w64, b64 = (a.double().requires_grad_() for a in (x, w, b))
        F.layer_norm(x64, (n,), w64, b64, EPS).backward(dy.double())
        return [x64.grad, w64.grad, b64.grad]

    eager, compiled = autograd_pair(lambda a, c, d: F.layer_norm(a, (n,), c, d, EPS), [x, w, b],
                                    dy)
    scale = m ** 0.5
    return dict(m=m, bytes=nbytes(x, dy, dx, w, mean, rstd, dw, db),
                partial_bytes=2 * nbytes(part), main=main, second=second,
                outputs=lambda: [dx, dw, db], reference=ref,
                tol=[(2e-2, 1e-2), (2e-2 * scale, 1e-2), (2e-2 * scale, 1e-2)],
                eager=eager, compiled=compiled)


def case_rms_norm_bwd(dt, n):
    m = rows_for(n, dt)
    x, w, _ = ln_inputs(dt, m, n)
    dy = torch.randn_like(x)
    _, rstd = norm_stats(x, True)
    dx = torch.empty_like(x)
    programs = DEFAULTS["rms"].default_programs(m, DEFAULTS["sms"])
    part = torch.empty(programs, n, device="cuda")
    dw = torch.empty(n, device="cuda")
    block = next_pow2(n)

    def main(mods):
        mod = mods["rms"]
        return (mod.rms_norm_bwd_dx, (programs,), (x, dy, dx, w, rstd, part, x.stride(0), m, n),
                dict(BLOCK_N=block, num_warps=mod.default_warps(block, True)))

    def second(mods):
        mods["rms"].rms_norm_bwd_dw[(triton.cdiv(n, 128),)](part, dw, programs, n, BLOCK_M=32,
                                                            BLOCK_N=128, num_warps=4)

    def ref():
        x64, w64 = (a.double().requires_grad_() for a in (x, w))
        (x64 * torch.rsqrt((x64 * x64).mean(1, keepdim=True) + EPS) * w64).backward(dy.double())
        return [x64.grad, w64.grad]

    eager, compiled = autograd_pair(lambda a, c: F.rms_norm(a, (n,), c, EPS), [x, w], dy)
    return dict(m=m, bytes=nbytes(x, dy, dx, w, rstd, dw), partial_bytes=2 * nbytes(part),
                main=main, second=second, outputs=lambda: [dx, dw],
                reference=ref, tol=[(2e-2, 1e-2), (2e-2 * m ** 0.5, 1e-2)], eager=eager,
                compiled=compiled)


def case_softmax_bwd(dt, n):
    m = rows_for(n, dt)
    x = torch.randn(m, n, device="cuda", dtype=dt) * 3
    y = torch.softmax(x.float(), 1).to(dt)
    dy = torch.randn_like(x)
    dx = torch.empty_like(x)
    block = next_pow2(n)

    def main(mods):
        mod = mods["softmax_bwd"]
        return (mod.softmax_bwd, (m,), (dx, y, dy, x.stride(0), n),
                dict(BLOCK_N=block, num_warps=mod.default_warps(block)))

    def ref():
        y64, dy64 = y.double(), dy.double()
        return [y64 * (dy64 - (y64 * dy64).sum(1, keepdim=True))]

    eager, compiled = autograd_pair(lambda a: torch.softmax(a, -1), [x], dy)
    return dict(m=m, bytes=nbytes(y, dy, dx), main=main, outputs=lambda: [dx], reference=ref,
                tol=[(2e-3, 2e-2)], eager=eager, compiled=compiled)


KERNELS = {  # name: (case, kind, sizes)
    "softmax_fwd": (case_softmax_fwd, "fwd", None),
    "layer_norm_fwd": (case_layer_norm_fwd, "fwd", None),
    "layer_norm_fwd_loop": (case_layer_norm_fwd_loop, "fwd", None),
    "rms_norm_fwd": (case_rms_norm_fwd, "fwd", None),
    "dropout_add_layer_norm_fwd": (case_dropout_ln_fwd, "fwd", None),
    "cross_entropy_fwd": (case_cross_entropy_fwd, "fwd", (32768, 131072, 262144)),
    "layer_norm_bwd": (case_layer_norm_bwd, "bwd", None),
    "rms_norm_bwd": (case_rms_norm_bwd, "bwd", None),
    "softmax_bwd": (case_softmax_bwd, "bwd", None),
    "cross_entropy_bwd": (case_cross_entropy_bwd, "bwd", (32768, 131072, 262144)),
}
SIZES = (1024, 4096, 16384, 65536)


def check(outs, refs, tols):
    """None, or the first violation of |out - ref| <= atol + rtol |ref| (NaN fails)."""
    for i, (o, r, (atol, rtol)) in enumerate(zip(outs, refs, tols)):
        o64, r64 = o.double(), r.double()
        bad = ~((o64 - r64).abs() <= atol + rtol * r64.abs())
        if bool(bad.any()):
            j = int(bad.flatten().nonzero()[0])
            return (f"output {i}: {int(bad.sum())} mismatches, first at {j}: "
                    f"{o64.flatten()[j].item()} vs {r64.flatten()[j].item()}")
    return None


def registers(main):
    """(registers per thread, spilled bytes) of the kernel main names, from
    its compiler's kernel object (warmup compiles without launching)."""
    fn, grid, args, kwargs = main
    try:
        compiled = fn.warmup(*args, grid=grid, **kwargs)
        if hasattr(compiled, "_init_handles"):  # Triton loads the module lazily
            compiled._init_handles()
        return int(compiled.n_regs), int(compiled.n_spills)
    except Exception:
        return None, None


def launcher(case, mods):
    fn, grid, args, kwargs = case["main"](mods)
    second = case.get("second")

    def launch():
        fn[grid](*args, **kwargs)
        if second:
            second(mods)
    return launch


def run_row(name, dtype, n, backends):
    make, kind, _ = KERNELS[name]
    case = make(DTYPES[dtype], n)
    gb = case["bytes"] / 1e9
    row = {"kernel": name, "kind": kind, "dtype": dtype, "N": n, "M": case["m"],
           "bytes": case["bytes"]}
    if case.get("partial_bytes"):
        row["partial_bytes"] = case["partial_bytes"]
    after = case.get("reference_after_launch", False)
    refs = None if after else case["reference"]()
    runs = {}
    for be, mods in backends.items():
        try:
            for o in case["outputs"]():
                o.fill_(float("nan"))
            launch = launcher(case, mods)
            launch()
            torch.cuda.synchronize()
            row[f"{be}_error"] = check(case["outputs"](), case["reference"]() if after else refs,
                                       case["tol"])
            row[f"{be}_regs"], row[f"{be}_spills"] = registers(case["main"](mods))
            runs[be] = launch
        except Exception as e:  # a failure is a row, not the end of the run
            row[f"{be}_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    del refs
    times = {be: [] for be in runs}
    for _ in range(ROUNDS):
        for be, fn in runs.items():
            times[be].append(bench(fn))
    for be in backends:
        ms = sorted(times.get(be, []))
        row[f"{be}_gbps"] = gb / (ms[len(ms) // 2] * 1e-3) if ms else None
    row["copy_gbps"] = gb / (copy_ms(case["bytes"]) * 1e-3)
    row["eager_gbps"] = gb / (bench(case["eager"]) * 1e-3)
    if case["compiled"] is not None:
        try:
            case["compiled"]()
            row["compile_gbps"] = gb / (bench(case["compiled"]) * 1e-3)
        except Exception as e:
            row["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    tk_gbps = row.get("tk_gbps")
    for key, other in (("tk_over_triton", "triton_gbps"), ("tk_over_copy", "copy_gbps"),
                       ("tk_over_eager", "eager_gbps"), ("tk_over_compile", "compile_gbps")):
        if tk_gbps and row.get(other):
            row[key] = tk_gbps / row[other]
    return row


def table(rows):
    def f(v, spec=".2f"):
        return "-" if v is None else format(v, spec)
    lines = ["| kernel | dtype | N | tk GB/s | Triton GB/s | copy GB/s | tk/Triton | tk/copy | "
             "tk/eager | tk/compile | regs tk/Triton | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['kernel']} | {r['dtype']} | {r['N']} | skipped: {r['skipped']} "
                         "| | | | | | | | |")
            continue
        errs = "; ".join(f"{k[:-6]}: {r[k]}" for k in r if k.endswith("_error") and r[k])
        lines.append(
            f"| {r['kernel']} | {r['dtype']} | {r['N']} | {f(r.get('tk_gbps'), '.0f')} | "
            f"{f(r.get('triton_gbps'), '.0f')} | {f(r.get('copy_gbps'), '.0f')} | "
            f"{f(r.get('tk_over_triton'))} | {f(r.get('tk_over_copy'))} | "
            f"{f(r.get('tk_over_eager'))} | {f(r.get('tk_over_compile'))} | "
            f"{r.get('tk_regs')}/{r.get('triton_regs')} | {errs or 'none'} |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--quick", action="store_true", help="one size per kernel (smoke)")
    ap.add_argument("--only", default="", help="comma-separated kernel names")
    ap.add_argument("--budget-s", type=float, default=280.0)
    args = ap.parse_args()
    start = time.monotonic()
    os.makedirs(args.out_dir, exist_ok=True)
    # Every row compiles its own forward (a closure over N): past dynamo's
    # default of 8 recompiles of one code object torch.compile would fall
    # back to eager without saying so.
    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 4096)
    torch.manual_seed(20)
    backends = {be: {key: load(path, be) for key, path in SOURCES.items()}
                for be in ("tk", "triton")}
    DEFAULTS.update(backends["tk"], sms=torch.cuda.get_device_properties(0).multi_processor_count)
    names = [k for k in KERNELS if not args.only or k in args.only.split(",")]
    # Size by size across the kernels, fp16 first, then bf16, then fp32: a
    # run cut short by the time guard loses the last sizes of bf16 and fp32,
    # not whole kernels.
    plan = []
    for dt in ("fp16", "bf16"):
        for i in range(1 if args.quick else len(SIZES)):
            for name in names:
                sizes = KERNELS[name][2] or SIZES
                if i < len(sizes):
                    plan.append((name, dt, sizes[i]))
    plan += [(name, "fp32", (KERNELS[name][2] or SIZES)[1]) for name in names]
    rows = []
    for name, dt, n in plan:
        if time.monotonic() - start > args.budget_s:
            rows.append({"kernel": name, "kind": KERNELS[name][1], "dtype": dt, "N": n,
                         "skipped": f"time budget of {args.budget_s:.0f} s spent"})
            continue
        try:
            row = run_row(name, dt, n, backends)
        except Exception as e:  # out of memory, a torch failure: recorded
            row = {"kernel": name, "kind": KERNELS[name][1], "dtype": dt, "N": n,
                   "row_error": f"{type(e).__name__}: {str(e)[:300]}"}
        torch.cuda.empty_cache()
        row["elapsed_s"] = round(time.monotonic() - start, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    date = datetime.date.today().isoformat()
    result = {"date": date, "commit": args.commit, "command": " ".join(sys.argv),
              "device": torch.cuda.get_device_name(), "triton": triton.__version__,
              "torch": torch.__version__, "seconds": round(time.monotonic() - start, 1),
              "rows": rows}
    base = os.path.join(args.out_dir, f"membound-{date}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1)
    lines = [f"# Memory-bound kernels from one plain source: tk vs Triton vs torch ({date})", "",
             f"commit {args.commit}, {result['device']}, Triton {result['triton']}, torch "
             f"{result['torch']}, {result['seconds']} s", "", f"`{result['command']}`", ""]
    lines += table(rows)
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    failed = [r for r in rows if r.get("tk_error") or r.get("row_error")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
