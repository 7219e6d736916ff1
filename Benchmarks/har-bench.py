#!/usr/bin/env python3
"""Reading and replaying a HAR log: cachesh beside Python's json.load, same file, same run.

Generates a seeded HAR 1.2 log of 10,000 entries whose bodies are 50 MB in all (half as text with
JSON escapes, half as base64, as exporters write binary bodies), then times, 5 runs each:

  cachesh   Benchmarks' HARBenchmark executable: HARReader + HAREntry.decode + HAROrdering over
            every entry (what `replay FILE.har` reads before it replays), release build
  replay    cachesh -c 'replay FILE.har' (release build): the full replay, every entry through the
            engine's HTTP namespaces, a row per entry printed (to a file)
  python    python3 -c 'import json,sys; json.load(open(sys.argv[1]))'  (parsing only)

and prints the median wall seconds and the peak RSS (from wait4) of each. The reader's figure
includes decoding every entry (URL split, headers, base64 bodies decoded to their size and
SHA-256); Python's only builds the document.

Usage: Benchmarks/har-bench.py [--entries N] [--body-mb M] [--runs R]
       (builds HARBenchmark, and the package's cachesh, in release first)
"""
import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(path, entries, body_bytes):
    rng = random.Random(37)
    per_entry = body_bytes // entries
    start_ms = 1_772_356_502_000
    with open(path, "w") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "har-bench", "version": "1"},\n')
        out.write(' "pages": [{"startedDateTime": "2026-03-01T09:15:02.000Z", "id": "page_1", "title": "bench", "pageTimings": {}}],\n')
        out.write(' "entries": [\n')
        for i in range(entries):
            # A little out of order, as logs listed by response end are.
            t = start_ms + i * 50 + rng.randrange(0, 200)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t // 1000)) + ".%03dZ" % (t % 1000)
            if i % 2 == 0:
                text = ''.join(rng.choice('abcdefghij"\\/\n ') for _ in range(per_entry))
                content = {"size": per_entry, "mimeType": "application/json", "text": text}
            else:
                raw = rng.randbytes(per_entry)
                content = {"size": per_entry, "mimeType": "image/png", "encoding": "base64",
                           "text": base64.b64encode(raw).decode()}
            entry = {
                "_resourceType": "fetch",
                "startedDateTime": stamp,
                "time": 42.5,
                "request": {"method": "GET", "url": "https://app.example.com/items/%d?page=%d" % (i % 500, i % 7),
                            "httpVersion": "http/2.0",
                            "headers": [{"name": ":authority", "value": "app.example.com"},
                                        {"name": ":path", "value": "/items/%d" % (i % 500)},
                                        {"name": "accept", "value": "application/json"}],
                            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "http/2.0",
                             "headers": [{"name": "cache-control", "value": "max-age=60"},
                                         {"name": "etag", "value": "\"%d\"" % i}],
                             "cookies": [], "content": content, "redirectURL": "", "headersSize": -1,
                             "bodySize": per_entry},
                "cache": {},
                "timings": {"blocked": 1.5, "dns": -1, "ssl": -1, "connect": -1, "send": 0.5, "wait": 30, "receive": 10.5},
            }
            if i:
                out.write(",\n")
            out.write(json.dumps(entry))
        out.write("\n]}}\n")


def run(argv):
    """(wall seconds, peak RSS MB, stdout) of argv as a child we reap ourselves."""
    with tempfile.TemporaryFile(mode="w+") as out:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read()
        if status != 0:
            sys.exit(f"{argv[0]} failed: {text}")
        return wall, usage.ru_maxrss / 1024, text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--body-mb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "HARBenchmark"], cwd=HERE, check=True)
    binary = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=HERE, check=True,
                            capture_output=True, text=True).stdout.strip() + "/HARBenchmark"
    root = os.path.dirname(HERE)
    subprocess.run(["swift", "build", "-c", "release", "--product", "cachesh"], cwd=root, check=True)
    cachesh = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.strip() + "/cachesh"
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.har")
        generate(path, args.entries, args.body_mb * 1_000_000)
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, {args.entries} entries, {args.body_mb} MB of bodies")
        python = [sys.executable, "-c", "import json,sys; json.load(open(sys.argv[1]))", path]
        results = {}
        replay = [cachesh, "-c", "replay " + path]
        for name, argv in (("cachesh", [binary, path]), ("replay", replay), ("python", python)):
            walls, peaks = [], []
            for _ in range(args.runs):
                wall, peak, text = run(argv)
                walls.append(wall)
                peaks.append(peak)
            results[name] = (statistics.median(walls), max(peaks), min(walls), max(walls))
            if name == "cachesh":
                print("  " + text.strip())
            if name == "replay":
                print("  " + [line for line in text.splitlines() if line.startswith("totals:")][0])
        for name, (median, peak, low, high) in results.items():
            print(f"{name:8} median {median:.3f} s (min {low:.3f}, max {high:.3f}) over {args.runs} runs, peak RSS {peak:.1f} MB")
        for name in ("cachesh", "replay"):
            print(f"ratio {name}/python: {results[name][0] / results['python'][0]:.2f} in time, "
                  f"{results[name][1] / results['python'][1]:.2f} in peak RSS")


if __name__ == "__main__":
    main()
