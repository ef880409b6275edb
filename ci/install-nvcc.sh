#!/usr/bin/env bash
# Installs NVIDIA's nvcc 13.0 from the registry packages (no GPU needed) under
# target/cuda-toolkit, once, and prints the toolkit's root (bin/nvcc, include/, lib/).
# nvcc 13.0 writes PTX ISA 9.0, which the H200's driver 580.159.04 (CUDA 13.0) loads;
# later toolkits write versions it refuses. Linking with `-cudart shared` needs a
# libcudart.so beside libcudart.so.13, which the package does not ship: made here.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/target/cuda-toolkit"
root="$dest/nvidia/cu13"
if [ ! -x "$root/bin/nvcc" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
        'nvidia-cuda-nvcc==13.0.88' 'nvidia-cuda-crt==13.0.88' 'nvidia-nvvm==13.0.88' \
        'nvidia-cuda-runtime==13.0.96' >&2
fi
# CCCL (libcu++, CUB, Thrust): cooperative_groups.h includes <nv/target> and <cuda/std/...>.
# pip --target does not merge a package into a tree another install made, so it gets a
# tree of its own, linked into the toolkit's include/ where nvcc looks (include/ and
# include/cccl, nvcc.profile).
cccl="$PWD/target/cuda-cccl"
if [ ! -f "$cccl/nvidia/cu13/include/cccl/cuda/std/type_traits" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$cccl" \
        'nvidia-cuda-cccl==13.0.85' >&2
fi
ln -sfn "$cccl/nvidia/cu13/include/cccl" "$root/include/cccl"
ln -sfn "$cccl/nvidia/cu13/include/nv" "$root/include/nv"
# cuda_profiler_api.h (cudaProfilerStart/Stop) and cudaProfiler.h come in a package of
# their own; NVIDIA's samples (matrixMul, asyncAPI...) include it. Its own tree too.
prof="$PWD/target/cuda-profiler-api"
if [ ! -f "$prof/nvidia/cu13/include/cuda_profiler_api.h" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$prof" \
        'nvidia-cuda-profiler-api==13.0.85' >&2
fi
for h in cuda_profiler_api.h cudaProfiler.h; do
    ln -sf "$prof/nvidia/cu13/include/$h" "$root/include/$h"
done
ln -sf libcudart.so.13 "$root/lib/libcudart.so"
# nvcc.profile looks for libraries (and headers) where a toolkit keeps them,
# targets/x86_64-linux/{lib,include}; the packages keep them at the root: linked there,
# `nvcc` links `-lcudart` and `-lcudadevrt` with no -L, as a toolkit's nvcc does.
mkdir -p "$root/targets/x86_64-linux"
ln -sfn ../../lib "$root/targets/x86_64-linux/lib"
ln -sfn ../../include "$root/targets/x86_64-linux/include"
echo "$root"
