#!/usr/bin/env bash
# NVIDIA's cuda-python test suites on the real GPU, for the baseline the mock's run is
# compared with (clients/cuda-python/suite.py's format). For the GPU machine:
#
#   here:  ci/fetch-cuda-python-tests.sh && ci/pack-cuda-python-gpu.sh
#   there: carry ["target/cuda-python-gpu.tar"]: bash ci/gpu-cuda-python.sh
#
# The same modules, versions and runner as the mock's run, against the real driver (no
# cumock exec). The SASS tests the mock refuses by design pass here; the static
# runtime's (cuda.bindings.runtime) too. Copies into $OUT: h200.json, run.txt,
# versions.txt, logs.tar. Then, here:
#   python3 clients/cuda-python/suite.py compare runs/<date>-h200-cuda-python/h200.json
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder to record into}"
export NCCL_NVLS_ENABLE=0
work=/tmp/cuda-python-gpu
site=/tmp/cuda-python-site
if [ ! -d "$work" ]; then
    [ -f target/cuda-python-gpu.tar ] || { echo "carry target/cuda-python-gpu.tar (ci/pack-cuda-python-gpu.sh)"; exit 1; }
    tar -xf target/cuda-python-gpu.tar -C /tmp || exit 1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$site" "$work"/wheels/*.whl || exit 1
fi
export PYTHONPATH=$site
{
    nvidia-smi -L
    python3 --version
    python3 -c 'import cuda.core, cuda.bindings; print("cuda-core", cuda.core.__version__, "cuda-bindings", cuda.bindings.__version__)'
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
PYTHONUNBUFFERED=1 python3 "$work/cuda-python/suite.py" run --modules all \
    --tree "$work/tests" --timeout 300 --json "$OUT/h200.json" --logs /tmp/cuda-python-logs \
    --expected /dev/null | tee "$OUT/run.txt"
tar -cf "$OUT/logs.tar" -C /tmp cuda-python-logs
