"""Issue 25's transformer-block benchmark: tutorials/12-llama-block.py's
Llama decoder block from tk kernels against the same block in torch, eager
and under torch.compile, in one run on the GPU. Milliseconds per block.

Block: hidden 4096, 32 heads of 128, intermediate 11008, random weights,
fp16 (--dtype bf16 for bf16). Workloads (batch x seq):

    prefill 1x2048, prefill 8x512                          (start_pos 0)
    decode  1x1 at position 2047, decode 8x1 at position 511  (the cache before
            it random; the step attends to position + 1 keys)

Columns:
    tk            block() launching tk's kernels from Python (8 launches for a
                  prefill, 13 for a decode step; matmuls autotuned before timing);
                  for the decode steps also "tk:no-split-k", the matmuls as
                  single tile kernels instead of split-K partials + a sum
    tk+compile    the same kernels as torch custom ops (tk_llama::*) inside
                  torch.compile(fullgraph=True)
    eager         the block in torch (cuBLAS matmuls, SDPA, Hugging Face
                  Llama's RMSNorm and RoPE), eager
    compile:MODE  that torch function under torch.compile(mode=MODE), for each
                  --compile-modes (default: max-autotune-no-cudagraphs, then
                  default). A mode's compile runs in a child process with a
                  time cap (--compile-cap seconds over all its workloads);
                  workloads it did not reach are reported as "capped".

Timing: a warm-up, then CUDA events around 20 back-to-back calls (decode:
100), the median of 5 such runs divided by the count: the time per block as a
loop of blocks sees it, host launch time included (no L2 flush: the weights,
0.4 GB, do not fit in L2). Before timing, tk's output and the eager torch
output are each compared with a float32 torch reference.

    python3 bench/llama_block_bench.py [--json FILE] [--dtype fp16|bf16]
        [--workloads prefill-1x2048,decode-8x1,...] [--compile-modes M1,M2]
        [--compile-cap SECONDS] [--intermediate 11008]
"""

import argparse
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKLOADS = {  # name: (batch, seq, start_pos)
    "prefill-1x2048": (1, 2048, 0),
    "prefill-8x512": (8, 512, 0),
    "decode-1x1@2047": (1, 1, 2047),
    "decode-8x1@511": (8, 1, 511),
}


