#!/usr/bin/env python3
"""Helpers for compare-redis.sh: generate equivalent cachesh and redis scripts, time a command.

  gen-script.py generate N DIR         writes DIR/bench.cachesh, DIR/bench.redis (redis-cli
                                       commands) and DIR/bench.resp (RESP, for redis-cli --pipe)
  gen-script.py measure RUNS BEFORE IN -- CMD...
                                       runs CMD RUNS times with stdin from IN (or /dev/null for
                                       "-") and stdout to /dev/null, each run after the shell
                                       command BEFORE ("" for none); prints "BEST_SECONDS
                                       MEDIAN_SECONDS MAXRSS_KB EXIT" (EXIT: the first nonzero)
  gen-script.py rounds RUNS SPEC.json  runs each run of SPEC (a JSON list of {"before", "stdin",
                                       "cmd"}, as for measure) once a round, in turn, for RUNS
                                       rounds (so that all see the same load); prints "BEST_SECONDS
                                       MEDIAN_SECONDS MAXRSS_KB EXIT" a line per run, in order
  gen-script.py instructions DIR N REDIS_PORT CACHESH_RUN...
                                       instructions per command (callgrind) of each CACHESH_RUN
                                       (a binary, or "BINARY --json") on DIR/bench.cachesh, and of
                                       redis-server and redis-cli --pipe on DIR/bench.resp, each
                                       less a run of an empty input; prints one count a line: the
                                       CACHESH_RUNs in order, then redis-server, then redis-cli
  gen-script.py startup RUNS -- CMD... [-- CMD...]
                                       runs each CMD RUNS times, one run of each in turn (so
                                       that all see the same load), after one warm-up run each;
                                       prints "MEDIAN_MS MEAN_MS MIN_MS" a line per CMD
  gen-script.py freeport               prints a free TCP port on 127.0.0.1
"""
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time

# Namespaces: name, ttl (cachesh duration), ttl in seconds (redis EX), max entries, key space.
# Key spaces a little larger than max make LRU eviction happen in cachesh; redis has no per-prefix max.
NAMESPACES = [
    ("feed", "45m", 2700, 10000, 12000),
    ("profile", "5m", 300, 5000, 6000),
    ("page", "30s", 30, 2000, 2500),
]


def generate(n, out):
    rng = random.Random(42)
    puts = n // 2
    gets = n - puts
    recent = {ns[0]: [] for ns in NAMESPACES}
    ops = ["put"] * puts + ["get"] * gets
    rng.shuffle(ops)
    cachesh = [f"ns {name} ttl={ttl} max={mx}" for name, ttl, _, mx, _ in NAMESPACES]
    redis, resp = [], []

    def resp_command(*args):
        parts = [f"*{len(args)}\r\n"]
        for a in args:
            b = a.encode()
            parts.append(f"${len(b)}\r\n{a}\r\n")
        return "".join(parts)

    for op in ops:
        name, _, ex, _, space = NAMESPACES[rng.randrange(len(NAMESPACES))]
        if op == "get" and not recent[name]:
            # A read before the namespace's first put reads the first key instead (a miss, in both).
            recent[name].append(f"{name}:0")
        if op == "get":
            # Mostly recent keys (hits), as an app re-reads what it just loaded.
            key = rng.choice(recent[name][-1000:])
            cachesh.append(f"get {key}")
            redis.append(f"GET {key}")
            resp.append(resp_command("GET", key))
        else:
            i = rng.randrange(space)
            key = f"{name}:{i}"
            value = f'{{"id":{i},"likes":{rng.randrange(1000)},"title":"item {i}"}}'
            recent[name].append(key)
            cachesh.append(f"put {key} {value}")
            redis.append(f"SET {key} '{value}' EX {ex}")
            resp.append(resp_command("SET", key, value, "EX", str(ex)))
    with open(os.path.join(out, "bench.cachesh"), "w") as f:
        f.write("\n".join(cachesh) + "\n")
    with open(os.path.join(out, "bench.redis"), "w") as f:
        f.write("\n".join(redis) + "\n")
    with open(os.path.join(out, "bench.resp"), "w", newline="") as f:
        f.write("".join(resp))


def run_timed(before, stdin_path, cmd):
    """One run of CMD after the shell command BEFORE: (seconds, peak kB, exit code)."""
    if before:
        subprocess.run(before, shell=True, check=True, stdout=subprocess.DEVNULL)
    with open(os.devnull if stdin_path == "-" else stdin_path, "rb") as stdin:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL)
        # wait4 gives this child's own peak memory (getrusage(RUSAGE_CHILDREN) would mix runs).
        _, status, usage = os.wait4(proc.pid, 0)
        return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def summary(runs):
    """BEST MEDIAN PEAK EXIT of [(seconds, kB, exit)]: EXIT is the first nonzero."""
    times = [t for t, _, _ in runs]
    code = next((c for _, _, c in runs if c), 0)
    return f"{min(times):.4f} {statistics.median(times):.4f} {max(kb for _, kb, _ in runs)} {code}"


