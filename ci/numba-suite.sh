#!/usr/bin/env bash
# numba-cuda's own test suite, unchanged, on the mock (ci/test.sh runs this): the modules
# clients/numba/expected.txt marks `ci` (a few minutes on 2 cores), one process a module,
# failing when a test that expected.txt lists as passing does not pass.
#   ci/numba-suite.sh            the CI subset
#   ci/numba-suite.sh all        every module (ci/numba-full.sh)
# numba-cuda is installed without nvJitLink (ci/install-numba.sh says why), so it links
# NVVM's PTX with the driver's cuLink*, the mock's. Outcomes: target/numba-results.json;
# each module's output: target/numba-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=${1:-ci}
python=$(ci/install-numba.sh)
cargo build --quiet -p cumock-driver -p cumock
rm -rf target/numba-logs
# A module may take 900 s: test_ufuncs (about 40 NVVM compiles) took 550 s on 2 cores
# shared with a dozen other jobs.
# Device memory is the host's: a fixed budget, so that a busy CI host's momentary
# shortage of free memory does not fail allocations the suite makes.
CUMOCK_DEVICE_MEMORY=${CUMOCK_DEVICE_MEMORY:-4G} PYTHONUNBUFFERED=1 \
    target/debug/cumock exec -- "$python" clients/numba/suite.py run --modules "$modules" \
    --jobs "${NUMBA_JOBS:-2}" --timeout 900 --json target/numba-results.json --logs target/numba-logs
