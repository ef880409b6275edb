#!/usr/bin/env bash
# NVIDIA's public cuda-samples, built unchanged with nvcc (`-cudart shared`) and run
# unchanged: on the mock (where Rust is), or on a GPU runner with NVIDIA's runtime and
# with cumock's over the real driver, so that the same programs' outputs can be compared.
# The samples are not part of this repository (their license is theirs): point
# CUDA_SAMPLES at a checkout of https://github.com/NVIDIA/cuda-samples (its Samples/ and
# Common/ folders are enough).
#
#   CUDA_SAMPLES=~/cuda-samples ci/public-samples.sh OUTDIR [mock|nvidia|cumock-runtime]...
#
# mock (the default): each sample under `cumock exec` ($CUMOCK_BIN/cumock, the mock and
# cumock's runtime beside it; target/release unless CUMOCK_BIN says); nvidia: the system's
# driver with the toolkit's libcudart.so.13; cumock-runtime: the system's driver with
# cumock's libcudart.so ($CUMOCK_BIN/libcudart.so). Which samples, how each is built and
# with what arguments it runs: clients/public-samples/samples.txt. SAMPLES="a b" runs only
# those. Results: OUTDIR/<mode>/<name>.txt (stdout and stderr), OUTDIR/<mode>/summary.txt
# (one line a sample: its exit status and seconds), OUTDIR/build/<name>.nvcc.txt.
# Driver-API samples (`-lcuda`) link against $CUMOCK_BIN/libcuda.so (the toolkit's
# packages carry no stub) and run with whichever libcuda.so.1 the mode loads.
# Never calls multicast APIs (no sample in the list does).
set -uo pipefail
out=${1:?usage: CUDA_SAMPLES=DIR ci/public-samples.sh OUTDIR [mock|nvidia|cumock-runtime]...}
shift
modes=${*:-mock}
cd "$(dirname "$0")/.."
root=$PWD
samples=${CUDA_SAMPLES:?CUDA_SAMPLES must name a cuda-samples checkout}
samples=$(cd "$samples" && pwd)
bin=$(cd "${CUMOCK_BIN:-target/release}" && pwd)
if [ -n "${CUMOCK_NVCC_ROOT:-}" ]; then
    nvcc=$CUMOCK_NVCC_ROOT/bin/nvcc
else
    nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
fi
toolkit=$(cd "$(dirname "$nvcc")/.." && pwd)
nvidia_lib=""
for d in "$toolkit/lib64" "$toolkit/lib" "$toolkit/targets/x86_64-linux/lib"; do
    [ -e "$d/libcudart.so.13" ] && { nvidia_lib="$d"; break; }
done
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out/build"
out=$(cd "$out" && pwd)

status=0
while read -r name dir rest; do
    case "$name" in ''|'#'*) continue ;; esac
    [ -n "${SAMPLES:-}" ] && [[ " $SAMPLES " != *" $name "* ]] && continue
    # Options for nvcc, then (after a `--` of its own: nvcc's options may start with
    # `--`) the sample's arguments.
    opts=$rest
    args=""
    if [[ " $rest " == *" -- "* ]]; then
        opts=" $rest "
        args=${opts#* -- }
        opts=${opts%% -- *}
    fi
    src="$samples/$dir"
    exe="$out/build/$name"
    sources=$(find "$src" -maxdepth 1 \( -name '*.cu' -o -name '*.cpp' \) | sort)
    # shellcheck disable=SC2086
    if ! "$nvcc" -cudart shared -arch=sm_90 -gencode arch=compute_90,code=compute_90 \
        -I"$samples/Common" -I"$src" ${nvidia_lib:+-L"$nvidia_lib"} -L"$bin" $opts $sources \
        -o "$exe" > "$out/build/$name.nvcc.txt" 2>&1; then
        echo "$name: does not build (build/$name.nvcc.txt)" | tee -a "$out/build/summary.txt"
        status=1
        continue
    fi
    for mode in $modes; do
        mkdir -p "$out/$mode"
        start=$(date +%s%N)
        case $mode in
        mock) (cd "$src" && timeout 600 "$bin/cumock" exec -- "$exe" $args) ;;
        nvidia) (cd "$src" && timeout 600 env LD_LIBRARY_PATH="$nvidia_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" $args) ;;
        cumock-runtime)
            mkdir -p "$out/cumock-lib"
            cp -f "$bin/libcudart.so" "$out/cumock-lib/libcudart.so.13"
            (cd "$src" && timeout 600 env LD_LIBRARY_PATH="$out/cumock-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" $args) ;;
        *) echo "unknown mode $mode" >&2; exit 2 ;;
        esac > "$out/$mode/$name.txt" 2>&1 < /dev/null
        rc=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        printf '%s: exit %d, %d.%01d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100)) | tee -a "$out/$mode/summary.txt"
        [ $rc -ne 0 ] && status=1
    done
done < "$root/clients/public-samples/samples.txt"
exit $status
