#!/usr/bin/env bash
# NVIDIA's cuda-python test suites, which no registry package holds (the wheels ship no
# tests and there is no sdist), from github.com/NVIDIA/cuda-python into TREE (default
# target/cuda-python-tests), laid out as the repository is: cuda_core/tests and
# cuda_python_test_helpers at the tag of the cuda-core the mock's run installs
# (cuda-core-v1.2.2), cuda_bindings/tests at cuda-bindings' (v13.0.3). Never committed
# (their code is NVIDIA's): clients/cuda-python/expected.txt lists the outcomes only.
# Needs git and github.com; a machine without them takes the tree from one that has them.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-target/cuda-python-tests}
core_tag=${CUDA_CORE_TAG:-cuda-core-v1.2.2}
bindings_tag=${CUDA_BINDINGS_TAG:-v13.0.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() { # TAG DIR: a shallow, sparse clone of the repository at TAG
    git clone --quiet --depth 1 --branch "$1" --filter=blob:none --sparse \
        https://github.com/NVIDIA/cuda-python "$2" || return 1
    git -C "$2" sparse-checkout set cuda_core/tests cuda_bindings/tests cuda_python_test_helpers
}
fetch "$core_tag" "$tmp/core" && fetch "$bindings_tag" "$tmp/bindings" || {
    echo "could not fetch the tests from github.com; fetch them where it answers and" \
        "give the tree as CUDA_PYTHON_TESTS (docs/frameworks/cuda-python.md)" >&2
    exit 1
}
rm -rf "$tree" && mkdir -p "$tree"
cp -r "$tmp/core/cuda_core" "$tree/"
[ -d "$tmp/core/cuda_python_test_helpers" ] && cp -r "$tmp/core/cuda_python_test_helpers" "$tree/"
mkdir -p "$tree/cuda_bindings" && cp -r "$tmp/bindings/cuda_bindings/tests" "$tree/cuda_bindings/"
echo "$tree: cuda_core/tests at $core_tag, cuda_bindings/tests at $bindings_tag"
