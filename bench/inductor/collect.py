"""torch.compile one model (or several) and keep every Triton kernel Inductor
writes; optionally time the cold start and the step with Triton or with tk.

    python3 bench/inductor/collect.py --models resnet50,llama --modes infer,train \
        --corpus DIR [--compiler triton|tk] [--json OUT.json] [--save-output OUT.pt]

On a GPU (--device cuda, the default) the model runs: the first call's time
(compile included) is the cold start when the caches are empty (run.py gives
each run fresh ones), then the median step time over --steps calls. Each
kernel is written to DIR/<kernel name>_<hash>.py as Inductor wrote it with
`benchmark_kernel` on (so it holds `get_args()` for measure.py), and
DIR/manifest.jsonl gets a line per kernel: file, model, mode, heuristic.

--device cpu generates the kernels with Inductor's Triton CPU back end (the
same templates; no Triton driver is needed): a corpus to compile on a machine
without a GPU, without `get_args()` (that back end's benchmark harness does
not load). With --compiler triton they are not run (only --modes infer then);
with --compiler tk they run on tk's interpreter, small models, and the
output is compared with eager's (max_abs_err).
"""

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_KERNELS = {}  # source -> kernel name, of the model being compiled
_HEURISTIC = re.compile(r"@triton_heuristics\.(\w+)\(")


class _NotRun:
    """What a kernel is in a --device cpu run: generated, never launched."""

    def __getattr__(self, name):
        raise RuntimeError("--device cpu generates kernels without running them")


def _recorder(kernels, generate_only):
    """Wraps AsyncCompile.triton to keep each kernel's source."""
    from torch._inductor import async_compile

    original = async_compile.AsyncCompile.triton

    def triton(self, kernel_name, source_code, device_str="cuda"):
        kernels.setdefault(source_code, kernel_name)
        if generate_only:
            return _NotRun()
        return original(self, kernel_name, source_code, device_str)

    async_compile.AsyncCompile.triton = triton


def _cpu_codegen_only():
    """Lets Inductor write Triton kernels for CPU tensors without a Triton
    driver: the back end's hash is only a cache key here."""
    import torch._inductor.config as config
    import torch.utils._triton as torch_triton

    torch_triton.triton_hash_with_backend = lambda: "codegen-only"
    torch_triton.triton_backend = lambda: None
    config.cpu_backend = "triton"


def _write_corpus(directory, kernels, model, mode):
    os.makedirs(directory, exist_ok=True)
    lines = []
    for source, name in kernels.items():
        digest = hashlib.sha256(source.encode()).hexdigest()[:10]
        file_name = f"{name}_{digest}.py"
        path = os.path.join(directory, file_name)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(source)
        m = _HEURISTIC.search(source)
        lines.append({"file": file_name, "kernel": name, "model": model, "mode": mode,
                      "heuristic": m.group(1) if m else "unknown"})
    with open(os.path.join(directory, "manifest.jsonl"), "a") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def _step(model, inputs, mode, device):
    import torch

    from models import output_tensor

    if mode == "infer":
        with torch.no_grad():
            return output_tensor(model(*inputs))
    autocast = torch.autocast(device, dtype=torch.bfloat16) if device == "cuda" else None
    if autocast is not None:
        with autocast:
            out = output_tensor(model(*inputs))
    else:
        out = output_tensor(model(*inputs))
    out.float().square().mean().backward()
    return out


def run_one(name, mode, args):
    import torch

    import models

    kernels = _KERNELS
    kernels.clear()
    # On the CPU the kernels run only on tk's interpreter (--compiler tk);
    # with Triton they are generated and not run.
    generate_only = args.device == "cpu" and args.compiler != "tk"
    # On the CPU the output is compared with eager's: no dropout.
    cpu = args.device == "cpu"
    model, inputs = models.build(name, args.device, small=cpu, dropout=not cpu)
    model.train(mode == "train")
    compiled = torch.compile(model)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    result = {"model": name, "mode": mode, "compiler": args.compiler, "device": args.device}
    start = time.perf_counter()
    try:
        out = _step(compiled, inputs, mode, args.device)
        sync()
    except RuntimeError as e:
        if not generate_only:
            raise
        out = None
        result["note"] = str(e).splitlines()[0][:200]
    result["first_call_s"] = round(time.perf_counter() - start, 3)
    result["kernels"] = len(kernels)
    if args.device == "cpu" and not generate_only:
        with torch.no_grad():
            ref = models.output_tensor(model(*inputs)).float()
        result["max_abs_err"] = (out.detach().float() - ref).abs().max().item()
    if not generate_only and args.device == "cuda":
        times = []
        for _ in range(args.steps):
            if mode == "train":
                model.zero_grad(set_to_none=True)
            sync()
            t0 = time.perf_counter()
            _step(compiled, inputs, mode, args.device)
            sync()
            times.append(time.perf_counter() - t0)
        result["step_ms"] = round(statistics.median(times) * 1e3, 4)
        if args.save_output:
            torch.save(out.detach().float().cpu(), f"{args.save_output}.{name}.{mode}.pt")
    from torch._dynamo.utils import compilation_time_metrics

    # Inductor's own timers (seconds, summed): compile_fx_inner,
    # async_compile.precompile / .wait (the kernel compiles), ...
    result["metrics"] = {k: round(sum(v), 3) for k, v in compilation_time_metrics.items()}
    compilation_time_metrics.clear()
    if args.compiler == "tk":
        import tk.inductor

        result["tk_configs"] = tk.inductor.compiled_configs()
        result["fallbacks"] = [list(f) for f in tk.inductor.fallbacks()]
    if args.corpus:
        _write_corpus(args.corpus, kernels, name, mode)
    torch._dynamo.reset()
    return result


def main():
    import models

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(models.ALL))
    parser.add_argument("--modes", default="infer,train")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--compiler", default="triton", choices=("triton", "tk"))
    parser.add_argument("--corpus", help="folder for the kernels (and manifest.jsonl)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--json", help="append one JSON line per model and mode here")
    parser.add_argument("--save-output", help="prefix of .pt files with each model's output")
    args = parser.parse_args()

    import torch._inductor.config as config

    if args.device == "cpu":
        _cpu_codegen_only()  # the CPU path's benchmark harness does not load
    else:
        config.benchmark_kernel = True
    if args.compiler == "tk":
        import tk.inductor

        tk.inductor.enable()
    _recorder(_KERNELS, args.device == "cpu" and args.compiler != "tk")
    for name in args.models.split(","):
        for mode in args.modes.split(","):
            result = run_one(name, mode, args)
            print(json.dumps(result), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
