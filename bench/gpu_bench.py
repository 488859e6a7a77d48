"""Issue 5's speed benchmark: tk vs Triton 3.6 vs torch, one run on the GPU machine.

Two row-wise workloads of shared/anchors.md:

- fused softmax, fp32, M x N in 8192x1024, 8192x4096, 4096x8192, 4096x16384;
- LayerNorm forward, fp16 in/out, fp32 statistics, weight and bias, mean and
  rstd written, eps 1e-5, M = 8192 and N in 1024, 4096, 8192, 16384.

tk's kernels are tutorials/02-fused-softmax.tk and the three kernels of
tutorials/03-layer-norm.tk (layer_norm_fwd walks the row in chunks,
layer_norm_fwd_fused holds it in registers, in its two-pass and, as
fused1p, its ONE_PASS form, and layer_norm_fwd_persistent does the same on
persistent grids of K programs per SM, label persist[1p]_wW_pK, each program
loading its next row before it reduces the current one), compiled ahead of
time to PTX by
bench/gpu_bundle.sh's bench part (one file per kernel, BLOCK_SIZE and num_warps) and
launched here through CuPy. Every variant is timed and the fastest is
reported, as Triton's best of the same num_warps is (softmax also tries
persistent grids of 2, 4 and 8 programs per SM, since the tutorial's programs
stride over rows). For LayerNorm the row also reports the variant
tutorials/03-layer-norm.py launches by default (its layer_norm_config, read
from the file): tk_default, timed against Triton's winner like tk's best.
Hand-made PTX in the bundle named
softmax_N_wW.exp-NAME.ptx, layernorm_fused[1p]_N_wW.exp-NAME.ptx,
layernorm_persist[1p]_N_wW.exp-NAME.ptx, layernorm_rowsR_N_wW.exp-NAME.ptx or
layernorm_strideD_N_wW.exp-NAME.ptx (a code-generation change tried before the
compiler makes it, e.g. bench/exp_ln_cache_hints.py, exp_ln_l2_hints.py or
exp_ln_maxnreg.py, or a kernel of bench/exp_layernorm.tk; the persistent and
stride kinds on the persistent grids, NAME@pK) is timed and checked too, and
reported apart, never as tk's figure. Each output is
poisoned with NaN before the first launch and checked against torch in
higher precision, so an unwritten element or a wrong index fails. Registers per
thread are recorded for both: tk's from ptxas -v (the bundle's
ptxas-registers.json), Triton's from its compiled kernel.

Bandwidth is bytes that must move (inputs read once, outputs written once)
over the median time of triton.testing.do_bench (CUDA events, warmup 25 ms,
rep 100 ms). The best variant of each side is chosen by one timing each, then
the two winners are re-timed alternately (HEAD_TO_HEAD_ROUNDS times each) and
the medians of those are the reported tk_gbps and triton_gbps (the selection
timings stay in the JSON as *_select_gbps and *_variants_ms). Two ceilings, both measured in the same run (read + write
counted): a 1 GiB device-to-device torch copy (copy_gbps, the figure issue 5's
"90% of the measured copy bandwidth" has been judged against), and per row a
torch copy of exactly the workload's matrix bytes (copy_same_gbps: an M x N
tensor of the input dtype into another, timed like the kernels, L2 flushed
between runs), which pays the same launch, ramp-up and tail as a kernel of
that size. Both ratios are reported; neither replaces the other. LayerNorm rows also
carry clean_l2_probe: tk's best and the same-bytes copy timed once more with
L2 filled by a 256 MiB read (clean lines) instead of do_bench's 256 MiB
zeroing (dirty lines, written back inside the next timed launch), which
shows how much of a short kernel's time that write-back is.

--workloads softmax,layernorm (the default) picks which rows run.

The same run can fold in the two C++ benches of issue 5 (each skipped with a
message when its binary is absent or fails):

- --compile-bench PATH: `PATH --load --json F` with CUDA_CACHE_DISABLE=1,
  source -> loaded module time of the softmax kernel in a warm process;
- --launch-bench PATH: `PATH --json F`, host time per launch through tk's C++
  API against a raw cuLaunchKernel loop.

Example:

    bash bench/gpu_bundle.sh --build build --only bench    # on the development machine
    bash gpu-bundle/run.sh bench                           # on the GPU machine, which runs
    python3 -u bench/gpu_bench.py --ptx-dir gpu-bundle/x/ptx --out-dir $OUT --commit abc1234 \
        --compile-bench gpu-bundle/x/drv/compile_bench --launch-bench gpu-bundle/x/drv/launch_bench

writes gpu-bench.json and gpu-bench.png to --out-dir and prints a table.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import traceback

import cupy as cp
import numpy as np
import torch
import triton
import triton.language as tl

SOFTMAX_SHAPES = ((8192, 1024), (8192, 4096), (4096, 8192), (4096, 16384))
LAYERNORM_SHAPES = ((8192, 1024), (8192, 4096), (8192, 8192), (8192, 16384))
# The chunked LayerNorm kernel walks the row with these blocks (when smaller
# than the row); the fused one always takes BLOCK_SIZE = N.
LAYERNORM_CHUNKS = (1024, 4096)
# The winners of each row are re-timed alternately this many times each.
HEAD_TO_HEAD_ROUNDS = 3
WARPS = (2, 4, 8, 16, 32)


def warps_for(n):
    """The warp counts tried for a row of n elements, for tk and Triton alike:
    at most 128 elements per thread (more only spills), and 32 warps only for
    rows of 8192 or more (at least 8 elements per thread)."""
    return [w for w in WARPS if n <= 128 * 32 * w and (w < 32 or n >= 8192)]
EPS = 1e-5


@triton.jit
def triton_row_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=valid, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    e = tl.exp(shifted)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=valid)


@triton.jit
def triton_layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps,
                          BLOCK: tl.constexpr):
    # The whole row stays in registers (BLOCK >= n_cols), so x is read from
    # memory once: the strongest single-pass form for these widths.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=valid, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(valid, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=valid).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=valid).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (centred * rstd * w + b).to(tl.float16), mask=valid)


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


_CLEAN_L2 = []


def bench_clean_l2(fn, reps=200):
    """Median ms of fn over reps launches, each after L2 is filled with clean
    lines by a read of 256 MiB (do_bench zeroes 256 MiB instead, so its L2
    holds dirty lines the timed kernel writes back): the probe of how much of
    a short kernel's time that write-back is."""
    if not _CLEAN_L2:
        _CLEAN_L2.append(torch.ones(1 << 26, device="cuda"))
    buf = _CLEAN_L2[0]
    fn()
    times = []
    for _ in range(reps):
        buf.sum()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return float(np.median([s.elapsed_time(e) for s, e in times]))


