#!/usr/bin/env bash
# The dense recordings the executor's open fits need, in one command (no Rust needed):
#   ci/gpu-fits.sh OUTDIR
# - OUTDIR/<op>.bin: the approximate functions' tables (ci/explore/tanh_table.c; u32 pairs
#   of input bits and result bits), tanh (fitted: ptx/src/math.rs, tanh_approx_f32) and
#   ex2, lg2, rsqrt, rcp, sqrt, sin, cos (not bit-exact yet), and tanh at 2,209 inputs of
#   full mantissas that the first tanh record could not settle;
# - OUTDIR/aniso_sweep.txt: tex2DGrad with maxAnisotropy 1 to 16 (ci/explore/aniso_sweep.cu),
#   for the anisotropic filtering the mock does not fit yet.
set -euo pipefail
out=${1:?usage: ci/gpu-fits.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/.."
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
inc=${CUDA_INCLUDE:-$(dirname "$nvcc")/../include}
gcc -O1 -I"$inc" ci/explore/tanh_table.c -o /tmp/mufu_table -lcuda -lm
for op in tanh ex2 lg2 rsqrt rcp sqrt sin cos; do
    MUFU_OP=$op /tmp/mufu_table "$out/$op.bin"
done
/tmp/mufu_table "$out/tanh_full_mantissa.bin" ci/explore/tanh_full_mantissa.txt
"$nvcc" -arch=sm_90 ci/explore/aniso_sweep.cu -o /tmp/aniso_sweep
/tmp/aniso_sweep > "$out/aniso_sweep.txt"
