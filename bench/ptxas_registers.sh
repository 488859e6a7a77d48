#!/usr/bin/env bash
# Registers per thread and spill-store bytes of every PTX file of a folder,
# as `ptxas -arch=sm_90 -v` reports them, into FOLDER/ptxas-registers.json
# (gpu_bench.py and exp_ln_sweep.py read it: the persistent grids are sized
# by it, and a file that spills gets none). Nothing is written when ptxas
# is not found.
#
#   bash bench/ptxas_registers.sh FOLDER
#   -> {"layernorm_fused_1024_w2.ptx": {"registers": 40, "spill_store_bytes": null}, ...}
#
# spill_store_bytes is null when ptxas reports no spill line.
set -euo pipefail
out="$1"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$ptxas" ] || exit 0
{
  echo "{"
  first=1
  for f in "$out"/*.ptx; do
    info=$("$ptxas" -arch=sm_90 -v "$f" -o /dev/null 2>&1)
    regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$info" | head -1)
    spill=$(sed -n 's/.*, \([0-9]*\) bytes spill stores.*/\1/p' <<<"$info" | head -1)
    ((first)) || echo ","
    first=0
    printf '  "%s": {"registers": %s, "spill_store_bytes": %s}' "$(basename "$f")" \
      "${regs:-null}" "${spill:-null}"
  done
  printf '\n}\n'
} >"$out/ptxas-registers.json"
