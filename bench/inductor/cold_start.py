"""Cold and warm torch.compile starts with Triton and with tk, each in a fresh
process (collect.py), one line of JSON per run.

    python3 bench/inductor/cold_start.py --out RUNS.jsonl [--models a,b] [--modes infer]
        [--compilers triton,tk] [--warm tk] [--budget-s 400] [--corpus DIR]

A cold run gets empty Inductor, Triton and tk caches of its own; a warm run
(--warm: the compilers to repeat) runs again on the caches its cold run left.
Runs stop being started once --budget-s has passed. With --corpus, the tk
runs (or the first compiler's) also write the kernels there.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def one(model, mode, compiler, caches, args, corpus=None):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
               TRITON_CACHE_DIR=os.path.join(caches, "triton"),
               TK_CACHE_DIR=os.path.join(caches, "tk"), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, os.path.join(HERE, "collect.py"), "--models", model, "--modes", mode,
           "--compiler", compiler, "--steps", str(args.steps)]
    if corpus:
        cmd += ["--corpus", corpus]
    if args.save_output:
        cmd += ["--save-output", f"{args.save_output}.{compiler}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.run_timeout)
    wall = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        # The exception's own line, not dynamo's advice after it.
        tail = [line for line in proc.stderr.strip().splitlines()
                if line.strip() and "TORCHDYNAMO_VERBOSE" not in line and "TORCH_LOGS" not in line]
        return {"model": model, "mode": mode, "compiler": compiler,
                "error": "\n".join(tail[-25:])[-3000:], "process_s": round(wall, 2)}
    result = json.loads(lines[-1])
    result["process_s"] = round(wall, 2)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet50,mobilenet_v3_small,vit_b_16,convnext_tiny,"
                                            "llama,bert,gpt2,t5")
    parser.add_argument("--modes", default="infer,train")
    parser.add_argument("--compilers", default="tk,triton")
    parser.add_argument("--warm", default="tk")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--budget-s", type=float, default=400)
    parser.add_argument("--run-timeout", type=float, default=300)
    parser.add_argument("--corpus")
    parser.add_argument("--save-output", help="prefix of each run's output tensors (.pt)")
    args = parser.parse_args()
    start = time.perf_counter()
    root = tempfile.mkdtemp(prefix="tk-cold-")
    compilers = args.compilers.split(",")
    for model in args.models.split(","):
        for mode in args.modes.split(","):
            for compiler in compilers:
                if time.perf_counter() - start > args.budget_s:
                    print(f"budget of {args.budget_s:.0f} s spent; stopping", flush=True)
                    return
                caches = os.path.join(root, f"{model}-{mode}-{compiler}")
                corpus = args.corpus if compiler == compilers[0] else None
                runs = [("cold", corpus)] + ([("warm", None)] if compiler in args.warm else [])
                for start_kind, corpus_dir in runs:
                    try:
                        result = one(model, mode, compiler, caches, args, corpus_dir)
                    except subprocess.TimeoutExpired:
                        result = {"model": model, "mode": mode, "compiler": compiler,
                                  "error": f"timed out after {args.run_timeout:.0f} s"}
                    result["start"] = start_kind
                    print(json.dumps({k: v for k, v in result.items() if k != "metrics"}),
                          flush=True)
                    with open(args.out, "a") as f:
                        f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
