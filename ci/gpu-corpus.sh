#!/usr/bin/env bash
# Records the PTX instruction corpus (ptx/corpus/) on a real GPU: compiles every corpus
# file to PTX with the machine's nvcc (13.0 on the H200 runner), runs each kernel through
# the driver API (ptx/corpus/runner.c, built with gcc against libcuda.so.1) on inputs it
# generates, and writes per kernel NAME.in.hex / NAME.out.hex (or NAME.error) into OUTDIR,
# with the PTX it ran (OUTDIR/ptx/) and the machine it ran on (OUTDIR/environment.txt).
# Needs only nvcc, gcc and the NVIDIA driver: no Rust, no network.
#   ci/gpu-corpus.sh OUTDIR        then commit OUTDIR as ptx/corpus/expected/
set -euo pipefail
out=${1:?usage: ci/gpu-corpus.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
corpus="$here/ptx/corpus"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
mkdir -p "$out/ptx"
out=$(cd "$out" && pwd)
for cu in "$corpus"/*.cu; do
    name=$(basename "$cu" .cu)
    # A file's first line may name its architecture (`// corpus-arch: compute_90a`, for
    # wgmma), as ptx/tests/corpus.rs reads it.
    arch=$(sed -n '1s|^// corpus-arch: *\([a-z0-9_]*\).*|\1|p' "$cu")
    "$nvcc" -ptx -arch="${arch:-compute_90}" -O3 "$cu" -o "$out/ptx/$name.ptx"
done
# libcuda: the driver's own library (no -dev link is needed).
libcuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / { print $NF; exit }')
libcuda=${libcuda:-/usr/lib/x86_64-linux-gnu/libcuda.so.1}
gcc -O2 -Wall -I"$cuda_home/include" "$corpus/runner.c" "$libcuda" -o "$out/runner"
cp "$corpus/manifest.txt" "$out/manifest.txt"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    "$nvcc" --version | tail -2
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null || true
} > "$out/environment.txt"
status=0
"$out/runner" "$corpus/manifest.txt" "$out/ptx" "$out" || status=$?
rm -f "$out/runner"
echo "results in $out (commit them as ptx/corpus/expected/)"
exit $status
