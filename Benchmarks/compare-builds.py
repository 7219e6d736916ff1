#!/usr/bin/env python3
"""Two builds of cachesh side by side: batch throughput and start-up, runs interleaved.

    python3 Benchmarks/compare-builds.py OLD_BINARY NEW_BINARY [COMMANDS] [RUNS]

Generates compare-redis.sh's script (COMMANDS commands, default 100,000: half put, half get),
then alternates OLD and NEW RUNS times (default 5) on it, output to /dev/null, and prints the
median commands/s of each, human and --json, and the median start-up (`cachesh -c now`, 200 runs
each, interleaved) with NEW/OLD ratios. Interleaving spreads the noise of a shared machine over
both builds alike. With valgrind installed it also counts instructions (callgrind) for 20,000
commands and for start-up: counts do not depend on what else the machine is doing.
"""
import re
import shutil
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))


def run_once(binary, args, script):
    start = time.perf_counter()
    with open(script, "rb") as stdin_unused:
        subprocess.run([binary, *args, script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       stdin=stdin_unused, check=True)
    return time.perf_counter() - start


def startup_once(binary):
    start = time.perf_counter()
    subprocess.run([binary, "-c", "now"], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    old, new = sys.argv[1], sys.argv[2]
    commands = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    work = tempfile.mkdtemp()
    subprocess.run([sys.executable, os.path.join(here, "gen-script.py"), "generate", str(commands), work], check=True,
                   stdout=subprocess.DEVNULL)
    script = os.path.join(work, "bench.cachesh")
    for label, args in (("human", []), ("--json", ["--json"])):
        times = {old: [], new: []}
        for _ in range(runs):
            for binary in (old, new):
                times[binary].append(run_once(binary, args, script))
        o = commands / statistics.median(times[old])
        n = commands / statistics.median(times[new])
        print(f"batch {label:6} old {o:12,.0f} cmd/s  new {n:12,.0f} cmd/s  new/old {n / o:.3f}")
    starts = {old: [], new: []}
    for _ in range(200):
        for binary in (old, new):
            starts[binary].append(startup_once(binary))
    o = statistics.median(starts[old]) * 1000
    n = statistics.median(starts[new]) * 1000
    print(f"start-up     old {o:8.2f} ms        new {n:8.2f} ms        new/old {n / o:.3f}")
    if shutil.which("valgrind"):
        small = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(here, "gen-script.py"), "generate", "20000", small], check=True,
                       stdout=subprocess.DEVNULL)
        for label, args in (("20k human", [os.path.join(small, "bench.cachesh")]),
                            ("20k --json", ["--json", os.path.join(small, "bench.cachesh")]),
                            ("start-up", ["-c", "now"])):
            counts = [instructions(binary, args, small) for binary in (old, new)]
            print(f"instructions {label:10} old {counts[0]:14,}  new {counts[1]:14,}  new/old {counts[1] / counts[0]:.3f}")


def instructions(binary, args, work):
    out = os.path.join(work, "callgrind.out")
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", run.stderr).group(1))


if __name__ == "__main__":
    main()
