#!/usr/bin/env python3
"""`replay DIR ... shard=I/N` in N processes and `replay-merge`, against one process, same run.

Generates a corpus of seeded Zipf traces (libCacheSim oracleGeneral, zstd-compressed as the
public corpora are), then runs one sweep (4 policies x 4 sizes, no ttl or stale) over it:
- as one `cachesh --json -c 'replay corpus/ ...'` process;
- as N part processes, `--parallel` at a time (GNU parallel's way: each part its own process),
  then `replay-merge`;
interleaved, `--runs` times each. Prints the median wall time of each, the speedup, the CPU
seconds, and the peak RSS of one process against that of each part (memory does not grow with
the number of parts), and checks that the merge's output is the one process's, byte for byte.
Then the peak RSS of one sweep over a trace of 1 M requests and of 10 M (memory does not grow
with the length of a trace). The load average before and after is printed, as the machine may
be shared.

Usage: Benchmarks/replay-shards-bench.py [--traces T] [--requests N] [--shards N] [--parallel P]
       [--runs R] [--binary PATH]   (builds cachesh in release first, unless --binary is given)
"""
import argparse
import os
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
traces.write_oracle(traces.zipf(int(sys.argv[3]), int(sys.argv[4]), 0.9, seed=int(sys.argv[5])), sys.argv[2])
"""
SWEEP = "policy=lru,fifo,sieve,lfu max=100,1000,10000,100000 ttl=none stale=none"


def spawn(argv, out_path):
    """Starts argv with stdout to out_path; returns its pid."""
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
    finally:
        os.close(out)


def reap(pid, what):
    """Waits for pid: (CPU seconds, peak RSS MB)."""
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"replay-shards-bench: {what} failed")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def one_process(binary, corpus, out):
    start = time.perf_counter()
    cpu, rss = reap(spawn([binary, "--json", "-c", f"replay {corpus} format=oracle {SWEEP}"], out), "one process")
    return time.perf_counter() - start, cpu, rss


def parts(binary, corpus, shards, parallel, workdir, merged):
    """Runs the parts, at most `parallel` at once, then the merge: (wall, CPU, largest part RSS)."""
    start = time.perf_counter()
    pending = list(range(1, shards + 1))
    running = {}
    cpu, rss = 0.0, 0.0
    while pending or running:
        while pending and len(running) < parallel:
            i = pending.pop(0)
            argv = [binary, "--json", "-c", f"replay {corpus} format=oracle {SWEEP} shard={i}/{shards}"]
            running[spawn(argv, os.path.join(workdir, f"part-{i}.json"))] = i
        pid, status, usage = os.wait4(-1, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"replay-shards-bench: part {running[pid]} failed")
        del running[pid]
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss / 1024)
    merge_cpu, _ = reap(spawn([binary, "--json", "-c", f"replay-merge {workdir}"], merged), "the merge")
    return time.perf_counter() - start, cpu + merge_cpu, rss


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=8)
    parser.add_argument("--requests", type=int, default=250_000, help="requests per trace")
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--parallel", type=int, default=2, help="parts running at once (the machine's cores)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--long", type=int, default=10_000_000, help="the long trace's requests (memory flat with length)")
    parser.add_argument("--binary", help="a cachesh to measure (default: build .build/release/cachesh)")
    args = parser.parse_args()
    binary = args.binary
    if binary is None:
        subprocess.run(["make", "-C", ROOT, "release"], check=True, stdout=subprocess.DEVNULL)
        binary = os.path.join(ROOT, ".build", "release", "cachesh")
    with tempfile.TemporaryDirectory(prefix="cachesh-shards-") as tmp:
        corpus = os.path.join(tmp, "corpus")
        os.mkdir(corpus)
        for t in range(args.traces):
            plain = os.path.join(tmp, f"t{t}.oracleGeneral")
            subprocess.run([sys.executable, "-c", GENERATE, os.path.join(ROOT, "Tests", "replay"), plain,
                            str(args.requests), str(args.objects), str(t + 1)], check=True)
            subprocess.run(["zstd", "-q", "--rm", plain, "-o", os.path.join(corpus, f"t{t}.oracleGeneral.zst")], check=True)
        print(f"corpus: {args.traces} traces of {args.requests} requests (zstd), sweep {SWEEP} "
              f"({args.traces * 16} units); {args.shards} parts, {args.parallel} at a time")
        print(f"load average before: {load()}")
        single_out = os.path.join(tmp, "single.json")
        merged_out = os.path.join(tmp, "merged.json")
        ones, shards = [], []
        for run in range(args.runs + 1):
            order = [0, 1] if run % 2 == 0 else [1, 0]
            for which in order:
                if which == 0:
                    result = one_process(binary, corpus, single_out)
                    target = ones
                else:
                    partdir = os.path.join(tmp, "parts")
                    os.makedirs(partdir, exist_ok=True)
                    for name in os.listdir(partdir):
                        os.unlink(os.path.join(partdir, name))
                    result = parts(binary, corpus, args.shards, args.parallel, partdir, merged_out)
                    target = shards
                if run > 0:
                    target.append(result)
            single = open(single_out, "rb").read()
            merged = open(merged_out, "rb").read().replace(b'{"command":"replay-merge"', b'{"command":"replay"', 1)
            if single != merged:
                sys.exit("replay-shards-bench: the merge's output is not the one process's")
        one_wall = statistics.median(r[0] for r in ones)
        part_wall = statistics.median(r[0] for r in shards)
        print(f"one process:        wall {one_wall:7.2f} s median, CPU {statistics.median(r[1] for r in ones):7.2f} s, "
              f"peak RSS {max(r[2] for r in ones):6.1f} MB")
        print(f"{args.shards:>2} parts and merge: wall {part_wall:7.2f} s median, CPU {statistics.median(r[1] for r in shards):7.2f} s, "
              f"peak RSS of a part {max(r[2] for r in shards):6.1f} MB")
        print(f"speedup {one_wall / part_wall:.2f}x with {args.parallel} at a time; merge output identical to the one process's")
        # Memory flat with trace length: one sweep over 1 M and over --long requests.
        for requests in (1_000_000, args.long):
            path = os.path.join(tmp, f"long-{requests}.oracleGeneral")
            subprocess.run([sys.executable, "-c", GENERATE, os.path.join(ROOT, "Tests", "replay"), path,
                            str(requests), str(args.objects), "99"], check=True)
            start = time.perf_counter()
            _, rss = reap(spawn([binary, "--json", "-c", f"replay {path} format=oracle {SWEEP}"], os.devnull), "a long trace")
            print(f"{requests:>10} requests: peak RSS {rss:6.1f} MB, wall {time.perf_counter() - start:6.2f} s")
            os.unlink(path)
        print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
