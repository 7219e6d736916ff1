#!/usr/bin/env python3
"""Peak memory of a long batch into one bounded namespace: 1M commands against 100k.

  python3 Benchmarks/flat-memory.py [CACHESH] [--small N] [--large N] [--mode stdin|script]

Runs CACHESH (default .build/release/cachesh, else .build/debug/cachesh) twice on the same mix of
commands, SMALL (default 100,000) then LARGE (default 1,000,000) of them: `ns feed ttl=1m max=1000`
first, then puts over 5,000 keys (LRU eviction), gets (hits, and misses that fetch from the
simulated server and log a request), evictions, `advance 1s` (expiries) and `server log`, in a
fixed pseudo-random order. The commands go to standard input as they are generated (`stdin`,
the default: a long-running feed), or as one script file (`script`: the file streams as stdin does).
Prints each run's peak resident memory (ru_maxrss of the child) and the ratio LARGE / SMALL;
the goal is at most 1.5x. The script never records, so no history is needed.
"""
import os
import random
import subprocess
import sys
import tempfile


def commands(n):
    rng = random.Random(7)
    yield "ns feed ttl=1m max=1000"
    yield "server latency 0ms"
    for i in range(1, n):
        r = rng.random()
        key = f"feed:{rng.randrange(5000)}"
        if r < 0.45:
            yield f'put {key} {{"id":{i},"likes":{rng.randrange(1000)},"title":"post {i}"}}'
        elif r < 0.85:
            yield f"get {key}"
        elif r < 0.93:
            yield f"evict {key}"
        elif r < 0.999:
            yield "advance 1s"
        else:
            yield "server log"


def peak_kb(cachesh, n, mode):
    lines = ("\n".join(commands(n)) + "\n").encode()
    path = None
    if mode == "script":
        with tempfile.NamedTemporaryFile("wb", suffix=".cachesh", delete=False) as f:
            f.write(lines)
            path = f.name
        argv, stdin = [cachesh, path], subprocess.DEVNULL
    else:
        argv, stdin = [cachesh], subprocess.PIPE
    pid = os.fork()
    if pid == 0:
        if mode == "stdin":
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                os.close(r)
                view = memoryview(lines)
                while view:
                    written = os.write(w, view[:1 << 16])
                    view = view[written:]
                os._exit(0)
            os.close(w)
            os.dup2(r, 0)
        else:
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
        out = os.open(os.devnull, os.O_WRONLY)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.execv(cachesh, argv)
    _, status, usage = os.wait4(pid, 0)
    if path:
        os.unlink(path)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{cachesh} exited with {code}")
    return usage.ru_maxrss


def main():
    args = sys.argv[1:]
    small, large, mode = 100_000, 1_000_000, "stdin"
    cachesh = None
    while args:
        a = args.pop(0)
        if a == "--small": small = int(args.pop(0))
        elif a == "--large": large = int(args.pop(0))
        elif a == "--mode": mode = args.pop(0)
        else: cachesh = a
    if cachesh is None:
        cachesh = next((p for p in (".build/release/cachesh", ".build/debug/cachesh") if os.path.exists(p)), None)
        if cachesh is None:
            sys.exit("build cachesh first (swift build -c release)")
    a = peak_kb(cachesh, small, mode)
    b = peak_kb(cachesh, large, mode)
    print(f"cachesh: {cachesh} ({mode})")
    print(f"{small:>9} commands: peak RSS {a / 1024:8.1f} MiB")
    print(f"{large:>9} commands: peak RSS {b / 1024:8.1f} MiB")
    print(f"ratio: {b / a:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
