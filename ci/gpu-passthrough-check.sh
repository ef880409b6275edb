#!/usr/bin/env bash
# On the GPU runner: the pass-through driver forwards every declared export with a typed
# call generated from NVIDIA's headers (abi/src/api.rs); this checks it on the real
# driver. Each probe (clients/probes/*.c, linked with -lcuda, so every call goes through
# the pass-through's forwarders, cuLaunchKernel's eleven arguments included) runs twice,
# on NVIDIA's libcuda.so.1 directly and through the pass-through, and the two outputs
# must be the same. Needs no Rust: carry target/release/{cumock,libcuda.so,libcudatrace.so}.
#
#   ci/gpu-passthrough-check.sh OUTDIR
#
# CUMOCK_REAL_DRIVER names the driver to forward to (default: ldconfig's libcuda.so.1);
# with the mock there, and LIBRARY_PATH/LD_LIBRARY_PATH at `cumock lib-path`, it runs
# anywhere (done so on a CPU machine: four probes, outputs the same).
#
# OUTDIR gets direct/<probe>.txt, traced/<probe>.txt, <probe>.jsonl (the trace),
# <probe>.diff (empty when the outputs agree) and summary.txt.
# Never runs multicast APIs: they can take a host's GPUs out of service.
set -uo pipefail
out=${1:?usage: ci/gpu-passthrough-check.sh OUTDIR}
bin=${CUMOCK_BIN:-target/release}
mkdir -p "$out/direct" "$out/traced"
out=$(cd "$out" && pwd)
bin=$(cd "$bin" && pwd)
cd "$(dirname "$0")/.."
inc=${CUDA_INCLUDE:-$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../include}
real=${CUMOCK_REAL_DRIVER:-$(ldconfig -p 2>/dev/null | awk '/libcuda.so.1 / && /x86-64|AArch64/ {print $NF; exit}')}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
status=0
: > "$out/summary.txt"
for src in clients/probes/*.c; do
    name=$(basename "$src" .c)
    if ! gcc -std=gnu11 -O1 -I"$inc" "$src" -o "/tmp/passthrough-probe-$name" -lcuda -ldl 2> "$out/$name.build.txt"; then
        echo "$name: does not compile" >> "$out/summary.txt"; status=1; continue
    fi
    case $name in
        proc_address_table) args=(abi/gen/exports-580.159.04.txt) ;;
        kernels) args=(clients/probes/kernels) ;;
        *) args=() ;;
    esac
    timeout 300 "/tmp/passthrough-probe-$name" "${args[@]}" > "$out/direct/$name.txt" 2> "$out/direct/$name.stderr.txt"
    direct=$?
    rm -f "$out/$name.jsonl"
    timeout 300 "$bin/cumock" trace --out "$out/$name.jsonl" ${real:+--driver "$real"} -- \
        "/tmp/passthrough-probe-$name" "${args[@]}" > "$out/traced/$name.txt" 2> "$out/traced/$name.stderr.txt"
    traced=$?
    diff -u "$out/direct/$name.txt" "$out/traced/$name.txt" > "$out/$name.diff"
    same=$?
    lines=$(wc -l < "$out/$name.jsonl" 2>/dev/null || echo 0)
    echo "$name: exit $direct direct, $traced traced; outputs $([ $same = 0 ] && echo same || echo DIFFER); $lines trace lines" >> "$out/summary.txt"
    if [ "$direct" != "$traced" ] || [ "$same" != 0 ]; then status=1; fi
done
cat "$out/summary.txt"
exit $status
