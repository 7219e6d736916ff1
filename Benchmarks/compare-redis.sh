#!/usr/bin/env bash
# Batch throughput and start-up of cachesh against redis (redis-cli, plain and --pipe) and sqlite3.
#
#   Benchmarks/compare-redis.sh            100,000 commands (50k put, 50k get)
#   COMMANDS=20000 Benchmarks/compare-redis.sh
#   RUNS=7 STARTUP_RUNS=50 INSTRUCTIONS=0 Benchmarks/compare-redis.sh
#   CACHESH_BIN=path/to/cachesh BASELINE_BIN=path/to/old/cachesh Benchmarks/compare-redis.sh
#
# CACHESH_BIN measures that binary instead of building one; BASELINE_BIN measures a second build
# too, in the same run (its rows and ratios follow cachesh's).
#
# Builds cachesh in release (static Swift stdlib), generates equivalent scripts (gen-script.py),
# runs the batch RUNS times (default 5) with output to /dev/null, cachesh, the baseline and
# redis-cli --pipe one after the other in each round, and prints the best and median commands per
# second, peak memory and the ratios of the medians and of the best runs. Then, unless
# INSTRUCTIONS=0, the instructions per command under callgrind of each cachesh run and of
# redis-server plus redis-cli --pipe, which do not move with the machine's load.
# Installs redis-server, sqlite3 (and valgrind, for the counts) with apt-get when missing; starts
# redis-server on a free loopback port without persistence and stops it on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
commands=${COMMANDS:-100000}
runs=${RUNS:-5}
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
for bin in "$cachesh" $baseline; do
    [[ -x "$bin" ]] || { echo "compare-redis.sh: $bin is not an executable (CACHESH_BIN, BASELINE_BIN)" >&2; exit 2; }
done
need redis-server redis-server
need redis-cli redis-tools
need sqlite3 sqlite3

python3 "$here/gen-script.py" generate "$commands" "$work"
# measure BEFORE IN CMD...: best and median seconds, peak kB, exit code of RUNS runs.
measure() { local before=$1 input=$2; shift 2; python3 "$here/gen-script.py" measure "$runs" "$before" "$input" -- "$@"; }
check() { [[ "$2" == 0 ]] || { echo "$1 exited with $2" >&2; exit 1; }; }

# redis: a fresh server on loopback, no persistence.
port=$(python3 "$here/gen-script.py" freeport)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --loglevel warning \
    >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
server_peak_kb() { awk '/VmHWM/ {print $2}' "/proc/$redis_pid/status"; }
flush="redis-cli -p $port flushall"

# The batch: cachesh (one process reads the script and prints every result), the baseline build
# if given, and redis-cli --pipe (the server emptied first), one run of each in turn for RUNS
# rounds, so that a change in the machine's speed falls on all of them alike.
python3 - "$work" "$cachesh" "$baseline" "$flush" "$port" <<'EOF_SPEC'
import json, sys
work, cachesh, baseline, flush, port = sys.argv[1:]
script = f"{work}/bench.cachesh"
runs = [{"cmd": [cachesh, script]}, {"cmd": [cachesh, "--json", script]}]
if baseline:
    runs += [{"cmd": [baseline, script]}, {"cmd": [baseline, "--json", script]}]
runs.append({"before": flush, "stdin": f"{work}/bench.resp", "cmd": ["redis-cli", "-p", port, "--pipe"]})
json.dump(runs, open(f"{work}/rounds.json", "w"))
EOF_SPEC
{
    read -r cachesh_s cachesh_med cachesh_kb rc; check cachesh "$rc"
    read -r cachesh_json_s cachesh_json_med cachesh_json_kb rc; check "cachesh --json" "$rc"
    base_s=0 base_med=0 base_kb=0 base_json_s=0 base_json_med=0 base_json_kb=0
    if [[ -n "$baseline" ]]; then
        read -r base_s base_med base_kb rc; check baseline "$rc"
        read -r base_json_s base_json_med base_json_kb rc; check "baseline --json" "$rc"
    fi
    read -r pipe_s pipe_med pipe_kb rc; check "redis-cli --pipe" "$rc"
} < <(python3 "$here/gen-script.py" rounds "$runs" "$work/rounds.json")
pipe_server_kb=$(server_peak_kb)

