#!/usr/bin/env bash
# The cost of `--store` (SPEC §5.3): N `put` commands in batch with and without the store, and
# the time to open a store of M entries and answer the first `get`.
#
#   Benchmarks/store-bench.sh [N] [M]      (defaults 100000 and 1000000; run from the package root)
#
# Uses the release binary (`swift build -c release --product cachesh`). Each figure is the best of
# 3 runs; every store run starts from a new file.
set -euo pipefail
N=${1:-100000}
M=${2:-1000000}
BIN=${CACHESH_BIN:-.build/release/cachesh}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

python3 - "$N" "$DIR/puts.cachesh" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
namespaces = ["feed", "profile", "page"]
with open(path, "w") as f:
    for i in range(n):
        f.write(f'put {namespaces[i % 3]}:{i % 50000} {{"id":{i},"text":"item {i}"}}\n')
PY

best() { # best wall time in seconds of 3 runs of "$@" (a fresh store before each)
    local best=""
    for _ in 1 2 3; do
        rm -f "$DIR"/s.db*
        local start end t
        start=$(date +%s.%N)
        "$@" > /dev/null
        end=$(date +%s.%N)
        t=$(echo "$end - $start" | bc -l)
        if [[ -z "$best" ]] || (( $(echo "$t < $best" | bc -l) )); then best=$t; fi
    done
    echo "$best"
}

plain=$(best "$BIN" "$DIR/puts.cachesh")
stored=$(best "$BIN" --store "$DIR/s.db" "$DIR/puts.cachesh")
printf '%d put commands:   without store %.3f s (%.0f/s)   with --store %.3f s (%.0f/s)   ratio %.2fx\n' \
    "$N" "$plain" "$(echo "$N / $plain" | bc -l)" "$stored" "$(echo "$N / $stored" | bc -l)" "$(echo "$stored / $plain" | bc -l)"

python3 - "$M" "$DIR/fill.cachesh" <<'PY'
import sys
m, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write("ns feed ttl=1d\n")
    for i in range(m):
        f.write(f'put feed:{i} {{"id":{i},"text":"item {i}"}}\n')
PY
rm -f "$DIR"/big.db*
"$BIN" --store "$DIR/big.db" "$DIR/fill.cachesh" > /dev/null
size=$(du -h "$DIR/big.db" | cut -f1)
cold=""
for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$BIN" --store "$DIR/big.db" -c "get feed:$((M / 2))" > /dev/null
    end=$(date +%s.%N)
    t=$(echo "$end - $start" | bc -l)
    if [[ -z "$cold" ]] || (( $(echo "$t < $cold" | bc -l) )); then cold=$t; fi
done
printf 'cold start, store of %d entries (%s): open and first get %.3f s\n' "$M" "$size" "$cold"
