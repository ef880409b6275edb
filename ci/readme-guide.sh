#!/usr/bin/env bash
# Runs the README's framework guide: every block fenced as ```sh guide=NAME, as is, in an
# empty folder of its own, with `cumock` (this workspace's debug build) and nvcc on the
# PATH and a virtual environment's python first, as a user who followed "Install" has
# them. ci/test.sh runs it; the closing line counts the blocks.
#   ci/readme-guide.sh             every block
#   ci/readme-guide.sh cudarc,cpp  some
# Each block's output: target/guide-logs/NAME.log.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo build --quiet -p cumock -p cumock-driver -p cumock-cudart || exit 1
nvcc_root=${CUMOCK_NVCC_ROOT:-$(ci/install-nvcc.sh)} || exit 1
venv=target/guide-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" || exit 1
fi
logs=target/guide-logs
rm -rf "$logs" && mkdir -p "$logs"
blocks=$(mktemp -d)
trap 'rm -rf "$blocks"' EXIT
python3 - "$blocks" "${1:-}" <<'PY' || exit 1
import re, sys
out, wanted = sys.argv[1], [w for w in sys.argv[2].split(",") if w]
text = open("README.md").read()
found = re.findall(r"^```sh guide=([\w-]+)\n(.*?)^```$", text, re.M | re.S)
for name, body in found:
    if not wanted or name in wanted:
        open(f"{out}/{name}.sh", "w").write(body)
missing = set(wanted) - {n for n, _ in found}
if missing or not found:
    sys.exit(f"no README block guide={','.join(sorted(missing)) or '*'}")
PY
passed=0 failed=0
for block in "$blocks"/*.sh; do
    name=$(basename "$block" .sh)
    dir=$(mktemp -d)
    start=$SECONDS
    if (cd "$dir" && PATH="$root/$venv/bin:$root/target/debug:$nvcc_root/bin:$PATH" \
        VIRTUAL_ENV="$root/$venv" PIP_DISABLE_PIP_VERSION_CHECK=1 \
        bash -euo pipefail "$block") > "$logs/$name.log" 2>&1; then
        echo "guide $name: ok ($((SECONDS - start)) s)"
        passed=$((passed + 1))
    else
        echo "guide $name: FAILED ($((SECONDS - start)) s); its output:"
        tail -30 "$logs/$name.log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
    rm -rf "$dir"
done
echo "readme guide: $passed passed, $failed failed"
[ "$failed" = 0 ]
