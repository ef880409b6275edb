#!/usr/bin/env bash
# PyTorch's caching allocator (clients/runtime/torch_alloc.py) on the GPU runner, in both
# allocator modes, once on the real stack (NVIDIA's runtime and driver) and once with
# cumock's runtime and the mock driver in their place, with no GPU involved.
#
#   cargo build --release -p cumock-cudart -p cumock-driver   # carry target/release/{libcudart,libcuda}.so
#   ci/gpu-torch.sh OUTDIR
#
# PyTorch's libraries ask for libcudart.so.13 (DT_NEEDED) and find NVIDIA's through their
# run path (the nvidia-cuda-runtime package) or torch's own preloading: LD_PRELOAD makes
# cumock's the libcudart.so.13 already loaded, which the loader then uses for every
# library asking for that SONAME. The mock is preloaded too (PyTorch and the runtime both
# dlopen libcuda.so.1, which then resolves to it) and is first in LD_LIBRARY_PATH.
# Outputs: OUTDIR/torch-{real,cumock}-{default,expandable}.txt (stdout and stderr) and
# summary.txt. Never calls multicast APIs.
set -uo pipefail
out=${1:?usage: ci/gpu-torch.sh OUTDIR}
cd "$(dirname "$0")/.."
bin=${CUMOCK_BIN:-target/release}
mkdir -p "$out/lib"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cp -f "$bin/libcudart.so" "$out/lib/libcudart.so.13"
cp -f "$bin/libcuda.so" "$out/lib/libcuda.so.1"
lib=$(cd "$out/lib" && pwd)
python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' > "$out/torch-version.txt" 2>&1
: > "$out/summary.txt"
for mode in default expandable; do
    if [ $mode = expandable ]; then conf=expandable_segments:True; else conf=""; fi
    for side in real cumock; do
        if [ $side = cumock ]; then
            env=(env LD_PRELOAD="$lib/libcudart.so.13:$lib/libcuda.so.1" LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTORCH_NVML_BASED_CUDA_CHECK=0)
        else
            env=(env)
        fi
        timeout 600 "${env[@]}" PYTORCH_CUDA_ALLOC_CONF="$conf" python3 clients/runtime/torch_alloc.py > "$out/torch-$side-$mode.txt" 2>&1
        echo "torch_alloc.py ($mode) on the $side stack: exit $?" >> "$out/summary.txt"
    done
done
for side in real cumock; do
    if [ $side = cumock ]; then
        env=(env LD_PRELOAD="$lib/libcudart.so.13:$lib/libcuda.so.1" LD_LIBRARY_PATH="$lib")
    else
        env=(env)
    fi
    "${env[@]}" python3 -c 'import torch; torch.cuda.is_available(); print("".join(l for l in open("/proc/self/maps") if "libcudart" in l or "libcuda.so" in l))' > "$out/loaded-$side.txt" 2>&1
done
cat "$out/summary.txt"
