#!/usr/bin/env bash
# What ci/gpu-cupy.sh needs on the GPU machine (which reaches no registry), for its
# python3 (3.12): the cupy-cuda13x 14.2.0 wheel (NVIDIA's static runtime inside is no
# matter on a real GPU), fastrlock, pytest's wheels, and CuPy's own tests as
# ci/install-cupy.sh unpacked them (target/cupy-tests). NVRTC and the runtime headers
# CuPy compiles its kernels against are the image's CUDA 13.0 toolkit's.
# The wheel alone is 66 MiB, past the 64 MiB one call may carry: the pack is written in
# two parts, target/cupy-gpu.tar.0 and .1, carried in two calls (a warm machine keeps the
# first: ci/gpu-cupy.sh joins them once both are there).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d target/cupy-tests/tests ] || { echo "run ci/install-cupy.sh first (it unpacks the tests)"; exit 1; }
dir=target/cupy-gpu
rm -rf "$dir" && mkdir -p "$dir"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dir" \
    'cupy-cuda13x==14.2.0' 'fastrlock==0.8.*' 'pytest==9.*' 'pluggy' 'iniconfig' \
    'packaging' 'pygments'
cp -r target/cupy-tests "$dir/tests-root"
tar -cf target/cupy-gpu.tar -C target cupy-gpu
rm -f target/cupy-gpu.tar.?
split -b 50M -d -a 1 target/cupy-gpu.tar target/cupy-gpu.tar.
rm target/cupy-gpu.tar
ls -l target/cupy-gpu.tar.?