def gbps(nbytes, ms):
    return nbytes / ms * 1e-6


def errors(out, ref):
    """Max abs error, relative L2 error, and whether every element is finite."""
    out = out.double()
    ref = ref.double()
    finite = bool(torch.isfinite(out).all().item())
    diff = (out - ref).abs()
    return {"max_abs_err": diff.max().item(),
            "rel_l2_err": (diff.norm() / ref.norm()).item(),
            "all_written": finite}


def ptr(t):
    return np.uint64(t.data_ptr())


def load_kernel(ptx_dir, name, entry):
    return cp.RawModule(path=os.path.join(ptx_dir, name)).get_function(entry)


def copy_gbps(shape, dtype):
    """GB/s of a torch device-to-device copy of one tensor (read + write)."""
    src = torch.empty(shape, device="cuda", dtype=dtype).uniform_(-1.0, 1.0)
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src))
    assert torch.equal(dst, src)
    return gbps(2 * src.numel() * src.element_size(), ms)


def copy_bandwidth():
    return copy_gbps((1 << 28,), torch.float32)  # 1 GiB of fp32


def copy_same_bytes(m, n, dtype):
    """The copy of exactly one m x n matrix of dtype: a workload's own bytes."""
    return copy_gbps((m, n), dtype)


def best_of(variants):
    """Times each (label, fn) and returns (best_ms, best_label, {label: ms})."""
    times = {}
    for label, fn in variants:
        fn()
        times[label] = bench(fn)
    label = min(times, key=times.get)
    return times[label], label, times


