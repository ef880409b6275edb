#!/usr/bin/env bash
# What ci/gpu-cuda-python.sh needs on the GPU machine (which reaches no registry and no
# GitHub), for its python3 (3.12): the wheels of cuda-core, cuda-bindings and
# cuda-pathfinder at the versions the mock's run uses (ci/install-cuda-python.sh), numpy
# and pytest, and the fetched test tree (ci/fetch-cuda-python-tests.sh, or
# $CUDA_PYTHON_TESTS: the very files the mock's run used). NVRTC is the image's toolkit's.
# Writes target/cuda-python-gpu.tar (37 MiB), which the lead carries. Checked here under
# cumock exec with Python 3.12 (the script's mechanics, not the GPU's answers).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${CUDA_PYTHON_TESTS:-target/cuda-python-tests}
[ -d "$tree/cuda_core/tests" ] || { echo "no test tree at $tree: ci/fetch-cuda-python-tests.sh"; exit 1; }
dir=target/cuda-python-gpu
rm -rf "$dir" && mkdir -p "$dir/wheels"
python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dir/wheels" \
    'cuda-core==1.2.2' 'cuda-bindings==13.0.3' 'cuda-pathfinder==1.9.1' 'numpy' 'pytest'
cp -r "$tree" "$dir/tests"
cp -r clients/cuda-python clients/suite_common.py "$dir/"
tar -cf target/cuda-python-gpu.tar -C target cuda-python-gpu
ls -l target/cuda-python-gpu.tar