def load_tutorial():
    spec = importlib.util.spec_from_file_location("llama_block",
                                                  ROOT / "tutorials" / "12-llama-block.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def torch_block(x, w, k_cache, v_cache, start_pos):
    """The block as a PyTorch user writes it (Hugging Face Llama's forms)."""
    cfg = w.cfg
    b, s, hd = x.shape
    nh, d = cfg.heads, cfg.head_dim

    def rms_norm(t, g):
        t32 = t.float()
        return (t32 * torch.rsqrt(t32.pow(2).mean(-1, keepdim=True) + cfg.eps)).to(t.dtype) * g

    def rope(t):
        cos = w.cos[start_pos:start_pos + s].to(t.dtype)
        sin = w.sin[start_pos:start_pos + s].to(t.dtype)
        rot = torch.cat((-t[..., d // 2:], t[..., :d // 2]), dim=-1)
        return t * cos + rot * sin

    qkv = rms_norm(x, w.attn_norm) @ w.w_qkv
    q, k, v = (t.view(b, s, nh, d).transpose(1, 2) for t in qkv.split(hd, dim=-1))
    q, k = rope(q), rope(k)
    k_cache[:, :, start_pos:start_pos + s] = k
    v_cache[:, :, start_pos:start_pos + s] = v
    n = start_pos + s
    o = F.scaled_dot_product_attention(q, k_cache[:, :, :n], v_cache[:, :, :n],
                                       is_causal=s > 1 and start_pos == 0)
    h = x + o.transpose(1, 2).reshape(b, s, hd) @ w.w_o
    g, u = (rms_norm(h, w.mlp_norm) @ w.w_gate_up).chunk(2, dim=-1)
    return h + (F.silu(g) * u) @ w.w_down


def time_ms(fn, calls):
    fn()
    torch.cuda.synchronize()
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        runs.append(start.elapsed_time(end) / calls)
    return sorted(runs)[len(runs) // 2]


class Setup:
    def __init__(self, lb, dtype, intermediate):
        self.lb = lb
        self.cfg = lb.Config(intermediate=intermediate, max_len=2048 + 64)
        self.dtype = dtype
        self.w = lb.random_weights(self.cfg, dtype, "cuda", seed=25)
        self.t_dtype = getattr(torch, dtype)

    def inputs(self, name):
        batch, seq, start = WORKLOADS[name]
        g = torch.Generator(device="cuda").manual_seed(list(WORKLOADS).index(name))
        x = torch.randn(batch, seq, self.cfg.hidden, device="cuda", dtype=self.t_dtype,
                        generator=g)
        shape = (batch, self.cfg.heads, self.cfg.max_len, self.cfg.head_dim)
        k = torch.randn(shape, device="cuda", dtype=self.t_dtype, generator=g)
        v = torch.randn(shape, device="cuda", dtype=self.t_dtype, generator=g)
        return x, k, v, start

    def calls(self, name):
        return 100 if name.startswith("decode") else 20


def compile_child(args):
    """--child MODE: torch.compile(mode=MODE) of torch_block, each workload in
    turn, one JSON line per workload on stdout as soon as it is measured."""
    lb = load_tutorial()
    st = Setup(lb, args.dtype, args.intermediate)
    fn = torch.compile(torch_block, mode=args.child)
    for name in args.workloads:
        x, k, v, start = st.inputs(name)
        t0 = time.time()
        fn(x, st.w, k, v, start)
        torch.cuda.synchronize()
        compile_s = time.time() - t0
        ms = time_ms(lambda: fn(x, st.w, k, v, start), st.calls(name))  # noqa: B023
        print(json.dumps({"workload": name, "ms": ms, "compile_s": compile_s}), flush=True)


def run_compile_mode(args, mode, cap):
    """The child for one mode under a time cap: {workload: row}."""
    cmd = [sys.executable, __file__, "--child", mode, "--dtype", args.dtype,
           "--intermediate", str(args.intermediate), "--workloads", ",".join(args.workloads)]
    rows = {}
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row.pop("workload")] = row
    if proc.returncode not in (0, -9) and len(rows) < len(args.workloads):
        print(f"compile:{mode} child failed (exit {proc.returncode}):\n{err[-3000:]}",
              file=sys.stderr)
    print(f"compile:{mode}: {len(rows)}/{len(args.workloads)} workloads in "
          f"{time.time() - t0:.0f}s (cap {cap}s)", flush=True)
    return rows


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--compile-modes", default="max-autotune-no-cudagraphs,default")
    p.add_argument("--compile-cap", type=float, default=120)
    p.add_argument("--intermediate", type=int, default=11008)
    p.add_argument("--child")
    args = p.parse_args(argv)
    args.workloads = [w for w in args.workloads.split(",") if w]
    if args.child:
        compile_child(args)
        return 0

    lb = load_tutorial()
    st = Setup(lb, args.dtype, args.intermediate)
    ops = lb.custom_ops()
    w = st.w
    tk_compiled = torch.compile(lambda x, c, s: lb.block(x, w, c, s, ops), fullgraph=True)
    results = {}
    for name in args.workloads:
        x, k, v, start = st.inputs(name)
        batch, seq, _ = WORKLOADS[name]
        ref, _, _ = lb.reference(x, w, k[:, :, :start], v[:, :, :start], start)
        cache = lb.Cache(k.clone(), v.clone())
        t0 = time.time()
        got = lb.block(x, w, cache, start)
        torch.cuda.synchronize()
        tune_s = time.time() - t0
        err_tk = float((got.float() - ref).abs().max())
        err_eager = float((torch_block(x, w, k.clone(), v.clone(), start).float() - ref)
                          .abs().max())
        row = {"tk_err": err_tk, "eager_err": err_eager, "ref_max": float(ref.abs().max()),
               "tk_first_call_s": tune_s}
        calls = st.calls(name)
        row["tk"] = time_ms(lambda: lb.block(x, w, cache, start), calls)  # noqa: B023
        row["tk+compile"] = time_ms(lambda: tk_compiled(x, cache, start), calls)  # noqa: B023
        row["eager"] = time_ms(lambda: torch_block(x, w, k, v, start), calls)  # noqa: B023
        if seq == 1 and batch <= lb.SPLIT_K_ROWS:
            # The decode step's matmuls without split-K (the tile kernels).
            keep, lb.SPLIT_K_ROWS = lb.SPLIT_K_ROWS, 0
            row["tk:no-split-k"] = time_ms(lambda: lb.block(x, w, cache, start),  # noqa: B023
                                           calls)
            row["tk:no-split-k_err"] = float((lb.block(x, w, cache, start).float() - ref)
                                             .abs().max())
            lb.SPLIT_K_ROWS = keep
        results[name] = row
        extra = (f", tk without split-K {row['tk:no-split-k']:.3f} ms"
                 if "tk:no-split-k" in row else "")
        print(f"{name}: tk {row['tk']:.3f} ms, tk+compile {row['tk+compile']:.3f} ms, eager "
              f"{row['eager']:.3f} ms{extra} (max err tk {err_tk:.3g}, eager {err_eager:.3g}, "
              f"|ref| {row['ref_max']:.3g})", flush=True)
    for mode in [m for m in args.compile_modes.split(",") if m]:
        missing = [n for n in args.workloads if f"compile:{mode}" not in results[n]]
        if not missing:
            continue
        rows = run_compile_mode(argparse.Namespace(**{**vars(args), "workloads": missing}),
                                mode, args.compile_cap)
        for n in args.workloads:
            if n in rows:
                results[n][f"compile:{mode}"] = rows[n]["ms"]
                results[n][f"compile:{mode}:compile_s"] = rows[n]["compile_s"]
            elif f"compile:{mode}" not in results[n]:
                results[n][f"compile:{mode}"] = "capped"

    print(f"\nms per block, {args.dtype}, hidden 4096, 32 heads, intermediate "
          f"{args.intermediate}, {torch.cuda.get_device_name()}")
    modes = [m for m in args.compile_modes.split(",") if m]
    head = ["workload", "tk", "tk+compile", "eager"] + [f"compile:{m}" for m in modes]
    print(" | ".join(head) + " | eager/tk | " + " | ".join(f"{m}/tk" for m in modes))
    for name, row in results.items():
        cells = [name] + [row[c] if isinstance(row[c], str) else f"{row[c]:.3f}"
                          for c in head[1:]]
        ratios = [f"{row['eager'] / row['tk']:.2f}"] + [
            f"{row[f'compile:{m}'] / row['tk']:.2f}" if not isinstance(row[f"compile:{m}"], str)
            else "-" for m in modes]
        print(" | ".join(cells) + " | " + " | ".join(ratios))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "dtype": args.dtype,
                       "intermediate": args.intermediate, "torch": torch.__version__,
                       "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
