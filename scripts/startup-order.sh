#!/usr/bin/env bash
# Writes scripts/startup-order.txt: the functions of the shipped cachesh that run when it starts
# and runs a short script, one symbol a line. The shipped build (Package.swift, CACHESH_STATIC_LIBS)
# links these first, next to each other, so that starting touches a few dozen pages of code
# instead of some hundred spread over 20 MB (each one a page fault). A stale list costs only
# speed: names no longer in the build are skipped.
#
#   scripts/startup-order.sh [CACHESH]     default .build/release/cachesh (make release first)
#
# Needs valgrind. Rebuild with `make release` after changing the list (touch a source of the
# cachesh target: the linker's inputs are not tracked).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.build/release/cachesh}
command -v valgrind >/dev/null || { echo "startup-order.sh: needs valgrind" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/out" \
    "$bin" -c 'put k 1; get k; now' >/dev/null 2>&1
grep -oE '^c?fn=\([0-9]+\) .*' "$work/out" | sed -E 's/^c?fn=\([0-9]+\) //' | LC_ALL=C sort -u >"$work/called"
nm --defined-only "$bin" | awk 'NF == 3 { print $3 }' | LC_ALL=C sort -u >"$work/defined"
LC_ALL=C comm -12 "$work/called" "$work/defined" >"$root/scripts/startup-order.txt"
wc -l <"$root/scripts/startup-order.txt" | xargs echo "startup-order.sh: functions listed:" >&2