def measure(runs, before, stdin_path, cmd):
    print(summary([run_timed(before, stdin_path, cmd) for _ in range(runs)]))


def rounds(runs, spec_path):
    try:
        with open(spec_path) as f:
            spec = json.load(f)
    except (OSError, ValueError) as error:
        raise SystemExit(f"gen-script.py rounds: cannot read {spec_path}: {error}")
    results = [[] for _ in spec]
    for _ in range(runs):
        for run, out in zip(spec, results):
            out.append(run_timed(run.get("before", ""), run.get("stdin", "-"), run["cmd"]))
    for out in results:
        print(summary(out))


def callgrind_total(out_file):
    """The instruction total a callgrind output file records."""
    with open(out_file) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise SystemExit(f"gen-script.py: no totals in {out_file}")


def callgrind(work, name, cmd, stdin_path):
    """Instructions of one run of CMD under callgrind, stdin from STDIN_PATH, output dropped."""
    out = os.path.join(work, f"callgrind.{name}")
    with open(stdin_path, "rb") as stdin:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                       stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return callgrind_total(out)


def redis_pipe_under_callgrind(work, name, port, resp_path):
    """Instructions of a redis-server's whole life (under callgrind) and of a redis-cli --pipe
    (under callgrind) sending RESP_PATH to it: (server, client)."""
    server_out = os.path.join(work, f"callgrind.server-{name}")
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={server_out}",
                               "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while subprocess.run(["redis-cli", "-p", str(port), "ping"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL).returncode != 0:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("gen-script.py: redis-server under valgrind did not answer")
            time.sleep(0.2)
        client = callgrind(work, f"client-{name}", ["redis-cli", "-p", str(port), "--pipe"], resp_path)
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        server.wait(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return callgrind_total(server_out), client


def instructions(work, n, port, runs):
    """Instructions per command of each cachesh run and of redis (server and --pipe client), each
    less the same run on an empty input, so that start-up and shutdown cancel."""
    empty = os.path.join(work, "empty")
    open(empty, "w").close()
    script = os.path.join(work, "bench.cachesh")
    for i, run in enumerate(runs):
        binary, *flags = run.split()
        # valgrind 3.19 cannot read a release build's DWARF 5: count a copy without debug sections.
        stripped = os.path.join(work, f"cachesh-{i}")
        subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
        full = callgrind(work, f"cachesh-{i}", [stripped, *flags, script], os.devnull)
        none = callgrind(work, f"cachesh-{i}-empty", [stripped, *flags, empty], os.devnull)
        print(f"{(full - none) / n:.0f}")
    server_full, client_full = redis_pipe_under_callgrind(work, "full", port, os.path.join(work, "bench.resp"))
    server_none, client_none = redis_pipe_under_callgrind(work, "empty", port, empty)
    print(f"{(server_full - server_none) / n:.0f}")
    print(f"{(client_full - client_none) / n:.0f}")


def startup(runs, cmds):
    for cmd in cmds:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    times = [[] for _ in cmds]
    for _ in range(runs):
        for cmd, t in zip(cmds, times):
            start = time.perf_counter()
            subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
            t.append((time.perf_counter() - start) * 1000)
    for t in times:
        print(f"{statistics.median(t):.2f} {statistics.mean(t):.2f} {min(t):.2f}")


def split_commands(args):
    """CMD... [-- CMD...] as a list of argument lists (none empty)."""
    cmds = [[]]
    for a in args:
        if a == "--":
            cmds.append([])
        else:
            cmds[-1].append(a)
    if any(not c for c in cmds):
        raise SystemExit("gen-script.py startup: an empty command")
    return cmds


def main(argv):
    if len(argv) >= 3 and argv[0] == "generate":
        generate(int(argv[1]), argv[2])
    elif len(argv) >= 6 and argv[0] == "measure" and argv[4] == "--":
        measure(int(argv[1]), argv[2], argv[3], argv[5:])
    elif len(argv) == 3 and argv[0] == "rounds":
        rounds(int(argv[1]), argv[2])
    elif len(argv) >= 5 and argv[0] == "instructions":
        instructions(argv[1], int(argv[2]), int(argv[3]), argv[4:])
    elif len(argv) >= 4 and argv[0] == "startup" and argv[2] == "--":
        startup(int(argv[1]), split_commands(argv[3:]))
    elif argv == ["freeport"]:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
