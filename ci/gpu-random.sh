#!/usr/bin/env bash
# Random VMM case files (ci/random-cases.py) on the GPU runner's driver and on the mock,
# compared step by step: sequences nobody wrote by hand, to find where the mock's rules
# and the driver's part.
#   ci/gpu-random.sh OUTDIR        # SEEDS="1 2 3" (default 1-5), CASES (60), STEPS (100)
# OUTDIR/cases/ the case files, OUTDIR/driver/ and OUTDIR/mock/ the transcripts,
# OUTDIR/diff.txt the comparison. CUMOCK_BIN: where cumock and libcuda.so are
# (target/release by default). Never runs multicast APIs (the generator has none).
set -uo pipefail
out=${1:?usage: ci/gpu-random.sh OUTDIR}
cd "$(dirname "$0")/.."
bin=${CUMOCK_BIN:-target/release}
mkdir -p "$out"
for seed in ${SEEDS:-1 2 3 4 5}; do
    python3 ci/random-cases.py "$out/cases" --seed "$seed" --cases "${CASES:-60}" --steps "${STEPS:-100}"
done
# Stdin is /dev/null in both runs: a failed export binds fd 0, and a later import of it
# then reads the same file in both.
"$bin/cumock" record --out "$out/driver" "$out/cases" < /dev/null > "$out/driver.log" 2>&1
"$bin/cumock" record --out "$out/mock" --driver "$bin/libcuda.so" "$out/cases" < /dev/null > "$out/mock.log" 2>&1
"$bin/cumock" diff "$out"/mock/* "$out"/driver/* > "$out/diff.txt" 2>&1
tail -1 "$out/diff.txt"
