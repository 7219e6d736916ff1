#!/usr/bin/env python3
"""`cachesh proxy` against Debian's squid on the same loopback origin, in the same run: hit
throughput and latency under wrk's load, and the latency each adds to a request sent straight
to the origin.

    python3 Benchmarks/proxy-bench.py [--seconds 10] [--connections 32] [--threads 1] [--runs 1] [--before BIN]

The origin (node) answers /hit with `Cache-Control: max-age=3600` and a 1 KiB body, counting
the requests it gets. Each cache (squid configured as RUNNING.md of the HTTP cache test suite
says; `cachesh proxy` from CACHESH_BIN, else .build/release/cachesh, with its log in a file) gets
one request to store the response, then wrk loads it for --seconds; the origin's count during
the load shows every request was a hit. `direct` is wrk against the origin itself: the
latency added is a cache's percentile minus the origin's. Each run loads every server once, one
after the other, so that all see about the same load; the figures shown are each server's
median run (and every run's requests/s), with the load average before and after. `--before BIN`
adds another build of cachesh (an older one) to every run. Needs node, squid and wrk
(apt-get install nodejs squid wrk). Release builds only: a debug build's figures mean nothing.
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from importlib import util as _util  # noqa: E402

_spec = _util.spec_from_file_location("http_suite", os.path.join(HERE, "http-suite.py"))
http_suite = _util.module_from_spec(_spec)
_spec.loader.exec_module(http_suite)

ORIGIN = r"""
const http = require('http');
let count = 0;
const body = 'x'.repeat(1024);
const server = http.createServer((req, res) => {
  if (req.url === '/count') { res.writeHead(200, {'Content-Type': 'text/plain', 'Cache-Control': 'no-store'}); res.end(String(count)); return; }
  count++;
  res.writeHead(200, {'Content-Type': 'text/plain', 'Cache-Control': 'max-age=3600', 'ETag': '"b"', 'Date': new Date().toUTCString()});
  res.end(body);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => { console.log(server.address().port); });
"""


def origin_count(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/count", timeout=10) as r:
        return int(r.read())


def wrk(port, seconds, connections, threads):
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", f"http://127.0.0.1:{port}/hit"],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
    def percentile(p):
        m = re.search(rf"^\s+{p}%\s+([0-9.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 1, "ms": 1000, "s": 1_000_000}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "p50": percentile(50), "p99": percentile(99),
            "non2xx": int(errors.group(1)) if errors else 0, "socket_errors": socket_errors.group(1) if socket_errors else ""}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--before", help="another cachesh binary, measured in the same runs")
    args = parser.parse_args()
    binary = os.environ.get("CACHESH_BIN") or os.path.join(HERE, "..", ".build", "release", "cachesh")
    if not os.path.exists(binary):
        sys.exit(f"no release build at {binary}: swift build -c release (or set CACHESH_BIN)")
    os.environ["CACHESH_BIN"] = os.path.abspath(binary)
    with tempfile.TemporaryDirectory(prefix="proxy-bench-") as directory:
        script = os.path.join(directory, "origin.js")
        with open(script, "w") as f:
            f.write(ORIGIN)
        origin = subprocess.Popen(["node", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            origin_port = int(origin.stdout.readline())
            results = {}
            names = ["direct", "squid", "cachesh"] + (["before"] if args.before else [])
            before_command = (f"exec {os.path.abspath(args.before)} proxy --listen 127.0.0.1:{{port}} "
                              f"--upstream http://127.0.0.1:{{origin}} --log {directory}/before.log") if args.before else ""
            load_before = os.getloadavg()
            for run in range(args.runs):
                for name in names:
                    kind = {"direct": "none", "before": "custom"}.get(name, name)
                    cache, port = http_suite.start_cache(kind, before_command, origin_port, directory)
                    try:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/hit", timeout=10).read()
                        before = origin_count(origin_port)
                        measured = wrk(port, args.seconds, args.connections, args.threads)
                        measured["origin_requests"] = origin_count(origin_port) - before
                        results.setdefault(name, []).append(measured)
                    finally:
                        if cache is not None:
                            http_suite.stop(cache)
        finally:
            http_suite.stop(origin)
    load_after = os.getloadavg()
    print(f"wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, GET /hit (1 KiB, max-age=3600), {args.runs} run(s) each, "
          f"median run shown")
    print("load average before: " + " ".join(f"{x:.2f}" for x in load_before) + "; after: " + " ".join(f"{x:.2f}" for x in load_after))
    print(f"{'':9} {'requests/s':>11} {'p50':>9} {'p99':>9} {'added p50':>10} {'added p99':>10} {'to origin':>10} {'errors':>7}")

    def median_run(runs):
        ordered = sorted(runs, key=lambda r: r["rps"])
        return ordered[(len(ordered) - 1) // 2]
    direct = median_run(results["direct"])
    for name in names:
        mid = median_run(results[name])
        added = "" if name == "direct" else f"{mid['p50'] - direct['p50']:>8.0f}us {mid['p99'] - direct['p99']:>8.0f}us"
        origin_requests = "-" if name == "direct" else str(max(r["origin_requests"] for r in results[name]))
        print(f"{name:9} {mid['rps']:>11.0f} {mid['p50']:>7.0f}us {mid['p99']:>7.0f}us {added:>21} {origin_requests:>10} "
              f"{mid['non2xx']:>7}{(' ' + mid['socket_errors']) if mid['socket_errors'] else ''}")
        print(f"{'':9} runs: " + ", ".join(f"{r['rps']:.0f}/s" for r in results[name]))
    squid = median_run(results["squid"])["rps"]
    for name in [n for n in names if n in ("cachesh", "before")]:
        print(f"{name} / squid, median runs: {median_run(results[name])['rps'] / squid:.2f}; run by run: "
              + ", ".join(f"{c['rps'] / q['rps']:.2f}" for c, q in zip(results[name], results["squid"])))


if __name__ == "__main__":
    main()
