#!/usr/bin/env bash
# Compares two sets of ci/gpu-random-graphs.sh transcripts (the mock's and a driver's):
# per seed, the first line that differs, or "same".
#   ci/diff-random-graphs.sh MOCKDIR DRIVERDIR
set -uo pipefail
a=${1:?usage: ci/diff-random-graphs.sh MOCKDIR DRIVERDIR}
b=${2:?usage: ci/diff-random-graphs.sh MOCKDIR DRIVERDIR}
same=0 differ=0
for f in $(ls "$b" | grep -E '^[0-9]+\.txt$' | sort -n); do
    seed=${f%.txt}
    if [ ! -f "$a/$f" ]; then
        echo "seed $seed: missing in $a"
        differ=$((differ + 1))
        continue
    fi
    first=$(cmp "$a/$f" "$b/$f" 2>&1 | awk '/differ/ {print $NF}; /EOF/ {print "eof"}')
    if [ -z "$first" ]; then
        same=$((same + 1))
        continue
    fi
    differ=$((differ + 1))
    n=$(diff "$a/$f" "$b/$f" | awk -F'[a-z,]' 'NR==1 {print $1; exit}')
    echo "seed $seed: first difference at line $n"
    echo "  mock:   $(sed -n "${n}p" "$a/$f")"
    echo "  driver: $(sed -n "${n}p" "$b/$f")"
done
echo "same=$same differ=$differ"
