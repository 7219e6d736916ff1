#!/usr/bin/env python3
"""Times `cachesh --verify` on hostile transcripts at three sizes, in CPU time, to show that matching output
against runs of lines between `...` grows linearly with the transcript (SPEC §7.1): each size is
twice the one before, so a linear cost doubles and a quadratic one quadruples.

Each transcript puts an array of N strings and prints it with `snapshot` (one output line per
element), then expects:

  literal near-miss   `...`, N/2 lines `"a",` then `"b"`, `...` (N-1 lines "a", then "b"): a run
                      that nearly matches at every line (Knuth-Morris-Pratt over line numbers)
  distinct [..] lines `...`, N lines `[..]"I",` each different, `...`: every actual line is a
                      candidate for every line of the run (before: each tried against each)
  many ... runs       N/2 - 1 runs of two lines `"a",` / `"a",` between `...` lines
  identical [..] run  `...`, N/2 lines `[..]"a",` then `[..]"b"`, `...`: the run stays possible
                      at almost every position of itself; past the budget of --verify (16,000,000
                      steps and 64 per byte of the transcript and its output) it is refused

Usage: Benchmarks/transcript-match-hostile.py [CACHESH] [N]
       (default .build/release/cachesh, built if missing; N = 20000, then 2N and 4N)
"""
import os
import resource
import subprocess
import sys
import tempfile

from release_binary import ROOT, binary



def snapshot_lines(values):
    """The transcript's two commands: the array put, then `snapshot`, whose output is matched."""
    items = ",".join(f'"{v}"' for v in values)
    return [f"cachesh> put k [{items}]", "keys: k", "cachesh> snapshot"]


def cases(n):
    a = ["a"] * (n - 1) + ["b"]
    yield "literal near-miss", snapshot_lines(a) + ["..."] + ['        "a",'] * (n // 2) + ['        "b"', "..."]
    numbers = [str(i) for i in range(n)]
    yield "distinct [..] lines", snapshot_lines(numbers) + ["..."] + [f'[..]"{v}",' for v in numbers[:-1]] + ["..."]
    runs = []
    for _ in range(n // 2 - 1):
        runs += ["...", '        "a",', '        "a",']
    yield "many ... runs", snapshot_lines(a) + runs + ["..."]
    yield "identical [..] run", snapshot_lines(a) + ["..."] + ['[..]"a",'] * (n // 2) + ['[..]"b"', "..."]


def main():
    cachesh = binary()
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    print(f"cachesh --verify --safe of hostile transcripts ({cachesh}); CPU time of the process, best of 3 runs")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "hostile.transcript")
        results = {}
        for size in (n, 2 * n, 4 * n):
            for name, lines in cases(size):
                with open(path, "w") as f:
                    f.write("\n".join(lines) + "\n")
                times = []
                for _ in range(3):
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    r = subprocess.run([cachesh, "--safe", "--verify", path], capture_output=True, text=True)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                verdict = "passed" if r.returncode == 0 else "refused" if "takes more than --verify spends" in r.stderr else f"exit {r.returncode}"
                results.setdefault(name, []).append((size, os.path.getsize(path), min(times), verdict))
        for name, rows in results.items():
            print(f"  {name}")
            for i, (size, nbytes, seconds, verdict) in enumerate(rows):
                ratio = f"  x{seconds / rows[i - 1][2]:.2f} for x{nbytes / rows[i - 1][1]:.2f} bytes" if i else ""
                print(f"    N={size:7}  {nbytes:10,} bytes  {seconds * 1000:9.1f} ms  {verdict}{ratio}")


if __name__ == "__main__":
    main()
