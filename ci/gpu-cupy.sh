#!/usr/bin/env bash
# CuPy's own test suite on the real GPU, the official cupy-cuda13x 14.2.0 wheel, recorded
# for comparison with the mock's run (which runs CuPy 14.2.0 built from its sdist against
# cumock's runtime: ci/install-cupy.sh says why). For the GPU machine:
#
#   here:  ci/install-cupy.sh && ci/pack-cupy-gpu.sh   # target/cupy-gpu.tar.0 and .1
#   there: call 1 with carry ["target/cupy-gpu.tar.0"]: `true` (the part stays while warm)
#          call 2 with carry ["target/cupy-gpu.tar.1", "target/cupy-h200"]: bash ci/gpu-cupy.sh
#          (again, with $OUT's files copied into target/cupy-h200, until "all modules run")
#
# Each call starts modules for at most 5.5 minutes and copies into $OUT: h200.json (every
# test's outcome, clients/cupy/suite.py's format), run.txt, versions.txt, logs.tar.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder to record into}"
export NCCL_NVLS_ENABLE=0 CUPY_TEST_GPU_LIMIT=1
site=/tmp/cupy-site
state=target/cupy-h200
if [ ! -d /tmp/cupy-gpu ]; then
    [ -f target/cupy-gpu.tar.0 ] && [ -f target/cupy-gpu.tar.1 ] \
        || { echo "carry target/cupy-gpu.tar.0 and .1 (two calls: ci/pack-cupy-gpu.sh)"; exit 1; }
    cat target/cupy-gpu.tar.0 target/cupy-gpu.tar.1 | tar -xf - -C /tmp || exit 1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$site" /tmp/cupy-gpu/*.whl || exit 1
fi
mkdir -p "$state"
export PYTHONPATH=$site
{
    nvidia-smi -L
    python3 --version
    python3 -c 'import cupy; cupy.show_config()'
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
PYTHONUNBUFFERED=1 python3 clients/cupy/suite.py run --modules all \
    --tests /tmp/cupy-gpu/tests-root/tests --jobs 8 --timeout 240 --budget 330 --resume \
    --json "$state/h200.json" --logs "$state/logs" --expected /dev/null | tee "$state/last.txt"
cat "$state/last.txt" >> "$state/run.txt"
cp "$state/h200.json" "$state/run.txt" "$OUT/"
tar -cf "$OUT/logs.tar" -C "$state" logs
if grep -q "modules not run" "$state/last.txt"; then
    echo "more modules to run: call ci/gpu-cupy.sh again"
else
    echo "all modules run"
fi
