"""Issue 25's Conv2d + bias + ReLU benchmark: tutorials/13-conv2d-bias-relu's
fused implicit-GEMM kernel (autotuned over its CONFIGS) against cuDNN
(F.conv2d on channels_last fp16 input and filter, then the bias add and the
relu as torch ops) and, with --compile, torch.compile of that same function
(Inductor: cuDNN's convolution and one fused kernel for bias and relu), on
every distinct convolution of ResNet-50 (torchvision's v1.5: the stride on
the 3x3) at 224x224, batch 32 by default, fp16.

Per layer, tk's output is checked against F.conv2d + bias + relu in float32
first (|tk - ref| <= 1e-2 + 1e-2 |ref|), then each provider is timed with
tk.testing.do_bench (CUDA events, L2 evicted before each run, the median of
about --rep ms). Printed: per layer the ms of each, TFLOP/s of tk and tk's
speed-up over cuDNN (cuDNN ms / tk ms, > 1 when tk is faster); then the
aggregates: the sum of the times over the distinct layers, and over the
network (each layer times the number of times ResNet-50 runs it), and their
ratio. Triton compiles the same tutorial source (its .py and .tk loaded with
the name `tk` bound to Triton's language, bench/same_source.py) and autotunes
over the same CONFIGS with its own autotuner; its output is checked and
timed beside tk's (--no-triton leaves it out). ResNet-50 follows these
convolutions with BatchNorm (folded into the filter and bias at inference)
and ReLU, except the last 1x1 of each block and the downsample, where the
residual comes before the ReLU; here every layer is timed as conv + bias +
relu.

    python3 bench/conv_bench.py [--batch 32] [--rep 40] [--compile] [--no-triton]
                                [--only NAME,...] [--check-only | --interpret]
                                [--out-dir DIR --commit SHA]

--check-only runs the correctness checks alone (no timing). --interpret
runs those checks without a GPU: on torch CPU tensors through tk's
interpreter (TK_INTERPRET=1), at --batch 1 by default, every layer's shape
checked against F.conv2d on the CPU (tests/python/test_conv_tutorial.py runs
a few layers that way). --out-dir
writes conv-<date>.json there (python3 bench/summarize.py-style: date,
commit, command, device, versions, each layer's figures, the aggregates).
"""
import argparse
import datetime
import importlib.util
import json
import os
import pathlib
import sys
import time

import tk

ROOT = pathlib.Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "tutorials" / "13-conv2d-bias-relu.py"

# (name, H (= W) of the input, C, K, kernel size, stride, times in ResNet-50).
# Padding is kernel // 2.
LAYERS = [
    ("conv1 7x7/2 3->64", 224, 3, 64, 7, 2, 1),
    ("conv2 1x1 64->64", 56, 64, 64, 1, 1, 1),
    ("conv2 3x3 64->64", 56, 64, 64, 3, 1, 3),
    ("conv2 1x1 64->256", 56, 64, 256, 1, 1, 4),       # 3 blocks + the downsample
    ("conv2 1x1 256->64", 56, 256, 64, 1, 1, 2),
    ("conv3 1x1 256->128", 56, 256, 128, 1, 1, 1),
    ("conv3 3x3/2 128->128", 56, 128, 128, 3, 2, 1),
    ("conv3 1x1/2 256->512 (down)", 56, 256, 512, 1, 2, 1),
    ("conv3 3x3 128->128", 28, 128, 128, 3, 1, 3),
    ("conv3 1x1 128->512", 28, 128, 512, 1, 1, 4),
    ("conv3 1x1 512->128", 28, 512, 128, 1, 1, 3),
    ("conv4 1x1 512->256", 28, 512, 256, 1, 1, 1),
    ("conv4 3x3/2 256->256", 28, 256, 256, 3, 2, 1),
    ("conv4 1x1/2 512->1024 (down)", 28, 512, 1024, 1, 2, 1),
    ("conv4 3x3 256->256", 14, 256, 256, 3, 1, 5),
    ("conv4 1x1 256->1024", 14, 256, 1024, 1, 1, 6),
    ("conv4 1x1 1024->256", 14, 1024, 256, 1, 1, 5),
    ("conv5 1x1 1024->512", 14, 1024, 512, 1, 1, 1),
    ("conv5 3x3/2 512->512", 14, 512, 512, 3, 2, 1),
    ("conv5 1x1/2 1024->2048 (down)", 14, 1024, 2048, 1, 2, 1),
    ("conv5 3x3 512->512", 7, 512, 512, 3, 1, 2),
    ("conv5 1x1 512->2048", 7, 512, 2048, 1, 1, 3),
    ("conv5 1x1 2048->512", 7, 2048, 512, 1, 1, 2),
]


