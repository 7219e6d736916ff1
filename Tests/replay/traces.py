"""Seeded trace generators shared by the libcachesim comparison, the benchmark and the examples.

Every generator takes a seed and gives the same requests on every machine (Python's Mersenne
Twister with an integer seed). A trace is a list of (time_s, object_id).
"""
import bisect
import random
import struct


def zipf(n_requests, n_objects, alpha, seed, rate=100.0):
    """Zipf-distributed ids (rank 1 most popular) at `rate` requests per second."""
    rng = random.Random(seed)
    weights = [1.0 / (rank ** alpha) for rank in range(1, n_objects + 1)]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    # Shuffle ids so popularity does not follow id order.
    ids = list(range(1, n_objects + 1))
    rng.shuffle(ids)
    out = []
    for i in range(n_requests):
        rank = bisect.bisect_left(cumulative, rng.random() * total)
        out.append((int(i / rate), ids[min(rank, n_objects - 1)]))
    return out


def scan_heavy(n_requests, seed, hot=2000, scan_every=5000, scan_length=3000, rate=100.0):
    """A Zipf hot set interrupted by sequential scans of ids never seen again (a crawler, a report)."""
    rng = random.Random(seed)
    base = zipf(n_requests, hot, 1.0, seed + 1, rate)
    out = []
    next_scan_id = 10_000_000
    i = 0
    while len(out) < n_requests:
        if i > 0 and i % scan_every == 0:
            for _ in range(min(scan_length, n_requests - len(out))):
                out.append((int(len(out) / rate), next_scan_id))
                next_scan_id += 1
        if len(out) < n_requests:
            out.append((int(len(out) / rate), base[i % len(base)][1]))
        i += 1
        if rng.random() < 0.001:
            i += 1
    return out[:n_requests]


def looping(n_requests, loop, seed, noise=0.05, rate=100.0):
    """A loop over `loop` ids, with a little random noise: LRU's worst case when loop > max."""
    rng = random.Random(seed)
    out = []
    for i in range(n_requests):
        if rng.random() < noise:
            oid = 1_000_000 + rng.randrange(loop * 4)
        else:
            oid = 1 + i % loop
        out.append((int(i / rate), oid))
    return out


def next_accesses(trace):
    """For each request, the number of the next request of its id (-1: none)."""
    following = {}
    out = [-1] * len(trace)
    for i in range(len(trace) - 1, -1, -1):
        oid = trace[i][1]
        out[i] = following.get(oid, -1)
        following[oid] = i
    return out


def write_oracle(trace, path):
    """libCacheSim's oracleGeneral: u32 time, u64 id, u32 size (1), i64 next access."""
    nxt = next_accesses(trace)
    record = struct.Struct("<IQIq")
    with open(path, "wb") as f:
        for (t, oid), n in zip(trace, nxt):
            f.write(record.pack(t, oid, 1, n))


def write_keys(trace, path, prefix="k"):
    with open(path, "w") as f:
        for _, oid in trace:
            f.write(f"{prefix}{oid}\n")


def write_timed(trace, path, prefix="k"):
    with open(path, "w") as f:
        for t, oid in trace:
            f.write(f"{t} {prefix}{oid}\n")


def write_twitter_csv(trace, path, prefix="q:"):
    """libCacheSim's twitter CSV layout, without a header: timestamp, key, key size, value size,
    client id, operation, ttl."""
    with open(path, "w") as f:
        for i, (t, oid) in enumerate(trace):
            f.write(f"{t},{prefix}{oid},{8 + oid % 16},{100 + oid % 900},{i % 7},get,0\n")
