#!/usr/bin/env bash
# Random sequences of graph and stream-capture calls (ci/explore/random_graphs.c), one
# transcript per seed, for comparing the mock with a real driver call by call.
#   ci/gpu-random-graphs.sh OUTDIR       # on the GPU runner: the system's libcuda.so.1
#   MOCK=1 ci/gpu-random-graphs.sh OUTDIR   # on the mock (CUMOCK_BIN, target/debug by default)
#   ci/diff-random-graphs.sh MOCKDIR DRIVERDIR
# SEEDS (default 1-40), STEPS (default 300). Writes OUTDIR/<seed>.txt (stdout: one line
# a call), OUTDIR/<seed>.err (stderr) and OUTDIR/status.txt (each seed's exit status:
# a crash of the driver on a stale handle shows there). Never runs multicast APIs.
set -uo pipefail
out=${1:?usage: ci/gpu-random-graphs.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
inc=${CUDA_INCLUDE:-target/cuda-headers/nvidia/cu13/include}
[ -f "$inc/cuda.h" ] || inc=/usr/local/cuda/include
exe=$out/random_graphs
libdir=$(mktemp -d)
trap 'rm -rf "$libdir"' EXIT
if [ -n "${MOCK:-}" ]; then
    bin=${CUMOCK_BIN:-target/debug}
    ln -sf "$PWD/$bin/libcuda.so" "$libdir/libcuda.so"
    ln -sf "$PWD/$bin/libcuda.so" "$libdir/libcuda.so.1"
else
    # Link against the installed driver; a machine without the libcuda.so development
    # link gets one to its libcuda.so.1.
    real=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
    [ -n "$real" ] && ln -sf "$real" "$libdir/libcuda.so"
fi
gcc -O1 -Wall -I"$inc" ci/explore/random_graphs.c -L"$libdir" -lcuda -ldl -o "$exe" || exit 1
: > "$out/status.txt"
for seed in ${SEEDS:-$(seq 1 40)}; do
    if [ -n "${MOCK:-}" ]; then
        LD_LIBRARY_PATH=$libdir timeout 120 "$exe" "$seed" "${STEPS:-300}" > "$out/$seed.txt" 2> "$out/$seed.err"
    else
        timeout 120 "$exe" "$seed" "${STEPS:-300}" > "$out/$seed.txt" 2> "$out/$seed.err"
    fi
    echo "$seed exit=$?" >> "$out/status.txt"
done
nvidia-smi -L > "$out/machine.txt" 2>&1 || true
cat /proc/driver/nvidia/version >> "$out/machine.txt" 2>/dev/null || true
grep -c . "$out/status.txt" | sed 's/^/seeds: /'
grep -v 'exit=0' "$out/status.txt" || true
