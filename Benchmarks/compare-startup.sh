#!/usr/bin/env bash
# Start-up of the shipped cachesh (make release) against sqlite3, in the same run.
#
#   Benchmarks/compare-startup.sh              200 runs of each, interleaved
#   STARTUP_RUNS=50 Benchmarks/compare-startup.sh
#   CACHESH=path/to/cachesh Benchmarks/compare-startup.sh     another build (no build step)
#   BEFORE=path/to/old/cachesh Benchmarks/compare-startup.sh   also an older build, in the same run
#   STARTUP_FIFO=1 Benchmarks/compare-startup.sh   the timed runs at real-time priority (root)
#
# Times `cachesh -c now` and `sqlite3 :memory: 'select 1'` from exec to exit, alternating one run
# of each so that both see the same load, and prints median, mean and min milliseconds and the
# ratio of the medians. Wall time on shared cores moves by tens of percent from run to run, so it
# also prints what does not: instructions executed (valgrind, when installed), minor page faults
# and peak memory of one run of each, and the shared libraries each one loads. On a machine other
# builds keep busy, STARTUP_FIFO=1 runs the timed starts (only those: a few seconds) under
# SCHED_FIFO at the lowest real-time priority, so that they do not queue behind the builds for a
# core: the wall time of a quiet machine (the kernel keeps 5% of each second for the others).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
runs=${STARTUP_RUNS:-200}
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed (apt-get install sqlite3)" >&2; exit 2; }

cachesh=${CACHESH:-}
if [[ -z $cachesh ]]; then
    echo "building cachesh as make release does ..." >&2
    (cd "$root" && CACHESH_STATIC_LIBS=$(./scripts/static-libs.sh) swift build -c release --static-swift-stdlib --disable-local-rpath --product cachesh >&2)
    cachesh="$root/.build/release/cachesh"
fi

python3 - "$runs" "$cachesh" "${BEFORE:-}" "${STARTUP_FIFO:-}" <<'EOF'
import os, re, shutil, statistics, subprocess, sys, tempfile, time

runs, cachesh, before, fifo = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
commands = [("cachesh -c now", [cachesh, "-c", "now"])]
if before:
    commands.append(("before: cachesh -c now", [before, "-c", "now"]))
commands.append(("sqlite3 :memory: 'select 1'", ["sqlite3", ":memory:", "select 1"]))

def once(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000

times = {name: [] for name, _ in commands}
for name, argv in commands:
    once(argv)  # warm the page cache
if fifo:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))  # the children inherit it
    except PermissionError:
        sys.exit("STARTUP_FIFO=1 needs root (or CAP_SYS_NICE)")
for _ in range(runs):
    for name, argv in commands:
        times[name].append(once(argv))
if fifo:
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

def faults_and_memory(argv):
    """Minor page faults and peak resident KiB of one run, as GNU time reports them."""
    with tempfile.NamedTemporaryFile("r") as report:
        subprocess.run(["/usr/bin/time", "-o", report.name, "-f", "%R %M", *argv],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
        faults, peak = report.read().split()[-2:]
    return int(faults), int(peak)

def instructions(argv):
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as work:
        def count(argv):
            result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/out", *argv],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            found = re.search(r"Collected : (\d+)", result.stderr)
            return int(found.group(1)) if found else None
        counted = count(argv)
        if counted is None and shutil.which("objcopy") and os.path.isfile(argv[0]):
            # valgrind 3.19 cannot read the DWARF 5 of a release build: a copy without the debug
            # sections runs the same instructions.
            stripped = os.path.join(work, os.path.basename(argv[0]))
            if subprocess.run(["objcopy", "--strip-debug", argv[0], stripped]).returncode == 0:
                counted = count([stripped, *argv[1:]])
        return counted

def libraries(argv):
    out = subprocess.run(["ldd", shutil.which(argv[0]) or argv[0]], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip() and "vdso" not in line and "ld-linux" not in line]

print(f"start-up, exec to exit, {runs} runs each, interleaved{' at real-time priority' if fifo else ''} (median / mean / min ms):")
for name, _ in commands:
    t = times[name]
    print(f"  {name:<31}{statistics.median(t):8.2f}{statistics.mean(t):8.2f}{min(t):8.2f}")
medians = [statistics.median(times[name]) for name, _ in commands]
print(f"  ratio (median): {medians[0] / medians[-1]:.2f}x  (goal <= 1.5x)"
      + (f"; before: {medians[1] / medians[-1]:.2f}x" if before else ""))
print(f"\none run each:{'instructions':>30}{'minor faults':>14}{'peak MB':>9}  shared libraries")
counted = []
for name, argv in commands:
    count = instructions(argv)
    counted.append(count)
    faults, peak = faults_and_memory(argv)
    shown = f"{count:>14,}" if count else f"{'-':>14}"
    print(f"  {name:<29}{shown}{faults:>14}{peak / 1024:>9.1f}  {' '.join(libraries(argv))}")
if all(counted):
    print(f"  ratio (instructions): {counted[0] / counted[-1]:.2f}x"
          + (f"; before: {counted[1] / counted[-1]:.2f}x" if before else ""))
EOF
