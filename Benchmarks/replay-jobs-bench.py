#!/usr/bin/env python3
"""`replay ... jobs=N` against `jobs=1` on the same sweep, in the same run.

Generates the seeded Zipf trace of replay-bench.py (1,000,000 requests over 200,000 objects,
alpha 0.9) as a libCacheSim oracleGeneral file, then replays one sweep, 4 policies (lru, fifo,
sieve, lfu) x 8 sizes (100 to 200,000 entries) without ttl or stale, as the whole
`cachesh --json -c 'replay ...'` process, with jobs=1 and with jobs=N, interleaved (the order
alternating from run to run), `--runs` times each after one unmeasured run of each. Prints for
each: the median, lowest and highest wall time, the median CPU seconds (user + system) and the
highest peak RSS (from wait4); then the speedup (median wall of jobs=1 over jobs=N), the CPU
efficiency (speedup / N), the CPU spent with N jobs over that with 1, and the peak RSS with N
jobs over that with 1, beside one combination's scratch (the peak of `policy=lfu max=200000`
alone, the largest, less that of `max=100`). Every run's output must be the same bytes; the
load average before and after is printed, as the machine may be shared.

Usage: Benchmarks/replay-jobs-bench.py [--requests N] [--runs R] [--jobs N] [--binary PATH]
       (builds cachesh in release first, unless --binary is given)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATE = """
import sys
sys.path.insert(0, sys.argv[1])
import traces
traces.write_oracle(traces.zipf(int(sys.argv[3]), int(sys.argv[4]), 0.9, seed=42), sys.argv[2])
"""
POLICIES = "lru,fifo,sieve,lfu"
SIZES = "100,300,1000,3000,10000,30000,100000,200000"


def run(argv):
    """Runs argv as a child reaped here: (wall seconds, CPU seconds, peak RSS MB, stdout bytes)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"replay-jobs-bench: {' '.join(argv)} failed: {err.read().decode().strip()}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each, interleaved")
    parser.add_argument("--jobs", type=int, default=2, help="the jobs compared with jobs=1")
    parser.add_argument("--binary", help="a cachesh to measure (default: build .build/release/cachesh)")
    args = parser.parse_args()

    binary = args.binary
    if binary is None:
        subprocess.run(["swift", "build", "-c", "release", "--product", "cachesh"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        binary = os.path.join(ROOT, ".build", "release", "cachesh")
    workdir = tempfile.mkdtemp(prefix="cachesh-jobs-bench-")
    try:
        measure(args, binary, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def measure(args, binary, workdir):
    oracle = os.path.join(workdir, "zipf.oracleGeneral")
    # Generated in a child, so this process stays small (a child's peak RSS starts from its parent's).
    subprocess.run([sys.executable, "-c", GENERATE, os.path.join(ROOT, "Tests", "replay"), oracle,
                    str(args.requests), str(args.objects)], check=True)

    def sweep(jobs):
        return [binary, "--json", "-c", f"replay {oracle} format=oracle policy={POLICIES} max={SIZES} "
                                        f"ttl=none stale=none jobs={jobs}"]

    n = args.jobs
    load_before = os.getloadavg()
    print(f"trace: {args.requests} requests, {args.objects} objects, Zipf 0.9, seed 42; sweep policy={POLICIES} "
          f"max={SIZES} (32 combinations); {args.runs} interleaved runs of jobs=1 and jobs={n}, {os.cpu_count()} cores; "
          f"load average before {load_before[0]:.2f}")
    results = {1: [], n: []}
    outputs = set()
    for jobs in (1, n):
        outputs.add(run(sweep(jobs))[3])  # unmeasured: the file into the page cache, the binary too
    for r in range(args.runs):
        for jobs in ((1, n) if r % 2 == 0 else (n, 1)):
            wall, cpu, rss, out = run(sweep(jobs))
            results[jobs].append((wall, cpu, rss))
            outputs.add(out)
    if len(outputs) != 1:
        sys.exit(f"replay-jobs-bench: the runs printed {len(outputs)} different outputs")

    print(f"{'jobs':>4} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>7} {'peak MB':>8}")
    medians = {}
    for jobs in (1, n):
        walls = [w for w, _, _ in results[jobs]]
        cpus = [c for _, c, _ in results[jobs]]
        rss = max(m for _, _, m in results[jobs])
        medians[jobs] = (statistics.median(walls), statistics.median(cpus), rss)
        print(f"{jobs:>4} {medians[jobs][0]:9.3f} {min(walls):7.3f} {max(walls):7.3f} {medians[jobs][1]:7.3f} {rss:8.1f}")
    speedup = medians[1][0] / medians[n][0]
    # One combination's scratch: the largest one alone, less a small one alone (start-up, buffers).
    largest = min(run([binary, "-c", f"replay {oracle} format=oracle policy=lfu max=200000 ttl=none stale=none"])[2]
                  for _ in range(2))
    small = min(run([binary, "-c", f"replay {oracle} format=oracle policy=lfu max=100 ttl=none stale=none"])[2]
                for _ in range(2))
    scratch = largest - small
    load_after = os.getloadavg()
    print(f"speedup {speedup:.2f}x with {n} jobs; CPU efficiency {speedup / n:.0%} (speedup / jobs); "
          f"CPU seconds {medians[n][1] / medians[1][1]:.2f}x those of jobs=1")
    print(f"peak RSS {medians[n][2]:.1f} MB with {n} jobs, {medians[1][2]:.1f} MB with 1: {medians[n][2] / medians[1][2]:.2f}x; "
          f"one combination's scratch (lfu max=200000) {scratch:.1f} MB; "
          f"bound 1.2 x {medians[1][2]:.1f} + {scratch:.1f} = {1.2 * medians[1][2] + scratch:.1f} MB")
    print(f"every run printed the same {len(next(iter(outputs)))} bytes; load average after {load_after[0]:.2f}")


if __name__ == "__main__":
    main()
