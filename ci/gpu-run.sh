#!/usr/bin/env bash
# A whole GPU run in one command, on a runner with an NVIDIA driver and no Rust toolchain:
# the device profile and error strings, golden transcripts of the whole suite, the mock
# diffed against them, and the benchmark on both (same binary, library switched).
#
#   cargo build --release            # on a machine with Rust; carry target/release/{cumock,libcuda.so}
#   ci/gpu-run.sh OUTDIR             # on the GPU runner
#
# Never runs multicast APIs (no case uses them): they can take a host's GPUs out of service.
set -uo pipefail
out=${1:?usage: ci/gpu-run.sh OUTDIR}
bin=${CUMOCK_BIN:-target/release}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
status=0
step() { echo "== $*" >&2; "$@" || { echo "== failed ($?): $*" >&2; status=1; }; }

nvidia-smi -L > "$out/gpus.txt" 2>&1
cat /proc/driver/nvidia/version >> "$out/gpus.txt" 2>/dev/null
step "$bin/cumock" profile capture --out "$out/profile.json" --errors "$out/error-strings.json"
step "$bin/cumock" record --out "$out/goldens" --timeout 120 > "$out/record.txt"
key=$(ls "$out/goldens" | head -n 1)
# The mock against the goldens just recorded (declared divergences allowed), and the
# step-by-step diff a person reads.
step "$bin/cumock" run --golden "$out/goldens/$key" --transcripts "$out/mock" > "$out/mock-vs-golden.txt"
step "$bin/cumock" diff "$out/goldens/$key" "$out/mock" > "$out/diff.txt"
# The C programs, compiled here against the toolkit's cuda.h, on the real driver and on
# the mock: the same binary, the library switched.
inc=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../include
mockdir=$("$bin/cumock" lib-path)
: > "$out/programs.txt"
# The kernels of the sample-style clients, as a user builds them: SASS for the GPU, PTX
# for the mock.
fatbin=/tmp/samples.fatbin
"$(dirname "$inc")/bin/nvcc" -fatbin -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    clients/kernels/samples.cu -o "$fatbin" 2>> "$out/programs.txt" || status=1
for src in clients/c/*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    if ! gcc -std=gnu11 -O1 -I"$inc" "$src" -o "/tmp/$name" -L"$mockdir" -lcuda -lpthread 2>> "$out/programs.txt"; then
        echo "$name: does not compile" >> "$out/programs.txt"; status=1; continue
    fi
    for side in real mock; do
        if [ $side = mock ]; then env=(env LD_LIBRARY_PATH="$mockdir"); else env=(env); fi
        case $name in vector_add_mmap | ipc_kernels) args=("$fatbin") ;; *) args=() ;; esac
        if timeout 120 "${env[@]}" "/tmp/$name" "${args[@]}" > "/tmp/$name.$side.log" 2>&1; then r=pass; else r="FAIL ($?)"; status=1; fi
        echo "$name on the $side driver: $r: $(tail -n 3 "/tmp/$name.$side.log" | tr '\n' ' ')" >> "$out/programs.txt"
    done
done
# The Python and Rust clients on both drivers.
for side in real mock; do
    if [ $side = mock ]; then env=(env LD_LIBRARY_PATH="$mockdir"); else env=(env); fi
    for py in clients/python/bindings_vmm.py clients/python/core_vmr.py; do
        if timeout 120 "${env[@]}" python3 "$py" > "/tmp/py.log" 2>&1; then r=pass; else r="FAIL ($?)"; status=1; fi
        echo "$(basename "$py") on the $side driver: $r: $(tail -n 2 /tmp/py.log | tr '\n' ' ')" >> "$out/programs.txt"
    done
    if [ -x "$bin/examples/cudarc_vmm" ]; then
        if timeout 60 "${env[@]}" "$bin/examples/cudarc_vmm" > /tmp/rs.log 2>&1; then r=pass; else r="FAIL ($?)"; status=1; fi
        echo "cudarc_vmm on the $side driver: $r: $(tail -n 2 /tmp/rs.log | tr '\n' ' ')" >> "$out/programs.txt"
    fi
done
# Record real allocators through the pass-through driver, turn the traces into cases,
# and run those cases on the real driver and on the mock.
real=$(ldconfig -p 2>/dev/null | awk '/libcuda.so.1 / && /x86-64/ {print $NF; exit}')
mkdir -p "$out/traces"
for prog in torch_expandable core_vmr; do
    "$bin/cumock" trace --out "/tmp/$prog.jsonl" ${real:+--driver "$real"} -- python3 "clients/python/$prog.py" > "$out/traces/$prog.log" 2>&1 || status=1
    "$bin/cumock" trace2case "/tmp/$prog.jsonl" --title "$prog, recorded on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" --out "$out/traces/trace-$prog.case" || status=1
done
step "$bin/cumock" record --out "$out/traces/goldens" "$out"/traces/*.case
step "$bin/cumock" run --no-golden "$out"/traces/*.case > "$out/traces/mock.txt"
step "$bin/cumock" bench --driver libcuda.so.1 > "$out/bench-real.json"
step "$bin/cumock" bench > "$out/bench-mock.json"
exit $status
