#!/usr/bin/env bash
# NVIDIA CCCL's own examples (Thrust's and CUB's), built unchanged with nvcc (`-cudart
# shared`) and run unchanged on the mock (`cumock exec`), or with NVIDIA's driver and
# runtime on a GPU runner so that the outputs can be compared. The examples are not part
# of this repository (their license is theirs) and CI cannot fetch them: point the first
# argument at a folder holding a CCCL checkout's thrust/examples and cub/examples (or the
# whole checkout, https://github.com/NVIDIA/cccl).
#
#   ci/cccl-examples.sh CCCL_DIR OUTDIR [mock|nvidia|cumock-runtime]
#
# Which examples and how each is checked: clients/cccl-examples/examples.txt. EXAMPLES="a
# b" (file names without .cu) runs only those. The headers come from the toolkit's CCCL
# (nvcc's own include/cccl); CUB's examples include "../../test/test_util.h", whose real
# version needs CCCL's c2h/Catch2 test harness, so the examples are copied to
# OUTDIR/src with clients/cccl-examples/test_util.h (cumock's stand-in) in its place.
# mock: $CUMOCK_BIN/cumock exec (target/debug unless CUMOCK_BIN says); nvidia: the
# system's driver with the toolkit's libcudart.so.13; cumock-runtime: the system's driver
# with cumock's libcudart.so ($CUMOCK_BIN/libcudart.so). Results: OUTDIR/<mode>/<name>.txt,
# OUTDIR/<mode>/summary.txt, OUTDIR/build/<name>.nvcc.txt; the last line printed is
# "N passed, N failed". Never calls multicast APIs (no example in the list does).
set -uo pipefail
usage="usage: ci/cccl-examples.sh CCCL_DIR OUTDIR [mock|nvidia|cumock-runtime]"
cccl=${1:?$usage}
out=${2:?$usage}
mode=${3:-mock}
cd "$(dirname "$0")/.."
root=$PWD
cccl=$(cd "$cccl" && pwd)
case $mode in
mock | cumock-runtime) bin=$(cd "${CUMOCK_BIN:-target/debug}" && pwd) || exit 2 ;;
nvidia) bin="" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
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
mkdir -p "$out/build" "$out/$mode" "$out/src"
out=$(cd "$out" && pwd)
: > "$out/$mode/summary.txt"

# The examples' own folders (their include/ headers too), with the stand-in test_util.h.
for dir in thrust/examples cub/examples; do
    [ -d "$cccl/$dir" ] && mkdir -p "$out/src/$dir" && cp -r "$cccl/$dir/." "$out/src/$dir/"
done
mkdir -p "$out/src/cub/test"
cp "$root/clients/cccl-examples/test_util.h" "$out/src/cub/test/test_util.h"

flags=(-cudart shared -arch=sm_90 -gencode arch=compute_90,code=compute_90 -std=c++17 --extended-lambda)
cpu_flags=(-x c++ -std=c++17 -I"$toolkit/include/cccl" -I"$toolkit/include" -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP)

# Builds first, JOBS at a time (a GPU runner's cores; each Thrust example takes nvcc half
# a minute), each leaving its exit status in build/<name>.rc for the run loop below.
build_one() {
    local name=$1 src=$2 check=$3
    "$nvcc" "${flags[@]}" ${nvidia_lib:+-L"$nvidia_lib"} "$src" -o "$out/build/$name" \
        > "$out/build/$name.nvcc.txt" 2>&1
    echo $? > "$out/build/$name.rc"
    # The CPU reference: plain C++ (the examples' include/host_device.h defines
    # __host__ __device__ away there), so that no CUDA compiler or runtime takes part.
    if [ "$check" = cpu ]; then
        "${CXX:-c++}" "${cpu_flags[@]}" "$src" -o "$out/build/$name.cpu" \
            > "$out/build/$name.cpu.build.txt" 2>&1
        echo $? > "$out/build/$name.cpu.rc"
    fi
}
jobs_max=${JOBS:-$(nproc)}
while read -r path rest; do
    case "$path" in ''|'#'*) continue ;; esac
    name=$(basename "$path" .cu)
    [ -n "${EXAMPLES:-}" ] && [[ " $EXAMPLES " != *" $name "* ]] && continue
    [ -e "$out/src/$path" ] || continue
    check=""
    [[ " $rest " == *" cpu-reference "* ]] && check=cpu
    # REUSE_BUILDS=1: a second mode over the same OUTDIR runs the first one's builds.
    [ "${REUSE_BUILDS:-}" = 1 ] && [ -e "$out/build/$name.rc" ] && continue
    rm -f "$out/build/$name.rc" "$out/build/$name.cpu.rc"
    build_one "$name" "$out/src/$path" "$check" &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
