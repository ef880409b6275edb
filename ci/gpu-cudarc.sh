#!/usr/bin/env bash
# cudarc's own unit tests on the real GPU, for the baseline the mock's run is compared
# with (clients/cudarc/suite.py's format). For the GPU machine:
#
#   here:  ci/pack-cudarc-gpu.sh
#   there: carry ["target/cudarc-gpu.tar.xz"]: bash ci/gpu-cudarc.sh
#
# The same binary, NVRTC and runner as the mock's run (ci/cudarc-suite.sh), against the
# system's driver; every test, the slow ones too, and the two-GPU ones where the machine
# has two GPUs (nvidia-h200-x2). Copies into $OUT: h200.json, run.txt, versions.txt,
# logs.tar. Then, here:
#   python3 clients/cudarc/suite.py compare runs/<date>-h200-cudarc/h200.json
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder to record into}"
export NCCL_NVLS_ENABLE=0
work=/tmp/cudarc-gpu
if [ ! -x "$work/cudarc-tests" ]; then
    [ -f target/cudarc-gpu.tar.xz ] || { echo "carry target/cudarc-gpu.tar.xz (ci/pack-cudarc-gpu.sh)"; exit 1; }
    if command -v xz > /dev/null; then
        xz -dc target/cudarc-gpu.tar.xz | tar -xf - -C /tmp || exit 1
    else
        python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall("/tmp")' \
            target/cudarc-gpu.tar.xz || exit 1
    fi
fi
gpus=$(nvidia-smi -L | grep -c '^GPU ')
{
    nvidia-smi -L
    nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
    ldd --version | head -1
    echo "NVRTC: $(ls "$work/lib")"
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
multi=()
[ "$gpus" -ge 2 ] && multi=(--multi-gpu "")
LD_LIBRARY_PATH=$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONUNBUFFERED=1 \
    python3 clients/cudarc/suite.py run --binary "$work/cudarc-tests" --tests all "${multi[@]}" \
    --jobs 1 --timeout 300 --json "$OUT/h200.json" --logs /tmp/cudarc-logs \
    --expected /dev/null | tee "$OUT/run.txt"
tar -cf "$OUT/logs.tar" -C /tmp cudarc-logs
