#!/usr/bin/env python3
"""Replays three seeded traces (Zipf, scan-heavy, looping) through cachesh and through
libcachesim (object size 1, no TTL) and compares the hit counts of every policy and size.

cachesh's LRU, FIFO and SIEVE must equal libcachesim's; LFU too, as both break ties the same
way (among the least frequently used, the entry that reached its count first); Belady
(`policy=optimal`) as well. The text formats must give the oracle format's counts, and a
headerless twitter-layout CSV (`header=no key=2 time=1`) libcachesim's CSV reader's.

Usage: CACHESH_BIN=.build/debug/cachesh python3 Tests/replay/compare_libcachesim.py
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
    sys.exit("compare_libcachesim: libcachesim is missing (pip install libcachesim==0.3.5)")

BIN = os.environ.get("CACHESH_BIN", ".build/debug/cachesh")
SIZES = [10, 100, 1000, 2500]
PEERS = {"lru": lcs.LRU, "fifo": lcs.FIFO, "sieve": lcs.Sieve, "lfu": lcs.LFU, "optimal": lcs.Belady}


def libcachesim_hits(path, policy, size, n):
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = PEERS[policy](cache_size=size)
    miss_ratio, _ = cache.process_trace(reader)
    return round((1 - miss_ratio) * n)


def libcachesim_csv_hits(path, policy, size, n):
    """Hits of libcachesim reading a headerless twitter-layout CSV (string keys, sizes ignored)."""
    params = lcs.ReaderInitParam(ignore_obj_size=True, has_header=False, has_header_set=True, delimiter=",",
                                 obj_id_is_num=False, obj_id_is_num_set=True)
    params.time_field, params.obj_id_field, params.obj_size_field = 1, 2, 4
    reader = lcs.TraceReader(path, lcs.TraceType.CSV_TRACE, params)
    cache = PEERS[policy](cache_size=size)
    miss_ratio, _ = cache.process_trace(reader)
    return round((1 - miss_ratio) * n)


def cachesh_rows(path, extra):
    command = f"replay {path} {extra} ttl=none stale=none"
    out = subprocess.run([BIN, "--json", "-c", command], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"compare_libcachesim: cachesh failed: {out.stderr.strip() or out.stdout.strip()}")
    return json.loads(out.stdout)["rows"]


def main():
    # The traces written for the run go with it, whether it passes, fails or stops early.
    with tempfile.TemporaryDirectory(prefix="cachesh-compare-") as workdir:
        return compare(workdir)


def compare(workdir):
    passed = failed = 0
    generated = {
        "zipf": traces.zipf(100_000, 10_000, 0.9, seed=1),
        "scan-heavy": traces.scan_heavy(100_000, seed=2),
        "looping": traces.looping(100_000, 3_000, seed=3),
    }
    sizes = ",".join(map(str, SIZES))
    for name, trace in generated.items():
        oracle = os.path.join(workdir, name + ".oracleGeneral")
        keys = os.path.join(workdir, name + ".txt")
        traces.write_oracle(trace, oracle)
        traces.write_keys(trace, keys)
        rows = cachesh_rows(oracle, f"format=oracle policy={','.join(PEERS)} max={sizes}")
        for row in rows:
            ours = row["hits"] + row["stale_hits"]
            theirs = libcachesim_hits(oracle, row["policy"], row["max"], len(trace))
            same = ours == theirs
            passed, failed = passed + same, failed + (not same)
            print(f"{name:10} {row['policy']:7} max={row['max']:<5} cachesh {ours:6} hits  libcachesim {theirs:6} hits"
                  f"  {'same' if same else 'DIFFERENT'}")
        # One LRU size alone takes the per-size simulation, not the stack-distance pass.
        for size in (100, 1000):
            single = cachesh_rows(oracle, f"format=oracle policy=lru max={size}")[0]
            same = single["hits"] == next(r["hits"] for r in rows if r["policy"] == "lru" and r["max"] == size)
            passed, failed = passed + same, failed + (not same)
            print(f"{name:10} lru     max={size:<5} alone: {single['hits']} hits  {'same' if same else 'DIFFERENT'}")
        # The keys format (hashed key text) gives the oracle format's counts.
        text_rows = cachesh_rows(keys, f"format=keys policy=lru,fifo,sieve,lfu max={sizes}")
        for row in text_rows:
            twin = next(r for r in rows if r["policy"] == row["policy"] and r["max"] == row["max"])
            same = row["hits"] == twin["hits"]
            passed, failed = passed + same, failed + (not same)
            if not same:
                print(f"{name:10} {row['policy']:7} max={row['max']:<5} keys format {row['hits']} != oracle {twin['hits']}")
        # A headerless twitter-layout CSV (header=no, columns by number) against libcachesim's
        # CSV reader of the same file.
        twitter = os.path.join(workdir, name + ".twitter.csv")
        traces.write_twitter_csv(trace, twitter)
        csv_rows = cachesh_rows(twitter, f"header=no key=2 time=1 policy=lru,fifo,sieve,lfu max={sizes}")
        for row in csv_rows:
            theirs = libcachesim_csv_hits(twitter, row["policy"], row["max"], len(trace))
            same = row["hits"] == theirs
            passed, failed = passed + same, failed + (not same)
            if not same:
                print(f"{name:10} {row['policy']:7} max={row['max']:<5} twitter csv: cachesh {row['hits']} != libcachesim {theirs}")
    print(f"replay: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
