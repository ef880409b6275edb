#!/usr/bin/env bash
# What the GPU machine has that the runtime work needs to know: PyTorch's CUDA libraries,
# which runtime symbols (and symbol versions) they import, NVIDIA's libcudart exports.
#   ci/gpu-explore.sh OUTDIR
set -uo pipefail
out=${1:?usage: ci/gpu-explore.sh OUTDIR}
mkdir -p "$out"
{
nvidia-smi -L; cat /proc/driver/nvidia/version; command -v nvcc; nvcc --version | tail -2
python3 -c 'import torch, sys; print("torch", torch.__version__, torch.version.cuda, torch.__file__)'
python3 -m pip list 2>/dev/null | grep -i -E 'torch|nvidia|cuda|cupy|numpy|triton|pytest'
} > "$out/machine.txt" 2>&1
tdir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)
{
for lib in "$tdir"/lib/libtorch_cuda.so "$tdir"/lib/libc10_cuda.so; do
    echo "== $lib"; ldd "$lib"
    echo "-- runtime symbols imported"; nm -D --undefined-only "$lib" | grep -E ' (cuda|__cuda)' | awk '{print $2}' | sort -u
    echo "-- driver symbols imported"; nm -D --undefined-only "$lib" | grep -E ' cu[A-Z]' | awk '{print $2}' | sort -u
done
cudart=$(ldd "$tdir/lib/libc10_cuda.so" | awk '/libcudart/ {print $3}')
echo "== cudart $cudart"; objdump -T "$cudart" | head -20
for lib in $(ls "$tdir"/../nvidia/*/lib/*.so* 2>/dev/null); do echo "== $lib"; nm -D --undefined-only "$lib" 2>/dev/null | grep -E ' (cuda[A-Z]|cu[A-Z])' | awk '{print $2}' | sort -u | head -400; done
} > "$out/torch-linkage.txt" 2>&1
