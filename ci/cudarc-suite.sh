#!/usr/bin/env bash
# cudarc's own unit tests (crate cudarc 0.19.10, the `#[test]`s of its src/, unchanged) on
# the mock, one process a test, checked against clients/cudarc/expected.txt.
#   ci/cudarc-suite.sh            every test but expected.txt's `slow` ones
#   ci/cudarc-suite.sh all        every test
#   ci/cudarc-suite.sh T1,T2      these (libtest's names: driver::safe::core::tests::...)
#   ci/cudarc-suite.sh build      only build the test binary and print its path
# Features: the driver, NVRTC and the runtime API for CUDA 13.0 (`cuda-13000`), loaded at
# run time (`dynamic-loading`), `f16` for its half-precision launch test; NVIDIA's
# libraries (cuBLAS, cuRAND, cuDNN, NCCL, cuFFT, cuSPARSE, cuSOLVER, cuTENSOR, cuFile)
# are left out: their kernels are SASS. NVRTC is the registry's nvidia-cuda-nvrtc 13.0
# (the version of the H200's driver), under target/cuda-nvrtc. Outcomes:
# target/cudarc-results.json; each test's output: target/cudarc-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
choice=${1:-ci}
version=0.19.10
features=std,driver,nvrtc,runtime,cuda-13000,dynamic-loading,f16
work=$PWD/target/cudarc-suite
src=$work/cudarc-$version

if [ ! -f "$src/Cargo.toml" ]; then
    crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/cudarc-$version.crate 2>/dev/null | head -1 || true)
    if [ -z "$crate" ]; then
        # Not in cargo's cache: a scratch package that depends on exactly this version
        # makes `cargo fetch` download it there.
        mkdir -p "$work/fetch/src"
        printf '[package]\nname = "cudarc-fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ncudarc = { version = "=%s", default-features = false, features = ["cuda-13000"] }\n[workspace]\n' \
            "$version" > "$work/fetch/Cargo.toml"
        touch "$work/fetch/src/lib.rs"
        cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml" >&2
        crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/cudarc-$version.crate | head -1)
    fi
    mkdir -p "$work"
    tar -xzf "$crate" -C "$work"
    # Unpacked under this workspace's target/, the crate would be taken for a member of
    # it: an empty [workspace] makes it a workspace of its own (its tests are unchanged).
    printf '\n[workspace]\n' >> "$src/Cargo.toml"
fi

# The crate's own Cargo.lock pins its dependencies (--locked).
binary=$(nice cargo test --quiet --locked --lib --no-run --no-default-features --features "$features" \
    --manifest-path "$src/Cargo.toml" --target-dir "$work/target" --message-format=json \
    | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cudarc":
        print(m["executable"])')
[ -x "$binary" ] || { echo "no test binary built"; exit 1; }
if [ "$choice" = build ]; then
    echo "$binary"
    exit 0
fi

nvrtc=$PWD/target/cuda-nvrtc
if [ ! -f "$nvrtc/nvidia/cu13/lib/libnvrtc.so.13" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$nvrtc" \
        'nvidia-cuda-nvrtc==13.0.88' >&2
fi
nice cargo build --quiet -p cumock-driver -p cumock-cudart -p cumock
rm -rf target/cudarc-logs
# cudarc opens libnvrtc.so.13 by name: the loader finds it on LD_LIBRARY_PATH, which
# `cumock exec` keeps (it puts the mock's libcuda.so.1 first).
LD_LIBRARY_PATH=$nvrtc/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
CUMOCK_DEVICE_MEMORY=${CUMOCK_DEVICE_MEMORY:-4G} \
    python3 clients/cudarc/suite.py run --binary "$binary" --wrap "$PWD/target/debug/cumock exec --" \
    --tests "$choice" --multi-gpu CUMOCK_DEVICES=2 --jobs "${CUDARC_JOBS:-2}" --timeout "${CUDARC_TIMEOUT:-600}" \
    --json target/cudarc-results.json --logs target/cudarc-logs
