#!/usr/bin/env python3
"""Times `cachesh --verify` on a transcript whose one output line is 200 KB, matched by a
pattern that makes a retry-at-every-position search quadratic, against the same transcript
with the line written out literally (the cost of replaying it at all).

Usage: Benchmarks/transcript-match.py [CACHESH]   (default: .build/release/cachesh, built if missing)
"""
import os
import subprocess
import sys
import tempfile
import time

from release_binary import ROOT, binary
SIZE = 200_000
RUNS = 3



def best(cachesh, path):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        result = subprocess.run([cachesh, "--verify", path], capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"{path} did not verify:\n{result.stdout}{result.stderr}")
    return min(times)


def main():
    cachesh = binary()
    line = "a" * (SIZE - 1) + "b"
    cases = {
        "literal line (baseline)": line,
        "[..] + 100 KB part + [..]": "[..]" + "a" * (SIZE // 2) + "b[..]",
        "1000 x 'a[..]' then 'b'": "a[..]" * 1000 + "b",
    }
    with tempfile.TemporaryDirectory() as directory:
        print(f"cachesh --verify, one {SIZE // 1000} KB output line, best of {RUNS} runs ({cachesh}):")
        for name, expected in cases.items():
            path = os.path.join(directory, "match.transcript")
            with open(path, "w") as f:
                f.write(f"cachesh> echo {line}\n{expected}\n")
            print(f"  {name:28} {best(cachesh, path) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
