#!/usr/bin/env bash
# The cost of `--store` (SPEC §5.3), each figure beside a baseline measured in the same run:
#
#   1. N `put` commands in batch with `--store` against the same commands without it (issue 40's
#      goal: <= 1.3x);
#   2. cold start on a store of M entries (open, first `get`, exit) against `sqlite3` reading every
#      column of every row of the same entries table in recency order, the order the cache takes
#      them in (goal <= 1.5x), and the peak memory of that start (goal < 250 MB); beside it, the
#      same against `sqlite3` reading the rows unsorted, in the table's order;
#   3. with BASELINE_BIN set (a release cachesh built from another commit, say main before a
#      change), the same figures for it, on a store it wrote itself.
#
#   Benchmarks/store-bench.sh [N] [M]      (defaults 100000 and 1000000; run from the package root)
#
# Uses the release binary (`swift build -c release --product cachesh`). Each time is the best of
# RUNS runs (default 3); every put run starts from a new file.
set -euo pipefail
N=${1:-100000}
M=${2:-1000000}
RUNS=${RUNS:-3}
BIN=${CACHESH_BIN:-.build/release/cachesh}
BASE=${BASELINE_BIN:-}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
command -v sqlite3 > /dev/null || { echo "store-bench: needs sqlite3 (apt-get install sqlite3)" >&2; exit 2; }

python3 - "$N" "$DIR/puts.cachesh" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
namespaces = ["feed", "profile", "page"]
with open(path, "w") as f:
    for i in range(n):
        f.write(f'put {namespaces[i % 3]}:{i % 50000} {{"id":{i},"text":"item {i}"}}\n')
PY
python3 - "$M" "$DIR/fill.cachesh" <<'PY'
import sys
m, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write("ns feed ttl=1d\n")
    for i in range(m):
        f.write(f'put feed:{i} {{"id":{i},"text":"item {i}"}}\n')
PY

# Wall time in seconds, peak resident memory in kB and CPU time (user + system) in seconds of one
# run of "$@" (output discarded).
timed() {
    local start end
    start=$(date +%s.%N)
    /usr/bin/time -f '%M %U %S' -o "$DIR/rss" "$@" > "$DIR/out" 2>&1
    end=$(date +%s.%N)
    read -r kb user system < "$DIR/rss"
    echo "$(echo "$end - $start" | bc -l) $kb $(echo "$user + $system" | bc -l)"
}

# Best wall time of RUNS runs of "$@", each after `rm -f $FRESH*` when FRESH is set, with that
# run's peak memory, and the least CPU time of the runs; prints "seconds kB cpu-seconds". On
# shared cores the CPU time is the steadier figure: other processes stretch the wall time only.
best() {
    local best="" rss="" cpu=""
    for _ in $(seq "$RUNS"); do
        if [[ -n "${FRESH:-}" ]]; then rm -f "$FRESH"*; fi
        read -r t m c < <(timed "$@")
        if [[ -z "$best" ]] || (( $(echo "$t < $best" | bc -l) )); then best=$t; rss=$m; fi
        if [[ -z "$cpu" ]] || (( $(echo "$c < $cpu" | bc -l) )); then cpu=$c; fi
    done
    echo "$best $rss $cpu"
}

ratio() { echo "$1 / $2" | bc -l; }

report() { # report NAME BIN
    local name=$1 bin=$2 plain stored plaincpu storedcpu cold coldrss scan db="$DIR/big-$1.db"
    read -r plain _ plaincpu < <(FRESH="$DIR/s.db" best "$bin" "$DIR/puts.cachesh")
    read -r stored _ storedcpu < <(FRESH="$DIR/s.db" best "$bin" --store "$DIR/s.db" "$DIR/puts.cachesh")
    printf '%-9s %d put commands: without store %.3f s (%.0f/s), with --store %.3f s (%.0f/s): %.2fx (goal <= 1.3x); CPU %.3f s against %.3f s: %.2fx\n' \
        "$name" "$N" "$plain" "$(ratio "$N" "$plain")" "$stored" "$(ratio "$N" "$stored")" "$(ratio "$stored" "$plain")" \
        "$storedcpu" "$plaincpu" "$(ratio "$storedcpu" "$plaincpu")"

    rm -f "$db"*
    "$bin" --store "$db" "$DIR/fill.cachesh" > /dev/null
    local size columns
    size=$(du -h "$db" | cut -f1)
    # Every column of every entry row, in the order cachesh loads them (schemas 8 and 9: the id, key,
    # recency, value and the `fields` BLOB, which holds the times, sequence numbers, tags and extra;
    # a store written by an older BASELINE_BIN may have them in columns of their own).
    columns=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('entries')")
    read -r scan _ scancpu < <(best sqlite3 "$db" "SELECT $columns FROM entries ORDER BY recency")
    # The same rows in the table's own order (no sort): what cachesh reads where every namespace
    # is LRU, ordering the stamps itself. The goal's baseline is the one above (the rows in the
    # order the cache needs them); this one is printed beside it.
    read -r tablescan _ tablescancpu < <(best sqlite3 "$db" "SELECT $columns FROM entries")
    read -r cold coldrss coldcpu < <(best "$bin" --store "$db" -c "get feed:$((M / 2))")
    grep -q '"id":' "$DIR/out" || { echo "store-bench: the first get found nothing: $(cat "$DIR/out")" >&2; exit 1; }
    printf '%-9s cold start on %d entries (%s): %.3f s, sqlite3 reading the rows %.3f s: %.2fx (goal <= 1.5x); CPU %.3f s against %.3f s: %.2fx; peak %.0f MB (goal < 250)\n' \
        "$name" "$M" "$size" "$cold" "$scan" "$(ratio "$cold" "$scan")" "$coldcpu" "$scancpu" "$(ratio "$coldcpu" "$scancpu")" "$(ratio "$coldrss" 1000)"
    printf '%-9s   against sqlite3 reading them unsorted (table order) %.3f s: %.2fx; CPU %.3f s: %.2fx\n' \
        "$name" "$tablescan" "$(ratio "$cold" "$tablescan")" "$tablescancpu" "$(ratio "$coldcpu" "$tablescancpu")"
}

report this "$BIN"
if [[ -n "$BASE" ]]; then report baseline "$BASE"; fi
