#!/usr/bin/env bash
# The checks of the driver's answers that are not probes or programs: cumock's JIT-linking
# programs (mock-driver/tests/jit/: cuLink* over relocatable PTX, the JIT log buffers) on
# the real driver, their output in OUTDIR/jit/. No Rust needed: nvcc, gcc and the driver.
#   ci/gpu-checks.sh OUTDIR
# Never calls multicast APIs.
set -uo pipefail
out=${1:?usage: ci/gpu-checks.sh OUTDIR}
cd "$(dirname "$0")/.."
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
inc=$(cd "$(dirname "$nvcc")/../include" && pwd)
mkdir -p "$out/jit"
b=$(mktemp -d)
status=0
"$nvcc" -ptx -rdc=true -arch=compute_90 mock-driver/tests/jit/link_a.cu -o "$b/A.ptx" &&
    "$nvcc" -ptx -rdc=true -arch=compute_90 mock-driver/tests/jit/link_b.cu -o "$b/B.ptx" &&
    "$nvcc" -fatbin -rdc=true -gencode arch=compute_90,code=compute_90 mock-driver/tests/jit/link_b.cu -o "$b/B.fatbin" ||
    { echo "nvcc failed" >&2; status=1; }
for p in link logs; do
    gcc -std=gnu11 -O1 -I"$inc" "mock-driver/tests/jit/$p.c" -o "$b/$p" -lcuda || { status=1; continue; }
done
timeout 120 "$b/link" "$b/A.ptx" "$b/B.ptx" "$b/B.fatbin" > "$out/jit/link.txt" 2>&1; echo "link: exit $?" >> "$out/jit/summary.txt"
timeout 120 "$b/logs" > "$out/jit/logs.txt" 2>&1; echo "logs: exit $?" >> "$out/jit/summary.txt"
exit $status
