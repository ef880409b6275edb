#!/usr/bin/env bash
# The speed and scale figures of issues 13 and 15 on a GPU runner (no Rust needed): the
# batch pattern (create all, map all, set access on all, unmap all, release all; then
# reserve+free pairs) on the mock and on NVIDIA's driver side by side, three times (each
# alternating three runs of the mock and of the driver, in processes of their own), and a
# soak of an allocator-like workload on each, with the host memory, fds and mappings it
# holds over the run.
#
#   cargo build --release            # where Rust is; carry target/release/{cumock,libcuda.so}
#   ci/gpu-scale.sh OUTDIR [SOAK_SECONDS]
#
# Never runs multicast APIs.
set -uo pipefail
out=${1:?usage: ci/gpu-scale.sh OUTDIR [SOAK_SECONDS]}
soak=${2:-120}
bin=${CUMOCK_BIN:-target/release}
driver=${CUMOCK_REAL_DRIVER:-libcuda.so.1}
mkdir -p "$out"
status=0
step() { echo "== $*" >&2; "$@" || { echo "== failed ($?): $*" >&2; status=1; }; }
nvidia-smi -L > "$out/gpus.txt" 2>&1
nproc > "$out/host.txt"; uptime >> "$out/host.txt"; cat /proc/sys/vm/max_map_count >> "$out/host.txt"; ulimit -n >> "$out/host.txt"
for i in 1 2 3; do
    step "$bin/cumock" bench --driver "$driver" --cycles 500 --copy-mib 64 --many 10000 > "$out/batch-$i.json"
done
step "$bin/cumock" bench --soak "$soak" --driver "$driver" > "$out/soak.json"
# One line per call and run: mock and driver microseconds, and how many times faster.
python3 - "$out" > "$out/summary.txt" <<'PY' || status=1
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/batch-*.json")):
    d = json.load(open(f))
    for call, v in d["batch_side_by_side"].items():
        print(f"{f.rsplit('/', 1)[1]}  {call:40} mock {v['mock_us']:.3f} us  driver {v['driver_us']:.3f} us  {v['mock_faster_by']:.1f}x")
s = json.load(open(sys.argv[1] + "/soak.json"))
for side in ("mock", "driver"):
    r = s[side]
    print(f"soak {side}: {r['seconds']} s, {r['ops']} operations, peak {r['peak_live_mib']} MiB live; peak {r['peak']}; after release {r['after_release_all']}")
PY
cat "$out/summary.txt"
exit $status
