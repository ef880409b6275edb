#!/usr/bin/env bash
# Builds the cumock wheel into OUTDIR (default target/wheels): the libraries are built
# with cargo and laid out as the wheel's data (<prefix>/lib/cumock/), then maturin builds
# the `cumock` binary and packs it with the Python package.
#   python/build-wheel.sh [OUTDIR] [--profile dev|release]   (release by default)
# Needs Rust and maturin (`pip install maturin`); MATURIN names another maturin.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/wheels
profile=release
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="$2"; shift 2 ;;
        *) out="$1"; shift ;;
    esac
done
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
crates=(-p cumock-driver)
# cumock's own CUDA runtime, when the workspace has it.
if cargo metadata --no-deps --format-version 1 | grep -q '"name":"cumock-cudart"'; then
    crates+=(-p cumock-cudart)
fi
cargo build --quiet --profile "$profile" "${crates[@]}"
data=target/wheel-data/data/lib/cumock
rm -rf target/wheel-data && mkdir -p "$data"
# Wheels hold no links: both names of each library are copies. Debug information is
# dropped (the call sites in leak reports are the program's frames, not the mock's).
install -m 755 "target/$dir/libcuda.so" "$data/libcuda.so.1"
strip --strip-debug "$data/libcuda.so.1"
cp "$data/libcuda.so.1" "$data/libcuda.so"
if [ -f "target/$dir/libcudart.so" ]; then
    install -m 755 "target/$dir/libcudart.so" "$data/libcudart.so.13"
    strip --strip-debug "$data/libcudart.so.13"
    cp "$data/libcudart.so.13" "$data/libcudart.so"
fi
out=$(realpath -m "$out")
(cd python && "${MATURIN:-maturin}" build --quiet --profile "$profile" --out "$out" >&2)
ls "$out"/cumock-*.whl
