#!/usr/bin/env bash
# One call on the GPU machine (bench/inductor/README.md): the GPU tests of
# tk.inductor, then cold and warm torch.compile starts with tk and with
# Triton in fresh processes (cold_start.py, which also writes the corpus of
# kernels Inductor generated), then tk against Triton kernel by kernel on that
# corpus (measure.py --run) for whatever time is left. Everything lands in
# $OUT/inductor.tgz (the tool returns few files).
#
#   bash bench/inductor/run_gpu.sh [COLD_BUDGET_S] [MEASURE_BUDGET_S] [MODELS] [MODES]
#
# Needs the bundle (bench/gpu_bundle.sh --only python) unpacked at gpu-bundle/x.
set -u
cold_budget=${1:-300}
measure_budget=${2:-120}
models=${3:-resnet50,llama,bert,vit_b_16,gpt2,t5,mobilenet_v3_small,convnext_tiny}
modes=${4:-infer,train}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=${OUT:-/tmp}/inductor
mkdir -p "$work"
export PYTHONUNBUFFERED=1
{
  date -u +%FT%TZ
  cat gpu-bundle/x/COMMIT 2>/dev/null || git rev-parse HEAD
  nvidia-smi --query-gpu=name --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  python3 -c "import torchvision; print('torchvision', torchvision.__version__)" 2>&1 | tail -1
  python3 -c "import transformers; print('transformers', transformers.__version__)" 2>&1 | tail -1
} > "$work/env.txt" 2>&1
timeout 150 python3 -m pytest -q tests/python/test_inductor.py tests/python/test_triton_objects.py \
  tests/python/test_reflect_ftz.py tests/python/test_inductor_style.py \
  -rfEs -p no:cacheprovider > "$work/pytest.log" 2>&1
echo "pytest exit $?" >> "$work/pytest.log"
timeout $((cold_budget + 80)) python3 "$here/cold_start.py" --out "$work/cold.jsonl" \
  --models "$models" --modes "$modes" --budget-s "$cold_budget" --corpus "$work/corpus" \
  --save-output "$work/out" > "$work/cold.log" 2>&1
if [ -f "$work/corpus/manifest.jsonl" ]; then
  timeout "$measure_budget" python3 "$here/measure.py" "$work/corpus" --run \
    --json "$work/measure.jsonl" > "$work/measure.log" 2>&1
  echo "measure exit $?" >> "$work/measure.log"
fi
tar -czf "${OUT:-/tmp}/inductor.tgz" -C "$work" .
tail -5 "$work/pytest.log" "$work/cold.log" "$work/measure.log" 2>/dev/null
