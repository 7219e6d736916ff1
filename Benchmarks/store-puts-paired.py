#!/usr/bin/env python3
"""`--store` puts against the same script without a store (issue 40's goal: <= 1.3x), as pairs.

    python3 Benchmarks/store-puts-paired.py BIN [BASELINE_BIN] [--pairs N] [--puts N]

Each pair runs the script without a store, then with `--store` on a new file, one right after
the other, and takes the ratio of the two wall times: a pair sees the same moment of the machine's
load, so on shared or virtual cores (where one run in a few is slowed for reasons of its own)
the median of the pairs' ratios is steadier than a ratio of two best times. With BASELINE_BIN
(a build of another commit), its pairs alternate with BIN's. Prints, for each build, the median
ratio, its quartiles and the median times. The script is store-bench.sh's: N puts of
`{"id":i,"text":"item i"}` over 3 namespaces of 50,000 keys each.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def usage():
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)


def main():
    args = sys.argv[1:]
    pairs, puts = 30, 100_000
    bins = []
    i = 0
    while i < len(args):
        if args[i] in ("--pairs", "--puts") and i + 1 < len(args):
            value = int(args[i + 1])
            if args[i] == "--pairs":
                pairs = value
            else:
                puts = value
            i += 2
        elif args[i].startswith("-"):
            usage()
        else:
            bins.append(args[i])
            i += 1
    if not 1 <= len(bins) <= 2 or pairs < 1 or puts < 1:
        usage()
    names = ["this", "baseline"][: len(bins)]
    with tempfile.TemporaryDirectory() as directory:
        script = os.path.join(directory, "puts.cachesh")
        namespaces = ["feed", "profile", "page"]
        with open(script, "w") as f:
            for n in range(puts):
                f.write(f'put {namespaces[n % 3]}:{n % 50000} {{"id":{n},"text":"item {n}"}}\n')
        store = os.path.join(directory, "s.db")

        def timed(command):
            start = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            return time.perf_counter() - start

        results = {name: [] for name in names}
        for _ in range(pairs):
            for name, binary in zip(names, bins):
                for suffix in ("", "-wal", "-shm", "-lock"):
                    if os.path.exists(store + suffix):
                        os.remove(store + suffix)
                plain = timed([binary, script])
                stored = timed([binary, "--store", store, script])
                results[name].append((stored / plain, plain, stored))
        print(f"{puts} put commands, {pairs} pairs (without store, then with --store), load average "
              f"{os.getloadavg()[0]:.2f}")
        for name in names:
            ratios = sorted(r for r, _, _ in results[name])
            q1, median, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
            plain = statistics.median(p for _, p, _ in results[name])
            stored = statistics.median(s for _, _, s in results[name])
            print(f"{name:9} median ratio {median:.2f}x (quartiles {q1:.2f}x-{q3:.2f}x; goal <= 1.3x); "
                  f"median times {plain * 1000:.0f} ms without store, {stored * 1000:.0f} ms with")


if __name__ == "__main__":
    main()
