#!/usr/bin/env python3
"""replay against libcachesim on the same 1M-request trace, in the same run.

Generates a seeded Zipf trace (1,000,000 requests over 200,000 objects, alpha 0.9) as a
libCacheSim oracleGeneral file and as a text file of keys, then for each policy at max=10000
(no TTL, object size 1) times:

  cachesh   the whole `cachesh -c 'replay ...'` process: start, streaming read, simulation, output
  peer      libcachesim's process_trace over the same file (its Python start-up excluded), with a
            hash table of 2^16 buckets that grows (hashpower=16) and with its default of 2^24

as CPU seconds (user + system: the machine's other load moves them less than wall time), and
"per pass": what one more combination costs cachesh in the same streaming pass (8 combinations
minus 1, over 7: start-up and reading the file left out, as for the peer), and
reads each process's peak RSS from wait4 (libcachesim's includes its Python interpreter). Prints requests/s, peak MB, the ratio cachesh/peer,
and the hit counts (which must agree). Then a sweep: every policy at 8 sizes in one cachesh pass.

With --before PATH, a second cachesh (an earlier build) is timed too, its runs interleaved with
the first's, and the table gains its req/s and the ratio of the two in the same run.

Usage: Benchmarks/replay-bench.py [--requests N] [--runs R] [--binary PATH] [--before PATH]
       (builds cachesh in release first, unless --binary is given)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BIN = os.path.join(ROOT, ".build", "release", "cachesh")
GENERATE = """
import sys
sys.path.insert(0, sys.argv[1])
import traces
trace = traces.zipf(int(sys.argv[4]), int(sys.argv[5]), 0.9, seed=42)
traces.write_oracle(trace, sys.argv[2])
traces.write_keys(trace, sys.argv[3])
"""
PEER = """
import sys, time, libcachesim as lcs
path, policy, size, hashpower = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cls = {"lru": lcs.LRU, "fifo": lcs.FIFO, "sieve": lcs.Sieve, "lfu": lcs.LFU}[policy]
reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = cls(cache_size=size, hashpower=hashpower)
start = time.process_time()
miss_ratio, _ = cache.process_trace(reader)
print(time.process_time() - start, miss_ratio)
"""


def run(argv):
    """Runs argv as a child we reap ourselves: (CPU seconds, peak RSS MB, stdout)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = usage.ru_utime + usage.ru_stime
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"replay-bench: {' '.join(argv)} failed: {err.read().strip()}")
        return wall, usage.ru_maxrss / 1024, out.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--max", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs")
    parser.add_argument("--binary", help="the cachesh to measure (default: build .build/release/cachesh)")
    parser.add_argument("--before", help="an earlier cachesh, timed in the same runs")
    args = parser.parse_args()

    global BIN
    if args.binary:
        BIN = os.path.abspath(args.binary)
    else:
        subprocess.run(["swift", "build", "-c", "release", "--product", "cachesh"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    workdir = tempfile.mkdtemp(prefix="cachesh-bench-")
    oracle = os.path.join(workdir, "zipf.oracleGeneral")
    keys = os.path.join(workdir, "zipf.txt")
    # Generated in a child: a child's peak RSS (from wait4) starts from this process's size when
    # it is spawned, so this process must stay small.
    subprocess.run([sys.executable, "-c", GENERATE, os.path.join(ROOT, "Tests", "replay"), oracle, keys,
                    str(args.requests), str(args.objects)], check=True)
    n = args.requests
    print(f"trace: {n} requests, {args.objects} objects, Zipf 0.9, seed 42; max={args.max}, no TTL, best of {args.runs}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'policy':7} {'cachesh req/s':>14} {'MB':>6} {'per pass':>12} {'libcachesim req/s':>18} {'MB':>6}"
          f" {'ratio':>6} {'per pass':>8} {'(default table) req/s':>22} {'MB':>6}  hits (cachesh / libcachesim)")
    eight = ",".join(f"{100 + i}d" for i in range(8))  # 8 combinations that never expire in the trace
    for policy in ["lru", "fifo", "sieve", "lfu"]:
        ours, befores = [], []
        command = f"replay {oracle} format=oracle policy={policy} max={args.max} ttl=none stale=none"
        for i in range(args.runs):
            order = [BIN, args.before] if i % 2 == 0 else [args.before, BIN]
            for binary in order:
                if binary is None:
                    continue
                cpu, rss, out = run([binary, "--json", "-c", command])
                (ours if binary == BIN else befores).append((cpu, rss, json.loads(out)["rows"][0]["hits"]))
        # The cost of one more combination in the same pass: (8 passes - 1 pass) / 7.
        many = min(run([BIN, "-c", f"replay {oracle} format=oracle policy={policy} max={args.max} ttl={eight} stale=none"])[0]
                   for _ in range(args.runs))
        one = min(run([BIN, "-c", f"replay {oracle} format=oracle policy={policy} max={args.max} ttl=100d stale=none"])[0]
                  for _ in range(args.runs))
        per_pass = 7 * n / max(many - one, 1e-9)
        peers = {}
        for hashpower in (16, 24):
            theirs = []
            for _ in range(args.runs):
                _, rss, out = run([sys.executable, "-c", PEER, oracle, policy, str(args.max), str(hashpower)])
                seconds, miss_ratio = out.split()
                theirs.append((float(seconds), rss, round((1 - float(miss_ratio)) * n)))
            peers[hashpower] = (min(theirs)[0], max(r for _, r, _ in theirs), min(theirs)[2])
        best = min(ours)
        peer, default = peers[16], peers[24]
        print(f"{policy:7} {n / best[0]:14,.0f} {max(r for _, r, _ in ours):6.1f} {per_pass:12,.0f} {n / peer[0]:18,.0f}"
              f" {peer[1]:6.1f} {peer[0] / best[0]:5.2f}x {per_pass * peer[0] / n:7.2f}x {n / default[0]:22,.0f}"
              f" {default[1]:6.1f}  {best[2]} / {peer[2]}"
              + ("" if best[2] == peer[2] == default[2] else "  DIFFERENT"))
        if befores:
            before = min(befores)
            print(f"{'':7} before: {n / before[0]:14,.0f} req/s, {max(r for _, r, _ in befores):.1f} MB, "
                  f"{peer[0] / before[0]:.2f}x the peer; this build {before[0] / best[0]:.2f}x the before's speed"
                  + ("" if before[2] == best[2] else "  DIFFERENT"))
    # Text keys: the same trace read as lines and hashed.
    cpu, rss, out = run([BIN, "--json", "-c", f"replay {keys} format=keys policy=lru max={args.max} ttl=none stale=none"])
    print(f"lru, keys text format: {n / cpu:,.0f} req/s, peak {rss:.1f} MB, {json.loads(out)['rows'][0]['hits']} hits")
    # Flat in the trace's length: the same keys four times over (4M requests) peaks the same.
    longer = os.path.join(workdir, "zipf-x4.txt")
    with open(longer, "wb") as out:
        for _ in range(4):
            with open(keys, "rb") as f:
                while chunk := f.read(1 << 20):
                    out.write(chunk)
    cpu4, rss4, _ = run([BIN, "-c", f"replay {longer} format=keys policy=lru max={args.max} ttl=none stale=none"])
    print(f"lru, keys, 4x the trace ({4 * n:,} requests, {os.path.getsize(longer) / 1e6:.0f} MB file): "
          f"{4 * n / cpu4:,.0f} req/s, peak {rss4:.1f} MB (1x: {rss:.1f} MB)")
    # A sweep in one pass: 4 policies x 8 sizes (LRU's 8 sizes share one stack-distance pass).
    sizes = "100,300,1000,3000,10000,30000,100000,200000"
    cpu, rss, out = run([BIN, "--json", "-c", f"replay {oracle} format=oracle policy=lru,fifo,sieve,lfu max={sizes} ttl=none stale=none"])
    rows = len(json.loads(out)["rows"])
    print(f"sweep of {rows} combinations in one pass: {cpu:.2f} CPU s, {n * rows / cpu:,.0f} request-combinations/s, peak {rss:.1f} MB")
    # The same trace with a ttl and a stale window: the path that restamps and counts expirations.
    cpu, rss, out = run([BIN, "--json", "-c", f"replay {oracle} format=oracle policy=lru max={args.max} ttl=5m stale=1m"])
    print(f"lru with ttl=5m stale=1m: {n / cpu:,.0f} req/s, peak {rss:.1f} MB")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
