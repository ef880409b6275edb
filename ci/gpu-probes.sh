#!/usr/bin/env bash
# The probes (clients/probes/*.c) on the real driver: each compiled here against the
# toolkit's cuda.h and run, its transcript written to OUTDIR/<probe>.txt. No Rust needed.
#   ci/gpu-probes.sh OUTDIR
# Never runs multicast APIs: they can take a host's GPUs out of service.
set -uo pipefail
out=${1:?usage: ci/gpu-probes.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/.."
inc=${CUDA_INCLUDE:-$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../include}
status=0
for src in clients/probes/*.c; do
    name=$(basename "$src" .c)
    # PROBES="a b": only those (a recording of what changed).
    [ -n "${PROBES:-}" ] && [[ " $PROBES " != *" $name "* ]] && continue
    if ! gcc -std=gnu11 -O1 -I"$inc" "$src" -o "/tmp/probe-$name" -lcuda -ldl 2> "$out/$name.build.txt"; then
        echo "$name: does not compile" >&2; status=1; continue
    fi
    case $name in
        proc_address_table) args=(abi/gen/exports-580.159.04.txt) ;;
        kernels) args=(clients/probes/kernels) ;;
        *) args=() ;;
    esac
    # sandbox_images bisects the largest .local frame and may JIT a 4 GiB .global.
    limit=300; [ "$name" = sandbox_images ] && limit=900
    timeout "$limit" "/tmp/probe-$name" "${args[@]}" > "$out/$name.txt" 2> "$out/$name.stderr.txt" || { echo "$name: exit $?" >&2; status=1; }
done
exit $status