done < "$root/clients/cccl-examples/examples.txt"
wait
passed=0
failed=0
while read -r path rest; do
    case "$path" in ''|'#'*) continue ;; esac
    name=$(basename "$path" .cu)
    [ -n "${EXAMPLES:-}" ] && [[ " $EXAMPLES " != *" $name "* ]] && continue
    check=""
    args=""
    [[ " $rest " == *" cpu-reference "* ]] && check=cpu
    [[ " $rest " == *" -- "* ]] && args=${rest#*-- }
    src="$out/src/$path"
    if [ ! -e "$src" ]; then
        echo "$name: not in $cccl" | tee -a "$out/$mode/summary.txt"
        failed=$((failed + 1))
        continue
    fi
    if [ "$(cat "$out/build/$name.rc" 2>/dev/null)" != 0 ]; then
        echo "$name: does not build (build/$name.nvcc.txt)" | tee -a "$out/$mode/summary.txt"
        failed=$((failed + 1))
        continue
    fi
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    case $mode in
    mock) (cd "$(dirname "$src")" && timeout 600 "$bin/cumock" exec -- "$out/build/$name" $args) ;;
    nvidia) (cd "$(dirname "$src")" && timeout 600 env LD_LIBRARY_PATH="$nvidia_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/build/$name" $args) ;;
    cumock-runtime)
        mkdir -p "$out/cumock-lib"
        cp -f "$bin/libcudart.so" "$out/cumock-lib/libcudart.so.13"
        (cd "$(dirname "$src")" && timeout 600 env LD_LIBRARY_PATH="$out/cumock-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/build/$name" $args) ;;
    esac > "$out/$mode/$name.txt" 2>&1 < /dev/null
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    verdict=PASS
    if [ $rc -ne 0 ]; then
        verdict="FAIL (exit $rc)"
    elif grep -q FAIL "$out/$mode/$name.txt"; then
        verdict="FAIL (the example reports FAIL)"
    elif [ "$check" = cpu ]; then
        # The same program on Thrust's host backend (built above): its output is the
        # reference.
        if [ "$(cat "$out/build/$name.cpu.rc" 2>/dev/null)" = 0 ] \
            && (cd "$(dirname "$src")" && timeout 600 "$out/build/$name.cpu" $args) \
            > "$out/$mode/$name.cpu.txt" 2>&1 < /dev/null; then
            cmp -s "$out/$mode/$name.txt" "$out/$mode/$name.cpu.txt" \
                || verdict="FAIL (differs from the CPU reference, $mode/$name.cpu.txt)"
        else
            verdict="FAIL (the CPU reference did not build or run)"
        fi
    fi
    case $verdict in PASS) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
    printf '%s: %s, %d.%01d s\n' "$name" "$verdict" $((ms / 1000)) $((ms % 1000 / 100)) | tee -a "$out/$mode/summary.txt"
done < "$root/clients/cccl-examples/examples.txt"
echo "$passed passed, $failed failed" | tee -a "$out/$mode/summary.txt"
[ $failed -eq 0 ]
