#!/usr/bin/env python3
"""Whole-process memory per entry: 1 M `put`s of {"id":i,"likes":n} through the cachesh process.

  python3 Benchmarks/memory-per-entry.py [CACHESH] [--entries N] [--runs R] [--no-redis] [--no-dictionary]

Pipes N (default 1,000,000) commands `put feed:I {"id":I,"likes":I%97}` into CACHESH (default
.build/release/cachesh) on standard input, as a user's feed would, and reads its peak resident
memory (ru_maxrss by /usr/bin/time, what the machine paid at worst). Prints the peak divided by N (the
goal, as issue 40 states it: at most 150 bytes), and the same less the peak of a run with no
commands (the process's own start-up, spread over no entries).

Baselines in the same run, each a whole process holding the same keys and values:
- a Swift `Dictionary<String, String>` of each key to the value's text, filled from the same
  lines on standard input (built with `swiftc -O` into a temporary directory);
- redis-server (no persistence) after `redis-cli --pipe` of the same N `SET`s: the server's
  peak RSS (VmHWM) and its own `used_memory`, each less its figure before the SETs.

Memory does not move with the machine's load, so one run of each is enough (R runs: each
figure's median).
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

DICTIONARY = r"""
// Reads `put KEY VALUE` lines and keeps KEY -> VALUE in a Dictionary<String, String>.
var map: [String: String] = [:]
while let line = readLine(strippingNewline: true) {
    let parts = line.split(separator: " ", maxSplits: 2)
    if parts.count == 3 && parts[0] == "put" { map[String(parts[1])] = String(parts[2]) }
}
print(map.count)
"""


def lines(n):
    return "".join(f'put feed:{i} {{"id":{i},"likes":{i % 97}}}\n' for i in range(n)).encode()


def resp(n):
    out = []
    for i in range(n):
        key = f"feed:{i}".encode()
        value = f'{{"id":{i},"likes":{i % 97}}}'.encode()
        out.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value))
    return b"".join(out)


def peak_kb(argv, data):
    """Runs argv with `data` on its standard input; returns its peak resident memory in kB.

    Measured by /usr/bin/time (its child's ru_maxrss): a child forked from this script would
    count the script's own memory, which its ru_maxrss keeps across exec."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M %x", "-o", out.name] + argv, input=data,
                       stdout=subprocess.DEVNULL, check=True)
        kb, code = out.read().split()[-2:]
    if code != "0":
        sys.exit(f"{argv[0]} exited with {code}")
    return int(kb)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_bytes(n):
    """(peak RSS growth, used_memory growth) of redis-server in bytes after N SETs, or None."""
    if not (shutil.which("redis-server") and shutil.which("redis-cli")):
        return None
    port = str(free_port())
    server = subprocess.Popen(["redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--loglevel", "warning"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cli = ["redis-cli", "-p", port]
        for _ in range(200):
            if subprocess.run(cli + ["ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)

        def hwm():
            with open(f"/proc/{server.pid}/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) * 1024

        def used():
            info = subprocess.run(cli + ["info", "memory"], capture_output=True, text=True).stdout
            return next(int(l.split(":")[1]) for l in info.splitlines() if l.startswith("used_memory:"))

        hwm0, used0 = hwm(), used()
        subprocess.run(cli + ["--pipe"], input=resp(n), capture_output=True, check=True)
        return hwm() - hwm0, used() - used0, hwm()
    finally:
        subprocess.run(["redis-cli", "-p", port, "shutdown", "nosave"], capture_output=True)
        server.wait()


def main():
    args = sys.argv[1:]
    n, runs, cachesh = 1_000_000, 1, None
    use_redis, use_dictionary = True, True
    while args:
        a = args.pop(0)
        if a == "--entries": n = int(args.pop(0))
        elif a == "--runs": runs = int(args.pop(0))
        elif a == "--no-redis": use_redis = False
        elif a == "--no-dictionary": use_dictionary = False
        else: cachesh = a
    cachesh = cachesh or ".build/release/cachesh"
    if not os.path.exists(cachesh):
        sys.exit(f"no {cachesh}: build it first (swift build -c release --product cachesh)")
    data = lines(n)

    def median(f):
        return statistics.median(f() for _ in range(runs))

    empty = median(lambda: peak_kb([cachesh], b"")) * 1024
    full = median(lambda: peak_kb([cachesh], data)) * 1024
    print(f"cachesh: {cachesh}, {n} puts of {{\"id\":i,\"likes\":n}} on standard input")
    print(f"  peak RSS {full / 2**20:7.1f} MiB: {full / n:6.1f} bytes an entry (goal <= 150)")
    print(f"  less the peak of no commands ({empty / 2**20:.1f} MiB): {(full - empty) / n:6.1f} bytes an entry")

    if use_dictionary and shutil.which("swiftc"):
        with tempfile.TemporaryDirectory() as work:
            src, exe = os.path.join(work, "dictionary.swift"), os.path.join(work, "dictionary")
            with open(src, "w") as f:
                f.write(DICTIONARY)
            subprocess.run(["swiftc", "-O", src, "-o", exe], check=True, capture_output=True)
            d_empty = median(lambda: peak_kb([exe], b"")) * 1024
            d_full = median(lambda: peak_kb([exe], data)) * 1024
        print(f"Dictionary<String, String> process (baseline, same run)")
        print(f"  peak RSS {d_full / 2**20:7.1f} MiB: {d_full / n:6.1f} bytes an entry; "
              f"less its empty peak: {(d_full - d_empty) / n:6.1f}; cachesh is {full / d_full:.2f}x")
    if use_redis:
        r = redis_bytes(n)
        if r is None:
            print("redis-server: not installed (apt-get install redis-server redis-tools), skipped")
        else:
            rss, used, peak = r
            print(f"redis-server (baseline, same run, {n} SETs by redis-cli --pipe)")
            print(f"  peak RSS {peak / 2**20:7.1f} MiB: {peak / n:6.1f} bytes an entry; growth {rss / n:6.1f}; "
                  f"used_memory growth {used / n:6.1f}; cachesh is {full / peak:.2f}x its peak")


if __name__ == "__main__":
    main()