def load_tutorial():
    spec = importlib.util.spec_from_file_location("tutorial_13_conv2d_bias_relu", TUTORIAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tutorial_on_triton():
    """The same tutorial source with its kernel compiled and autotuned by
    Triton, or None where Triton is not installed."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, str(ROOT / "bench"))
    import same_source

    return same_source.load(TUTORIAL, "triton", prefix="conv_bench")


def versions():
    import torch

    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version()}
    try:
        import triton

        out["triton"] = triton.__version__
    except ImportError:
        pass
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, help="default 32 (1 with --interpret)")
    parser.add_argument("--rep", type=int, default=40, help="ms of timed runs per provider")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile")
    parser.add_argument("--no-triton", action="store_true",
                        help="leave out Triton compiling the same source")
    parser.add_argument("--only", default="", help="comma-separated substrings of layer names")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--interpret", action="store_true",
                        help="check on the CPU interpreter (torch CPU tensors), no timing")
    parser.add_argument("--out-dir")
    parser.add_argument("--commit", default="")
    args = parser.parse_args(argv)
    if args.interpret:
        os.environ["TK_INTERPRET"] = "1"
        args.check_only = True
    elif not tk.testing.gpu_available():
        print("conv_bench: no GPU launch here (no CUDA device, or TK_INTERPRET=1): nothing to "
              "time (--interpret checks the layers on the CPU interpreter)")
        return 0
    if args.batch is None:
        args.batch = 1 if args.interpret else 32
    device = "cpu" if args.interpret else "cuda"
    import torch
    import torch.nn.functional as F

    tut = load_tutorial()
    tri = None if args.interpret or args.no_triton else load_tutorial_on_triton()
    torch.manual_seed(25)
    layers = [lay for lay in LAYERS
              if not args.only or any(s in lay[0] for s in args.only.split(","))]

    def cudnn(x_nchw, w_torch, bias, stride, pad):
        return F.relu(F.conv2d(x_nchw, w_torch, stride=stride, padding=pad)
                      + bias[None, :, None, None])

    compiled = None
    if args.compile and not args.check_only:
        compiled = torch.compile(cudnn, dynamic=False)
    device_name = "the CPU interpreter" if args.interpret else torch.cuda.get_device_name()
    print(f"{device_name}, batch {args.batch}, fp16, torch {torch.__version__}, cuDNN "
          f"{torch.backends.cudnn.version()}")
    head = f"{'layer':<31}{'M':>8}{'GFLOP':>7}  "
    if args.check_only:
        head += f"{'check':<32}"
    else:
        head += f"{'tk ms':>8}{'cuDNN ms':>9}" + (f"{'Triton':>8}" if tri else "")
        head += f"{'compile':>9}" if compiled else ""
        head += f"{'tk TF/s':>8}{'vs cuDNN':>9}" + (f"{'vs Trit':>8}" if tri else "")
        head += f"{'vs comp':>8}" if compiled else ""
    print(head + "  tk config")
    rows, failures = [], 0
    start = time.monotonic()
    for name, H, C, K, KS, stride, count in layers:
        pad = KS // 2
        x, w, bias, x_nchw, w_torch = tut.layer_tensors(args.batch, H, C, K, KS, device)
        P = tut.out_size(H, KS, stride, pad, 1)
        M = args.batch * P * P
        flops = 2.0 * M * K * C * KS * KS
        y = tut.conv2d_bias_relu(x, w, bias, stride, pad)
        want = tut.torch_reference(x, w, bias, stride, pad, 1)

        def check(out):  # (max |out - want|, within 1e-2 + 1e-2 |want| everywhere)
            diff = (out.float() - want).abs()
            return float(diff.max()), bool((diff <= 1e-2 + 1e-2 * want.abs()).all())

        err, ok = check(y)
        row = {"layer": name, "H": H, "C": C, "K": K, "kernel": KS, "stride": stride,
               "padding": pad, "count": count, "M": M, "gflop": flops / 1e9, "max_err": err,
               "ok": ok, "tk_config": str(tut.conv_tuned.best_config)}
        if tri:
            row["triton_max_err"], row["triton_ok"] = check(
                tri.conv2d_bias_relu(x, w, bias, stride, pad))
            row["triton_config"] = str(tri.conv_tuned.best_config)
            ok = ok and row["triton_ok"]
        failures += not ok
        if not args.check_only:
            def bench(fn):
                return tk.testing.do_bench(fn, warmup=10, rep=args.rep, return_mode="median")
            row["tk_ms"] = bench(lambda: tut.conv2d_bias_relu(x, w, bias, stride, pad))
            row["cudnn_ms"] = bench(lambda: cudnn(x_nchw, w_torch, bias, stride, pad))
            if tri:
                row["triton_ms"] = bench(lambda: tri.conv2d_bias_relu(x, w, bias, stride, pad))
            if compiled:
                row["compile_ms"] = bench(lambda: compiled(x_nchw, w_torch, bias, stride, pad))
            line = (f"{name:<31}{M:>8}{flops / 1e9:>7.2f}  {row['tk_ms']:>8.4f}"
                    f"{row['cudnn_ms']:>9.4f}")
            line += f"{row['triton_ms']:>8.4f}" if tri else ""
            line += f"{row['compile_ms']:>9.4f}" if compiled else ""
            line += f"{flops / row['tk_ms'] * 1e-9:>8.1f}{row['cudnn_ms'] / row['tk_ms']:>9.2f}"
            line += f"{row['triton_ms'] / row['tk_ms']:>8.2f}" if tri else ""
            line += f"{row['compile_ms'] / row['tk_ms']:>8.2f}" if compiled else ""
        else:
            line = f"{name:<31}{M:>8}{flops / 1e9:>7.2f}  max |tk - torch fp32| {err:.3g}"
            if tri:
                line += f", Triton {row['triton_max_err']:.3g}"
        print(line + f"  {'' if ok else 'MISMATCH '}{{{row['tk_config']}}}", flush=True)
        rows.append(row)
        del x, w, bias, x_nchw, w_torch, y, want
    result = {"date": datetime.date.today().isoformat(), "commit": args.commit,
              "command": "python3 bench/conv_bench.py " + " ".join(argv), "device": device_name,
              "versions": versions(), "batch": args.batch, "dtype": "float16",
              "layers": rows, "checks_passed": len(rows) - failures, "checks": len(rows),
              "seconds": round(time.monotonic() - start, 1)}
    if not args.check_only and rows:
        providers = (["tk", "cudnn"] + (["triton"] if tri else [])
                     + (["compile"] if compiled else []))
        agg = {}
        for what, weight in (("distinct", lambda r: 1), ("network", lambda r: r["count"])):
            sums = {p: sum(r[f"{p}_ms"] * weight(r) for r in rows) for p in providers}
            agg[what] = {f"{p}_ms": round(v, 4) for p, v in sums.items()}
            agg[what]["tk_vs_cudnn"] = round(sums["cudnn"] / sums["tk"], 3)
            if tri:
                agg[what]["tk_vs_triton"] = round(sums["triton"] / sums["tk"], 3)
            if compiled:
                agg[what]["tk_vs_compile"] = round(sums["compile"] / sums["tk"], 3)
            text = ", ".join(f"{p} {v:.3f} ms" for p, v in sums.items())
            print(f"sum over the {what} layers{' (x count)' if what == 'network' else ''}: "
                  f"{text}; tk vs cuDNN {sums['cudnn'] / sums['tk']:.3f}x"
                  + (f", vs Triton {sums['triton'] / sums['tk']:.3f}x" if tri else "")
                  + (f", vs torch.compile {sums['compile'] / sums['tk']:.3f}x" if compiled
                     else ""))
        result["aggregate"] = agg
        wins = sum(r["cudnn_ms"] >= r["tk_ms"] for r in rows)
        print(f"tk at least as fast as cuDNN on {wins} of {len(rows)} layers")
        if tri:
            wins = sum(r["triton_ms"] >= r["tk_ms"] for r in rows)
            print(f"tk at least as fast as Triton (same source, same configs) on {wins} of "
                  f"{len(rows)} layers")
    print(f"checks: {len(rows) - failures}/{len(rows)} layers match torch in float32"
          + (" (tk and Triton)" if tri else ""))
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        path = os.path.join(args.out_dir, f"conv-{result['date']}.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {path}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
