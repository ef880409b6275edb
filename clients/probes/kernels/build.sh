#!/usr/bin/env bash
# Builds the probe kernels with nvcc 13.0 (PTX ISA 9.0, which driver 580 loads): PTX,
# a fatbin with SASS for sm_90 and PTX, a SASS-only fatbin for sm_80 and a cubin.
# The outputs are committed beside the source; rerun after changing it:
#   clients/probes/kernels/build.sh "$(ci/install-nvcc.sh)/bin/nvcc"
set -euo pipefail
nvcc=${1:-nvcc}
cd "$(dirname "$0")"
"$nvcc" -ptx -O3 -arch=compute_90 probe_kernels.cu -o probe_kernels.ptx
"$nvcc" -fatbin -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 probe_kernels.cu -o probe_kernels.fatbin
"$nvcc" -fatbin -O3 -gencode arch=compute_80,code=sm_80 probe_kernels.cu -o probe_kernels_sm80_sass.fatbin
"$nvcc" -cubin -O3 -arch=sm_90 probe_kernels.cu -o probe_kernels_sm90.cubin
