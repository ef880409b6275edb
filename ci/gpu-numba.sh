#!/usr/bin/env bash
# numba-cuda's own test suite on the real GPU, recorded for comparison with the mock's
# run (clients/numba/suite.py compare). For the GPU machine, which reaches no registry:
# its image's python3 holds numba, llvmlite, numpy, cuda-bindings, cuda-core and CUDA
# 13.0's toolkit (NVVM); the wheels of ci/pack-numba-gpu.sh add numba-cuda 0.30.4 (the
# version the mock runs) and the suite's helpers.
#
#   here:  ci/pack-numba-gpu.sh                  # writes target/numba-gpu.tar (~2 MiB)
#   there: bash ci/gpu-numba.sh                  # run with carry: ["target/numba-gpu.tar"]
#
# One call starts modules for at most 5.5 minutes, each at most 4 (a call may take 10),
# keeping the results in target/numba-h200: a machine goes back half a minute after its
# last call, so the next call carries that folder back (copy $OUT's files into it here,
# carry ["target/numba-gpu.tar", "target/numba-h200"]) and goes on where it stopped, until
# it says "all modules run". Each call copies everything so far into $OUT: h200.json
# (every test's outcome), run.txt (one line a call), versions.txt, logs.tar (each
# module's output).
# Then, here: python3 clients/numba/suite.py compare clients/numba/expected.txt h200.json
# (kept in runs/DATE-h200-numba/).
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder to record into}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=/tmp/numba-site
state=target/numba-h200
# A warm machine keeps both folders: begin again when the wheels changed.
pack=$(sha256sum < target/numba-gpu.tar)
if [ "$(cat "$state/.pack" 2>/dev/null)" != "$pack" ]; then
    rm -rf "$state" && mkdir -p "$state" && echo "$pack" > "$state/.pack"
fi
if [ "$(cat "$site/.installed" 2>/dev/null)" != "$pack" ]; then
    rm -rf "$site" /tmp/numba-gpu && tar -xf target/numba-gpu.tar -C /tmp || exit 1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$site" /tmp/numba-gpu/*.whl || exit 1
    # numba-cuda makes itself numba.cuda through a .pth file, which Python reads in
    # site directories only, not in PYTHONPATH's: make this folder one.
    printf 'import os, site\nsite.addsitedir(os.path.dirname(os.path.abspath(__file__)))\n' \
        > "$site/sitecustomize.py"
    echo "$pack" > "$site/.installed"
fi
export PYTHONPATH=$site
{
    nvidia-smi -L
    python3 --version
    python3 -m pip list 2>/dev/null | grep -iE '^(numba|numba-cuda|llvmlite|numpy|cuda-bindings|cuda-core|cuda-pathfinder|nvidia-nvjitlink|nvidia-nvvm|nvidia-cuda-nvrtc|cffi|filecheck) '
    python3 -c 'import numba_cuda, numba.cuda; print("numba_cuda", numba_cuda.__version__, numba_cuda.__file__); print("numba.cuda", numba.cuda.__file__)'
    python3 -c 'from numba.cuda.cudadrv.driver import _have_nvjitlink; print("links with nvJitLink:", _have_nvjitlink())'
    python3 -c 'from numba.cuda.cudadrv import nvvm; print("NVVM", nvvm.NVVM().get_version())'
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
grep -q "^numba_cuda 0.30.4 $site" "$OUT/versions.txt" || { echo "numba-cuda 0.30.4 from $site is not the one imported"; exit 1; }
python3 -c 'import cuda.bindings, cuda.core, importlib.metadata as m; print(m.version("cuda-bindings"), cuda.bindings.__file__, "cuda-core", m.version("cuda-core"), cuda.core.__file__, "numpy", m.version("numpy"))' | tee -a "$OUT/versions.txt" \
    | grep -q "^13.0.3 $site" || { echo "cuda-bindings 13.0.3 from $site is not the one imported"; exit 1; }
PYTHONUNBUFFERED=1 python3 clients/numba/suite.py run --modules all --jobs 12 --timeout 240 \
    --budget 330 --resume --json "$state/h200.json" --logs "$state/logs" --expected /dev/null \
    | tee "$state/last.txt"
cat "$state/last.txt" >> "$state/run.txt"
cp "$state/h200.json" "$state/run.txt" "$OUT/"
tar -cf "$OUT/logs.tar" -C "$state" logs
if grep -q "modules not run" "$state/last.txt"; then
    echo "more modules to run: call ci/gpu-numba.sh again"
else
    echo "all modules run"
fi
