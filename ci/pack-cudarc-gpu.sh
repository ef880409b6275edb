#!/usr/bin/env bash
# What ci/gpu-cudarc.sh needs on the GPU machine (no Rust there, no registry): the very
# test binary the mock's run uses (ci/cudarc-suite.sh build) and NVRTC 13.0.88's
# libraries from the registry package (target/cuda-nvrtc), xz-compressed: writes
# target/cudarc-gpu.tar.xz (about 36 MiB; libnvrtc.so.13 alone is 105 MiB unpacked, the
# package's wheel 86 MiB), which the lead carries. The binary needs glibc 2.34 or later.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(ci/cudarc-suite.sh build)
nvrtc=target/cuda-nvrtc/nvidia/cu13/lib
if [ ! -f "$nvrtc/libnvrtc.so.13" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target target/cuda-nvrtc \
        'nvidia-cuda-nvrtc==13.0.88' >&2
fi
dir=target/cudarc-gpu
rm -rf "$dir" && mkdir -p "$dir/lib"
cp "$binary" "$dir/cudarc-tests"
# The .alt libraries are NVRTC's other build (a different C++ library): cudarc opens
# libnvrtc.so.13, which opens libnvrtc-builtins.so.13.0.
cp "$nvrtc/libnvrtc.so.13" "$nvrtc/libnvrtc-builtins.so.13.0" "$dir/lib/"
tar -cf - -C target cudarc-gpu | xz -9 -T0 > target/cudarc-gpu.tar.xz
ls -l target/cudarc-gpu.tar.xz
