#!/usr/bin/env bash
# CuPy's own test suite (14.2.0, its sdist's tests/, unchanged), on the mock: the modules
# clients/cupy/expected.txt marks `ci`, one process a module, failing when a test that
# expected.txt lists as passing does not pass.
#   ci/cupy-suite.sh            the CI subset
#   ci/cupy-suite.sh all        every module of clients/cupy/suite.py's packages
#   ci/cupy-suite.sh M1,M2      these (paths under tests/: cupy_tests/core_tests/test_raw.py)
# CuPy is built from its sdist against cumock's shared runtime (ci/install-cupy.sh says
# why; the first run builds it, tens of minutes). CuPy compiles its kernels with NVRTC;
# CUPY_COMPILE_WITH_PTX=1 makes it load NVRTC's PTX, which the mock runs, instead
# of a cubin (SASS), which the mock refuses. Outcomes: target/cupy-results.json; each
# module's output: target/cupy-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=${1:-ci}
python=$(ci/install-cupy.sh)
cargo build --quiet -p cumock-driver -p cumock-cudart -p cumock
rm -rf target/cupy-logs
# Device memory is the host's: a fixed budget (as for numba-cuda's suite). CuPy's kernel
# cache goes to target/, not the home folder.
# The mock is one H200, as the GPU baseline's machine: CUPY_TEST_GPU_LIMIT=1 skips the
# tests CuPy marks multi_gpu. test_raw.py asks for nvcc at collection: the toolkit's
# (ci/install-nvcc.sh) is CuPy's NVCC.
NVCC="$(ci/install-nvcc.sh)/bin/nvcc" CUPY_TEST_GPU_LIMIT=1 \
CUMOCK_DEVICE_MEMORY=${CUMOCK_DEVICE_MEMORY:-4G} PYTHONUNBUFFERED=1 \
    CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR="$PWD/target/cupy-kernel-cache" \
    target/debug/cumock exec -- "$python" clients/cupy/suite.py run --modules "$modules" \
    --tests "$PWD/target/cupy-tests/tests" --jobs "${CUPY_JOBS:-2}" --timeout "${CUPY_TIMEOUT:-900}" \
    --json target/cupy-results.json --logs target/cupy-logs
