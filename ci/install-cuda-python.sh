#!/usr/bin/env bash
# cuda-core 1.2.2, cuda-bindings 13.0.3 and what their test suites need into a virtual
# environment under target/ (once); prints the environment's python. NVRTC
# (nvidia-cuda-nvrtc 13.0) compiles the suites' CUDA C++; nvJitLink is left out on
# purpose, as for numba-cuda (README, "numba-cuda on the mock"): cuda.core's Linker then
# links PTX with the driver's cuLink*, which is the mock's, not to SASS.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/cuda-python-venv
stamp=$venv/.cumock-installed-1
if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        'cuda-core==1.2.2' 'cuda-bindings==13.0.3' 'cuda-pathfinder==1.9.1' 'numpy' \
        'nvidia-cuda-nvrtc==13.0.*' 'pytest' >&2
    touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
