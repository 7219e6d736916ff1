#!/usr/bin/env python3
"""Runs three seeded traces (Zipf, scan-heavy, looping) through the cache ENGINE — a generated
script of `get` lines on namespaces with `policy=P max=N`, a server that has every key and
answers at once (`server latency 0ms`), the clock never moving (no ttl or stale acts) — and
through libcachesim (object size 1, no TTL), and compares the hit counts of every policy and size.

LRU, FIFO and SIEVE must equal libcachesim's; LFU too, since the engine breaks LFU ties as
libcachesim does (among the fewest uses, the entry that reached its count first). `replay`'s
simulator must give the same counts on the same trace (its own comparison is compare_libcachesim.py).

Usage: CACHESH_BIN=.build/debug/cachesh python3 Tests/replay/compare_engine.py
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traces  # noqa: E402

try:
    import libcachesim as lcs
except ImportError:
    sys.exit("compare_engine: libcachesim is missing (pip install libcachesim==0.3.5)")

BIN = os.environ.get("CACHESH_BIN", ".build/debug/cachesh")
SIZES = [10, 250, 500]
PEERS = {"lru": lcs.LRU, "fifo": lcs.FIFO, "sieve": lcs.Sieve, "lfu": lcs.LFU}


def libcachesim_hits(path, policy, size, n):
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = PEERS[policy](cache_size=size)
    miss_ratio, _ = cache.process_trace(reader)
    return round((1 - miss_ratio) * n)


def engine_hits(trace, policy, workdir, name):
    """Hits per size: one namespace per size (`s10`, `s100`, ...), each read with every request."""
    ids = sorted({oid for _, oid in trace})
    config = {
        "namespaces": {f"s{size}": {"ttl": "1000d", "max": size, "policy": policy} for size in SIZES},
        "server": {"latency": "0ms",
                   "data": {f"s{size}:k{oid}": 1 for size in SIZES for oid in ids}},
    }
    config_path = os.path.join(workdir, f"{name}-{policy}.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    script = os.path.join(workdir, f"{name}-{policy}.cachesh")
    with open(script, "w") as f:
        for _, oid in trace:
            for size in SIZES:
                f.write(f"get s{size}:k{oid}\n")
        f.write("stats\n")
    out = subprocess.run([BIN, "--json", "--bail", "--config", config_path, script],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"compare_engine: cachesh failed: {out.stderr.strip()[-2000:] or out.stdout.strip()[-2000:]}")
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    return {size: stats["namespaces"][f"s{size}"]["hits"] + stats["namespaces"][f"s{size}"]["stale_hits"]
            for size in SIZES}


def replay_hits(path, policy):
    sizes = ",".join(map(str, SIZES))
    command = f"replay {path} format=oracle policy={policy} max={sizes} ttl=none stale=none"
    out = subprocess.run([BIN, "--json", "-c", command], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"compare_engine: replay failed: {out.stderr.strip() or out.stdout.strip()}")
    return {row["max"]: row["hits"] + row["stale_hits"] for row in json.loads(out.stdout)["rows"]}


def main():
    # The traces written for the run go with it, whether it passes, fails or stops early.
    with tempfile.TemporaryDirectory(prefix="cachesh-engine-") as workdir:
        return compare(workdir)


def compare(workdir):
    passed = failed = 0
    generated = {
        "zipf": traces.zipf(10_000, 2_000, 0.9, seed=11),
        "scan-heavy": traces.scan_heavy(10_000, seed=12, hot=500, scan_every=1500, scan_length=800),
        "looping": traces.looping(10_000, 300, seed=13),
    }
    for name, trace in generated.items():
        oracle = os.path.join(workdir, name + ".oracleGeneral")
        traces.write_oracle(trace, oracle)
        for policy in PEERS:
            ours = engine_hits(trace, policy, workdir, name)
            replayed = replay_hits(oracle, policy)
            for size in SIZES:
                theirs = libcachesim_hits(oracle, policy, size, len(trace))
                same = ours[size] == theirs == replayed[size]
                passed, failed = passed + same, failed + (not same)
                print(f"{name:10} {policy:5} max={size:<4} engine {ours[size]:6} hits  replay {replayed[size]:6}"
                      f"  libcachesim {theirs:6}  {'same' if same else 'DIFFERENT'}")
    print(f"engine: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
