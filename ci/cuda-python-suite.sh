#!/usr/bin/env bash
# NVIDIA's cuda-python test suites (cuda_core/tests, cuda_bindings/tests), unchanged, on
# the mock: one process a module, failing when a test clients/cuda-python/expected.txt
# lists as passing does not pass (docs/frameworks/cuda-python.md).
#   ci/cuda-python-suite.sh            the modules expected.txt marks `ci`
#   ci/cuda-python-suite.sh all        every test_*.py of both suites' top folders
#   ci/cuda-python-suite.sh M1,M2      these (cuda_core/tests/test_stream.py)
# The tests come from GitHub, not a registry: ci/fetch-cuda-python-tests.sh, or a tree
# fetched elsewhere in $CUDA_PYTHON_TESTS. Hence a manual script, not part of
# ci/test.sh. Outcomes: target/cuda-python-results.json; each module's output:
# target/cuda-python-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=${1:-ci}
python=$(ci/install-cuda-python.sh)
tree=${CUDA_PYTHON_TESTS:-target/cuda-python-tests}
[ -d "$tree/cuda_core/tests" ] || ci/fetch-cuda-python-tests.sh "$tree"
cargo build --quiet -p cumock-driver -p cumock-cudart -p cumock
rm -rf target/cuda-python-logs
CUMOCK_DEVICE_MEMORY=${CUMOCK_DEVICE_MEMORY:-4G} PYTHONUNBUFFERED=1 \
    target/debug/cumock exec -- "$python" clients/cuda-python/suite.py run \
    --modules "$modules" --tree "$tree" --timeout "${CUDA_PYTHON_TIMEOUT:-600}" \
    --json target/cuda-python-results.json --logs target/cuda-python-logs
