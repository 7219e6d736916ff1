#!/usr/bin/env python3
"""`cachesh attach` against a running app (Benchmarks/AttachApp: a live Cache of
1,000 entries with CacheInspector, in the root package), release builds, each figure beside its baseline measured in
the same run (docs/SPEC.md §9; the figures are in README.md):

1. time to the first answer: `cachesh attach SOCKET -c keys` from its start to its exit, against
   `cachesh -c keys` on a session of its own (the same binary's start and one command);
2. a change's delay to `watch`: the app puts a key 1,000 times (every 2 ms), each value holding
   the wall-clock time it was made; the shell (`cachesh attach SOCKET --json -c 'watch bench:*'`)
   prints each change, and this script notes when it read it. Baseline: the same change printed
   by the app on its standard output, a pipe to this script;
3. the inspector's cost per cache call: instructions as callgrind counts them, on the app's
   thread (what its calls pay) and on every thread (the rendering on the inspector's writer
   included), per `put` of 100,000 in one hop onto the cache, with no inspector (the baseline),
   with it started and nobody attached, and with a shell attached watching `*` (each put a
   change it is sent); the two rounds' difference less the one round's, so the start is left
   out. Wall time per call beside each, from a run without valgrind.

    python3 Benchmarks/attach-bench.py [--samples 20] [--changes 1000]

Needs valgrind (scripts/install-deps.sh). Prints the load average: the wall times move with it,
the instruction counts do not.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHESH = os.environ.get("CACHESH_BIN", os.path.join(ROOT, ".build/release/cachesh"))
APP = os.path.join(ROOT, ".build/release/attach-bench-app")


def build():
    if "CACHESH_BIN" not in os.environ:
        subprocess.run(["swift", "build", "-c", "release", "--package-path", ROOT, "--product", "cachesh"], check=True)
    subprocess.run(["swift", "build", "-c", "release", "--package-path", ROOT, "--product", "attach-bench-app"], check=True)


class Lines:
    """A child's standard output, read line by line on a thread, each line with when it came."""

    def __init__(self, proc):
        self.proc = proc
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            now = time.time()
            with self.cond:
                self.lines.append((now, raw.decode("utf-8", "replace").rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.lines.append((time.time(), None))
            self.cond.notify_all()

    def wait_for(self, pattern, deadline=600):
        end = time.monotonic() + deadline
        with self.cond:
            while True:
                for _, line in self.lines:
                    if line is None:
                        raise SystemExit(f"attach-bench: the child ended without {pattern!r}")
                    found = re.search(pattern, line)
                    if found:
                        return found
                if time.monotonic() > end:
                    raise SystemExit(f"attach-bench: no {pattern!r} within {deadline} s")
                self.cond.wait(1)


def start_app(args, valgrind=None):
    argv = ([*valgrind, APP] if valgrind else [APP]) + args
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = Lines(proc)
    socket_path = out.wait_for(r"^ready (\S+)").group(1)
    return proc, out, socket_path


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def time_to_keys(samples):
    proc, _, socket_path = start_app(["serve"])
    try:
        attached, local = [], []
        for _ in range(samples):
            started = time.perf_counter()
            out = subprocess.run([CACHESH, "attach", socket_path, "-c", "keys"], capture_output=True, text=True)
            attached.append(time.perf_counter() - started)
            if out.returncode != 0 or "k:999" not in out.stdout:
                raise SystemExit(f"attach-bench: keys over the attachment failed: {out}")
            started = time.perf_counter()
            subprocess.run([CACHESH, "-c", "keys"], capture_output=True, check=True)
            local.append(time.perf_counter() - started)
        return attached, local
    finally:
        proc.stdin.close()
        proc.wait()


def watch_delay(changes):
    proc, app_out, socket_path = start_app(["serve"])
    shell = subprocess.Popen([CACHESH, "attach", socket_path, "--json", "-c", "watch bench:*"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    shell_out = Lines(shell)
    try:
        shell_out.wait_for(r'"watching"')
        proc.stdin.write(f"burst {changes} 2\n".encode())
        proc.stdin.flush()
        app_out.wait_for(r"^burst done$")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with shell_out.cond:
                seen = sum(1 for _, line in shell_out.lines if line and '"t":' in line)
            if seen >= changes:
                break
            time.sleep(0.1)
        delays, baseline = [], []
        with shell_out.cond:
            for when, line in shell_out.lines:
                found = line and re.search(r'"t":(\d+)', line)
                if found:
                    delays.append(when * 1e6 - int(found.group(1)))
        with app_out.cond:
            for when, line in app_out.lines:
                found = line and re.match(r"^t \d+ (\d+)$", line)
                if found:
                    baseline.append(when * 1e6 - int(found.group(1)))
        if len(delays) != changes:
            raise SystemExit(f"attach-bench: the shell saw {len(delays)} of {changes} changes")
        return [d / 1000 for d in delays], [b / 1000 for b in baseline]
    finally:
        shell.kill()
        proc.stdin.close()
        proc.wait()


def calls(mode, rounds, valgrind=None):
    """Runs `rounds` x 100,000 puts in `mode`; returns (ns per call, callgrind total or None)."""
    with tempfile.TemporaryDirectory() as work:
        counted = None
        wrapper = None
        if valgrind:
            # A copy without the debug sections: valgrind 3.19 cannot read a release build's DWARF 5.
            stripped = os.path.join(work, "attach-bench-app")
            subprocess.run(["objcopy", "--strip-debug", APP, stripped], check=True)
            counted = os.path.join(work, "callgrind.out")
            wrapper = ["valgrind", "--tool=callgrind", "-q", "--separate-threads=yes", f"--callgrind-out-file={counted}"]
            argv_app = stripped
        else:
            argv_app = APP
        argv = (wrapper or []) + [argv_app, "calls", mode, str(rounds)]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "SWIFT_DETERMINISTIC_HASHING": "1"})
        out = Lines(proc)
        socket_path = out.wait_for(r"^ready (\S+)").group(1)
        shell = None
        if mode == "watched":
            shell = subprocess.Popen([CACHESH, "attach", socket_path, "-c", "watch *"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            # What it prints is read in chunks and dropped: a reader of lines here would be the
            # slowest part, and the app drops a shell that falls 64 MiB behind.
            watching = threading.Event()

            def drain():
                seen = b""
                while True:
                    chunk = shell.stdout.read1(1 << 16)
                    if not chunk:
                        return
                    if not watching.is_set():
                        seen += chunk
                        if b"watching: *" in seen:
                            watching.set()

            threading.Thread(target=drain, daemon=True).start()
            if not watching.wait(600):
                raise SystemExit("attach-bench: the shell did not start watching")
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        ns = float(out.wait_for(r"^ns_per_call (\S+)", deadline=3600).group(1))
        still = out.wait_for(r"^attached (\S+)").group(1)
        proc.stdin.close()
        proc.wait()
        if shell:
            shell.wait(timeout=600)
            if still != "true":
                raise SystemExit("attach-bench: the watching shell was dropped during the run")
        total = None
        if counted:
            # One file per thread: thread 1 makes the calls (withIsolation runs them on the caller's
            # thread); the others are the inspector's (its listener, the shell's reader and writer).
            total = {"app": 0, "all": 0}
            for name in sorted(os.listdir(work)):
                if not name.startswith("callgrind.out-"):
                    continue
                for line in open(os.path.join(work, name)):
                    if line.startswith("totals:"):
                        count = int(line.split()[1])
                        total["all"] += count
                        if name == "callgrind.out-01":
                            total["app"] += count
        return ns, total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--no-build", action="store_true")
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("attach-bench: needs valgrind (scripts/install-deps.sh installs it)")
    if not options.no_build:
        build()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")

    attached, local = time_to_keys(options.samples)
    print(f"\n1. keys, from the start of the shell to its exit ({options.samples} runs each)")
    print(f"   cachesh attach SOCKET -c keys   median {statistics.median(attached) * 1000:7.1f} ms   max {max(attached) * 1000:7.1f} ms   (goal: < 1000 ms)")
    print(f"   cachesh -c keys (baseline)      median {statistics.median(local) * 1000:7.1f} ms   max {max(local) * 1000:7.1f} ms")

    delays, baseline = watch_delay(options.changes)
    print(f"\n2. a change in the app to the attached shell's watch ({options.changes} changes, one every 2 ms)")
    print(f"   watch over the attachment       p50 {percentile(delays, 50):6.2f} ms   p99 {percentile(delays, 99):6.2f} ms   max {max(delays):6.2f} ms   (goal: p99 < 100 ms)")
    print(f"   the app's stdout (baseline)     p50 {percentile(baseline, 50):6.2f} ms   p99 {percentile(baseline, 99):6.2f} ms   max {max(baseline):6.2f} ms")

    print("\n3. per put (100,000 a round, one hop onto the cache)")
    rows = []
    for mode in ("none", "idle", "watched"):
        ns, _ = calls(mode, 1)
        _, one = calls(mode, 1, valgrind=True)
        _, two = calls(mode, 2, valgrind=True)
        rows.append((mode, (two["app"] - one["app"]) / 100_000, (two["all"] - one["all"]) / 100_000, ns))
    base_app, base_all = rows[0][1], rows[0][2]
    labels = {"none": "no inspector (baseline)", "idle": "inspector, nobody attached", "watched": "a shell attached, watch *"}
    print(f"   {'':28} {'app thread':>10} {'all threads':>12}   wall (1 run)")
    for mode, app, everything, ns in rows:
        extra = "" if mode == "none" else f"   app {100 * (app - base_app) / base_app:+7.2f}%, all {100 * (everything - base_all) / base_all:+7.2f}%"
        print(f"   {labels[mode]:28} {app:10.0f} {everything:12.0f}   {ns / 1000:6.3f} µs{extra}")
    print(f"   idle: {100 * (rows[1][1] - base_app) / base_app:+.2f}% instructions on the app's thread (goal: within 2%)")
    print(f"   watch *: +{rows[2][1] - base_app:.0f} instructions a call on the app's thread, +{rows[2][2] - base_all:.0f} in all "
          f"(the rendering on the inspector's writer); wall +{(rows[2][3] - rows[0][3]) / 1000:.3f} µs a call (goal: <= 1 µs)")
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


main()
