"""tutorials/12-llama-block.py's GPU path (the autotuned matmuls and their
pruning by M, split-K for the decode step, the grids, every launch's
arguments and specialisation) against the stand-in CUDA driver
(fake_cuda.c): CPU torch tensors stand in for cuda:0's
(tk._C._set_stand_in_torch), every kernel compiles for the GPU and launches
on the stand-in, which computes nothing. One tile per list keeps the compile
count small. Run by test_llama_block.py in its own process:

    python3 llama_block_fake_checks.py /path/to/fake/libcuda.so.1

Prints "ok NAME" per launch sequence; the first failure raises.
"""

import importlib.util
import os
import pathlib
import sys

from stand_in_driver import load

fake = load(sys.argv[1])
os.environ.pop("TK_INTERPRET", None)

try:
    import torch
except ImportError as e:
    print("SKIP torch does not import:", e)
    sys.exit(0)

import tk  # noqa: E402

tk._C._set_stand_in_torch(True)
PATH = pathlib.Path(__file__).parents[2] / "tutorials" / "12-llama-block.py"
spec = importlib.util.spec_from_file_location("llama_block", PATH)
lb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lb)

# The GPU path for these CPU tensors, on a 132-SM device, one tile per list.
lb._on_gpu = lambda a: True
lb._sm_count = lambda a: 132
prefill, swiglu, decode, partial = (lb.PREFILL_TILES[:1], lb.SWIGLU_TILES[:1],
                                    lb.DECODE_TILES[:1], lb.PARTIAL_TILES[:1])
lb.matmul_tuned = tk.autotune(prefill + decode, key=["M", "N", "K"],
                              prune_configs_by=lb._by_m(prefill, decode))(lb.kernels.matmul)
lb.swiglu_tuned = tk.autotune(swiglu + decode, key=["M", "N", "K"],
                              prune_configs_by=lb._by_m(swiglu, decode))(lb.kernels.matmul_swiglu)
lb.partial_tuned = tk.autotune(partial, key=["M", "N", "K", "k_chunk"])(lb.kernels.matmul_partial)

cfg = lb.Config(hidden=256, heads=2, intermediate=688, max_len=160)  # head dim 128
w = lb.random_weights(cfg, "float16", "cpu")
# (batch, seq, start_pos): prefill with a ragged M, M in 17..64 on the
# decode tiles, and decode steps (split-K) at M = 1 and 3.
for batch, seq, start in ((1, 150, 0), (2, 20, 0), (1, 1, 150), (3, 1, 20)):
    x = torch.randn(batch, seq, cfg.hidden, dtype=torch.float16)
    cache = lb.empty_cache(x, cfg, batch)
    out = lb.block(x, w, cache, start)
    assert tuple(out.shape) == (batch, seq, cfg.hidden), out.shape
    print(f"ok block {batch}x{seq} at {start}", flush=True)
print("llama block fake checks passed")
