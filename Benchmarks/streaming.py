#!/usr/bin/env python3
"""Measures how long a command written to `cachesh`'s piped standard input takes to come back on
its standard output (the streaming delay), one command at a time, against `cat` through the same
pipes (the cost of the round trip itself).

Usage: Benchmarks/streaming.py [CACHESH]   (default: .build/release/cachesh, built if missing)
"""
import os
import statistics
import subprocess
import sys
import time

from release_binary import ROOT, binary
ROUNDS = 1000



def round_trips(command):
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    delays = []
    pending = b""
    for n in range(ROUNDS):
        line = f"echo {n}\n".encode()
        expected = line if command[0] == "cat" else f"{n}\n".encode()
        start = time.perf_counter()
        process.stdin.write(line)
        while expected not in pending:
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                sys.exit(f"{command[0]} ended early")
            pending += chunk
        delays.append(time.perf_counter() - start)
        pending = pending.split(expected, 1)[1]
    process.stdin.close()
    process.wait()
    return delays


def report(name, delays):
    delays = sorted(delays)
    print(f"  {name:10} median {statistics.median(delays) * 1e6:7.0f} us   "
          f"p99 {delays[int(len(delays) * 0.99)] * 1e6:7.0f} us   max {delays[-1] * 1e6:7.0f} us")


def main():
    cachesh = binary()
    print(f"write one command, wait for its output; {ROUNDS} rounds ({cachesh}):")
    report("cat", round_trips(["cat"]))
    report("cachesh", round_trips([cachesh]))


if __name__ == "__main__":
    main()
