#!/usr/bin/env bash
# CuPy 14.2.0 and what its test suite needs into a virtual environment under target/
# (once; prints the environment's python), and CuPy's own tests (its sdist's tests/ and
# pytest settings) into target/cupy-tests.
#
# Why CuPy is built here from its sdist and not installed as the cupy-cuda13x wheel: the
# wheel links NVIDIA's static CUDA runtime (libcudart_static) into
# cupy_backends.cuda.api.runtime, cupy.cuda.cub and cupy.cuda.thrust; that runtime asks
# the driver for its private export tables (cuGetExportTable), which cumock does not
# imitate, so the wheel's first runtime call answers cudaErrorNotSupported
# (docs/frameworks/cupy.md). CuPy's build names libcudart_static.a by path
# (install/cupy_builder); here that path holds cumock's shared libcudart.so, so the same
# source, unchanged, links the shared runtime (NEEDED libcudart.so.13), which
# `cumock exec` resolves to cumock's. Also:
#  - CUPY_NVCC_GENERATE_CODE=arch=compute_90,code=compute_90: the CUB and Thrust kernels
#    CuPy precompiles (cupy.cuda.cub, cupy.cuda.thrust) are PTX, which the mock runs,
#    not SASS.
#  - cuBLAS, cuFFT, cuRAND, cuSPARSE, cuSOLVER: their wheels are fetched for their
#    headers only (CuPy's build requires them); the libraries linked are empty stand-ins
#    with their sonames, and --as-needed drops them, so CuPy's bindings of those libraries
#    do not load (their kernels are SASS: out of the mock's reach whatever CuPy does).
# The build takes tens of minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/cupy-venv
stamp=$venv/.cumock-installed-2
version=14.2.0
if [ ! -f "$stamp" ]; then
    cargo build --quiet -p cumock-driver -p cumock-cudart -p cumock
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    pip=("$venv/bin/pip" --quiet --disable-pip-version-check --no-cache-dir)
    "${pip[@]}" install 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' \
        'nvidia-cuda-cccl==13.0.*' 'numpy>=2,<2.5' 'fastrlock>=0.5' 'cuda-pathfinder' \
        pytest >&2
    work=target/cupy-build
    rm -rf "$work" && mkdir -p "$work/math" "$work/root/lib64" "$work/root/include"
    "${pip[@]}" download --no-deps --only-binary :all: -d "$work/math" \
        'nvidia-cublas==13.0.*' 'nvidia-cufft==12.0.*' 'nvidia-curand==10.4.0.*' \
        'nvidia-cusparse==12.6.*' 'nvidia-cusolver==12.0.*' >&2
    for w in "$work"/math/*.whl; do
        # Their headers only (the libraries are GiBs and SASS).
        python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if "/include/" in n])' \
            "$w" "$work/math/x"
    done
    # The headers stay (linked into the CUDA root below) until the build is done.
    rm -f "$work"/math/*.whl
    # A CUDA root for CuPy's build: the toolkit nvcc (ci/install-nvcc.sh), headers from
    # the toolkit, NVRTC's package and the math libraries' packages, cumock's runtime.
    toolkit=$(ci/install-nvcc.sh)
    root="$PWD/$work/root"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    ln -sfn "$toolkit/bin" "$root/bin"
    ln -sfn "$toolkit/nvvm" "$root/nvvm"
    for f in "$toolkit"/include/* "$work"/math/x/nvidia/cu13/include/* \
        "$site/nvidia/cu13/include/nvrtc.h" target/cuda-profiler-api/nvidia/cu13/include/*; do
        ln -sfn "$(readlink -f "$f")" "$root/include/"
    done
    cp target/debug/libcudart.so "$root/lib64/libcudart.so"
    ln -sfn libcudart.so "$root/lib64/libcudart_static.a"
    cp target/debug/libcuda.so "$root/lib64/libcuda.so"
    ln -sfn "$site/nvidia/cu13/lib/libnvrtc.so.13" "$root/lib64/libnvrtc.so"
    echo > "$work/empty.c"
    for l in cublas:13 cufft:12 curand:10 cusparse:12 cusolver:12; do
        gcc -shared -o "$root/lib64/lib${l%:*}.so" -Wl,-soname,"lib${l%:*}.so.${l#*:}" \
            "$work/empty.c"
    done
    export PATH="$root/bin:$PATH" CUDA_PATH="$root" NVCC="$root/bin/nvcc" \
        CUPY_NVCC_GENERATE_CODE="arch=compute_90,code=compute_90" \
        CUPY_NUM_BUILD_JOBS="${CUPY_NUM_BUILD_JOBS:-2}" CUPY_INSTALL_NO_RPATH=1 \
        LDFLAGS="-L$root/lib64 -Wl,--as-needed"
    # pip download prepares the sdist's metadata, which runs CuPy's build configuration:
    # it needs the CUDA root above.
    "${pip[@]}" download --no-deps --no-binary cupy -d "$work" "cupy==$version" >&2
    "${pip[@]}" install --no-deps "$work/cupy-$version.tar.gz" >&2
    tar -xzf "$work/cupy-$version.tar.gz" -C "$work"
    # CuPy's own tests and pytest settings, as its sdist ships them.
    rm -rf target/cupy-tests && mkdir -p target/cupy-tests
    cp -r "$work/cupy-$version/tests" "$work/cupy-$version/pyproject.toml" target/cupy-tests/
    rm -rf "$work"
    touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
