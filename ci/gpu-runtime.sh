#!/usr/bin/env bash
# The runtime programs of clients/runtime on a GPU runner (nvcc 13.0, gcc, an NVIDIA
# driver; no Rust): each is compiled once and run twice over the real driver, with
# NVIDIA's libcudart.so.13 and with cumock's (carried from a machine with Rust), and the
# two transcripts are saved side by side with their diff.
#
#   cargo build --release -p cumock-cudart     # where Rust is; carry target/release/libcudart.so
#   ci/gpu-runtime.sh OUTDIR                   # on the GPU runner
#
# Results: OUTDIR/<GPU>-<driver>/nvidia/*.txt (NVIDIA's runtime: the goldens, committed as
# clients/runtime/goldens/<GPU>-<driver>/*.txt; peer.txt only from a host with two GPUs,
# the others from a one-GPU host, since device_query prints the count),
# OUTDIR/<GPU>-<driver>/cumock/*.txt (cumock's runtime on the real driver), *.stderr,
# diff.txt, summary.txt, and driver-calls/ when cumock and libcudatrace.so are carried.
# Never calls multicast APIs.
set -uo pipefail
out=${1:?usage: ci/gpu-runtime.sh OUTDIR}
cd "$(dirname "$0")/.."
bin=${CUMOCK_BIN:-target/release}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
toolkit=$(cd "$(dirname "$nvcc")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
key=$(echo "$gpu" | sed 's/, /-/; s/ /_/g')
dest="$out/$key"
mkdir -p "$dest/nvidia" "$dest/cumock" "$out/build"
"$nvcc" --version > "$dest/nvcc-version.txt" 2>&1
echo "$gpu" > "$dest/gpu.txt"

# NVIDIA's runtime: the toolkit's libcudart.so.13. cumock's: a folder holding only it, so
# that libcuda.so.1 stays the system's driver.
nvidia_lib=""
for d in "$toolkit/lib64" "$toolkit/lib" "$toolkit/targets/x86_64-linux/lib"; do
    [ -e "$d/libcudart.so.13" ] && { nvidia_lib="$d"; break; }
done
ours="$out/cumock-lib"
mkdir -p "$ours"
cp -f "$bin/libcudart.so" "$ours/libcudart.so.13" || { echo "no $bin/libcudart.so: build it with cargo build --release -p cumock-cudart and carry it" >&2; exit 2; }

status=0
: > "$dest/summary.txt"
for src in clients/runtime/*.cu; do
    name=$(basename "$src" .cu)
    # PROGRAMS="a b": only those (a recording of what changed).
    [ -n "${PROGRAMS:-}" ] && [[ " $PROGRAMS " != *" $name "* ]] && continue
    exe="$out/build/$name"
    # sm_90, or what the program's first line names (`// nvcc-arch: sm_90a`, for wgmma),
    # as cudart/tests/common/mod.rs reads it.
    arch=$(sed -n '1s|^// nvcc-arch: sm_\([a-z0-9]*\).*|\1|p' "$src")
    arch=${arch:-90}
    # More options after the source from a `// nvcc-options: ...` line among the first
    # three (`-rdc=true -lcudadevrt` for dynamic parallelism), as the Rust tests read it.
    opts=$(head -n 3 "$src" | sed -n 's|^// nvcc-options:||p' | head -n 1)
    # shellcheck disable=SC2086 # the options are words
    if ! "$nvcc" -cudart shared -arch=sm_$arch -gencode arch=compute_$arch,code=compute_$arch ${nvidia_lib:+-L"$nvidia_lib"} -o "$exe" "$src" $opts 2> "$out/build/$name.nvcc.txt"; then
        echo "$name: does not compile (see build/$name.nvcc.txt)" >> "$dest/summary.txt"; status=1; continue
    fi
    for side in nvidia cumock; do
        if [ $side = nvidia ]; then lib="$nvidia_lib"; else lib="$ours"; fi
        timeout 300 env LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" > "$dest/$side/$name.txt" 2> "$dest/$side/$name.stderr"
        rc=$?
        echo "$name with $side's runtime: exit $rc" >> "$dest/summary.txt"
        # A skipped program (77: e.g. peer with one GPU) is no golden: kept aside.
        [ $rc = 77 ] && mv "$dest/$side/$name.txt" "$dest/$side/$name.skipped"
    done
done
# Optional, when cumock and the pass-through driver were carried too: what each runtime
# asked of the driver (the VMM calls and those around them), program by program.
if [ -x "$bin/cumock" ] && [ -f "$bin/libcudatrace.so" ]; then
    for side in nvidia cumock; do
        mkdir -p "$dest/driver-calls/$side"
        if [ $side = nvidia ]; then lib="$nvidia_lib"; else lib="$ours"; fi
        for exe in "$out"/build/*; do
            [ -x "$exe" ] && [ -f "$exe" ] || continue
            name=$(basename "$exe")
            timeout 300 "$bin/cumock" trace --out "$dest/driver-calls/$side/$name.jsonl" -- \
                env LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" > /dev/null 2>&1
        done
    done
fi
diff -r -x '*.stderr' -x '*.skipped' "$dest/nvidia" "$dest/cumock" > "$dest/diff.txt"
echo "transcripts in $dest; differences between the runtimes: $(grep -c '^[<>]' "$dest/diff.txt") lines (diff.txt)"
cat "$dest/summary.txt"
exit $status
