#!/usr/bin/env bash
# The binaries a GPU run carries, built from this checkout and stripped of debug info so
# that they fit the device tool's carry limit with the tree (about 15 MB):
#   ci/pack-gpu-bin.sh            # -> target/gpu-min/{cumock,libcuda.so,libcudart.so,BUILT_FROM}
#   CUMOCK_BIN=$PWD/target/gpu-min ci/gpu-all.sh OUTDIR    # on the GPU runner
# BUILT_FROM names the commit (and a dirty tree): ci/gpu-all.sh copies it into its output,
# so a run made with binaries older than the tree says so.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p cumock -p cumock-driver -p cumock-cudart
mkdir -p target/gpu-min
for f in cumock libcuda.so libcudart.so; do
    objcopy --strip-debug "target/release/$f" "target/gpu-min/$f"
done
{
    git rev-parse HEAD
    git status --porcelain --untracked-files=no | sed 's/^/dirty: /'
} > target/gpu-min/BUILT_FROM
du -sh target/gpu-min