def head_to_head(tk, tk_label, tri, tri_label, rounds=HEAD_TO_HEAD_ROUNDS):
    """Re-times the two winners alternately, `rounds` times each: the medians
    (the reported figures) and every time. Choosing the best of many noisy
    timings favours the side with more variants, and clocks drift between the
    tk block and the Triton block of a row; alternating the two winners
    removes both biases."""
    tk_fn, tri_fn = dict(tk)[tk_label], dict(tri)[tri_label]
    tk_ms, tri_ms = [], []
    for _ in range(rounds):
        tk_ms.append(bench(tk_fn))
        tri_ms.append(bench(tri_fn))
    return (float(np.median(tk_ms)), float(np.median(tri_ms)),
            {"tk_ms": tk_ms, "triton_ms": tri_ms})


def triton_registers(compiled):
    """Registers per thread and spilled bytes of a launched Triton kernel."""
    try:
        return {"registers": int(compiled.n_regs), "spills": int(compiled.n_spills)}
    except Exception as e:  # the attribute names are Triton's, not a stable API
        return {"error": repr(e)}


def triton_variants(kernel, grid, args, block, registers):
    """(label, fn) per num_warps; fills registers[label] after the first launch."""
    out = []
    for w in warps_for(block):
        def run(w=w):
            return kernel[grid](*args, BLOCK=block, num_warps=w)
        registers[f"w{w}"] = triton_registers(run())
        out.append((f"w{w}", run))
    return out


def softmax(bundle, m, n):
    x = torch.randn(m, n, device="cuda") * 3.0
    ref = torch.softmax(x.double(), dim=-1)
    nbytes = 2 * 4 * m * n

    # The tutorial's programs stride over rows: one row per program (grid m),
    # or a persistent grid of k programs per SM (label _pK) walking the rows.
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tk_variants, tk_checks, tk_regs = [], {}, {}
    for w in warps_for(n):
        name = f"softmax_{n}_w{w}.ptx"
        if not bundle.has(name):
            continue
        for label, grid in [(f"w{w}", m)] + [(f"w{w}_p{k}", min(m, k * sms)) for k in (2, 4, 8)]:
            run, out = softmax_launch(bundle, name, x, w, grid)
            tk_checks[label] = errors(out, ref)
            tk_regs[label] = bundle.registers(name)
            tk_variants.append((label, run))
    tk_ms, tk_label, tk_times = best_of(tk_variants)
    experiments = softmax_experiments(bundle, m, n, x, ref)

    tri_out = torch.full_like(x, float("nan"))
    tri_regs = {}
    tri_variants = triton_variants(triton_row_softmax, (m,), (tri_out, x, n, n, n), n, tri_regs)
    tri_ms, tri_label, tri_times = best_of(tri_variants)
    tk_sel, tri_sel = tk_ms, tri_ms
    tk_ms, tri_ms, h2h = head_to_head(tk_variants, tk_label, tri_variants, tri_label)
    torch.cuda.synchronize()
    torch_ms = bench(lambda: torch.softmax(x, dim=-1))
    return {"workload": "softmax_fp32", "m": m, "n": n, "bytes": nbytes,
            "tk_gbps": gbps(nbytes, tk_ms), "tk_best": tk_label,
            "tk_select_gbps": gbps(nbytes, tk_sel), "triton_select_gbps": gbps(nbytes, tri_sel),
            "head_to_head": h2h,
            "tk_variants_ms": tk_times, "tk_checks": tk_checks,
            "tk_registers": tk_regs,
            "triton_gbps": gbps(nbytes, tri_ms), "triton_best": tri_label,
            "triton_variants_ms": tri_times, "triton_check": errors(tri_out, ref),
            "triton_registers": tri_regs,
            "experiments": experiments,
            "torch_gbps": gbps(nbytes, torch_ms),
            "copy_same_gbps": copy_same_bytes(m, n, torch.float32)}


def softmax_launch(bundle, name, x, warps, grid):
    """A launch of one softmax PTX file over x, run once; and its output."""
    kernel = bundle.kernel(name, "softmax_kernel")
    m, n = x.shape
    out = torch.full_like(x, float("nan"))

    def run():
        kernel((grid,), (32 * warps,), (ptr(out), ptr(x), np.int32(n), np.int32(n), np.int32(m),
                                        np.int32(n)))
    run()
    torch.cuda.synchronize()
    return run, out


