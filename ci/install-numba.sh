#!/usr/bin/env bash
# numba-cuda and what its test suite needs, from the registries, into a virtual
# environment under target/ (once; prints the environment's python).
#
# Without nvidia-nvjitlink: cuda.core's Linker, which numba-cuda links with, then uses
# the driver's cuLink* (its documented fallback when nvJitLink is not installed), so
# NVVM's PTX goes to the mock's linker, which cumock can run, instead of to nvJitLink,
# which would make SASS. That is why numba-cuda is installed without its `cu13` extra
# (which pulls nvidia-nvjitlink in) and the toolkit's parts it needs are named one by one.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/numba-venv
stamp=$venv/.cumock-installed-2
if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        'numba-cuda==0.30.4' 'numba==0.68.1' 'llvmlite==0.50.0' \
        'cuda-bindings==13.0.*' 'cuda-core==1.2.*' \
        'nvidia-nvvm==13.0.*' 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' \
        'nvidia-cuda-cccl==13.0.*' \
        pytest filecheck cffi ml_dtypes psutil >&2
    if "$venv/bin/pip" show --quiet nvidia-nvjitlink > /dev/null 2>&1; then
        echo "install-numba.sh: nvidia-nvjitlink got installed; numba-cuda would make SASS" >&2
        exit 1
    fi
    touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
