#!/usr/bin/env bash
# The approximate functions' dense tables on a GPU (ci/explore/tanh_table.c), one file an
# op, and tanh at the full-mantissa inputs the first recording could not settle:
#   ci/gpu-mufu.sh OUTDIR      -> OUTDIR/<op>.bin (u32 pairs: input bits, result bits)
# No Rust needed. Then fit each op as tanh was (ptx/src/math.rs, tanh_approx_f32).
set -euo pipefail
out=${1:?usage: ci/gpu-mufu.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/.."
inc=${CUDA_INCLUDE:-$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../include}
gcc -O1 -I"$inc" ci/explore/tanh_table.c -o /tmp/mufu_table -lcuda -lm
for op in tanh ex2 lg2 rsqrt rcp sqrt sin cos; do
    MUFU_OP=$op /tmp/mufu_table "$out/$op.bin"
done
/tmp/mufu_table "$out/tanh_full_mantissa.bin" ci/explore/tanh_full_mantissa.txt