def softmax_experiments(bundle, m, n, x, ref):
    """Hand-edited PTX (softmax_{n}_w{w}.exp-NAME.ptx in the bundle) that tries
    a code-generation change before the compiler makes it: timed and checked
    like tk's own variants, reported apart from them (never as tk's figure)."""
    found = {}
    for name in bundle.names(f"softmax_{n}_w", ".ptx"):
        if ".exp-" not in name:
            continue
        w = int(name[len(f"softmax_{n}_w"):].split(".")[0])
        run, out = softmax_launch(bundle, name, x, w, m)
        found[name] = {"check": errors(out, ref), "ms": bench(run),
                       "registers": bundle.registers(name)}
        found[name]["gbps"] = gbps(2 * 4 * m * n, found[name]["ms"])
    return found


def layernorm(bundle, m, n):
    x = (torch.randn(m, n, device="cuda") * 2.0 + 0.5).half()
    w = (torch.rand(n, device="cuda") + 0.5).half()
    b = (torch.randn(n, device="cuda") * 0.1).half()
    xf = x.double()
    ref_y = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), EPS)
    ref_mean = xf.mean(dim=-1)
    ref_rstd = 1.0 / torch.sqrt(xf.var(dim=-1, unbiased=False) + EPS)
    # Mean and rstd once more on the host with numpy, as an independent check
    # of the torch reference the kernels are compared with.
    x_np = x.cpu().numpy().astype(np.float64)
    np_mean = x_np.mean(axis=1)
    np_rstd = 1.0 / np.sqrt(x_np.var(axis=1) + EPS)
    ref_agree = max(np.abs(np_mean - ref_mean.cpu().numpy()).max(),
                    np.abs(np_rstd / ref_rstd.cpu().numpy() - 1.0).max())
    nbytes = 2 * m * n * 2 + 2 * n * 2 + 2 * m * 4  # x, y; w, b; mean, rstd

    def outputs():
        return (torch.full_like(x, float("nan")),
                torch.full((m,), float("nan"), device="cuda"),
                torch.full((m,), float("nan"), device="cuda"))

    def check(y, mean, rstd):
        return {"y": errors(y, ref_y), "mean": errors(mean, ref_mean),
                "rstd": errors(rstd, ref_rstd)}

    # (label, PTX file, entry, programs, takes M): the chunked kernel with
    # blocks shorter than the row, and the fused kernel with the whole row in
    # one block, two-pass and one-pass (fused1p) statistics, one row per
    # program; the persistent kernel (persist, persist1p) on grids of K
    # programs per SM (label _pK), every K up to what fits on an SM at once.
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    configs = []
    for wp in warps_for(n):
        for block in LAYERNORM_CHUNKS:
            if block < n:
                configs.append((f"chunk{block}_w{wp}", f"layernorm_{block}_w{wp}.ptx",
                                "layer_norm_fwd", m, False))
        for form in ("fused", "fused1p"):
            configs.append((f"{form}_w{wp}", f"layernorm_{form}_{n}_w{wp}.ptx",
                            "layer_norm_fwd_fused", m, False))
        for form in ("persist", "persist1p"):
            name = f"layernorm_{form}_{n}_w{wp}.ptx"
            for tag, programs in grids_for(bundle.registers(name), wp, m, sms):
                configs.append((f"{form}_w{wp}_{tag}", name, "layer_norm_fwd_persistent",
                                programs, True))
    tk_variants, tk_checks, tk_regs = [], {}, {}

    def prepared(name, entry, wp, programs=m, takes_m=False):
        """A launch of one PTX file, run once; and its outputs."""
        kernel = bundle.kernel(name, entry)
        y, mean, rstd = outputs()
        args = (ptr(x), ptr(y), ptr(w), ptr(b), ptr(mean), ptr(rstd), np.int32(n), np.int32(n),
                np.float32(EPS)) + ((np.int32(m),) if takes_m else ())

        def run():
            kernel((programs,), (32 * wp,), args)
        run()
        torch.cuda.synchronize()
        return run, (y, mean, rstd)

    for label, name, entry, programs, takes_m in configs:
        if not bundle.has(name):
            continue
        run, outs = prepared(name, entry, int(label.split("_w", 1)[1].split("_")[0]), programs,
                             takes_m)
        tk_checks[label] = check(*outs)
        tk_regs[label] = bundle.registers(name)
        tk_variants.append((label, run))
    tk_ms, tk_label, tk_times = best_of(tk_variants)
    # Experiments (see softmax_experiments): layernorm_fused_{n}_wW.exp-NAME.ptx
    # (the fused kernel's entry, m programs), layernorm_rowsR_{n}_wW.exp-NAME.ptx
    # (bench/exp_layernorm.tk's layer_norm_fwd_rows, m / R programs) and
    # layernorm_strideD_{n}_wW.exp-NAME.ptx (its layer_norm_fwd_stride) and
    # layernorm_persist[1p]_{n}_wW.exp-NAME.ptx (the tutorial's persistent
    # kernel, edited), both on the persistent grids, reported as NAME@pK.
    experiments = {}
    for name in bundle.names("layernorm_", ".ptx"):
        kind, _, rest = name.partition(f"_{n}_w")
        if ".exp-" not in rest:
            continue
        wp = int(rest.split(".")[0])
        if kind in ("layernorm_fused", "layernorm_fused1p"):
            runs = [(name, prepared(name, "layer_norm_fwd_fused", wp))]
        elif kind.startswith("layernorm_rows"):
            rows = int(kind[len("layernorm_rows"):])
            runs = [(name, prepared(name, "layer_norm_fwd_rows", wp, m // rows))]
        elif kind.startswith("layernorm_stride") or kind.startswith("layernorm_persist"):
            entry = "layer_norm_fwd_stride" if "stride" in kind else "layer_norm_fwd_persistent"
            runs = [(f"{name}@{tag}", prepared(name, entry, wp, programs, True))
                    for tag, programs in grids_for(bundle.registers(name), wp, m, sms)]
        else:
            continue
        for label, (run, outs) in runs:
            ms = bench(run)
            experiments[label] = {"check": check(*outs), "ms": ms, "gbps": gbps(nbytes, ms),
                                  "registers": bundle.registers(name)}

    ty, tmean, trstd = outputs()
    tri_regs = {}
    tri_variants = triton_variants(triton_layer_norm_fwd, (m,),
                                   (x, ty, w, b, tmean, trstd, n, n, EPS), n, tri_regs)
    tri_ms, tri_label, tri_times = best_of(tri_variants)
    tk_sel, tri_sel = tk_ms, tri_ms
    tk_ms, tri_ms, h2h = head_to_head(tk_variants, tk_label, tri_variants, tri_label)
    # What tutorials/03-layer-norm.py launches for this n by default, timed
    # alternately with Triton's winner like tk's best.
    try:
        default = tutorial_layernorm_label(n, sms)
    except Exception as e:  # reported in the row, the rest of it still runs
        default = f"unknown ({e!r})"
    if default in dict(tk_variants):
        default_ms, _, default_h2h = head_to_head(tk_variants, default, tri_variants, tri_label)
    else:
        default_ms, default_h2h = float("nan"), {"missing": default}
    torch.cuda.synchronize()
    torch_ms = bench(lambda: torch.nn.functional.layer_norm(x, (n,), w, b, EPS))
    # A probe of the timing method, not a ratio of the issue: tk's best and
    # the same-bytes copy once more, with L2 filled by reads (clean lines)
    # instead of do_bench's zeroing (dirty lines written back inside the next
    # timing).
    src = torch.empty_like(x).uniform_(-1.0, 1.0)
    dst = torch.empty_like(src)
    clean_l2 = {"tk_gbps": gbps(nbytes, bench_clean_l2(dict(tk_variants)[tk_label])),
                "copy_same_gbps": gbps(2 * src.numel() * 2,
                                       bench_clean_l2(lambda: dst.copy_(src)))}
    return {"workload": "layernorm_fwd_fp16", "m": m, "n": n, "bytes": nbytes,
            "reference_numpy_vs_torch": float(ref_agree),
            "tk_gbps": gbps(nbytes, tk_ms), "tk_best": tk_label,
            "tk_select_gbps": gbps(nbytes, tk_sel), "triton_select_gbps": gbps(nbytes, tri_sel),
            "head_to_head": h2h,
            "tk_default": default, "tk_default_gbps": gbps(nbytes, default_ms),
            "tk_default_head_to_head": default_h2h,
            "tk_variants_ms": tk_times, "tk_checks": tk_checks, "tk_registers": tk_regs,
            "triton_gbps": gbps(nbytes, tri_ms), "triton_best": tri_label,
            "triton_variants_ms": tri_times, "triton_check": check(ty, tmean, trstd),
            "triton_registers": tri_regs, "experiments": experiments,
            "torch_gbps": gbps(nbytes, torch_ms),
            "copy_same_gbps": copy_same_bytes(m, n, torch.float16),
            "clean_l2_probe": clean_l2}


def resident_programs(registers, warps):
    """Programs of `warps` warps at `registers` per thread that fit on one
    sm_90 SM at once: 64K registers (allocated per warp in units of 256),
    64 warps and 32 programs; the kernels' few bytes of shared memory never
    limit it."""
    per_warp = -(-registers * 32 // 256) * 256
    return max(0, min(32, 64 // warps, 65536 // (per_warp * warps)))


def persistent_grids(registers, warps):
    """The K (programs per SM) a persistent LayerNorm variant is timed at:
    1, 2, 4, 8, 16 and the most that fit at once, none past that (the grid
    would no longer be resident) and none for a file that spills."""
    if not registers or registers.get("registers") is None:
        return [1, 2, 4]
    if registers.get("spill_store_bytes"):
        return []
    fit = resident_programs(registers["registers"], warps)
    return sorted({k for k in (1, 2, 4, 8, 16) if k <= fit} | ({fit} if fit else set()))


def grids_for(registers, warps, m, sms):
    """(label tag, programs) of a persistent variant: K programs per SM
    (pK). A grid sized so that every program takes the same number of rows
    (8192 rows as 512 x 16 instead of 528 programs and a half-full last
    round) measured the same on the H200 (bench/results/notes/layernorm.md, "2026-11-30, fed4116")."""
    return [(f"p{k}", min(m, k * sms)) for k in persistent_grids(registers, warps)]


def tutorial_layernorm_label(n, sms):
    """gpu_bench's label of the LayerNorm variant tutorials/03-layer-norm.py
    launches by default for rows of n fp16 elements: its layer_norm_config
    (plain Python, no tk), read from the tutorial's source so that the two
    cannot drift apart."""
    import ast
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tutorials",
                        "03-layer-norm.py")
    with open(path) as f:
        tree = ast.parse(f.read())
    fn = next(d for d in tree.body if isinstance(d, ast.FunctionDef) and
              d.name == "layer_norm_config")
    scope = {}
    exec(compile(ast.Module([fn], []), path, "exec"), scope)
    c = scope["layer_norm_config"](n, sms)
    if c["kernel"] == "layer_norm_fwd":
        return f"chunk{c['BLOCK_SIZE']}_w{c['num_warps']}"
    form = ("fused" if c["kernel"] == "layer_norm_fwd_fused" else "persist") + \
        ("1p" if c["ONE_PASS"] else "")
    label = f"{form}_w{c['num_warps']}"
    return label if c["programs_per_sm"] is None else f"{label}_p{c['programs_per_sm']}"


class Bundle:
    """The PTX folder of bench/gpu_bundle.sh's bench part and its ptxas register counts."""

    def __init__(self, ptx_dir):
        self.dir = ptx_dir
        path = os.path.join(ptx_dir, "ptxas-registers.json")
        self.regs, self.loaded = {}, {}
        if os.path.exists(path):
            with open(path) as f:
                self.regs = json.load(f)

    def has(self, name):
        return os.path.exists(os.path.join(self.dir, name))

    def kernel(self, name, entry):
        if (name, entry) not in self.loaded:
            self.loaded[(name, entry)] = load_kernel(self.dir, name, entry)
        return self.loaded[(name, entry)]

    def names(self, prefix, suffix):
        return sorted(f for f in os.listdir(self.dir) if f.startswith(prefix) and f.endswith(suffix))

    def registers(self, name):
        return self.regs.get(name)


def run_cpp_bench(path, args, env_extra):
    """Runs one of the C++ benches with --json; its JSON, or why there is none."""
    if not path:
        return None
    if not os.path.exists(path):
        print(f"skipping {path}: not found")
        return {"skipped": f"{path} not found"}
    env = dict(os.environ, **env_extra)
    # The binaries find libtk.so beside them or in ../lib (the bundle's layout).
    here = os.path.dirname(os.path.abspath(path))
    env["LD_LIBRARY_PATH"] = ":".join(
        [here, os.path.join(here, "..", "lib"), env.get("LD_LIBRARY_PATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [path] + args + ["--json", out]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        except subprocess.TimeoutExpired:
            print(f"{' '.join(cmd)}: timed out after 240 s")
            return {"command": " ".join(cmd), "error": "timed out after 240 s"}
        print(proc.stdout, end="")
        print(proc.stderr, end="", file=sys.stderr)
        result = {"command": " ".join(cmd), "env": env_extra, "exit_status": proc.returncode,
                  "stdout": proc.stdout[-4000:], "stderr": proc.stderr[-4000:]}
        if proc.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                result["json"] = json.load(f)
        else:
            print(f"{' '.join(cmd)}: exit status {proc.returncode}, no JSON")
        return result


def passes(row):
    """Whether every tk variant of a row matched the reference."""
    for c in row["tk_checks"].values():
        parts = [c] if "max_abs_err" in c else [c["y"], c["mean"], c["rstd"]]
        for p in parts:
            if not p["all_written"]:
                return False
        if row["workload"] == "softmax_fp32":
            if c["max_abs_err"] > 1e-5 or c["rel_l2_err"] > 1e-5:
                return False
        else:
            # y is fp16: half an ulp at |y| < 16 is under 8e-3.
            if c["y"]["max_abs_err"] > 1.6e-2 or c["y"]["rel_l2_err"] > 1e-3:
                return False
            if c["mean"]["max_abs_err"] > 1e-4 or c["rstd"]["rel_l2_err"] > 1e-5:
                return False
    return True


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(w, t) for w, t in (("softmax_fp32", "fused softmax, fp32"),
                                  ("layernorm_fwd_fp16", "LayerNorm forward, fp16"))
              if any(r["workload"] == w for r in result["rows"])]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    for ax, (workload, title) in zip(axes[0], panels):
        rows = [r for r in result["rows"] if r["workload"] == workload]
        xs = np.arange(len(rows))
        for i, (key, name) in enumerate((("tk_gbps", "tk"), ("triton_gbps", "Triton 3.6"),
                                         ("torch_gbps", "torch"))):
            ax.bar(xs + (i - 1) * 0.27, [r[key] for r in rows], 0.27, label=name)
        copy = result["copy_gbps"]
        ax.axhline(copy, color="black", linestyle="--", linewidth=1,
                   label=f"D2D copy {copy:.0f}")
        ax.axhline(0.9 * copy, color="grey", linestyle=":", linewidth=1, label="90% of copy")
        ax.plot(xs, [r["copy_same_gbps"] for r in rows], "k_", markersize=22, mew=2,
                label="copy of the same bytes")
        ax.set_xticks(xs, [f"{r['m']}x{r['n']}" for r in rows])
        ax.set_ylabel("GB/s (read + write)")
        ax.set_title(title)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{result['device']}, {result['date']}, tk {result['commit']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptx-dir", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--compile-bench", metavar="PATH",
                    help="compile_bench binary: source -> loaded module time (--load)")
    ap.add_argument("--launch-bench", metavar="PATH",
                    help="launch_bench binary: host time per launch, tk vs raw cuLaunchKernel")
    ap.add_argument("--workloads", default="softmax,layernorm",
                    help="comma-separated subset of softmax,layernorm, run in that order "
                         "(default: both)")
    args = ap.parse_args()
    workloads = set(args.workloads.split(","))
    if not workloads <= {"softmax", "layernorm"}:
        ap.error(f"--workloads: unknown {sorted(workloads - {'softmax', 'layernorm'})}")
    seed = int.from_bytes(os.urandom(4), "little")  # fresh inputs every run, recorded
    torch.manual_seed(seed)

    bundle = Bundle(args.ptx_dir)
    copy = copy_bandwidth()
    rows, failures = [], []
    # One workload that fails (a missing file, a launch error) is reported and
    # the others still run: GPU time is scarce.
    # In the order --workloads names them (the first is done first when a
    # run may be cut short).
    table = {"softmax": (softmax, SOFTMAX_SHAPES), "layernorm": (layernorm, LAYERNORM_SHAPES)}
    for fn, shapes in (table[w] for w in dict.fromkeys(args.workloads.split(","))):
        for m, n in shapes:
            try:
                rows.append(fn(bundle, m, n))
            except Exception:
                failures.append({"workload": fn.__name__, "m": m, "n": n,
                                 "error": traceback.format_exc()})
                print(failures[-1]["error"], file=sys.stderr)
            # What is done so far, in case the run is cut short.
            os.makedirs(args.out_dir, exist_ok=True)
            with open(os.path.join(args.out_dir, "gpu-bench.partial.json"), "w") as f:
                json.dump({"commit": args.commit, "copy_gbps": copy, "rows": rows,
                           "failures": failures}, f)
    for r in rows:
        r["correct"] = passes(r)
        r["tk_over_triton"] = r["tk_gbps"] / r["triton_gbps"]
        r["tk_over_copy"] = r["tk_gbps"] / copy
        r["triton_over_copy"] = r["triton_gbps"] / copy
        r["tk_over_copy_same"] = r["tk_gbps"] / r["copy_same_gbps"]
        r["triton_over_copy_same"] = r["triton_gbps"] / r["copy_same_gbps"]
        if "tk_default_gbps" in r:
            r["tk_default_over_copy"] = r["tk_default_gbps"] / copy
            r["tk_default_over_triton"] = r["tk_default_gbps"] / r["triton_gbps"]
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": args.commit,
        "command": "python3 -u " + " ".join(sys.argv),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "triton": triton.__version__, "cupy": cp.__version__,
        "numpy": np.__version__, "python": platform.python_version(), "host": platform.node(),
        "timing": "triton.testing.do_bench median, warmup 25 ms, rep 100 ms",
        "note": "tk PTX from bench/gpu_bundle.sh, launched through CuPy",
        "seed": seed,
        "copy_gbps": copy,
        "rows": rows,
        "failures": failures,
    }
    # The C++ benches run in their own processes, after the kernels above.
    result["compile_bench"] = run_cpp_bench(args.compile_bench, ["--load"],
                                            {"CUDA_CACHE_DISABLE": "1"})
    result["launch_bench"] = run_cpp_bench(args.launch_bench, [], {})
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "gpu-bench.json"), "w") as f:
        json.dump(result, f, indent=2)

    print(f"device-to-device copy: {copy:.0f} GB/s")
    print("copy/same: a copy of exactly the row's matrix bytes (copy_same_gbps), same timing")
    print(f"{'workload':<19} {'shape':<11} {'ok':<3} {'tk':>6} {'best':<13} {'triton':>6} "
          f"{'best':<4} {'torch':>6} {'tk/tri':>6} {'tk/copy':>7} {'tri/copy':>8} "
          f"{'same':>5} {'tk/same':>7} {'tri/same':>8}")
    for r in rows:
        print(f"{r['workload']:<19} {r['m']}x{r['n']:<6} {'yes' if r['correct'] else 'NO':<3} "
              f"{r['tk_gbps']:>6.0f} {r['tk_best']:<13} {r['triton_gbps']:>6.0f} "
              f"{r['triton_best']:<4} {r['torch_gbps']:>6.0f} {r['tk_over_triton']:>6.2f} "
              f"{r['tk_over_copy']:>7.2f} {r['triton_over_copy']:>8.2f} "
              f"{r['copy_same_gbps']:>5.0f} {r['tk_over_copy_same']:>7.2f} "
              f"{r['triton_over_copy_same']:>8.2f}")
    for r in rows:
        if "tk_default" in r:
            print(f"{r['workload']} {r['m']}x{r['n']}: the tutorial's default {r['tk_default']} "
                  f"{r['tk_default_gbps']:.0f} GB/s, {r['tk_default_over_copy']:.3f} of the copy, "
                  f"{r['tk_default_over_triton']:.3f} of Triton")
    for r in rows:
        for name, e in r.get("experiments", {}).items():
            err = e["check"]["max_abs_err"] if "max_abs_err" in e["check"] else \
                e["check"]["y"]["max_abs_err"]
            print(f"experiment {name}: {e['gbps']:.0f} GB/s ({e['gbps'] / r['triton_gbps']:.3f} "
                  f"of Triton), registers {e['registers']}, max abs err {err:.2e}")
    plot(result, os.path.join(args.out_dir, "gpu-bench.png"))


if __name__ == "__main__":
    main()
