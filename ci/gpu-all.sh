#!/usr/bin/env bash
# Everything the GPU runner records, in one command and one archive (the device tool
# brings back a few files only): the suite's goldens and the mock against them, the
# clients on both drivers, the probes, the PTX corpus, the runtime programs with NVIDIA's
# and cumock's runtime, PyTorch on both stacks, and the benchmark.
#   cargo build --release --workspace    # where Rust is; carry target/release/{cumock,libcuda.so,libcudart.so,libcudatrace.so}
#                                        # (or ci/pack-gpu-bin.sh and CUMOCK_BIN=target/gpu-min: smaller)
#   ci/gpu-all.sh OUTDIR                 # on the GPU runner: OUTDIR/<part>.tgz
# Never runs multicast APIs: they can take a host's GPUs out of service.
set -uo pipefail
out=${1:?usage: ci/gpu-all.sh OUTDIR}
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
work=$(mktemp -d)
status=0
# Which commit the carried binaries were built from (ci/pack-gpu-bin.sh), beside the
# tree's: a recording made with stale binaries must say so.
{
    echo "tree: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "binaries: $(cat "${CUMOCK_BIN:-target/release}/BUILT_FROM" 2>/dev/null || echo 'not from ci/pack-gpu-bin.sh')"
} > "$out/built-from.txt"
# Each part is archived as soon as it ends, so that a run stopped by a time limit still
# brings back what it finished.
part() {
    local name=$1; shift
    echo "== $name $(date +%T)" >&2
    mkdir -p "$work/$name"
    "$@" > "$work/$name.log" 2>&1 || { echo "== $name failed ($?)" >&2; status=1; }
    tar czf "$out/$name.tgz" -C "$work" "$name" "$name.log"
}
# PARTS="probes runtime": only those (a session's recording of what changed; PROBES and
# PROGRAMS narrow those parts further).
want() { [ -z "${PARTS:-}" ] || [[ " $PARTS " == *" $1 "* ]]; }
want probes && part probes ci/gpu-probes.sh "$work/probes"
want corpus && part corpus ci/gpu-corpus.sh "$work/corpus"
want checks && part checks ci/gpu-checks.sh "$work/checks"
want runtime && part runtime ci/gpu-runtime.sh "$work/runtime"
want run && part run ci/gpu-run.sh "$work/run"
want torch && part torch ci/gpu-torch.sh "$work/torch"
want random && part random ci/gpu-random.sh "$work/random"
want fits && part fits ci/gpu-fits.sh "$work/fits"
# NVIDIA's public samples with NVIDIA's runtime and with cumock's, when a checkout is
# carried (CUDA_SAMPLES; ci/public-samples.sh).
if [ -n "${CUDA_SAMPLES:-}" ] && want samples; then
    part samples ci/public-samples.sh "$work/samples" nvidia cumock-runtime
fi
# NVIDIA CCCL's Thrust and CUB examples with NVIDIA's runtime and with cumock's, when a
# CCCL checkout is carried (CCCL_EXAMPLES; ci/cccl-examples.sh).
if [ -n "${CCCL_EXAMPLES:-}" ] && want cccl; then
    part cccl sh -c 'ci/cccl-examples.sh "$1" "$2" nvidia; r=$?;
        REUSE_BUILDS=1 CUMOCK_BIN=${CUMOCK_BIN:-target/release} ci/cccl-examples.sh "$1" "$2" cumock-runtime || r=1
        # Only the outputs and logs come back (the binaries are past what a call returns).
        find "$2/build" -type f ! -name "*.txt" ! -name "*.rc" -delete; rm -rf "$2/src" "$2/cumock-lib"
        exit $r' \
        cccl "$CCCL_EXAMPLES" "$work/cccl"
fi
exit $status
