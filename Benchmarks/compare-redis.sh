#!/usr/bin/env bash
# Batch throughput and start-up of cachesh against redis (redis-cli, plain and --pipe) and sqlite3.
#
#   Benchmarks/compare-redis.sh            100,000 commands (50k put, 50k get)
#   COMMANDS=20000 Benchmarks/compare-redis.sh
#   RUNS=5 STARTUP_RUNS=50 Benchmarks/compare-redis.sh
#   CACHESH_BIN=path/to/cachesh BASELINE_BIN=path/to/old/cachesh Benchmarks/compare-redis.sh
#
# CACHESH_BIN measures that binary instead of building one; BASELINE_BIN measures a second build
# too, in the same run (its rows and ratios follow cachesh's).
#
# Builds cachesh in release (static Swift stdlib), generates equivalent scripts (gen-script.py),
# runs each RUNS times (default 3) with output to /dev/null, and prints the best and median
# commands per second, peak memory and the ratios of the best runs.
# Installs redis-server and sqlite3 with apt-get when missing; starts redis-server on a free
# loopback port without persistence and stops it on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
commands=${COMMANDS:-100000}
runs=${RUNS:-3}
startup_runs=${STARTUP_RUNS:-200}
work=$(mktemp -d)
redis_pid=""

cleanup() {
    if [[ -n "$redis_pid" ]]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

need() {
    # need COMMAND PACKAGE: installs PACKAGE with apt-get when COMMAND is missing.
    command -v "$1" >/dev/null && return
    echo "installing $2 ..." >&2
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq >&2 && $sudo apt-get install -y -qq "$2" >&2
}

if [[ -n "${CACHESH_BIN:-}" ]]; then
    cachesh=$CACHESH_BIN
else
    echo "building cachesh (release, static Swift stdlib) ..." >&2
    (cd "$root" && CACHESH_STATIC_LIBS=$(./scripts/static-libs.sh) swift build -c release --static-swift-stdlib --disable-local-rpath --product cachesh >&2)
    cachesh="$root/.build/release/cachesh"
fi
baseline=${BASELINE_BIN:-}
need redis-server redis-server
need redis-cli redis-tools
need sqlite3 sqlite3

python3 "$here/gen-script.py" generate "$commands" "$work"
# measure BEFORE IN CMD...: best and median seconds, peak kB, exit code of RUNS runs.
measure() { local before=$1 input=$2; shift 2; python3 "$here/gen-script.py" measure "$runs" "$before" "$input" -- "$@"; }
check() { [[ "$2" == 0 ]] || { echo "$1 exited with $2" >&2; exit 1; }; }

# cachesh: one process reads the script and prints every result (to /dev/null).
read -r cachesh_s cachesh_med cachesh_kb rc < <(measure "" - "$cachesh" "$work/bench.cachesh")
check cachesh "$rc"
read -r cachesh_json_s cachesh_json_med cachesh_json_kb rc < <(measure "" - "$cachesh" --json "$work/bench.cachesh")
check "cachesh --json" "$rc"
base_s=0 base_med=0 base_kb=0 base_json_s=0 base_json_med=0 base_json_kb=0
if [[ -n "$baseline" ]]; then
    read -r base_s base_med base_kb rc < <(measure "" - "$baseline" "$work/bench.cachesh")
    check baseline "$rc"
    read -r base_json_s base_json_med base_json_kb rc < <(measure "" - "$baseline" --json "$work/bench.cachesh")
    check "baseline --json" "$rc"
fi

# redis: a fresh server on loopback, no persistence.
port=$(python3 "$here/gen-script.py" freeport)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --loglevel warning \
    >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
rcli() { redis-cli -p "$port" "$@"; }
server_peak_kb() { awk '/VmHWM/ {print $2}' "/proc/$redis_pid/status"; }

flush="redis-cli -p $port flushall"
read -r plain_s plain_med plain_kb rc < <(measure "$flush" "$work/bench.redis" redis-cli -p "$port")
check redis-cli "$rc"
plain_server_kb=$(server_peak_kb)
read -r pipe_s pipe_med pipe_kb rc < <(measure "$flush" "$work/bench.resp" redis-cli -p "$port" --pipe)
check "redis-cli --pipe" "$rc"
pipe_server_kb=$(server_peak_kb)
rcli shutdown nosave >/dev/null 2>&1 || true
wait "$redis_pid" 2>/dev/null || true
redis_pid=""

# Start-up: exec to exit, one run of each in turn (as compare-startup.sh times it).
{ read -r cachesh_start_med cachesh_start_mean cachesh_start_min; read -r sqlite_start_med sqlite_start_mean sqlite_start_min; } \
    < <(python3 "$here/gen-script.py" startup "$startup_runs" -- "$cachesh" -c now -- sqlite3 :memory: 'select 1')

python3 - "$commands" <<EOF
import sys
n = int(sys.argv[1])
rows = [
    ("cachesh FILE (human output)", $cachesh_s, $cachesh_med, $cachesh_kb, None),
    ("cachesh --json FILE", $cachesh_json_s, $cachesh_json_med, $cachesh_json_kb, None),
    ("redis-cli < commands", $plain_s, $plain_med, $plain_kb, $plain_server_kb),
    ("redis-cli --pipe < RESP", $pipe_s, $pipe_med, $pipe_kb, $pipe_server_kb),
]
if $base_s:
    rows[2:2] = [("baseline FILE (human output)", $base_s, $base_med, $base_kb, None),
                 ("baseline --json FILE", $base_json_s, $base_json_med, $base_json_kb, None)]
print(f"\n{n} commands ({n // 2} put / {n - n // 2} get), output to /dev/null, best and median of $runs runs")
print(f"{'run':<30}{'best s':>9}{'commands/s':>12}{'median s':>10}{'commands/s':>12}{'client MB':>11}{'server MB':>11}")
for name, best, median, kb, server in rows:
    server_text = f"{server / 1024:.1f}" if server else "-"
    print(f"{name:<30}{best:>9.3f}{n / best:>12,.0f}{median:>10.3f}{n / median:>12,.0f}{kb / 1024:>11.1f}{server_text:>11}")
cachesh = n / $cachesh_s
print(f"\ncachesh / redis-cli plain: {cachesh / (n / $plain_s):.1f}x  (goal >= 20x)")
print(f"cachesh / redis-cli --pipe: {cachesh / (n / $pipe_s):.2f}x  (goal >= 2x, issue 40)")
print(f"cachesh --json / redis-cli --pipe: {$pipe_s / $cachesh_json_s:.2f}x")
if $base_s:
    print(f"baseline / redis-cli --pipe: {$pipe_s / $base_s:.2f}x human, {$pipe_s / $base_json_s:.2f}x --json")
    print(f"cachesh / baseline: {$base_s / $cachesh_s:.2f}x human, {$base_json_s / $cachesh_json_s:.2f}x --json (best runs)")
print(f"\nstart-up, exec to exit, $startup_runs runs each, alternating (median / mean / min ms):")
print(f"  cachesh -c now              {$cachesh_start_med:7.2f} {$cachesh_start_mean:7.2f} {$cachesh_start_min:7.2f}")
print(f"  sqlite3 :memory: 'select 1' {$sqlite_start_med:7.2f} {$sqlite_start_mean:7.2f} {$sqlite_start_min:7.2f}")
print(f"  ratio (median): {$cachesh_start_med / $sqlite_start_med:.2f}x")
EOF
