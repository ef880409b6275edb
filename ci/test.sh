#!/usr/bin/env bash
# All the tests, on a fresh machine: fetches NVIDIA's cuda.h from the registry package
# (never committed), then runs every test of the workspace, clippy and rustfmt.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build from scratch: incremental compilation's caches would only take disk (3 GB),
# and pip's download cache the same again; the run reports its disk at both ends.
export CARGO_INCREMENTAL=0 PIP_NO_CACHE_DIR=1
df -h . | awk 'NR == 2 { print "disk at start: " $4 " free of " $2 }'
headers=target/cuda-headers
# The runtime's headers (cuda_runtime_api.h) include crt/, which nvidia-cuda-crt ships.
if [ ! -f "$headers/nvidia/cu13/include/cuda.h" ] || [ ! -f "$headers/nvidia/cu13/include/crt/host_defines.h" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade --target "$headers" 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*'
fi
# NVIDIA's Python bindings and cuda-core, for the Python clients (mock-driver/tests/clients.rs).
if [ ! -d target/py-clients/cuda/core ]; then
    python3 -m pip install --quiet --disable-pip-version-check --target target/py-clients 'cuda-bindings==13.0.*' 'cuda-core==1.2.*'
fi
# valgrind runs the suite under memcheck (harness/tests/valgrind.rs).
if ! command -v valgrind > /dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq valgrind > /dev/null; else sudo apt-get install -y -qq valgrind > /dev/null; fi
fi
# Chromium and chromedriver open the conformance matrix page (harness/tests/report.rs).
if ! command -v chromium > /dev/null || ! command -v chromedriver > /dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium chromium-driver > /dev/null; else sudo apt-get install -y -qq chromium chromium-driver > /dev/null; fi
fi
# maturin builds the Python wheel; pytest's wheels go into the fresh venv it is installed
# into (harness/tests/wheel.rs).
if [ ! -x target/py-tools/bin/maturin ]; then
    python3 -m venv target/py-tools && target/py-tools/bin/pip install --quiet --disable-pip-version-check 'maturin>=1.5,<2'
fi
if ! ls target/py-wheels/pytest-*.whl > /dev/null 2>&1; then
    python3 -m pip download --quiet --disable-pip-version-check -d target/py-wheels pytest
fi
export CUMOCK_CUDA_INCLUDE="$PWD/$headers/nvidia/cu13/include"
# nvcc 13.0 from the registry packages, installed once into target/: the executor's tests,
# the kernel clients and the runtime programs compile CUDA source with it.
CUMOCK_NVCC_ROOT=$(ci/install-nvcc.sh)
export CUMOCK_NVCC_ROOT
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo build --workspace --all-targets --quiet
cargo test --workspace --quiet 2>&1 | tee target/test-output.txt
# The interpreter stays the kernels' reference (issue 22): the tests that run kernels
# through the mock (runtime programs, ordering reports, kernels, graphs, the device
# runtime) once more under it; the JIT is the default everywhere else.
CUMOCK_KERNEL_ENGINE=interp cargo test --quiet -p cumock-cudart -p cumock-driver \
    --test programs --test ordering --test kernels --test jit --test async_device \
    --test graphs --test device_runtime 2>&1 | tee target/test-output-interp.txt
# numba-cuda's own test suite, unchanged, on the mock: CI's modules (README, "numba-cuda on
# the mock"); ci/numba-full.sh runs them all.
ci/numba-suite.sh 2>&1 | tee target/numba-output.txt
# cudarc's own unit tests, unchanged, on the mock: all but the slow ones
# (docs/frameworks/cudarc.md; about 10 s with the build, ci/cudarc-suite.sh all runs them all).
ci/cudarc-suite.sh 2>&1 | tee target/cudarc-output.txt
# The README's framework guide (numba-cuda, cuda-core, cuda-python, cudarc, a C++ nvcc
# project), every block as a user would paste it.
ci/readme-guide.sh 2>&1 | tee target/guide-output.txt
# The conformance matrix page, kept as an artifact of the run.
target/debug/cumock report target/cumock-matrix.html 2> /dev/null && echo "conformance matrix: target/cumock-matrix.html"
df -h . | awk 'NR == 2 { print "disk at end: " $4 " free of " $2 }'
du -sh target 2> /dev/null | awk '{ print "target/: " $1 }'
# The plain closing line CI systems read: passed and failed over all test binaries.
awk '/^test result:/ { p += $4; f += $6 } /^numba-cuda checked:/ { p += $3; f += $5 } /^cudarc checked:/ { p += $3; f += $5 } /^readme guide:/ { p += $3; f += $5 } END { printf "%d passed, %d failed\n", p, f }' target/test-output.txt target/test-output-interp.txt target/numba-output.txt target/cudarc-output.txt target/guide-output.txt
