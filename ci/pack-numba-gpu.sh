#!/usr/bin/env bash
# The wheels ci/gpu-numba.sh installs on the GPU machine (which reaches no registry), for
# its python3 (3.12, as the device notes read it): numba-cuda, cuda-bindings, cuda-core
# and numpy at the versions the mock's run uses (ci/install-numba.sh), so both runs have
# the same tests through the same bindings (numba-cuda 0.30.4 calls np.row_stack, which
# the image's numpy 2.5 removed: every kernel test errored with it), and the test suite's
# helpers. numba, llvmlite and the toolkit's NVVM are the image's own (llvmlite and NVVM
# alone are past the 64 MiB a call may carry).
# Writes target/numba-gpu.tar (a few MiB), which the lead carries.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/numba-gpu
rm -rf "$dir" && mkdir -p "$dir"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dir" \
    'numba-cuda==0.30.4' 'cuda-bindings==13.0.3' 'cuda-core==1.2.2' 'cuda-pathfinder==1.9.1' \
    'numpy==2.4.6' 'filecheck==1.0.6' 'cffi' 'pycparser'
tar -cf target/numba-gpu.tar -C target numba-gpu
ls -l target/numba-gpu.tar
