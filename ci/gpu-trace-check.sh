#!/usr/bin/env bash
# On the GPU runner: records the Python allocator clients through the pass-through driver
# over the real libcuda.so.1, keeps the traces (the typed, readable event form of
# trace-event/), turns them into cases, records those on the real driver and runs them on
# the mock. Needs no Rust: carry target/release/{cumock,libcuda.so,libcudatrace.so}.
#
#   ci/gpu-trace-check.sh OUTDIR
#
# OUTDIR gets <prog>.jsonl (the trace), trace-<prog>.case, goldens/, mock.txt, and
# summary.txt (how many lines each trace has, and any line trace2case refused).
set -uo pipefail
out=${1:?usage: ci/gpu-trace-check.sh OUTDIR}
bin=${CUMOCK_BIN:-target/release}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
status=0
real=$(ldconfig -p 2>/dev/null | awk '/libcuda.so.1 / && /x86-64/ {print $NF; exit}')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
: > "$out/summary.txt"
for prog in torch_expandable core_vmr; do
    rm -f "$out/$prog.jsonl"
    "$bin/cumock" trace --out "$out/$prog.jsonl" ${real:+--driver "$real"} -- python3 "clients/python/$prog.py" > "$out/$prog.log" 2>&1 || status=1
    echo "$prog: $(wc -l < "$out/$prog.jsonl") trace lines" >> "$out/summary.txt"
    "$bin/cumock" trace2case "$out/$prog.jsonl" --title "$prog, recorded on $gpu" --out "$out/trace-$prog.case" >> "$out/summary.txt" 2>&1 || status=1
done
"$bin/cumock" record --out "$out/goldens" "$out"/trace-*.case >> "$out/summary.txt" 2>&1 || status=1
"$bin/cumock" run --no-golden "$out"/trace-*.case > "$out/mock.txt" 2>&1 || status=1
echo "exit status $status" >> "$out/summary.txt"
exit $status