# redis-cli reading commands from stdin, one round trip each (issue 19's goal): its own runs.
read -r plain_s plain_med plain_kb rc < <(measure "$flush" "$work/bench.redis" redis-cli -p "$port")
check redis-cli "$rc"
plain_server_kb=$(server_peak_kb)
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait "$redis_pid" 2>/dev/null || true
redis_pid=""

# Instructions per command (callgrind), which do not depend on the machine's load: each cachesh
# run, and redis-server plus redis-cli --pipe (each on a server of its own under valgrind), all
# less a run of an empty input. INSTRUCTIONS=0 skips them (they take about a minute).
ins_cachesh=0 ins_json=0 ins_base=0 ins_base_json=0 ins_server=0 ins_client=0
if [[ "${INSTRUCTIONS:-1}" != 0 ]]; then
    need valgrind valgrind
    need objcopy binutils
    echo "counting instructions under valgrind ..." >&2
    ins_runs=("$cachesh" "$cachesh --json")
    [[ -n "$baseline" ]] && ins_runs+=("$baseline" "$baseline --json")
    {
        read -r ins_cachesh; read -r ins_json
        if [[ -n "$baseline" ]]; then read -r ins_base; read -r ins_base_json; fi
        read -r ins_server; read -r ins_client
    } < <(python3 "$here/gen-script.py" instructions "$work" "$commands" "$(python3 "$here/gen-script.py" freeport)" "${ins_runs[@]}")
fi

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
print(f"\n{n} commands ({n // 2} put / {n - n // 2} get), output to /dev/null, best and median of $runs runs (the batch runs interleaved)")
print(f"{'run':<30}{'best s':>9}{'commands/s':>12}{'median s':>10}{'commands/s':>12}{'client MB':>11}{'server MB':>11}")
for name, best, median, kb, server in rows:
    server_text = f"{server / 1024:.1f}" if server else "-"
    print(f"{name:<30}{best:>9.3f}{n / best:>12,.0f}{median:>10.3f}{n / median:>12,.0f}{kb / 1024:>11.1f}{server_text:>11}")
print(f"\ncachesh / redis-cli plain: {$plain_med / $cachesh_med:.1f}x median  (goal >= 20x, issue 19)")
print(f"cachesh / redis-cli --pipe: {$pipe_med / $cachesh_med:.2f}x median of $runs interleaved runs, {$pipe_s / $cachesh_s:.2f}x best  (goal >= 2x, issue 40)")
print(f"cachesh --json / redis-cli --pipe: {$pipe_med / $cachesh_json_med:.2f}x median, {$pipe_s / $cachesh_json_s:.2f}x best")
if $base_s:
    print(f"baseline / redis-cli --pipe: {$pipe_med / $base_med:.2f}x human, {$pipe_med / $base_json_med:.2f}x --json (medians)")
    print(f"cachesh / baseline: {$base_med / $cachesh_med:.2f}x human, {$base_json_med / $cachesh_json_med:.2f}x --json (medians)")
if $ins_server:
    redis = $ins_server + $ins_client
    print(f"\ninstructions per command (callgrind, less an empty input's run):")
    print(f"  cachesh FILE (human output)   {$ins_cachesh:>7,}   {$ins_cachesh / redis:.2f}x redis's")
    print(f"  cachesh --json FILE           {$ins_json:>7,}   {$ins_json / redis:.2f}x redis's")
    if $base_s:
        print(f"  baseline FILE (human output)  {$ins_base:>7,}   {$ins_base / redis:.2f}x redis's")
        print(f"  baseline --json FILE          {$ins_base_json:>7,}   {$ins_base_json / redis:.2f}x redis's")
    print(f"  redis-server + redis-cli --pipe {redis:>5,}   ({$ins_server:,} + {$ins_client:,}; two processes on two cores, the socket's kernel work not counted)")
print(f"\nstart-up, exec to exit, $startup_runs runs each, alternating (median / mean / min ms):")
print(f"  cachesh -c now              {$cachesh_start_med:7.2f} {$cachesh_start_mean:7.2f} {$cachesh_start_min:7.2f}")
print(f"  sqlite3 :memory: 'select 1' {$sqlite_start_med:7.2f} {$sqlite_start_mean:7.2f} {$sqlite_start_min:7.2f}")
print(f"  ratio (median): {$cachesh_start_med / $sqlite_start_med:.2f}x")
EOF
