#!/usr/bin/env bash
# tk's main job, from a fresh Debian 12 machine: install what is missing,
# build (Release, Ninja, build/), then print a summary per kernel of every
# tutorial (`tkc --emit=summary`), compile each as far as the compiler goes
# (PTX checked by ptxas, or optimised IR where code generation stops), and
# run vector add and softmax on the CPU interpreter.
#
#   bash run.sh                  # the tutorials (the embedded default)
#   bash run.sh my.tk other.tk   # summaries of your own files instead
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/setup.sh

tk_install_deps
tk_build build Release

if [ $# -gt 0 ]; then
  inputs=("$@")
else
  inputs=(tutorials/*.tk)
fi

echo
echo "== build/bin/tkc --emit=summary ${inputs[*]}"
status=0
build/bin/tkc --emit=summary "${inputs[@]}" || status=$?
if [ $status -ne 0 ] || [ $# -gt 0 ]; then
  echo
  if [ $status -eq 0 ]; then
    echo "run.sh: ${#inputs[@]} file(s) compiled through the front end; summaries above"
  else
    echo "run.sh: tkc failed (exit $status) on ${#inputs[@]} file(s); diagnostics above"
  fi
  exit $status
fi

# The embedded default goes further: each tutorial as far down the pipeline
# as the compiler goes today (PTX assembled by ptxas when it is installed,
# else optimised IR), then two of them run on the CPU interpreter. The
# signatures and constexprs are those of tutorials/README.md.
declare -A signature=(
  [01-vector-add]="*fp32:16, *fp32:16, *fp32:16, i32:16"
  [02-fused-softmax]="*fp32:16, *fp32:16, i32:16, i32:16, i32, i32:16"
  [03-layer-norm]="*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32"
  [04-matmul]="*fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1"
)
declare -A constants=(
  [01-vector-add]="-D BLOCK_SIZE=1024"
  [02-fused-softmax]="-D BLOCK_SIZE=1024"
  [03-layer-norm]="-D BLOCK_SIZE=512"
  [04-matmul]="-D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=64 -D BLOCK_SIZE_K=32 -D GROUP_SIZE_M=8 -D ACTIVATION=leaky_relu"
)
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo
echo "== each tutorial as far as the compiler goes (tkc --emit=ptx, else --emit=ir-opt)"
for f in tutorials/*.tk; do
  name=$(basename "$f" .tk)
  # shellcheck disable=SC2086 # the -D list splits into words on purpose
  if build/bin/tkc "$f" --emit=ptx --signature "${signature[$name]:-}" ${constants[$name]:-} \
      -o "$tmp/$name.ptx" 2>"$tmp/$name.err"; then
    verdict="PTX, $(grep -c '' "$tmp/$name.ptx") lines"
    if [ -x "$ptxas" ]; then
      if "$ptxas" -arch=sm_90 "$tmp/$name.ptx" -o "$tmp/$name.cubin" 2>>"$tmp/$name.err"; then
        verdict+=", ptxas sm_90: ok"
      else
        verdict+=", ptxas sm_90: FAILED"
        status=1
      fi
    fi
  elif build/bin/tkc "$f" --emit=ir-opt --signature "${signature[$name]:-}" ${constants[$name]:-} \
      -o "$tmp/$name.tkir" 2>/dev/null; then
    verdict="optimised IR, $(grep -c '' "$tmp/$name.tkir") lines; code generation stops at: $(
      grep -m1 'error:' "$tmp/$name.err" | sed 's/.*error: //' || true)"
  else
    verdict="FAILED"
    cat "$tmp/$name.err"
    status=1
  fi
  printf '  %-18s %s\n' "$name" "$verdict"
done

echo
echo "== on the CPU interpreter (tkc run, random inputs)"
build/bin/tkc run tutorials/01-vector-add.tk --signature "*fp32, *fp32, *fp32, i32" \
  -D BLOCK_SIZE=1024 --grid 4 --size 4000 --arg n_elements=4000 --out output_ptr || status=1
build/bin/tkc run tutorials/02-fused-softmax.tk --signature "*fp32, *fp32, i32, i32, i32, i32" \
  -D BLOCK_SIZE=1024 --grid 8 --size 8000 --arg input_row_stride=1000 \
  --arg output_row_stride=1000 --arg n_rows=8 --arg n_cols=1000 --out output_ptr || status=1
echo
if [ $status -eq 0 ]; then
  echo "run.sh: the ${#inputs[@]} tutorials compiled as far as the compiler goes; two ran on the interpreter"
else
  echo "run.sh: a stage failed (diagnostics above)"
fi
exit $status
